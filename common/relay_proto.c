/*
 * relay_proto.c - lttng-relayd's protocol 2.11, producer side: encoders
 * and decoders (relay_proto.h). Layouts: lttng-tools 2.13.9,
 * src/common/sessiond-comm/relayd.h; doc/relay.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "relay_proto.h"

/* Where an encoder writes: overflow is remembered, not written past. */
struct put {
	uint8_t *p;
	size_t at, room;
};

static void put_bytes(struct put *w, const void *b, size_t n)
{
	if (w->at <= w->room && n <= w->room - w->at)
		memcpy(w->p + w->at, b, n);
	w->at += n;
}

static void put_be(struct put *w, uint64_t v, unsigned bytes)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	put_bytes(w, b, bytes);
}

#define PUT8(w, v)	put_be(w, v, 1)
#define PUT32(w, v)	put_be(w, v, 4)
#define PUT64(w, v)	put_be(w, v, 8)

static uint64_t get_be(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* The control header of cmd with `size` payload bytes. */
static void put_head(struct put *w, enum tracer_relay_cmd cmd, uint64_t size)
{
	PUT64(w, 0);		/* circuit id: unused */
	PUT64(w, size);
	PUT32(w, cmd);
	PUT32(w, 0);		/* command version: unused */
}

static long done(const struct put *w)
{
	return w->at <= w->room ? (long)w->at : -ENOSPC;
}

long tracer__relay_version(uint8_t *out, size_t room)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_VERSION, 8);
	PUT32(&w, TRACER_RELAY_MAJOR);
	PUT32(&w, TRACER_RELAY_MINOR);
	return done(&w);
}

/* A name relayd takes as one path component: not empty, no '/', no
 * leading '.', shorter than max with its NUL. */
static bool name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n < max && s[0] != '.' && !strchr(s, '/');
}

static bool base_ok(const char *s)
{
	return strlen(s) < 4096 && !strstr(s, "../") && s[0] != '/';
}

long tracer__relay_create_session(uint8_t *out, size_t room,
				  const struct tracer_relay_session *s)
{
	static const uint8_t nil[16];
	struct put w = { out, 0, room };
	size_t ln = strlen(s->name) + 1, lh = strlen(s->hostname) + 1,
	       lb = strlen(s->base_path) + 1;

	if (!name_ok(s->name, TRACER_RELAY_NAME_MAX) ||
	    !name_ok(s->hostname, TRACER_RELAY_HOST_MAX) ||
	    !base_ok(s->base_path) || !memcmp(s->uuid, nil, 16))
		return -EINVAL;
	put_head(&w, TRACER_RELAY_CREATE_SESSION, 59 + ln + lh + lb);
	PUT32(&w, ln);
	PUT32(&w, lh);
	PUT32(&w, lb);
	PUT32(&w, s->live_timer_us);
	PUT8(&w, 0);			/* not a snapshot: indexes */
	PUT8(&w, s->name_has_time);
	put_bytes(&w, s->uuid, 16);
	PUT64(&w, s->session_id);
	PUT64(&w, s->creation_time);
	PUT8(&w, 0);			/* no current chunk: one follows */
	PUT64(&w, 0);
	put_bytes(&w, s->name, ln);
	put_bytes(&w, s->hostname, lh);
	put_bytes(&w, s->base_path, lb);
	return done(&w);
}

long tracer__relay_create_chunk(uint8_t *out, size_t room, uint64_t chunk,
				uint64_t now_s)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_CREATE_TRACE_CHUNK, 20);
	PUT64(&w, chunk);
	PUT64(&w, now_s);
	PUT32(&w, 0);			/* no name of its own */
	return done(&w);
}

long tracer__relay_close_chunk(uint8_t *out, size_t room, uint64_t chunk,
			       uint64_t now_s)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_CLOSE_TRACE_CHUNK, 21);
	PUT64(&w, chunk);
	PUT64(&w, now_s);
	PUT8(&w, 0);			/* no command: files stay put */
	PUT32(&w, 0);
	return done(&w);
}

