/*
 * signal.c - the program's signal handlers, and the update signal
 * (SIGRTMIN+3 by default).
 *
 * The program's handlers. libtracer exports sigaction(), signal(),
 * bsd_signal(), sysv_signal(), sigset() and siginterrupt(). A handler the
 * program installs is kept here, and the kernel is given a trampoline
 * with the program's flags and mask (plus SA_SIGINFO), so the kernel
 * blocks, restarts and resets exactly as it would for the program's own
 * handler. The trampoline records proc:signal, then calls the handler
 * with the arguments it asked for (one, or three with SA_SIGINFO) and the
 * errno of the interrupted code:
 *
 *   proc:signal   signal 10 (SIGUSR1) handler 0x55d0c1a2b3c0
 *
 * sigaction(sig, NULL, &old) returns what the program installed, as the
 * kernel would have reported it (its SA_RESTORER and its mask without
 * SIGKILL and SIGSTOP), never the trampoline; after an SA_RESETHAND
 * delivery, SIG_DFL. SIG_IGN and SIG_DFL go to the kernel unchanged, and a
 * signal with no handler of the program's is not seen here (a process
 * killed by one is recorded by tracerd as tracer:process_killed).
 * Handlers installed before libtracer was loaded (dlopen), or by the C
 * library's own internal calls (system(), abort()), are not trampolined.
 *
 * The update signal. tracerd changes the control page, then queues this
 * signal to every thread that holds a buffer (rt_tgsigqueueinfo, si_code
 * SI_QUEUE, the value TRACER_SIGNAL_COOKIE): the handler makes the thread
 * act on the new state at once (close its sub-buffers for a switch or a
 * snapshot, start or stop) instead of at its next event. A thread that
 * blocks the signal is not sent it (tracerd reads SigBlk in /proc) and
 * acts at its next event; nothing depends on the signal arriving. The
 * program keeps the signal: the kernel always has libtracer's action for
 * it (every signal blocked in the handler but those raised by the
 * instruction the thread runs, tracer__signal_async_set(): blocked, they
 * would kill the process, e.g. a SIGSYS of a seccomp filter that traps
 * the wake-up write(2) for the program's handler to emulate), and the
 * trampoline passes every signal that is not tracerd's to the program's
 * action (or to the default action, which for a real-time signal ends the
 * process, as it would have).
 *
 * Interrupted calls. The update signal is installed with SA_RESTART, but
 * the kernel restarts no poll(), nanosleep(), pause() ... after a handler:
 * they fail with EINTR. The trampoline counts, per thread, the signals it
 * handled without the program and the ones it passed to the program
 * (tracer__intr), and the wrappers of those calls resume a call that only
 * the first interrupted (resume.h, wrap_wait.c, wrap_io.c).
 *
 * The same signal comes from the kernel for a dormant client's socket
 * (client.c: O_ASYNC, F_SETSIG; si_code POLL_IN or POLL_HUP, si_fd the
 * socket): tracerd wrote to it or hung up. The handler pokes the client
 * (its next event starts the listener) and passes nothing to the
 * program. Such a signal for another descriptor goes to the program's
 * action, unless that is the default one: a socket of ours that an
 * earlier image of the process kept open across exec, not the program's.
 *
 * TRACER_SIGNAL picks another number for programs that need SIGRTMIN+3
 * ("SIGRTMIN+N", "RTMIN+N" or a number between SIGRTMIN and SIGRTMAX), or
 * none at all ("none").
 *
 * The table of the program's actions is written under a spin lock, with
 * every signal blocked (so no handler of the writing thread can wait for
 * it), and each entry under a sequence count: the trampoline, which may
 * run in any thread at any time, retries its copy while a writer is in
 * the middle of it. Everything here is async-signal-safe and preserves
 * errno.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"
#include "wrap.h"
#include "resume.h"

typedef int (*sigaction_fn)(int, const struct sigaction *,
			    struct sigaction *);
typedef void (*handler_fn)(int);
typedef handler_fn (*signal_fn)(int, handler_fn);
typedef int (*siginterrupt_fn)(int, int);

/* The program's action for one signal. */
struct app_action {
	unsigned seq;		/* odd while a writer changes act */
	bool own;		/* act answers queries (else: the kernel) */
	struct sigaction act;
};

