/*
 * signal.c - the update signal (SIGRTMIN+3 by default).
 *
 * tracerd changes the control page, then queues this signal to every
 * thread that holds a buffer (rt_tgsigqueueinfo, si_code SI_QUEUE, the
 * value TRACER_SIGNAL_COOKIE): the handler makes the thread act on the new
 * state at once (close its sub-buffers for a switch or a snapshot, start
 * or stop) instead of at its next event. A thread that blocks the signal
 * is not sent it (tracerd reads SigBlk in /proc) and acts at its next
 * event; nothing depends on the signal arriving.
 *
 * The program keeps the signal: libtracer exports sigaction() and signal()
 * so that a handler the program installs for this signal number is
 * recorded here instead of replacing ours, and the handler passes every
 * signal that is not tracerd's to it (or to the default action, which for
 * a real-time signal ends the process, as it would have). The handler is
 * async-signal-safe and preserves errno.
 *
 * TRACER_SIGNAL picks another number for programs that need SIGRTMIN+3
 * ("SIGRTMIN+N", "RTMIN+N" or a number between SIGRTMIN and SIGRTMAX), or
 * none at all ("none").
 *
 * The program's action lives in two slots switched by an index, so the
 * handler never reads one that sigaction() is halfway through writing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

typedef int (*sigaction_fn)(int, const struct sigaction *,
			    struct sigaction *);
typedef void (*handler_fn)(int);

static int tsig;			/* 0: no update signal */
static struct sigaction app[2];		/* the program's action */
static unsigned app_slot;

static sigaction_fn real_sigaction(void)
{
	static sigaction_fn fn;

	if (!fn)
		fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return fn;
}

typedef handler_fn (*signal_fn)(int, handler_fn);

static signal_fn real_signal(void)
{
	static signal_fn fn;

	if (!fn)
		fn = (signal_fn)dlsym(RTLD_NEXT, "signal");
	return fn;
}

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

/* The program's default action: for a real-time signal, termination. */
static void default_action(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction()(sig, &dfl, NULL);
	/* Blocked while we run: delivered when the handler returns. */
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *a =
		&app[__atomic_load_n(&app_slot, __ATOMIC_ACQUIRE)];
	sigset_t old;

	if (!(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN)
		return;
	if (!(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL) {
		default_action(sig);
		return;
	}
	pthread_sigmask(SIG_BLOCK, &a->sa_mask, &old);
	if ((a->sa_flags & SA_SIGINFO) && a->sa_sigaction)
		a->sa_sigaction(sig, si, uc);
	else if (!(a->sa_flags & SA_SIGINFO))
		a->sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if (from_tracerd(si))
		tracer__thread_signal();
	else
		chain(sig, si, uc);
	errno = saved;
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
	struct sigaction sa;

	if (sig <= 0 || !real_sigaction())
		return sig < 0 ? -EINVAL : 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	if (real_sigaction()(sig, &sa, &app[0]) < 0)
		return -errno;
	if (app[0].sa_sigaction == handler)	/* installed twice */
		app[0].sa_handler = SIG_DFL;
	__atomic_store_n(&tsig, sig, __ATOMIC_RELEASE);
	return sig;
}

/*
 * The program's sigaction(): for the update signal, record its action
 * (the handler chains to it) and report the one it had; else libc's.
 */
TRACER_API int sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oldact)
{
	unsigned cur;

	if (sig == 0 || sig != __atomic_load_n(&tsig, __ATOMIC_ACQUIRE)) {
		if (!real_sigaction()) {
			errno = ENOSYS;
			return -1;
		}
		return real_sigaction()(sig, act, oldact);
	}
	cur = __atomic_load_n(&app_slot, __ATOMIC_RELAXED);
	if (oldact)
		*oldact = app[cur];
	if (act) {
		app[cur ^ 1] = *act;
		/* The slot is complete before the handler can pick it. */
		__atomic_store_n(&app_slot, cur ^ 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* signal(): BSD semantics, as glibc's (the handler stays, SA_RESTART). */
TRACER_API handler_fn signal(int sig, handler_fn h)
{
	struct sigaction sa, old;

	if (sig == 0 || sig != __atomic_load_n(&tsig, __ATOMIC_ACQUIRE)) {
		if (!real_signal()) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real_signal()(sig, h);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
