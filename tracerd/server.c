/*
 * server.c - tracerd's Unix socket: listening, accepting, credentials, and
 * frames in and out of each connection.
 *
 * Connections are polled with uv_poll on the raw sockets (not uv_pipe) so
 * that replies can carry file descriptors with sendmsg/SCM_RIGHTS. Input
 * is assembled into whole frames; any framing or decoding error gets an
 * Error message and a disconnection, and nothing else is affected. The
 * daemon never accepts descriptors from clients: recv without control
 * buffer makes the kernel close any that were sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "paths.h"
#include "tracerd.h"

#define MAX_OUT_FRAMES	256
#define MAX_UIDS	64	/* users counted (others: refused) */
#define ACCEPT_PAUSE_MS	100	/* out of descriptors: accept again then */

static size_t nclients;

/* Connections per user (uid_slot()). */
static struct {
	uid_t uid;
	uint32_t n;
} uids[MAX_UIDS];

static struct tracerd_rate refused_rate, rejected_rate, accept_rate,
			   silent_rate;
static uv_timer_t accept_timer;
static int reserve_fd = -1;	/* given up to accept when out of them */

static void on_client(uv_poll_t *h, int status, int events);
static void uid_count(uid_t uid, int delta);

static void free_out(struct tracerd_out *o)
{
	while (o->nfds > 0)
		close(o->fds[--o->nfds]);
	free(o->data);
	free(o);
}

static void poll_closed(uv_handle_t *h)
{
	struct tracerd_client *c = h->data;

	while (c->nfds_in > 0)
		close(c->fds_in[--c->nfds_in]);
	close(c->fd);
	free(c->in);
	uid_count(c->uid, -1);
	free(c);
	nclients--;
}

void tracerd_client_close(struct tracerd_client *c)
{
	struct tracerd_out *o, *tmp;

	if (c->closing)
		return;
	c->closing = true;
	cds_list_del(&c->node);
	if (c->waits_stop)
		cds_list_del(&c->stop_node);
	if (c->waits_switch)
		cds_list_del(&c->switch_node);
	tracerd_waiters_forget(c);
	cds_list_for_each_entry_safe(o, tmp, &c->out, node) {
		cds_list_del(&o->node);
		free_out(o);
	}
	if (c->proc) {
		c->proc->client = NULL;
		tracerd_process_gone(c->proc);
		c->proc = NULL;
	}
	uv_poll_stop(&c->poll);
	uv_close((uv_handle_t *)&c->poll, poll_closed);
}

/* Send what the queue holds; 0, or -errno when the client must go. */
static int flush_out(struct tracerd_client *c)
{
	struct tracerd_out *o, *tmp;

	cds_list_for_each_entry_safe(o, tmp, &c->out, node) {
		/* The descriptors go with the frame's first byte. */
		ssize_t n = tracer__wire_sendmsg(c->fd, o->data + o->sent,
						 o->size - o->sent,
						 o->sent ? NULL : o->fds,
						 o->sent ? 0 : o->nfds);

		if (n < 0)
			return n == -EAGAIN || n == -EINTR ? 0 : (int)n;
		o->sent += (size_t)n;
		if (o->sent < o->size)
			return 0;
		cds_list_del(&o->node);
		c->out_frames--;
		free_out(o);
	}
	return 0;
}

static void update_poll(struct tracerd_client *c)
{
	int ev = UV_READABLE | UV_DISCONNECT;

	if (!cds_list_empty(&c->out))
		ev |= UV_WRITABLE;
	uv_poll_start(&c->poll, ev, on_client);
}

