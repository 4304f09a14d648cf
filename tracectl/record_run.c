/*
 * record_run.c - `tracectl record` runs the program (record.h).
 *
 * The program is forked and executed with libtracer.so preloaded; an exec
 * that fails is told back through a close-on-exec pipe, so that tracectl
 * (and not the child) reports it. A SIGINT, SIGTERM or SIGHUP that came
 * while the session started means the program is not run at all.
 * tracectl then waits with sigwaitinfo() for SIGCHLD and for the signals
 * it passes on:
 *
 *   - while the program runs, SIGTERM and SIGHUP are sent on to it, and
 *     record will not wait for what it leaves running; SIGINT (and
 *     SIGQUIT, ignored) come from the terminal to the whole process group,
 *     the program included: tracectl does nothing with them;
 *   - once it has exited, tracectl, child subreaper (PR_SET_CHILD_SUBREAPER)
 *     of everything the program started, reaps until it has no child left
 *     but its private tracerd: a daemon that forked, called setsid() and
 *     forked again is waited for until it exits. SIGINT, SIGTERM or SIGHUP
 *     then ends the wait.
 *
 * The private tracerd (record.c) is a child of tracectl as well: it is
 * never counted as a descendant, and should it die, that is noted
 * (tracerd_died) for record.c to warn about.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "record.h"

#define DEFAULT_PATH "/bin:/usr/bin"	/* execvp()'s without $PATH */

/* The signals whose dispositions the children get back. */
static const int kept[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE,
			    SIGCHLD };
#define NKEPT (sizeof(kept) / sizeof(kept[0]))

static struct sigaction saved_act[NKEPT];
static sigset_t saved_mask;
static bool saved;		/* tracer__run_signals() was called */
static sigset_t waited;		/* what sigwaitinfo() takes */

/* ---- Signals ------------------------------------------------------------ */

static void set_handler(int sig, void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

void tracer__run_signals(void)
{
	size_t i;

	sigemptyset(&waited);
	for (i = 0; i < NKEPT; i++) {
		sigaction(kept[i], NULL, &saved_act[i]);
		/* What tracectl was told to ignore, it ignores. */
		if (saved_act[i].sa_handler != SIG_IGN || kept[i] == SIGCHLD)
			sigaddset(&waited, kept[i]);
	}
	sigdelset(&waited, SIGQUIT);
	sigdelset(&waited, SIGPIPE);
	sigprocmask(SIG_BLOCK, &waited, &saved_mask);
	/* Blocked, then taken by sigwaitinfo(): not ignored, or lost. */
	for (i = 0; i < NKEPT; i++)
		if (sigismember(&waited, kept[i]))
			set_handler(kept[i], SIG_DFL);
	set_handler(SIGQUIT, SIG_IGN);	/* ^\ is for the program */
	set_handler(SIGPIPE, SIG_IGN);	/* a closed stderr must not skip
					   the stop */
	saved = true;
}

void tracer__run_child_signals(void)
{
	size_t i;

	if (!saved)
		return;		/* nothing was changed */
	for (i = 0; i < NKEPT; i++)
		sigaction(kept[i], &saved_act[i], NULL);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/* ---- Can it run? -------------------------------------------------------- */

/* 0 if path is a file we may execute, else -ENOENT, -EACCES... */
static int runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EACCES;
	return access(path, X_OK) ? -errno : 0;
}

int tracer__run_check(const char *file)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[PATH_MAX];
	int err, ret = -ENOENT;

	if (!file[0])
		return -ENOENT;
	if (strchr(file, '/'))
		return runnable(file);
	if (!path)
		path = DEFAULT_PATH;
	for (p = path; ; p = end + 1) {
		end = strchrnul(p, ':');
		/* An empty element is the current directory. */
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(end - p), p,
			 end > p ? "/" : "", file);
		err = runnable(buf);
		if (!err)
			return 0;
		if (err == -EACCES)	/* execvp() goes on, then says so */
			ret = -EACCES;
		if (!*end)
			return ret;
	}
}

int tracer__run_exec_status(int err)
{
	return err == ENOENT ? RUN_NOT_FOUND : RUN_NOT_EXEC;
}

/* ---- Running it --------------------------------------------------------- */

static void program_child(const struct tracer__run *r, int err_fd)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload = NULL;
	int err;

	tracer__run_child_signals();
	/* The program's own preloads keep their place (a sanitizer runtime
	 * must come first). */
	if (old && old[0] && asprintf(&preload, "%s:%s", old, r->lib) < 0)
		preload = NULL;
	/* tracerd has just answered: the program's first events are
	 * wanted, so its registration may take longer than a start
	 * should otherwise wait (unless the user chose). */
	if (setenv(TRACER_SOCKET_ENV, r->socket, 1) == 0 &&
	    setenv("LD_PRELOAD", preload ? preload : r->lib, 1) == 0 &&
	    setenv("TRACER_REGISTER_TIMEOUT_MS", "1000", 0) == 0)
		execvp(r->argv[0], r->argv);
	err = errno;
	if (write(err_fd, &err, sizeof(err)) != sizeof(err))
		(void)0;	/* tracectl then sees only the status */
	_exit(tracer__run_exec_status(err));
}

/* Fork and exec the program. Returns its pid, or 0 with r->exec_errno set
 * (the exec failed: it was reaped), or -1 (reported). */
