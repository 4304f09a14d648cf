/*
 * client.c - registration with tracerd, and the listener thread.
 *
 * The library constructor (tracer__client_start) first maps tracerd's
 * state page: when no session records there, the process does not
 * connect at all, and does so at its first event after a session starts
 * (DETACHED, in "The listener thread" below). When a session records
 * the default events in discard mode (the state page's start line says
 * so, with the geometry), the process makes the first segment of its own
 * pool, connects, sends Register offering it (tracerd adopts it), its
 * pidfd and call sites in one send, and records at once without waiting
 * for the reply (PENDING, below): a round trip to tracerd costs a start
 * 0.2 to 0.5 ms on a busy machine, more than the rest of tracing it.
 * Otherwise it connects, sends a Register message with its call sites
 * and waits a few milliseconds at most for the reply
 * (TRACER_REGISTER_TIMEOUT_MS), which it handles itself; the listener
 * thread starts only when tracerd has something to say. Without a
 * daemon the connection fails at once and
 * the program runs untraced; a daemon that answers late (busy, or
 * stopped) is handled by the listener, started then, so the process
 * becomes traced when it does.
 *
 * No program thread ever waits for tracerd: every message is queued and
 * sent at once as far as the socket takes it, without blocking; what is
 * left (a daemon that does not read) is sent by the listener when the
 * socket has room. The queue's lock is held only around non-blocking
 * sends, so dlopen() and fork() never wait on a hung daemon either.
 *
 * The listener thread blocks every signal the kernel does not raise for
 * its own instructions (the program's signals are not ours:
 * tracer__signal_async_set()) and serves the socket: the registration
 * reply (control page, eventfd, first pool segment, the filter to start
 * with), new segments, and new event filters, which it turns into enable
 * tables (callsites.c, filter.c) and confirms with FilterApplied. Call
 * sites are sent by
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
 *
 * When the connection breaks while tracerd lives (the program closed the
 * socket with a raw system call, or dup2()ed over it behind our back:
 * fds.c hides it from the C library's calls), the listener notices (a
 * failed send or receive, or its check of the descriptors every
 * CHECK_MS), connects again at once and resumes: Register{resume_token},
 * and tracerd, which kept the process and its pool, answers
 * Registered{resumed} with a new wake-up eventfd. A process that cannot
 * connect any more (a seccomp filter refusing socket(), say) stops
 * recording and says why in its pool line, where tracerd reads it.
 *
 * Every descriptor here lives in a slot of fds.c: moved out of the
 * program's range, and held around each system call on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"
#include "wrap.h"
#include "clock.h"
#include "paths.h"
#include "pattern.h"
#include "proto/wire.h"

#define BATCH	512	/* call sites per message */
#define RECONNECT_MS	200	/* looking for a new tracerd */
#define CHECK_MS	1000	/* the listener checks its descriptors */
#define SOCK		TRACER__FD_SOCK
#define QUEUE		TRACER__FD_QUEUE

/* The send queue and the socket's sending side. */
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;

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
static uint64_t resume_token;	/* tracerd's name for us, 0: none yet */
static bool resume_refused;	/* the daemon we reached does not know it */

/*
 * The listener thread, started only when the process has something to
 * hear. A thread costs a program's start more than the rest of the
 * registration, and makes its exit slower still: a second thread that
 * slept on another CPU has to be woken to die, and the parent's wait
 * returns only then (0.1 to 1 ms on the development VM). A program that
 * runs briefly never needs one:
 *
 *   NONE --no session: state page mapped, not connected--> DETACHED
 *    | \                                                       | a session
 *    |  \                                                      v
 *    |   `--a session records: reply read--> DORMANT <------- WAKING
 *    |                                       ^   |    registered, reply read
 *    | a session records the default events, |   | tracerd wrote to us,
 *    | discard mode: own first segment       |   | or hung up (a signal),
 *    v                      reply read at an |   v at the next event
 *   PENDING ---------------------------------'  RUNNING
 *
 * PENDING: registered without waiting. The pool is segment 0 made here
 * (one buffer; tracerd adopts it as it reads our Register, and grows the
 * pool when a thread asks), so what the process records is tracerd's to
 * read from the start, whatever happens next (it ends, is killed, execs,
 * blocks for ever, the session stops). The control page in force is the
 * state page (its session, epoch and mode are the session's); the call
 * sites take the default events, which the state page says are the
 * session's. The reply (control page, eventfd) and any later message
 * signal us as in DORMANT; the next event reads them (complete_locked())
 * and the process goes on DORMANT with its own page.
 *
 * DETACHED: no session records, so the process does not even connect
 * (a connection costs the start 0.1 ms, and tracerd a descriptor and
 * work for each process that may never meet a session). The control page
 * in force is the daemon's state page (SOCKET.state, one struct
 * tracer_control that every process maps read-only): its epoch is 0
 * until a session starts. The first event of any thread after that
 * takes the slow path, which calls tracer__client_wake() in the thread's
 * own context (never in a signal handler): it connects, sends Register
 * and the call sites, and reads the reply (the session's pool and
 * filter) within the registration's time, as a process started in a
 * session does, then goes dormant. Other threads wait a little for it,
 * then drop their event (counted as lost).
 *
 * In DORMANT the process is registered and records with its own control
 * page and pool; nobody reads the socket. The kernel signals the process
 * when tracerd writes to it or hangs up (O_ASYNC, F_SETSIG: the update
 * signal with si_code POLL_IN or POLL_HUP and si_fd our socket), and the
 * handler (tracer__client_poke) puts poke_control in force: its epoch is
 * no thread's, so the next event of every thread takes the slow path,
 * where tracer__client_rouse() reads what came, starts the listener and
 * puts the process's page back. The slow path also looks at the socket
 * itself (a program may block the signal), and a message that did not
 * fit in the socket pokes too (kick_listener).
 */
enum { LISTENER_NONE, LISTENER_DETACHED, LISTENER_WAKING, LISTENER_RUNNING,
       LISTENER_DORMANT, LISTENER_PENDING };
static int listener_state;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct tracer_control *real_control;	/* the process's */
static const struct tracer_control *state_page;	/* the daemon's */
/* The main thread's name: at the start of a process that connects then,
 * at the registration of one that waited for a session (its name then:
 * main_name()); "" until taken. */
static char proc_name[17];
/* The program's arguments while the constructor registers, or NULL. */
static char *const *start_argv;
static int wake_timeout_ms;	/* for the reply, when woken */
#define WAKE_TRIES	1000	/* sched_yield()s a thread waits for another */

/* In force while a dormant process has something to hear: an epoch that
 * is no thread's (tracerd counts from 1; a new thread has UINT64_MAX). */
static const struct tracer_control poke_control = {
	.magic = TRACER_CONTROL_MAGIC,
	.version = TRACER_POOL_VERSION,
	.size = sizeof(struct tracer_control),
	.epoch = UINT64_MAX - 1,
};
static int poke_pending;	/* set by the handler, cleared by rouse */
/* The descriptor number the kernel names in its signals (O_ASYNC was set
 * on it; the number stays even if fds.c moves the socket), -1: none. */
static int async_fd = -1;

/* Registered (or registering at the start) without a listener: tracerd's
 * writes signal us (O_ASYNC), and the next event reads them. */
static bool no_listener(int st)
{
	return st == LISTENER_DORMANT || st == LISTENER_PENDING;
}

