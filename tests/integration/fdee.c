/*
 * fdee.c - a program with a daemon's habits about descriptors, for
 * test_descriptors.sh. It knows nothing of the tracer.
 *
 *   fdee first
 *       prints the descriptor its first open() gets, then its lowest
 *       free descriptor after a dup(), on stdout.
 *   fdee dup2 FILE
 *       opens FILE, dup2()s it onto 3..20 and writes "fd N" through each
 *       (the file shows every line once, in order, and nothing else).
 *   fdee close WAY DIR N
 *       closes every descriptor above 2 the WAY a daemon does: `loop`
 *       (close() up to the limit, counting those that were open),
 *       `closefrom`, `close_range`, `dup2` (dup2() of /dev/null onto
 *       every number up to the limit, then close_range), `raw` (the
 *       close_range system call itself, which no wrapper sees); prints
 *       "closed" (and the count), waits for a line on stdin (the test
 *       changes the filter meanwhile), then opens DIR/after-1 ..
 *       DIR/after-N (created) and prints each descriptor it got.
 *   fdee seccomp DIR
 *       installs a seccomp filter (every thread) under which socket()
 *       fails with EPERM, closes everything with the raw system call,
 *       reads a line on stdin, then opens DIR/after-1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "fdee: %s: %s\n", what, strerror(errno));
	return 1;
}

static int first(void)
{
	int fd = open("/dev/null", O_RDONLY), d = dup(0);

	if (fd < 0 || d < 0)
		return die("open");
	printf("first open %d dup %d\n", fd, d);
	return 0;
}

static int dup_onto(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), n;
	char line[32];

	if (fd < 0)
		return die(path);
	for (n = 3; n <= 20; n++)
		if (n != fd && dup2(fd, n) != n)
			return die("dup2");
	for (n = 3; n <= 20; n++) {
		int len = snprintf(line, sizeof(line), "fd %d\n", n);

		if (write(n, line, (size_t)len) != len)
			return die("write");
	}
	printf("wrote through 3..20\n");
	return 0;
}

static long open_max(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : (long)rl.rlim_cur;
}

static int close_all(const char *way)
{
	long n, max = open_max(), was_open = 0;

	if (!strcmp(way, "loop")) {
		for (n = 3; n < max; n++)
			was_open += close((int)n) == 0;
		printf("%ld were open\n", was_open);
	} else if (!strcmp(way, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(way, "close_range")) {
		if (close_range(3, ~0u, 0))
			return die("close_range");
	} else if (!strcmp(way, "dup2")) {
		int null = open("/dev/null", O_RDWR);

		for (n = 3; n < max; n++)
			if (n != null)
				dup2(null, (int)n);
		if (close_range(3, ~0u, 0))
			return die("close_range");
	} else if (!strcmp(way, "raw")) {
		if (syscall(SYS_close_range, 3, ~0u, 0))
			return die("close_range system call");
	} else {
		fprintf(stderr, "fdee: unknown way '%s'\n", way);
		return 2;
	}
	return 0;
}

/* Wait for the test: one line on stdin. */
static void wait_line(void)
{
	char buf[64];

	printf("closed\n");
	fflush(stdout);
	if (!fgets(buf, sizeof(buf), stdin))
		fprintf(stderr, "fdee: no go-ahead on stdin\n");
}

static int open_after(const char *dir, int count)
{
	char path[4096];
	int i;

	for (i = 1; i <= count; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/after-%d", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return die(path);
		printf("after-%d fd %d\n", i, fd);
		close(fd);
	}
	return 0;
}

static int close_then_open(const char *way, const char *dir, int count)
{
	int ret = close_all(way);

	if (ret)
		return ret;
	wait_line();
	return open_after(dir, count);
}

/* socket() fails with EPERM in every thread (TSYNC), the rest runs. */
static int no_sockets(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return die("PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return die("seccomp");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "first"))
		return first();
	if (argc == 3 && !strcmp(argv[1], "dup2"))
		return dup_onto(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "close"))
		return close_then_open(argv[2], argv[3], atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "seccomp")) {
		if (no_sockets() || close_all("raw"))
			return 1;
		wait_line();
		return open_after(argv[2], 1);
	}
	fprintf(stderr, "usage: fdee first | dup2 FILE | close WAY DIR N | "
		"seccomp DIR\n");
	return 2;
}
