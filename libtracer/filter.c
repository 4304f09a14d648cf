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
 * in the table of the current generation, inside an RCU read-side critical
 * section (liburcu's "bulletproof" flavour: no thread registration, usable
 * from signal handlers).
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
 *   4. retire A: slots[g & 1] = NULL, synchronize_rcu(), free(A)
 *
 * So for any event, the decision is the one of a single table, and a
 * thread that saw generation g + 1 never decides by A again.
 */
#include <stdlib.h>

/*
 * No _LGPL_SOURCE: the read side is only reached during a change, so the
 * library calls cost nothing that matters, and liburcu-bp's inline read
 * lock touches its reader record at an address its arena does not align
 * as the type says (UndefinedBehaviorSanitizer stops the program there).
 */
#include <urcu-bp.h>

#include "internal.h"
#include "wrap.h"

#define GEN_MAX		((1u << 30) - 2)	/* even: parity alternates */

uint32_t tracer__filter_gen;
static struct tracer__filter_table *slots[2];

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
	/* The table's contents before its pointer (rcu_assign_pointer). */
	rcu_assign_pointer(slots[t->gen & 1], t);
	/* The switch: the slot is set before readers can pick the gen. */
	__atomic_store_n(&tracer__filter_gen, t->gen, __ATOMIC_RELEASE);
	return old;
}

void tracer__filter_retire(struct tracer__filter_table *old)
{
	if (!old)
		return;
	/* A reader that still picks old's generation finds NULL, retries. */
	rcu_assign_pointer(slots[old->gen & 1], NULL);
	urcu_bp_synchronize_rcu();
	free(old);
}

/*
 * fork(): liburcu-bp's registry holds a reader record per thread that
 * ever read; in the child every thread but the forking one is gone, and a
 * record left inside a read-side section would make the child's next
 * grace period wait for ever. liburcu-bp prunes them when told about the
 * fork (it takes its grace-period lock before it: a grace period lasts as
 * long as the readers' few loads).
 */
void tracer__filter_fork_prepare(void)
{
	urcu_bp_before_fork();
}

void tracer__filter_fork_parent(void)
{
	urcu_bp_after_fork_parent();
}

void tracer__filter_fork_child(void)
{
	urcu_bp_after_fork_child();
}

bool tracer__filter_allows(const struct tracer_callsite *cs)
{
	const struct tracer__filter_table *t = NULL;
	bool on = false;
	int tries;

	WRAP_GUARD_ENTER();	/* liburcu-bp maps its registry, locks */
	urcu_bp_read_lock();
	for (tries = 0; tries < 8 && !t; tries++) {
		/* Pairs with the release store in tracer__filter_publish. */
		uint32_t g = __atomic_load_n(&tracer__filter_gen,
					     __ATOMIC_ACQUIRE);

		t = g ? rcu_dereference(slots[g & 1]) : NULL;
		if (t && t->gen != g)
			t = NULL;	/* a later change reused the slot */
	}
	if (t && cs->id < t->n)
		on = t->on[cs->id] != 0;
	urcu_bp_read_unlock();
	WRAP_GUARD_EXIT();
	return on;
}
