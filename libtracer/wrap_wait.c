/*
 * wrap_wait.c - the C library's sleeping and waiting calls that the kernel
 * never restarts after a signal handler, made deaf to the update signal
 * (resume.h): each one that only libtracer's handling interrupted is
 * resumed with the time it has left, and the program sees the call it
 * made; its own signals interrupt it as they would untraced.
 *
 *   sleeping   nanosleep, clock_nanosleep, sleep, usleep, thrd_sleep
 *   signals    pause, sigsuspend, sigwaitinfo, sigtimedwait
 *   futexes    sem_timedwait, sem_clockwait
 *   System V   semop, semtimedop, msgrcv, msgsnd
 *
 * The sleeps record libc:nanosleep_entry/_exit and
 * libc:clock_nanosleep_entry/_exit, one pair around the whole resumed call
 * (the update signal stays invisible); the other calls here record no
 * event. sleep(), usleep() and thrd_sleep() call the C library's
 * nanosleep internally, where no wrapper sees it: they are made here of
 * the resuming nanosleep, with the C library's results (glibc 2.36:
 * sleep() returns the whole seconds not slept and leaves errno EINTR, or
 * 0 and errno as it was; usleep() is nanosleep()'s result), and record
 * its events.
 *
 * The calls the kernel restarts (the update signal has SA_RESTART) need
 * nothing: read, write, accept, connect, waitpid, sem_wait,
 * pthread_cond_wait and pthread_cond_timedwait (the C library retries its
 * own interrupted futex waits) ...
 */
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "resume.h"
#include "wrap.h"

/* ---- the next definitions ----------------------------------------------- */

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *,
				  struct timespec *);
typedef int (*pause_fn)(void);
typedef int (*sigsuspend_fn)(const sigset_t *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *,
			       const struct timespec *);
typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);
typedef int (*semop_fn)(int, struct sembuf *, size_t);
typedef int (*semtimedop_fn)(int, struct sembuf *, size_t,
			     const struct timespec *);
typedef ssize_t (*msgrcv_fn)(int, void *, size_t, long, int);
typedef int (*msgsnd_fn)(int, const void *, size_t, int);

static nanosleep_fn real_nanosleep;
static clock_nanosleep_fn real_clock_nanosleep;
static pause_fn real_pause;
static sigsuspend_fn real_sigsuspend;
static sigwaitinfo_fn real_sigwaitinfo;
static sigtimedwait_fn real_sigtimedwait;
static sem_timedwait_fn real_sem_timedwait;
static sem_clockwait_fn real_sem_clockwait;
static semop_fn real_semop;
static semtimedop_fn real_semtimedop;
static msgrcv_fn real_msgrcv;
static msgsnd_fn real_msgsnd;

/*
 * REAL(name): the C library's name, looked up when the library is loaded
 * (these are async-signal-safe: a handler must not call dlsym); a call
 * before that (an earlier constructor) looks it up on the way. A function
 * an older C library lacks (sem_clockwait) stays NULL until a program
 * calls it, which it cannot do without that C library having it.
 */
