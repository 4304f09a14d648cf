/*
 * reportee.c - a traced program of known counts for test_report.sh
 * (`tracectl report`), built with -finstrument-functions and linked with
 * libtracer:
 *
 *   reportee ROUNDS [WORK_US]
 *
 * The main thread, ROUNDS times:
 *   rep:work_begin, a sleep of WORK_US (default 200; 0: none), rep:work_end
 *                                                      (a pair: "rep:work")
 *   rep:tick                                           (a single event)
 *   parent(), which calls child() twice (each sleeps WORK_US / 4)
 *   recurse(3): recurse(3) -> recurse(2) -> recurse(1) (recursion)
 *   read() of a bad descriptor  (libc:read_entry/_exit, errno EBADF)
 *   read() of /dev/zero         (libc:read_entry/_exit, no error)
 * then a thread named "rep-worker" records rep:beat ROUNDS times and takes
 * the mutex `rep_lock` while main holds it for LOCK_US, LOCKS times (each
 * a pthread:mutex_wait of about LOCK_US).
 *
 * Only the functions named above are instrumented (the others are
 * no_instrument_function).
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <tracer.h>

#define NOI	__attribute__((no_instrument_function))
#if defined(__clang__)
# define KEEP	__attribute__((noinline, used))
#else
# define KEEP	__attribute__((noipa, used))
#endif

#define LOCK_US	2000
#define LOCKS	5

static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held, taken, released;
static int rounds;
static long work_us = 200;

static NOI void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	if (us <= 0)
		return;
	while (nanosleep(&ts, &ts))
		;
}

static KEEP void child(void)
{
	sleep_us(work_us / 4);
}

static KEEP void parent(void)
{
	child();
	child();
}

static KEEP int recurse(int n)
{
	return n <= 1 ? 1 : recurse(n - 1) + 1;
}

/* The worker: beats, then waits on the mutex main holds. */
static NOI void *worker(void *arg)
{
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "rep-worker");
	for (i = 0; i < rounds; i++)
		tracer_record("rep:beat", "beat %d", i);
	for (i = 0; i < LOCKS; i++) {
		sem_wait(&held);	/* main holds rep_lock */
		sem_post(&taken);
		pthread_mutex_lock(&rep_lock);	/* waits about LOCK_US */
		pthread_mutex_unlock(&rep_lock);
		sem_post(&released);
	}
	return NULL;
}

/* Hold rep_lock LOCK_US while the worker waits for it, LOCKS times. */
static NOI void contend(void)
{
	int i;

	for (i = 0; i < LOCKS; i++) {
		pthread_mutex_lock(&rep_lock);
		sem_post(&held);
		sem_wait(&taken);
		sleep_us(LOCK_US);
		pthread_mutex_unlock(&rep_lock);
		sem_wait(&released);
	}
}

NOI int main(int argc, char **argv)
{
	char buf[64];
	pthread_t th;
	int i, zero;

	if (argc < 2 || argc > 3 || (rounds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: reportee ROUNDS [WORK_US]\n");
		return 2;
	}
	if (argc == 3)
		work_us = atol(argv[2]);
	zero = open("/dev/zero", O_RDONLY);
	if (zero < 0) {
		perror("/dev/zero");
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		tracer_record("rep:work_begin", "round %d", i);
		sleep_us(work_us);
		tracer_record("rep:work_end", "round %d", i);
		tracer_record("rep:tick", "round %d", i);
		parent();
		recurse(3);
		if (read(-1, buf, sizeof(buf)) != -1 ||
		    read(zero, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	}
	close(zero);
	sem_init(&held, 0, 0);
	sem_init(&taken, 0, 0);
	sem_init(&released, 0, 0);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	contend();
	pthread_join(th, NULL);
	return 0;
}
