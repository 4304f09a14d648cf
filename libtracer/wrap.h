/*
 * wrap.h - the C library wrappers' shared machinery (not installed).
 *
 * libtracer exports open(), read(), malloc(), pthread_create(), ... so
 * that a program run with LD_PRELOAD=libtracer.so (or linked with
 * -ltracer) calls them instead of the C library's; each forwards to the
 * next definition (dlsym(RTLD_NEXT)) and records what the call did.
 *
 * Cost: a wrapper whose events are off costs one load and one branch
 * beyond the call it forwards:
 *
 *   ssize_t read(int fd, void *buf, size_t n)
 *   {
 *           ...
 *           WRAP_SITE(entry, ...);  WRAP_SITE(exit, ...);   (static data)
 *           if (!WRAP_ON2(entry, exit))                     (the branch)
 *                   return WRAP_REAL(read)(fd, buf, n);     (a tail call)
 *           ... record entry, call, record exit ...
 *   }
 *
 * The pointer to the next definition starts as a resolver of the same
 * signature (WRAP_DEFINE_REAL): the first call looks the function up,
 * stores the answer, and forwards; no "resolved yet?" test on the way.
 *
 * Recursion: the tracer itself calls wrapped functions (malloc, read,
 * poll, pthread_mutex_lock, mmap ...). A thread-local
 * guard (tracer__wrap_guard) is raised while a wrapper's event takes the
 * slow path (the event path's fast path calls nothing), while the library
 * runs its own code in a program thread, and for ever in the listener
 * thread; a wrapper called with the guard raised forwards and records
 * nothing. A signal handler that interrupts such a slow path sees the
 * guard too and records no libc event of its own (its tracer_record()
 * events are recorded as always); one that interrupts the fast path
 * records as any handler does, nested in the ring (rb_write.h).
 *
 * Every wrapper preserves errno: the value the real call left is the one
 * the program sees (tracer_record_emit() leaves errno as it found it: its
 * fast path makes no call that sets it, and its slow path restores it).
 */
#ifndef TRACER_LIBTRACER_WRAP_H
#define TRACER_LIBTRACER_WRAP_H

#include <errno.h>
#include <stdint.h>

#include "internal.h"

/* Raised (nonzero) while the thread must not record libc events. */
extern __thread unsigned tracer__wrap_guard
	__attribute__((tls_model("initial-exec"))) TRACER_HIDDEN;

#define WRAP_GUARD_ENTER()	(tracer__wrap_guard++)
#define WRAP_GUARD_EXIT()	(tracer__wrap_guard--)

/*
 * Raised while an allocator wrapper records (wrap_mem.c): the C library
 * calls malloc() and free() through the PLT with its own locks held (the
 * thread stack cache's in pthread_join(), the TLS lock in dlopen()), so
 * the slow path of such an event must not start a thread (client.c).
 */
extern __thread unsigned tracer__wrap_alloc
	__attribute__((tls_model("initial-exec"))) TRACER_HIDDEN;

/* Exported wrapper: default visibility in a -fvisibility=hidden build. */
#define WRAP_API	TRACER_API

/*
 * WRAP_SITE(var, vital, name, format, args...): a call site of the
 * library's own, declared where the argument variables are in scope (their
 * types give the type letters; their values are not read here). The
 * format is checked against them like printf's.
 */
#define WRAP__N(...)	TRACER__NARGS(_, ##__VA_ARGS__)
#define WRAP__T0()
#define WRAP__T1(a)	TRACER__T(a)
#define WRAP__T2(a, b)	WRAP__T1(a), TRACER__T(b)
#define WRAP__T3(a, b, c)	WRAP__T2(a, b), TRACER__T(c)
#define WRAP__T4(a, b, c, d)	WRAP__T3(a, b, c), TRACER__T(d)
#define WRAP__T5(a, b, c, d, e)	WRAP__T4(a, b, c, d), TRACER__T(e)
#define WRAP__T6(a, b, c, d, e, f)	WRAP__T5(a, b, c, d, e), TRACER__T(f)
#define WRAP__T7(a, b, c, d, e, f, g) \
	WRAP__T6(a, b, c, d, e, f), TRACER__T(g)
#define WRAP__T8(a, b, c, d, e, f, g, h) \
	WRAP__T7(a, b, c, d, e, f, g), TRACER__T(h)
