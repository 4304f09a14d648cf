/*
 * relay.c - a session's traces streamed to lttng-relayd as they are
 * written (tracectl start --relay net://HOST).
 *
 * The relay follows the session's files: every process directory is a
 * trace on relayd's side (HOST/SESSION/NAME-PID), its metadata one
 * stream, every channel file another. What the drain appends to a file is
 * read back (page cache) and sent, a packet at a time, on the data
 * connection, with its index on the control one (common/relay_proto.h),
 * so that live viewers (babeltrace2 --input-format=lttng-live) see it.
 * The local files are the buffer: nothing waits for the network, and the
 * loop never blocks on it (non-blocking libuv streams; at most
 * RELAY_INFLIGHT bytes queued on them).
 *
 *   drain --append--> CHANNEL-TID --pread--> data: {hdr, packet}
 *                                             ctrl: SEND_INDEX -> OK
 *   per stream:  0 <= acked <= sent <= size (whole packets)
 *     size:  bytes of the file (the drain tells, tracerd_relay_grew())
 *     sent:  queued on the data connection
 *     acked: written out on the data connection, and relayd answered
 *            their indexes (the lower of the two)
 *
 * A stream whose file gets more than the backlog bound (--relay-backlog)
 * ahead of what was sent skips its oldest unsent packets: their records
 * are counted (status) and told in the relayed stream as discarded events
 * (its packets' events_discarded carry them). When relayd goes away, the
 * relay connects again with back-off; the next relay session (NAME.2,
 * ...) gets every trace's metadata again and each stream from its last
 * acknowledged packet. At the session's stop the relay sends the rest,
 * closes its streams and its trace chunk, and lets go (RELAY_STOP_MS at
 * most): the stop itself does not wait.
 *
 * Live: every live tick, an idle stream gets a beacon (an index without a
 * packet) promising no event before a time (promise()); after streams
 * were published, an empty packet instead (nudge()), which is how relayd
 * tells viewers already attached of the new streams: only in a live
 * session (--live-interval), for the packet goes into relayd's files,
 * where a later packet of a thread far behind could begin before it.
 * Neither once the stop's end began (finish(): DATA_PENDING rounds, then
 * the closes).
 *
 * Metadata goes as CTF metadata packets (a 37-byte header before each
 * piece of text), which relayd stores as they come and both its offline
 * readers and live viewers take piece by piece.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracerd.h"
#include "relay.h"
#include "relay_proto.h"
#include "paths.h"

#define RELAY_INFLIGHT	(8u << 20)	/* bytes queued on the sockets */
#define RELAY_BATCH	(256u << 10)	/* packet bytes per data write */
#define RELAY_TURN	(512u << 10)	/* bytes read and queued per loop
					   turn: the drain goes first (a
					   ring fills in milliseconds) */
#define RELAY_YIELD_MS	5		/* the drain is behind: wait */
#define RELAY_MARKS	8192		/* marks kept per stream */
#define RELAY_MARK_SPAN	(256u << 10)	/* appends merged into one mark */
#define RELAY_DONE_MAX	(1u << 20)	/* retired names kept per trace */
#define RELAY_QMAX	65536		/* replies awaited, at most */
#define RELAY_SILENT_MS	30000		/* replies owed this long: broken */
#define RELAY_SKIP_LOG_MS 10000		/* "events skipped" this often */
#define RELAY_META_PIECE (64u << 10)	/* metadata text per packet */
#define RELAY_BACKOFF_MIN_MS 250
#define RELAY_BACKOFF_MAX_MS 10000
#define RELAY_STOP_MS	10000		/* after a stop, to send the rest */
#define RELAY_LAG_NS	100000000u	/* beacons: this and two live
					   intervals behind now */
#define META_HEAD	37		/* CTF metadata packet header */
#define META_MAGIC	0x75D11D57u
#define PKT_HEAD	sizeof(struct tracer_rb_packet)

struct relay_trace;

struct tracerd_relay_stream {
	struct cds_list_head node;	/* its trace's streams */
	struct relay_trace *trace;
	char name[48];			/* its file's, relayd's too */
	int fd;				/* read-only; -1: broken */
	uint64_t size, sent, acked;	/* see the top */
	uint64_t wrote, indexed;	/* acked: the lower of the data
					   written out and the indexes
					   relayd answered */
	uint64_t gap_from, gap_to;	/* skipped behind packets in flight */
	uint64_t handle;		/* relayd's; 0: not added yet */
	bool adding;			/* ADD_STREAM sent, no reply yet */
	bool closed;			/* the file is complete */
	bool busy;			/* sent since the last tick */
	uint64_t net_seq;		/* next packet's, this relay session */
	uint64_t seq;			/* next packet_seq_num, the same */
	uint64_t skipped;		/* records skipped, in all */
	uint64_t untold;		/* of which no packet told yet */
	uint64_t class_id;		/* CTF stream class (its packets') */
	struct tracer_rb_packet last;	/* the last packet's header sent */
	uint64_t promised;		/* the last beacon's time (no event
					   before it is to come) */
	uint32_t waits;			/* replies queued that name it */
	bool retired;			/* done: closed on both sides */
	/* Records by offset, from what the drain said it appended: a skip
	 * counts what it skips without reading it back. */
	struct relay_mark { uint64_t end, cum; } *marks;
	size_t nmarks, capmarks;
	uint64_t cum;			/* records appended, in all */
	uint64_t base_end, base_cum;	/* the last mark let go */
	bool unmarked;			/* a growth not told: walk instead */
};

struct relay_trace {
	struct cds_list_head node;	/* the relay's traces */
	struct tracerd_relay *r;
	char *dir;			/* the local process directory */
	char path[TRACER_RELAY_PATH_MAX];	/* NAME-PID */
	int meta_fd;
	uint64_t meta_sent, meta_handle;
	bool meta_adding;
	uint8_t uuid[16];		/* the trace's, from its metadata */
	bool have_uuid;
	bool closed;			/* its process's files are closed */
	bool incomplete;		/* a file of it is not streamed */
	struct relay_done {		/* --relay-only: retired streams */
		char name[48];
		uint32_t generation;	/* the relay session they went to */
	} *done;
	size_t ndone, capdone;
	bool retired;			/* done: its metadata all sent, our
					   descriptor of it closed */
	struct cds_list_head streams;
};

/* A reply we wait for, in the order of the commands. ctx: the stream
 * (end 0) or trace (end 1) of an ADD_STREAM, the stream of a SEND_INDEX
 * (end: where its packet ends in the file), of a CLOSE_STREAM the stream
 * or trace (end as for ADD_STREAM), or NULL. */
struct relay_wait {
	enum tracer_relay_cmd cmd;
	void *ctx;
	uint64_t end;
};

/* One connection pair: freed once both handles closed. */
struct relay_conn {
	struct tracerd_relay *r;
	uv_tcp_t ctrl, data;
	uv_connect_t creq[2];
	int open;			/* handles not closed yet */
	int connected;
	bool up;			/* the handshake is done */
	uint64_t heard_ms;		/* a reply last came (or we asked) */
	bool dead;			/* closing */
	uint8_t in[8192];
	size_t nin;
	struct relay_wait *q;
	size_t qhead, qlen, qcap;
	uint8_t *out;			/* control commands of this turn */
	size_t nout, outcap;
};

struct tracerd_relay {
	struct tracerd *d;
	struct cds_list_head node;	/* d->relays, once stopping */
	char *url;
	char host[256];
	uint16_t ports[2];		/* control, data */
	char name[200];			/* the session directory's name */
	char hostname[64];
	uint8_t uuid[16];
	uint32_t live_us;
	uint64_t backlog;
	struct relay_conn *conn;	/* NULL: down */
	uv_timer_t timer;		/* reconnect, a pump, a DATA_PENDING
					   round */
	uv_timer_t deadline;		/* the stop's end: let go */
	uv_idle_t kick;			/* a pump after the drain */
	uv_getaddrinfo_t gai;
	bool resolving, kicking, stopping, finishing, freed;
	bool only;			/* --relay-only: no local copy */
	bool published;			/* streams published since the last
					   tick: idle streams get an empty
					   packet, not a beacon */
	bool settling;			/* after the stop: DATA_PENDING rounds */
	uint32_t pending_left;		/* replies of this round to come */
	bool pending_any;		/* one said "not yet" */
	int handles;			/* timer, kick: closing at the end */
	unsigned backoff_ms;
	uint32_t generation;		/* relay sessions started */
	uint64_t inflight;		/* bytes queued on the sockets */
	uint64_t behind_seen;		/* d->drain_behind at the last pump */
	uint64_t skip_logged;		/* r->skipped when last logged */
	uint64_t skip_log_ms;		/* and when */
	struct cds_list_head traces;
	/* figures (status) */
	uint64_t bytes_sent, packets_sent, skipped;
	uint32_t nstreams;		/* streams opened, in all */
	char path[TRACER_RELAY_REPLY_PATH];
	char error[320];
	const char *state;
};

