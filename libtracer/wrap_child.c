/*
 * wrap_child.c - signals sent and children waited for, recorded as libc:*
 * events (wrap.h explains the wrappers, wrap_io.c the events' shape):
 *
 *   libc:kill        pid 4242 signal 9 (SIGKILL) result 0
 *   libc:waitpid_entry  pid 4242 options 0
 *   libc:waitpid_exit   pid 4242 result 4242 status killed SIGKILL
 *
 * kill() and tgkill() cannot block: one event. The wait family (wait,
 * waitpid, waitid, wait3, wait4) records an entry/exit pair; the exit
 * names the child the call reported (result, or waitid's si_pid) and its
 * status decoded:
 *
 *   exited N           it returned N or called exit(N)
 *   killed SIGNAME     a signal ended it ("killed SIGSEGV core" when it
 *                      dumped core)
 *   stopped SIGNAME    WUNTRACED, or a ptrace stop (waitid's "trapped")
 *   continued          WCONTINUED
 *   -                  nothing reported (WNOHANG and no change, an error)
 *
 * A caller that passes no status pointer still gets its status recorded:
 * the wrapper passes one of its own then (the kernel writes it; the
 * caller sees nothing different). raise() is not wrapped: abort() and the
 * crash paths use it.
 *
 * The waits are restarted by the kernel after the tracer's update signal
 * (SA_RESTART: resume.h), so one pair spans the whole wait. Everything
 * here is async-signal-safe, as the calls are: no stdio, no allocation.
 * The library itself waits for no child; its kill(pid, 0) probes are
 * system calls of its own (sys.h) or made with the guard raised.
 */
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "wrap.h"

/* ---- text without stdio --------------------------------------------- */

#define TEXTBUF	40	/* "killed SIGRTMIN+30 core" and more */

/* Append s to buf at *n (room for TEXTBUF bytes with the '\0'). */
static void put(char *buf, size_t *n, const char *s)
{
	size_t len = strnlen(s, TEXTBUF - 1 - *n);

	memcpy(buf + *n, s, len);
	*n += len;
	buf[*n] = '\0';
}

static void put_uint(char *buf, size_t *n, unsigned v)
{
	char num[12], *p = num + sizeof(num);

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) && p > num);
	put(buf, n, p);
}

/* "SIGKILL", "SIGRTMIN+3", "SIG99" appended to buf. */
static void put_signal(char *buf, size_t *n, int sig)
{
	char name[16];

	if (sig > 0 && sig <= SIGRTMAX) {
		put(buf, n, tracer__signal_name(sig, name));
		return;
	}
	put(buf, n, "SIG");
	put_uint(buf, n, (unsigned)sig);
}

/* The name of signal sig in buf (TEXTBUF bytes); "0" for the probe. */
static const char *signal_text(int sig, char *buf)
{
	size_t n = 0;

	buf[0] = '\0';
	if (sig == 0)
		put(buf, &n, "0");
	else
		put_signal(buf, &n, sig);
	return buf;
}

/* A wait status (waitpid's) as text in buf; "-" when none (!reported). */
static const char *status_text(int reported, int st, char *buf)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!reported) {
		put(buf, &n, "-");
	} else if (WIFEXITED(st)) {
		put(buf, &n, "exited ");
		put_uint(buf, &n, (unsigned)WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		put(buf, &n, "killed ");
		put_signal(buf, &n, WTERMSIG(st));
		if (WCOREDUMP(st))
			put(buf, &n, " core");
	} else if (WIFSTOPPED(st)) {
		put(buf, &n, "stopped ");
		put_signal(buf, &n, WSTOPSIG(st));
	} else if (WIFCONTINUED(st)) {
		put(buf, &n, "continued");
	} else {
		put(buf, &n, "?");
	}
	return buf;
}

/* waitid()'s answer as text in buf (the same words as status_text). */
static const char *siginfo_text(const siginfo_t *si, char *buf)
{
	size_t n = 0;

	buf[0] = '\0';
	if (si->si_pid == 0) {
		put(buf, &n, "-");
		return buf;
	}
	switch (si->si_code) {
	case CLD_EXITED:
		put(buf, &n, "exited ");
		put_uint(buf, &n, (unsigned)si->si_status);
		break;
	case CLD_KILLED:
	case CLD_DUMPED:
		put(buf, &n, "killed ");
		put_signal(buf, &n, si->si_status);
		if (si->si_code == CLD_DUMPED)
			put(buf, &n, " core");
		break;
	case CLD_STOPPED:
	case CLD_TRAPPED:
		put(buf, &n, "stopped ");
		put_signal(buf, &n, si->si_status);
		break;
	case CLD_CONTINUED:
		put(buf, &n, "continued");
		break;
	default:
		put(buf, &n, "?");
	}
	return buf;
}

/* ---- sending signals ------------------------------------------------ */

WRAP_DEFINE_REAL(int, kill, (pid_t pid, int sig), (pid, sig))
WRAP_API int kill(pid_t pid, int sig)
{
	char sb[TEXTBUF];
	const char *ss = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:kill", "pid %d signal %d (%s) result %d",
		    pid, sig, ss, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(kill)(pid, sig);
	ret = WRAP_REAL(kill)(pid, sig);
	en = WRAP_ERRNO(ret < 0);
	ss = signal_text(sig, sb);
	WRAP_EMIT_E(cs, en, pid, sig, ss, ret);
	return ret;
}

