/*
 * netuser.c - an ordinary program (not linked with libtracer) for
 * test_wrap_net.sh: its socket options, socket pairs, epoll
 * registrations, name lookups, signals sent, children waited for and
 * sleeps are recorded only through the wrappers of a preloaded libtracer.
 *
 *   netuser run VARS   makes each call, some of them failing on purpose,
 *                      and prints one line per call: its result and errno
 *                      name (the same traced and untraced); writes what
 *                      differs from run to run (fds, pids) to VARS as
 *                      "NAME VALUE" lines. Exits 0 when every result was
 *                      the expected one, 1 otherwise.
 *
 * No sleeping for synchronisation: the children are waited for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static FILE *vars;
static int failures;

/* One line: what the call gave, its errno's name when it failed. */
static void show(const char *what, long ret, int err, int ok)
{
	printf("%s %ld%s%s%s\n", what, ret, ret < 0 ? " " : "",
	       ret < 0 ? strerrorname_np(err) : "", ok ? "" : " WRONG");
	if (!ok)
		failures++;
}

static void var(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(vars, "%s ", name);
	va_start(ap, fmt);
	vfprintf(vars, fmt, ap);
	va_end(ap);
	fputc('\n', vars);
}

static void sockets(void)
{
	int sv[2], v, r, tcp, p[2];
	socklen_t len;

	r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	show("socketpair", r, errno, r == 0);
	var("socketpair", "%d %d", sv[0], sv[1]);
	r = socketpair(AF_INET, SOCK_STREAM, 0, p);
	show("socketpair_inet", r, errno, r < 0 && errno == EOPNOTSUPP);

	v = 65536;
	r = setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	show("setsockopt_sndbuf", r, errno, r == 0);
	v = 0;
	len = sizeof(v);
	r = getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, &len);
	show("getsockopt_type", r, errno, r == 0 && v == SOCK_STREAM);
	printf("type %d len %u\n", v, (unsigned)len);

	tcp = socket(AF_INET, SOCK_STREAM, 0);
	var("tcp", "%d", tcp);
	v = 1;
	r = setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
	show("setsockopt_nodelay", r, errno, r == 0);
	close(tcp);

	v = 1;
	r = setsockopt(-1, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v));
	show("setsockopt_badf", r, errno, r < 0 && errno == EBADF);
	if (pipe(p) == 0) {
		len = sizeof(v);
		r = getsockopt(p[0], SOL_SOCKET, SO_TYPE, &v, &len);
		show("getsockopt_pipe", r, errno, r < 0 && errno == ENOTSOCK);
		var("pipe", "%d", p[0]);
		close(p[0]);
		close(p[1]);
	}

	{
		struct epoll_event ev = { .events = EPOLLIN };
		int ep = epoll_create1(0);

		var("epoll", "%d", ep);
		r = epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
		show("epoll_ctl_add", r, errno, r == 0);
		ev.events = EPOLLIN | EPOLLOUT;
		r = epoll_ctl(ep, EPOLL_CTL_MOD, sv[0], &ev);
		show("epoll_ctl_mod", r, errno, r == 0);
		r = epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL);
		show("epoll_ctl_del", r, errno, r == 0);
		r = epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL);
		show("epoll_ctl_del_again", r, errno, r < 0 && errno == ENOENT);
		close(ep);
	}
	close(sv[0]);
	close(sv[1]);
}

static void lookups(void)
{
	struct addrinfo hints, *res = NULL;
	char text[64] = "-";
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo("localhost", "8080", &hints, &res);
	if (r == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)res->ai_addr;
		unsigned a = ntohl(in->sin_addr.s_addr);

		snprintf(text, sizeof(text), "%u.%u.%u.%u:%u", a >> 24,
			 a >> 16 & 255, a >> 8 & 255, a & 255,
			 ntohs(in->sin_port));
		freeaddrinfo(res);
	}
	show("getaddrinfo_localhost", r, 0, r == 0);
	printf("localhost %s\n", text);

	hints.ai_flags = AI_NUMERICHOST;
	r = getaddrinfo("not-a-number", NULL, &hints, &res);
	show("getaddrinfo_numeric", r, 0, r == EAI_NONAME);
}

