/*
 * callsites.c - the registry of the process's call sites.
 *
 * Every module's constructor hands over its "tracer_callsites" section
 * (tracer_register_callsites()); each call site gets the next id (ids are
 * never reused, even after a module is unloaded, because tracerd keeps the
 * descriptions of ids it was told about). The listener thread sends the
 * descriptions to tracerd (tracer__callsites_pending()). A child of
 * fork() is a new process for tracerd: its registry sends every call site
 * again, with the same ids.
 *
 * It also holds the event filter: the patterns tracerd sent last, which
 * decide the `enabled` word of every call site, including those of modules
 * loaded later (filter.c describes a change).
 *
 * Called from constructors, destructors and the listener thread only,
 * never from the write path: a mutex is fine here.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "event_format.h"
#include "wrap.h"
#include "pattern.h"

/*
 * The first 256 entries are static: a program that never meets a session
 * allocates nothing for the library's own call sites (nor for its
 * default filter: default_filter()).
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracer_callsite *first_sites[256] TRACER_COLD_BSS;
static struct tracer_callsite **sites = first_sites;	/* sites[id - 1];
							   NULL: unloaded */
static size_t count, cap = TRACER_ARRAY_SIZE(first_sites), sent;
static uint32_t next_id = 1;
static struct tracer__patterns filter;	/* in force when have_filter */
static bool have_filter;
/* Else, TRACER_DEFAULT_EVENTS in force, without a table (a process that
 * waits for its first session: tracer__callsites_default()). */
static bool have_default;

static uint32_t fixed_bit(const struct tracer_callsite *cs)
{
	uint32_t i;

	for (i = 0; i < cs->nargs; i++)
		if (tracer__type_fixed_size(cs->types[i]) !=
		    TRACER__PAYLOAD_WORD)
			return 0;
	return TRACER__CS_FIXED;
}

/*
 * TRACER_DEFAULT_EVENTS parsed once, into static memory (its patterns are
 * names: tracer__patterns_borrow()); NULL if it cannot be. Under the lock.
 */
static const struct tracer__patterns *default_filter(void)
{
	static struct tracer__pattern v[32];
	static struct tracer__patterns p;
	static int ret = 1;

	if (ret == 1)
		ret = tracer__patterns_borrow(TRACER_DEFAULT_EVENTS, &p, v,
					      TRACER_ARRAY_SIZE(v));
	return ret == 0 ? &p : NULL;
}

/* `enabled` for cs under patterns p (NULL: off), table generation gen. */
static uint32_t word_under(const struct tracer__patterns *p,
			   const struct tracer_callsite *cs, uint32_t gen)
{
	if (!p || !tracer__patterns_match(p, cs->name))
		return 0;
	return TRACER__CS_WORD(gen, fixed_bit(cs));
}

/* `enabled` for cs under the filter in force. */
static uint32_t enable_value(const struct tracer_callsite *cs, uint32_t gen)
{
	return word_under(have_filter ? &filter :
			  have_default ? default_filter() : NULL, cs, gen);
}

static int grow(void)
{
	size_t ncap = cap * 2;
	struct tracer_callsite **n = malloc(ncap * sizeof(*n));

	if (!n)
		return -1;
	memcpy(n, sites, count * sizeof(*n));
	if (sites != first_sites)
		free(sites);
	sites = n;
	cap = ncap;
	return 0;
}

/*
 * Each translation unit of a module registers the same section: once.
 * The sections are also what tracer__callsites_poke_all() walks, from a
 * signal handler: not `sites` (realloc'd), but these static arrays, which
 * change only between begin_write() and end_write():
 *
 *   writer (a module's constructor or destructor, lock held):
 *     writing = 1; wait while walking; change; writing = 0;
 *     walk if walk_wanted
 *   walker (any thread, also a signal handler):
 *     walking = 1 (exchange: one walker); if writing: walk_wanted = 1,
 *     walking = 0, and the writer walks when done (looked at again
 *     after: a writer that finished meanwhile may not have seen it)
 *
 * All sequentially consistent: of a writer's store to `writing` and a
 * walker's store to `walking`, each sees the other's, or one of them
 * came after the other's load. A handler that interrupted a writer in
 * its own thread finds `writing` set, so nobody waits for itself.
 */
