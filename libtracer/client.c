/*
 * client.c - registration with tracerd, and the listener thread.
 *
 * The library constructor connects to tracerd (tracer__client_start),
 * sends a Register message and starts the listener thread, then waits a
 * bounded time for the reply. Without a daemon the connection fails at
 * once and the program runs untraced; a daemon that answers late is still
 * handled by the listener, so the process becomes traced when it does.
 *
 * The listener thread blocks every signal (the program's signals are not
 * ours) and serves the socket: the registration reply (control page,
 * eventfd, first pool segment, the filter to start with), new segments,
 * and new event filters, which it turns into enable tables (callsites.c,
 * filter.c) and confirms with FilterApplied. Call sites are sent by
 * the thread that loads their module (tracer__client_sync_callsites), or
 * by the listener when the registration completes, so tracerd knows every
 * call site before any of its events.
 *
 * A daemon whose listen backlog is full (many processes registering at
 * once) is waited for, within the same bound. A child of fork() runs
 * tracer__client_fork_child() and then tracer__client_start() again from
 * the fork handler (tracer.c): a new connection, listener, control page
 * and pool; the update signal's handler stays as the parent installed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "paths.h"
#include "proto/wire.h"

#define BATCH	512	/* call sites per message */

static int sock = -1;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond;
static int reg_state;		/* 0 waiting, 1 registered, <0 -errno */
static bool verbose;
static int update_signal;	/* signal.c's, 0: none */
static bool signal_installed;
static void *ctl_map;		/* tracerd's control page, once mapped */
static size_t ctl_size;
/* The message the listener is handling: no thread of a child of fork()
 * will free it, so the child does. */