static pid_t start(struct tracer__run *r)
{
	int p[2], err;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		tracer__ctl_fail("cannot run '%s': %s", r->argv[0],
				 strerror(errno));
		return -1;
	}
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		program_child(r, p[1]);
	err = errno;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		tracer__ctl_fail("cannot run '%s': %s", r->argv[0],
				 strerror(err));
		return -1;
	}
	err = 0;
	/* Nothing (end of file) once the exec succeeded. */
	while (read(p[0], &err, sizeof(err)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (!err)
		return pid;
	r->exec_errno = err;
	r->not_run = true;
	r->status = tracer__run_exec_status(err);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* ---- Waiting ------------------------------------------------------------ */

struct wait_state {
	struct tracer__run *r;
	pid_t pid;		/* the program, 0 once reaped */
	bool stop;		/* waiting for descendants is over */
	bool told;		/* the "waiting for" line was written */
};

static int exit_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WEXITSTATUS(wstatus);
}

bool tracer__run_tracerd_gone(struct tracer__run *r, int ms)
{
	struct pollfd p = { .fd = -1, .events = POLLIN };
	int st;

	if (!r->tracerd)
		return r->tracerd_died;
	p.fd = (int)syscall(SYS_pidfd_open, r->tracerd, 0);
	if (p.fd >= 0) {	/* readable once it exited; else: look once */
		while (poll(&p, 1, ms) < 0 && errno == EINTR)
			;
		close(p.fd);
	}
	if (waitpid(r->tracerd, &st, WNOHANG) != r->tracerd)
		return false;
	r->tracerd_wait = st;
	r->tracerd_died = true;
	r->tracerd = 0;
	return true;
}

/* Reap every child that exited. */
static void reap(struct wait_state *w)
{
	struct tracer__run *r = w->r;
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == w->pid) {
			r->status = exit_status(st);
			w->pid = 0;
		} else if (r->tracerd && pid == r->tracerd) {
			r->tracerd_wait = st;
			r->tracerd_died = true;
			r->tracerd = 0;
		}
	}
}

/* /proc/PID/stat of a child of ours other than tracerd? */
static bool other_child(const char *pid, pid_t tracerd)
{
	char path[300], buf[512], *end;
	int ppid = 0;
	ssize_t n;
	int fd;

	if (atoi(pid) == tracerd)
		return false;
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	end = strrchr(buf, ')');	/* the name may hold anything */
	return end && sscanf(end + 1, " %*c %d", &ppid) == 1 &&
		ppid == getpid();
}

/* Without /proc/self/task/TID/children: every /proc/PID/stat. */
static bool scan_proc(pid_t tracerd)
{
	DIR *dp = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (!dp)
		return false;
	while (!found && (e = readdir(dp)))
		found = e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
			other_child(e->d_name, tracerd);
	closedir(dp);
	return found;
}

/* Has tracectl a child (running, or a zombie) other than tracerd? The
 * orphans of the program's descendants are its children (subreaper). */
static bool children_left(pid_t tracerd)
{
	char path[64];
	bool found = false;
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
		 (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return scan_proc(tracerd);
	while (!found && fscanf(f, "%ld", &pid) == 1)
		found = pid != tracerd;
	fclose(f);
	return found;
}

/* "exited with status N", "was killed by signal N (NAME)". */
static void describe(char *buf, size_t size, int status)
{
	if (status > 128)
		snprintf(buf, size, "was killed by signal %d (%s)",
			 status - 128, strsignal(status - 128));
	else
		snprintf(buf, size, "exited with status %d", status);
}

/* Is there still something to wait for? */
static bool waiting(struct wait_state *w)
{
	struct tracer__run *r = w->r;
	char how[128];

	if (w->pid)
		return true;
	if (!r->follow || !children_left(r->tracerd))
		return false;
	if (w->stop) {
		fprintf(stderr, "tracectl: not waiting for the processes '%s' "
			"left running\n", r->argv[0]);
		return false;
	}
	if (!w->told) {
		describe(how, sizeof(how), r->status);
		fprintf(stderr, "tracectl: '%s' %s; waiting for the processes "
			"it left running (^C: stop waiting)\n", r->argv[0],
			how);
		w->told = true;
	}
	return true;
}

/* SIGTERM and SIGHUP go on to the running program; any of SIGINT,
 * SIGTERM and SIGHUP means: do not wait for its descendants. */
static void on_signal(struct wait_state *w, int sig)
{
	if (sig == SIGCHLD)
		return;
	if (w->pid && sig == SIGINT)
		return;		/* the terminal's: the program has it too */
	if (w->pid)
		kill(w->pid, sig);
	w->stop = true;
}

/* A signal that came before the program could start (^C while the
 * session started): the program is not run. Returns it, or 0. */
static int early_signal(void)
{
	static const struct timespec now = { 0, 0 };
	sigset_t stop;
	int sig;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigandset(&stop, &stop, &waited);
	sig = sigtimedwait(&stop, NULL, &now);
	return sig > 0 ? sig : 0;
}

/* Run the program and wait. Returns 0 or CTL_FAIL (reported). */
static int run_wait(struct tracer__run *r)
{
	struct wait_state w = { .r = r };
	int sig = early_signal();

	if (sig) {
		r->status = 128 + sig;
		r->not_run = true;
		fprintf(stderr, "tracectl: %s: '%s' not run\n", strsignal(sig),
			r->argv[0]);
		return 0;
	}
	w.pid = start(r);
	if (w.pid < 0)
		return CTL_FAIL;
	if (!w.pid)
		return 0;
	for (reap(&w); waiting(&w); reap(&w)) {
		sig = sigwaitinfo(&waited, NULL);
		if (sig > 0)
			on_signal(&w, sig);
	}
	return 0;
}

int tracer__run(struct tracer__run *r)
{
	int ret;

	if (r->follow && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		fprintf(stderr, "tracectl: warning: cannot follow the "
			"program's descendants: %s\n", strerror(errno));
	ret = run_wait(r);
	if (r->follow)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	return ret;
}