/* A write on a connection: the bytes live with the request. */
struct relay_write {
	uv_write_t req;
	struct relay_conn *conn;
	size_t len;
	struct tracerd_relay_stream *s;	/* packets: whose, up to where */
	uint64_t end;
	uint8_t data[];
};

static void pump(struct tracerd_relay *r);
static void advance(struct tracerd_relay_stream *s, uint64_t wrote,
		    uint64_t indexed);
static void on_timer(uv_timer_t *t);
static void kick(struct tracerd_relay *r);
static void data_pending(struct tracerd_relay *r, uint32_t value);
static void conn_fail(struct relay_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void relay_free(struct tracerd_relay *r);

/* ------------------------------------------------------------------ */
/* Addresses                                                           */

int tracerd_relay_check_url(const char *url, char *why, size_t n)
{
	char host[256];
	uint16_t c, dp;

	if (tracer__relay_parse_url(url, host, sizeof(host), &c, &dp)) {
		snprintf(why, n, "bad relay address '%s' (net://HOST"
			 "[:CONTROL_PORT[:DATA_PORT]])", url);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Writes                                                              */

static void write_done(uv_write_t *req, int status)
{
	struct relay_write *w = (struct relay_write *)(void *)req;
	struct relay_conn *c = w->conn;
	struct tracerd_relay *r = c->r;

	if (!c->dead) {
		r->inflight -= w->len;
		if (status < 0)
			conn_fail(c, "cannot send: %s", uv_strerror(status));
		else if (w->s && w->end > w->s->wrote)
			advance(w->s, w->end, w->s->indexed);
	}
	free(w);
	if (r && !c->dead && !r->freed)
		pump(r);
}

/* Queue len bytes at buf (taken: a relay_write's data) on s. */
static int send_bytes(struct relay_conn *c, uv_tcp_t *s, struct relay_write *w)
{
	uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)w->len);
	int ret;

	w->conn = c;
	ret = uv_write(&w->req, (uv_stream_t *)s, &b, 1, write_done);
	if (ret) {
		free(w);
		conn_fail(c, "cannot send: %s", uv_strerror(ret));
		return ret;
	}
	c->r->inflight += w->len;
	return 0;
}

static struct relay_write *new_write(size_t len)
{
	struct relay_write *w = malloc(sizeof(*w) + len);

	if (w) {
		w->len = len;
		w->s = NULL;
		w->end = 0;
	}
	return w;
}

/* The data up to `wrote` left us, relayd answered the indexes up to
 * `indexed`: acknowledged is what both say. */
static void advance(struct tracerd_relay_stream *s, uint64_t wrote,
		    uint64_t indexed)
{
	s->wrote = wrote;
	s->indexed = indexed;
	if ((wrote < indexed ? wrote : indexed) > s->acked)
		s->acked = wrote < indexed ? wrote : indexed;
	if (s->acked == s->gap_from && s->gap_to > s->acked)
		s->acked = s->wrote = s->indexed = s->gap_to;
}

/* Room for n more bytes of control commands this turn. */
static uint8_t *out_room(struct relay_conn *c, size_t n)
{
	if (c->outcap - c->nout < n) {
		size_t cap = c->outcap ? c->outcap : 4096;
		uint8_t *p;

		while (cap - c->nout < n)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p)
			return NULL;
		c->out = p;
		c->outcap = cap;
	}
	return c->out + c->nout;
}

static void stream_free(struct tracerd_relay_stream *s);
static void trace_free(struct relay_trace *t);

/* A queued reply names w's stream (d = 1), or no more (-1): a retired
 * stream goes once no reply names it. (Traces stay till the end.) */
static void waits_add(const struct relay_wait *w, int d)
{
	struct tracerd_relay_stream *s = w->ctx;

	if (!s || (w->cmd != TRACER_RELAY_ADD_STREAM &&
		   w->cmd != TRACER_RELAY_SEND_INDEX &&
		   w->cmd != TRACER_RELAY_CLOSE_STREAM) ||
	    (w->cmd != TRACER_RELAY_SEND_INDEX && w->end))
		return;		/* none, or a trace's metadata */
	s->waits += (uint32_t)d;
	if (d < 0 && s->retired && !s->waits)
		stream_free(s);
}

/* The command an encoder wrote at out_room() is in; wait for its reply
 * (cmd 0: none). */
static int out_push(struct relay_conn *c, long n, enum tracer_relay_cmd cmd,
		    void *ctx, uint64_t end)
{
	if (n < 0)
		return (int)n;
	c->nout += (size_t)n;
	if (!cmd)
		return 0;
	if (!c->qlen)	/* owed from now */
		c->heard_ms = uv_now(c->r->d->loop);
	if (c->qlen == c->qcap) {
		size_t cap = c->qcap ? 2 * c->qcap : 64, i;
		struct relay_wait *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (i = 0; i < c->qlen; i++)
			q[i] = c->q[(c->qhead + i) % c->qcap];
		free(c->q);
		c->q = q;
		c->qcap = cap;
		c->qhead = 0;
	}
	c->q[(c->qhead + c->qlen++) % c->qcap] =
		(struct relay_wait){ cmd, ctx, end };
	waits_add(&c->q[(c->qhead + c->qlen - 1) % c->qcap], 1);
	return 0;
}

/* Send this turn's control commands. */
static void out_flush(struct relay_conn *c)
{
	struct relay_write *w;

	if (!c->nout || c->dead)
		return;
	w = new_write(c->nout);
	if (!w) {
		conn_fail(c, "out of memory");
		return;
	}
	memcpy(w->data, c->out, c->nout);
	c->nout = 0;
	send_bytes(c, &c->ctrl, w);
}

#define ROOM	1024	/* a command and its strings, at most */

/* ------------------------------------------------------------------ */
/* Streams and traces                                                  */

/* Back to "not in any relay session": the next one starts it again from
 * its last acknowledged packet. */
static void stream_reset(struct tracerd_relay_stream *s)
{
	s->handle = 0;
	s->adding = false;
	s->sent = s->wrote = s->indexed = s->acked;
	s->net_seq = 0;
	s->seq = 0;
	s->promised = 0;
}

static void trace_reset(struct relay_trace *t)
{
	struct tracerd_relay_stream *s;

	t->meta_handle = 0;
	t->meta_adding = false;
	t->meta_sent = 0;
	cds_list_for_each_entry(s, &t->streams, node)
		stream_reset(s);
}

static void stream_free(struct tracerd_relay_stream *s)
{
	cds_list_del(&s->node);
	if (s->fd >= 0)
		close(s->fd);
	free(s->marks);
	free(s);
}

static void trace_free(struct relay_trace *t)
{
	struct tracerd_relay_stream *s, *tmp;

	cds_list_del(&t->node);
	cds_list_for_each_entry_safe(s, tmp, &t->streams, node) {
		if (s->fd >= 0)
			close(s->fd);
		free(s->marks);
		free(s);
	}
	if (t->meta_fd >= 0)
		close(t->meta_fd);
	free(t->done);
	free(t->dir);
	free(t);
}

static struct relay_trace *trace_of(struct tracerd_relay *r, const char *dir)
{
	struct relay_trace *t;

	cds_list_for_each_entry(t, &r->traces, node)
		if (!strcmp(t->dir, dir))
			return t;
	return NULL;
}

/* The stream's file size now (a file the drain does not tell about: the
 * spill writes some). */
static void stream_stat(struct tracerd_relay_stream *s)
{
	struct stat sb;

	if (s->fd >= 0 && fstat(s->fd, &sb) == 0 &&
	    (uint64_t)sb.st_size > s->size) {
		s->size = (uint64_t)sb.st_size;
		s->unmarked = true;	/* grown untold: skips walk */
	}
}

/* A packet's header at off of s's file: its length, 0 at the end of what
 * is whole, or -EBADMSG. */
static long packet_at(struct tracerd_relay_stream *s, uint64_t off,
		      struct tracer_rb_packet *h)
{
	uint64_t len;

	if (s->size - off < PKT_HEAD)
		return 0;
	if (pread(s->fd, h, PKT_HEAD, (off_t)off) != (ssize_t)PKT_HEAD)
		return -EBADMSG;
	len = h->packet_size / 8;
	if (h->magic != TRACER_CTF_MAGIC || h->packet_size % 8 ||
	    len < PKT_HEAD || h->content_size > h->packet_size ||
	    len > (64u << 20))
		return -EBADMSG;
	return s->size - off < len ? 0 : (long)len;
}