static void children(void)
{
	int st = 0, r;
	pid_t a, b, c;
	siginfo_t si;

	/* a: killed while it waits; first a WNOHANG look (nothing yet). */
	a = fork();
	if (a == 0) {
		for (;;)
			pause();
	}
	var("killed", "%d", (int)a);
	r = waitpid(a, &st, WNOHANG);
	show("waitpid_wnohang", r, errno, r == 0);
	r = kill(a, SIGKILL);
	show("kill", r, errno, r == 0);
	r = waitpid(a, &st, 0);
	show("waitpid_killed", r == a ? 1 : r, errno,
	     r == a && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* b: exits 3, waited for by wait4; c: exits 5, by waitid. */
	b = fork();
	if (b == 0)
		_exit(3);
	var("exited", "%d", (int)b);
	r = wait4(b, &st, 0, NULL);
	show("wait4_exited", r == b ? 1 : r, errno,
	     r == b && WIFEXITED(st) && WEXITSTATUS(st) == 3);
	c = fork();
	if (c == 0)
		_exit(5);
	var("waitid", "%d", (int)c);
	memset(&si, 0, sizeof(si));
	r = waitid(P_PID, (id_t)c, &si, WEXITED);
	show("waitid_exited", r, errno,
	     r == 0 && si.si_pid == c && si.si_status == 5);
	/* d: exits 7, waited for by wait(NULL): the status still recorded */
	c = fork();
	if (c == 0)
		_exit(7);
	var("wait", "%d", (int)c);
	r = wait(NULL);
	show("wait_null", r == c ? 1 : r, errno, r == c);

	r = waitpid(-1, &st, 0);
	show("waitpid_none", r, errno, r < 0 && errno == ECHILD);
	r = kill(getpid(), 999);
	show("kill_einval", r, errno, r < 0 && errno == EINVAL);
	r = kill(getpid(), 0);
	show("kill_probe", r, errno, r == 0);
	var("self", "%d", (int)getpid());
}

static long long ns_between(const struct timespec *a,
			    const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL +
	       (b->tv_nsec - a->tv_nsec);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void sleeps(void)
{
	struct timespec t = { 0, 20000000 }, rem = { 0, 0 }, t0, t1;
	struct sigaction sa;
	struct itimerval it;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = nanosleep(&t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	show("nanosleep_20ms", r, errno,
	     r == 0 && ns_between(&t0, &t1) >= 20000000);

	t.tv_nsec = 10000000;
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL);
	show("clock_nanosleep_10ms", r, r, r == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t1.tv_nsec += 5000000;
	if (t1.tv_nsec >= 1000000000) {
		t1.tv_sec++;
		t1.tv_nsec -= 1000000000;
	}
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t1, NULL);
	show("clock_nanosleep_abs", r, r, r == 0);
	var("abs_ns", "%lld", (long long)t1.tv_sec * 1000000000LL + t1.tv_nsec);

	r = usleep(3000);
	show("usleep_3ms", r, errno, r == 0);

	t.tv_sec = 0;
	t.tv_nsec = 2000000000L;	/* invalid */
	r = nanosleep(&t, NULL);
	show("nanosleep_einval", r, errno, r < 0 && errno == EINVAL);
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL);
	show("clock_nanosleep_einval", r, r, r == EINVAL);

	/* The program's own signal interrupts a long sleep: EINTR, rem. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART */
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 50000;
	setitimer(ITIMER_REAL, &it, NULL);
	t.tv_sec = 5;
	t.tv_nsec = 0;
	r = nanosleep(&t, &rem);
	show("nanosleep_alarm", r, errno, r < 0 && errno == EINTR);
	printf("rem over 4s %s\n", rem.tv_sec >= 4 ? "yes" : "no");
	var("rem_ns", "%lld", (long long)rem.tv_sec * 1000000000LL +
			      rem.tv_nsec);
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: netuser run VARS\n");
		return 2;
	}
	vars = fopen(argv[2], "w");
	if (!vars) {
		perror(argv[2]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sockets();
	lookups();
	children();
	sleeps();
	fclose(vars);
	return failures ? 1 : 0;
}
