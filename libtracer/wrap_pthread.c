/*
 * wrap_pthread.c - threads, mutexes and condition variables, recorded as
 * pthread:* events (wrap.h explains the wrappers):
 *
 *   pthread:create          thread 0x7f3a1bfff6c0 start 0x55d0c1a2b3c0 result 0
 *   pthread:start           start 0x55d0c1a2b3c0          (in the new thread)
 *   pthread:exit            retval 0x2a                   (return or pthread_exit)
 *   pthread:setname         thread 0x7f3a1bfff6c0 name worker result 0
 *   pthread:mutex_wait      mutex 0x55d0c1a2e040 waited_ns 81234 result 0
 *   pthread:cond_wait_entry cond 0x55d0c1a2e080 mutex 0x55d0c1a2e040
 *   pthread:cond_wait_exit  cond 0x55d0c1a2e080 result 0
 *
 * Threads. While pthread:start or pthread:exit is on, pthread_create()
 * starts the new thread in a trampoline that records pthread:start, calls
 * the start routine and records pthread:exit with what it returned; its
 * argument block is allocated here and freed by the new thread (the
 * guard raised: the tracer's own allocations). pthread_exit() records
 * pthread:exit too; a cancelled thread records none (tracer:thread_exit,
 * recorded for every thread that recorded, still ends it). Threads that
 * the library creates itself (the listener) are created with the guard
 * raised: neither trampolined nor recorded.
 *
 * Mutexes. By default only contention is recorded: pthread_mutex_lock()
 * tries the lock first, and only when it is taken (EBUSY) reads the
 * clock, waits in the real call and records pthread:mutex_wait with the
 * time it waited. Every call is recorded as pthread:mutex_lock,
 * pthread:mutex_trylock, pthread:mutex_unlock (mutex %p result %d) when
 * the filter names them: they are off by default (TRACER_DEFAULT_EVENTS),
 * a program takes uncontended locks far more often than it does anything
 * else. With both off, pthread_mutex_lock() is the forward and one branch.
 *
 * Condition variables. pthread_cond_wait(), pthread_cond_timedwait() and
 * pthread_cond_clockwait() record pthread:cond_wait_entry before the wait
 * and pthread:cond_wait_exit after it (result ETIMEDOUT when the time
 * ran out). The C library has two versions of the pthread_cond_*
 * functions (GLIBC_2.3.2, the current ones, and the GLIBC_2.2.5 ones of
 * the old layout); dlsym(RTLD_NEXT) returns the default version, the
 * current one, which is what programs linked since 2003 call (no dlvsym
 * needed); a program linked against the old version also calls these
 * unversioned wrappers, and would be given the current implementation.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "wrap.h"

/* ---- threads ----------------------------------------------------------- */

/*
 * The call sites of the new thread's events, used by the trampoline, by
 * pthread_exit() and by pthread_create() (to know whether to trampoline).
 */
static inline struct tracer_callsite *start_site(void)
{
	void *start = NULL;
	WRAP_SITE(cs, 0, "pthread:start", "start %p", start);

	return &cs;
}

static inline struct tracer_callsite *exit_site(void)
{
	void *retval = NULL;
	WRAP_SITE(cs, 0, "pthread:exit", "retval %p", retval);

	return &cs;
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_trampoline(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	void *ret;

	WRAP_GUARD_ENTER();
	free(p);
	WRAP_GUARD_EXIT();
	if (WRAP_ON(*start_site()))
		WRAP_EMIT(*start_site(), (void *)ts.fn);
	ret = ts.fn(ts.arg);
	if (WRAP_ON(*exit_site()))
		WRAP_EMIT(*exit_site(), ret);
	return ret;
}

WRAP_DEFINE_REAL(int, pthread_create, (pthread_t *th,
				       const pthread_attr_t *attr,
				       void *(*start)(void *), void *arg),
		 (th, attr, start, arg))

WRAP_API int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			    void *(*fn)(void *), void *arg)
{
	struct thread_start *ts = NULL;
	unsigned long id = 0;
	void *start = (void *)fn;
	int ret = 0;
	WRAP_SITE(cs, 0, "pthread:create", "thread %#lx start %p result %d",
		  id, start, ret);

	if (tracer_likely(!(WRAP_ON(cs) | WRAP_ON(*start_site()) |
			    WRAP_ON(*exit_site()))) || !tracer__wrap_active())
		return WRAP_REAL(pthread_create)(th, attr, fn, arg);
	if (WRAP_ON(*start_site()) | WRAP_ON(*exit_site())) {
		int saved = errno;

		WRAP_GUARD_ENTER();
		ts = malloc(sizeof(*ts));
		WRAP_GUARD_EXIT();
		errno = saved;
	}
	if (ts) {
		ts->fn = fn;
		ts->arg = arg;
		ret = WRAP_REAL(pthread_create)(th, attr, thread_trampoline,
						ts);
		if (ret) {
			WRAP_GUARD_ENTER();
			free(ts);
			WRAP_GUARD_EXIT();
		}
	} else {
		ret = WRAP_REAL(pthread_create)(th, attr, fn, arg);
	}
	if (WRAP_ON(cs)) {
		id = ret ? 0 : (unsigned long)*th;
		WRAP_EMIT(cs, id, start, ret);
	}
	return ret;
}

typedef void (*pthread_exit_fn)(void *);

