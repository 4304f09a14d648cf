/*
 * wrap_pthread.c - threads, mutexes and condition variables, recorded as
 * pthread:* events (wrap.h explains the wrappers):
 *
 *   pthread:create          thread 0x7f3a1bfff6c0 tid 4243 start 0x55d0c1a2b3c0 result 0
 *   pthread:start           thread 0x7f3a1bfff6c0 start 0x55d0c1a2b3c0
 *                                                         (in the new thread)
 *   pthread:exit            retval 0x2a                   (return or pthread_exit)
 *   pthread:setname         thread 0x7f3a1bfff6c0 name worker result 0
 *   pthread:mutex_wait      mutex 0x55d0c1a2e040 waited_ns 81234 result 0
 *   pthread:cond_wait_entry cond 0x55d0c1a2e080 mutex 0x55d0c1a2e040
 *   pthread:cond_wait_exit  cond 0x55d0c1a2e080 result 0
 *
 * Thread names. pthread_setname_np() records pthread:setname (the
 * pthread_t, as the program knows it), and both it and prctl(PR_SET_NAME)
 * record, when they succeed, the library's vital
 *
 *   tracer:thread_name      tid 4243 name worker
 *
 * with the kernel's id of the thread renamed and its new name (the 15
 * bytes the kernel keeps), which the readers use to name the thread from
 * then on. Like every tracer:* event it is recorded unless the filter
 * excludes it by name, whatever it says of pthread:*. The thread that
 * renames records it, for itself or for another thread; another thread's
 * id comes from pthread_getcpuclockid(): the kernel's id of a thread's
 * CPU-time clock is made of the thread's id ((~tid << 3) | 6, how glibc
 * and musl compute it), and no other interface gives it. A name written
 * to /proc/self/task/TID/comm, or set by a system call made without the
 * C library, is not seen here: tracer:thread_exit tells the name the
 * thread ends with.
 *
 * Threads. pthread:create names the new thread twice: the pthread_t the
 * program got, and the kernel's id (tid), the one the new thread's events
 * carry. The tid is known without waiting for the new thread: the C
 * library has the kernel write it into the thread's descriptor during
 * clone() (CLONE_PARENT_SETTID, glibc and musl), before pthread_create()
 * returns, and pthread_getcpuclockid() reads it from there (tid_of(),
 * below). It is read only for a thread created joinable, whose
 * descriptor stays until it is joined: that of one created detached may
 * be freed, even reused, by the time the creator reads it. A joinable
 * thread that ended before pthread_create() returned has its id cleared
 * there (the kernel clears it at the thread's end): the trampoline
 * (below) stored it for the creator. tid is 0 for a thread created
 * detached, for one that ended that early while pthread:start and
 * pthread:exit are both off (no trampoline), and when the call failed; the
 * new thread's pthread:start, whose tid its events carry, names its
 * pthread_t, which is where a reader joins the two then. (A thread that
 * detaches itself and ends before its creator returns from
 * pthread_create() leaves its descriptor in glibc's stack cache, where
 * the read finds it cleared; only a cache grown past its limit, 40 MiB
 * by default, at that very moment would have unmapped it.)
 *
 * While pthread:start or pthread:exit is on, pthread_create()
 * starts the new thread in a trampoline that records pthread:start, calls
 * the start routine and records pthread:exit with what it returned; its
 * argument block is allocated here and freed by whichever of the creator
 * and the new thread is done with it last (the guard raised: the
 * tracer's own allocations). pthread_exit() records
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
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "wrap.h"

/* ---- threads ----------------------------------------------------------- */

/*
 * The call sites of the new thread's events, used by the trampoline, by
 * pthread_exit() and by pthread_create() (to know whether to trampoline).
 */
static inline struct tracer_callsite *start_site(void)
{
	unsigned long id = 0;
	void *start = NULL;
	WRAP_SITE(cs, 0, "pthread:start", "thread %#lx start %p", id, start);

	return &cs;
}

static inline struct tracer_callsite *exit_site(void)
{
	void *retval = NULL;
	WRAP_SITE(cs, 0, "pthread:exit", "retval %p", retval);

	return &cs;
}

/*
 * The trampoline's argument block, shared by the creator and the new
 * thread: each drops its reference when done with it (an atomic
 * decrement, acquire-release: the other's accesses happen before the
 * free), and the last one frees it. The new thread stores its kernel id
 * first, for a creator that finds the thread ended already.
 */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	size_t stack_size;	/* AddressSanitizer builds only */
	int tid;		/* the new thread's, once it runs (atomic) */
	int refs;		/* 2: the creator's and the new thread's */
};

