/*
 * callsites.c - the registry of the process's call sites.
 *
 * Every module's constructor hands over its "tracer_callsites" section
 * (tracer_register_callsites()); each call site gets the next id (ids are
 * never reused, even after a module is unloaded, because tracerd keeps the
 * descriptions of ids it was told about). The listener thread sends the
 * descriptions to tracerd (tracer__callsites_pending()).
 *
 * Called from constructors, destructors and the listener thread only,
 * never from the write path: a mutex is fine here.
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracer_callsite **sites;	/* NULL: unloaded */
static size_t count, cap, sent;
static uint32_t next_id = 1;
static uint32_t enabled;

/* The value of `enabled` for cs when recording is on or off. */
static uint32_t enable_value(const struct tracer_callsite *cs, uint32_t on)
{
	uint32_t i;

	if (!on)
		return 0;
	for (i = 0; i < cs->nargs; i++)
		if (cs->types[i] == TRACER_ARG_STRING ||
		    cs->types[i] == TRACER_ARG_LDOUBLE)
			return TRACER__CS_ON;
	return TRACER__CS_ON | TRACER__CS_FIXED;
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 256;
	struct tracer_callsite **n = realloc(sites, ncap * sizeof(*n));

	if (!n)
		return -1;
	sites = n;
	cap = ncap;
	return 0;
}

/* Each translation unit of a module registers the same section: once. */
static struct tracer_callsite *modules[256];
static size_t nmodules;

static bool module_known(const struct tracer_callsite *begin)
{
	size_t i;

	for (i = 0; i < nmodules; i++)
		if (modules[i] == begin)
			return true;
	if (nmodules < TRACER_ARRAY_SIZE(modules))
		modules[nmodules++] = (struct tracer_callsite *)begin;
	return false;
}

static void module_forget(const struct tracer_callsite *begin)
{
	size_t i;

	for (i = 0; i < nmodules; i++)
		if (modules[i] == begin)
			modules[i] = modules[--nmodules];
}

void tracer_register_callsites(struct tracer_callsite *begin,
			       struct tracer_callsite *end)
{
	struct tracer_callsite *cs;

	pthread_mutex_lock(&lock);
	for (cs = module_known(begin) ? end : begin; cs && cs < end; cs++) {
		if (cs->abi != TRACER_CALLSITE_ABI ||
		    cs->nargs > TRACER_MAX_ARGS || cs->id != 0)
			continue;
		if (count == cap && grow())
			break;
		cs->id = next_id++;
		sites[count++] = cs;
		__atomic_store_n(&cs->enabled, enable_value(cs, enabled),
				 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	tracer__client_sync_callsites();
}

void tracer_unregister_callsites(struct tracer_callsite *begin,
				 struct tracer_callsite *end)
{
	size_t i;

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
}

void tracer__callsites_lock(void)
{
	pthread_mutex_lock(&lock);
}

void tracer__callsites_unlock(void)
{
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

void tracer__callsites_enable(uint32_t on)
{
	size_t i;

	pthread_mutex_lock(&lock);
	enabled = on;
	for (i = 0; i < count; i++)
		if (sites[i])
			__atomic_store_n(&sites[i]->enabled,
					 enable_value(sites[i], on),
					 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}
