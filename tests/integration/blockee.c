/*
 * blockee - an uninstrumented program (not linked with libtracer) that
 * blocks in every call a program waits in, for test_blocking.sh, which
 * runs it untraced and preloaded while tracectl start/filter/stop changes
 * rain update signals on it.
 *
 * It reads commands on standard input and answers on standard output:
 *
 *   r      one round: every call once (below), one line each, then "end"
 *   p      the probe (below): one line
 *   q      exit
 *
 * Each call waits a known time: its own timeout, or until a waker thread
 * (or child process) of the program acts at a deadline taken before the
 * call (writes to a pipe, connects, posts a semaphore, exits, sends
 * SIGUSR1 or SIGUSR2), or until the program's own SIGALRM, whose handler
 * is installed without SA_RESTART. Its line is
 *
 *   NAME ret RESULT errno ERRNO early 0|1
 *
 * with RESULT the return value (or a name for it: "fd", "child", a
 * signal), ERRNO the errno after the call ("kept" when a successful call
 * left the value set before it) and early 1 when the call returned before
 * the time it had to wait. Nothing in a line depends on timing but that:
 * the lines of a traced round are those of an untraced one. A few lines
 * say whether the time left that select(), nanosleep() and
 * clock_nanosleep() give back after the alarm is part of the timeout.
 *
 * The probe is not about a wrapped call: it blocks in ppoll system calls
 * made with syscall(2), which no wrapper sees, until one fails with EINTR
 * (20 tries of 100 ms at most): "raw interrupted 1" says that update
 * signals reach the thread while it is blocked.
 */
#define _GNU_SOURCE
/* poll() and ppoll() on an array of known size: __poll_chk, __ppoll_chk. */
#if defined(__OPTIMIZE__) && !defined(_FORTIFY_SOURCE)
#define _FORTIFY_SOURCE 2
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS		200	/* what each call waits */
#define ALARM_MS	100	/* the program's SIGALRM (alarm cases) */

/* errno before each call: a successful call keeps it. */
#define MARK		12345

static int epfd, pipefd[2], lsock, semid, msqid;
static struct sockaddr_un addr;
static sem_t sem;
static pthread_t main_thread;
static volatile sig_atomic_t alarms, usr1s;

/* ---- time --------------------------------------------------------------- */

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec ts_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };

	return t;
}

/* CLOCK (realtime or monotonic) now + ms, as an absolute timespec. */
static struct timespec abs_ms(clockid_t clock, long ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_nsec += ms % 1000 * 1000000;
	t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

/* Sleep until the monotonic time `until` (ns) whatever interrupts: a
 * system call of its own, which no wrapper changes. */
static void raw_sleep_until(long long until)
{
	struct timespec t = { until / 1000000000, until % 1000000000 };

	while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
		       &t, NULL) != 0 && errno == EINTR)
		;
}

/* ---- what wakes a call ------------------------------------------------ */

enum wake { W_WRITE, W_CONNECT, W_USR1, W_USR2, W_POST, W_MSG };

struct waker {
	pthread_t th;
	enum wake what;
	long long at;		/* monotonic ns */
};

static void *waker_main(void *arg)
{
	struct waker *w = arg;
	struct { long type; char c; } m = { 1, 'x' };
	int fd;

	raw_sleep_until(w->at);
	switch (w->what) {
	case W_WRITE:
		if (write(pipefd[1], "x", 1) != 1)
			abort();
		break;
	case W_CONNECT:
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr,
				      sizeof(addr)) < 0)
			abort();
		close(fd);
		break;
	case W_USR1:
		pthread_kill(main_thread, SIGUSR1);
		break;
	case W_USR2:
		pthread_kill(main_thread, SIGUSR2);
		break;
	case W_POST:
		sem_post(&sem);
		break;
	case W_MSG:
		if (msgsnd(msqid, &m, 1, 0) < 0)
			abort();
		break;
	}
	return NULL;
}

static void waker_start(struct waker *w, enum wake what, long long at)
{
	w->what = what;
	w->at = at;
	if (pthread_create(&w->th, NULL, waker_main, w))
		abort();
}

static void waker_join(struct waker *w)
{
	pthread_join(w->th, NULL);
}

/* ---- one call --------------------------------------------------------- */

struct result {
	const char *name;
	long long ret;
	const char *text;	/* instead of ret when set */
	int err;
	long long start, min;	/* ns; it must not return before min */
};

static void begin(struct result *r, const char *name, long long min_ms)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->start = now_ns();
	r->min = r->start + min_ms * 1000000;
	errno = MARK;
}

static void end(struct result *r, long long ret)
{
	long long t = now_ns();

	r->err = errno;
	r->ret = ret;
	printf("%s ret ", r->name);
	if (r->text)
		printf("%s", r->text);
	else
		printf("%lld", r->ret);
	printf(" errno %s early %d\n",
	       r->err == MARK ? "kept" : strerrorname_np(r->err),
	       t < r->min);
}

