/*
 * procee.c - an ordinary program (not linked with libtracer) for
 * test_wrap_proc.sh: what it does is recorded only through the wrappers
 * of a preloaded libtracer (proc:*, pthread:*).
 *
 *   procee main OUT     forks, execs, spawns, handles signals, runs named
 *                       threads that contend a mutex and wait on a
 *                       condition variable; writes what it saw to OUT
 *                       (lines starting with '#' differ from run to run:
 *                       pids, addresses; the others must not, traced or
 *                       not) and exits with status 3 (exit())
 *   procee exec N       execs itself as "exec N-1" (execl, execlp,
 *                       execle, execv in turn); "exec 0" returns 5 from
 *                       main
 *   procee records OUT ARG...
 *                       writes "# ppid PPID", starts a joinable and a
 *                       detached thread (each
 *                       writes "# thread KIND PTHREAD_T TID" to OUT),
 *                       waits until both have ended, spawns
 *                       "true ARG..." (posix_spawnp), then execs
 *                       /bin/true with the same argv (execv)
 *   procee quick N      N joinable threads, one at a time, that return
 *                       at once (some end before pthread_create()
 *                       returns), each joined
 *   procee storm N OUT  a signal storm: a thread sends SIGUSR1 to the
 *                       main thread while it calls wrapped functions in
 *                       a loop (N times at least, until 2000 signals were
 *                       handled), and the handler calls wrapped
 *                       functions too; writes "storm ok" when every
 *                       result and errno was right
 *
 * Synchronisation is by barrier, mutex and condition variable, never by
 * sleeping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static FILE *out;
static char self[PATH_MAX];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ---- signals -------------------------------------------------------- */

static volatile sig_atomic_t n_usr1, n_usr2, n_winch, n_hup, n_int;
static volatile sig_atomic_t usr1_self_blocked, usr1_term_blocked;
static volatile sig_atomic_t hup_self_blocked;
static volatile int usr2_signo, usr2_code, usr2_value;

static int blocked(int sig)
{
	sigset_t cur;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void h_usr1(int sig)
{
	n_usr1++;
	usr1_self_blocked = blocked(sig);
	usr1_term_blocked = blocked(SIGTERM);
}

static void h_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	n_usr2++;
	usr2_signo = sig == si->si_signo ? sig : -1;
	usr2_code = si->si_code;
	usr2_value = si->si_value.sival_int;
}

static void h_winch(int sig)
{
	(void)sig;
	n_winch++;
}

static void h_hup(int sig)
{
	n_hup++;
	hup_self_blocked = blocked(sig);
}

static void h_int(int sig)
{
	(void)sig;
	n_int++;
}

static const char *handler_name(void (*h)(int))
{
	void *p = (void *)h;

	if (p == (void *)h_usr2)
		return "h_usr2";
	if (h == SIG_DFL)
		return "SIG_DFL";
	if (h == SIG_IGN)
		return "SIG_IGN";
	if (h == h_usr1)
		return "h_usr1";
	if (h == h_winch)
		return "h_winch";
	if (h == h_hup)
		return "h_hup";
	if (h == h_int)
		return "h_int";
	return "unknown";
}

/* What sigaction() reports for sig, as one line. */
static void show(const char *name, int sig)
{
	struct sigaction o;
	unsigned long long m = 0;
	int s;

	memset(&o, 0x5a, sizeof(o));
	if (sigaction(sig, NULL, &o) < 0) {
		fprintf(out, "query %s failed %s\n", name, strerror(errno));
		return;
	}
	for (s = 1; s < 64; s++)
		if (sigismember(&o.sa_mask, s) == 1)
			m |= 1ULL << s;
	fprintf(out, "query %s handler %s flags %#x mask %#llx\n", name,
		handler_name(o.sa_handler), (unsigned)o.sa_flags, m);
}

static int install(int sig, void (*h)(int), int flags, int masked)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (masked)
		sigaddset(&sa.sa_mask, masked);
	return sigaction(sig, &sa, NULL);
}