static void say_now(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Diagnostics only with TRACER_VERBOSE: the program's output is its own.
 * (A macro: without it, not even the arguments are computed.) */
#define say(...)	do { if (verbose) say_now(__VA_ARGS__); } while (0)

static void say_now(const char *fmt, ...)
{
	va_list ap;

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

#define CMDLINE_MAX	4096	/* bytes of arguments sent */
#define ARGV_MAX	64	/* arguments sent */

/* The arguments in /proc/self/cmdline, read into cmd: how many. */
static size_t args_read(char cmd[CMDLINE_MAX], char *argv[ARGV_MAX])
{
	size_t len = read_cmdline(cmd, CMDLINE_MAX), off = 0, n = 0;

	while (off < len && n < ARGV_MAX) {
		argv[n++] = cmd + off;
		off += strlen(cmd + off) + 1;
	}
	return n;
}

/* The constructor's arguments (the same as /proc's, without reading
 * it), as many as /proc would give: how many. */
static size_t args_of(char *const *src, char *argv[ARGV_MAX])
{
	size_t n = 0, total = 0;

	while (src[n] && n < ARGV_MAX) {
		total += strlen(src[n]) + 1;
		if (total > CMDLINE_MAX - 1)
			break;
		argv[n] = src[n];
		n++;
	}
	return n;
}

static void prctl_name(char name[17])
{
	prctl(PR_GET_NAME, name, 0, 0, 0);
	name[16] = '\0';
}

/* The main thread's name now, from any thread: its own, or its comm in
 * /proc (else the calling thread's). */
static void main_name(char name[17])
{
	int fd = -1;
	ssize_t n = -1;

	if ((pid_t)syscall(SYS_gettid) != getpid())
		fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, name, 16);
		close(fd);
	}
	if (n <= 0) {
		prctl_name(name);
		return;
	}
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
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

/* A message sent whole, waiting up to 1 s for room (adoption, resume). */
static int sock_send_msg(const tracer_msg *m, const int *fds, int nfds)
{
	unsigned token = tracer__fd_hold();
	int fd = tracer__fd(SOCK);
	int ret = fd < 0 ? -EBADF : tracer__wire_send(fd, m, fds, nfds, 1000);

	tracer__fd_release(token);
	return ret;
}

/* Tell the listener to look at the queue (QUEUE is an eventfd); a
 * dormant process has none yet: its next event starts it. */
static void kick_listener(void)
{
	unsigned token;
	int fd;

	if (no_listener(__atomic_load_n(&listener_state, __ATOMIC_ACQUIRE))) {
		tracer__client_poke();
		return;
	}
	token = tracer__fd_hold();
	fd = tracer__fd(QUEUE);

	if (fd >= 0 && write(fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		(void)0;	/* already signalled */
	tracer__fd_release(token);
}

#define GATHER	16	/* frames per sendmsg() */

/* One non-blocking send of n frames' unsent bytes, gathered. */
static ssize_t sock_sendv(struct iovec *iov, int n)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	unsigned token = tracer__fd_hold();
	int fd = tracer__fd(SOCK);
	ssize_t ret = fd < 0 ? -EBADF :
		      sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (ret < 0 && fd >= 0)
		ret = -errno;
	tracer__fd_release(token);
	return ret;
}

/* Take n sent bytes off the queue's head. */
static void consume_locked(size_t n)
{
	struct out_frame *f;

	while ((f = out_head) && n >= f->size - f->sent) {
		n -= f->size - f->sent;
		out_head = f->next;
		if (!out_head)
			out_tail = &out_head;
		free(f->data);
		free(f);
	}
	if (f)
		f->sent += n;
}

static int send_queued_locked(void)
{
	struct iovec iov[GATHER];
	struct out_frame *f;
	ssize_t n;
	int i;

	while (out_head) {
		for (i = 0, f = out_head; f && i < GATHER; f = f->next, i++)
			iov[i] = (struct iovec){ (char *)f->data + f->sent,
						 f->size - f->sent };
		n = sock_sendv(iov, i);
		if (n == -EAGAIN || n == -EINTR)
			return 0;
		if (n < 0) {
			drop_queue_locked();
			return (int)n;
		}
		consume_locked((size_t)n);
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

	if (!ret && out_head)
		kick_listener();
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

/* Can a registered process go without a listener? Only with an update
 * signal: nothing else could rouse it. */
static bool can_doze(void)
{
	return update_signal != 0;
}

/* How send_register() sends. */
enum reg_how {
	REG_SEND,	/* queued, and sent as far as the socket takes it */
	REG_LOCKED,	/* sent whole; the caller holds send_lock */
	REG_QUEUE,	/* only queued: sent with what follows it; the
			 * caller holds send_lock */
	REG_EARLY,	/* only packed, into *early (offering the segment
			 * made at the start: fresh_pool, and a pidfd) */
};

/* The packed Register of REG_EARLY. */
struct early_frame {
	bool pidfd;		/* a pidfd goes with it */
	void *data;
	size_t size;
};

/*
 * Register; with adopt (a new tracerd after ours died, or the segment made
 * at the start: REG_EARLY), offer the pool we map: adopt_segments Segment
 * messages follow (send_segments()), and everything goes out at once,
 * under send_lock. REG_LOCKED: registering again on a new connection.
 * REG_EARLY packs it into *early (send_early()). Returns 0 or a negative
 * errno.
 */
static int send_register(uint32_t adopt, uint64_t epoch, uint64_t token,
			 enum reg_how how, struct early_frame *early)
{
	bool locked = how == REG_LOCKED;
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Register r = TRACER__REGISTER__INIT;
	char cmd[CMDLINE_MAX], *argv[ARGV_MAX];
	size_t n = start_argv ? args_of(start_argv, argv) :
		   args_read(cmd, argv);
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	r.pid = (uint32_t)getpid();
	r.ppid = (uint32_t)getppid();
	if (!proc_name[0])
		main_name(proc_name);
	r.name = proc_name;
	r.n_argv = n;
	r.argv = argv;
	r.monotonic_ns = tracer__clock_now();
	r.start_time_ns = (uint64_t)rt.tv_sec * 1000000000ULL +
			  (uint64_t)rt.tv_nsec;
	r.signal = update_signal;
	r.adopt_segments = adopt;
	r.epoch = epoch;
	r.resume_token = token;
	/* A first registration goes dormant if it can (register_now()). */
	r.lazy_listener = !locked && can_doze();
	r.fresh_pool = how == REG_EARLY;
	r.pidfd = early && early->pidfd;
	r.clock_monotonic = tracer__clock_forced_monotonic();
	m.body_case = TRACER__MESSAGE__BODY_REGISTER;
	m.register_ = &r;
	if (how == REG_EARLY)
		return tracer__wire_pack(&m, &early->data, &early->size);
	/* Registering again: the listener, send_lock held, waits. */
	if (locked)
		return sock_send_msg(&m, NULL, 0);
	return how == REG_QUEUE ? queue_locked(&m) : send_msg(&m);
}

/* Append an encoded frame to the queue (takes data). */
static void queue_frame_locked(void *data, size_t size)
{
	struct out_frame *f = malloc(sizeof(*f));

	if (!f) {
		free(data);
		return;
	}
	f->data = data;
	f->size = size;
	f->sent = 0;
	f->next = NULL;
	*out_tail = f;
	out_tail = &f->next;
}

/* Queue the call sites registered since the last call, in batches. */
static int queue_callsites_locked(void)
{
	struct tracer_callsite *cs[BATCH];
	struct tracer_wire_site items[BATCH];
	char types[BATCH][TRACER_MAX_ARGS + 1];
	size_t n, i, size;
	void *frame;
	int ret = 0;

	while (!ret && (n = tracer__callsites_pending(cs, BATCH)) > 0) {
		for (i = 0; i < n; i++) {
			memcpy(types[i], cs[i]->types, TRACER_MAX_ARGS);
			types[i][cs[i]->nargs] = '\0';
			items[i] = (struct tracer_wire_site){
				.id = cs[i]->id, .line = cs[i]->line,
				.vital = cs[i]->vital != 0, .types = types[i],
				.file = cs[i]->file, .name = cs[i]->name,
				.format = cs[i]->format,
			};
		}
		ret = tracer__wire_pack_sites(items, n, &frame, &size);
		if (!ret)
			queue_frame_locked(frame, size);
	}
	return ret;
}

/*
 * Queue the call sites not sent yet, and with send, send the queue as far
 * as the socket takes it. Called by the listener and by the thread that
 * registers a module, so that tracerd knows a call site before any of its
 * events can be read. Returns 0 or a negative errno.
 */
static int put_callsites(bool send)
{
	int ret;

	pthread_mutex_lock(&send_lock);
	tracer__callsites_lock();
	ret = queue_callsites_locked();
	tracer__callsites_unlock();
	if (!ret && send)
		ret = send_now_locked();
	pthread_mutex_unlock(&send_lock);
	return ret;
}

static int send_callsites(void)
{
	return put_callsites(true);
}

static bool queue_waits(void)
{
	bool waits;

	pthread_mutex_lock(&send_lock);
	waits = out_head != NULL;
	pthread_mutex_unlock(&send_lock);
	return waits;
}

/* Not registered yet (detached, or the reply is still to come): the
 * registration sends them (register_now(), on_registered()). */
void tracer__client_sync_callsites(void)
{
	/* Registering at the start: tracerd may read our records before
	 * we read its reply. */
	if (tracer__client_registered() ||
	    __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE) ==
	    LISTENER_PENDING)
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
	errno = saved;
}

void tracer__client_fork_parent(void)
{
	int saved = errno;

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
	/* Socket, eventfds, the pool's memfds: all the parent's. */
	tracer__fd_forget_all();
	if (ctl_map)
		munmap(ctl_map, ctl_size);
	ctl_map = NULL;
	reg_state = 0;
	resume_token = 0;
	resume_refused = false;
	listener_state = LISTENER_NONE;
	poke_pending = 0;
	async_fd = -1;
	real_control = NULL;
	/* The daemon's state page stays mapped: the child maps it again. */
	state_page = NULL;
}

void tracer__client_fork_child(void)
{
	tracer__callsites_fork_child(fork_locked);
	pthread_mutex_init(&send_lock, NULL);
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&wake_lock, NULL);
	drop_parent_registration();
	tracer__pool_fork_child();
	tracer__filter_fork_child();
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
 * Resumed after a broken connection: the same tracerd, the same control
 * page and pool; fds[0] is a new wake-up eventfd. tracerd may have lost
 * the call sites that were queued here: they all go again (it skips the
 * ones it knows).
 */
static int on_resumed(const Tracer__Registered *r, int *fds, int nfds)
{
	int ret;

	if (nfds != 1) {
		close_all(fds, nfds);
		return -EPROTO;
	}
	tracer__pool_set_wake_fd(fds[0]);
	tracer__callsites_resend();
	ret = send_callsites();
	if (!ret && r->filter)
		ret = apply_filter(r->filter);
	say("connected to tracerd again; tracing goes on");
	return ret;
}

/*
 * Registered: fds are the control page, the eventfd and, when tracerd
 * gave a pool with it, its segment 0 (a process registered outside a
 * session gets its pool when one starts: Segment). The reply to a
 * registration again (after adoption: the pool is the one we have; or a
 * new registration of a process without a pool) switches to the new
 * control page; tracerd knows none of our call sites then.
 */
static int on_registered(const Tracer__Registered *r, int *fds, int nfds)
{
	bool again = tracer__client_registered(), seg = nfds == 3;
	void *ctl;
	int ret;

	if (r->resumed && again)
		return on_resumed(r, fds, nfds);
	if ((nfds != 2 && nfds != 3) || seg != (r->segment_size != 0) ||
	    r->control_size < sizeof(struct tracer_control) ||
	    (seg && tracer__pool_segments() != 0)) {
		close_all(fds, nfds);
		return -EPROTO;
	}
	ctl = mmap(NULL, r->control_size, PROT_READ, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	if (ctl == MAP_FAILED ||
	    ((struct tracer_control *)ctl)->magic != TRACER_CONTROL_MAGIC) {
		close_all(fds + 1, nfds - 1);
		return ctl == MAP_FAILED ? -errno : -EPROTO;
	}
	/* An older page stays mapped: a thread may still be reading it. */
	ctl_map = ctl;
	ctl_size = r->control_size;
	if (seg && (ret = tracer__pool_add_segment(fds[2], r->segment_size))) {
		close(fds[1]);
		return ret;
	}
	tracer__pool_set_wake_fd(fds[1]);
	tracer__signal_set_daemon(((struct tracer_control *)ctl)->tracerd_pid);
	resume_token = r->resume_token;
	resume_refused = false;
	if (again)
		tracer__callsites_resend();
	ret = send_callsites();
	/* In force even when the connection broke (the listener mends it). */
	if (r->filter) {
		int f = apply_filter(r->filter);

		ret = ret ? ret : f;
	}
	/* Recording can start: call sites know the filter. */
	real_control = ctl;
	__atomic_store_n(&tracer__control, (struct tracer_control *)ctl,
			 __ATOMIC_RELEASE);
	set_state(1);
	if (again)
		say("registered again (tracerd restarted): tracing goes on");
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
		if (m->error->code == -ESRCH && resume_token) {
			/* A tracerd that does not know us: adopt. */
			resume_refused = true;
			close_all(fds, nfds);
			return -ESRCH;
		}
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
	int fds[TRACER_WIRE_MAX_FDS], nfds = 0, ret, fd;
	unsigned token = tracer__fd_hold();
	tracer_msg *m;

	fd = tracer__fd(SOCK);
	ret = fd < 0 ? -EBADF : tracer__wire_recv(fd, &m, fds, &nfds,
						  timeout_ms, NULL);
	tracer__fd_release(token);
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

	if (p[1].revents && read(p[1].fd, &v, sizeof(v)) < 0)
		(void)0;	/* nothing to clear */
	pthread_mutex_lock(&send_lock);
	if (p[0].revents & POLLOUT)
		send_queued_locked();
	ev = out_head ? POLLIN | POLLOUT : POLLIN;
	pthread_mutex_unlock(&send_lock);
	return ev;
}

/* The listener's queue eventfd, made when there is none (a process
 * without a listener has none) or again when the program took it. */
static void ensure_queue(void)
{
	if (tracer__fd(QUEUE) < 0 || !tracer__fd_intact(QUEUE)) {
		/* Not through the wrapper: never recorded. */
		int q = (int)syscall(SYS_eventfd2, 0,
				     EFD_CLOEXEC | EFD_NONBLOCK);

		if (q >= 0)
			tracer__fd_keep(QUEUE, q);
	}
}

/*
 * Nothing happened for CHECK_MS: are our descriptors still ours? A raw
 * close system call (not seen by the wrappers) takes them away. Returns
 * 0, or -EBADF: connect again (tracerd sends a new eventfd).
 */
static int check_fds(void)
{
	ensure_queue();
	if (!tracer__fd_intact(SOCK) || !tracer__fd_intact(TRACER__FD_WAKE)) {
		say("the program closed the tracer's descriptors; "
		    "connecting again");
		return -EBADF;
	}
	return 0;
}

/* One look at the socket and the queue: 0 or why the connection broke. */
static int serve_once(short *ev)
{
	unsigned token = tracer__fd_hold();
	int s = tracer__fd(SOCK), q = tracer__fd(QUEUE), n, ret = 0;
	struct pollfd p[2] = {
		{ .fd = s, .events = *ev },
		{ .fd = q, .events = POLLIN },
	};

	/* Held across the wait: a mover wakes us through QUEUE (fds.c). */
	n = s < 0 ? -1 : poll(p, 2, CHECK_MS);
	if (s < 0)
		ret = -EBADF;
	else if (s != tracer__fd(SOCK) || q != tracer__fd(QUEUE))
		ret = 0;	/* moved meanwhile: look again */
	else if (n == 0)
		ret = check_fds();
	else if (n > 0 && (p[0].revents & POLLNVAL))
		ret = -EBADF;
	else if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
		ret = receive(1000);
	if (!ret && n > 0 && s == tracer__fd(SOCK))
		*ev = serve_queue(p);
	tracer__fd_release(token);
	return ret;
}

/* Serve the connection until it fails; returns why. */
static int serve(void)
{
	short ev = POLLIN | POLLOUT;	/* send what was queued meanwhile */
	int ret;

	do
		ret = serve_once(&ev);
	while (!ret);
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
		unsigned token = tracer__fd_hold();
		int fd = tracer__fd(TRACER__FD_SEG0 + (int)i);

		sg.index = i;
		sg.size = tracer__pool_segment_size(i);
		ret = fd < 0 ? -EBADF : sock_send_msg(&m, &fd, 1);
		tracer__fd_release(token);
	}
	return ret;
}

/*
 * Are the descriptors we kept still our pool's? A program may close every
 * descriptor with raw system calls and open others with the same numbers:
 * never send one of those.
 */
static bool pool_intact(void)
{
	uint32_t i, n = tracer__pool_segments();

	for (i = 0; i < n; i++)
		if (!tracer__fd_intact(TRACER__FD_SEG0 + (int)i))
			return false;
	return n > 0;
}

/*
 * On the new connection fd (which becomes the socket): offer our pool to
 * a new tracerd (adopt), ask ours to take us back (token: resume), or,
 * with neither, register anew (no pool yet). Nothing
 * else goes out before the Register (and its segments); what was queued
 * for the old connection is dropped (the call sites are all sent again
 * once tracerd answers).
 */
static int register_again(int fd, bool adopt, uint64_t token)
{
	uint32_t n = adopt ? tracer__pool_segments() : 0;
	/* The page behind a poke: its epoch is no thread's. */
	uint64_t epoch = TRACER_READ_ONCE(tracer__client_control()->epoch);
	int ret;

	pthread_mutex_lock(&send_lock);
	drop_queue_locked();
	ret = tracer__fd_keep(SOCK, fd);	/* the old one is closed */
	if (ret >= 0)
		ret = send_register(n, epoch, token, REG_LOCKED, NULL);
	if (!ret && adopt)
		ret = send_segments(n);
	pthread_mutex_unlock(&send_lock);
	return ret;
}

/* Failures that say no tracerd can be reached from here, ever. */
static bool hopeless(int err)
{
	return err == -EPERM || err == -EACCES || err == -EAFNOSUPPORT ||
	       err == -ENOSYS || err == -EINVAL;
}

/*
 * One Register for each daemon that may be there, until one goes out:
 * offer the pool to a new tracerd (adopt), ask ours to take us back
 * (resume: we have its token and it did not refuse it), or, with
 * neither, register anew (no pool yet). Returns 0 once one went out, or
 * a negative errno; *final says that trying again cannot help (no
 * tracerd can be reached from here, or the pool is no longer whole).
 */
static int connect_again(bool *final)
{
	char paths[2][TRACER_PATH_MAX];
	bool anew = resume_refused || !resume_token;
	bool adopt = anew && tracer__pool_segments() != 0;
	uint64_t token = anew ? 0 : resume_token;
	int n, i, ret = -ENOENT;

	*final = adopt && !pool_intact();
	if (*final)
		return -EBADF;	/* nothing we could hand over */
	n = tracer__socket_candidates(paths);
	for (i = 0; i < n; i++) {
		int fd = tracer__wire_connect(paths[i], SOCK_NONBLOCK);

		*final = fd < 0 && hopeless(fd);
		if (*final)
			return fd;
		ret = fd >= 0 ? register_again(fd, adopt, token) : fd;
		if (ret == 0)
			return 0;
	}
	return ret;
}

/*
 * The connection broke. The threads go on recording into the buffers
 * (the control page still says what to do) while we connect again: at
 * once (our tracerd may be alive: resume), then every RECONNECT_MS
 * (it died: adopt, with the next one). Returns 0 once a Register went
 * out (serve() handles the answer), or a negative errno: tracing is over.
 */
static int reconnect(void)
{
	long ms = 10;
	bool final;

	for (;;) {
		struct timespec pause;
		int ret = connect_again(&final);

		if (ret == 0 || final)
			return ret;
		/* A retry period, not a wait: 10 ms (the program had every
		 * descriptor taken for a moment), doubling to RECONNECT_MS
		 * (no tracerd: the next one starts in its own time). */
		pause = (struct timespec){ 0, ms * 1000000L };
		nanosleep(&pause, NULL);
		ms = ms * 2 < RECONNECT_MS ? ms * 2 : RECONNECT_MS;
	}
}

/* Errors that say the connection is gone (not refused, not garbled). */
static bool broken(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -EBADF ||
	       err == -ENOTSOCK || err == -ENOTCONN;
}

/* Breaks that connecting again may mend. */
static bool mendable(int err)
{
	return tracer__client_registered() && (broken(err) || err == -ESRCH);
}

static void *listener(void *arg)
{
	int ret;

	(void)arg;
	WRAP_GUARD_ENTER();	/* for ever: this thread is the tracer's */
	for (;;) {
		ret = serve();
		if (!mendable(ret))
			break;
		if (ret != -ESRCH)
			say("lost the connection to tracerd (%s); recording "
			    "goes on into the buffers", strerror(-ret));
		ret = reconnect();
		if (ret) {
			say("cannot reach tracerd any more: %s; not traced "
			    "from here", strerror(-ret));
			tracer__pool_set_untraced(-ret);
			break;
		}
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

	ensure_queue();		/* only a listener needs it */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	tracer__signal_async_set(&all);	/* the program's are not for it */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&th, &attr, listener, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		return ret;
	pthread_setname_np(th, "tracer-listener");
	__atomic_store_n(&listener_state, LISTENER_RUNNING, __ATOMIC_RELEASE);
	return 0;
}

/* tracerd may wait for our confirmations from now on. */
static void send_listening(void)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Listening l = TRACER__LISTENING__INIT;

	m.body_case = TRACER__MESSAGE__BODY_LISTENING;
	m.listening = &l;
	send_msg(&m);
}

bool tracer__client_detached(void)
{
	int st = __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE);

	return st == LISTENER_DETACHED || st == LISTENER_WAKING;
}

bool tracer__client_recording(void)
{
	const struct tracer_control *c =
		__atomic_load_n(&tracer__control, __ATOMIC_ACQUIRE);

	return TRACER_READ_ONCE(c->epoch) != 0;
}

/* The messages tracerd sent while nobody listened, handled here.
 * Returns 0, or why the connection broke (a hang-up: tracerd died). */
static int drain_socket(void)
{
	struct pollfd p = { .fd = tracer__fd(SOCK), .events = POLLIN };
	int ret = 0;

	while (!ret && p.fd >= 0 && poll(&p, 1, 0) == 1)
		ret = p.revents & POLLNVAL ? -EBADF : receive(100);
	return p.fd < 0 ? -EBADF : ret;
}

static int await_reply(int timeout_ms);
static int ms_left(const struct timespec *t0, int timeout_ms);

/*
 * The connection broke while no listener ran, seen by a program thread
 * at its event's slow path (a wake, a rouse): connected again from here
 * at once, each reply awaited within the registration's time, so that
 * this event and the next ones follow the new tracerd's session instead
 * of being dropped until the listener gets there. Two rounds at most: a
 * resume that a new tracerd refuses, then the adoption. Returns 0 when
 * registered again, or a negative errno: the listener takes it from
 * there (a reply still to come, no tracerd yet, ...).
 */
static int mend_now(int err)
{
	struct timespec t0;
	bool final = false;
	int round, ret = err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (round = 0; round < 2 && !final && mendable(ret); round++) {
		ret = connect_again(&final);
		if (!ret)
			ret = await_reply(ms_left(&t0, wake_timeout_ms));
	}
	if (!ret && err)	/* (nothing broke: nothing to say) */
		say("tracerd restarted: registered again at once");
	return ret;
}

static int attach(void);

/* The waking itself, wake_lock held, from LISTENER_DETACHED. */
static void wake_locked(void)
{
	int ret;

	__atomic_store_n(&listener_state, LISTENER_WAKING, __ATOMIC_RELEASE);
	ret = attach();
	if (ret && ret != -ETIMEDOUT) {
		say("a session started; cannot register with tracerd: %s",
		    strerror(-ret));
		__atomic_store_n(&listener_state, LISTENER_NONE,
				 __ATOMIC_RELEASE);
		return;
	}
	say("a session started: %s", ret ? "no reply from tracerd yet, its "
	    "listener will take it" : "registered");
}

int tracer__client_wake(void)
{
	int tries;

	for (tries = 0; tries < WAKE_TRIES; tries++) {
		int st = __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE);

		if (st != LISTENER_DETACHED && st != LISTENER_WAKING)
			return 0;
		if (st == LISTENER_DETACHED &&
		    pthread_mutex_trylock(&wake_lock) == 0) {
			if (__atomic_load_n(&listener_state, __ATOMIC_ACQUIRE)
			    == LISTENER_DETACHED)
				wake_locked();
			pthread_mutex_unlock(&wake_lock);
			continue;
		}
		sched_yield();	/* another thread is waking it */
	}
	return -EAGAIN;
}

/* ---- the dormant listener ------------------------------------------ */

int tracer__client_async_fd(void)
{
	return __atomic_load_n(&async_fd, __ATOMIC_ACQUIRE);
}

/* Async-signal-safe: two stores and the call sites' walk (see the
 * diagram above). */
void tracer__client_poke(void)
{
	int st = __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE);

	if (!no_listener(st))
		return;
	__atomic_store_n(&poke_pending, 1, __ATOMIC_RELEASE);
	/* A call site that is off never reaches the slow path: it asks the
	 * table until the rouse applies the filter again (a new one, say).
	 * Before the page: whoever sees the page has seen the walk. Not
	 * while registering at the start: no table yet, the default
	 * events' words are exact, and the reply's filter comes with the
	 * rest. */
	if (st == LISTENER_DORMANT)
		tracer__callsites_poke_all();
	__atomic_store_n(&tracer__control, &poke_control, __ATOMIC_RELEASE);
}

