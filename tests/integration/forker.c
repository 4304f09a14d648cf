/*
 * forker.c - a traced program that forks, execs and spawns, for the
 * integration tests of processes made by a traced process (links
 * libtracer; built with -no-install so that it execs itself, not a
 * libtool wrapper).
 *
 *   forker fork WORKERS CHILDREN EVENTS
 *       WORKERS threads record numbered events (test:seq) while the main
 *       thread, which records too (test:main), forks CHILDREN children and
 *       worker 0 forks one more; each child records EVENTS numbered events
 *       (test:child) on the forking thread and on a thread of its own.
 *   forker image GEN EVENTS MORE [keep]
 *       records EVENTS numbered events (test:image) on two threads, then,
 *       if MORE > 0, execs itself as "image GEN+1 EVENTS MORE-1"; with
 *       "keep", its sockets stay open across the exec (libtracer's
 *       connection among them), so that tracerd sees the old image's
 *       hang-up only when the last image exits, and the last image
 *       prints "ready" and waits for a line on stdin before it exits
 *   forker forkexec EVENTS
 *       forks a child that records EVENTS events (test:prexec) and execs
 *       itself as "image 1 EVENTS 1" (so the same pid has three images)
 *   forker spawn WORKERS COUNT EVENTS
 *       WORKERS threads record numbered events while the main thread
 *       starts COUNT children with posix_spawn and COUNT with vfork and
 *       execv, each "image 1 EVENTS 0"
 *   forker bomb CHILDREN EVENTS
 *       forks CHILDREN children at once; each records EVENTS numbered
 *       events (test:bomb) and exits
 *
 * Every event carries enough to check the trace: the pid the process had
 * when it recorded, a thread or child index and a sequence number. The
 * parent prints "parent PID" first, "child PID" for each child, "main N"
 * and "thread T N" (how many events each of its threads recorded), and
 * exits 0 when every child did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracer.h>

#define MAX_WORKERS	16
#define MAX_CHILDREN	1024
/* A worker's events fit in its default channel (32 bytes each in 4 MiB),
 * so none is lost however slowly tracerd drains. */
#define WORKER_CAP	100000

extern char **environ;

static char self[PATH_MAX];
static int nworkers;
static long progress[MAX_WORKERS];	/* events recorded, per worker */
static int stop;
static pid_t children[MAX_CHILDREN + 1];
static int nchildren;
static int child_events;

static long load(const long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* ---- children of fork() ---- */

static void *child_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < child_events; i++)
		tracer_record("test:child", "pid %d thread %d seq %d",
			      (int)getpid(), 1, i);
	return NULL;
}

/* In the child: record on this thread and on a new one, then exit. */
static void __attribute__((noreturn)) child_main(void)
{
	pthread_t th;
	int i, ret;

	ret = pthread_create(&th, NULL, child_thread, NULL);
	for (i = 0; i < child_events; i++)
		tracer_record("test:child", "pid %d thread %d seq %d",
			      (int)getpid(), 0, i);
	if (!ret)
		pthread_join(th, NULL);
	exit(ret ? 3 : 0);
}

static pid_t fork_child(void)
{
	pid_t pid = fork();

	if (pid == 0)
		child_main();
	return pid;
}

/* ---- workers ---- */

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	long i;

	for (i = 0; i < WORKER_CAP && !__atomic_load_n(&stop,
						   __ATOMIC_ACQUIRE); i++) {
		tracer_record("test:seq", "thread %d seq %ld", t, i);
		__atomic_store_n(&progress[t], i + 1, __ATOMIC_RELEASE);
		if (t == 0 && i == 1000)
			children[MAX_CHILDREN] = fork_child();
		if (i % 16 == 15)
			sched_yield();
	}
	return NULL;
}

static int start_workers(pthread_t *th, int n)
{
	int i;

	if (n < 0 || n > MAX_WORKERS)
		return -1;
	nworkers = n;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			return -1;
	return 0;
}

/* Wait until every worker recorded more since *seen (or is done). */
static void workers_advance(long *seen)
{
	int t;

	for (t = 0; t < nworkers; t++) {
		while (load(&progress[t]) < seen[t] + 50 &&
		       load(&progress[t]) < WORKER_CAP)
			sched_yield();
		seen[t] = load(&progress[t]);
	}
}

static void stop_workers(pthread_t *th)
{
	int t;

	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (t = 0; t < nworkers; t++) {
		pthread_join(th[t], NULL);
		printf("thread %d %ld\n", t, load(&progress[t]));
	}
}

/* Reap the children; 0 if each exited 0. */
static int reap(void)
{
	int i, st, bad = 0;

	for (i = 0; i < nchildren; i++) {
		if (children[i] <= 0 || waitpid(children[i], &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forker: child %d failed\n",
				(int)children[i]);
			bad = 1;
			continue;
		}
		printf("child %d\n", (int)children[i]);
	}
	return bad;
}