static int tsig;			/* 0: no update signal */
static struct app_action app[NSIG] TRACER_COLD_BSS;
static int app_writer;			/* spin lock of the writers */
static sigset_t app_intr;		/* siginterrupt(sig, 1) was called */
/* Around fork: the forking thread's mask. */
static __thread sigset_t fork_mask __attribute__((tls_model("initial-exec")));

static void trampoline(int sig, siginfo_t *si, void *uc);

__thread struct tracer__intr tracer__intr
	__attribute__((tls_model("initial-exec")));

/* ---- the next definitions ----------------------------------------------- */

static void *next(const char *name)
{
	return tracer__next(name);
}

#define REAL(type, name) \
static type real_##name(void) \
{ \
	static type fn; \
	type f = __atomic_load_n(&fn, __ATOMIC_RELAXED); \
	if (!f) { \
		f = (type)next(#name); \
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED); \
	} \
	return f; \
}

REAL(sigaction_fn, sigaction)
REAL(signal_fn, signal)
REAL(signal_fn, sysv_signal)
REAL(signal_fn, sigset)
REAL(siginterrupt_fn, siginterrupt)

/* Look them up now: a vfork child or a handler must not call dlsym. */
void tracer__signal_init(void)
{
	(void)real_sigaction();
	(void)real_signal();
	(void)real_sysv_signal();
	(void)real_sigset();
	(void)real_siginterrupt();
	tracer__jump_init();
}

/*
 * Signals the table keeps: not SIGKILL and SIGSTOP (no handler), nor the
 * C library's own between 31 and SIGRTMIN (it refuses them): those, and
 * invalid numbers, go straight to the C library, which says EINVAL.
 */
static bool kept(int sig)
{
	return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP &&
	       (sig < 32 || sig >= SIGRTMIN);
}

static bool is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* ---- the table -------------------------------------------------------- */