static tracer_msg *in_flight;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Diagnostics only with TRACER_VERBOSE: the program's output is its own. */
static void say(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fputs("libtracer: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool tracer__client_registered(void)
{
	return __atomic_load_n(&reg_state, __ATOMIC_ACQUIRE) == 1;
}

static void set_state(int st)
{
	pthread_mutex_lock(&lock);
	if (reg_state == 0 || st < 0)
		__atomic_store_n(&reg_state, st, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* The process's name and arguments, from /proc (bounded). */
static size_t read_cmdline(char *buf, size_t size)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

static void prctl_name(char name[17])
{
	prctl(PR_GET_NAME, name, 0, 0, 0);
	name[16] = '\0';
}

static int send_register(void)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Register r = TRACER__REGISTER__INIT;
	char cmd[4096], name[17] = "", *argv[64];
	size_t len = read_cmdline(cmd, sizeof(cmd)), off = 0, n = 0;
	struct timespec rt;

	while (off < len && n < TRACER_ARRAY_SIZE(argv)) {
		argv[n++] = cmd + off;
		off += strlen(cmd + off) + 1;
	}
	prctl_name(name);
	clock_gettime(CLOCK_REALTIME, &rt);
	r.pid = (uint32_t)getpid();
	r.ppid = (uint32_t)getppid();
	r.name = name;
	r.n_argv = n;
	r.argv = argv;
	r.monotonic_ns = tracer__clock_now();
	r.start_time_ns = (uint64_t)rt.tv_sec * 1000000000ULL +
			  (uint64_t)rt.tv_nsec;
	r.signal = update_signal;
	m.body_case = TRACER__MESSAGE__BODY_REGISTER;
	m.register_ = &r;
	return tracer__wire_send(sock, &m, NULL, 0, 1000);
}

/* Send the call sites registered since the last call, in batches. */
static int send_callsites_locked(void)
{
	struct tracer_callsite *cs[BATCH];
	Tracer__CallSite items[BATCH], *ptrs[BATCH];
	char types[BATCH][TRACER_MAX_ARGS + 1];
	size_t n, i;
	int ret = 0;

	while (!ret && (n = tracer__callsites_pending(cs, BATCH)) > 0) {
		Tracer__Message m = TRACER__MESSAGE__INIT;
		Tracer__CallSites sites = TRACER__CALL_SITES__INIT;

		for (i = 0; i < n; i++) {
			tracer__call_site__init(&items[i]);
			memcpy(types[i], cs[i]->types, TRACER_MAX_ARGS);
			types[i][cs[i]->nargs] = '\0';
			items[i].id = cs[i]->id;
			items[i].vital = cs[i]->vital != 0;
			items[i].types = types[i];
			items[i].line = cs[i]->line;
			items[i].file = (char *)(cs[i]->file ? cs[i]->file : "");
			items[i].name = (char *)(cs[i]->name ? cs[i]->name : "");
			items[i].format = (char *)(cs[i]->format ?
						   cs[i]->format : "");
			ptrs[i] = &items[i];
		}
		sites.n_sites = n;
		sites.sites = ptrs;
		m.body_case = TRACER__MESSAGE__BODY_CALL_SITES;
		m.call_sites = &sites;
		ret = tracer__wire_send(sock, &m, NULL, 0, 1000);
	}
	return ret;
}

/*
 * Called by the listener and by the thread that registers a module, so
 * that tracerd knows a call site before any of its events can be read.
 */
static int send_callsites(void)
{
	int ret;

	pthread_mutex_lock(&send_lock);
	tracer__callsites_lock();
	ret = send_callsites_locked();
	tracer__callsites_unlock();
	pthread_mutex_unlock(&send_lock);
	return ret;
}

void tracer__client_sync_callsites(void)
{
	if (tracer__client_registered())
		send_callsites();
}

#define FORK_LOCK_MS	5

/* Whether the forking thread holds both locks (set before fork, read
 * after it by the same thread, in the parent and in the child). */
static __thread bool fork_locked;

/*
 * The order of send_callsites(): send_lock, then the registry's lock;
 * liburcu-bp's last (the listener never holds ours during a grace period).
 */
void tracer__client_fork_prepare(void)
{
	int saved = errno;
	struct timespec t;

	tracer__deadline_ms(&t, FORK_LOCK_MS);
	fork_locked = false;
	if (!pthread_mutex_timedlock(&send_lock, &t)) {
		if (!tracer__callsites_trylock(FORK_LOCK_MS))
			fork_locked = true;
		else
			pthread_mutex_unlock(&send_lock);
	}
	tracer__filter_fork_prepare();
	errno = saved;
}

void tracer__client_fork_parent(void)
{
	int saved = errno;

	tracer__filter_fork_parent();
	if (fork_locked) {
		tracer__callsites_unlock();
		pthread_mutex_unlock(&send_lock);
	}
	errno = saved;
}

/*
 * The parent's registration: its connection, its control page, and the
 * message its listener was handling when the parent forked.
 */
static void drop_parent_registration(void)
{
	tracer_msg *m = __atomic_load_n(&in_flight, __ATOMIC_ACQUIRE);

	in_flight = NULL;
	if (m)
		tracer__wire_free(m);
	if (sock >= 0)
		close(sock);
	sock = -1;
	if (ctl_map)
		munmap(ctl_map, ctl_size);
	ctl_map = NULL;
	reg_state = 0;
}

void tracer__client_fork_child(void)
{
	tracer__callsites_fork_child(fork_locked);
	pthread_mutex_init(&send_lock, NULL);
	pthread_mutex_init(&lock, NULL);
	drop_parent_registration();
	tracer__pool_fork_child();
	tracer__filter_fork_child();	/* last: it unblocks signals */
}

static int send_locked(const tracer_msg *m)
{
	int ret;

	pthread_mutex_lock(&send_lock);
	ret = tracer__wire_send(sock, m, NULL, 0, 1000);
	pthread_mutex_unlock(&send_lock);
	return ret;
}

/* Switch to filter f and tell tracerd. */
static int apply_filter(const Tracer__Filter *f)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__FilterApplied a = TRACER__FILTER_APPLIED__INIT;
	struct tracer__filter_table *old = NULL;
	uint32_t on = 0, total = 0;
	int ret;

	a.code = tracer__callsites_filter(f->patterns, &on, &total, &old);
	if (a.code)
		say("cannot apply filter '%s': %s", f->patterns,
		    strerror(-a.code));
	a.generation = f->generation;
	a.enabled = on;
	a.callsites = total;
	m.body_case = TRACER__MESSAGE__BODY_FILTER_APPLIED;
	m.filter_applied = &a;
	ret = send_locked(&m);
	tracer__filter_retire(old);	/* in force already: tell first */
	return ret;
}

static void close_all(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

/* Registered: fds are the control page, the eventfd, segment 0. */
static int on_registered(const Tracer__Registered *r, int *fds, int nfds)
{
	void *ctl;
	int ret;

	if (nfds != 3 || r->control_size < sizeof(struct tracer_control)) {
		close_all(fds, nfds);
		return -EPROTO;
	}
	ctl = mmap(NULL, r->control_size, PROT_READ, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	if (ctl == MAP_FAILED) {
		close_all(fds + 1, 2);
		return -errno;
	}
	if (((struct tracer_control *)ctl)->magic != TRACER_CONTROL_MAGIC) {
		close_all(fds + 1, 2);
		return -EPROTO;
	}
	ctl_map = ctl;
	ctl_size = r->control_size;
	ret = tracer__pool_add_segment(fds[2], r->segment_size);
	if (ret) {
		close(fds[1]);
		return ret;
	}
	tracer__pool_set_wake_fd(fds[1]);
	ret = send_callsites();
	if (!ret && r->filter)
		ret = apply_filter(r->filter);
	/* Recording can start: call sites know the filter. */
	__atomic_store_n(&tracer__control, (struct tracer_control *)ctl,
			 __ATOMIC_RELEASE);
	set_state(1);
	/* Modules loaded meanwhile did not send theirs: registered now. */
	return ret ? ret : send_callsites();
}

static int on_message(tracer_msg *m, int *fds, int nfds)
{
	switch (m->body_case) {
	case TRACER__MESSAGE__BODY_REGISTERED:
		return on_registered(m->registered, fds, nfds);
	case TRACER__MESSAGE__BODY_SEGMENT:
		if (nfds != 1)
			break;
		return tracer__pool_add_segment(fds[0], m->segment->size);
	case TRACER__MESSAGE__BODY_FILTER:
		if (nfds != 0)
			break;
		return apply_filter(m->filter);
	case TRACER__MESSAGE__BODY_ERROR:
		say("tracerd refused this process: %s",
		    m->error->message ? m->error->message : "");
		close_all(fds, nfds);
		return m->error->code < 0 ? m->error->code : -EPROTO;
	default:
		break;
	}
	close_all(fds, nfds);
	return -EPROTO;
}

/* Stop tracing: tracerd is gone or spoke nonsense. */
static void disconnect(int err)
{
	__atomic_store_n(&tracer__control, &tracer__idle_control,
			 __ATOMIC_RELEASE);
	tracer__callsites_disable();
	set_state(err);
}

static void *listener(void *arg)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	int ret = 0;

	(void)arg;
	while (!ret) {
		if (poll(&p, 1, -1) < 0)
			continue;
		if (p.revents) {
			int fds[TRACER_WIRE_MAX_FDS], nfds = 0;
			tracer_msg *m;

			ret = tracer__wire_recv(sock, &m, fds, &nfds, 1000,
						NULL);
			if (ret)
				break;
			__atomic_store_n(&in_flight, m, __ATOMIC_RELAXED);
			ret = on_message(m, fds, nfds);
			/* Cleared before it is freed: never freed twice. */
			__atomic_store_n(&in_flight, NULL, __ATOMIC_RELEASE);
			tracer__wire_free(m);
		}
	}
	disconnect(ret ? ret : -ECONNRESET);
	return NULL;
}

static int start_listener(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&th, &attr, listener, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!ret)
		pthread_setname_np(th, "tracer-listener");
	return ret;
}

static int wait_registered(int timeout_ms)
{
	struct timespec dl;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	while (reg_state == 0 &&
	       pthread_cond_timedwait(&cond, &lock, &dl) != ETIMEDOUT)
		;
	st = reg_state;
	pthread_mutex_unlock(&lock);
	return st == 1 ? 0 : st == 0 ? -ETIMEDOUT : st;
}

/*
 * Once per program image: a child of fork() keeps the handler and the
 * program's own action for the signal that the parent recorded.
 */
static void install_signal(void)
{
	if (signal_installed)
		return;
	signal_installed = true;
	update_signal = tracer__signal_install();
	if (update_signal < 0) {
		say("TRACER_SIGNAL: not a real-time signal; no update signal");
		update_signal = 0;
	}
}

/*
 * A blocking connect that gives up after timeout_ms (SO_SNDTIMEO bounds a
 * Unix socket's wait for room in the daemon's backlog); the socket is
 * non-blocking once connected. Returns it, or a negative errno.
 */
static int connect_waiting(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	int fd, ret = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		ret = -errno;
	if (ret) {
		close(fd);
		return ret == -EAGAIN || ret == -EINPROGRESS ? -ETIMEDOUT : ret;
	}
	return fd;
}

/* What is left of timeout_ms since start (tracer__clock_now()), >= 0. */
static int ms_left(uint64_t start, int timeout_ms)
{
	int64_t left = timeout_ms -
		       (int64_t)((tracer__clock_now() - start) / 1000000);

	return left > 0 ? (int)left : 0;
}

/*
 * Connect to the first daemon that answers. One whose backlog is full
 * (busy with many processes registering at once) is there: wait for it.
 */
static int connect_daemon(uint64_t start, int timeout_ms)
{
	char paths[2][TRACER_PATH_MAX];
	int n, i, fd = -ENOENT;

	n = tracer__socket_candidates(paths);
	for (i = 0; i < n; i++) {
		fd = tracer__wire_connect(paths[i], SOCK_NONBLOCK);
		if (fd == -EAGAIN && ms_left(start, timeout_ms) > 0)
			fd = connect_waiting(paths[i],
					     ms_left(start, timeout_ms));
		if (fd >= 0)
			break;
	}
	return fd;
}

int tracer__client_start(int timeout_ms)
{
	uint64_t start = tracer__clock_now();
	int fd, ret;

	verbose = getenv("TRACER_VERBOSE") != NULL;
	fd = connect_daemon(start, timeout_ms);
	if (fd < 0) {
		say("no tracerd to register with: %s", strerror(-fd));
		return fd;
	}
	sock = fd;
	install_signal();
	ret = send_register();
	if (!ret)
		ret = start_listener();
	if (ret) {
		say("cannot register with tracerd: %s", strerror(-ret));
		close(sock);
		sock = -1;
		return ret;
	}
	/* The connection's wait counts: timeout_ms in all. */
	ret = wait_registered(ms_left(start, timeout_ms));
	if (ret)
		say("tracerd did not register this process (yet): %s",
		    strerror(-ret));
	return ret;
}