static struct tracer_callsite *module_begin[256] TRACER_COLD_BSS;
static struct tracer_callsite *module_end[256] TRACER_COLD_BSS;
static size_t nmodules;
static int writing, walking, walk_wanted;

static void begin_write(void)
{
	__atomic_store_n(&writing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&walking, __ATOMIC_SEQ_CST))
		sched_yield();	/* a walk: a few thousand stores at most */
}

static void end_write(void)
{
	__atomic_store_n(&writing, 0, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&walk_wanted, 0, __ATOMIC_SEQ_CST))
		tracer__callsites_poke_all();
}

static bool module_known(struct tracer_callsite *begin,
			 struct tracer_callsite *end)
{
	size_t i;

	for (i = 0; i < nmodules; i++)
		if (module_begin[i] == begin)
			return true;
	if (nmodules < TRACER_ARRAY_SIZE(module_begin)) {
		begin_write();
		module_begin[nmodules] = begin;
		module_end[nmodules] = end;
		__atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
		end_write();
	}
	return false;
}

static void module_forget(const struct tracer_callsite *begin)
{
	size_t i;

	begin_write();
	for (i = 0; i < nmodules; i++) {
		if (module_begin[i] == begin) {
			module_begin[i] = module_begin[nmodules - 1];
			module_end[i] = module_end[nmodules - 1];
			__atomic_store_n(&nmodules, nmodules - 1,
					 __ATOMIC_RELEASE);
			break;
		}
	}
	end_write();
}

/* Every call site of [begin, end) that is off asks the table instead. */
static void poke_module(struct tracer_callsite *begin,
			struct tracer_callsite *end)
{
	struct tracer_callsite *cs;

	for (cs = begin; cs && cs < end; cs++)
		if (cs->id != 0 &&
		    __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED) == 0)
			__atomic_store_n(&cs->enabled,
					 TRACER__CS_WORD(0, 0),
					 __ATOMIC_RELAXED);
}