static void signals(void)
{
	struct sigaction sa, before;
	union sigval v = { .sival_int = 42 };
	int r;

	fprintf(out, "# handler h_usr1 %p\n# handler h_usr2 %p\n"
		"# handler h_winch %p\n# handler h_hup %p\n"
		"# handler h_int %p\n", (void *)h_usr1, (void *)h_usr2,
		(void *)h_winch, (void *)h_hup, (void *)h_int);
	show("SIGPIPE-untouched", SIGPIPE);

	/* Plain handler, SIGTERM in its mask; errno kept by a success. */
	errno = 1234;
	r = install(SIGUSR1, h_usr1, SA_RESTART, SIGTERM);
	fprintf(out, "install SIGUSR1 %d errno %d\n", r, errno);
	show("SIGUSR1", SIGUSR1);
	errno = 1234;
	raise(SIGUSR1);
	fprintf(out, "after raise errno %d\n", errno);
	raise(SIGUSR1);
	fprintf(out, "SIGUSR1 handled %d self blocked %d SIGTERM blocked %d\n",
		(int)n_usr1, (int)usr1_self_blocked, (int)usr1_term_blocked);

	/* SA_SIGINFO, a queued value. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = h_usr2;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);	/* the kernel keeps it without KILL, STOP */
	r = sigaction(SIGUSR2, &sa, &before);
	fprintf(out, "install SIGUSR2 %d, before %s\n", r,
		handler_name(before.sa_handler));
	show("SIGUSR2", SIGUSR2);
	sigqueue(getpid(), SIGUSR2, v);
	fprintf(out, "SIGUSR2 handled %d signo %d code %d value %d\n",
		(int)n_usr2, usr2_signo, usr2_code, usr2_value);

	/* SA_RESETHAND: once, then the default (ignore for SIGWINCH). */
	install(SIGWINCH, h_winch, SA_RESETHAND, 0);
	show("SIGWINCH", SIGWINCH);
	raise(SIGWINCH);
	show("SIGWINCH-after", SIGWINCH);
	raise(SIGWINCH);
	fprintf(out, "SIGWINCH handled %d\n", (int)n_winch);

	/* SA_NODEFER: not blocked in its own handler. */
	install(SIGHUP, h_hup, SA_NODEFER, 0);
	raise(SIGHUP);
	fprintf(out, "SIGHUP handled %d self blocked %d\n", (int)n_hup,
		(int)hup_self_blocked);

	/* signal(): BSD semantics; the old one back. */
	fprintf(out, "signal SIGINT old %s\n",
		handler_name(signal(SIGINT, h_int)));
	show("SIGINT", SIGINT);
	raise(SIGINT);
	fprintf(out, "signal SIGINT again old %s\n",
		handler_name(signal(SIGINT, h_int)));
	fprintf(out, "SIGINT handled %d\n", (int)n_int);

	/* SIG_IGN passes through; the handler replaced by it. */
	install(SIGPIPE, SIG_IGN, 0, 0);
	show("SIGPIPE-ignored", SIGPIPE);
	raise(SIGPIPE);
	install(SIGHUP, SIG_DFL, 0, 0);
	show("SIGHUP-default", SIGHUP);

	/* Failures: errno is the C library's. */
	errno = 1234;
	r = install(SIGKILL, h_int, 0, 0);
	fprintf(out, "install SIGKILL %d errno %s\n", r, strerrorname_np(errno));
	errno = 1234;
	r = install(0, h_int, 0, 0);
	fprintf(out, "install 0 %d errno %s\n", r, strerrorname_np(errno));
	errno = 1234;
	r = install(NSIG + 5, h_int, 0, 0);
	fprintf(out, "install NSIG+5 %d errno %s\n", r,
		strerrorname_np(errno));
}

/* ---- threads, a contended mutex, a condition variable ------------------ */

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t quiet = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static int waiter_ready, go;

/* Holds the mutex until the other thread waits for it (glibc marks a
 * mutex with waiters: __lock 2). */
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&contended);
	pthread_barrier_wait(&barrier);
	while (__atomic_load_n(&contended.__data.__lock, __ATOMIC_RELAXED) != 2)
		sched_yield();
	pthread_mutex_unlock(&contended);
	return (void *)0x41;
}

static void *contender(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	pthread_mutex_lock(&contended);
	pthread_mutex_unlock(&contended);
	pthread_exit((void *)0x42);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cmu);
	waiter_ready = 1;
	while (!go)
		pthread_cond_wait(&cv, &cmu);
	pthread_mutex_unlock(&cmu);
	return NULL;
}