/* An absolute deadline: `min` is that time, whenever the call started. */
static void end_after(struct result *r, long long ret, long long at)
{
	r->min = at;
	end(r, ret);
}

/* ---- the calls ---------------------------------------------------------- */

static void timeouts(void)
{
	struct result r;
	struct epoll_event ev;
	struct timespec ts = ts_ms(WAIT_MS), rem, abs;
	struct timeval tv = { 0, WAIT_MS * 1000 };
	struct sembuf op = { 0, -1, 0 };
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct pollfd pf[1] = { { pipefd[0], POLLIN, 0 } };	/* empty */
	volatile nfds_t nfds = 1;	/* not known when compiled */
	int e;

	begin(&r, "poll", WAIT_MS);
	end(&r, poll(NULL, 0, WAIT_MS));
	begin(&r, "ppoll", WAIT_MS);
	end(&r, ppoll(NULL, 0, &ts, NULL));
	begin(&r, "poll_fortified", WAIT_MS);
	end(&r, poll(pf, nfds, WAIT_MS));
	begin(&r, "ppoll_fortified", WAIT_MS);
	end(&r, ppoll(pf, nfds, &ts, NULL));
	begin(&r, "select", WAIT_MS);
	end(&r, select(0, NULL, NULL, NULL, &tv));
	begin(&r, "pselect", WAIT_MS);
	end(&r, pselect(0, NULL, NULL, NULL, &ts, NULL));
	begin(&r, "epoll_wait", WAIT_MS);
	end(&r, epoll_wait(epfd, &ev, 1, WAIT_MS));
	begin(&r, "epoll_pwait", WAIT_MS);
	end(&r, epoll_pwait(epfd, &ev, 1, WAIT_MS, NULL));
	begin(&r, "epoll_pwait2", WAIT_MS);
	end(&r, epoll_pwait2(epfd, &ev, 1, &ts, NULL));
	begin(&r, "nanosleep", WAIT_MS);
	end(&r, nanosleep(&ts, &rem));
	begin(&r, "clock_nanosleep", WAIT_MS);
	end(&r, clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &rem));
	abs = abs_ms(CLOCK_MONOTONIC, WAIT_MS);
	begin(&r, "clock_nanosleep_abs", 0);
	e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	end_after(&r, e, abs.tv_sec * 1000000000LL + abs.tv_nsec);
	begin(&r, "sleep", 1000);
	end(&r, sleep(1));
	begin(&r, "usleep", WAIT_MS);
	end(&r, usleep(WAIT_MS * 1000));
	begin(&r, "thrd_sleep", WAIT_MS);
	end(&r, thrd_sleep(&ts, &rem));
	begin(&r, "sigtimedwait", WAIT_MS);
	{
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		end(&r, sigtimedwait(&s, NULL, &ts));
	}
	begin(&r, "sem_timedwait", WAIT_MS);
	abs = abs_ms(CLOCK_REALTIME, WAIT_MS);
	end(&r, sem_timedwait(&sem, &abs));
	begin(&r, "sem_clockwait", WAIT_MS);
	abs = abs_ms(CLOCK_MONOTONIC, WAIT_MS);
	end(&r, sem_clockwait(&sem, CLOCK_MONOTONIC, &abs));
	begin(&r, "semtimedop", WAIT_MS);
	end(&r, semtimedop(semid, &op, 1, &ts));
	pthread_mutex_lock(&m);
	begin(&r, "pthread_cond_timedwait", WAIT_MS);
	abs = abs_ms(CLOCK_REALTIME, WAIT_MS);
	e = pthread_cond_timedwait(&c, &m, &abs);
	end(&r, e);
	pthread_mutex_unlock(&m);
}

/* A call woken by a waker at now + WAIT_MS. */
#define WOKEN(name, wake, call, text_) do { \
	struct waker w; \
	long long w_at = now_ns() + WAIT_MS * 1000000LL; \
	long long v; \
	waker_start(&w, (wake), w_at); \
	begin(&r, (name), 0); \
	v = (call); \
	r.text = (text_); \
	end_after(&r, v, w_at); \
	waker_join(&w); \
} while (0)