long tracer__relay_add_stream(uint8_t *out, size_t room, const char *channel,
			      const char *path)
{
	struct put w = { out, 0, room };
	size_t lc = strlen(channel) + 1, lp = strlen(path) + 1;

	if (!name_ok(channel, 264) || lp > TRACER_RELAY_PATH_MAX ||
	    !base_ok(path))
		return -EINVAL;
	put_head(&w, TRACER_RELAY_ADD_STREAM, 32 + lc + lp);
	PUT32(&w, lc);
	PUT32(&w, lp);
	PUT64(&w, 0);			/* tracefile size: one file */
	PUT64(&w, 0);			/* tracefile count */
	PUT64(&w, 0);			/* chunk: relayd uses its current */
	put_bytes(&w, channel, lc);
	put_bytes(&w, path, lp);
	return done(&w);
}

long tracer__relay_streams_sent(uint8_t *out, size_t room)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_STREAMS_SENT, 0);
	return done(&w);
}

long tracer__relay_metadata_head(uint8_t *out, size_t room, uint64_t handle,
				 uint32_t n)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_SEND_METADATA, 12 + (uint64_t)n);
	PUT64(&w, handle);
	PUT32(&w, 0);			/* no padding after the bytes */
	return done(&w);
}

long tracer__relay_send_index(uint8_t *out, size_t room,
			      const struct tracer_relay_index *ix)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_SEND_INDEX, 80);
	PUT64(&w, ix->handle);
	PUT64(&w, ix->net_seq_num);
	PUT64(&w, ix->packet_size);
	PUT64(&w, ix->content_size);
	PUT64(&w, ix->timestamp_begin);
	PUT64(&w, ix->timestamp_end);
	PUT64(&w, ix->events_discarded);
	PUT64(&w, ix->stream_class_id);
	PUT64(&w, ix->stream_instance_id);
	PUT64(&w, ix->packet_seq_num);
	return done(&w);
}

long tracer__relay_close_stream(uint8_t *out, size_t room, uint64_t handle,
				uint64_t last_seq)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_CLOSE_STREAM, 16);
	PUT64(&w, handle);
	PUT64(&w, last_seq);
	return done(&w);
}

long tracer__relay_data_pending(uint8_t *out, size_t room, uint64_t handle,
				uint64_t last_seq)
{
	struct put w = { out, 0, room };

	put_head(&w, TRACER_RELAY_DATA_PENDING, 16);
	PUT64(&w, handle);
	PUT64(&w, last_seq);
	return done(&w);
}

long tracer__relay_data_head(uint8_t *out, size_t room, uint64_t handle,
			     uint64_t seq, uint32_t size, uint32_t padding)
{
	struct put w = { out, 0, room };

	PUT64(&w, 0);
	PUT64(&w, handle);
	PUT64(&w, seq);
	PUT32(&w, size);
	PUT32(&w, padding);
	return done(&w);
}

/* A reply's path: len bytes (NUL included) at p, into r->path. */
static int take_path(const uint8_t *p, uint32_t len,
		     struct tracer_relay_reply *r)
{
	if (len == 0) {
		r->path[0] = '\0';
		return 0;
	}
	if (len > sizeof(r->path) || p[len - 1] != '\0' ||
	    memchr(p, '\0', len) != p + len - 1)
		return -EPROTO;
	memcpy(r->path, p, len);
	return 0;
}

/* CREATE_SESSION: {u64 session, u32 ret, u32 path length} and the path. */
static long session_reply(const uint8_t *p, size_t n,
			  struct tracer_relay_reply *r)
{
	uint32_t len;