static void threads(void)
{
	pthread_t a, b, w;
	struct timespec past = { 0, 0 };
	void *ra, *rb;
	int i, r;

	fprintf(out, "# mutex contended %p\n# mutex quiet %p\n# mutex cmu %p\n"
		"# cond %p\n"
		"# start holder %p\n# start contender %p\n# start waiter %p\n",
		(void *)&contended, (void *)&quiet, (void *)&cmu, (void *)&cv,
		(void *)holder, (void *)contender, (void *)waiter);
	/* Named while they wait at the barrier (the main thread's too). */
	pthread_barrier_init(&barrier, NULL, 3);
	if (pthread_create(&a, NULL, holder, NULL) ||
	    pthread_create(&b, NULL, contender, NULL) ||
	    pthread_create(&w, NULL, waiter, NULL))
		die("pthread_create");
	errno = 1234;
	r = pthread_setname_np(a, "worker-a");
	fprintf(out, "setname worker-a %d errno %d\n", r, errno);
	pthread_setname_np(b, "worker-b");
	pthread_setname_np(w, "waiter");
	r = pthread_setname_np(w, "a-name-longer-than-15-bytes");
	fprintf(out, "setname too long %s\n", strerrorname_np(r));
	pthread_barrier_wait(&barrier);

	/* Uncontended: no pthread:mutex_wait (by default, nothing). */
	for (i = 0; i < 10; i++) {
		errno = 1234;
		pthread_mutex_lock(&quiet);
		pthread_mutex_unlock(&quiet);
		if (errno != 1234)
			fprintf(out, "mutex changed errno to %d\n", errno);
	}
	r = pthread_mutex_trylock(&quiet);
	fprintf(out, "trylock %d\n", r);
	r = pthread_mutex_trylock(&quiet);
	fprintf(out, "trylock again %s\n", strerrorname_np(r));
	pthread_mutex_unlock(&quiet);

	/* The waiter is in pthread_cond_wait once it let go of the mutex. */
	pthread_mutex_lock(&cmu);
	while (!waiter_ready) {
		pthread_mutex_unlock(&cmu);
		sched_yield();
		pthread_mutex_lock(&cmu);
	}
	go = 1;
	pthread_cond_signal(&cv);
	r = pthread_cond_timedwait(&cv, &cmu, &past);
	fprintf(out, "timedwait in the past %s\n", strerrorname_np(r));
	pthread_mutex_unlock(&cmu);

	pthread_join(a, &ra);
	pthread_join(b, &rb);
	pthread_join(w, NULL);
	fprintf(out, "holder returned %p contender exited %p\n", ra, rb);
}

/* ---- processes ----------------------------------------------------------- */

static void processes(void)
{
	char exec_[] = "exec", three[] = "3", true_[] = "true";
	char *argv[] = { self, exec_, three, NULL };
	char *targv[] = { true_, NULL };
	pid_t c, s;
	int st, r;

	/* A failed exec: its errno. */
	errno = 1234;
	r = execv("/nonexistent/prog", argv);
	fprintf(out, "execv nonexistent %d errno %s\n", r,
		strerrorname_np(errno));

	r = posix_spawn(&s, "/bin/true", NULL, NULL, targv, environ);
	fprintf(out, "posix_spawn %d\n# spawned %d\n", r, (int)s);
	waitpid(s, &st, 0);
	fprintf(out, "spawned status %d\n", WEXITSTATUS(st));

	/* fork, then a chain of four execs ending with main's return 5. */
	fflush(out);
	errno = 1234;
	c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		execv(self, argv);
		_exit(127);
	}
	fprintf(out, "fork errno %d\n# exec child %d\n", errno, (int)c);
	waitpid(c, &st, 0);
	fprintf(out, "exec chain status %d\n", WEXITSTATUS(st));

	/* A child that ends with _exit(). */
	fflush(out);
	c = fork();
	if (c == 0)
		_exit(9);
	fprintf(out, "# exit child %d\n", (int)c);
	waitpid(c, &st, 0);
	fprintf(out, "_exit child status %d\n", WEXITSTATUS(st));
}

static int exec_chain(int n)
{
	char num[16], exec_[] = "exec";
	char *argv[] = { self, exec_, num, NULL };

	if (n <= 0)
		return 5;	/* from main: proc:exit status 5 */
	snprintf(num, sizeof(num), "%d", n - 1);
	switch (n % 4) {
	case 3:
		execl(self, self, "exec", num, (char *)NULL);
		break;
	case 2:
		execlp(self, self, "exec", num, (char *)NULL);
		break;
	case 1:
		execle(self, self, "exec", num, (char *)NULL, environ);
		break;
	default:
		execv(self, argv);
	}
	die("exec");
	return 1;
}

/* ---- the storm ------------------------------------------------------------ */

static pthread_mutex_t storm_mu = PTHREAD_MUTEX_INITIALIZER;
static int devnull;
static volatile int stop;
static long handled, handler_bad;

#define STORM_HANDLED	2000

static void h_dummy(int sig)
{
	(void)sig;
}

static void h_storm(int sig)
{
	struct sigaction o;

	(void)sig;
	if (write(devnull, "h", 1) != 1)
		handler_bad++;
	if (pthread_mutex_trylock(&storm_mu) == 0)
		pthread_mutex_unlock(&storm_mu);
	if (sigaction(SIGUSR2, NULL, &o) < 0 || o.sa_handler != h_dummy)
		handler_bad++;
	handled++;
}

static void *sender(void *arg)
{
	pthread_t main_th = *(pthread_t *)arg;
	long sent = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pthread_kill(main_th, SIGUSR1);
		sent++;
		if (sent % 16 == 0)
			sched_yield();
	}
	return (void *)sent;
}

