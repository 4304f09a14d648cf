/*
 * filter.c - enable tables: which call sites record, switched atomically
 * while every thread keeps recording.
 *
 * Model
 * -----
 * An enable table holds on[id] for every call-site id, built by the
 * listener thread from a filter (pattern.h) and never changed after it is
 * published. Two slots hold the current table and, during a change, the
 * one before it; the current generation is the word tracer__filter_gen:
 *
 *   slots[gen & 1]  the table of generation gen (generations alternate
 *                   parity: 1, 2, ..., MAX, 1, ... with MAX even)
 *
 * Who writes what: only the listener thread (under the call-site registry
 * lock) builds, publishes and retires tables; the event path only reads.
 *
 * The event path never touches a table in the common case: each call
 * site's `enabled` word carries the generation of the table that set it
 * (internal.h), and tracer_record_emit() compares it with
 * tracer__filter_gen: equal, the word is exact; different, the call site
 * is in the middle of a change and tracer__filter_allows() looks the id up
 * in the table of the current generation.
 *
 * A change from table A (generation g) to table B (callsites.c):
 *
 *   1. call sites on in B but off now get the word "generation 0, on":
 *      the macro calls in, the generations differ, the table decides (A:
 *      still off)
 *   2. publish: slots[(g+1) & 1] = B, then tracer__filter_gen = g + 1
 *      (release): the one atomic switch; from here every decision that is
 *      not exact goes to B
 *   3. every call site gets B's word: generation g + 1, or 0 when off
 *   4. retire A: slots[g & 1] = NULL, wait for A's readers, free(A)
 *
 * So for any event, the decision is the one of a single table, and a
 * thread that saw generation g + 1 never decides by A again.
 *
 * Readers and retiring
 * --------------------
 * A reader (any thread, a signal handler too) announces itself on the
 * slot it is about to read, then reads the slot:
 *
 *   reader                                retirer (one at a time)
 *   readers[s] += 1          (seq_cst)    slots[s] = NULL      (seq_cst)
 *   t = slots[s]             (seq_cst)    until readers[s] == 0 (seq_cst)
 *   ... t->on[id] ...                     free(A)
 *   readers[s] -= 1          (release)
 *
 * Both sides store then load with sequential consistency, so at least one
 * sees the other: a reader that still finds A was counted before the
 * retirer looked, and the retirer waits for it; one counted later finds
 * NULL (or the slot's next table, whose generation it rejects). The counts
 * are bus-locked instructions, paid only inside a filter change (the
 * exact words decide every other event), which is why a counter is enough
 * here and liburcu-bp, a shared library loaded by every traced program
 * for this alone, is not needed.
 *
 * The wait is bounded: a reader lasts a few loads, but a thread can be
 * stopped or killed between its two counts; after RETIRE_WAIT_MS the old
 * table is left allocated (counted in leaked_tables) rather than freed
 * under a reader. In a forked child only the forking thread is left: the
 * counts of the parent's other threads are dropped (fork_child).
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "internal.h"

/* tests/unit/test_filter.c widens the window between a reader's load of
 * the slot and its reads of the table. */
#ifndef FILTER_TEST_READING
#define FILTER_TEST_READING()	do { } while (0)
#endif

#define GEN_MAX		((1u << 30) - 2)	/* even: parity alternates */

#define RETIRE_WAIT_MS	1000

uint32_t tracer__filter_gen;
static struct tracer__filter_table *slots[2];
static unsigned long readers[2];
static unsigned long leaked_tables;

struct tracer__filter_table *tracer__filter_new(uint32_t n)
{
	struct tracer__filter_table *t = calloc(1, sizeof(*t) + n);

	if (t)
		t->n = n;
	return t;
}

uint32_t tracer__filter_next_gen(void)
{
	uint32_t g = __atomic_load_n(&tracer__filter_gen, __ATOMIC_RELAXED);

	return g >= GEN_MAX ? 1 : g + 1;
}

struct tracer__filter_table *tracer__filter_publish(
	struct tracer__filter_table *t)
{
	uint32_t g = __atomic_load_n(&tracer__filter_gen, __ATOMIC_RELAXED);
	struct tracer__filter_table *old = g ? slots[g & 1] : NULL;

	t->gen = tracer__filter_next_gen();
	/* The table's contents before its pointer. */
	__atomic_store_n(&slots[t->gen & 1], t, __ATOMIC_SEQ_CST);
	/* The switch: the slot is set before readers can pick the gen. */
	__atomic_store_n(&tracer__filter_gen, t->gen, __ATOMIC_RELEASE);
	return old;
}

/* Until no reader counts on slot s, RETIRE_WAIT_MS at most; true then. */
static bool readers_gone(int s)
{
	struct timespec pause = { 0, 100 * 1000 };	/* 0.1 ms */
	int i;

	for (i = 0; i < 100; i++) {
		if (__atomic_load_n(&readers[s], __ATOMIC_SEQ_CST) == 0)
			return true;
		sched_yield();
	}
	for (i = 0; i < RETIRE_WAIT_MS * 10; i++) {
		if (__atomic_load_n(&readers[s], __ATOMIC_SEQ_CST) == 0)
			return true;
		/* The raw call: the program's nanosleep may be our wrapper. */
		syscall(SYS_nanosleep, &pause, NULL);
	}
	return false;
}

void tracer__filter_retire(struct tracer__filter_table *old)
{
	int s;

	if (!old)
		return;
	s = old->gen & 1;
	/* A reader that still picks old's generation finds NULL, retries.
	 * Ordered before the loads of readers[s] (see the model above). */
	__atomic_store_n(&slots[s], NULL, __ATOMIC_SEQ_CST);
	if (readers_gone(s))
		free(old);
	else
		__atomic_fetch_add(&leaked_tables, 1, __ATOMIC_RELAXED);
}

/* fork(), in the child: the parent's other threads, counted mid-read,
 * are not here. */
void tracer__filter_fork_child(void)
{
	__atomic_store_n(&readers[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&readers[1], 0, __ATOMIC_RELAXED);
}

bool tracer__filter_allows(const struct tracer_callsite *cs)
{
	const struct tracer__filter_table *t = NULL;
	bool on = false;
	int tries;

	for (tries = 0; tries < 8 && !t; tries++) {
		/* Pairs with the release store in tracer__filter_publish. */
		uint32_t g = __atomic_load_n(&tracer__filter_gen,
					     __ATOMIC_ACQUIRE);
		int s = g & 1;

		if (!g)
			break;
		/* Counted before the slot is read: the retirer's NULL store
		 * and our count, one of them seen by the other. */
		__atomic_fetch_add(&readers[s], 1, __ATOMIC_SEQ_CST);
		t = __atomic_load_n(&slots[s], __ATOMIC_SEQ_CST);
		FILTER_TEST_READING();
		if (t && t->gen != g)
			t = NULL;	/* a later change reused the slot */
		if (t && cs->id < t->n)
			on = t->on[cs->id] != 0;
		/* Our reads of the table before the retirer may free it. */
		__atomic_fetch_sub(&readers[s], 1, __ATOMIC_RELEASE);
	}
	return on;
}
