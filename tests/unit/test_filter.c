/*
 * test_filter - the enable tables' reclamation (libtracer/filter.c,
 * included): a table is freed only when no thread can still be reading it.
 *
 * Reader threads ask tracer__filter_allows() about one call site without
 * pause while the main thread publishes and retires tables, each of which
 * turns that call site on. "Freeing" a table here zeroes its entries (and
 * keeps its memory for the end), so a reader that read a table after it
 * was freed is told "off" and counts an error. Inside filter.c a reader
 * yields between loading the slot and reading the table, which leaves the
 * retirer every chance to free the table under it if it did not wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

static void test_free(void *p);
static volatile int reading_yield;

#define FILTER_TEST_READING() \
	do { if (reading_yield) sched_yield(); } while (0)
#define free test_free
#include "filter.c"
#undef free

#define READERS		3
#define CHANGES		3000
#define SITES		8

/* Retired tables: kept, entries zeroed, freed at the end. */
static struct tracer__filter_table *graveyard[CHANGES + 2];
static int ngrave;

static void test_free(void *p)
{
	struct tracer__filter_table *t = p;

	memset(t->on, 0, t->n);
	graveyard[ngrave++] = t;
}

static struct tracer__filter_table *all_on(void)
{
	struct tracer__filter_table *t = tracer__filter_new(SITES);

	if (t)
		memset(t->on, 1, SITES);
	return t;
}

static int stop;
static long reads[READERS], wrong[READERS];

static void *reader(void *arg)
{
	long i = (long)arg;
	struct tracer_callsite cs;

	memset(&cs, 0, sizeof(cs));
	cs.id = (uint32_t)(i % SITES);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (!tracer__filter_allows(&cs))
			wrong[i]++;
		__atomic_store_n(&reads[i], reads[i] + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Every reader's reads so far. */
static long all_reads(void)
{
	long n = 0;
	int i;

	for (i = 0; i < READERS; i++)
		n += __atomic_load_n(&reads[i], __ATOMIC_RELAXED);
	return n;
}

/* Until the readers have read again since `since` (however loaded the
 * machine, tables change while they read): the reads now. */
static long await_reads(long since)
{
	long n;

	while ((n = all_reads()) == since)
		sched_yield();
	return n;
}

int main(void)
{
	pthread_t th[READERS];
	long total = 0, bad = 0, seen, during = 0;
	int i, pid, st;

	plan(4);
	tracer__filter_publish(all_on());
	reading_yield = 1;
	for (i = 0; i < READERS; i++)
		pthread_create(&th[i], NULL, reader, (void *)(long)i);
	seen = await_reads(0);
	for (i = 0; i < CHANGES; i++) {
		struct tracer__filter_table *t = all_on();

		if (!t)
			break;
		tracer__filter_retire(tracer__filter_publish(t));
		if (i % 64 == 0) {	/* readers read between changes */
			long now = await_reads(seen);

			during += now - seen;
			seen = now;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		total += reads[i];
		bad += wrong[i];
	}
	ok(ngrave == CHANGES, "%d tables replaced, %d freed", CHANGES, ngrave);
	ok(during > 0 && bad == 0, "%ld reads while tables changed (%ld in "
	   "all): %ld read a freed table", during, total, bad);
	ok(leaked_tables == 0, "no table left allocated (%lu)", leaked_tables);

	/* A forked child: the parent's readers are not there to wait for. */
	__atomic_add_fetch(&readers[0], 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&readers[1], 1, __ATOMIC_SEQ_CST);
	pid = fork();
	if (pid == 0) {
		tracer__filter_fork_child();
		tracer__filter_retire(tracer__filter_publish(all_on()));
		_exit(leaked_tables == 0 ? 0 : 1);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	   WEXITSTATUS(st) == 0, "forked child: a table retired at once");
	for (i = 0; i < ngrave; i++)
		free(graveyard[i]);
	return done();
}