static int storm(long n)
{
	pthread_t main_th = pthread_self(), th;
	struct sigaction o;
	char buf[64] = { 0 };
	long i, bad = 0;
	void *sent;

	devnull = open("/dev/null", 1);
	if (devnull < 0)
		die("/dev/null");
	install(SIGUSR1, h_storm, SA_RESTART, 0);
	install(SIGUSR2, h_dummy, 0, 0);
	if (pthread_create(&th, NULL, sender, &main_th))
		die("pthread_create");
	/* At least n rounds and STORM_HANDLED signals handled. */
	for (i = 0; i < n || __atomic_load_n(&handled, __ATOMIC_RELAXED) <
			     STORM_HANDLED; i++) {
		errno = 1234;
		if (write(devnull, buf, sizeof(buf)) != sizeof(buf))
			bad++;
		if (pthread_mutex_lock(&storm_mu) ||
		    pthread_mutex_unlock(&storm_mu))
			bad++;
		if (pthread_mutex_trylock(&storm_mu) == 0)
			pthread_mutex_unlock(&storm_mu);
		if (sigaction(SIGUSR2, NULL, &o) < 0 || o.sa_handler != h_dummy)
			bad++;
		if (errno != 1234)
			bad++;
		if (i % 64 == 0)	/* the table written while read */
			install(SIGUSR2, h_dummy, 0, 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, &sent);
	fprintf(out, "# sent %ld handled %ld\n", (long)sent, handled);
	if (bad || handler_bad || handled == 0)
		fprintf(out, "storm failed: %ld bad, %ld bad in the handler, "
			"%ld handled\n", bad, handler_bad, handled);
	else
		fprintf(out, "storm ok\n");
	return 0;
}

/* ---- records ------------------------------------------------------------- */

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rec_cv = PTHREAD_COND_INITIALIZER;
static int rec_done;

static pid_t rec_detached;	/* the detached thread's tid */

static void *rec_thread(void *kind)
{
	pthread_mutex_lock(&rec_mu);
	fprintf(out, "# thread %s %#lx %d\n", (const char *)kind,
		(unsigned long)pthread_self(), (int)gettid());
	if (!strcmp(kind, "detached"))
		rec_detached = gettid();
	rec_done++;
	pthread_cond_broadcast(&rec_cv);
	pthread_mutex_unlock(&rec_mu);
	return NULL;
}

/* argv[0] is procee's OUT: "true", then the arguments after it. */
static int records(char **argv)
{
	static char joinable[] = "joinable", detached[] = "detached",
		    true_[] = "true";
	pthread_attr_t attr;
	pthread_t th, dt;
	pid_t child;
	int status;
	char task[64];

	fprintf(out, "# ppid %d\n", (int)getppid());
	if (pthread_create(&th, NULL, rec_thread, joinable))
		die("pthread_create");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&dt, &attr, rec_thread, detached))
		die("pthread_create");
	pthread_join(th, NULL);
	pthread_mutex_lock(&rec_mu);
	while (rec_done < 2)
		pthread_cond_wait(&rec_cv, &rec_mu);
	pthread_mutex_unlock(&rec_mu);
	/* Its end too (exec would cut it short): gone from /proc. */
	snprintf(task, sizeof(task), "/proc/self/task/%d", (int)rec_detached);
	while (access(task, F_OK) == 0)
		sched_yield();
	argv[0] = true_;
	if ((errno = posix_spawnp(&child, "true", NULL, NULL, argv, environ)))
		die("posix_spawnp");
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	fprintf(out, "# spawned %d\n", (int)child);
	fclose(out);
	execv("/bin/true", argv);
	die("execv");
	return 1;
}

/* ---- quick threads ------------------------------------------------------- */

static void *quick_thread(void *arg)
{
	return arg;
}

static int quick(int n)
{
	pthread_t th;
	int i;

	for (i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, quick_thread, NULL))
			die("pthread_create");
		pthread_join(th, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		die("/proc/self/exe");
	self[n] = '\0';
	if (argc == 3 && !strcmp(argv[1], "quick"))
		return quick(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return exec_chain(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "records")) {
		out = fopen(argv[2], "w");
		if (!out)
			die(argv[2]);
		setvbuf(out, NULL, _IOLBF, 0);
		return records(argv + 2);
	}
	if (argc != 4 && !(argc == 3 && !strcmp(argv[1], "main"))) {
		fprintf(stderr, "usage: procee main OUT | exec N | "
			"records OUT ARG... | quick N | storm N OUT\n");
		return 2;
	}
	out = fopen(argv[argc - 1], "w");
	if (!out)
		die(argv[argc - 1]);
	setvbuf(out, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "storm")) {
		storm(atol(argv[2]));
		fclose(out);
		return 0;
	}
	fprintf(out, "# pid %d ppid %d exe %s\n", (int)getpid(),
		(int)getppid(), self);
	signals();
	threads();
	processes();
	fclose(out);
	exit(3);
}