static void woken(void)
{
	struct result r;
	struct { long type; char c; } m;
	sigset_t none, usr2;
	siginfo_t si;
	char c;
	long long at;
	pid_t child;
	int fd;

	sigemptyset(&none);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	WOKEN("pause", W_USR1, pause(), NULL);
	WOKEN("sigsuspend", W_USR1, sigsuspend(&none), NULL);
	WOKEN("read_pipe", W_WRITE, read(pipefd[0], &c, 1), NULL);
	WOKEN("accept", W_CONNECT, fd = accept(lsock, NULL, NULL),
	      fd >= 0 ? "fd" : NULL);
	if (fd >= 0)
		close(fd);
	WOKEN("sem_wait", W_POST, sem_wait(&sem), NULL);
	WOKEN("sigwaitinfo", W_USR2, sigwaitinfo(&usr2, &si),
	      v == SIGUSR2 ? "SIGUSR2" : NULL);
	WOKEN("msgrcv", W_MSG, msgrcv(msqid, &m, 1, 0, 0), NULL);

	/* waitpid: a child that exits at the deadline. */
	at = now_ns() + WAIT_MS * 1000000LL;
	child = fork();
	if (child == 0) {
		raw_sleep_until(at);
		_exit(0);
	}
	begin(&r, "waitpid", 0);
	{
		pid_t p = waitpid(child, NULL, 0);

		r.text = p == child ? "child" : NULL;
		end_after(&r, p, at);
	}
}

/* The program's own SIGALRM (no SA_RESTART) after ALARM_MS. */
static void alarm_in(long ms)
{
	struct itimerval it = { { 0, 0 }, { ms / 1000, ms % 1000 * 1000 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* The call must not return before the alarm, nor after its timeout. The
 * start is taken before the alarm is armed (and before any absolute
 * deadline is computed): a thread preempted in between would otherwise
 * see the alarm come "early" by the time it was off the CPU. */
#define ALARMED(name, call) do { \
	begin(&r, (name), ALARM_MS); \
	alarm_in(ALARM_MS); \
	end(&r, (call)); \
	alarm_in(0); \
} while (0)

/* Is t some but not all of WAIT_MS (the time left when interrupted)? */
static int partly(const struct timespec *t)
{
	return t->tv_sec == 0 && t->tv_nsec > 0 &&
	       t->tv_nsec < WAIT_MS * 1000000L;
}

static void alarmed(void)
{
	struct result r;
	struct epoll_event ev;
	struct timespec ts = ts_ms(WAIT_MS), rem, abs;
	struct timeval tv = { 0, WAIT_MS * 1000 };
	sigset_t usr2;

	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	ALARMED("alarm_poll", poll(NULL, 0, WAIT_MS));
	ALARMED("alarm_select", select(0, NULL, NULL, NULL, &tv));
	printf("alarm_select_left_partly %d\n", tv.tv_sec == 0 &&
	       tv.tv_usec > 0 && tv.tv_usec < WAIT_MS * 1000);
	ALARMED("alarm_epoll_wait", epoll_wait(epfd, &ev, 1, WAIT_MS));
	ALARMED("alarm_nanosleep", nanosleep(&ts, &rem));
	printf("alarm_nanosleep_rem_partly %d\n", partly(&rem));
	ALARMED("alarm_clock_nanosleep",
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &rem));
	printf("alarm_clock_nanosleep_rem_partly %d\n", partly(&rem));
	ALARMED("alarm_sleep", sleep(2));
	ALARMED("alarm_usleep", usleep(WAIT_MS * 1000));
	ALARMED("alarm_pause", pause());
	ALARMED("alarm_sigtimedwait", sigtimedwait(&usr2, NULL, &ts));
	abs = abs_ms(CLOCK_REALTIME, WAIT_MS);
	ALARMED("alarm_sem_timedwait", sem_timedwait(&sem, &abs));
	printf("alarm_handled %d\n", (int)alarms);
	alarms = 0;
}

/* ---- proof that the storm reaches blocked calls ------------------------ */

static void raw(void)
{
	struct timespec t;
	int i, hit = 0;

	for (i = 0; i < 20 && !hit; i++) {
		t = ts_ms(100);	/* the kernel writes the time left */
		/* A wrapped call: the thread takes a buffer in a session,
		 * and is then sent the update signal. */
		poll(NULL, 0, 0);
		hit = syscall(SYS_ppoll, NULL, 0, &t, NULL, 0) < 0 &&
		      errno == EINTR;
	}
	printf("raw interrupted %d\n", hit);
}

static void round_(void)
{
	timeouts();
	woken();
	alarmed();
	printf("usr1_handled %d\n", (int)usr1s);
	usr1s = 0;
	printf("end\n");
}

/* ---- set-up ----------------------------------------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1s++;
}

static void setup(void)
{
	struct sigaction sa;
	sigset_t usr2;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);	/* taken by sigwaitinfo only */
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	main_thread = pthread_self();

	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || pipe(pipefd) < 0 || sem_init(&sem, 0, 0) < 0)
		abort();
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
		 "blockee-%d", (int)getpid());	/* abstract */
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&addr,
			      sizeof(addr)) < 0 || listen(lsock, 4) < 0)
		abort();
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	msqid = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (semid < 0 || msqid < 0)
		abort();
}

static void cleanup(void)
{
	semctl(semid, 0, IPC_RMID);
	msgctl(msqid, IPC_RMID, NULL);
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	atexit(cleanup);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == 'r')
			round_();
		else if (line[0] == 'p')
			raw();
		else if (line[0] == 'q')
			break;
	}
	return 0;
}