/* The records of the packet of len bytes at off (for a skip's count). */
static uint64_t records_at(struct tracerd_relay_stream *s, uint64_t off,
			   uint64_t len, uint64_t content)
{
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	uint64_t n = 0;
	void *pk = malloc(len);

	if (pk && pread(s->fd, pk, len, (off_t)off) == (ssize_t)len)
		while (tracer__rb_packet_next(pk, content, &cur, &rec))
			n++;
	free(pk);
	return n;
}

static void stream_broken(struct tracerd_relay_stream *s, const char *why)
{
	tracerd_log("relay: '%s/%s' is not streamed any more: %s",
		    s->trace->path, s->name, why);
	close(s->fd);
	s->fd = -1;
}

/* Let go of the marks s->sent has passed. */
static void marks_prune(struct tracerd_relay_stream *s)
{
	size_t i = 0;

	while (i < s->nmarks && s->marks[i].end <= s->sent) {
		s->base_end = s->marks[i].end;
		s->base_cum = s->marks[i].cum;
		i++;
	}
	if (i) {
		memmove(s->marks, s->marks + i,
			(s->nmarks - i) * sizeof(*s->marks));
		s->nmarks -= i;
	}
}

/* Skip packets one by one, reading them to count their records, until
 * s->sent reaches `to` (or a packet that does not end before it). */
static uint64_t skip_walking(struct tracerd_relay_stream *s, uint64_t to)
{
	struct tracer_rb_packet h;
	uint64_t records = 0;
	long len;

	while (s->sent < to) {
		len = packet_at(s, s->sent, &h);
		if (len <= 0) {
			if (len < 0)
				stream_broken(s, "a damaged packet");
			break;
		}
		records += records_at(s, s->sent, (uint64_t)len,
				      h.content_size / 8);
		s->sent += (uint64_t)len;
	}
	return records;
}

/* Skip to the end of the first append ending at `to` or after: counted
 * by the marks, and by reading only the part of an append already begun.
 * Returns the records skipped. */
static uint64_t skip_to(struct tracerd_relay_stream *s, uint64_t to)
{
	uint64_t records = 0;
	size_t i;

	marks_prune(s);
	if (s->unmarked || !s->nmarks)
		return skip_walking(s, to);
	if (s->sent != s->base_end) {	/* inside the first append */
		records = skip_walking(s, s->marks[0].end);
		if (s->sent != s->marks[0].end)
			return records;
		marks_prune(s);
	}
	for (i = 0; i + 1 < s->nmarks && s->marks[i].end < to; i++)
		;
	if (i < s->nmarks) {
		records += s->marks[i].cum - s->base_cum;
		s->sent = s->marks[i].end;
		marks_prune(s);
	}
	return records;
}

/*
 * The backlog bound: a stream more than r->backlog bytes behind its file
 * skips its oldest unsent packets, down to half the bound. Their records
 * are counted, and told by the stream's next packet.
 */
static void bound_backlog(struct tracerd_relay *r,
			  struct tracerd_relay_stream *s)
{
	uint64_t records, now, from;