int tracerd_send(struct tracerd_client *c, const tracer_msg *msg,
		 const int *fds, int nfds)
{
	struct tracerd_out *o;
	int ret, i;

	if (c->closing || c->out_frames >= MAX_OUT_FRAMES) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (!c->closing) {
			tracerd_log("client pid %d does not read its replies;"
				    " disconnecting", (int)c->pid);
			tracerd_client_close(c);
		}
		return -ENOBUFS;
	}
	o = calloc(1, sizeof(*o));
	ret = o ? tracer__wire_pack(msg, (void **)&o->data, &o->size)
		: -ENOMEM;
	if (ret) {
		free(o);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return ret;
	}
	if (nfds)
		memcpy(o->fds, fds, sizeof(int) * (size_t)nfds);
	o->nfds = nfds;
	cds_list_add_tail(&o->node, &c->out);
	c->out_frames++;
	/*
	 * A peer that hung up is closed by on_client() (UV_DISCONNECT, or
	 * the writable callback's own flush failing), never in here: the
	 * caller may be in the middle of setting up its process.
	 */
	(void)flush_out(c);
	update_poll(c);
	return 0;
}

int tracerd_send_error(struct tracerd_client *c, int code, const char *why)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Error e = TRACER__ERROR__INIT;

	e.code = code;
	e.message = (char *)why;
	m.body_case = TRACER__MESSAGE__BODY_ERROR;
	m.error = &e;
	return tracerd_send(c, &m, NULL, 0);
}

/* Protocol error: tell the client why, best effort, and drop it. */
static void reject(struct tracerd_client *c, int code, const char *why)
{
	tracerd_log_rated(&rejected_rate, "client pid %d: %s; disconnecting",
			  (int)c->pid, why);
	tracerd_send_error(c, code, why);
	flush_out(c);
	tracerd_client_close(c);
}

/* A process whose call sites are over the limits: refused, and counted
 * (status). */
static void refused_sites(struct tracerd_client *c)
{
	char why[128];

	snprintf(why, sizeof(why), "call sites take more memory than tracerd "
		 "allows (%" PRIu64 " KiB a process, %" PRIu64 " KiB in all)",
		 c->d->cfg.max_site_memory >> 10,
		 c->d->cfg.max_total_site_memory >> 10);
	c->d->refused++;
	snprintf(c->d->last_refusal, sizeof(c->d->last_refusal),
		 "pid %d: %s", (int)c->pid, why);
	reject(c, -ENOSPC, why);
}

/*
 * Before c's Register: what earlier connections of the same pid sent. A
 * program that exec()s before we read the Register of its old image (it
 * did not wait for our reply) connects again: the old image is to be
 * registered first, then ended as replaced. Connections are accepted, and
 * listed, in the order they were made.
 */
static void read_earlier(struct tracerd_client *c)
{
	struct tracerd_client *x, *tmp;

	cds_list_for_each_entry_safe(x, tmp, &c->d->clients, node) {
		if (x == c)
			return;
		if (x->pid == c->pid && !x->proc)
			tracerd_client_read_all(x);
	}
}