static void app_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	while (__atomic_exchange_n(&app_writer, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void app_unlock(const sigset_t *old)
{
	__atomic_store_n(&app_writer, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Under the lock. */
static void app_write(int sig, const struct sigaction *act, bool own)
{
	struct app_action *a = &app[sig];

	__atomic_store_n(&a->seq, a->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	a->act = *act;
	a->own = own;
	__atomic_store_n(&a->seq, a->seq + 1, __ATOMIC_RELEASE);
}

/* A consistent copy of sig's action; returns its sequence count. */
static unsigned app_read(int sig, struct sigaction *out)
{
	const struct app_action *a = &app[sig];
	unsigned s;

	for (;;) {
		s = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			sched_yield();	/* another thread writes */
			continue;
		}
		memcpy(out, &a->act, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&a->seq, __ATOMIC_RELAXED) == s)
			return s;
	}
}

/*
 * fork(): the table is not left locked in the child by a thread that no
 * longer exists there. The forking thread takes the lock (every signal
 * blocked) and lets it go on both sides.
 */
void tracer__signal_fork_prepare(void)
{
	app_lock(&fork_mask);
}

void tracer__signal_fork_after(void)
{
	app_unlock(&fork_mask);
}

/* ---- the update signal ------------------------------------------------- */

/* tracerd's pid, kept once it is known: a signal it queued just before
 * it exited may arrive after the process let go of its control page. */
static uint32_t daemon_pid;

void tracer__signal_set_daemon(uint32_t pid)
{
	__atomic_store_n(&daemon_pid, pid, __ATOMIC_RELEASE);
}

static bool from_tracerd(const siginfo_t *si)
{
	return si && si->si_code == SI_QUEUE &&
	       si->si_value.sival_int == TRACER_SIGNAL_COOKIE &&
	       si->si_pid != 0 && (uint32_t)si->si_pid ==
	       __atomic_load_n(&daemon_pid, __ATOMIC_ACQUIRE);
}

/* Sent by the kernel for a descriptor's readiness (F_SETSIG)? */
static bool poll_code(const siginfo_t *si)
{
	return si && si->si_code >= POLL_IN && si->si_code <= POLL_HUP;
}

/* The kernel's word that tracerd wrote to a dormant process's socket or
 * hung up (client.c: O_ASYNC, F_SETSIG). */
static bool socket_news(const siginfo_t *si)
{
	int fd = tracer__client_async_fd();

	return poll_code(si) && fd >= 0 && si->si_fd == fd;
}

/* ---- the trampoline --------------------------------------------------- */

/* The program's default action: delivered again once we return. */
static void default_action(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction()(sig, &dfl, NULL);
	/* Blocked while we run (or not, SA_NODEFER: delivered at once). */
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

void tracer__signal_async_set(sigset_t *set)
{
	static const int sync[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
				    SIGSYS };
	size_t i;

	sigfillset(set);
	for (i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		sigdelset(set, sync[i]);
}

/* "SIGUSR1", "SIGRTMIN+3", "SIG40" into buf (16 bytes); sig 1 to SIGRTMAX. */
const char *tracer__signal_name(int sig, char *buf)
{
	const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;
	unsigned v = (unsigned)sig;
	size_t n = 3;
	char num[4], *p = num + sizeof(num);

	memcpy(buf, "SIG", 3);
	if (abbrev) {
		n = strnlen(abbrev, 12);
		memcpy(buf + 3, abbrev, n);
		buf[3 + n] = '\0';
		return buf;
	}
	if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
		memcpy(buf + 3, "RTMIN+", 6);
		n = 9;
		v = (unsigned)(sig - SIGRTMIN);
	}
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) && p > num);
	memcpy(buf + n, p, (size_t)(num + sizeof(num) - p));
	return buf;
}

/*
 * Recorded whatever the thread's guard says: a program's handler may
 * interrupt a wrapper that records, and its event is recorded like any
 * tracer_record() of a handler's (tracer.c: nested records are whole).
 */
static void record_signal(int sig, void *h)
{
	char buf[16];
	const char *name = tracer__signal_name(sig, buf);

	tracer_record("proc:signal", "signal %d (%s) handler %p", sig, name,
		      h);
}

/* SA_RESETHAND: the kernel reset the action when it delivered this
 * signal; so does the table, unless the program changed it since. */
static void app_reset(int sig, unsigned seq)
{
	struct sigaction a;
	sigset_t old;

	app_lock(&old);
	if (__atomic_load_n(&app[sig].seq, __ATOMIC_RELAXED) == seq) {
		a = app[sig].act;
		a.sa_handler = SIG_DFL;
		app_write(sig, &a, app[sig].own);
	}
	app_unlock(&old);
}

/*
 * Handlers running on this thread (tracer__in_handler()), and where each
 * runs. A handler may never return here: it leaves by siglongjmp(), as
 * shells and test frameworks do. The jump (wrap_jump.c) drops the
 * handlers it leaves (tracer__signal_jumped()): those whose trampoline's
 * frame is deeper than its target, or that run on the alternate signal
 * stack when the target is off it. Only this thread writes these, its
 * handlers included. A handler marks its slot "left" (top 0), raises the
 * depth, then writes its frame: a handler nested before the depth is
 * raised takes the slot and gives it back; one nested after takes the
 * next, and a jump out of it to anywhere leaves this one too (its
 * program's handler has not started: no target can be inside it). A
 * handler puts the depth back as it found it, dropping what a jump out
 * of a nested one left.
 *
 *   thread's stack (grows down)        alternate stack [lo, hi)
 *   | program: sigsetjmp() here   |    | (a handler's frames when   |
 *   | ... interrupted code        |    |  it runs there: its `top`  |
 *   | trampoline's frame: `top`   |    |  and below)                |
 *   | handler ... siglongjmp()    |    +----------------------------+
 *   v
 */
#define HANDLER_FRAMES	8	/* deeper ones: dropped with the 8th */

struct handler_frame {
	uintptr_t top;		/* its trampoline's frame: it runs below */
	uintptr_t lo, hi;	/* the alternate stack it runs on, or 0 */
};

static __thread unsigned handler_depth
	__attribute__((tls_model("initial-exec")));
static __thread struct handler_frame handler_frames[HANDLER_FRAMES]
	__attribute__((tls_model("initial-exec")));

bool tracer__in_handler(void)
{
	return handler_depth != 0;
}

/* A handler starts; top: its trampoline's frame, uc: the kernel's
 * context. Returns the depth to put back (handler_leave()). */
static unsigned handler_enter(const void *uc, uintptr_t top)
{
	const stack_t *ss = &((const ucontext_t *)uc)->uc_stack;
	uintptr_t lo = (uintptr_t)ss->ss_sp, hi = lo + ss->ss_size;
	unsigned d = handler_depth;

	if (d >= HANDLER_FRAMES) {
		handler_depth = d + 1;
		return d;
	}
	handler_frames[d] = (struct handler_frame){ 0, 0, 0 };
	/* The slot marked before the depth is raised, the depth before
	 * the frame is written (a nested handler's, in between). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	handler_depth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if ((ss->ss_flags & SS_DISABLE) || top < lo || top >= hi) {
		lo = hi = 0;	/* on the thread's stack */
		/* Nested on an alternate stack with SS_AUTODISARM: the
		 * kernel tells it as disabled; the outer one knows it. */
		if (d > 0 && handler_frames[d - 1].hi &&
		    top >= handler_frames[d - 1].lo &&
		    top < handler_frames[d - 1].hi) {
			lo = handler_frames[d - 1].lo;
			hi = handler_frames[d - 1].hi;
		}
	}
	handler_frames[d] = (struct handler_frame){ top, lo, hi };
	return d;
}

/* A handler's frame: does a jump to stack pointer sp leave it? To an
 * older frame than its trampoline's, or off the alternate stack it runs
 * on. (A jump from a handler on the thread's stack to another stack, one
 * a coroutine library made, is taken as staying in it.) */
static bool jump_leaves(const struct handler_frame *f, uintptr_t sp)
{
	return sp > f->top || (f->hi && (sp < f->lo || sp >= f->hi));
}

void tracer__signal_jumped(uintptr_t sp)
{
	unsigned d = handler_depth;

	/* Deeper than the slots: over when the 8th is. */
	if (d > HANDLER_FRAMES &&
	    jump_leaves(&handler_frames[HANDLER_FRAMES - 1], sp))
		d = HANDLER_FRAMES;
	while (d > 0 && d <= HANDLER_FRAMES &&
	       jump_leaves(&handler_frames[d - 1], sp))
		d--;
	handler_depth = d;
}

static void handler_leave(unsigned d)
{
	/* The handler's work done before (its events). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	handler_depth = d;
}

static void call(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	unsigned d = handler_enter(uc, (uintptr_t)__builtin_frame_address(0));

	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else
		a->sa_handler(sig);
	handler_leave(d);
}

/*
 * One more signal in count c (tracer__intr). Only this thread's handlers
 * write it, and a wrapper reads it after the call a signal interrupted
 * (resume.h): a plain increment. A handler nested in this one may lose its
 * own increment, never the change: c still differs from what it was.
 */
static void count(unsigned *c)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

#if TRACER_HAVE_RSEQ
/* The descriptors of the write path's restartable sequences
 * (common/rb_write.h), gathered by the linker into one array. */
extern const struct rseq_cs __start___tracer_rseq_cs[] TRACER_HIDDEN;
extern const struct rseq_cs __stop___tracer_rseq_cs[] TRACER_HIDDEN;
#endif

/*
 * A handler that interrupted one of the write path's restartable
 * sequences finds its thread moved to the sequence's abort address by the
 * kernel. Where the kernel did not (a vfork child, which runs on its
 * parent's thread state but has no rseq area of its own; a thread whose
 * area the program unregistered), do what it would have, before anything
 * of the handler's records: the interrupted record then starts over by
 * the general path (common/rseq.h).
 */
static void abort_sequence(void *uc)
{
#if TRACER_HAVE_RSEQ
	greg_t *ip = &((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	const struct rseq_cs *cs;

	for (cs = __start___tracer_rseq_cs; cs < __stop___tracer_rseq_cs;
	     cs++)
		if ((uint64_t)*ip - cs->start_ip < cs->post_commit_offset) {
			*ip = (greg_t)cs->abort_ip;
			return;
		}
#else
	(void)uc;
#endif
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction a;
	sigset_t m, old;
	unsigned seq, d;

	abort_sequence(uc);
	if (sig == __atomic_load_n(&tsig, __ATOMIC_RELAXED) &&
	    socket_news(si)) {
		tracer__client_poke();
		count(&tracer__intr.tracer);
		errno = saved;
		return;
	}
	if (sig == __atomic_load_n(&tsig, __ATOMIC_RELAXED) &&
	    from_tracerd(si)) {
		d = handler_enter(uc, (uintptr_t)__builtin_frame_address(0));
		tracer__thread_signal();
		handler_leave(d);
		count(&tracer__intr.tracer);
		errno = saved;
		return;
	}
	seq = app_read(sig, &a);
	if (a.sa_handler == SIG_IGN ||
	    (a.sa_handler == SIG_DFL && sig == tsig && poll_code(si))) {
		/* Not delivered: changed to SIG_IGN while on its way; or
		 * the readiness of a socket of ours that an earlier image
		 * left open across exec, which the program never asked
		 * for (its default action would end it). */
		count(&tracer__intr.tracer);
		return;
	}
	count(&tracer__intr.program);
	if (a.sa_handler == SIG_DFL) {
		default_action(sig);
		errno = saved;
		return;
	}
	if (a.sa_flags & SA_RESETHAND)
		app_reset(sig, seq);
	/* The event is a handler's: its slow path must not change what an
	 * interrupted record of the thread relies on (the writers' unit,
	 * a stash replay: tracer__in_handler()). */
	d = handler_enter(uc, (uintptr_t)__builtin_frame_address(0));
	record_signal(sig, (void *)a.sa_handler);
	handler_leave(d);
	errno = saved;
	if (sig != __atomic_load_n(&tsig, __ATOMIC_RELAXED)) {
		call(&a, sig, si, uc);	/* the kernel applied a's mask */
		return;
	}
	/*
	 * The update signal's action is libtracer's (every asynchronous
	 * signal blocked): the handler runs with the mask the kernel would
	 * have given it.
	 */
	m = ((ucontext_t *)uc)->uc_sigmask;
	sigorset(&m, &m, &a.sa_mask);
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&m, sig);
	pthread_sigmask(SIG_SETMASK, &m, &old);
	call(&a, sig, si, uc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* "SIGRTMIN+N", "RTMIN+N", "N"; 0 for "none"; -1 if invalid. */
static int parse_signal(const char *s)
{
	char *end;
	long v;

	if (!strcmp(s, "none") || !strcmp(s, "0"))
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (!strncmp(s, "RTMIN", 5)) {
		v = s[5] == '+' ? strtol(s + 6, &end, 10) : 0;
		if (s[5] && (s[5] != '+' || *end))
			return -1;
		v += SIGRTMIN;
	} else {
		v = strtol(s, &end, 10);
		if (!*s || *end)
			return -1;
	}
	return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : -1;
}

int tracer__signal_install(void)
{
	const char *env = getenv("TRACER_SIGNAL");
	int sig = env && *env ? parse_signal(env) : SIGRTMIN + 3;
	struct sigaction sa, prev;
	sigset_t old;
	int ret = 0;

	if (sig <= 0 || !real_sigaction())
		return sig < 0 ? -EINVAL : 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trampoline;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	tracer__signal_async_set(&sa.sa_mask);
	app_lock(&old);
	if (real_sigaction()(sig, &sa, &prev) < 0) {
		ret = -errno;
	} else {
		/* The program's own (it may have installed one already). */
		if (prev.sa_sigaction != trampoline)
			app_write(sig, &prev, true);
		else if (!app[sig].own)
			app_write(sig, &app[sig].act, true);
		__atomic_store_n(&tsig, sig, __ATOMIC_RELEASE);
	}
	app_unlock(&old);
	return ret ? ret : sig;
}

/* ---- sigaction() ------------------------------------------------------ */

/*
 * Install the program's action act for sig (kept, not the update signal),
 * under the lock. A handler: the table first (a signal on its way finds
 * it), then the trampoline, then the table again with what the kernel
 * keeps of the flags and mask.
 */
static int install(int sig, const struct sigaction *act)
{
	struct sigaction k, prev = app[sig].act;
	bool prev_own = app[sig].own;

	if (!is_handler(act)) {
		if (real_sigaction()(sig, act, NULL) < 0)
			return -1;
		app_write(sig, act, false);
		return 0;
	}
	app_write(sig, act, true);
	k = *act;
	k.sa_sigaction = trampoline;
	k.sa_flags |= SA_SIGINFO;
	if (real_sigaction()(sig, &k, NULL) < 0 ||
	    real_sigaction()(sig, NULL, &k) < 0) {
		int err = errno;

		app_write(sig, &prev, prev_own);
		errno = err;
		return -1;
	}
	k.sa_sigaction = act->sa_sigaction;
	k.sa_flags = (k.sa_flags & ~SA_SIGINFO) | (act->sa_flags & SA_SIGINFO);
	app_write(sig, &k, true);
	return 0;
}

static int app_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oldact)
{
	struct sigaction a, o;
	sigset_t mask;
	int ret = 0;

	if (act)
		a = *act;	/* act and oldact may be the same */
	app_lock(&mask);
	if (oldact && app[sig].own)
		o = app[sig].act;
	else if (oldact)
		ret = real_sigaction()(sig, NULL, &o);
	if (!ret && act) {
		if (sig == __atomic_load_n(&tsig, __ATOMIC_RELAXED))
			app_write(sig, &a, true);	/* the handler is ours */
		else
			ret = install(sig, &a);
	}
	app_unlock(&mask);
	if (!ret && oldact)
		*oldact = o;
	return ret;
}

TRACER_API int sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oldact)
{
	int saved = errno, ret;

	if (!real_sigaction()) {
		errno = ENOSYS;
		return -1;
	}
	if (!kept(sig))
		return real_sigaction()(sig, act, oldact);
	ret = app_sigaction(sig, act, oldact);
	if (!ret)
		errno = saved;
	return ret;
}

/* ---- signal() and its relatives, as the C library builds them ---------- */

/* signal(), bsd_signal(): BSD semantics (the handler stays, SA_RESTART
 * unless siginterrupt() said otherwise), the signal blocked in it. */
TRACER_API handler_fn signal(int sig, handler_fn h)
{
	struct sigaction sa, old;

	if (!kept(sig) || h == SIG_ERR)
		return real_signal() ? real_signal()(sig, h) : SIG_ERR;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = sigismember(&app_intr, sig) ? 0 : SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

TRACER_API handler_fn bsd_signal(int sig, handler_fn h);
TRACER_API handler_fn bsd_signal(int sig, handler_fn h)
{
	return signal(sig, h);
}

/* System V semantics: reset on delivery, not blocked, not restarted
 * (what signal() is with -std=c99 and no _DEFAULT_SOURCE). */
TRACER_API handler_fn sysv_signal(int sig, handler_fn h);
TRACER_API handler_fn __sysv_signal(int sig, handler_fn h);
TRACER_API handler_fn sysv_signal(int sig, handler_fn h)
{
	struct sigaction sa, old;

	if (!kept(sig) || h == SIG_ERR)
		return real_sysv_signal() ? real_sysv_signal()(sig, h)
					  : SIG_ERR;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
#ifdef SA_INTERRUPT
	sa.sa_flags |= SA_INTERRUPT;
#endif
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

TRACER_API handler_fn __sysv_signal(int sig, handler_fn h)
	__attribute__((alias("sysv_signal")));

/* sigset(): as the C library's, SIG_HOLD included. */
TRACER_API handler_fn sigset(int sig, handler_fn h)
{
	struct sigaction sa, old;
	sigset_t set, oset;

	if (!kept(sig))
		return real_sigset() ? real_sigset()(sig, h) : SIG_ERR;
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (h == SIG_HOLD) {
		if (pthread_sigmask(SIG_BLOCK, &set, &oset))
			return SIG_ERR;
		if (sigismember(&oset, sig))
			return SIG_HOLD;
		if (sigaction(sig, NULL, &old) < 0)
			return SIG_ERR;
		return old.sa_handler;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0 ||
	    pthread_sigmask(SIG_UNBLOCK, &set, &oset))
		return SIG_ERR;
	return sigismember(&oset, sig) ? SIG_HOLD : old.sa_handler;
}

/* siginterrupt(): through our sigaction(), and remembered for signal(). */
TRACER_API int siginterrupt(int sig, int interrupt)
{
	struct sigaction sa;

	if (!kept(sig))
		return real_siginterrupt() ? real_siginterrupt()(sig, interrupt)
					   : -1;
	if (sigaction(sig, NULL, &sa) < 0)
		return -1;
	if (interrupt) {
		sigaddset(&app_intr, sig);
		sa.sa_flags &= ~SA_RESTART;
	} else {
		sigdelset(&app_intr, sig);
		sa.sa_flags |= SA_RESTART;
	}
	return sigaction(sig, &sa, NULL);
}
