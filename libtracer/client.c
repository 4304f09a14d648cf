/*
 * client.c - registration with tracerd, and the listener thread.
 *
 * The library constructor connects to tracerd (tracer__client_start),
 * sends a Register message and waits a few milliseconds at most for the
 * reply (TRACER_REGISTER_TIMEOUT_MS), which it handles itself, then starts
 * the listener thread. Without a daemon the connection fails at once and
 * the program runs untraced; a daemon that answers late (busy, or
 * stopped) is handled by the listener, so the process becomes traced
 * when it does.
 *
 * No program thread ever waits for tracerd: every message is queued and
 * sent at once as far as the socket takes it, without blocking; what is
 * left (a daemon that does not read) is sent by the listener when the
 * socket has room. The queue's lock is held only around non-blocking
 * sends, so dlopen() and fork() never wait on a hung daemon either.
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
 *
 * When tracerd dies, the threads go on recording into the buffers and the
 * listener looks for a new tracerd every RECONNECT_MS, then hands it the
 * pool (the segments' memfds are kept for that: adopt.c in tracerd).
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "wrap.h"
#include "clock.h"
#include "paths.h"
#include "proto/wire.h"

#define BATCH	512	/* call sites per message */
#define RECONNECT_MS	200	/* looking for a new tracerd */

static int sock = -1;
/* The send queue and the socket's sending side. */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static int queue_fd = -1;	/* eventfd: the listener looks at the queue */

/* A frame waiting to be sent, sent bytes of it already gone. */
struct out_frame {
	struct out_frame *next;
	void *data;
	size_t size, sent;
};
static struct out_frame *out_head, **out_tail = &out_head;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
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

static void drop_queue_locked(void)
{
	struct out_frame *f;

	while ((f = out_head)) {
		out_head = f->next;
		free(f->data);
		free(f);
	}
	out_tail = &out_head;
}

/*
 * Send what the socket takes now, without waiting. Returns 0 (the rest,
 * if any, waits for room) or a negative errno (the connection is broken:
 * the queue is dropped; the listener sees the hang-up).
 */
static int send_queued_locked(void)
{
	struct out_frame *f;

	while ((f = out_head)) {
		ssize_t n = tracer__wire_sendmsg(sock, (char *)f->data + f->sent,
						 f->size - f->sent, NULL, 0);

		if (n == -EAGAIN || n == -EINTR)
			return 0;
		if (n < 0) {
			drop_queue_locked();
			return (int)n;
		}
		f->sent += (size_t)n;
		if (f->sent < f->size)
			continue;
		out_head = f->next;
		if (!out_head)
			out_tail = &out_head;
		free(f->data);
		free(f);
	}
	return 0;
}