static void thread_start_put(struct thread_start *ts)
{
	if (__atomic_sub_fetch(&ts->refs, 1, __ATOMIC_ACQ_REL))
		return;
	WRAP_GUARD_ENTER();
	free(ts);
	WRAP_GUARD_EXIT();
}

static void *thread_run(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	void *ret;

	/* Before the thread can end (and the kernel clear its id in its
	 * descriptor): what new_tid() reads then. */
	__atomic_store_n(&((struct thread_start *)p)->tid,
			 (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	thread_start_put(p);
	if (WRAP_ON(*start_site()))
		WRAP_EMIT(*start_site(), (unsigned long)pthread_self(),
			  (void *)ts.fn);
	ret = ts.fn(ts.arg);
	if (WRAP_ON(*exit_site()))
		WRAP_EMIT(*exit_site(), ret);
	return ret;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TRACER_ASAN)
#include <sanitizer/asan_interface.h>

/*
 * AddressSanitizer builds. When the sanitizer's pthread_create is the
 * outer wrapper (the sanitizer's runtime is loaded before libtracer, as
 * in every sanitizer build of a program), this trampoline runs before the
 * sanitizer has set the new thread up and cleared its stack's shadow. In a
 * forked child, glibc reuses the stacks of the parent's other threads, and
 * their shadow still holds the redzones of the frames they were in at the
 * fork: thread_run()'s writes to its own locals were reported as
 * stack-buffer-overflows (test_fork, once in a few hundred runs). So this
 * frame, not instrumented, clears the shadow of the stack below it (its
 * size known from pthread_create's attributes; the lowest 64 KiB left
 * alone, so that a guard page or the stack below is never touched).
 */
#define STACK_MARGIN	(64 * 1024)

static size_t stack_size_of(const pthread_attr_t *attr)
{
	pthread_attr_t def;
	size_t size = 0;

	if (attr)
		return pthread_attr_getstacksize(attr, &size) ? 0 : size;
	if (pthread_getattr_default_np(&def))
		return 0;
	if (pthread_attr_getstacksize(&def, &size))
		size = 0;
	pthread_attr_destroy(&def);
	return size;
}

__attribute__((no_sanitize_address, noinline))
static void *thread_trampoline(void *p)
{
	uintptr_t top = (uintptr_t)__builtin_frame_address(0);
	size_t size = ((struct thread_start *)p)->stack_size;

	if (size > 2 * STACK_MARGIN && top > size)
		__asan_unpoison_memory_region((void *)(top - size +
						       STACK_MARGIN),
					      size - STACK_MARGIN);
	return thread_run(p);
}
#else
static inline size_t stack_size_of(const pthread_attr_t *attr)
{
	(void)attr;
	return 0;
}

static void *thread_trampoline(void *p)
{
	return thread_run(p);
}
#endif

static pid_t tid_of(pthread_t th);

/*
 * The kernel's id of the thread pthread_create() just started as th
 * (attr: its attributes, NULL for the default; ts: its trampoline's
 * block, or NULL), or 0 when it must not be read: a thread created
 * detached. One that ended already has its id cleared in its descriptor;
 * its trampoline stored it before (thread_run()).
 */
static int new_tid(pthread_t th, const pthread_attr_t *attr,
		   const struct thread_start *ts)
{
	int detach = PTHREAD_CREATE_JOINABLE, tid;

	if (attr && (pthread_attr_getdetachstate(attr, &detach) ||
		     detach != PTHREAD_CREATE_JOINABLE))
		return 0;
	tid = (int)tid_of(th);
	if (tid || !ts)
		return tid;
	/* The id read as cleared before the trampoline's store is read. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&ts->tid, __ATOMIC_ACQUIRE);
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
	int ret = 0, tid = 0;
	WRAP_SITE(cs, 0, "pthread:create",
		  "thread %#lx tid %d start %p result %d", id, tid, start, ret);

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
		ts->stack_size = stack_size_of(attr);
		ts->tid = 0;
		ts->refs = 2;
		ret = WRAP_REAL(pthread_create)(th, attr, thread_trampoline,
						ts);
		if (ret)
			ts->refs = 1;	/* no thread to share it with */
	} else {
		ret = WRAP_REAL(pthread_create)(th, attr, fn, arg);
	}
	if (WRAP_ON(cs)) {
		id = ret ? 0 : (unsigned long)*th;
		tid = ret ? 0 : new_tid(*th, attr, ts);
		WRAP_EMIT(cs, id, tid, start, ret);
	}
	if (ts)
		thread_start_put(ts);
	return ret;
}

/*
 * noreturn: the call unwinds this frame without returning, and so told,
 * AddressSanitizer clears the poison of the frames it leaves (else the
 * thread's exit handlers, running deeper on the same stack, trip on the
 * redzones of WRAP_EMIT's arguments here).
 */
typedef void (*pthread_exit_fn)(void *) __attribute__((noreturn));

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

/* ---- thread names ------------------------------------------------------- */

static inline struct tracer_callsite *name_site(void)
{
	const char *name = NULL;
	int tid = 0;
	WRAP_SITE(cs, 1, "tracer:thread_name", "tid %d name %s", tid, name);

	return &cs;
}

/* Thread tid is called name from now on (the kernel keeps 15 bytes). */
static void record_name(pid_t tid, const char *name)
{
	size_t n = strnlen(name, 15);
	char comm[16];
	int id = (int)tid;

	memcpy(comm, name, n);
	comm[n] = '\0';
	WRAP_EMIT(*name_site(), id, (const char *)comm);
}

/*
 * The kernel's id of thread th, or 0 when it cannot be known: from the id
 * of its CPU-time clock, ~(clock >> 3) when the low bits say "a thread's
 * scheduler clock" (6).
 */
static pid_t tid_of(pthread_t th)
{
	clockid_t clock;

	if (pthread_equal(th, pthread_self()))
		return (pid_t)syscall(SYS_gettid);
	if (pthread_getcpuclockid(th, &clock) || (clock & 7) != 6)
		return 0;
	return (pid_t)~(clock >> 3);
}

WRAP_DEFINE_REAL(int, pthread_setname_np, (pthread_t th, const char *name),
		 (th, name))

WRAP_API int pthread_setname_np(pthread_t th, const char *name)
{
	unsigned long id = (unsigned long)th;
	pid_t tid = 0;
	int ret = 0;
	WRAP_SITE(cs, 0, "pthread:setname", "thread %#lx name %s result %d",
		  id, name, ret);

	if (tracer_likely(!WRAP_ON2(cs, *name_site())))
		return WRAP_REAL(pthread_setname_np)(th, name);
	/* Before the call: th is alive (an exited one fails). */
	if (WRAP_ON(*name_site()) && tracer__wrap_active())
		tid = tid_of(th);
	ret = WRAP_REAL(pthread_setname_np)(th, name);
	if (WRAP_ON(cs))
		WRAP_EMIT(cs, id, name, ret);
	if (ret == 0 && tid > 0)
		record_name(tid, name);
	return ret;
}

/*
 * prctl(): forwarded with the four values after the option, as the C
 * library's prctl() reads them, to the C library's (found when the
 * library is loaded: prctl_init; before that, the system call itself).
 * Only PR_SET_NAME is recorded (tracer:thread_name of the caller).
 */
typedef int (*prctl_fn)(int, ...);
static prctl_fn real_prctl;

static void __attribute__((constructor(103))) prctl_init(void)
{
	WRAP_GUARD_ENTER();	/* dlsym's allocations are the tracer's */
	__atomic_store_n(&real_prctl,
			 (prctl_fn)tracer__wrap_next("prctl"),
			 __ATOMIC_RELAXED);
	WRAP_GUARD_EXIT();
}

WRAP_API int prctl(int option, ...)
{
	prctl_fn fn = __atomic_load_n(&real_prctl, __ATOMIC_RELAXED);
	unsigned long a2, a3, a4, a5;
	va_list ap;
	int ret;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	ret = fn ? fn(option, a2, a3, a4, a5)
		 : (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (tracer_likely(option != PR_SET_NAME || !WRAP_ON(*name_site())) ||
	    ret != 0 || !tracer__wrap_active())
		return ret;
	record_name((pid_t)syscall(SYS_gettid), (const char *)a2);
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
	WRAP_SITE_QUIET(cs, 0, "pthread:mutex_lock", "mutex %p result %d",
			m, ret);

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
	WRAP_SITE_QUIET(cs, 0, "pthread:mutex_trylock", "mutex %p result %d",
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
	WRAP_SITE_QUIET(cs, 0, "pthread:mutex_unlock", "mutex %p result %d",
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
