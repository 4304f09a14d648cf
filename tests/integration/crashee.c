/*
 * crashee.c - a traced program that dies badly, for test_crash.sh.
 *
 *   crashee run FILE N          N threads record numbered events
 *                               ("crash:ev thread T seq S") until killed;
 *                               after each event, the thread's count of
 *                               events recorded goes into FILE (shared
 *                               memory: it survives the kill)
 *   crashee segv|abort FILE N K the same, and thread 0 dies of SIGSEGV or
 *                               abort() after K events
 *   crashee segv-handler|abort-handler FILE N K
 *                               the same, but from a SIGUSR1 handler that
 *                               records "crash:handler" first
 *   crashee rawexit FILE N K    N threads, one after the other, record K
 *                               events each and end through the raw exit
 *                               system call (no exit path runs); "ready"
 *                               first, then after each "vanished I" is
 *                               printed and a line is read
 *                               from stdin before the next one starts
 *   crashee cancel FILE N K     N threads, one after the other, record
 *                               "crash:cancel" events flat out with
 *                               asynchronous cancellation and are cancelled
 *                               (in the middle of a record, often); "ready"
 *                               first, before any thread starts, then a
 *                               line is read from stdin; "cancelled I"
 *                               after each, then a line is read; at the
 *                               end a thread records K events
 *                               "crash:final"
 *   crashee wait FILE N K MS    wait until each of N threads recorded K
 *                               events (exit 0), or MS milliseconds (1)
 *
 * FILE holds one uint64_t per thread.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracer.h>

#define MAXT	64

static volatile uint64_t *progress;
static long limit = -1;			/* thread 0 dies after this many */
static int how;				/* 0: killed from outside */

enum { SEGV = 1, ABORT, SEGV_HANDLER, ABORT_HANDLER };

static int *volatile nowhere;		/* NULL, and the compiler can't tell */

/* UBSan would stop at the null store; the fault is what we want. */
__attribute__((no_sanitize("undefined")))
static void die(void)
{
	if (how == SEGV || how == SEGV_HANDLER)
		*nowhere = 1;	/* a real fault, not raise() */
	abort();
}

static void on_usr1(int sig)
{
	(void)sig;
	tracer_record("crash:handler", "dying in a handler");
	die();
}

static void *recorder(void *arg)
{
	int t = (int)(long)arg;
	long long s;

	for (s = 0;; s++) {
		tracer_record("crash:ev", "thread %d seq %lld", t, s);
		__atomic_store_n(&progress[t], (uint64_t)s + 1,
				 __ATOMIC_RELEASE);
		if (t == 0 && s + 1 == limit) {
			if (how == SEGV_HANDLER || how == ABORT_HANDLER)
				pthread_kill(pthread_self(), SIGUSR1);
			else
				die();
		}
		if (s % 1024 == 1023) {	/* stay well below the drain rate */
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void *vanisher(void *arg)
{
	int t = (int)(long)arg;
	long s;

	for (s = 0; s < limit; s++) {
		tracer_record("crash:ev", "thread %d seq %lld", t,
			      (long long)s);
		progress[t] = (uint64_t)s + 1;
	}
	syscall(SYS_exit, 0);
	return NULL;
}

/* Records until cancelled, asynchronously: at any instruction. */
static void *cancellee(void *arg)
{
	int t = (int)(long)arg, old;
	long long s;

	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	for (s = 0;; s++) {
		tracer_record("crash:cancel", "thread %d seq %lld", t, s);
		__atomic_store_n(&progress[t], (uint64_t)s + 1,
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *finisher(void *arg)
{
	long s;

	(void)arg;
	for (s = 0; s < limit; s++)
		tracer_record("crash:final", "seq %ld", s);
	return NULL;
}

/* Wait until thread t recorded k events (spinning: it runs flat out). */
static void spin_until(int t, uint64_t k)
{
	while (__atomic_load_n(&progress[t], __ATOMIC_ACQUIRE) < k)
		;
}

static int announced;	/* "ready" was printed */

/* Say what became of thread t ("ready" first), wait for the test's go. */
static int told(const char *what, int t)
{
	char line[16];

	if (t == 0 && !announced)
		printf("ready\n");
	printf("%s %d\n", what, t);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) ? 0 : 1;
}

static int run_cancels(int n)
{
	char line[16];
	pthread_t th;
	int t;

	/* Ready before any thread: the test counts the main thread's
	 * buffers alone first. */
	printf("ready\n");
	fflush(stdout);
	announced = 1;
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (t = 0; t < n; t++) {
		pthread_create(&th, NULL, cancellee, (void *)(long)t);
		spin_until(t, 1000 + (uint64_t)t * 977);
		pthread_cancel(th);
		pthread_join(th, NULL);
		if (told("cancelled", t))
			return 1;
	}
	pthread_create(&th, NULL, finisher, NULL);
	pthread_join(th, NULL);
	return 0;
}

static volatile uint64_t *map(const char *path, int create)
{
	int fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0644);
	void *m;

	if (fd < 0)
		return NULL;
	if (create ? ftruncate(fd, MAXT * 8) != 0 : lseek(fd, 0, SEEK_END) <
						     MAXT * 8) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, MAXT * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

static int wait_for(const char *path, int n, long k, long ms)
{
	volatile uint64_t *p = NULL;
	long waited;
	int t;

	for (waited = 0; waited < ms * 10; waited++) {
		struct timespec ts = { 0, 100000 };

		if (!p)
			p = map(path, 0);	/* the program may be starting */
		for (t = 0; p && t < n && __atomic_load_n(&p[t],
				__ATOMIC_ACQUIRE) >= (uint64_t)k; t++)
			;
		if (p && t == n)
			return 0;
		nanosleep(&ts, NULL);	/* polling the condition */
	}
	return 1;
}

static int run_vanishers(int n)
{
	pthread_t th;
	int t;

	for (t = 0; t < n; t++) {
		pthread_create(&th, NULL, vanisher, (void *)(long)t);
		pthread_join(th, NULL);
		if (told("vanished", t))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "run", "segv", "abort",
		"segv-handler", "abort-handler" };
	pthread_t th[MAXT];
	int n, t;

	if (argc == 6 && !strcmp(argv[1], "wait"))
		return wait_for(argv[2], atoi(argv[3]), atol(argv[4]),
				atol(argv[5]));
	if (argc < 4 || (n = atoi(argv[3])) < 1 || n > MAXT)
		return 2;
	progress = map(argv[2], 1);
	if (!progress)
		return 2;
	if (argc > 4)
		limit = atol(argv[4]);
	if (!strcmp(argv[1], "rawexit"))
		return run_vanishers(n);
	if (!strcmp(argv[1], "cancel"))
		return run_cancels(n);
	for (how = 0; how < 5 && strcmp(argv[1], modes[how]); how++)
		;
	if (how == 5)
		return 2;
	signal(SIGUSR1, on_usr1);
	for (t = 0; t < n; t++)
		pthread_create(&th[t], NULL, recorder, (void *)(long)t);
	for (t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	return 0;
}