void tracer__callsites_poke_all(void)
{
	size_t i, n;

	for (;;) {
		if (__atomic_exchange_n(&walking, 1, __ATOMIC_SEQ_CST))
			return;		/* another walk is on */
		if (!__atomic_load_n(&writing, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(&walk_wanted, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&walking, 0, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&writing, __ATOMIC_SEQ_CST) ||
		    !__atomic_exchange_n(&walk_wanted, 0, __ATOMIC_SEQ_CST))
			return;		/* the writer walks, or did */
	}
	n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		poke_module(module_begin[i], module_end[i]);
	__atomic_store_n(&walking, 0, __ATOMIC_SEQ_CST);
}

void tracer_register_callsites(struct tracer_callsite *begin,
			       struct tracer_callsite *end)
{
	struct tracer_callsite *cs;

	WRAP_GUARD_ENTER();
	pthread_mutex_lock(&lock);
	for (cs = module_known(begin, end) ? end : begin; cs && cs < end;
	     cs++) {
		/* A descriptor not made by the macros (no letter for an
		 * argument, or not one of event_format.h's) is left out:
		 * its values could not be stored. */
		if (cs->abi != TRACER_CALLSITE_ABI || cs->id != 0 ||
		    strnlen(cs->types, sizeof(cs->types)) != cs->nargs ||
		    !tracer__types_valid(cs->types))
			continue;
		if (count == cap && grow())
			break;
		cs->id = next_id++;
		sites[count++] = cs;
		__atomic_store_n(&cs->enabled, enable_value(cs,
				 __atomic_load_n(&tracer__filter_gen,
						 __ATOMIC_RELAXED)),
				 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	tracer__client_sync_callsites();
	WRAP_GUARD_EXIT();
}

/* Set by exit() and main()'s return, before the modules' destructors
 * run (wrap_proc.c). */
static bool exiting;

void tracer__callsites_exiting(void)
{
	__atomic_store_n(&exiting, true, __ATOMIC_RELAXED);
}

void tracer_unregister_callsites(struct tracer_callsite *begin,
				 struct tracer_callsite *end)
{
	size_t i;

	/* A module's destructor at exit(): its call sites stay mapped, and
	 * the threads still running may go on recording through them. Only
	 * a dlclose() must take them out of the registry. */
	if (__atomic_load_n(&exiting, __ATOMIC_RELAXED))
		return;
	WRAP_GUARD_ENTER();
	pthread_mutex_lock(&lock);
	module_forget(begin);
	for (i = 0; i < count; i++) {
		if (sites[i] && sites[i] >= begin && sites[i] < end) {
			__atomic_store_n(&sites[i]->enabled, 0,
					 __ATOMIC_RELAXED);
			sites[i] = NULL;
		}
	}
	pthread_mutex_unlock(&lock);
	WRAP_GUARD_EXIT();
}

void tracer__callsites_lock(void)
{
	pthread_mutex_lock(&lock);
}

void tracer__callsites_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

int tracer__callsites_trylock(int ms)
{
	struct timespec t;

	tracer__deadline_ms(&t, ms);
	return -pthread_mutex_timedlock(&lock, &t);
}

void tracer__callsites_fork_child(bool consistent)
{
	pthread_mutex_init(&lock, NULL);
	/* The parent's other threads, mid-walk or mid-write, are not here. */
	writing = walking = walk_wanted = 0;
	sent = 0;		/* the child's tracerd process knows none */
	if (!consistent) {
		/* Maybe half changed by another thread: forget, leak. */
		memset(&filter, 0, sizeof(filter));
		have_filter = have_default = false;
	}
}

void tracer__callsites_resend(void)
{
	pthread_mutex_lock(&lock);
	sent = 0;
	pthread_mutex_unlock(&lock);
}

/* Called with the lock held, so no module can be unloaded meanwhile. */
size_t tracer__callsites_pending(struct tracer_callsite **out, size_t n)
{
	size_t got = 0;

	while (sent < count && got < n) {
		if (sites[sent])
			out[got++] = sites[sent];
		sent++;
	}
	return got;
}

static void store_all(const struct tracer__filter_table *t, bool only_new)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct tracer_callsite *cs = sites[i];
		uint32_t on = t && cs && cs->id < t->n && t->on[cs->id];

		if (!cs || (only_new && (!on || cs->enabled)))
			continue;
		/* Relaxed: the generation in the word says which table. */
		__atomic_store_n(&cs->enabled, on ? TRACER__CS_WORD(
				 only_new ? 0 : t->gen, fixed_bit(cs)) : 0,
				 __ATOMIC_RELAXED);
	}
}

/* Build the table of p for ids 0..count; counts what it turns on. */
static struct tracer__filter_table *build(const struct tracer__patterns *p,
					  uint32_t *enabled)
{
	struct tracer__filter_table *t = tracer__filter_new(
		(uint32_t)count + 1);
	size_t i;

	*enabled = 0;
	for (i = 0; t && i < count; i++) {
		if (sites[i] && tracer__patterns_match(p, sites[i]->name)) {
			t->on[sites[i]->id] = 1;
			(*enabled)++;
		}
	}
	return t;
}

/* The steps of filter.c's "A change", under the lock. */
static struct tracer__filter_table *switch_to(struct tracer__filter_table *t)
{
	struct tracer__filter_table *old;

	store_all(t, true);		/* 1. newly on: ask the table */
	old = tracer__filter_publish(t);	/* 2. the switch */
	store_all(t, false);		/* 3. every word exact again */
	return old;
}

int tracer__callsites_filter(const char *text, uint32_t *enabled,
			     uint32_t *total, struct tracer__filter_table **old)
{
	struct tracer__filter_table *t;
	struct tracer__patterns p;
	char err[320];
	int ret;

	ret = tracer__patterns_parse(text, &p, err, sizeof(err));
	if (ret)
		return ret;
	pthread_mutex_lock(&lock);
	t = build(&p, enabled);
	if (!t) {
		pthread_mutex_unlock(&lock);
		tracer__patterns_free(&p);
		return -ENOMEM;
	}
	tracer__patterns_free(&filter);
	filter = p;
	have_filter = true;
	have_default = false;
	*total = (uint32_t)count;
	*old = switch_to(t);
	pthread_mutex_unlock(&lock);
	return 0;			/* 4. the caller retires *old */
}

/* Every word from enable_value(), the generation in force. */
static void store_values(void)
{
	uint32_t gen = __atomic_load_n(&tracer__filter_gen, __ATOMIC_RELAXED);
	size_t i;

	for (i = 0; i < count; i++)
		if (sites[i])
			__atomic_store_n(&sites[i]->enabled,
					 enable_value(sites[i], gen),
					 __ATOMIC_RELAXED);
}

/*
 * The library's own call sites (the wrappers'), one section: registered
 * when the process registers with tracerd (the per-file constructors of
 * <tracer.h> are left out of the library: TRACER_NO_AUTO_REGISTER), so
 * that a process that never meets a session neither numbers them nor
 * fills the registry.
 */
extern struct tracer_callsite __start_tracer_callsites[] TRACER_HIDDEN;
extern struct tracer_callsite __stop_tracer_callsites[] TRACER_HIDDEN;

void tracer__callsites_register_own(void)
{
	tracer_register_callsites(__start_tracer_callsites,
				  __stop_tracer_callsites);
}

/* The library's call sites that the default filter leaves off (wrap.h). */
extern struct tracer_callsite *const __start_tracer_quiet[] TRACER_HIDDEN;
extern struct tracer_callsite *const __stop_tracer_quiet[] TRACER_HIDDEN;

/*
 * The default filter on the library's own call sites, without matching
 * their names: every one on but the quiet ones (at every start of a
 * process that waits for a session: 4 us less than the match).
 */
static void own_default(uint32_t gen)
{
	struct tracer_callsite *cs;
	struct tracer_callsite *const *q;

	for (cs = __start_tracer_callsites; cs < __stop_tracer_callsites; cs++)
		__atomic_store_n(&cs->enabled, TRACER__CS_WORD(gen,
				 fixed_bit(cs)), __ATOMIC_RELAXED);
	for (q = __start_tracer_quiet; q < __stop_tracer_quiet; q++)
		__atomic_store_n(&(*q)->enabled, 0, __ATOMIC_RELAXED);
}

void tracer__callsites_default(void)
{
	uint32_t gen = __atomic_load_n(&tracer__filter_gen, __ATOMIC_RELAXED);

	pthread_mutex_lock(&lock);
	if (have_filter)
		tracer__patterns_free(&filter);
	have_filter = false;
	have_default = true;
	/* Ours, registered or not yet (their words are read all the same),
	 * then every registered one (default_filter() parses it then). */
	own_default(gen);
	if (count)
		store_values();
	pthread_mutex_unlock(&lock);
}

int tracer__callsites_default_check(const char **name)
{
	uint32_t gen = __atomic_load_n(&tracer__filter_gen, __ATOMIC_RELAXED);
	const struct tracer__patterns *p;
	struct tracer_callsite *cs;
	int n = 0;

	*name = NULL;
	pthread_mutex_lock(&lock);
	p = default_filter();
	for (cs = __start_tracer_callsites; cs < __stop_tracer_callsites;
	     cs++) {
		bool on = __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED);

		if (!p || (word_under(p, cs, gen) != 0) != on) {
			*name = cs->name;
			n++;
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}

int tracer__callsites_refilter(struct tracer__filter_table **old)
{
	struct tracer__filter_table *t;
	uint32_t n;

	*old = NULL;
	pthread_mutex_lock(&lock);
	if (!have_filter) {
		if (have_default)
			store_values();
		pthread_mutex_unlock(&lock);
		return 0;
	}
	t = build(&filter, &n);
	if (t)
		*old = switch_to(t);
	pthread_mutex_unlock(&lock);
	return t ? 0 : -ENOMEM;
}

void tracer__callsites_disable(void)
{
	size_t i;

	pthread_mutex_lock(&lock);
	have_filter = have_default = false;
	for (i = 0; i < count; i++)
		if (sites[i])
			__atomic_store_n(&sites[i]->enabled, 0,
					 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}