#define WRAP__A0()	{ 0 }
#define WRAP__A1(a)	TRACER__A(a)
#define WRAP__A2(a, b)	WRAP__A1(a), TRACER__A(b)
#define WRAP__A3(a, b, c)	WRAP__A2(a, b), TRACER__A(c)
#define WRAP__A4(a, b, c, d)	WRAP__A3(a, b, c), TRACER__A(d)
#define WRAP__A5(a, b, c, d, e)	WRAP__A4(a, b, c, d), TRACER__A(e)
#define WRAP__A6(a, b, c, d, e, f)	WRAP__A5(a, b, c, d, e), TRACER__A(f)
#define WRAP__A7(a, b, c, d, e, f, g) \
	WRAP__A6(a, b, c, d, e, f), TRACER__A(g)
#define WRAP__A8(a, b, c, d, e, f, g, h) \
	WRAP__A7(a, b, c, d, e, f, g), TRACER__A(h)

#define WRAP_SITE(var, vital_, name_, fmt_, ...) \
	static struct tracer_callsite var TRACER__SECTION = TRACER__CS_INIT( \
		vital_, "" name_ "", "" fmt_ "", WRAP__N(__VA_ARGS__), \
		TRACER__CAT(WRAP__T, WRAP__N(__VA_ARGS__))(__VA_ARGS__)); \
	if (0) \
		tracer__check_format(fmt_, ##__VA_ARGS__)

/*
 * A call site the default filter leaves off (TRACER_DEFAULT_EVENTS: the
 * allocator's and the mutexes', called too often to record unasked): its
 * address also goes into the section tracer_quiet, so that a process
 * waiting for a session puts the default in force without matching a
 * name (tracer__callsites_default(); TRACER_VERBOSE checks the two agree).
 */
#define WRAP_SITE_QUIET(var, vital_, name_, fmt_, ...) \
	WRAP_SITE(var, vital_, name_, fmt_, ##__VA_ARGS__); \
	static struct tracer_callsite *const var##_quiet \
		__attribute__((section("tracer_quiet"), used)) = &var

/*
 * The same for an event whose last value is the errno of the call
 * (TRACER_ARG_ERRNO, after the values fmt_ reads: at most
 * TRACER_MAX_ARGS - 1 of them), recorded by WRAP_EMIT_E.
 */
#define WRAP__TE0()	TRACER_ARG_ERRNO
#define WRAP__TE1(...)	WRAP__T1(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE2(...)	WRAP__T2(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE3(...)	WRAP__T3(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE4(...)	WRAP__T4(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE5(...)	WRAP__T5(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE6(...)	WRAP__T6(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP__TE7(...)	WRAP__T7(__VA_ARGS__), TRACER_ARG_ERRNO
#define WRAP_SITE_E(var, vital_, name_, fmt_, ...) \
	static struct tracer_callsite var TRACER__SECTION = TRACER__CS_INIT( \
		vital_, "" name_ "", "" fmt_ "", WRAP__N(__VA_ARGS__) + 1, \
		TRACER__CAT(WRAP__TE, WRAP__N(__VA_ARGS__))(__VA_ARGS__)); \
	if (0) \
		tracer__check_format(fmt_, ##__VA_ARGS__)

#define WRAP_SITE_QUIET_E(var, vital_, name_, fmt_, ...) \
	WRAP_SITE_E(var, vital_, name_, fmt_, ##__VA_ARGS__); \
	static struct tracer_callsite *const var##_quiet \
		__attribute__((section("tracer_quiet"), used)) = &var

/* Is call site var on? (one relaxed load: the table decides later) */
#define WRAP_ON(var)	__atomic_load_n(&(var).enabled, __ATOMIC_RELAXED)
/* Either of two: still one branch. */
#define WRAP_ON2(a, b)	(WRAP_ON(a) | WRAP_ON(b))

/* The values of an event, as its entry takes them: the array `name`. */
#define WRAP__ARGS(name, ...) \
	const union tracer_arg name[] = { \
		TRACER__CAT(WRAP__A, WRAP__N(__VA_ARGS__))(__VA_ARGS__) }

/* Record an event of call site var (already seen on) with these values,
 * through tracer__wrap_emitN(), the entry for that many values. */
#define WRAP_EMIT(var, ...) do { \
	WRAP__ARGS(wrap__args, ##__VA_ARGS__); \
	TRACER__CAT(tracer__wrap_emit, WRAP__N(__VA_ARGS__))(&(var), \
							 wrap__args); \
} while (0)

/* Record an event of a WRAP_SITE_E call site: the values, then err (the
 * errno the call failed with, 0 if it did not). */
#define WRAP__AE0()
#define WRAP__AE1(...)	WRAP__A1(__VA_ARGS__),
#define WRAP__AE2(...)	WRAP__A2(__VA_ARGS__),
#define WRAP__AE3(...)	WRAP__A3(__VA_ARGS__),
#define WRAP__AE4(...)	WRAP__A4(__VA_ARGS__),
#define WRAP__AE5(...)	WRAP__A5(__VA_ARGS__),
#define WRAP__AE6(...)	WRAP__A6(__VA_ARGS__),
#define WRAP__AE7(...)	WRAP__A7(__VA_ARGS__),
#define WRAP__INC0	1
#define WRAP__INC1	2
#define WRAP__INC2	3
#define WRAP__INC3	4
#define WRAP__INC4	5
#define WRAP__INC5	6
#define WRAP__INC6	7
#define WRAP__INC7	8
#define WRAP_EMIT_E(var, err, ...) do { \
	const union tracer_arg wrap__args[] = { \
		TRACER__CAT(WRAP__AE, WRAP__N(__VA_ARGS__))(__VA_ARGS__) \
		{ .i = (err) } }; \
	TRACER__CAT(tracer__wrap_emit, TRACER__CAT(WRAP__INC, \
		WRAP__N(__VA_ARGS__)))(&(var), wrap__args); \
} while (0)

/* WRAP_SITE + record when on: for the slow paths. */
#define WRAP_RECORD(vital_, name_, fmt_, ...) do { \
	WRAP_SITE(wrap__cs, vital_, name_, fmt_, ##__VA_ARGS__); \
	if (tracer_unlikely(WRAP_ON(wrap__cs))) \
		WRAP_EMIT(wrap__cs, ##__VA_ARGS__); \
} while (0)

/*
 * Record unless the guard is raised; raises it around the event's slow
 * path, keeps errno (tracer.c). The values of string arguments are
 * copied, so they may be on the stack. N: the call site's number of
 * values, as for tracer_record_emitN() (tracer.h). The allocators'
 * events inline the same (emit.h).
 */
#define WRAP__EMIT_DECL(n) \
	void tracer__wrap_emit##n(const struct tracer_callsite *cs, \
				  const union tracer_arg *args) \
		TRACER_HIDDEN;
TRACER__EACH_NARGS(WRAP__EMIT_DECL)

/* The guard is down: a wrapper's extra work (timing a wait ...) pays. */
static inline int tracer__wrap_active(void)
{
	return tracer__wrap_guard == 0;
}

/*
 * The next definition of name after libtracer's (dlsym(RTLD_NEXT)). A
 * function the C library must have: when it is missing the program is
 * told on stderr and aborted (a wrapper has nothing it could forward to).
 */
void *tracer__wrap_next(const char *name) TRACER_HIDDEN;
/*
 * The next definition of name after libtracer's, the one
 * dlsym(RTLD_NEXT, name) gives, mostly without calling it (next.c);
 * NULL when there is none. tracer__next_fast(): only what is answered
 * without dlsym() (NULL: ask it); it takes no lock and calls only
 * strcmp(), so a signal handler may use it.
 */
void *tracer__next(const char *name) TRACER_HIDDEN;
void *tracer__next_fast(const char *name) TRACER_HIDDEN;
/* syscall()'s next definition, looked up now (wrap_io.c). */
void tracer__wrap_syscall_init(void) TRACER_HIDDEN;

/*
 * WRAP_DEFINE_REAL(ret, name, (params), (args)): the pointer to the next
 * definition of name, WRAP_REAL(name), initially a resolver that looks it
 * up and forwards.
 */
#define WRAP_DEFINE_REAL(ret, name, params, args) \
	static ret wrap__resolve_##name params; \
	static ret (*wrap__real_##name) params = wrap__resolve_##name; \
	static ret wrap__resolve_##name params \
	{ \
		__typeof__(wrap__real_##name) fn = \
			(__typeof__(fn))tracer__wrap_next(#name); \
		__atomic_store_n(&wrap__real_##name, fn, __ATOMIC_RELAXED); \
		return fn args; \
	}

#define WRAP_REAL(name) \
	__atomic_load_n(&wrap__real_##name, __ATOMIC_RELAXED)

/*
 * The errno value of an event (TRACER_ARG_ERRNO): errno for a failed call
 * (ret < 0 or a NULL pointer), 0 for one that did not fail. Read right
 * after the call, before anything else may change errno.
 */
#define WRAP_ERRNO(failed)	((failed) ? (int64_t)errno : (int64_t)0)

/* A socket address as text ("unix:/path", "1.2.3.4:80", "[::1]:80"). */
const char *tracer__wrap_sockaddr(const void *sa, unsigned len, char *buf,
				  size_t size) TRACER_HIDDEN;
#define WRAP_ADDRBUF	128

#define WRAP_U(...)	__VA_ARGS__

/*
 * The two shapes of a libc:* wrapper (wrap_io.c explains the events).
 *
 * IO_CALL(T, name, (params), (args), "fmt", (values), failed): a call
 * that does not block; values are in scope with `ret`; the event is
 * libc:name with fmt, then the errno (TRACER_ARG_ERRNO) when failed.
 */
#define IO_CALL(T, name, params, args, fmt, values, failed) \
WRAP_DEFINE_REAL(T, name, params, args) \
WRAP_API T name params \
{ \
	int64_t en; \
	T ret = 0; \
	WRAP_SITE_E(cs, 0, "libc:" #name, fmt, WRAP_U values); \
	if (tracer_likely(!WRAP_ON(cs))) \
		return WRAP_REAL(name) args; \
	ret = WRAP_REAL(name) args; \
	en = WRAP_ERRNO(failed); \
	WRAP_EMIT_E(cs, en, WRAP_U values); \
	return ret; \
}

/*
 * IO_PAIR(T, name, (params), call, "entry fmt", (entry values), "exit
 * fmt", (exit values), failed): the wrapper name, recording
 * libc:name_entry before `call` (an expression) and libc:name_exit after.
 */
#define IO_PAIR(T, name, params, call, efmt, evalues, xfmt, xvalues, \
		failed) \
WRAP_API T name params \
{ \
	T ret = 0; \
	WRAP_SITE(cs_in, 0, "libc:" #name "_entry", efmt, WRAP_U evalues); \
	WRAP_SITE_E(cs_out, 0, "libc:" #name "_exit", xfmt, WRAP_U xvalues); \
	if (tracer_likely(!WRAP_ON2(cs_in, cs_out))) \
		return call; \
	if (WRAP_ON(cs_in)) \
		WRAP_EMIT(cs_in, WRAP_U evalues); \
	ret = call; \
	if (WRAP_ON(cs_out)) { \
		int64_t en = WRAP_ERRNO(failed); \
		WRAP_EMIT_E(cs_out, en, WRAP_U xvalues); \
	} \
	return ret; \
}

/*
 * IO_BLOCKING(T, name, (params), (args), "entry fmt", (entry values),
 * "exit fmt", (exit values), failed): libc:name_entry and libc:name_exit
 * around the next definition of name.
 */
#define IO_BLOCKING(T, name, params, args, efmt, evalues, xfmt, xvalues, \
		    failed) \
WRAP_DEFINE_REAL(T, name, params, args) \
IO_PAIR(T, name, params, WRAP_REAL(name) args, efmt, evalues, xfmt, \
	xvalues, failed)

/*
 * The descriptor under stream f (a FILE *), -1 for none (NULL, a stream on
 * memory); without the stream's lock, errno kept (wrap_io.c).
 */
struct _IO_FILE;
int tracer__wrap_stream_fd(struct _IO_FILE *f) TRACER_HIDDEN;

/* Resolve the memory functions now (wrap_mem.c); called by tracer_init. */
void tracer__wrap_mem_init(void) TRACER_HIDDEN;
/* Resolve dlerror() now (wrap_dl.c); called by tracer_init. */
void tracer__wrap_dl_init(void) TRACER_HIDDEN;

#endif /* TRACER_LIBTRACER_WRAP_H */