/* glibc 2.30 and later export tgkill(); a program that calls it has it. */
WRAP_DEFINE_REAL(int, tgkill, (pid_t tgid, pid_t tid, int sig),
		 (tgid, tid, sig))
WRAP_API int tgkill(pid_t tgid, pid_t tid, int sig)
{
	char sb[TEXTBUF];
	const char *ss = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:tgkill",
		    "tgid %d tid %d signal %d (%s) result %d",
		    tgid, tid, sig, ss, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(tgkill)(tgid, tid, sig);
	ret = WRAP_REAL(tgkill)(tgid, tid, sig);
	en = WRAP_ERRNO(ret < 0);
	ss = signal_text(sig, sb);
	WRAP_EMIT_E(cs, en, tgid, tid, sig, ss, ret);
	return ret;
}

/* ---- waiting for children ------------------------------------------- */

/*
 * The body of the waits that give a pid and a status: entry (efmt with
 * evalues), the call with the status pointer sp (the caller's, or ours
 * when it gave none), exit (xfmt with xvalues, in scope: ret, the result,
 * and ts, the status as text).
 */
#define WAIT_BODY(name, call, efmt, evalues, xfmt, xvalues) \
	char tb[TEXTBUF]; \
	const char *ts = ""; \
	int64_t en = 0; \
	int own = 0, *sp = status; \
	pid_t ret = 0; \
	WRAP_SITE(in, 0, "libc:" name "_entry", efmt, WRAP_U evalues); \
	WRAP_SITE_E(out, 0, "libc:" name "_exit", xfmt, WRAP_U xvalues); \
	if (tracer_likely(!WRAP_ON2(in, out))) \
		return call; \
	if (WRAP_ON(in)) \
		WRAP_EMIT(in, WRAP_U evalues); \
	if (!sp) \
		sp = &own; \
	ret = call; \
	if (WRAP_ON(out)) { \
		en = WRAP_ERRNO(ret < 0); \
		ts = status_text(ret > 0, ret > 0 ? *sp : 0, tb); \
		WRAP_EMIT_E(out, en, WRAP_U xvalues); \
	} \
	return ret

WRAP_DEFINE_REAL(pid_t, wait, (int *status), (status))
/* wait(): waitpid(-1, status, 0), and recorded with those values. */
WRAP_API pid_t wait(int *status)
{
	const pid_t pid = -1;
	const int options = 0;

	WAIT_BODY("wait", WRAP_REAL(wait)(sp),
		  "pid %d options %#x", (pid, options),
		  "pid %d result %d status %s", (pid, ret, ts));
}

WRAP_DEFINE_REAL(pid_t, waitpid, (pid_t pid, int *status, int options),
		 (pid, status, options))
WRAP_API pid_t waitpid(pid_t pid, int *status, int options)
{
	WAIT_BODY("waitpid", WRAP_REAL(waitpid)(pid, sp, options),
		  "pid %d options %#x", (pid, options),
		  "pid %d result %d status %s", (pid, ret, ts));
}

WRAP_DEFINE_REAL(pid_t, wait3, (int *status, int options,
				struct rusage *ru), (status, options, ru))
WRAP_API pid_t wait3(int *status, int options, struct rusage *ru)
{
	WAIT_BODY("wait3", WRAP_REAL(wait3)(sp, options, ru),
		  "options %#x", (options), "result %d status %s", (ret, ts));
}

WRAP_DEFINE_REAL(pid_t, wait4, (pid_t pid, int *status, int options,
				struct rusage *ru), (pid, status, options, ru))
WRAP_API pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	WAIT_BODY("wait4", WRAP_REAL(wait4)(pid, sp, options, ru),
		  "pid %d options %#x", (pid, options),
		  "pid %d result %d status %s", (pid, ret, ts));
}

/*
 * waitid(): entry idtype (P_ALL 0, P_PID 1, P_PGID 2, P_PIDFD 3), id and
 * options; exit the result (0 or -1), the child reported (si_pid, 0 for
 * none) and its status.
 */
WRAP_DEFINE_REAL(int, waitid, (idtype_t idtype, id_t id, siginfo_t *info,
			       int options), (idtype, id, info, options))
WRAP_API int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	char tb[TEXTBUF];
	const char *ts = "";
	int64_t en = 0;
	siginfo_t own, *ip = info;
	int ret = 0, type = (int)idtype;
	pid_t child = 0;
	WRAP_SITE(in, 0, "libc:waitid_entry", "idtype %d id %u options %#x",
		  type, id, options);
	WRAP_SITE_E(out, 0, "libc:waitid_exit", "result %d pid %d status %s",
		    ret, child, ts);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(waitid)(idtype, id, info, options);
	if (WRAP_ON(in))
		WRAP_EMIT(in, type, id, options);
	if (!ip) {
		memset(&own, 0, sizeof(own));
		ip = &own;
	}
	ret = WRAP_REAL(waitid)(idtype, id, ip, options);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret < 0);
		child = ret == 0 ? ip->si_pid : 0;
		ts = ret == 0 ? siginfo_text(ip, tb) : "-";
		WRAP_EMIT_E(out, en, ret, child, ts);
	}
	return ret;
}
