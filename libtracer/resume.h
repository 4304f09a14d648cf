/*
 * resume.h - blocking calls that the update signal does not cut short (not
 * installed).
 *
 * The update signal (signal.c) is installed with SA_RESTART, so the kernel
 * restarts after it the calls it can restart (read, write, accept,
 * connect, wait4, futex waits without a timeout: sem_wait,
 * pthread_cond_wait ...). The others fail with EINTR as soon as any
 * handler ran, whichever it was: poll, select, epoll_wait, nanosleep,
 * pause, sigsuspend, sigtimedwait, timed futex waits (sem_timedwait),
 * System V IPC. The wrappers of those resume a call that only libtracer's
 * own handling interrupted, with the time it has left, so that the
 * program sees the call it made:
 *
 *   struct tracer__resume r;
 *
 *   tracer__resume_begin(&r);                   (errno, two TLS loads)
 *   while ((ret = real(..., t)) < 0 && tracer__resume_again(&r, errno))
 *           t = the time left;
 *
 * Who interrupted. The signal trampoline counts, in each thread, the
 * signals it handled without the program (the update signal from tracerd;
 * a signal whose action the program set to SIG_IGN while it was on its
 * way), in tracer__intr.tracer, and the ones it passed to the program (its
 * handler, or its default action), in tracer__intr.program. A call that
 * failed with EINTR while the first count moved and the second did not
 * was interrupted by the tracer only: it is resumed. Any other EINTR is
 * the program's, returned as it is: one of its handlers ran (also when an
 * update signal arrived in the same call), or nothing libtracer saw
 * interrupted the call (a stop and SIGCONT, a handler installed before
 * libtracer was loaded).
 *
 * The time left. A relative timeout is turned into a deadline on
 * CLOCK_MONOTONIC before the first call (the only cost, for a call with a
 * positive timeout, on a path where no signal comes: a clock read in the
 * vDSO), and each resumed call waits until it, rounded up to the call's
 * unit so that it never returns early; a deadline already past resumes
 * the call with a zero timeout (it still reports what is ready). Absolute
 * timeouts (sem_timedwait, clock_nanosleep with TIMER_ABSTIME) are passed
 * again as they are; nanosleep's own remaining time is the kernel's.
 *
 * Async-signal-safe: a handler of the program may call these wrappers.
 */
#ifndef TRACER_LIBTRACER_RESUME_H
#define TRACER_LIBTRACER_RESUME_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <time.h>

#include "compiler.h"

/* Signals the trampoline handled in this thread (signal.c). */
struct tracer__intr {
	unsigned tracer;	/* without the program */
	unsigned program;	/* the program's handler or default action */
};

extern __thread struct tracer__intr tracer__intr
	__attribute__((tls_model("initial-exec"))) TRACER_HIDDEN;

/* One call's view of the counts, and the errno it was called with. */
struct tracer__resume {
	unsigned tracer;
	unsigned program;
	int err;
};

/*
 * The counts only change in this thread's own signal handlers: relaxed
 * loads, and a compiler-only fence that keeps them on their side of the
 * call they frame (the call itself is opaque to the compiler as well).
 */