	if (s->fd < 0 || s->size - s->sent <= r->backlog)
		return;
	from = s->sent;
	records = skip_to(s, s->size - r->backlog / 2);
	if (s->acked == from)	/* nothing in flight: past the skip */
		s->acked = s->wrote = s->indexed = s->sent;
	else if (s->sent > from) {	/* once what flies is answered */
		if (s->gap_to != from)
			s->gap_from = from;
		s->gap_to = s->sent;
	}
	s->skipped += records;
	s->untold += records;
	r->skipped += records;
	now = uv_now(r->d->loop);
	if (r->skipped != r->skip_logged &&
	    now - r->skip_log_ms >= RELAY_SKIP_LOG_MS) {
		tracerd_log("relay: %s: files more than %" PRIu64 " MiB ahead "
			    "of what was streamed: %" PRIu64 " events skipped"
			    " so far", r->url, r->backlog >> 20, r->skipped);
		r->skip_logged = r->skipped;
		r->skip_log_ms = now;
	}
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */

/* ADD_STREAM for the trace's metadata and its streams not added yet.
 * Returns true when one was sent (STREAMS_SENT follows). */
static bool announce(struct relay_conn *c, struct relay_trace *t)
{
	struct tracerd_relay_stream *s;
	bool any = false;
	uint8_t *o;

	if (t->retired)		/* all sent (a new relay session: all
				   was, in an earlier one) */
		return false;
	if (!t->meta_handle && !t->meta_adding) {
		o = out_room(c, ROOM);
		if (!o || out_push(c, tracer__relay_add_stream(o, ROOM,
					"metadata", t->path),
				   TRACER_RELAY_ADD_STREAM, t, 1))
			return false;
		t->meta_adding = any = true;
	}
	cds_list_for_each_entry(s, &t->streams, node) {
		if (s->handle || s->adding || s->fd < 0 || s->retired ||
		    (s->acked == s->size && s->closed))
			continue;
		o = out_room(c, ROOM);
		if (!o || out_push(c, tracer__relay_add_stream(o, ROOM,
					s->name, t->path),
				   TRACER_RELAY_ADD_STREAM, s, 0))
			break;
		s->adding = any = true;
	}
	return any;
}

static int hex(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' :
	       ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* The trace's uuid, from the `uuid = "..."` of its trace block. */
static void take_uuid(struct relay_trace *t, const char *text, size_t n)
{
	const char *p = memmem(text, n, "trace {", 7), *q;
	unsigned v;
	int i;

	q = p ? memmem(p, n - (size_t)(p - text), "uuid = \"", 8) : NULL;
	if (!q || (size_t)(q - text) + 8 + 36 > n)
		return;
	q += 8;			/* 36 bytes follow: checked above */
	for (i = 0; i < 16; i++) {
		if (*q == '-')
			q++;
		if (hex(q[0]) < 0 || hex(q[1]) < 0)
			return;
		v = (unsigned)(hex(q[0]) << 4 | hex(q[1]));
		t->uuid[i] = (uint8_t)v;
		q += 2;
	}
	t->have_uuid = true;
}

/* The length of the text at p (n bytes) up to its last "};\n" (a whole
 * top-level declaration: ours end so), or n when there is none. */
static size_t decl_end(const char *p, size_t n)
{
	size_t i;

	for (i = n; i >= 3; i--)
		if (p[i - 3] == '}' && p[i - 2] == ';' && p[i - 1] == '\n')
			return i;
	return n;
}

/* A CTF metadata packet of the n bytes of text at w->data + off. */
static void meta_head(const struct relay_trace *t, uint8_t *p, size_t n)
{
	uint32_t magic = META_MAGIC, bits = (uint32_t)((META_HEAD + n) * 8),
		 zero = 0;

	memcpy(p, &magic, 4);		/* the trace's byte order: ours */
	memcpy(p + 4, t->uuid, 16);
	memcpy(p + 20, &zero, 4);	/* checksum: none */
	memcpy(p + 24, &bits, 4);	/* content_size */
	memcpy(p + 28, &bits, 4);	/* packet_size */
	memset(p + 32, 0, 3);		/* no compression, encryption, sum */
	p[35] = 1;			/* CTF 1.8 */
	p[36] = 8;
}

/* The metadata appended since the last turn, as packets. */
static void send_metadata(struct relay_conn *c, struct relay_trace *t)
{
	struct stat sb;
	struct relay_write *w;
	size_t n, head = TRACER_RELAY_HDR + 12;
	long h;

	if (!t->meta_handle || t->meta_fd < 0 || fstat(t->meta_fd, &sb) ||
	    (uint64_t)sb.st_size <= t->meta_sent)
		return;
	n = (uint64_t)sb.st_size - t->meta_sent;
	if (n > RELAY_META_PIECE)
		n = RELAY_META_PIECE;
	w = new_write(head + META_HEAD + n);
	if (!w || pread(t->meta_fd, w->data + head + META_HEAD, n,
			(off_t)t->meta_sent) != (ssize_t)n) {
		free(w);
		return;
	}
	if (!t->have_uuid)
		take_uuid(t, (char *)w->data + head + META_HEAD, n);
	if (n == RELAY_META_PIECE)	/* cut after a whole declaration */
		n = decl_end((char *)w->data + head + META_HEAD, n);
	w->len = head + META_HEAD + n;
	meta_head(t, w->data + head, n);
	h = tracer__relay_metadata_head(w->data, head, t->meta_handle,
					(uint32_t)(META_HEAD + n));
	if (h != (long)head) {
		free(w);
		return;
	}
	/* Before any index this turn: ahead of the packets it describes. */
	out_flush(c);
	if (send_bytes(c, &c->ctrl, w) == 0) {
		t->meta_sent += n;
		c->r->bytes_sent += META_HEAD + n;
	}
}

/* The index of packet h (already renumbered) of s. */
static int send_index(struct relay_conn *c, struct tracerd_relay_stream *s,
		      const struct tracer_rb_packet *h, uint64_t end)
{
	struct tracer_relay_index ix = {
		.handle = s->handle, .net_seq_num = s->net_seq,
		.packet_size = h->packet_size, .content_size = h->content_size,
		.timestamp_begin = h->timestamp_begin,
		.timestamp_end = h->timestamp_end,
		.events_discarded = h->events_discarded,
		.stream_class_id = h->stream_id,
		.stream_instance_id = h->stream_instance_id,
		.packet_seq_num = h->packet_seq_num,
	};
	uint8_t *o = out_room(c, ROOM);

	return o ? out_push(c, tracer__relay_send_index(o, ROOM, &ix),
			    TRACER_RELAY_SEND_INDEX, s, end) : -ENOMEM;
}

/*
 * Put packet h (len bytes, read at p + 32) into the batch: renumbered for
 * this relay session, the records skipped told, its data header before
 * it, its index queued. A stream's first packet in a relay session after
 * a skip is preceded by an empty one (readers count no losses in a
 * stream's first packet).
 */
static size_t batch_packet(struct relay_conn *c, struct tracerd_relay_stream *s,
			   uint8_t *p, uint64_t len, uint64_t end)
{
	struct tracer_rb_packet *h = (struct tracer_rb_packet *)(void *)
				     (p + TRACER_RELAY_DATA_HDR), m;
	size_t used = 0;

	h->events_discarded += s->skipped;
	if (s->net_seq == 0 && s->untold) {
		m = *h;
		m.content_size = m.packet_size = PKT_HEAD * 8;
		m.timestamp_end = m.timestamp_begin;
		m.events_discarded -= s->untold;
		m.packet_seq_num = s->seq++;
		/* [head][packet] -> [head][marker][head][packet] */
		memmove(p + TRACER_RELAY_DATA_HDR + PKT_HEAD, p,
			TRACER_RELAY_DATA_HDR + len);
		tracer__relay_data_head(p, TRACER_RELAY_DATA_HDR, s->handle,
					s->net_seq, PKT_HEAD, 0);
		memcpy(p + TRACER_RELAY_DATA_HDR, &m, PKT_HEAD);
		send_index(c, s, &m, s->acked);
		s->net_seq++;
		used = TRACER_RELAY_DATA_HDR + PKT_HEAD;
		p += used;
		h = (struct tracer_rb_packet *)(void *)
		    (p + TRACER_RELAY_DATA_HDR);
	}
	s->untold = 0;
	h->packet_seq_num = s->seq++;
	tracer__relay_data_head(p, TRACER_RELAY_DATA_HDR, s->handle,
				s->net_seq, (uint32_t)len, 0);
	send_index(c, s, h, end);
	s->net_seq++;
	s->class_id = h->stream_id;
	s->last = *h;
	return used + TRACER_RELAY_DATA_HDR + len;
}

/* One write of s's next packets (RELAY_BATCH bytes, or one packet). */
static void send_packets(struct relay_conn *c, struct tracerd_relay_stream *s)
{
	const size_t extra = 2 * TRACER_RELAY_DATA_HDR + PKT_HEAD;
	struct tracer_rb_packet h;
	struct relay_write *w;
	uint64_t off = s->sent, packets = 0;
	size_t used = 0, cap = RELAY_BATCH;
	long len;

	w = new_write(cap);
	if (!w)
		return;
	while ((off == s->gap_from && s->gap_to > off ? off = s->gap_to : 0,
		len = packet_at(s, off, &h)) > 0) {
		if (used + (size_t)len + extra > cap) {
			struct relay_write *g;

			if (used)
				break;
			g = realloc(w, sizeof(*w) + (size_t)len + extra);
			if (!g)
				break;
			w = g;
			cap = (size_t)len + extra;
		}
		if (pread(s->fd, w->data + used + TRACER_RELAY_DATA_HDR,
			  (size_t)len, (off_t)off) != len) {
			len = -EBADMSG;
			break;
		}
		off += (uint64_t)len;
		used += batch_packet(c, s, w->data + used, (uint64_t)len, off);
		packets++;
	}
	if (len < 0)
		stream_broken(s, "a damaged packet");
	if (!used) {
		free(w);
		return;
	}
	w->len = used;
	w->s = s;
	w->end = off;
	out_flush(c);	/* metadata and ADD_STREAMs first */
	if (send_bytes(c, &c->data, w) == 0) {
		s->sent = off;
		marks_prune(s);
		s->busy = true;
		c->r->bytes_sent += used;
		c->r->packets_sent += packets;
	}
}

/* Has the relay sent and had acknowledged all there is? */
static bool all_acked(struct tracerd_relay *r)
{
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	struct stat sb;

	cds_list_for_each_entry(t, &r->traces, node) {
		if (t->meta_fd >= 0 && (fstat(t->meta_fd, &sb) ||
					(uint64_t)sb.st_size > t->meta_sent))
			return false;
		cds_list_for_each_entry(s, &t->streams, node)
			if (s->fd >= 0 && s->acked < s->size)
				return false;
	}
	return r->conn && r->conn->qlen == 0 && r->inflight == 0;
}

static void finish(struct tracerd_relay *r);

/* A complete stream, all acknowledged: closed on relayd's side, its
 * descriptor closed (and its file removed with --relay-only), freed once
 * no reply names it. */
static void retire_stream(struct relay_conn *c, struct tracerd_relay *r,
			  struct tracerd_relay_stream *s)
{
	struct relay_trace *t = s->trace;
	uint8_t *o;

	if (s->handle) {
		o = out_room(c, ROOM);
		if (!o || out_push(c, tracer__relay_close_stream(o, ROOM,
				s->handle, s->net_seq ? s->net_seq - 1 :
				TRACER_RELAY_NO_SEQ),
				TRACER_RELAY_CLOSE_STREAM, s, 0))
			return;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->handle = 0;
	s->retired = true;
	/* --relay-only: removed at the end if this relay session ends
	 * cleanly (its data went on its connection before what relayd then
	 * confirmed); kept till then, so that no later file takes its name
	 * (relayd would write the new stream over it). */
	if (r->only && t->ndone < RELAY_DONE_MAX) {
		struct relay_done *n = t->ndone == t->capdone ?
			realloc(t->done, (t->capdone ? 2 * t->capdone : 16) *
				sizeof(*n)) : t->done;

		if (n) {
			if (t->ndone == t->capdone)
				t->capdone = t->capdone ? 2 * t->capdone : 16;
			t->done = n;
			memcpy(t->done[t->ndone].name, s->name, sizeof(s->name));
			t->done[t->ndone++].generation = r->generation;
		}
	}
	if (!s->waits)
		stream_free(s);
}

/*
 * A trace whose process ended, every stream retired, its metadata all
 * sent: our descriptor of its metadata is closed (its metadata stream
 * stays open on relayd's side until the end: a file of the process may
 * still come, written out late by the spill, and tracerd_relay_file()
 * takes the trace up again).
 */
static void retire_trace(struct relay_trace *t)
{
	struct stat sb;

	if (t->meta_fd < 0 || fstat(t->meta_fd, &sb) ||
	    (uint64_t)sb.st_size > t->meta_sent || !t->meta_handle)
		return;
	close(t->meta_fd);
	t->meta_fd = -1;
	t->retired = true;
}

/* What is done is let go (relayd's descriptors and ours). */
static void retire_done(struct relay_conn *c, struct tracerd_relay *r)
{
	struct relay_trace *t, *tt;
	struct tracerd_relay_stream *s, *ts;

	cds_list_for_each_entry_safe(t, tt, &r->traces, node) {
		cds_list_for_each_entry_safe(s, ts, &t->streams, node)
			if (s->closed && !s->retired && !s->adding &&
			    s->acked >= s->size && (s->handle || s->fd >= 0))
				retire_stream(c, r, s);
		if (t->closed && !t->retired && cds_list_empty(&t->streams))
			retire_trace(t);
	}
}

/* Send what the files hold, within RELAY_INFLIGHT, RELAY_TURN bytes
 * this turn (then again at the next). */
static void pump(struct tracerd_relay *r)
{
	struct relay_conn *c = r->conn;
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	uint64_t start = r->bytes_sent;
	bool added = false, more = false;
	uint8_t *o;

	if (!c || !c->up || c->dead || r->finishing)
		return;
	/* A ring was found filling since: the local copy first, the relay
	 * after (its backlog bound counts what it then cannot send). */
	if (r->d->drain_behind != r->behind_seen && !r->stopping) {
		r->behind_seen = r->d->drain_behind;
		uv_timer_start(&r->timer, on_timer, RELAY_YIELD_MS, 0);
		out_flush(c);	/* beacons, answers owed: small */
		return;
	}
	cds_list_for_each_entry(t, &r->traces, node)
		added |= announce(c, t);
	if (added) {
		o = out_room(c, ROOM);
		if (o)
			out_push(c, tracer__relay_streams_sent(o, ROOM),
				 TRACER_RELAY_STREAMS_SENT, NULL, 0);
		r->published = true;
	}
	cds_list_for_each_entry(t, &r->traces, node) {
		send_metadata(c, t);
		cds_list_for_each_entry(s, &t->streams, node) {
			if (!s->handle || s->fd < 0 || c->dead)
				continue;
			bound_backlog(r, s);
			while (s->fd >= 0 && s->sent < s->size && !c->dead &&
			       r->inflight < RELAY_INFLIGHT &&
			       c->qlen < RELAY_QMAX) {
				uint64_t was = s->sent;

				if (r->bytes_sent - start >= RELAY_TURN) {
					more = true;
					break;
				}
				send_packets(c, s);
				if (s->sent == was)
					break;
			}
		}
	}
	if (!c->dead && !r->stopping)
		retire_done(c, r);
	if (!c->dead)
		out_flush(c);
	if (r->stopping && !c->dead && all_acked(r))
		finish(r);
	else if (more && !c->dead)
		kick(r);
}

static void on_kick(uv_idle_t *h)
{
	struct tracerd_relay *r = h->data;

	uv_idle_stop(h);
	r->kicking = false;
	pump(r);
}

static void kick(struct tracerd_relay *r)
{
	if (!r->kicking && !r->freed) {
		r->kicking = true;
		uv_idle_start(&r->kick, on_kick);
	}
}

/* ------------------------------------------------------------------ */
/* The connection                                                      */

static void conn_closed(uv_handle_t *h)
{
	struct relay_conn *c = h->data;

	if (--c->open == 0) {
		free(c->q);
		free(c->out);
		free(c);
	}
}

/* Close c's handles; c is freed once both are closed. */
static void conn_close(struct relay_conn *c)
{
	struct tracerd_relay *r = c->r;

	if (c->dead)
		return;
	c->dead = true;
	while (c->qlen) {	/* no reply will come */
		struct relay_wait w = c->q[c->qhead];

		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		waits_add(&w, -1);
	}
	if (r && r->conn == c) {
		r->conn = NULL;
		r->inflight = 0;
	}
	uv_close((uv_handle_t *)&c->ctrl, conn_closed);
	uv_close((uv_handle_t *)&c->data, conn_closed);
}

static void on_timer(uv_timer_t *t);

/* Lost (or never had) relayd: try again after the back-off. */
static void conn_fail(struct relay_conn *c, const char *fmt, ...)
{
	struct tracerd_relay *r = c->r;
	struct relay_trace *t;
	va_list ap;
	char why[200];

	if (c->dead)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	conn_close(c);
	cds_list_for_each_entry(t, &r->traces, node)
		trace_reset(t);
	r->finishing = r->settling = false;	/* the next one starts over */
	r->pending_left = 0;
	if (strcmp(r->error, why))
		tracerd_log("relay: %s: %s; trying again%s", r->url, why,
			    r->stopping ? " until the stop's deadline" : "");
	snprintf(r->error, sizeof(r->error), "%s", why);
	r->state = "waiting";
	uv_timer_start(&r->timer, on_timer, r->backoff_ms, 0);
	r->backoff_ms = r->backoff_ms * 2 > RELAY_BACKOFF_MAX_MS ?
			RELAY_BACKOFF_MAX_MS : r->backoff_ms * 2;
}

/* The relay session's name: the session directory's, then NAME.2 ... */
static void session_name(const struct tracerd_relay *r, char *buf, size_t n)
{
	if (r->generation <= 1)
		snprintf(buf, n, "%s", r->name);
	else
		snprintf(buf, n, "%s.%" PRIu32, r->name, r->generation);
}

/* Both connections are up: version, session, trace chunk (pipelined:
 * relayd answers in order). */
static void handshake(struct relay_conn *c)
{
	struct tracerd_relay *r = c->r;
	struct tracer_relay_session s = {
		.hostname = r->hostname, .base_path = "",
		.live_timer_us = r->live_us, .name_has_time = true,
		.session_id = r->generation, .creation_time = (uint64_t)time(NULL),
	};
	char name[240];
	uint8_t *o;
	int ret;

	r->generation++;
	session_name(r, name, sizeof(name));
	s.name = name;
	memcpy(s.uuid, r->uuid, 16);
	o = out_room(c, 2 * ROOM);
	ret = o ? out_push(c, tracer__relay_version(o, ROOM),
			   TRACER_RELAY_VERSION, NULL, 0) : -ENOMEM;
	o = ret ? NULL : out_room(c, ROOM);
	ret = o ? out_push(c, tracer__relay_create_session(o, ROOM, &s),
			   TRACER_RELAY_CREATE_SESSION, NULL, 0) : -ENOMEM;
	o = ret ? NULL : out_room(c, ROOM);
	ret = o ? out_push(c, tracer__relay_create_chunk(o, ROOM, 0,
							 s.creation_time),
			   TRACER_RELAY_CREATE_TRACE_CHUNK, NULL, 0) : -ENOMEM;
	if (ret) {
		conn_fail(c, "cannot start a relay session '%s': %s", name,
			  strerror(-ret));
		return;
	}
	r->state = "starting";
	out_flush(c);
}

/* Remove dir/name; false if it could not be (it stays). */
static bool remove_file(const char *dir, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return unlink(path) == 0 || errno == ENOENT;
}

/*
 * --relay-only, the relay session closed cleanly: the local files relayd
 * has whole are removed (those it confirmed, and those retired on this
 * same connection), then the process directories left with nothing else.
 * What could not be streamed stays, readable: a trace with a file the
 * relay could not open, or one retired in an earlier relay session (its
 * data may not have reached relayd before that connection broke).
 */
static void remove_streamed(struct tracerd_relay *r)
{
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	struct stat sb;
	char path[4200];
	bool whole;
	size_t i;

	cds_list_for_each_entry(t, &r->traces, node) {
		whole = !t->incomplete;
		cds_list_for_each_entry(s, &t->streams, node)
			if (!s->retired && (s->acked < s->size || s->fd < 0 ||
					    !remove_file(t->dir, s->name)))
				whole = false;
		for (i = 0; i < t->ndone; i++)
			if (t->done[i].generation != r->generation ||
			    !remove_file(t->dir, t->done[i].name))
				whole = false;
		snprintf(path, sizeof(path), "%s/metadata", t->dir);
		if (!whole || stat(path, &sb) ||
		    (uint64_t)sb.st_size != t->meta_sent)
			continue;	/* the trace stays readable */
		remove_file(t->dir, "metadata");
		remove_file(t->dir, TRACER_META_FILE);
		snprintf(path, sizeof(path), "%s/" TRACER_META_DIR, t->dir);
		rmdir(path);
		rmdir(t->dir);
	}
}

/* A reply came for w. */
static void answered(struct relay_conn *c, const struct relay_wait *w,
		     const struct tracer_relay_reply *rep)
{
	struct tracerd_relay *r = c->r;
	struct tracerd_relay_stream *s = w->ctx;
	struct relay_trace *t = w->ctx;

	switch (w->cmd) {
	case TRACER_RELAY_VERSION:
		if (rep->major != TRACER_RELAY_MAJOR || rep->minor < 11)
			conn_fail(c, "relayd speaks protocol %" PRIu32 ".%"
				  PRIu32 ", 2.11 or later is needed",
				  rep->major, rep->minor);
		return;
	case TRACER_RELAY_CREATE_SESSION:
		if (rep->ret != TRACER_RELAY_OK) {
			conn_fail(c, "relayd refused the session (error %"
				  PRIu32 ")", rep->ret);
			return;
		}
		snprintf(r->path, sizeof(r->path), "%s", rep->path);
		return;
	case TRACER_RELAY_CREATE_TRACE_CHUNK:
		if (rep->ret != TRACER_RELAY_OK) {
			conn_fail(c, "relayd refused the trace chunk (error %"
				  PRIu32 ")", rep->ret);
			return;
		}
		c->up = true;
		r->state = "streaming";
		r->backoff_ms = RELAY_BACKOFF_MIN_MS;
		r->error[0] = '\0';
		tracerd_log("relay: streaming to %s, '%s'", r->url, r->path);
		kick(r);
		return;
	case TRACER_RELAY_ADD_STREAM:
		if (rep->ret == TRACER_RELAY_OK && rep->id == 0) {
			conn_fail(c, "relayd gave a stream handle 0");
			return;
		}
		if (rep->ret != TRACER_RELAY_OK) {
			conn_fail(c, "relayd refused a stream (error %" PRIu32
				  ")", rep->ret);
			return;
		}
		if (w->end) {		/* a trace's metadata */
			t->meta_handle = rep->id;
			t->meta_adding = false;
		} else {
			s->handle = rep->id;
			s->adding = false;
		}
		kick(r);
		return;
	case TRACER_RELAY_SEND_INDEX:
		if (rep->ret != TRACER_RELAY_OK)
			conn_fail(c, "relayd refused an index (error %" PRIu32
				  ")", rep->ret);
		else if (w->end > s->indexed)
			advance(s, s->wrote, w->end);
		if (s->closed && s->acked >= s->size)
			kick(r);	/* to retire it */
		return;
	case TRACER_RELAY_DATA_PENDING:
		data_pending(r, rep->ret);
		return;
	case TRACER_RELAY_CLOSE_TRACE_CHUNK:
		if (rep->ret != TRACER_RELAY_OK) {
			tracerd_log("relay: %s: relayd could not close '%s' "
				    "(error %" PRIu32 "); the local files stay",
				    r->url, r->path, rep->ret);
			relay_free(r);
			return;
		}
		if (r->only)
			remove_streamed(r);
		tracerd_log("relay: session streamed to %s, '%s': %" PRIu64
			    " packets, %" PRIu64 " bytes, %" PRIu64
			    " events skipped", r->url, r->path,
			    r->packets_sent, r->bytes_sent, r->skipped);
		relay_free(r);
		return;
	default:
		if (rep->ret != TRACER_RELAY_OK)
			conn_fail(c, "relayd answered error %" PRIu32
				  " to command %d", rep->ret, (int)w->cmd);
		return;
	}
}

/* Decode the replies in c->in, in the order of the commands. */
static void take_replies(struct relay_conn *c)
{
	struct tracer_relay_reply rep;
	struct relay_wait w;
	size_t at = 0;
	long n;

	while (c->qlen && !c->dead) {
		w = c->q[c->qhead];
		n = tracer__relay_reply(w.cmd, c->in + at, c->nin - at, &rep);
		if (n == 0)
			break;
		if (n < 0) {
			conn_fail(c, "malformed reply from relayd");
			return;
		}
		at += (size_t)n;
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		answered(c, &w, &rep);
		waits_add(&w, -1);
	}
	if (c->dead)
		return;
	if (!c->qlen && at < c->nin) {
		conn_fail(c, "relayd sent what was not asked for");
		return;
	}
	memmove(c->in, c->in + at, c->nin - at);
	c->nin -= at;
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct relay_conn *c = h->data;

	(void)want;
	if (h == (uv_handle_t *)&c->data) {	/* only its hang-up comes */
		static char sink[64];

		*b = uv_buf_init(sink, sizeof(sink));
		return;
	}
	*b = uv_buf_init((char *)c->in + c->nin,
			 (unsigned)(sizeof(c->in) - c->nin));
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
	struct relay_conn *c = st->data;

	(void)b;
	if (c->dead || n == 0)
		return;
	if (n < 0) {
		conn_fail(c, "%s", n == UV_EOF ? "relayd closed the connection"
						: uv_strerror((int)n));
		return;
	}
	if (st == (uv_stream_t *)&c->data) {
		conn_fail(c, "relayd wrote on the data connection");
		return;
	}
	c->nin += (size_t)n;
	c->heard_ms = uv_now(c->r->d->loop);
	take_replies(c);
	if (!c->dead && c->nin == sizeof(c->in))
		conn_fail(c, "reply too long from relayd");
	else if (!c->dead && c->r->stopping)
		kick(c->r);	/* the last answer may end it */
}

static void on_connect(uv_connect_t *req, int status)
{
	struct relay_conn *c = req->handle->data;

	if (c->dead)
		return;
	if (status < 0) {
		conn_fail(c, "cannot connect to port %u: %s",
			  (unsigned)c->r->ports[req == &c->creq[1]],
			  uv_strerror(status));
		return;
	}
	uv_read_start(req->handle, on_alloc, on_read);
	if (++c->connected == 2)
		handshake(c);
}

/* Connect both to the address ai resolved. */
static void conn_open(struct tracerd_relay *r, const struct sockaddr *sa)
{
	struct relay_conn *c = calloc(1, sizeof(*c));
	struct sockaddr_storage a[2];
	int i, ret = 0;

	if (!c) {
		uv_timer_start(&r->timer, on_timer, r->backoff_ms, 0);
		return;
	}
	c->r = r;
	r->conn = c;
	r->state = "connecting";
	for (i = 0; i < 2; i++) {
		uv_tcp_t *h = i ? &c->data : &c->ctrl;

		uv_tcp_init(r->d->loop, h);
		h->data = c;
		c->open++;
		uv_tcp_nodelay(h, 1);
		memcpy(&a[i], sa, sa->sa_family == AF_INET6 ?
		       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
		((struct sockaddr_in *)(void *)&a[i])->sin_port =
			htons(r->ports[i]);
		if (!ret)
			ret = uv_tcp_connect(&c->creq[i], h,
					     (struct sockaddr *)&a[i],
					     on_connect);
	}
	if (ret)
		conn_fail(c, "cannot connect: %s", uv_strerror(ret));
}

static void on_resolved(uv_getaddrinfo_t *req, int status,
			struct addrinfo *ai)
{
	struct tracerd_relay *r = req->data;

	r->resolving = false;
	if (r->freed) {
		uv_freeaddrinfo(ai);
		relay_free(r);
		return;
	}
	if (status < 0 || !ai) {
		char why[300];

		snprintf(why, sizeof(why), "cannot resolve '%s': %s", r->host,
			 uv_strerror(status));
		if (strcmp(r->error, why))
			tracerd_log("relay: %s: %s; trying again", r->url, why);
		snprintf(r->error, sizeof(r->error), "%s", why);
		r->state = "waiting";
		uv_timer_start(&r->timer, on_timer, r->backoff_ms, 0);
	} else {
		conn_open(r, ai->ai_addr);
	}
	uv_freeaddrinfo(ai);
}

static void connect_relay(struct tracerd_relay *r)
{
	/* As lttng does: IPv4 unless the address is IPv6 (relayd listens
	 * on 0.0.0.0 by default; "localhost" may come as ::1 first). */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_family = strchr(r->host, ':') ?
					       AF_INET6 : AF_INET };

	if (r->conn || r->resolving)
		return;
	r->resolving = true;
	r->gai.data = r;
	r->state = "connecting";
	if (uv_getaddrinfo(r->d->loop, &r->gai, on_resolved, r->host, NULL,
			   &hints)) {
		r->resolving = false;
		uv_timer_start(&r->timer, on_timer, r->backoff_ms, 0);
	}
}

/* ------------------------------------------------------------------ */
/* Life of a relay                                                     */

/* The last handle closed, no lookup under way: gone. */
static void release(struct tracerd_relay *r)
{
	struct relay_trace *t, *tmp;

	if (r->handles || r->resolving)
		return;
	cds_list_for_each_entry_safe(t, tmp, &r->traces, node)
		trace_free(t);
	free(r->url);
	free(r);
}

static void handle_closed(uv_handle_t *h)
{
	struct tracerd_relay *r = h->data;

	r->handles--;
	release(r);
}

/* Let go of r: its connection closed, its memory once libuv is done. */
static void relay_free(struct tracerd_relay *r)
{
	if (r->freed) {
		release(r);
		return;
	}
	r->freed = true;
	if (r->d->relay == r)
		r->d->relay = NULL;
	if (r->stopping) {
		cds_list_del(&r->node);
		if (r->d->quitting && !r->d->session_id &&
		    cds_list_empty(&r->d->relays))
			uv_stop(r->d->loop);	/* tracerd_quit() waited */
	}
	if (r->conn)
		conn_close(r->conn);
	if (r->resolving)
		uv_cancel((uv_req_t *)&r->gai);
	r->handles = 3;
	uv_close((uv_handle_t *)&r->timer, handle_closed);
	uv_close((uv_handle_t *)&r->deadline, handle_closed);
	uv_close((uv_handle_t *)&r->kick, handle_closed);
}

static void close_all(struct tracerd_relay *r);

/*
 * Everything is sent and acknowledged after the stop. relayd answers an
 * index before it may have written the packet that came on the other
 * connection: ask it (DATA_PENDING, every stream) until it has written
 * all, then close the streams and the trace chunk; relayd's answer to the
 * last ends the relay.
 */
static void finish(struct tracerd_relay *r)
{
	struct relay_conn *c = r->conn;
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	uint8_t *o;

	r->finishing = true;
	r->settling = true;
	r->pending_left = 0;
	r->pending_any = false;
	cds_list_for_each_entry(t, &r->traces, node)
		cds_list_for_each_entry(s, &t->streams, node) {
			if (!s->handle || !s->net_seq || s->retired)
				continue;
			o = out_room(c, ROOM);
			if (!o || out_push(c, tracer__relay_data_pending(o,
					ROOM, s->handle, s->net_seq - 1),
					TRACER_RELAY_DATA_PENDING, NULL, 0)) {
				relay_free(r);
				return;
			}
			r->pending_left++;
		}
	if (!r->pending_left) {
		close_all(r);
		return;
	}
	out_flush(c);
}

/* A DATA_PENDING reply: the round's last decides. */
static void data_pending(struct tracerd_relay *r, uint32_t value)
{
	if (value)
		r->pending_any = true;
	if (--r->pending_left)
		return;
	if (r->pending_any)	/* again in a moment (the stop's deadline) */
		uv_timer_start(&r->timer, on_timer, 20, 0);
	else
		close_all(r);
}

/* Close the streams and the trace chunk. */
static void close_all(struct tracerd_relay *r)
{
	struct relay_conn *c = r->conn;
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	uint8_t *o;
	int ret = 0;

	r->settling = false;
	cds_list_for_each_entry(t, &r->traces, node) {
		if (t->meta_handle && !ret) {
			o = out_room(c, ROOM);
			ret = o ? out_push(c, tracer__relay_close_stream(o,
					ROOM, t->meta_handle,
					TRACER_RELAY_NO_SEQ),
					TRACER_RELAY_CLOSE_STREAM, NULL, 0)
				: -ENOMEM;
		}
		cds_list_for_each_entry(s, &t->streams, node) {
			if (!s->handle || ret)
				continue;
			o = out_room(c, ROOM);
			ret = o ? out_push(c, tracer__relay_close_stream(o,
					ROOM, s->handle, s->net_seq - 1),
					TRACER_RELAY_CLOSE_STREAM, NULL, 0)
				: -ENOMEM;
		}
	}
	o = ret ? NULL : out_room(c, ROOM);
	if (!o || out_push(c, tracer__relay_close_chunk(o, ROOM, 0,
						(uint64_t)time(NULL)),
			   TRACER_RELAY_CLOSE_TRACE_CHUNK, NULL, 0)) {
		relay_free(r);
		return;
	}
	out_flush(c);
}

/* What was not streamed by the stop's deadline. */
static uint64_t backlog_bytes(struct tracerd_relay *r)
{
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	uint64_t n = 0;

	cds_list_for_each_entry(t, &r->traces, node)
		cds_list_for_each_entry(s, &t->streams, node)
			if (s->fd >= 0)
				n += s->size - s->acked;
	return n;
}

/* The stop's deadline: what is not sent by now never will be. */
static void on_deadline(uv_timer_t *t)
{
	struct tracerd_relay *r = t->data;
	uint64_t left = backlog_bytes(r);

	if (left)
		tracerd_log("relay: %s: %" PRIu64 " bytes of '%s' were not "
			    "streamed in %d s; giving up", r->url, left,
			    r->name, RELAY_STOP_MS / 1000);
	else
		tracerd_log("relay: %s: '%s' sent, but relayd did not confirm "
			    "it in %d s; giving up", r->url, r->name,
			    RELAY_STOP_MS / 1000);
	relay_free(r);
}

static void on_timer(uv_timer_t *t)
{
	struct tracerd_relay *r = t->data;

	if (r->settling && r->conn && !r->pending_left) {
		finish(r);	/* the next DATA_PENDING round */
		return;
	}
	if (!r->conn)
		connect_relay(r);
	else if (r->conn->up)
		pump(r);	/* after a yield to the drain */
}

/* A relay to d->sess.relay, for the relay session `name` (the base name
 * of that path). NULL: out of memory (logged). */
static struct tracerd_relay *relay_new(struct tracerd *d, const char *name)
{
	struct tracerd_relay *r = calloc(1, sizeof(*r));
	const char *slash = strrchr(name, '/');

	if (!r || !(r->url = strdup(d->sess.relay))) {
		free(r);
		tracerd_log("relay: out of memory: '%s' is not streamed",
			    name);
		return NULL;
	}
	r->d = d;
	CDS_INIT_LIST_HEAD(&r->traces);
	tracer__relay_parse_url(r->url, r->host, sizeof(r->host),
				&r->ports[0], &r->ports[1]);
	snprintf(r->name, sizeof(r->name), "%s", slash ? slash + 1 : name);
	if (gethostname(r->hostname, sizeof(r->hostname) - 1) ||
	    !r->hostname[0] || r->hostname[0] == '.')
		snprintf(r->hostname, sizeof(r->hostname), "localhost");
	if (getrandom(r->uuid, sizeof(r->uuid), 0) != sizeof(r->uuid))
		memset(r->uuid, 0x5a, sizeof(r->uuid));
	r->uuid[0] |= 1;		/* never all zero */
	r->live_us = (d->sess.live_ms ? d->sess.live_ms : 1000) * 1000;
	r->only = d->sess.relay_only;
	r->backlog = d->cfg.relay_backlog;
	r->backoff_ms = RELAY_BACKOFF_MIN_MS;
	uv_timer_init(d->loop, &r->timer);
	r->timer.data = r;
	uv_timer_init(d->loop, &r->deadline);
	r->deadline.data = r;
	uv_idle_init(d->loop, &r->kick);
	r->kick.data = r;
	return r;
}

void tracerd_relay_start(struct tracerd *d)
{
	if (!d->sess.relay || !d->session_dir ||
	    d->sess.mode == TRACER_MODE_FLIGHT)
		return;
	d->relay = relay_new(d, d->session_dir);
	if (d->relay)
		connect_relay(d->relay);
}

void tracerd_relay_add_trace(struct tracerd *d, const char *dir)
{
	struct tracerd_relay *r = d->relay;
	struct relay_trace *t;
	const char *base = strrchr(dir, '/');
	char path[4200];

	if (!r || trace_of(r, dir))
		return;
	base = base ? base + 1 : dir;
	t = calloc(1, sizeof(*t));
	if (!t || strlen(base) >= sizeof(t->path) || !(t->dir = strdup(dir))) {
		free(t);
		tracerd_log("relay: '%s' is not streamed: %s", base,
			    t ? "its name is too long" : "out of memory");
		return;
	}
	memcpy(t->path, base, strlen(base) + 1);
	t->r = r;
	CDS_INIT_LIST_HEAD(&t->streams);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	t->meta_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->meta_fd < 0) {
		tracerd_log("relay: '%s' is not streamed: %s", path,
			    strerror(errno));
		t->incomplete = true;
	}
	cds_list_add_tail(&t->node, &r->traces);
	kick(r);
}

struct tracerd_relay_stream *tracerd_relay_file(struct tracerd *d,
						const char *dir,
						const char *name)
{
	struct tracerd_relay *r = d->relay;
	struct tracerd_relay_stream *s;
	struct relay_trace *t = r ? trace_of(r, dir) : NULL;
	char path[4200];

	if (!t || strlen(name) >= sizeof(s->name))
		return NULL;
	if (t->retired) {	/* a late file (the spill's): take it up */
		snprintf(path, sizeof(path), "%s/metadata", dir);
		t->meta_fd = open(path, O_RDONLY | O_CLOEXEC);
		t->meta_sent = t->meta_handle ? t->meta_sent : 0;
		t->retired = false;
	}
	s = calloc(1, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (s)
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!s || s->fd < 0) {
		tracerd_log("relay: '%s' is not streamed: %s", path,
			    s ? strerror(errno) : "out of memory");
		free(s);
		t->incomplete = true;
		return NULL;
	}
	s->trace = t;
	memcpy(s->name, name, strlen(name) + 1);
	cds_list_add_tail(&s->node, &t->streams);
	r->nstreams++;
	kick(r);
	return s;
}

void tracerd_relay_grew(struct tracerd_relay_stream *s, uint64_t size,
			uint64_t records)
{
	struct relay_mark *last;

	if (size <= s->size)
		return;
	s->size = size;
	s->cum += records;
	s->busy = true;
	kick(s->trace->r);	/* sent at the loop's next turn */
	if (s->unmarked)
		return;
	last = s->nmarks ? &s->marks[s->nmarks - 1] : NULL;
	if (last && last->end - (s->nmarks > 1 ? last[-1].end : s->base_end)
		    < RELAY_MARK_SPAN && last->end > s->sent) {
		*last = (struct relay_mark){ size, s->cum };	/* merged */
		goto bound;
	}
	if (s->nmarks == s->capmarks) {
		size_t cap = s->capmarks ? 2 * s->capmarks : 16;
		struct relay_mark *m = cap <= RELAY_MARKS ?
			realloc(s->marks, cap * sizeof(*m)) : NULL;

		if (!m) {
			s->unmarked = true;
			return;
		}
		s->marks = m;
		s->capmarks = cap;
	}
	s->marks[s->nmarks++] = (struct relay_mark){ size, s->cum };
bound:
	/* Down or slow, the relay lets files run ahead by the bound, not
	 * by what comes in until its next look. */
	if (s->size - s->sent > s->trace->r->backlog)
		bound_backlog(s->trace->r, s);
}

void tracerd_relay_closed(struct tracerd_relay_stream *s)
{
	stream_stat(s);
	s->closed = true;
	kick(s->trace->r);	/* to retire it once all is acknowledged */
}

void tracerd_relay_trace_closed(struct tracerd *d, const char *dir)
{
	struct relay_trace *t = d->relay ? trace_of(d->relay, dir) : NULL;

	if (t) {
		t->closed = true;
		kick(d->relay);
	}
}

/*
 * The time an idle stream's beacon may promise: no event before it is to
 * come on the stream, nor (for viewers muxing the session's streams) on a
 * stream published later. Events reach the files within a live interval
 * (the flush), the relay within the next: the beacons stay two intervals
 * and RELAY_LAG_NS behind now, and never go back.
 */
static uint64_t promise(const struct tracerd_relay *r,
			const struct tracerd_relay_stream *s, uint64_t now)
{
	uint64_t lag = 2 * (uint64_t)r->live_us * 1000 + RELAY_LAG_NS,
		 t = now > lag ? now - lag : 0;

	if (t < s->last.timestamp_end)
		t = s->last.timestamp_end;
	return t > s->promised ? t : s->promised;
}

/* An idle stream's beacon: live viewers move past it to its promise. */
static void beacon(struct relay_conn *c, struct tracerd_relay_stream *s,
		   uint64_t now)
{
	struct tracer_relay_index ix = {
		.handle = s->handle, .net_seq_num = s->net_seq - 1,
		.timestamp_end = promise(c->r, s, now),
		.stream_class_id = s->class_id,
	};
	uint8_t *o;

	if (ix.timestamp_end == s->promised)
		return;			/* nothing new to tell */
	o = out_room(c, ROOM);
	if (o && !out_push(c, tracer__relay_send_index(o, ROOM, &ix),
			   TRACER_RELAY_SEND_INDEX, s, 0))
		s->promised = ix.timestamp_end;
}

/*
 * An empty packet on an idle stream, for live viewers: relayd tells a
 * viewer of streams published since it attached only with a packet's
 * index (its NEW_STREAM flag), never with a beacon's. A viewer that knows
 * only idle streams would not learn of the new ones. The packet repeats
 * the stream's last one, without events, at its promise (beacon()).
 */
static void nudge(struct relay_conn *c, struct tracerd_relay_stream *s,
		  uint64_t now)
{
	struct tracer_rb_packet m = s->last;
	struct relay_write *w = new_write(TRACER_RELAY_DATA_HDR + PKT_HEAD);

	if (!w)
		return;
	m.content_size = m.packet_size = PKT_HEAD * 8;
	m.timestamp_begin = m.timestamp_end = s->promised =
		promise(c->r, s, now);
	m.packet_seq_num = s->seq++;
	s->last = m;
	tracer__relay_data_head(w->data, TRACER_RELAY_DATA_HDR, s->handle,
				s->net_seq, PKT_HEAD, 0);
	memcpy(w->data + TRACER_RELAY_DATA_HDR, &m, PKT_HEAD);
	send_index(c, s, &m, 0);
	s->net_seq++;
	out_flush(c);
	send_bytes(c, &c->data, w);
}

void tracerd_relay_tick(struct tracerd *d)
{
	struct tracerd_relay *r = d->relay;
	struct relay_conn *c = r ? r->conn : NULL;
	struct relay_trace *t;
	struct tracerd_relay_stream *s;
	uint64_t now = tracer__clock_now();

	if (!r)
		return;
	if (c && c->qlen && uv_now(d->loop) - c->heard_ms > RELAY_SILENT_MS) {
		conn_fail(c, "relayd did not answer for %d s",
			  RELAY_SILENT_MS / 1000);
		c = NULL;
	}
	cds_list_for_each_entry(t, &r->traces, node)
		cds_list_for_each_entry(s, &t->streams, node) {
			stream_stat(s);
			if (!c || !c->up)
				bound_backlog(r, s);
			else if (!r->finishing && s->handle && s->net_seq &&
				 !s->busy && s->sent == s->size && s->fd >= 0)
				r->published && r->d->sess.live_ms ?
					       nudge(c, s, now) :
					       beacon(c, s, now);
			s->busy = false;
		}
	if (c && c->up)
		r->published = false;
	pump(r);
}

/* r's files are complete: it sends what is left and lets go, on its own
 * (RELAY_STOP_MS at most). */
static void relay_finish(struct tracerd *d, struct tracerd_relay *r)
{
	struct relay_trace *t;
	struct tracerd_relay_stream *s;

	r->stopping = true;
	uv_timer_start(&r->deadline, on_deadline, RELAY_STOP_MS, 0);
	cds_list_add(&r->node, &d->relays);
	cds_list_for_each_entry(t, &r->traces, node)
		cds_list_for_each_entry(s, &t->streams, node)
			tracerd_relay_closed(s);
	if (!r->conn)
		uv_timer_start(&r->timer, on_timer, 0, 0);
	kick(r);
}

void tracerd_relay_stop(struct tracerd *d)
{
	struct tracerd_relay *r = d->relay;

	if (!r)
		return;
	d->relay = NULL;
	relay_finish(d, r);
}

/* The channel files of the process directory pdir, into t. */
static void add_dir_files(struct tracerd_relay *r, const char *pdir)
{
	struct tracerd_relay_stream *s;
	struct dirent *e;
	struct stat sb;
	char path[4600];
	DIR *dp = opendir(pdir);

	while (dp && (e = readdir(dp))) {
		if (strncmp(e->d_name, "default-", 8) &&
		    strncmp(e->d_name, "vital-", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pdir, e->d_name);
		if (lstat(path, &sb) || !S_ISREG(sb.st_mode))
			continue;
		s = tracerd_relay_file(r->d, pdir, e->d_name);
		if (s)
			s->unmarked = true;	/* read to count, if skipped */
	}
	if (dp)
		closedir(dp);
}

void tracerd_relay_send_dir(struct tracerd *d, const char *dir,
			    const char *name)
{
	struct tracerd_relay *r, *was = d->relay;
	struct dirent *e;
	struct stat sb;
	char pdir[4200];
	DIR *dp;

	if (!d->sess.relay || !(r = relay_new(d, name)))
		return;
	r->live_us = 0;			/* not live: whole, at once */
	d->relay = r;			/* tracerd_relay_add_trace()'s */
	dp = opendir(dir);
	while (dp && (e = readdir(dp))) {
		snprintf(pdir, sizeof(pdir), "%s/%s/metadata", dir,
			 e->d_name);
		if (e->d_name[0] == '.' || lstat(pdir, &sb) ||
		    !S_ISREG(sb.st_mode))
			continue;	/* not a process directory */
		snprintf(pdir, sizeof(pdir), "%s/%s", dir, e->d_name);
		tracerd_relay_add_trace(d, pdir);
		if (trace_of(r, pdir))
			add_dir_files(r, pdir);
	}
	if (dp)
		closedir(dp);
	d->relay = was;
	connect_relay(r);
	relay_finish(d, r);
}

void tracerd_relay_quit(struct tracerd *d)
{
	struct tracerd_relay *r, *tmp;

	if (d->relay)
		relay_free(d->relay);
	cds_list_for_each_entry_safe(r, tmp, &d->relays, node)
		relay_free(r);
}

Tracer__RelayStatus *tracerd_relay_status(struct tracerd *d)
{
	struct tracerd_relay *r = d->relay;
	Tracer__RelayStatus *st;

	if (!r || !(st = malloc(sizeof(*st))))
		return NULL;
	tracer__relay_status__init(st);
	st->url = r->url;
	st->state = (char *)(r->state ? r->state : "connecting");
	st->path = r->path;
	st->bytes_sent = r->bytes_sent;
	st->packets_sent = r->packets_sent;
	st->events_skipped = r->skipped;
	st->reconnects = r->generation > 1 ? r->generation - 1 : 0;
	st->streams = r->nstreams;
	st->last_error = r->error;
	st->backlog_bytes = backlog_bytes(r);
	return st;
}

void tracerd_relay_status_free(Tracer__RelayStatus *st)
{
	free(st);
}