const struct tracer_control *tracer__client_control(void)
{
	const struct tracer_control *c =
		__atomic_load_n(&tracer__control, __ATOMIC_ACQUIRE);

	return c == &poke_control ? real_control : c;
}

/* Does the socket have something for us (a message, or a hang-up)? */
static bool socket_ready(void)
{
	unsigned token = tracer__fd_hold();
	struct pollfd p = { .fd = tracer__fd(SOCK), .events = POLLIN };
	bool ready = p.fd >= 0 && poll(&p, 1, 0) == 1;

	tracer__fd_release(token);
	return ready;
}

/* The kernel signals us when tracerd writes or hangs up. 0 or -errno. */
static int async_on(void)
{
	struct f_owner_ex o = { .type = F_OWNER_PID, .pid = getpid() };
	unsigned token = tracer__fd_hold();
	int fd = tracer__fd(SOCK), ret = 0;

	if (fd < 0 || fcntl(fd, F_SETSIG, update_signal) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &o) < 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC) < 0)
		ret = fd < 0 ? -EBADF : -errno;
	else
		__atomic_store_n(&async_fd, fd, __ATOMIC_RELEASE);
	tracer__fd_release(token);
	return ret;
}

static void async_off(void)
{
	unsigned token = tracer__fd_hold();
	int fd = tracer__fd(SOCK);

	__atomic_store_n(&async_fd, -1, __ATOMIC_RELEASE);
	if (fd >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		(void)0;	/* gone: the listener connects again */
	tracer__fd_release(token);
}

/* Registered, reply read: record without a listener until tracerd
 * writes. Returns 0, or -errno (the caller starts the listener). */
static int go_dormant(void)
{
	int ret = async_on();

	if (ret)
		return ret;
	__atomic_store_n(&listener_state, LISTENER_DORMANT, __ATOMIC_RELEASE);
	/* What came before the kernel would have told us. */
	if (socket_ready())
		tracer__client_poke();
	return 0;
}

/* The process's own page in force again, unless something else took
 * the poke page's place meanwhile (a disconnect). */
static void unpoke(void)
{
	const struct tracer_control *p = &poke_control;

	__atomic_compare_exchange_n(&tracer__control, &p, real_control, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The filter in force, applied again: the poke left words asking. */
static void refilter(void)
{
	struct tracer__filter_table *old;

	if (tracer__callsites_refilter(&old) == 0)
		tracer__filter_retire(old);
}

/*
 * exec: the new image must not get our socket's signals (a program may
 * have kept the socket open across it), so none is asked for meanwhile;
 * asked again when exec failed. From the exec wrappers (wrap_proc.c).
 */
void tracer__client_exec(bool failed)
{
	int saved = errno;

	if (no_listener(__atomic_load_n(&listener_state, __ATOMIC_ACQUIRE))) {
		if (!failed)
			async_off();
		else if (async_on() != 0 || socket_ready())
			tracer__client_poke();	/* rouse: the listener mends */
	}
	errno = saved;
}

static void settle(void);
static void give_up(void);

static void rouse_locked(void)
{
	__atomic_store_n(&poke_pending, 0, __ATOMIC_RELAXED);
	async_off();
	/* Listening before the drain, as in wake_locked(). */
	send_listening();
	mend_now(drain_socket());	/* or the listener mends it */
	refilter();	/* every call site's word exact again */
	if (start_listener() != 0) {
		say("cannot start the listener thread; tracerd's later "
		    "messages are not read");
		__atomic_store_n(&listener_state, LISTENER_NONE,
				 __ATOMIC_RELEASE);
	}
	unpoke();
	settle();	/* a poke that came meanwhile */
	say("tracerd wrote or hung up: listener started");
}

/* No longer dormant: undo a poke that came after the rouse began (the
 * next slow path of any thread comes here, poke_control in force). */
static void settle(void)
{
	bool poked = __atomic_load_n(&tracer__control, __ATOMIC_ACQUIRE) ==
		     &poke_control;

	if (poked)
		unpoke();
	if (__atomic_exchange_n(&poke_pending, 0, __ATOMIC_ACQ_REL) || poked)
		refilter();
}

/*
 * The connection broke before we read tracerd's reply (the program closed
 * our socket at its start, as servers that close every descriptor do):
 * we cannot name ourselves to a new connection (the reply had our resume
 * token), but tracerd has our pool and drains it while we live. Recording
 * goes on into it under the state page, without filters, switches nor
 * growth from tracerd. If the program made connecting impossible (a
 * seccomp filter), the pool line says why, and tracerd ends our trace with
 * it. Returns true when handled so (a broken connection).
 */
static bool lost_before_reply(int err)
{
	int fd;

	if (!broken(err))
		return false;
	async_off();
	__atomic_store_n(&listener_state, LISTENER_NONE, __ATOMIC_RELEASE);
	give_up();
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && hopeless(-errno)) {
		say("lost the connection before tracerd's reply, and cannot "
		    "make one: %s", strerror(errno));
		tracer__pool_set_untraced(errno);
		disconnect(-errno);
		return true;
	}
	if (fd >= 0)
		close(fd);
	say("lost the connection before tracerd's reply; recording goes on "
	    "into the pool tracerd has");
	return true;
}

/*
 * Registering at the start (PENDING, register_early()), tracerd wrote:
 * read what came (the rest of the pool, the reply, filters). Once the
 * reply is in, the process goes on dormant (or with its listener, when
 * something is left to send), with its own control page.
 */
static void complete_locked(void)
{
	int ret;

	__atomic_store_n(&poke_pending, 0, __ATOMIC_RELAXED);
	ret = drain_socket();
	if (ret && !tracer__client_registered() && lost_before_reply(ret)) {
		unpoke();
		settle();
		return;
	}
	if (ret && mendable(ret)) {
		/* The reply, then the hang-up: tracerd took us and died
		 * (or the program broke our socket). Mended as a dormant
		 * process's connection is: the listener connects again. */
		rouse_locked();
		return;
	}
	if (ret) {
		say("tracerd did not take this process: %s", strerror(-ret));
		async_off();
		__atomic_store_n(&listener_state, LISTENER_NONE,
				 __ATOMIC_RELEASE);
		disconnect(ret);
		give_up();
		return;
	}
	if (tracer__client_registered()) {
		if (!queue_waits())
			__atomic_store_n(&listener_state, LISTENER_DORMANT,
					 __ATOMIC_RELEASE);
		else if (start_listener() != 0) {
			say("cannot start the listener thread; what is left "
			    "to send waits for the next event");
			__atomic_store_n(&listener_state, LISTENER_DORMANT,
					 __ATOMIC_RELEASE);
		}
		say("registered; recording since the start");
	}
	unpoke();
	settle();
}

/*
 * A descriptor of ours is gone (fds.c: no number left to move it to; the
 * syscall() wrapper: a raw close): a dormant process starts its listener
 * now, which connects again, so that a program that then waits for ever
 * is still reached (a signal handler only pokes: its next event).
 */
void tracer__client_lost(void)
{
	if (!no_listener(__atomic_load_n(&listener_state, __ATOMIC_ACQUIRE)) ||
	    (uint32_t)getpid() != tracer__fd_owner_pid)
		return;		/* (not in a vfork child: its table is its own) */
	__atomic_store_n(&poke_pending, 1, __ATOMIC_RELEASE);
	if (tracer__in_handler()) {
		tracer__client_poke();
		return;
	}
	WRAP_GUARD_ENTER();
	tracer__client_rouse();
	WRAP_GUARD_EXIT();
}

void tracer__client_rouse(void)
{
	int st = __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE);

	if (!no_listener(st)) {
		/* A poke that lost the race with the last rouse. */
		if ((__atomic_load_n(&poke_pending, __ATOMIC_ACQUIRE) ||
		     __atomic_load_n(&tracer__control, __ATOMIC_ACQUIRE) ==
		     &poke_control) &&
		    pthread_mutex_trylock(&wake_lock) == 0) {
			settle();
			pthread_mutex_unlock(&wake_lock);
		}
		return;
	}
	if (!__atomic_load_n(&poke_pending, __ATOMIC_ACQUIRE) &&
	    !socket_ready())
		return;
	if (pthread_mutex_trylock(&wake_lock))
		return;		/* another thread rouses it */
	st = __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE);
	if (st == LISTENER_DORMANT)
		rouse_locked();
	else if (st == LISTENER_PENDING)
		complete_locked();
	pthread_mutex_unlock(&wake_lock);
}