static inline void tracer__resume_load(unsigned *tracer, unsigned *program)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*tracer = __atomic_load_n(&tracer__intr.tracer, __ATOMIC_RELAXED);
	*program = __atomic_load_n(&tracer__intr.program, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void tracer__resume_begin(struct tracer__resume *r)
{
	r->err = errno;
	tracer__resume_load(&r->tracer, &r->program);
}

/*
 * The call failed with error err (errno, or the value a clock_nanosleep
 * returned): call it again? True when err is EINTR and only the tracer's
 * signals ran since the call began or was last resumed; errno is then
 * back to the value it had before the call.
 */
static inline bool tracer__resume_again(struct tracer__resume *r, int err)
{
	unsigned tracer, program;

	if (tracer_likely(err != EINTR))
		return false;
	tracer__resume_load(&tracer, &program);
	if (program != r->program || tracer == r->tracer)
		return false;
	r->tracer = tracer;	/* a next EINTR needs a signal of its own */
	errno = r->err;
	return true;
}

/* ---- deadlines ---------------------------------------------------------- */

#define TRACER__NS	1000000000L

/* Past this many seconds (34,000 years) a timeout is kept as it is: a
 * deadline that far needs no precision, and now + it could overflow. */
#define TRACER__FOREVER	((time_t)1 << 40)

/* Is t a timeout that waits (valid, not zero)? NULL waits for ever, an
 * invalid one fails with EINVAL, zero does not wait: no deadline. */
static inline bool tracer__timeout_positive(const struct timespec *t)
{
	return t && t->tv_sec >= 0 && t->tv_nsec >= 0 &&
	       t->tv_nsec < TRACER__NS && (t->tv_sec > 0 || t->tv_nsec > 0);
}

/* *d = CLOCK_MONOTONIC now + t (a valid relative timeout). */
static inline void tracer__deadline_after(struct timespec *d,
					  const struct timespec *t)
{
	if (t->tv_sec >= TRACER__FOREVER) {
		*d = *t;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, d);
	d->tv_sec += t->tv_sec;
	d->tv_nsec += t->tv_nsec;
	if (d->tv_nsec >= TRACER__NS) {
		d->tv_sec++;
		d->tv_nsec -= TRACER__NS;
	}
}

static inline void tracer__deadline_after_ms(struct timespec *d, int ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	tracer__deadline_after(d, &t);
}

/* The time from now until deadline d (zero when it is past). */
static inline struct timespec tracer__deadline_left(const struct timespec *d)
{
	struct timespec now, left = { 0, 0 };

	if (d->tv_sec >= TRACER__FOREVER)
		return *d;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > d->tv_sec ||
	    (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec))
		return left;
	left.tv_sec = d->tv_sec - now.tv_sec;
	left.tv_nsec = d->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += TRACER__NS;
	}
	return left;
}

/* The same in milliseconds, rounded up (a poll() timeout). */
static inline int tracer__deadline_left_ms(const struct timespec *d)
{
	struct timespec l = tracer__deadline_left(d);
	long long ms = (long long)l.tv_sec * 1000 +
		       (l.tv_nsec + 999999) / 1000000;

	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ---- the loops ---------------------------------------------------------- */

/*
 * TRACER__RESUMING(ret, call): ret = call, made again while it fails with
 * EINTR that only the tracer caused (a call that returns -1 and sets
 * errno; the arguments are the same each time).
 */
#define TRACER__RESUMING(ret, call) do { \
	struct tracer__resume r_; \
	tracer__resume_begin(&r_); \
	while (((ret) = (call)) < 0 && tracer__resume_again(&r_, errno)) \
		; \
} while (0)

/*
 * TRACER__RESUMING_MS(ret, call, ms): the same for a call whose timeout is
 * the int variable ms, in milliseconds (< 0: for ever), set to the time
 * left before each new call.
 */
#define TRACER__RESUMING_MS(ret, call, ms) do { \
	struct tracer__resume r_; \
	struct timespec d_ = { 0, 0 }; \
	tracer__resume_begin(&r_); \
	if ((ms) > 0) \
		tracer__deadline_after_ms(&d_, (ms)); \
	while (((ret) = (call)) < 0 && tracer__resume_again(&r_, errno)) \
		if ((ms) > 0) \
			(ms) = tracer__deadline_left_ms(&d_); \
} while (0)

/*
 * TRACER__RESUMING_TS(ret, call, t): the same for a call whose timeout is
 * the relative timespec pointer variable t (NULL: for ever), pointed to
 * the time left before each new call.
 */
#define TRACER__RESUMING_TS(ret, call, t) do { \
	struct tracer__resume r_; \
	struct timespec d_ = { 0, 0 }, left_; \
	bool timed_ = tracer__timeout_positive(t); \
	tracer__resume_begin(&r_); \
	if (timed_) \
		tracer__deadline_after(&d_, (t)); \
	while (((ret) = (call)) < 0 && tracer__resume_again(&r_, errno)) { \
		if (timed_) { \
			left_ = tracer__deadline_left(&d_); \
			(t) = &left_; \
		} \
	} \
} while (0)

#endif /* TRACER_LIBTRACER_RESUME_H */