	if (n < 16)
		return 0;
	r->id = get_be(p, 8);
	r->ret = (uint32_t)get_be(p + 8, 4);
	len = (uint32_t)get_be(p + 12, 4);
	if (len > TRACER_RELAY_REPLY_PATH)
		return -EPROTO;
	if (n - 16 < len)
		return 0;
	return take_path(p + 16, len, r) ? -EPROTO : (long)(16 + len);
}

/* CLOSE_TRACE_CHUNK: {u32 ret, u32 path length}, the path if ret is OK. */
static long chunk_close_reply(const uint8_t *p, size_t n,
			      struct tracer_relay_reply *r)
{
	uint32_t len;

	if (n < 8)
		return 0;
	r->ret = (uint32_t)get_be(p, 4);
	len = r->ret == TRACER_RELAY_OK ? (uint32_t)get_be(p + 4, 4) : 0;
	if (len > TRACER_RELAY_REPLY_PATH)
		return -EPROTO;
	if (n - 8 < len)
		return 0;
	return take_path(p + 8, len, r) ? -EPROTO : (long)(8 + len);
}

long tracer__relay_reply(enum tracer_relay_cmd cmd, const uint8_t *p,
			 size_t n, struct tracer_relay_reply *r)
{
	memset(r, 0, sizeof(*r) - sizeof(r->path));
	r->path[0] = '\0';
	switch (cmd) {
	case TRACER_RELAY_VERSION:
		if (n < 8)
			return 0;
		r->major = (uint32_t)get_be(p, 4);
		r->minor = (uint32_t)get_be(p + 4, 4);
		r->ret = r->major == TRACER_RELAY_MAJOR ? TRACER_RELAY_OK : 0;
		return 8;
	case TRACER_RELAY_CREATE_SESSION:
		return session_reply(p, n, r);
	case TRACER_RELAY_ADD_STREAM:
		if (n < 12)
			return 0;
		r->id = get_be(p, 8);
		r->ret = (uint32_t)get_be(p + 8, 4);
		return 12;
	case TRACER_RELAY_CLOSE_TRACE_CHUNK:
		return chunk_close_reply(p, n, r);
	case TRACER_RELAY_CLOSE_STREAM:
	case TRACER_RELAY_DATA_PENDING:
	case TRACER_RELAY_SEND_INDEX:
	case TRACER_RELAY_STREAMS_SENT:
	case TRACER_RELAY_CREATE_TRACE_CHUNK:
		if (n < 4)
			return 0;
		r->ret = (uint32_t)get_be(p, 4);
		return 4;
	case TRACER_RELAY_SEND_METADATA:
	default:
		return -EINVAL;
	}
}

/* A port: 1-65535, digits only. */
static int parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* The ":CTRL[:DATA]" after the host, or "". */
static int parse_ports(const char *s, uint16_t *ctrl, uint16_t *data)
{
	const char *colon;

	*ctrl = TRACER_RELAY_CTRL_PORT;
	*data = TRACER_RELAY_DATA_PORT;
	if (*s == '\0')
		return 0;
	if (*s++ != ':')
		return -EINVAL;
	colon = strchr(s, ':');
	if (!colon)
		return parse_port(s, strlen(s), ctrl);
	if (parse_port(s, (size_t)(colon - s), ctrl))
		return -EINVAL;
	return parse_port(colon + 1, strlen(colon + 1), data);
}

int tracer__relay_parse_url(const char *url, char *host, size_t room,
			    uint16_t *ctrl, uint16_t *data)
{
	const char *h, *end;
	size_t n;

	if (strncmp(url, "net://", 6))
		return -EINVAL;
	h = url + 6;
	if (*h == '[') {
		end = strchr(++h, ']');
		if (!end)
			return -EINVAL;
		n = (size_t)(end++ - h);
	} else {
		end = h + strcspn(h, ":/");
		n = (size_t)(end - h);
		if (*end == '/')
			return -EINVAL;
	}
	if (n == 0 || n >= room || memchr(h, '/', n))
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	return parse_ports(end, ctrl, data);
}