bool tracer__client_pending(void)
{
	return __atomic_load_n(&listener_state, __ATOMIC_ACQUIRE) ==
	       LISTENER_PENDING;
}

void tracer__client_settle(void)
{
	struct pollfd p = { .events = POLLIN };
	unsigned token;

	pthread_mutex_lock(&wake_lock);
	if (tracer__client_pending()) {
		token = tracer__fd_hold();
		p.fd = tracer__fd(SOCK);
		if (p.fd >= 0 && poll(&p, 1, wake_timeout_ms) < 0)
			(void)0;	/* a signal: read what is there */
		tracer__fd_release(token);
		complete_locked();
	}
	pthread_mutex_unlock(&wake_lock);
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
 * within timeout_ms (the listener thread would add a wake-up), or by the
 * thread that wakes a detached process: 0 (registered), -ETIMEDOUT (the
 * listener will take it), or a negative errno (refused, or a protocol
 * error).
 */
static int await_reply(int timeout_ms)
{
	struct pollfd p = { .fd = tracer__fd(SOCK), .events = POLLIN };
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

/* Wait until the socket takes more, ms at most: 0, -ETIMEDOUT, or a
 * negative errno. */
static int await_room(long ms)
{
	unsigned token = tracer__fd_hold();
	struct pollfd p = { .fd = tracer__fd(SOCK), .events = POLLOUT };
	int n = p.fd < 0 ? -EBADF : poll(&p, 1, ms > 0 ? (int)ms : 0);

	if (n < 0 && p.fd >= 0)
		n = errno == EINTR ? 1 : -errno;
	tracer__fd_release(token);
	return n < 0 ? n : n == 0 ? -ETIMEDOUT : 0;
}

/*
 * The image ends: send the queue. It holds something only when more was
 * queued than the socket took at once (the descriptions of thousands of
 * call sites a module registered a moment before), which the listener
 * would have sent had the process lived on: without them tracerd could
 * not read those call sites' events. It waits while tracerd reads, up to
 * TRACER_FLUSH_MS in all, and gives up after TRACER_FLUSH_STALL_MS
 * without room on the socket (a tracerd that is stopped or hung does not
 * hold the exit longer). The lock is waited for as long: exit() may come
 * from a signal handler that interrupted a send of this very thread. An
 * empty queue, the rule, costs a lock.
 */
int tracer__client_flush(void)
{
	struct timespec t0, until;
	int ret = 0, saved = errno;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += TRACER_FLUSH_STALL_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&send_lock, &until) != 0)
		return -ETIMEDOUT;
	while (!ret && (ret = send_queued_locked()) == 0 && out_head) {
		left = TRACER_FLUSH_MS - since_us(&t0) / 1000;
		ret = left > 0 ? await_room(left < TRACER_FLUSH_STALL_MS ? left :
					    TRACER_FLUSH_STALL_MS) :
				 -ETIMEDOUT;
	}
	pthread_mutex_unlock(&send_lock);
	errno = saved;
	return ret;
}

