/*
 * namer.c - a program that renames its threads, for test_rename.sh. It
 * knows nothing of the tracer (libtracer is preloaded).
 *
 *   namer        commands on standard input, answers on standard output:
 *                  (at start)  "ready"
 *                  w           the main thread writes to /dev/null;
 *                              answers "wrote"
 *                  r           the renames below; answers
 *                              "renamed MAIN A B C" (their thread ids)
 *                  q           every thread writes once more and ends;
 *                              exits 0
 *   namer batch  r then q, answers on standard output
 *
 * The renames: thread A names itself "nm-prctl" with prctl(PR_SET_NAME),
 * thread B "nm-self" with pthread_setname_np(pthread_self(), ...), the
 * main thread names thread C "nm-other" with pthread_setname_np(C, ...)
 * and itself "nm-main". Every thread writes to /dev/null (a libc:write
 * event) before its rename and after it; a thread starts with the
 * program's name.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { A, B, C, NTHREADS };

static int devnull;
static pid_t tids[NTHREADS];
static sem_t done[NTHREADS];	/* posted: the thread renamed itself (A, B),
				   or is ready to be renamed (C) */
static sem_t go;		/* posted: write once more and end */

static void touch(void)
{
	if (write(devnull, "x", 1) != 1)
		perror("namer: write");
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;

	tids[i] = gettid();
	touch();
	if (i == A)
		prctl(PR_SET_NAME, "nm-prctl", 0, 0, 0);
	else if (i == B)
		pthread_setname_np(pthread_self(), "nm-self");
	touch();
	sem_post(&done[i]);
	sem_wait(&go);
	touch();
	return NULL;
}

/* Start the threads and rename; the answer line. */
static int renames(pthread_t th[NTHREADS])
{
	int i;

	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			return -1;
	for (i = 0; i < NTHREADS; i++)
		sem_wait(&done[i]);
	touch();
	if (pthread_setname_np(th[C], "nm-other") ||
	    pthread_setname_np(pthread_self(), "nm-main"))
		return -1;
	touch();
	printf("renamed %d %d %d %d\n", (int)gettid(), (int)tids[A],
	       (int)tids[B], (int)tids[C]);
	fflush(stdout);
	return 0;
}

static void end(pthread_t th[NTHREADS])
{
	int i;

	for (i = 0; i < NTHREADS; i++)
		sem_post(&go);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	touch();
}

int main(int argc, char **argv)
{
	int batch = argc > 1 && !strcmp(argv[1], "batch"), i, started = 0;
	pthread_t th[NTHREADS];
	char line[64];

	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	sem_init(&go, 0, 0);
	for (i = 0; i < NTHREADS; i++)
		sem_init(&done[i], 0, 0);
	touch();
	if (batch) {
		if (renames(th))
			return 1;
		end(th);
		return 0;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == 'r' && !started) {
			if (renames(th))
				return 1;
			started = 1;
		} else if (line[0] == 'w') {
			touch();
			printf("wrote\n");
			fflush(stdout);
		} else if (line[0] == 'q') {
			if (started)
				end(th);
			return 0;
		}
	}
	return 1;
}