static void dispatch(struct tracerd_client *c, tracer_msg *m)
{
	int ret = 0;

	switch (m->body_case) {
	case TRACER__MESSAGE__BODY_REGISTER:
		if (c->proc)
			{ reject(c, -EALREADY, "registered twice"); return; }
		read_earlier(c);
		if (m->register_->resume_token) {
			/* Answered either way; on -ESRCH the client adopts
			   on a new connection and drops this one. */
			tracerd_process_resume(c, m->register_);
			return;
		}
		ret = tracerd_process_register(c, m->register_);
		if (ret)
			tracerd_client_close(c);
		return;
	case TRACER__MESSAGE__BODY_CALL_SITES:
		if (!c->proc)
			{ reject(c, -EPROTO, "call sites before Register"); return; }
		ret = tracerd_process_callsites(c->proc, m->call_sites);
		if (ret == -ENOSPC)
			{ refused_sites(c); return; }
		if (ret)
			{ reject(c, ret, "invalid call site description"); return; }
		return;
	case TRACER__MESSAGE__BODY_SEGMENT:
		if (!c->proc || !c->proc->adopting)
			{ reject(c, -EPROTO, "Segment without an adopting "
				 "Register"); return; }
		ret = tracerd_process_adopt_segment(c->proc, m->segment,
						    tracerd_client_take_fd(c));
		if (ret)
			{ reject(c, ret, "cannot adopt that pool segment"); return; }
		return;
	case TRACER__MESSAGE__BODY_LISTENING:
		if (!c->proc)
			{ reject(c, -EPROTO, "Listening before Register"); return; }
		c->proc->lazy = false;
		return;
	case TRACER__MESSAGE__BODY_FILTER_APPLIED:
		if (!c->proc)
			{ reject(c, -EPROTO, "FilterApplied before Register"); return; }
		tracerd_control_filter_applied(c->proc, m->filter_applied);
		return;
	case TRACER__MESSAGE__BODY_SESSION_START:
		{ tracerd_session_start(c, m->session_start); return; }
	case TRACER__MESSAGE__BODY_SESSION_STOP:
		{ tracerd_session_stop(c); return; }
	case TRACER__MESSAGE__BODY_STATUS_REQUEST:
		{ tracerd_status(c); return; }
	case TRACER__MESSAGE__BODY_FILTER_REQUEST:
		{ tracerd_session_filter(c, m->filter_request); return; }
	case TRACER__MESSAGE__BODY_SWITCH_REQUEST:
		{ tracerd_session_switch(c); return; }
	case TRACER__MESSAGE__BODY_SNAPSHOT_REQUEST:
		{ tracerd_session_snapshot(c); return; }
	case TRACER__MESSAGE__BODY_LIST_REQUEST:
		{ tracerd_list(c, m->list_request); return; }
	case TRACER__MESSAGE__BODY_TRIGGER_ADD:
		{ tracerd_trigger_add(c, m->trigger_add); return; }
	case TRACER__MESSAGE__BODY_TRIGGER_REMOVE:
		{ tracerd_trigger_remove(c, m->trigger_remove); return; }
	case TRACER__MESSAGE__BODY_TRIGGER_LIST_REQUEST:
		{ tracerd_trigger_list(c); return; }
	default:
		{ reject(c, -EPROTO, "unexpected message type"); return; }
	}
}

/* Handle every whole frame in c->in; false when the client was dropped. */
static bool consume(struct tracerd_client *c)
{
	size_t off = 0;

	while (!c->closing && c->in_len - off >= TRACER_WIRE_HEADER) {
		const char *why = NULL;
		tracer_msg *m;
		uint32_t len;
		int ret;

		ret = tracer__wire_check_header(c->in + off, &len, &why);
		if (ret) {
			reject(c, ret, why);
			return false;
		}
		if (c->in_len - off - TRACER_WIRE_HEADER < len)
			break;
		ret = tracer__wire_unpack(c->in + off + TRACER_WIRE_HEADER,
					  len, &m, &why);
		if (ret) {
			reject(c, ret, why);
			return false;
		}
		off += TRACER_WIRE_HEADER + len;
		c->spoke = true;
		dispatch(c, m);
		tracer__wire_free(m);
	}
	if (c->closing)
		return false;
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return true;
}

/* Keep the descriptors that came with the bytes (a queue, in order). */
static void keep_fds(struct tracerd_client *c, struct msghdr *mh)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t i, n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(fd));
			if (c->nfds_in < TRACERD_CLIENT_FDS)
				c->fds_in[c->nfds_in++] = fd;
			else
				close(fd);	/* more than messages carry */
		}
	}
}

static ssize_t recv_fds(struct tracerd_client *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * TRACER_WIRE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = c->in + c->in_len,
			     .iov_len = c->in_cap - c->in_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n > 0)
		keep_fds(c, &mh);
	return n;
}

static int read_in(struct tracerd_client *c)
{
	ssize_t n;

	if (c->in_cap - c->in_len < 65536) {
		size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
		char *in;

		if (cap > 2 * (TRACER_WIRE_MAX + TRACER_WIRE_HEADER))
			cap = 2 * (TRACER_WIRE_MAX + TRACER_WIRE_HEADER);
		if (cap > c->in_cap) {
			in = realloc(c->in, cap);
			if (!in)
				return -ENOMEM;
			c->in = in;
			c->in_cap = cap;
		}
	}
	n = recv_fds(c);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	c->in_len += (size_t)n;
	return 0;
}

int tracerd_client_take_fd(struct tracerd_client *c)
{
	int fd;

	if (c->nfds_in == 0)
		return -1;
	fd = c->fds_in[0];
	memmove(c->fds_in, c->fds_in + 1, sizeof(int) * (size_t)--c->nfds_in);
	return fd;
}