/* Registration failed before the listener ran: forget the connection. */
static void give_up(void)
{
	pthread_mutex_lock(&send_lock);
	drop_queue_locked();
	tracer__fd_close(SOCK);
	tracer__fd_close(QUEUE);
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

/*
 * The daemon's state page, SOCKET.state (tracerd/control.c): mapped
 * read-only, its descriptor closed. NULL when there is none (an older
 * tracerd: the process then registers as it always did). Every process
 * of a user who runs tracerd does this at its start: the system calls are
 * made without the C library's wrappers (sys.h; 5 us less a start).
 */
static const struct tracer_control *map_state(const char *sock_path)
{
	static const char suffix[] = ".state";
	char path[TRACER_PATH_MAX + sizeof(suffix)];
	size_t n = strnlen(sock_path, TRACER_PATH_MAX);
	const struct tracer_control *c;
	struct stat st;
	int fd;

	if (n == TRACER_PATH_MAX)
		return NULL;
	/* Not snprintf(): its first call costs a program that never
	 * formats a string several pages of the C library. */
	memcpy(path, sock_path, n);
	memcpy(path + n, suffix, sizeof(suffix));
	/* Not a FIFO's open() either: it would wait for a writer. */
	fd = tracer__sys_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
			      O_NONBLOCK);
	if (fd < 0)
		return NULL;
	c = tracer__sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size >= (off_t)TRACER_CONTROL_SIZE ?
	    tracer__sys_mmap(NULL, TRACER_CONTROL_SIZE, PROT_READ, MAP_SHARED,
			     fd, 0) : NULL;
	tracer__sys_close(fd);
	if (tracer__sys_failed(c))
		return NULL;
	if (c->magic != TRACER_CONTROL_MAGIC ||
	    c->version != TRACER_POOL_VERSION) {
		munmap((void *)c, TRACER_CONTROL_SIZE);
		return NULL;
	}
	return c;
}