static int run_fork(int workers, int n, int events)
{
	pthread_t th[MAX_WORKERS];
	long seen[MAX_WORKERS] = { 0 };
	int i, m = 0, bad;

	/* Before the workers: worker 0 forks a child of its own. */
	child_events = events;
	if (n < 0 || n >= MAX_CHILDREN || start_workers(th, workers))
		return 2;
	for (i = 0; i < n; i++) {
		workers_advance(seen);
		tracer_record("test:main", "seq %d", m++);
		children[nchildren++] = fork_child();
		tracer_record("test:main", "seq %d", m++);
	}
	workers_advance(seen);
	/* Worker 0 forks one too, at its event 1000. */
	while (workers > 0 && load(&progress[0]) <= 1001)
		sched_yield();
	stop_workers(th);
	if (workers > 0)
		children[nchildren++] = children[MAX_CHILDREN];
	bad = reap();
	printf("main %d\n", m);
	return bad;
}

/* ---- exec ---- */

static int image_events;
static int image_gen;

static void *image_thread(void *arg)
{
	int t = (int)(long)arg, i;

	for (i = 0; i < image_events; i++)
		tracer_record("test:image", "gen %d pid %d thread %d seq %d",
			      image_gen, (int)getpid(), t, i);
	return NULL;
}

/* Clear close-on-exec on every socket. */
static void keep_sockets(void)
{
	char path[64], target[64];
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strncmp(target, "socket:", 7))
			fcntl(fd, F_SETFD, 0);
	}
}

static int keep;

static void exec_image(int gen, int events, int more)
{
	char g[16], e[16], m[16], image[] = "image", k[] = "keep";
	char *argv[] = { self, image, g, e, m, keep ? k : NULL, NULL };

	snprintf(g, sizeof(g), "%d", gen);
	snprintf(e, sizeof(e), "%d", events);
	snprintf(m, sizeof(m), "%d", more);
	execv(self, argv);
	perror("forker: execv");
	_exit(127);
}

static int run_image(int gen, int events, int more)
{
	pthread_t th;

	image_gen = gen;
	image_events = events;
	if (pthread_create(&th, NULL, image_thread, (void *)1L))
		return 1;
	image_thread((void *)0L);
	pthread_join(th, NULL);
	if (more > 0) {
		if (keep)
			keep_sockets();
		exec_image(gen + 1, events, more - 1);
	}
	if (keep) {
		char line[16];

		printf("ready\n");
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}

static int run_forkexec(int events)
{
	pid_t pid;
	int i;

	tracer_record("test:main", "seq %d", 0);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < events; i++)
			tracer_record("test:prexec", "pid %d seq %d",
				      (int)getpid(), i);
		exec_image(1, events, 1);
	}
	tracer_record("test:main", "seq %d", 1);
	children[nchildren++] = pid;
	i = reap();
	printf("main 2\n");
	return i;
}

/* ---- posix_spawn and vfork ---- */

static pid_t spawn_image(int events, int use_vfork)
{
	char e[16], image[] = "image", one[] = "1", zero[] = "0";
	char *argv[] = { self, image, one, e, zero, NULL };
	pid_t pid;

	snprintf(e, sizeof(e), "%d", events);
	if (!use_vfork)
		return posix_spawn(&pid, self, NULL, NULL, argv, environ) ?
			-1 : pid;
	pid = vfork();
	if (pid == 0) {
		execv(self, argv);
		_exit(127);
	}
	return pid;
}

static int run_spawn(int workers, int n, int events)
{
	pthread_t th[MAX_WORKERS];
	long seen[MAX_WORKERS] = { 0 };
	int i, m = 0, bad;

	if (n < 0 || 2 * n > MAX_CHILDREN || start_workers(th, workers))
		return 2;
	for (i = 0; i < 2 * n; i++) {
		workers_advance(seen);
		tracer_record("test:main", "seq %d", m++);
		children[nchildren++] = spawn_image(events, i & 1);
		tracer_record("test:main", "seq %d", m++);
	}
	workers_advance(seen);
	stop_workers(th);
	bad = reap();
	printf("main %d\n", m);
	return bad;
}

/* ---- many children at once ---- */

static int run_bomb(int n, int events)
{
	int i, j;

	if (n < 1 || n > MAX_CHILDREN)
		return 2;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			for (j = 0; j < events; j++)
				tracer_record("test:bomb",
					      "pid %d child %d seq %d",
					      (int)getpid(), i, j);
			exit(0);
		}
		children[nchildren++] = pid;
	}
	return reap();
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "image"))
		printf("parent %d\n", (int)getpid());
	if (argc == 5 && !strcmp(argv[1], "fork"))
		return run_fork(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "image")) {
		keep = argc == 6 && !strcmp(argv[5], "keep");
		return run_image(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	}
	if (argc == 3 && !strcmp(argv[1], "forkexec"))
		return run_forkexec(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "spawn"))
		return run_spawn(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "bomb"))
		return run_bomb(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: forker fork WORKERS CHILDREN EVENTS | image GEN"
		" EVENTS MORE [keep] | forkexec EVENTS | spawn WORKERS COUNT EVENTS |"
		" bomb CHILDREN EVENTS\n");
	return 2;
}