void tracerd_client_read_all(struct tracerd_client *c)
{
	size_t got;

	do {
		size_t before = c->in_len;

		if (c->closing || read_in(c))
			return;		/* the hang-up is on_client's */
		got = c->in_len - before;
		if (!consume(c))
			return;
	} while (got > 0);
}

static void on_client(uv_poll_t *h, int status, int events)
{
	struct tracerd_client *c = h->data;
	int ret = status < 0 ? status : 0;

	if (!ret && (events & UV_WRITABLE))
		ret = flush_out(c);
	if (!ret && (events & (UV_READABLE | UV_DISCONNECT))) {
		ret = read_in(c);
		if (!ret && !consume(c))
			return;
	}
	if (ret) {
		/* A peer that hung up (an error on the socket, a reply it
		 * could not take) may have said more before it did: a process
		 * that did not wait for our reply sent its call sites. */
		tracerd_client_read_all(c);
		tracerd_client_close(c);
		return;
	}
	if (!c->closing)
		update_poll(c);
}

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

/* Is a member of the `tracing` group connected on fd? */
static bool in_tracing_group(int fd, gid_t primary)
{
	struct group *g = getgrnam("tracing");
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	size_t i;

	if (!g)
		return false;
	if (primary == g->gr_gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == g->gr_gid)
			return true;
	return false;
}

/*
 * Who may connect: the daemon's own user; when the daemon runs as root,
 * root and the members of the `tracing` group.
 */
static bool allowed(int fd, const struct ucred *cr)
{
	uid_t me = geteuid();

	if (cr->uid == me)
		return true;
	return me == 0 && in_tracing_group(fd, cr->gid);
}