/* What is left of timeout_ms since t0, >= 0. */
static int ms_left(const struct timespec *t0, int timeout_ms)
{
	long left = timeout_ms - since_us(t0) / 1000;

	return left > 0 ? (int)left : 0;
}

/* Does page say that no session records? */
static bool idle_page(const struct tracer_control *page)
{
	return TRACER_READ_ONCE(page->epoch) == 0;
}

/* Does the daemon that wrote page run? (A root tracerd is not ours to
 * signal: EPERM says it is there.) */
static bool page_alive(const struct tracer_control *page)
{
	pid_t pid = (pid_t)TRACER_READ_ONCE(page->tracerd_pid);
	int ret;

	if (pid <= 0)
		return false;
	ret = tracer__sys_kill(pid, 0);
	return ret == 0 || ret == -EPERM;
}

/*
 * Detach: the daemon we would register with runs and its state page says
 * that no session records. The process does not connect: it puts the
 * state page in force and waits for a session there (the diagram at the
 * top). The first candidate socket whose page names a running daemon
 * decides; with none, the process connects as always (a daemon that
 * cannot write its page still answers). Returns true when the process
 * is detached.
 */
static bool detach(void)
{
	char paths[2][TRACER_PATH_MAX];
	const struct tracer_control *page = NULL;
	int n = tracer__socket_candidates(paths), i;

	for (i = 0; i < n && !page; i++) {
		page = map_state(paths[i]);
		if (page && !page_alive(page)) {
			munmap((void *)page, TRACER_CONTROL_SIZE);
			page = NULL;
		}
	}
	/*
	 * The filter tracerd gives a process outside sessions, applied here:
	 * a call site that is off never reaches the slow path, so some must
	 * be on for a session's start to be seen. (Not "*", cheaper here but
	 * a cost on every malloc of a program that never meets a session.)
	 * Without a table or an allocation (tracer__callsites_default()).
	 */
	if (!page)
		return false;
	if (!idle_page(page)) {
		state_page = page;	/* a session records: register_now() */
		return false;
	}
	tracer__callsites_default();
	state_page = page;
	__atomic_store_n(&listener_state, LISTENER_DETACHED, __ATOMIC_RELEASE);
	__atomic_store_n(&tracer__control, state_page, __ATOMIC_RELEASE);
	return true;
}