#define REAL(name) ({ \
	__typeof__(real_##name) f_ = \
		__atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
	if (tracer_unlikely(!f_)) { \
		f_ = (__typeof__(f_))tracer__wrap_next(#name); \
		__atomic_store_n(&real_##name, f_, __ATOMIC_RELAXED); \
	} \
	f_; \
})

#define LOOKUP(name) __atomic_store_n(&real_##name, \
	(__typeof__(real_##name))tracer__next(#name), __ATOMIC_RELAXED)

static void __attribute__((constructor(101))) wait_resolve(void)
{
	LOOKUP(nanosleep);
	LOOKUP(clock_nanosleep);
	LOOKUP(pause);
	LOOKUP(sigsuspend);
	LOOKUP(sigwaitinfo);
	LOOKUP(sigtimedwait);
	LOOKUP(sem_timedwait);
	LOOKUP(sem_clockwait);
	LOOKUP(semop);
	LOOKUP(semtimedop);
	LOOKUP(msgrcv);
	LOOKUP(msgsnd);
}

/* ---- sleeping ------------------------------------------------------------ */

/* A time in nanoseconds (-1 for none, saturated past 292 years either
 * way: an invalid negative time is recorded as it is, if it fits). */
static long long ts_ns(const struct timespec *t)
{
	if (!t)
		return -1;
	if (t->tv_sec >= (time_t)(LLONG_MAX / TRACER__NS))
		return LLONG_MAX;
	if (t->tv_sec <= -(time_t)(LLONG_MAX / TRACER__NS))
		return -LLONG_MAX;
	return (long long)t->tv_sec * TRACER__NS + t->tv_nsec;
}

/*
 * nanosleep(req, left), resumed with the time the kernel says is left;
 * *left is the kernel's answer when it failed with EINTR.
 */
static int sleep_loop(const struct timespec *req, struct timespec *left)
{
	struct tracer__resume r;
	struct timespec next;
	int ret;

	tracer__resume_begin(&r);
	while ((ret = REAL(nanosleep)(req, left)) < 0 &&
	       tracer__resume_again(&r, errno)) {
		next = *left;
		req = &next;
	}
	return ret;
}

/*
 * nanosleep(req, rem), resumed. rem is written only when the call fails
 * with EINTR, as the kernel would. Records one libc:nanosleep_entry /
 * _exit pair around the whole resumed call (sleep(), usleep() and
 * thrd_sleep() too: they are this call).
 */
static int sleep_ns(const struct timespec *req, struct timespec *rem)
{
	int64_t en = 0;
	struct timespec left = { 0, 0 };
	long long ns = 0, left_ns = 0;
	int ret = 0;
	WRAP_SITE(in, 0, "libc:nanosleep_entry", "request_ns %lld", ns);
	WRAP_SITE_E(out, 0, "libc:nanosleep_exit",
		    "result %d remaining_ns %lld", ret, left_ns);

	if (tracer_likely(!WRAP_ON2(in, out))) {
		ret = sleep_loop(req, &left);
	} else {
		if (WRAP_ON(in)) {
			ns = ts_ns(req);
			WRAP_EMIT(in, ns);
		}
		ret = sleep_loop(req, &left);
		if (WRAP_ON(out)) {
			en = WRAP_ERRNO(ret < 0);
			left_ns = ret < 0 && errno == EINTR ? ts_ns(&left) : 0;
			WRAP_EMIT_E(out, en, ret, left_ns);
		}
	}
	if (ret < 0 && errno == EINTR && rem)
		*rem = left;
	return ret;
}

WRAP_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return sleep_ns(req, rem);
}

/* The resumed clock_nanosleep(): 0 or an error number (*left on EINTR). */
static int clock_sleep_loop(clockid_t clock, int flags,
			    const struct timespec *req, struct timespec *left)
{
	struct tracer__resume r;
	struct timespec next;
	int ret;

	tracer__resume_begin(&r);
	while ((ret = REAL(clock_nanosleep)(clock, flags, req, left)) != 0 &&
	       tracer__resume_again(&r, ret)) {
		if (!(flags & TIMER_ABSTIME)) {
			next = *left;
			req = &next;
		}
	}
	return ret;
}

/*
 * Returns 0 or an error number, and leaves errno alone. A relative sleep
 * resumes with the time left, an absolute one with the same deadline.
 * libc:clock_nanosleep_entry: the clock, the flags (TIMER_ABSTIME 0x1)
 * and the request (a time on that clock when absolute); _exit: the error
 * number returned, the time left when interrupted (relative sleeps), and
 * its name.
 */
WRAP_API int clock_nanosleep(clockid_t clock, int flags,
			     const struct timespec *req, struct timespec *rem)
{
	int64_t en = 0;
	struct timespec left = { 0, 0 };
	long long ns = 0, left_ns = 0;
	int ret = 0, id = (int)clock;
	WRAP_SITE(in, 0, "libc:clock_nanosleep_entry",
		  "clock %d flags %#x request_ns %lld", id, flags, ns);
	WRAP_SITE_E(out, 0, "libc:clock_nanosleep_exit",
		    "clock %d result %d remaining_ns %lld", id, ret, left_ns);

	if (tracer_likely(!WRAP_ON2(in, out))) {
		ret = clock_sleep_loop(clock, flags, req, &left);
	} else {
		if (WRAP_ON(in)) {
			ns = ts_ns(req);
			WRAP_EMIT(in, id, flags, ns);
		}
		ret = clock_sleep_loop(clock, flags, req, &left);
		if (WRAP_ON(out)) {
			en = (ret != 0) ? (int64_t)ret : 0;
			left_ns = ret == EINTR && !(flags & TIMER_ABSTIME) ?
				  ts_ns(&left) : 0;
			WRAP_EMIT_E(out, en, id, ret, left_ns);
		}
	}
	if (ret == EINTR && rem && !(flags & TIMER_ABSTIME))
		*rem = left;
	return ret;
}

_Static_assert(sizeof(time_t) > sizeof(unsigned),
	       "sleep(): every number of seconds fits in a time_t");

WRAP_API unsigned sleep(unsigned seconds)
{
	int saved = errno;
	struct timespec t = { (time_t)seconds, 0 };

	if (sleep_ns(&t, &t) < 0)
		return (unsigned)t.tv_sec;	/* errno is EINTR */
	errno = saved;
	return 0;
}

WRAP_API int usleep(useconds_t us)
{
	struct timespec t = { (time_t)(us / 1000000),
			      (long)(us % 1000000) * 1000 };

	return sleep_ns(&t, NULL);
}

/* C11: 0, -1 when a signal interrupted it (rem then written), or -2. */
WRAP_API int thrd_sleep(const struct timespec *req, struct timespec *rem)
{
	int saved = errno;
	int ret = sleep_ns(req, rem);

	if (ret == 0)
		return 0;
	ret = errno == EINTR ? -1 : -2;
	errno = saved;
	return ret;
}

/* ---- waiting for a signal ------------------------------------------------ */

WRAP_API int pause(void)
{
	int ret;

	TRACER__RESUMING(ret, REAL(pause)());
	return ret;
}

WRAP_API int sigsuspend(const sigset_t *mask)
{
	int ret;

	TRACER__RESUMING(ret, REAL(sigsuspend)(mask));
	return ret;
}

WRAP_API int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	int ret;

	TRACER__RESUMING(ret, REAL(sigwaitinfo)(set, info));
	return ret;
}

WRAP_API int sigtimedwait(const sigset_t *set, siginfo_t *info,
			  const struct timespec *t)
{
	int ret;

	TRACER__RESUMING_TS(ret, REAL(sigtimedwait)(set, info, t), t);
	return ret;
}

/* ---- semaphores and message queues --------------------------------------- */

/* Absolute deadlines: passed again as they are. */
WRAP_API int sem_timedwait(sem_t *sem, const struct timespec *abs)
{
	int ret;

	TRACER__RESUMING(ret, REAL(sem_timedwait)(sem, abs));
	return ret;
}

WRAP_API int sem_clockwait(sem_t *sem, clockid_t clock,
			   const struct timespec *abs)
{
	int ret;

	TRACER__RESUMING(ret, REAL(sem_clockwait)(sem, clock, abs));
	return ret;
}

/* An operation that failed did nothing: it is made again whole. */
WRAP_API int semop(int id, struct sembuf *ops, size_t n)
{
	int ret;

	TRACER__RESUMING(ret, REAL(semop)(id, ops, n));
	return ret;
}

WRAP_API int semtimedop(int id, struct sembuf *ops, size_t n,
			const struct timespec *t)
{
	int ret;

	TRACER__RESUMING_TS(ret, REAL(semtimedop)(id, ops, n, t), t);
	return ret;
}

WRAP_API ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
	ssize_t ret;

	TRACER__RESUMING(ret, REAL(msgrcv)(id, msg, size, type, flags));
	return ret;
}

WRAP_API int msgsnd(int id, const void *msg, size_t size, int flags)
{
	int ret;

	TRACER__RESUMING(ret, REAL(msgsnd)(id, msg, size, flags));
	return ret;
}