WRAP_API void pthread_exit(void *retval)
{
	static pthread_exit_fn real;
	pthread_exit_fn fn = __atomic_load_n(&real, __ATOMIC_RELAXED);

	if (WRAP_ON(*exit_site()))
		WRAP_EMIT(*exit_site(), retval);
	if (!fn) {
		fn = (pthread_exit_fn)tracer__wrap_next("pthread_exit");
		__atomic_store_n(&real, fn, __ATOMIC_RELAXED);
	}
	fn(retval);
	__builtin_unreachable();
}

WRAP_DEFINE_REAL(int, pthread_setname_np, (pthread_t th, const char *name),
		 (th, name))

WRAP_API int pthread_setname_np(pthread_t th, const char *name)
{
	unsigned long id = (unsigned long)th;
	int ret = 0;
	WRAP_SITE(cs, 0, "pthread:setname", "thread %#lx name %s result %d",
		  id, name, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(pthread_setname_np)(th, name);
	ret = WRAP_REAL(pthread_setname_np)(th, name);
	WRAP_EMIT(cs, id, name, ret);
	return ret;
}

/* ---- mutexes ------------------------------------------------------------ */

WRAP_DEFINE_REAL(int, pthread_mutex_lock, (pthread_mutex_t *m), (m))
WRAP_DEFINE_REAL(int, pthread_mutex_trylock, (pthread_mutex_t *m), (m))
WRAP_DEFINE_REAL(int, pthread_mutex_unlock, (pthread_mutex_t *m), (m))

/*
 * Contention: the lock is taken (EBUSY from a try); wait for it in the
 * real call, timed. A try gives every kind of mutex the answer the lock
 * would (a recursive one's owner gets it again, an error-checking one's
 * owner EDEADLK from the real call, a robust one EOWNERDEAD).
 */
static int lock_timed(pthread_mutex_t *m, const struct tracer_callsite *wait)
{
	unsigned long long ns;
	uint64_t t0;
	int ret = WRAP_REAL(pthread_mutex_trylock)(m);

	if (ret != EBUSY)
		return ret;
	if (!WRAP_ON(*wait))
		return WRAP_REAL(pthread_mutex_lock)(m);
	t0 = tracer__clock_now();
	ret = WRAP_REAL(pthread_mutex_lock)(m);
	ns = tracer__clock_now() - t0;
	WRAP_EMIT(*wait, m, ns, ret);
	return ret;
}

WRAP_API int pthread_mutex_lock(pthread_mutex_t *m)
{
	unsigned long long ns = 0;
	int ret = 0;
	WRAP_SITE(wait, 0, "pthread:mutex_wait",
		  "mutex %p waited_ns %llu result %d", m, ns, ret);
	WRAP_SITE(cs, 0, "pthread:mutex_lock", "mutex %p result %d", m, ret);

	if (tracer_likely(!WRAP_ON2(wait, cs)))
		return WRAP_REAL(pthread_mutex_lock)(m);
	if (!tracer__wrap_active())	/* the tracer's own locks */
		return WRAP_REAL(pthread_mutex_lock)(m);
	ret = lock_timed(m, &wait);
	if (WRAP_ON(cs))
		WRAP_EMIT(cs, m, ret);
	return ret;
}

WRAP_API int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int ret = 0;
	WRAP_SITE(cs, 0, "pthread:mutex_trylock", "mutex %p result %d",
		  m, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(pthread_mutex_trylock)(m);
	ret = WRAP_REAL(pthread_mutex_trylock)(m);
	WRAP_EMIT(cs, m, ret);
	return ret;
}

WRAP_API int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int ret = 0;
	WRAP_SITE(cs, 0, "pthread:mutex_unlock", "mutex %p result %d",
		  m, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(pthread_mutex_unlock)(m);
	ret = WRAP_REAL(pthread_mutex_unlock)(m);
	WRAP_EMIT(cs, m, ret);
	return ret;
}

/* ---- condition variables ------------------------------------------------- */

/* COND_WAIT(call): the body of a wait, c and m in scope. */
#define COND_WAIT(call) \
	int ret = 0; \
	WRAP_SITE(in, 0, "pthread:cond_wait_entry", "cond %p mutex %p", c, m); \
	WRAP_SITE(out, 0, "pthread:cond_wait_exit", "cond %p result %d", \
		  c, ret); \
	if (tracer_likely(!WRAP_ON2(in, out))) \
		return call; \
	if (WRAP_ON(in)) \
		WRAP_EMIT(in, c, m); \
	ret = call; \
	if (WRAP_ON(out)) \
		WRAP_EMIT(out, c, ret); \
	return ret

WRAP_DEFINE_REAL(int, pthread_cond_wait, (pthread_cond_t *c,
					  pthread_mutex_t *m), (c, m))
WRAP_DEFINE_REAL(int, pthread_cond_timedwait, (pthread_cond_t *c,
					       pthread_mutex_t *m,
					       const struct timespec *t),
		 (c, m, t))
WRAP_DEFINE_REAL(int, pthread_cond_clockwait, (pthread_cond_t *c,
					       pthread_mutex_t *m,
					       clockid_t clock,
					       const struct timespec *t),
		 (c, m, clock, t))

WRAP_API int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	COND_WAIT(WRAP_REAL(pthread_cond_wait)(c, m));
}

WRAP_API int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				   const struct timespec *t)
{
	COND_WAIT(WRAP_REAL(pthread_cond_timedwait)(c, m, t));
}

WRAP_API int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				   clockid_t clock, const struct timespec *t)
{
	COND_WAIT(WRAP_REAL(pthread_cond_clockwait)(c, m, clock, t));
}