/*
 * Connect to the first daemon that answers. One whose backlog is full
 * (busy with many processes registering at once) is there: wait for it,
 * within the registration's time. Returns the socket or a negative errno.
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

/* Register and the call sites, in one send (tracerd is woken once).
 * Returns 0 or a negative errno. */
static int send_registration(void)
{
	int ret;

	pthread_mutex_lock(&send_lock);
	ret = send_register(0, 0, 0, REG_QUEUE, NULL);
	if (!ret) {
		tracer__callsites_lock();
		ret = queue_callsites_locked();
		tracer__callsites_unlock();
	}
	if (!ret)
		ret = send_now_locked();
	pthread_mutex_unlock(&send_lock);
	return ret;
}

/*
 * The state page, kept by detach() for register_early(), not needed: a
 * process mapping it counts as one waiting for a session (status), and
 * this one will be registered. Kept while it is the page in force (a
 * detached process registering: a thread may be reading it).
 */
static void forget_state_page(void)
{
	if (!state_page ||
	    __atomic_load_n(&tracer__control, __ATOMIC_ACQUIRE) == state_page)
		return;
	munmap((void *)state_page, TRACER_CONTROL_SIZE);
	state_page = NULL;
}

/*
 * Can this start record without waiting for tracerd (register_early())?
 * The state page says a discard-mode session records the default events
 * and gives the geometry; the update signal exists (tracerd's writes
 * must reach a process without a listener); no pool yet.
 */
static bool early_ok(struct tracer_control_start *cs)
{
	return state_page && can_doze() && tracer__pool_segments() == 0 &&
	       tracer__control_read_start(state_page, cs, 64) == 0 &&
	       cs->state.epoch != 0 && cs->state.session != 0 &&
	       cs->state.mode == TRACER_MODE_DISCARD &&
	       (cs->flags & TRACER_START_POOL) &&
	       (cs->flags & TRACER_START_DEFAULT_EVENTS);
}

/*
 * Frames head (Register and Segment), then the queue's (the call sites),
 * in one sendmsg() with the pidfd (when >= 0) and segment 0's memfd:
 * tracerd is woken once. Returns 0 once head went whole (what is left of
 * the queue goes as usual), or a negative errno. Caller holds send_lock.
 */
static int send_head_locked(const void *head, size_t size, int pidfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	struct iovec iov[GATHER];
	struct msghdr mh = { .msg_iov = iov, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	struct out_frame *f;
	unsigned token;
	ssize_t n;
	int i = 1, fd, fds[2], nfds = 0;

	iov[0] = (struct iovec){ (void *)(uintptr_t)head, size };
	for (f = out_head; f && i < GATHER; f = f->next, i++)
		iov[i] = (struct iovec){ f->data, f->size };
	mh.msg_iovlen = (size_t)i;
	token = tracer__fd_hold();	/* the numbers stay ours meanwhile */
	if (pidfd >= 0)
		fds[nfds++] = pidfd;
	fds[nfds++] = tracer__fd(TRACER__FD_SEG0);
	memset(u.buf, 0, sizeof(u.buf));
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	fd = tracer__fd(SOCK);
	n = fd < 0 || fds[nfds - 1] < 0 ? -EBADF :
	    sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && fd >= 0)
		n = -errno;
	tracer__fd_release(token);
	if (n < (ssize_t)size)	/* a new connection takes a few hundred */
		return n < 0 ? (int)n : -EMSGSIZE;
	consume_locked((size_t)n - size);
	return send_now_locked();
}