/* Append m to the queue. Returns 0 or a negative errno (-ENOMEM...). */
static int queue_locked(const tracer_msg *m)
{
	struct out_frame *f = malloc(sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	ret = tracer__wire_pack(m, &f->data, &f->size);
	if (ret) {
		free(f);
		return ret;
	}
	f->next = NULL;
	f->sent = 0;
	*out_tail = f;
	out_tail = &f->next;
	return 0;
}

/* Send what can be sent; the listener is told when some is left. */
static int send_now_locked(void)
{
	int ret = send_queued_locked();

	if (!ret && out_head && queue_fd >= 0 &&
	    write(queue_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		(void)0;	/* already signalled */
	return ret;
}

/* Queue m and send it as far as the socket takes it, never waiting. */
static int send_msg(const tracer_msg *m)
{
	int ret;

	pthread_mutex_lock(&send_lock);
	ret = queue_locked(m);
	if (!ret)
		ret = send_now_locked();
	pthread_mutex_unlock(&send_lock);
	return ret;
}

/*
 * Register; with adopt (a new tracerd after ours died), offer the pool we
 * map: adopt_segments Segment messages follow (send_segments()), and
 * everything goes out at once, under send_lock (adopt_on()).
 */
static int send_register(uint32_t adopt, uint64_t epoch)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Register r = TRACER__REGISTER__INIT;
	static char name[17];	/* the main thread's, from the first call */
	char cmd[4096], *argv[64];
	size_t len = read_cmdline(cmd, sizeof(cmd)), off = 0, n = 0;
	struct timespec rt;

	while (off < len && n < TRACER_ARRAY_SIZE(argv)) {
		argv[n++] = cmd + off;
		off += strlen(cmd + off) + 1;
	}
	if (!adopt)
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
	r.adopt_segments = adopt;
	r.epoch = epoch;
	m.body_case = TRACER__MESSAGE__BODY_REGISTER;
	m.register_ = &r;
	/* Adopting: the listener, send_lock held, waits for a new daemon. */
	return adopt ? tracer__wire_send(sock, &m, NULL, 0, 1000)
		     : send_msg(&m);
}

/* Queue the call sites registered since the last call, in batches. */
static int queue_callsites_locked(void)
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
		ret = queue_locked(&m);
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
	ret = queue_callsites_locked();
	tracer__callsites_unlock();
	if (!ret)
		ret = send_now_locked();
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

/* The order of send_callsites(): send_lock, then the registry's lock. */
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
 * The parent's registration: its connection, its send queue and the
 * listener's eventfd, its control page, and the message its listener was
 * handling when the parent forked.
 */
static void drop_parent_registration(void)
{
	tracer_msg *m = __atomic_load_n(&in_flight, __ATOMIC_ACQUIRE);

	in_flight = NULL;
	if (m)
		tracer__wire_free(m);
	/* The parent's frames are the parent's to send (left allocated:
	 * without the lock they may be half linked). */
	out_head = NULL;
	out_tail = &out_head;
	if (sock >= 0)
		close(sock);
	sock = -1;
	if (queue_fd >= 0)
		close(queue_fd);
	queue_fd = -1;
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
	ret = send_msg(&m);
	tracer__filter_retire(old);	/* in force already: tell first */
	return ret;
}

static void close_all(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

/*
 * Registered after adoption: fds are the new control page and eventfd; the
 * pool is the one we have. tracerd knows none of our call sites.
 */
static int on_adopted(const Tracer__Registered *r, int *fds)
{
	void *ctl = mmap(NULL, r->control_size, PROT_READ, MAP_SHARED, fds[0],
			 0);
	int ret;

	close(fds[0]);
	if (ctl == MAP_FAILED ||
	    ((struct tracer_control *)ctl)->magic != TRACER_CONTROL_MAGIC) {
		close(fds[1]);
		return ctl == MAP_FAILED ? -errno : -EPROTO;
	}
	tracer__pool_set_wake_fd(fds[1]);
	/* Update signals now come from the new daemon. */
	tracer__signal_set_daemon(((struct tracer_control *)ctl)->tracerd_pid);
	tracer__callsites_resend();
	ret = send_callsites();
	if (!ret && r->filter)
		ret = apply_filter(r->filter);
	/* The old page stays mapped: a thread may still be reading it. */
	__atomic_store_n(&tracer__control, (struct tracer_control *)ctl,
			 __ATOMIC_RELEASE);
	say("the new tracerd took over this process's buffers");
	return ret;
}

/* Registered: fds are the control page, the eventfd, segment 0. */
static int on_registered(const Tracer__Registered *r, int *fds, int nfds)
{
	void *ctl;
	int ret;

	if (nfds == 2 && r->segment_size == 0 &&
	    r->control_size >= sizeof(struct tracer_control) &&
	    tracer__client_registered())
		return on_adopted(r, fds);
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
	tracer__signal_set_daemon(((struct tracer_control *)ctl)->tracerd_pid);
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

/*
 * One message from tracerd, the rest of its frame within timeout_ms.
 * Returns 0 or a negative errno (hang up).
 */
static int receive(int timeout_ms)
{
	int fds[TRACER_WIRE_MAX_FDS], nfds = 0, ret;
	tracer_msg *m;

	ret = tracer__wire_recv(sock, &m, fds, &nfds, timeout_ms, NULL);
	if (ret)
		return ret;
	__atomic_store_n(&in_flight, m, __ATOMIC_RELAXED);
	ret = on_message(m, fds, nfds);
	/* Cleared before it is freed: never freed twice (fork child). */
	__atomic_store_n(&in_flight, NULL, __ATOMIC_RELEASE);
	tracer__wire_free(m);
	return ret;
}

/* Send the rest of the queue as the socket takes it. */
static short serve_queue(const struct pollfd *p)
{
	uint64_t v;
	short ev;

	if (p[1].revents && read(queue_fd, &v, sizeof(v)) < 0)
		(void)0;	/* nothing to clear */
	pthread_mutex_lock(&send_lock);
	if (p[0].revents & POLLOUT)
		send_queued_locked();
	ev = out_head ? POLLIN | POLLOUT : POLLIN;
	pthread_mutex_unlock(&send_lock);
	return ev;
}

/* Serve the connection until it fails; returns why. */
static int serve(void)
{
	struct pollfd p[2] = {
		{ .fd = sock, .events = POLLIN },
		{ .fd = queue_fd, .events = POLLIN },
	};
	int ret = 0;

	p[0].events = serve_queue(p);
	while (!ret) {
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			ret = receive(1000);
		if (!ret)
			p[0].events = serve_queue(p);
	}
	return ret;
}

/* The segments we map, one message each, after an adopting Register. */
static int send_segments(uint32_t n)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Segment sg = TRACER__SEGMENT__INIT;
	uint32_t i;
	int ret = 0;

	m.body_case = TRACER__MESSAGE__BODY_SEGMENT;
	m.segment = &sg;
	for (i = 0; i < n && !ret; i++) {
		int fd = tracer__pool_segment_fd(i, &sg.size);

		sg.index = i;
		ret = fd < 0 ? -EBADF : tracer__wire_send(sock, &m, &fd, 1,
							  1000);
	}
	return ret;
}

/*
 * Are the descriptors we kept still our pool's? A program may close every
 * descriptor (daemons do) and open others with the same numbers: never
 * send one of those.
 */
static bool pool_intact(void)
{
	uint32_t i, n = tracer__pool_segments();

	for (i = 0; i < n; i++) {
		uint64_t size;
		int fd = tracer__pool_segment_fd(i, &size), seals;
		struct stat st;

		seals = fd < 0 ? -1 : fcntl(fd, F_GET_SEALS);
		if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) !=
				 (F_SEAL_SHRINK | F_SEAL_GROW) ||
		    fstat(fd, &st) < 0 || (uint64_t)st.st_size != size)
			return false;
	}
	return n > 0;
}

/* Offer our pool to the tracerd at the other end of fd. */
static int adopt_on(int fd)
{
	uint32_t n = tracer__pool_segments();
	uint64_t epoch = TRACER_READ_ONCE(tracer__control->epoch);
	int ret;

	/*
	 * Nothing else goes out before the Register and its segments; what
	 * was queued for the old daemon is dropped (the call sites are all
	 * sent again once the new one answers).
	 */
	pthread_mutex_lock(&send_lock);
	drop_queue_locked();
	ret = dup2(fd, sock) < 0 ? -errno : 0;	/* `sock` keeps its number */
	if (!ret)
		ret = send_register(n, epoch);
	if (!ret)
		ret = send_segments(n);
	pthread_mutex_unlock(&send_lock);
	return ret;
}

/*
 * tracerd went away. The threads go on recording into the buffers (the
 * old control page still says what to do) while we look for a new tracerd
 * every RECONNECT_MS; returns 0 once one has our pool.
 */
static int reconnect(void)
{
	char paths[2][TRACER_PATH_MAX];
	struct timespec pause = { 0, RECONNECT_MS * 1000000L };

	say("tracerd went away; recording goes on into the buffers");
	for (;;) {
		int n = tracer__socket_candidates(paths), i;

		nanosleep(&pause, NULL);	/* a retry period, not a wait */
		for (i = 0; i < n; i++) {
			int fd = tracer__wire_connect(paths[i], SOCK_NONBLOCK);

			if (fd < 0)
				continue;
			if (adopt_on(fd) == 0) {
				close(fd);
				return 0;
			}
			close(fd);
		}
	}
}

static void *listener(void *arg)
{
	int ret;

	(void)arg;
	WRAP_GUARD_ENTER();	/* for ever: this thread is the tracer's */
	for (;;) {
		ret = serve();
		if (ret != -ECONNRESET || !tracer__client_registered() ||
		    !pool_intact() || reconnect())
			break;
	}
	disconnect(ret ? ret : -ECONNRESET);
	return NULL;
}

static int start_listener(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int ret;

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

/* Microseconds from t0 to now (CLOCK_MONOTONIC). */
static long since_us(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L +
	       (t.tv_nsec - t0->tv_nsec) / 1000;
}

/*
 * The registration reply, read by the constructor itself when it comes
 * within timeout_ms (the listener thread would add a wake-up): 0
 * (registered), -ETIMEDOUT (the listener will take it), or a negative
 * errno (refused, or a protocol error).
 */
static int await_reply(int timeout_ms)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	struct timespec t0;
	long left;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		left = timeout_ms - since_us(&t0) / 1000;
		n = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (n < 0 && errno == EINTR && left > 0);
	if (n <= 0)
		return n < 0 && errno != EINTR ? -errno : -ETIMEDOUT;
	/* Within the wait too: a frame cut short cannot be resumed. */
	left = timeout_ms - since_us(&t0) / 1000;
	n = receive(left > 0 ? (int)left : 1);
	return n == -ETIMEDOUT ? -EPROTO : n;
}

/* Registration failed before the listener ran: forget the connection. */
static void give_up(void)
{
	pthread_mutex_lock(&send_lock);
	drop_queue_locked();
	close(sock);
	sock = -1;
	if (queue_fd >= 0)
		close(queue_fd);
	queue_fd = -1;
	pthread_mutex_unlock(&send_lock);
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

/* What is left of timeout_ms since t0, >= 0. */
static int ms_left(const struct timespec *t0, int timeout_ms)
{
	long left = timeout_ms - since_us(t0) / 1000;

	return left > 0 ? (int)left : 0;
}

/*
 * Connect to the first daemon that answers. One whose backlog is full
 * (busy with many processes registering at once) is there: wait for it,
 * within the registration's time.
 */
static int connect_daemon(const struct timespec *t0, int timeout_ms)
{
	char paths[2][TRACER_PATH_MAX];
	int n, i, fd = -ENOENT;

	n = tracer__socket_candidates(paths);
	for (i = 0; i < n; i++) {
		fd = tracer__wire_connect(paths[i], SOCK_NONBLOCK);
		if (fd == -EAGAIN && ms_left(t0, timeout_ms) > 0)
			fd = connect_waiting(paths[i], ms_left(t0, timeout_ms));
		if (fd >= 0)
			break;
	}
	return fd;
}

int tracer__client_start(int timeout_ms)
{
	int fd, ret, reply;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	verbose = getenv("TRACER_VERBOSE") != NULL;
	fd = connect_daemon(&t0, timeout_ms);
	if (fd < 0) {
		say("no tracerd to register with: %s", strerror(-fd));
		return fd;
	}
	sock = fd;
	queue_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	install_signal();
	ret = send_register(0, 0);
	if (!ret)	/* the connection's wait counts: timeout_ms in all */
		ret = await_reply(ms_left(&t0, timeout_ms));
	reply = ret;
	if (!ret || ret == -ETIMEDOUT)
		ret = start_listener();
	if (ret) {
		say("cannot register with tracerd: %s", strerror(-ret));
		disconnect(ret);
		give_up();
		return ret;
	}
	if (reply)
		say("tracerd did not register this process within %d ms: %s",
		    timeout_ms, strerror(-reply));
	else
		say("registered in %ld us", since_us(&t0));
	return reply;
}
