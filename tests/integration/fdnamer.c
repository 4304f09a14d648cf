/*
 * fdnamer.c - descriptors for test_fd_names.sh to find named in a trace.
 *
 *   fdnamer DIR: closes all but 0, 1 and 2, opens DIR/a.txt (fd 3) and
 *   forks; the child reads the
 *   inherited fd 3, dup2()s it onto 7, closes 3, opens DIR/b.txt (fd 3
 *   again), reads 3 and 7, and exits. The parent waits, makes a pipe and
 *   a unix socket bound to DIR/sock, opens DIR/c.txt with O_CLOEXEC, and
 *   runs itself again: "fdnamer after KEPT CLOEXEC", which reads both
 *   descriptors (the second is closed by then).
 *
 *   fdnamer kernel: makes an epoll instance (fd 3), an eventfd (4), a
 *   memfd named "scratch" (5), a timerfd (6), an inotify instance (7) and
 *   a signalfd (8), adds the eventfd to the epoll set, writes and reads
 *   the eventfd, sizes the memfd, changes the signalfd's mask.
 *
 * Prints "ok" and exits 0 when every call did what it should.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	perror(what);
	return 1;
}

static int child(const char *dir)
{
	char path[4096], buf[16];

	if (read(3, buf, 1) != 1 || dup2(3, 7) != 7 || close(3))
		return 1;
	snprintf(path, sizeof(path), "%s/b.txt", dir);
	if (open(path, O_RDONLY) != 3 || read(3, buf, 1) != 1 ||
	    read(7, buf, 1) != 1)
		return 1;
	return 0;
}

static int after_exec(const char *kept, const char *gone)
{
	char buf[16];

	if (read(atoi(kept), buf, 1) != 1 || read(atoi(gone), buf, 1) != -1)
		return 1;
	puts("ok");
	return 0;
}

/* Descriptors of the kernel's own objects (the "kernel" mode). */
static int kernel(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t v = 1;
	int ep, efd, mfd, tfd, ifd, sfd;
	sigset_t set;

	closefrom(3);
	ep = epoll_create1(EPOLL_CLOEXEC);
	efd = eventfd(0, 0);
	mfd = memfd_create("scratch", MFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	ifd = inotify_init1(0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (ep != 3 || efd != 4 || mfd != 5 || tfd != 6 || ifd != 7 ||
	    sfd != 8)
		return fail("kernel descriptors 3 to 8");
	ev.data.fd = efd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) ||
	    write(efd, &v, sizeof(v)) != sizeof(v) ||
	    read(efd, &v, sizeof(v)) != sizeof(v) || ftruncate(mfd, 4096) ||
	    signalfd(sfd, &set, 0) != sfd)
		return fail("using them");
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char path[4096], kept[16], gone[16];
	int fd, p[2], s, c, st;
	pid_t pid;

	if (argc == 4 && !strcmp(argv[1], "after"))
		return after_exec(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "kernel"))
		return kernel();
	if (argc != 2)
		return 2;
	closefrom(3);	/* what the test harness left open */
	snprintf(path, sizeof(path), "%s/a.txt", argv[1]);
	fd = open(path, O_RDONLY);
	if (fd != 3)
		return fail("open a.txt as 3");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0)
		_exit(child(argv[1]));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return fail("child");
	if (pipe(p) || write(p[1], "x", 1) != 1 || close(p[1]))
		return fail("pipe");
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/sock", argv[1]);
	if (s < 0 || bind(s, (struct sockaddr *)&un, sizeof(un)) ||
	    close(s))
		return fail("socket");
	snprintf(path, sizeof(path), "%s/c.txt", argv[1]);
	c = open(path, O_RDONLY | O_CLOEXEC);
	if (c < 0)
		return fail("open c.txt");
	snprintf(kept, sizeof(kept), "%d", fd);
	snprintf(gone, sizeof(gone), "%d", c);
	execl("/proc/self/exe", argv[0], "after", kept, gone, (char *)NULL);
	return fail("exec");
}