/*
 * Register, offering segment 0 (made here), and the call sites, in one
 * send; the pidfd (when there is one) lets tracerd learn our exit status
 * even if we are gone and reaped before it reads this. Returns 0 or a
 * negative errno.
 */
static int send_early(uint64_t epoch)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Segment sg = TRACER__SEGMENT__INIT;
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0), ret;
	struct early_frame reg = { .pidfd = pidfd >= 0 };
	void *seg = NULL, *head = NULL;
	size_t seg_size = 0;

	m.body_case = TRACER__MESSAGE__BODY_SEGMENT;
	m.segment = &sg;
	sg.size = tracer__pool_segment_size(0);
	pthread_mutex_lock(&send_lock);
	ret = send_register(1, epoch, 0, REG_EARLY, &reg);
	if (!ret)
		ret = tracer__wire_pack(&m, &seg, &seg_size);
	if (!ret && !(head = malloc(reg.size + seg_size)))
		ret = -ENOMEM;
	if (!ret) {
		memcpy(head, reg.data, reg.size);
		memcpy((char *)head + reg.size, seg, seg_size);
		tracer__callsites_lock();
		ret = queue_callsites_locked();
		tracer__callsites_unlock();
	}
	if (!ret)
		ret = send_head_locked(head, reg.size + seg_size, pidfd);
	pthread_mutex_unlock(&send_lock);
	free(head);
	free(seg);
	free(reg.data);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

/*
 * Start recording now, without tracerd's reply: segment 0 of our pool is
 * made here (one buffer, the state page's geometry), the call sites take
 * the default events, and the state page is the control page in force
 * until the reply (PENDING). tracerd adopts the segment as it comes
 * (tracerd/adopt.c), answers with the rest of the pool and the reply,
 * which signal us (O_ASYNC): the next event reads them
 * (complete_locked()). A process that ends first has its records in
 * tracerd's hands already. Returns 0, -EAGAIN (nothing sent: register
 * as always), or another negative errno (the send failed: not traced).
 */
static int register_early(const struct tracer_control_start *cs)
{
	int ret;

	tracer__callsites_default();
	ret = tracer__pool_make_first(cs);
	if (ret) {
		say("cannot record before tracerd answers: %s", strerror(-ret));
		return -EAGAIN;
	}
	ret = send_early(cs->state.epoch);
	if (ret) {
		say("cannot register with tracerd: %s", strerror(-ret));
		disconnect(ret);
		give_up();
		return ret == -EAGAIN ? -EIO : ret;
	}
	real_control = state_page;
	/* Its signals are told from the program's by their sender. */
	tracer__signal_set_daemon(TRACER_READ_ONCE(state_page->tracerd_pid));
	__atomic_store_n(&tracer__control, state_page, __ATOMIC_RELEASE);
	/* More call sites than the socket took: the listener sends them
	 * (and reads the reply). */
	if (queue_waits() && start_listener() == 0)
		return 0;
	__atomic_store_n(&listener_state, LISTENER_PENDING, __ATOMIC_RELEASE);
	if (async_on() != 0)
		say("no signal from our socket: tracerd's reply is read at "
		    "a later event");
	if (socket_ready())	/* what came before the kernel would tell */
		tracer__client_poke();
	return 0;
}

/*
 * Register on the new connection fd, and read the reply when it comes
 * within timeout_ms of t0 (the listener takes a later one); then go on
 * without a listener until tracerd writes (dormant), or with one. At the
 * process's start, without waiting when it can (register_early(): a
 * detached process that a session wakes is already running, and waits
 * as before). Returns 0 (registered, or registering: PENDING),
 * -ETIMEDOUT (the listener will take the reply), or another negative
 * errno: not traced.
 */
static int register_now(int fd, const struct timespec *t0, int timeout_ms,
			bool start)
{
	struct tracer_control_start cs;
	int ret, reply;

	ret = tracer__thread_key_init();
	if (ret) {
		say("cannot make the thread-exit key: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	tracer__callsites_register_own();
	tracer__modules_init();	/* where everything is, before recording */
	fd = tracer__fd_keep(SOCK, fd);
	if (fd < 0) {
		say("no room for the tracer's descriptors: %s", strerror(-fd));
		return fd;
	}
	install_signal();
	ret = start && early_ok(&cs) ? register_early(&cs) : -EAGAIN;
	if (ret != -EAGAIN) {
		if (!ret)
			say("registering; recording at once into a segment "
			    "of its own (%ld us)", since_us(t0));
		return ret;
	}
	forget_state_page();
	ret = send_registration();
	if (!ret)	/* the connection's wait counts: timeout_ms in all */
		ret = await_reply(ms_left(t0, timeout_ms));
	reply = ret;
	/* Dormant only with nothing left to send: nobody else would. */
	if (!ret && can_doze() && !queue_waits() && go_dormant() == 0) {
		say("registered in %ld us (no listener until tracerd writes)",
		    since_us(t0));
		return 0;
	}
	if (!ret || ret == -ETIMEDOUT)
		ret = start_listener();
	if (!ret && can_doze())	/* tracerd thinks we are lazy */
		send_listening();
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
		say("registered in %ld us", since_us(t0));
	return reply;
}

/* The default filter, as detach() put it in force, against the match. */
static void check_default(void)
{
	const char *name;
	int n = tracer__callsites_default_check(&name);

	if (n)
		say("%d call sites (%s among them) differ from the default "
		    "filter", n, name);
	else
		say("default filter in force on the library's call sites");
}

/* A detached process connects: a session started. 0 or -errno. */
static int attach(void)
{
	struct timespec t0;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = connect_daemon(&t0, wake_timeout_ms);
	if (fd < 0) {
		say("a session started; no tracerd to register with: %s",
		    strerror(-fd));
		disconnect(fd);
		return fd;
	}
	return register_now(fd, &t0, wake_timeout_ms, false);
}

static int client_start(int timeout_ms)
{
	struct timespec t0;
	int fd;

	verbose = getenv("TRACER_VERBOSE") != NULL;
	if (verbose)	/* only said: no clock read on the way (its page) */
		clock_gettime(CLOCK_MONOTONIC, &t0);
	wake_timeout_ms = timeout_ms;
	proc_name[0] = '\0';	/* taken at the registration (a fork's
				   child has its parent's) */
	if (detach()) {
		say("no session: waiting for one, not connected (%ld us)",
		    since_us(&t0));
		if (verbose)
			check_default();
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	prctl_name(proc_name);	/* the main thread's, here */
	fd = connect_daemon(&t0, timeout_ms);
	if (fd < 0) {
		say("no tracerd to register with: %s", strerror(-fd));
		return fd;
	}
	return register_now(fd, &t0, timeout_ms, true);
}

int tracer__client_start(int timeout_ms, char *const *argv)
{
	int ret;

	start_argv = argv;
	ret = client_start(timeout_ms);
	start_argv = NULL;
	return ret;
}