/* Tell a refused peer why, without waiting for it. */
static void refuse(int fd, int code, const char *why)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Error e = TRACER__ERROR__INIT;
	size_t size;
	void *frame;

	e.code = code;
	e.message = (char *)why;
	m.body_case = TRACER__MESSAGE__BODY_ERROR;
	m.error = &e;
	if (!tracer__wire_pack(&m, &frame, &size)) {
		if (send(fd, frame, size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			(void)0;	/* it may be gone already */
		free(frame);
	}
	close(fd);
}

/*
 * The slot of uid in the per-user counts (added with n = 0), NULL when
 * MAX_UIDS users are connected already.
 */
static uint32_t *uid_slot(uid_t uid)
{
	size_t i, free_at = MAX_UIDS;

	for (i = 0; i < MAX_UIDS; i++) {
		if (uids[i].n && uids[i].uid == uid)
			return &uids[i].n;
		if (!uids[i].n && free_at == MAX_UIDS)
			free_at = i;
	}
	if (free_at == MAX_UIDS)
		return NULL;
	uids[free_at].uid = uid;
	return &uids[free_at].n;
}

static void uid_count(uid_t uid, int delta)
{
	uint32_t *n = uid_slot(uid);

	if (n)
		*n += (uint32_t)delta;
}

/* The oldest connection that never sent a whole frame, NULL: none. */
static struct tracerd_client *oldest_silent(struct tracerd *d)
{
	struct tracerd_client *c;

	cds_list_for_each_entry(c, &d->clients, node)
		if (!c->spoke && !c->closing)
			return c;
	return NULL;
}

static void log_silent(struct tracerd_client *c, const char *what)
{
	tracerd_log_rated(&silent_rate, "client pid %d (uid %d) sent nothing "
			  "whole in %" PRIu64 " ms: %s", (int)c->pid,
			  (int)c->uid, tracerd_now_ms() - c->since_ms, what);
}

/*
 * Room for a connection of uid: NULL, or why not (--max-clients-per-user
 * of a user other than root and ours). When all --max-clients slots are
 * taken, the oldest connection that has not said anything whole
 * gives its slot up: idle connections cannot lock programs and tracectl
 * out.
 */
static const char *no_room(struct tracerd *d, uid_t uid)
{
	uint32_t *n = uid_slot(uid);
	struct tracerd_client *old;

	if (!n || (uid != 0 && uid != geteuid() &&
		   *n >= d->cfg.max_clients_per_user))
		return "tracerd has too many clients of this user";
	if (nclients < d->cfg.max_clients)
		return NULL;
	old = oldest_silent(d);
	if (!old)
		return "tracerd has too many clients";
	log_silent(old, "disconnected to make room");
	tracerd_client_close(old);
	return NULL;
}

/* Tell a refused peer why (logged at most TRACERD_RATE_BURST times every
 * 10 s: a peer may try again and again). */
static void refuse_logged(struct tracerd *d, int fd, const struct ucred *cr,
			  int code, const char *why)
{
	d->refused++;
	snprintf(d->last_refusal, sizeof(d->last_refusal),
		 "pid %d (uid %d): %s", (int)cr->pid, (int)cr->uid, why);
	tracerd_log_rated(&refused_rate, "refused a client (pid %d, uid %d): "
			  "%s", (int)cr->pid, (int)cr->uid, why);
	refuse(fd, code, why);
}

static void accept_one(struct tracerd *d, int fd)
{
	struct tracerd_client *c;
	struct ucred cr = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t len = sizeof(cr);
	const char *why;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    !allowed(fd, &cr)) {
		refuse_logged(d, fd, &cr, -EACCES, "permission denied: tracerd "
			      "serves only its own user (or, as root, root "
			      "and the tracing group)");
		return;
	}
	why = no_room(d, cr.uid);
	if (why) {
		refuse_logged(d, fd, &cr, -EUSERS, why);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	c->pid = cr.pid;
	c->uid = cr.uid;
	c->since_ms = tracerd_now_ms();
	CDS_INIT_LIST_HEAD(&c->out);
	if (uv_poll_init(d->loop, &c->poll, fd)) {
		close(fd);
		free(c);
		return;
	}
	c->poll.data = c;
	nclients++;
	uid_count(c->uid, 1);
	cds_list_add_tail(&c->node, &d->clients);
	update_poll(c);
}

void tracerd_server_sweep(struct tracerd *d)
{
	struct tracerd_client *c, *tmp;
	uint64_t now = tracerd_now_ms();

	cds_list_for_each_entry_safe(c, tmp, &d->clients, node) {
		if (c->spoke || c->closing)
			continue;
		if (now - c->since_ms < d->cfg.silent_ms)
			break;	/* the list is in the order of arrival */
		log_silent(c, "disconnected");
		tracerd_client_close(c);
	}
}

static void on_listen(uv_poll_t *h, int status, int events);

static void accept_again(uv_timer_t *t)
{
	struct tracerd *d = t->data;

	if (d->listen_fd >= 0)
		uv_poll_start(&d->listen_poll, UV_READABLE, on_listen);
}

/*
 * Out of descriptors (EMFILE, ENFILE): the waiting peer gets a refusal
 * through the descriptor kept in reserve, and accepting pauses for
 * ACCEPT_PAUSE_MS instead of spinning on a socket that stays readable.
 */
static void out_of_fds(struct tracerd *d, int err)
{
	int fd;

	if (reserve_fd >= 0) {
		close(reserve_fd);
		fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			refuse(fd, -EMFILE,
			       "tracerd is out of file descriptors");
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	tracerd_log_rated(&accept_rate, "cannot accept: %s; accepting again in "
			  "%d ms", strerror(err), ACCEPT_PAUSE_MS);
	uv_poll_stop(&d->listen_poll);
	accept_timer.data = d;
	uv_timer_start(&accept_timer, accept_again, ACCEPT_PAUSE_MS, 0);
}

static void on_listen(uv_poll_t *h, int status, int events)
{
	struct tracerd *d = h->data;
	int i, fd;

	(void)events;
	if (status < 0)
		return;
	for (i = 0; i < 64; i++) {
		fd = accept4(d->listen_fd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				out_of_fds(d, errno);
			return;
		}
		accept_one(d, fd);
	}
}

/* Accept every connection already made (in their order). */
static void accept_pending(struct tracerd *d)
{
	int i, fd;

	for (i = 0; i < 4096 && d->listen_fd >= 0; i++) {
		fd = accept4(d->listen_fd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;	/* none left (or no descriptor: on_listen's) */
		accept_one(d, fd);
	}
}

void tracerd_server_take_in(struct tracerd *d, struct tracerd_client *except)
{
	struct tracerd_client *c, *tmp;
	struct tracerd_process *p, *ptmp;

	accept_pending(d);
	/* A client closed meanwhile stays linked until its close completes;
	 * read_all() passes over it. */
	cds_list_for_each_entry_safe(c, tmp, &d->clients, node)
		if (c != except)
			tracerd_client_read_all(c);
	/* Those already gone end now, in the session. */
	cds_list_for_each_entry_safe(p, ptmp, &d->processes, node)
		if (!p->ending && !p->adopting && p->pid_poll.loop &&
		    tracerd_pid_exited(p)) {
			uv_poll_stop(&p->pid_poll);
			tracerd_process_end(p, TRACERD_END_DIED);
		}
	/* And those whose end goes in steps finish. */
	tracerd_finish_ends(d);
}

void tracerd_server_take_in_pid(struct tracerd *d, pid_t pid)
{
	struct tracerd_client *c, *tmp;

	accept_pending(d);
	cds_list_for_each_entry_safe(c, tmp, &d->clients, node)
		if (c->pid == pid && !c->proc)
			tracerd_client_read_all(c);
}

/* Another tracerd answering on path? Remove a stale socket file. */
static int check_existing(const struct sockaddr_un *sa)
{
	int ret = tracer__wire_connect(sa->sun_path, 0);

	if (ret >= 0) {
		close(ret);
		tracerd_log("another tracerd is already running on '%s'",
			    sa->sun_path);
		return -EADDRINUSE;
	}
	if (ret == -ECONNREFUSED) {
		struct stat st;

		if (lstat(sa->sun_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
			tracerd_log("'%s' exists and is not a socket",
				    sa->sun_path);
			return -EEXIST;
		}
		tracerd_log("replacing stale socket '%s'", sa->sun_path);
		unlink(sa->sun_path);
	}
	return 0;
}

/* Create the socket's directory (owner only, unless system-wide). */
static int make_parent(const char *path)
{
	char dir[TRACER_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	struct stat st;

	if (mkdir(dir, geteuid() == 0 ? 0755 : 0700) == 0) {
		/* Root's socket is for the tracing group too: not masked. */
		if (geteuid() == 0 && chmod(dir, 0755) < 0)
			(void)0;	/* lstat() below has the last word */
	} else if (errno != EEXIST) {
		tracerd_log("cannot create '%s': %s", dir, strerror(errno));
		return -errno;
	}
	/* In a shared /tmp someone else could have made it first. */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & S_IWOTH && !(st.st_mode & S_ISVTX))) {
		tracerd_log("'%s' is not a directory of ours that others cannot"
			    " write to", dir);
		return -EPERM;
	}
	return 0;
}

int tracerd_listen(struct tracerd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = d->cfg.socket_path;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		tracerd_log("socket path '%s' is too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ret = make_parent(path);
	if (!ret)
		ret = check_existing(&sa);
	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, geteuid() == 0 ? 0666 : 0600) < 0 ||
	    listen(fd, 128) < 0) {
		ret = -errno;
		tracerd_log("cannot listen on '%s': %s", path,
			    strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	d->listen_fd = fd;
	reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	uv_timer_init(d->loop, &accept_timer);
	uv_poll_init(d->loop, &d->listen_poll, fd);
	d->listen_poll.data = d;
	uv_poll_start(&d->listen_poll, UV_READABLE, on_listen);
	return 0;
}

void tracerd_server_close(struct tracerd *d)
{
	struct tracerd_client *c, *tmp;

	cds_list_for_each_entry_safe(c, tmp, &d->clients, node)
		tracerd_client_close(c);
	if (d->listen_fd >= 0) {
		uv_poll_stop(&d->listen_poll);
		uv_close((uv_handle_t *)&d->listen_poll, NULL);
		close(d->listen_fd);
		unlink(d->cfg.socket_path);
		d->listen_fd = -1;
	}
}
