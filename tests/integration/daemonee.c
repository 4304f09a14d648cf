/*
 * daemonee.c - programs for test_record.sh, run by `tracectl record`
 * (libtracer preloaded: not linked with it).
 *
 *   daemonee daemon READY GO OUT
 *       Daemonizes the classic way: forks and exits with status 3 at
 *       once; the child calls setsid(), forks and exits 0; the grandchild,
 *       the daemon, puts /dev/null on its standard descriptors, writes
 *       "PID\n" to READY (a FIFO), waits for a line on GO (a FIFO), then
 *       writes "late PID\n" to OUT and exits with status 9. So what it
 *       does after GO happens long after the program record ran has
 *       exited.
 *
 *   daemonee term READY OUT
 *       Blocks SIGTERM, writes "PID\n" to READY, waits for SIGTERM with
 *       sigwaitinfo(), writes "got SIGTERM\n" to OUT, then dies of
 *       SIGTERM (default action).
 *
 * Synchronisation is by FIFOs and signals, never by sleeping.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Write one line to path (a FIFO or a file). */
static void put(const char *path, const char *line)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		die(path);
	close(fd);
}

/* Read one line from path (blocks until a writer comes and writes). */
static void get(const char *path)
{
	FILE *f = fopen(path, "re");
	char buf[64];

	if (!f || !fgets(buf, sizeof(buf), f))
		die(path);
	fclose(f);
}

static void null_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		die("/dev/null");
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

static int daemon_main(const char *ready, const char *go, const char *out)
{
	char line[64];
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid > 0)
		return 3;		/* the program: done at once */
	if (setsid() < 0)
		die("setsid");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid > 0)
		_exit(0);		/* the session leader goes too */
	null_stdio();
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	put(ready, line);
	get(go);
	snprintf(line, sizeof(line), "late %d\n", (int)getpid());
	put(out, line);
	exit(9);
}

static int term_main(const char *ready, const char *out)
{
	char line[64];
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		die("sigprocmask");
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	put(ready, line);
	if (sigwaitinfo(&set, NULL) != SIGTERM)
		die("sigwaitinfo");
	put(out, "got SIGTERM\n");
	signal(SIGTERM, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGTERM);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "daemon"))
		return daemon_main(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "term"))
		return term_main(argv[2], argv[3]);
	fprintf(stderr, "usage: daemonee daemon READY GO OUT | "
		"daemonee term READY OUT\n");
	return 2;
}
