/*
 * relay_proto.h - the producer's side of lttng-relayd's protocol, 2.11:
 * commands encoded into a caller's buffer, replies decoded from received
 * bytes, and the net:// address of a relay. No I/O here (tracerd/relay.c
 * does it on its loop); doc/relay.md has the sequence and the layouts,
 * checked against lttng-tools 2.13.9 and a capture of its consumer.
 *
 * Every integer on the wire is big-endian and every struct packed. A
 * control command is a 24-byte header {u64 circuit 0, u64 payload size,
 * u32 command, u32 version 0} and its payload; its reply is a bare struct
 * (SEND_METADATA has none). The data connection carries a 32-byte header
 * {u64 circuit 0, u64 stream handle, u64 net_seq_num, u32 size, u32
 * padding} and a packet's content per packet, and nothing comes back.
 */
#ifndef TRACER_RELAY_PROTO_H
#define TRACER_RELAY_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACER_RELAY_CTRL_PORT	5342
#define TRACER_RELAY_DATA_PORT	5343
#define TRACER_RELAY_LIVE_PORT	5344

#define TRACER_RELAY_MAJOR	2
#define TRACER_RELAY_MINOR	11	/* what we speak: announce no more */
#define TRACER_RELAY_OK		10	/* LTTNG_OK */

#define TRACER_RELAY_HDR	24	/* control header */
#define TRACER_RELAY_DATA_HDR	32	/* data connection header */
#define TRACER_RELAY_PATH_MAX	255	/* ADD_STREAM's pathname, NUL included */
#define TRACER_RELAY_NAME_MAX	255	/* session name, NUL included */
#define TRACER_RELAY_HOST_MAX	256	/* hostname, NUL included */
#define TRACER_RELAY_REPLY_PATH	4096	/* longest path a reply may carry */
#define TRACER_RELAY_NO_SEQ	UINT64_MAX	/* "-1": nothing sent yet */

enum tracer_relay_cmd {
	TRACER_RELAY_ADD_STREAM = 1,
	TRACER_RELAY_CREATE_SESSION = 2,
	TRACER_RELAY_VERSION = 5,
	TRACER_RELAY_SEND_METADATA = 6,
	TRACER_RELAY_CLOSE_STREAM = 7,
	TRACER_RELAY_DATA_PENDING = 8,
	TRACER_RELAY_SEND_INDEX = 13,
	TRACER_RELAY_STREAMS_SENT = 16,
	TRACER_RELAY_CREATE_TRACE_CHUNK = 19,
	TRACER_RELAY_CLOSE_TRACE_CHUNK = 20,
};

/* CREATE_SESSION, 2.11 form. */
struct tracer_relay_session {
	const char *name;		/* path-safe: no '/', no leading '.' */
	const char *hostname;		/* the same */
	const char *base_path;		/* "" or relative, no "../" */
	uint32_t live_timer_us;		/* not 0: live viewers may attach */
	bool name_has_time;		/* relayd appends no date to name */
	uint8_t uuid[16];		/* the producer's, not all zero */
	uint64_t session_id;		/* the producer's own number */
	uint64_t creation_time;		/* seconds since the Epoch */
};

/* SEND_INDEX: one packet as relayd's index and live viewers see it. */
struct tracer_relay_index {
	uint64_t handle;		/* the stream's, from ADD_STREAM */
	uint64_t net_seq_num;		/* its data header's */
	uint64_t packet_size;		/* bits; 0: a beacon (no packet) */
	uint64_t content_size;		/* bits */
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t events_discarded;
	uint64_t stream_class_id;	/* the CTF stream class */
	uint64_t stream_instance_id;
	uint64_t packet_seq_num;
};

/* A decoded reply. Which fields mean something depends on the command. */
struct tracer_relay_reply {
	uint32_t ret;			/* TRACER_RELAY_OK, or relayd's error */
	uint32_t major, minor;		/* VERSION: relayd's own */
	uint64_t id;			/* CREATE_SESSION: relayd's session;
					   ADD_STREAM: the stream's handle */
	char path[TRACER_RELAY_REPLY_PATH];	/* CREATE_SESSION's, or "" */
};

/*
 * The encoders write one command (or data header) at out, room bytes at
 * most, and return its length, or -ENOSPC (room too small) or -EINVAL (a
 * string too long or unsafe for relayd, which would close the
 * connection).
 */
long tracer__relay_version(uint8_t *out, size_t room);
long tracer__relay_create_session(uint8_t *out, size_t room,
				  const struct tracer_relay_session *s);
long tracer__relay_create_chunk(uint8_t *out, size_t room, uint64_t chunk,
				uint64_t now_s);
long tracer__relay_close_chunk(uint8_t *out, size_t room, uint64_t chunk,
			       uint64_t now_s);
/* channel: the stream's file name ("metadata" makes the trace's metadata
 * stream); path: its directory in the session, where its trace is. */
long tracer__relay_add_stream(uint8_t *out, size_t room, const char *channel,
			      const char *path);
long tracer__relay_streams_sent(uint8_t *out, size_t room);
/* The header of SEND_METADATA: n metadata bytes follow it. */
long tracer__relay_metadata_head(uint8_t *out, size_t room, uint64_t handle,
				 uint32_t n);
long tracer__relay_send_index(uint8_t *out, size_t room,
			      const struct tracer_relay_index *ix);
long tracer__relay_close_stream(uint8_t *out, size_t room, uint64_t handle,
				uint64_t last_seq);
/* Has relayd written the stream's data and indexes up to last_seq? Its
 * reply's ret: 0 yes, 1 not yet (a value, not a status). */
long tracer__relay_data_pending(uint8_t *out, size_t room, uint64_t handle,
				uint64_t last_seq);
/* The data connection's header of a packet: size bytes of content follow,
 * relayd pads the packet with `padding` zero bytes. */
long tracer__relay_data_head(uint8_t *out, size_t room, uint64_t handle,
			     uint64_t seq, uint32_t size, uint32_t padding);

/*
 * Decode the reply to command cmd from the n bytes at p. Returns the bytes
 * it took (> 0), 0 when more are needed, or -EPROTO (malformed: a path
 * without its NUL or too long) or -EINVAL (cmd has no reply).
 */
long tracer__relay_reply(enum tracer_relay_cmd cmd, const uint8_t *p,
			 size_t n, struct tracer_relay_reply *r);

/*
 * Parse "net://HOST[:CTRL[:DATA]]" (HOST a name, an IPv4 address or an
 * IPv6 one in brackets; the ports default to 5342 and 5343). host gets
 * HOST without brackets. Returns 0 or -EINVAL.
 */
int tracer__relay_parse_url(const char *url, char *host, size_t room,
			    uint16_t *ctrl, uint16_t *data);

#endif /* TRACER_RELAY_PROTO_H */
