/*
 * test_relay_proto.c - lttng-relayd's protocol, producer side
 * (common/relay_proto.h, relay_proto.c), against real bytes: a capture of
 * lttng-tools 2.13.9's consumer talking to lttng-relayd 2.13.9 (commands
 * picked from its control and data connections and from relayd's replies,
 * copied below):
 *   - every command we encode is the captured one byte for byte, but for
 *     three deliberate differences, each asserted: VERSION announces minor
 *     11 (the consumer 13), ADD_STREAM's trace_chunk_id is always 0 and
 *     SEND_METADATA's padding_size 0;
 *   - each encoder fits in exactly its length, gives -ENOSPC one byte short
 *     (or with no room) and never writes past its room;
 *   - names relayd would refuse (and close the connection for) are
 *     refused with -EINVAL before a byte is written, at their exact limits;
 *   - relayd's captured replies decode to their values, need their last
 *     byte (0 for every shorter prefix) and take no byte of what follows;
 *     malformed ones (a path too long, without its NUL, with a NUL inside)
 *     are -EPROTO, a command without a reply -EINVAL;
 *   - net:// addresses: host, IPv4, [IPv6], default and given ports, and
 *     the malformed ones refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay_proto.h"
#include "tap.h"

#define CANARY		0xa5
#define BUF		1024	/* more than any command below */

/* The consumer's stream directory: "ust/" + uid/65534/64-bit. */
#define CAP_PATH	"ust/uid/65534/64-bit"

/* ---- The capture (capture/DECODED.md: #n is its command number). ---- */

/* #1 VERSION {2, 13}: ctrl_c2s.bin @0. */
static const uint8_t cap_version[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0d,
};

/* #3 CREATE_SESSION 2.11 "s" "vm" "", live 1 s, chunk unset: @64. */
static const uint8_t cap_session[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x41,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x0f, 0x42, 0x40,
	0x00, 0x00, 0x8d, 0xc7, 0xdc, 0xb6, 0x85, 0x5d,
	0x4a, 0x99, 0x9c, 0xe8, 0x6b, 0xa0, 0xd5, 0xd4,
	0x3f, 0x16, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6b, 0x0a,
	0x89, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x73, 0x00, 0x76, 0x6d, 0x00,
	0x00,
};

/* #4 CREATE_TRACE_CHUNK {0, 1795852657, no name}: @153. */
static const uint8_t cap_chunk[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14,
	0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x6b, 0x0a, 0x89, 0x71,
	0x00, 0x00, 0x00, 0x00,
};

/* #5 ADD_STREAM "channel0_0" CAP_PATH: @197. */
static const uint8_t cap_add_data[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x15,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x63, 0x68, 0x61, 0x6e, 0x6e, 0x65, 0x6c, 0x30,
	0x5f, 0x30, 0x00, 0x75, 0x73, 0x74, 0x2f, 0x75,
	0x69, 0x64, 0x2f, 0x36, 0x35, 0x35, 0x33, 0x34,
	0x2f, 0x36, 0x34, 0x2d, 0x62, 0x69, 0x74, 0x00,
};

/* #7 ADD_STREAM "metadata" CAP_PATH: @373. */
static const uint8_t cap_add_meta[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3e,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x15,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x6d, 0x65, 0x74, 0x61, 0x64, 0x61, 0x74, 0x61,
	0x00, 0x75, 0x73, 0x74, 0x2f, 0x75, 0x69, 0x64,
	0x2f, 0x36, 0x35, 0x35, 0x33, 0x34, 0x2f, 0x36,
	0x34, 0x2d, 0x62, 0x69, 0x74, 0x00,
};

/* ADD_STREAM's trace_chunk_id: payload offset 24. */
#define ADD_STREAM_CHUNK	(TRACER_RELAY_HDR + 24)

/* #8 STREAMS_SENT: @459. */
static const uint8_t cap_sent[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
};

/* #10 SEND_METADATA handle 3, 2856 bytes, padding 1240: its first 36
 * bytes (@483), the metadata itself left out. */
static const uint8_t cap_meta[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x34,
	0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
	0x00, 0x00, 0x04, 0xd8,
};

#define CAP_META_BYTES	2856

/* #11 SEND_INDEX of channel0_0's first packet: @3375. */
static const uint8_t cap_index[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50,
	0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x20,
	0x00, 0x00, 0x35, 0xfd, 0xc9, 0x7e, 0x5d, 0xbf,
	0x00, 0x00, 0x35, 0xfe, 0x05, 0x51, 0xcb, 0xb2,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* #31 SEND_INDEX, a live beacon of channel0_1 (last seq 2): @4935. */
static const uint8_t cap_beacon[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50,
	0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x35, 0xff, 0xa6, 0x98, 0x1a, 0xb0,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* #60 CLOSE_TRACE_CHUNK {0, 1795852672, no command}: @6775. */
static const uint8_t cap_close_chunk[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x15,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x6b, 0x0a, 0x89, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00,
};

/* #62 CLOSE_STREAM metadata (handle 3), last -1: @6852. */
static const uint8_t cap_close_meta[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* #63 CLOSE_STREAM channel0_0 (handle 1), last 4: @6892. */
static const uint8_t cap_close_data[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
};

/* #9 the data connection's first packet, its header only: data_c2s.bin
 * @0, handle 1, seq 0, 164 bytes, padding 3932. */
static const uint8_t cap_data_head[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0xa4, 0x00, 0x00, 0x0f, 0x5c,
};

/* relayd's replies (ctrl_s2c.bin). #1 VERSION: relayd's own, 2.13. */
static const uint8_t rep_version[] = {
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0d,
};

/* #3 CREATE_SESSION: session 1, OK, its directory (@20). */
static const uint8_t rep_session[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x15,
	0x76, 0x6d, 0x2f, 0x73, 0x2d, 0x32, 0x30, 0x32,
	0x36, 0x31, 0x31, 0x32, 0x38, 0x2d, 0x30, 0x37,
	0x35, 0x37, 0x33, 0x36, 0x00,
};

#define CAP_SESSION_DIR	"vm/s-20261128-075736"

/* #5, #6, #7 ADD_STREAM: handles 1, 2, 3 (@61, @73, @85). */
static const uint8_t rep_add1[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x0a,
};

static const uint8_t rep_add2[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x0a,
};

static const uint8_t rep_add3[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x0a,
};

/* #4, #8, #11, #62: the 4-byte LTTNG_OK of CREATE_TRACE_CHUNK,
 * STREAMS_SENT, SEND_INDEX and CLOSE_STREAM (@57, @97, @101, @295). */
static const uint8_t rep_ok[] = {
	0x00, 0x00, 0x00, 0x0a,
};

/* #47 DATA_PENDING of stream 1 up to 4, at the stop (c2s@6111), and
 * its answer: 0, not pending (a value, not a status; s2c@209). */
static const uint8_t cap_data_pending[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
};

static const uint8_t rep_not_pending[] = {
	0x00, 0x00, 0x00, 0x00,
};

/* #60 CLOSE_TRACE_CHUNK: OK, and the chunk's directory (@261). */
static const uint8_t rep_close_chunk[] = {
	0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x15,
	0x76, 0x6d, 0x2f, 0x73, 0x2d, 0x32, 0x30, 0x32,
	0x36, 0x31, 0x31, 0x32, 0x38, 0x2d, 0x30, 0x37,
	0x35, 0x37, 0x33, 0x36, 0x00,
};

/* ---- What produced the capture, as our encoders' arguments. ---- */

static const struct tracer_relay_session sess = {
	.name = "s",
	.hostname = "vm",
	.base_path = "",
	.live_timer_us = 1000000,
	.name_has_time = false,
	.uuid = { 0x8d, 0xc7, 0xdc, 0xb6, 0x85, 0x5d, 0x4a, 0x99,
		  0x9c, 0xe8, 0x6b, 0xa0, 0xd5, 0xd4, 0x3f, 0x16 },
	.session_id = 0,
	.creation_time = 1795852656,	/* 2026-11-28T07:57:36Z */
};

static const struct tracer_relay_index packet_ix = {
	.handle = 1,
	.net_seq_num = 0,
	.packet_size = 32768,
	.content_size = 1312,
	.timestamp_begin = 59364123499967ULL,
	.timestamp_end = 59365127211954ULL,
};

/* A beacon: packet_size 0, the last sent seq, timestamp_end now, every
 * other field 0 (stream class 0 here). */
static const struct tracer_relay_index beacon_ix = {
	.handle = 2,
	.net_seq_num = 2,
	.timestamp_end = 59372127918768ULL,
};

static long enc_version(uint8_t *o, size_t r)
{
	return tracer__relay_version(o, r);
}

static long enc_session(uint8_t *o, size_t r)
{
	return tracer__relay_create_session(o, r, &sess);
}

static long enc_chunk(uint8_t *o, size_t r)
{
	return tracer__relay_create_chunk(o, r, 0, 1795852657);
}

static long enc_add_data(uint8_t *o, size_t r)
{
	return tracer__relay_add_stream(o, r, "channel0_0", CAP_PATH);
}

static long enc_add_meta(uint8_t *o, size_t r)
{
	return tracer__relay_add_stream(o, r, "metadata", CAP_PATH);
}

static long enc_sent(uint8_t *o, size_t r)
{
	return tracer__relay_streams_sent(o, r);
}

static long enc_meta(uint8_t *o, size_t r)
{
	return tracer__relay_metadata_head(o, r, 3, CAP_META_BYTES);
}

static long enc_index(uint8_t *o, size_t r)
{
	return tracer__relay_send_index(o, r, &packet_ix);
}

static long enc_beacon(uint8_t *o, size_t r)
{
	return tracer__relay_send_index(o, r, &beacon_ix);
}

static long enc_close_meta(uint8_t *o, size_t r)
{
	return tracer__relay_close_stream(o, r, 3, TRACER_RELAY_NO_SEQ);
}

static long enc_close_data(uint8_t *o, size_t r)
{
	return tracer__relay_close_stream(o, r, 1, 4);
}

static long enc_close_chunk(uint8_t *o, size_t r)
{
	return tracer__relay_close_chunk(o, r, 0, 1795852672);
}

static long enc_data_pending(uint8_t *o, size_t r)
{
	return tracer__relay_data_pending(o, r, 1, 4);
}

static long enc_data_head(uint8_t *o, size_t r)
{
	return tracer__relay_data_head(o, r, 1, 0, 164, 3932);
}

static const struct enc_case {
	const char *name;
	long (*fn)(uint8_t *out, size_t room);
	const uint8_t *cap;
	size_t len;
	bool exact;		/* else test_differences() compares it */
} encs[] = {
#define E(name, fn, cap, exact)	{ name, fn, cap, sizeof(cap), exact }
	E("VERSION", enc_version, cap_version, false),
	E("CREATE_SESSION", enc_session, cap_session, true),
	E("CREATE_TRACE_CHUNK", enc_chunk, cap_chunk, true),
	E("ADD_STREAM channel0_0", enc_add_data, cap_add_data, false),
	E("ADD_STREAM metadata", enc_add_meta, cap_add_meta, false),
	E("STREAMS_SENT", enc_sent, cap_sent, true),
	E("SEND_METADATA's header", enc_meta, cap_meta, false),
	E("SEND_INDEX of a packet", enc_index, cap_index, true),
	E("SEND_INDEX of a beacon", enc_beacon, cap_beacon, true),
	E("CLOSE_STREAM metadata, last -1", enc_close_meta, cap_close_meta,
	  true),
	E("CLOSE_STREAM data, last 4", enc_close_data, cap_close_data, true),
	E("CLOSE_TRACE_CHUNK", enc_close_chunk, cap_close_chunk, true),
	E("the data connection's header", enc_data_head, cap_data_head,
	  true),
	E("DATA_PENDING", enc_data_pending, cap_data_pending, true),
#undef E
};

#define N_ENCS	((int)(sizeof(encs) / sizeof(encs[0])))

/* ---- Helpers. ---- */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void fill(uint8_t *b)
{
	memset(b, CANARY, BUF);
}

/* Bytes [from, BUF) of b still hold the canary. */
static bool untouched(const uint8_t *b, size_t from)
{
	size_t i;

	for (i = from; i < BUF; i++)
		if (b[i] != CANARY)
			return false;
	return true;
}

/* got[from, to) equals want[from, to); tell the first difference. */
static bool same(const uint8_t *got, const uint8_t *want, size_t from,
		 size_t to)
{
	size_t i;

	for (i = from; i < to; i++) {
		if (got[i] != want[i]) {
			diag("  byte %zu: 0x%02x, the capture's 0x%02x", i,
			     got[i], want[i]);
			return false;
		}
	}
	return true;
}

/* ---- Encoders against the capture. ---- */

static void test_exact(void)
{
	uint8_t buf[BUF];
	long n;
	int i;

	for (i = 0; i < N_ENCS; i++) {
		const struct enc_case *c = &encs[i];

		if (!c->exact)
			continue;
		fill(buf);
		n = c->fn(buf, sizeof(buf));
		if (!ok(n == (long)c->len && same(buf, c->cap, 0, c->len) &&
			untouched(buf, c->len),
			"%s: the captured %zu bytes, byte for byte", c->name,
			c->len))
			diag("  returned %ld", n);
	}
}

static void test_differences(void)
{
	uint8_t buf[BUF];
	long n;

	/* VERSION: we speak 2.11 and announce no more (relayd then uses
	 * min(13, 11)); the consumer announced its own 2.13. */
	fill(buf);
	n = enc_version(buf, sizeof(buf));
	ok(n == (long)sizeof(cap_version) &&
	   same(buf, cap_version, 0, TRACER_RELAY_HDR + 4),
	   "VERSION: the captured header and major 2");
	ok(be32(buf + TRACER_RELAY_HDR + 4) == TRACER_RELAY_MINOR &&
	   TRACER_RELAY_MINOR == 11 &&
	   be32(cap_version + TRACER_RELAY_HDR + 4) == 13,
	   "VERSION: minor 11 by design, where the consumer sent 13");

	/*
	 * ADD_STREAM: the real consumer sends the id of its current trace
	 * chunk in trace_chunk_id (here chunk 0, so the captured field
	 * happens to be 0 too); ours is always 0, which relayd 2.13 parses
	 * and ignores (the stream goes to the session's current chunk).
	 * Everything but that field is compared with the capture, and the
	 * field is asserted to be 0.
	 */
	fill(buf);
	n = enc_add_data(buf, sizeof(buf));
	ok(n == (long)sizeof(cap_add_data) &&
	   same(buf, cap_add_data, 0, ADD_STREAM_CHUNK) &&
	   same(buf, cap_add_data, ADD_STREAM_CHUNK + 8, sizeof(cap_add_data)),
	   "ADD_STREAM channel0_0 %s: the captured bytes but trace_chunk_id",
	   CAP_PATH);
	ok(be64(buf + ADD_STREAM_CHUNK) == 0,
	   "ADD_STREAM channel0_0: trace_chunk_id 0 (the consumer's: %" PRIu64
	   ")", be64(cap_add_data + ADD_STREAM_CHUNK));
	fill(buf);
	n = enc_add_meta(buf, sizeof(buf));
	ok(n == (long)sizeof(cap_add_meta) &&
	   same(buf, cap_add_meta, 0, ADD_STREAM_CHUNK) &&
	   same(buf, cap_add_meta, ADD_STREAM_CHUNK + 8, sizeof(cap_add_meta)),
	   "ADD_STREAM metadata %s: the captured bytes but trace_chunk_id",
	   CAP_PATH);
	ok(be64(buf + ADD_STREAM_CHUNK) == 0,
	   "ADD_STREAM metadata: trace_chunk_id 0 (the consumer's: %" PRIu64
	   ")", be64(cap_add_meta + ADD_STREAM_CHUNK));

	/* SEND_METADATA: the consumer sends a whole metadata packet's
	 * content and has relayd pad it (1240 bytes); we send our bytes and
	 * no padding. data_size = 12 + the bytes either way. */
	fill(buf);
	n = enc_meta(buf, sizeof(buf));
	ok(n == (long)sizeof(cap_meta) &&
	   same(buf, cap_meta, 0, TRACER_RELAY_HDR + 8) &&
	   untouched(buf, sizeof(cap_meta)),
	   "SEND_METADATA handle 3, %d bytes: the captured header, data_size "
	   "and handle", CAP_META_BYTES);
	ok(be32(buf + TRACER_RELAY_HDR + 8) == 0 &&
	   be32(cap_meta + TRACER_RELAY_HDR + 8) == 1240,
	   "SEND_METADATA: padding_size 0 by design, where the consumer's "
	   "was 1240");
}

static void test_room(void)
{
	uint8_t buf[BUF];
	long exact, short1, none;
	bool clean;
	int i;

	for (i = 0; i < N_ENCS; i++) {
		const struct enc_case *c = &encs[i];

		fill(buf);
		exact = c->fn(buf, c->len);
		clean = untouched(buf, c->len);
		fill(buf);
		short1 = c->fn(buf, c->len - 1);
		clean = clean && untouched(buf, c->len - 1);
		fill(buf);
		none = c->fn(buf, 0);
		clean = clean && untouched(buf, 0);
		if (!ok(exact == (long)c->len && short1 == -ENOSPC &&
			none == -ENOSPC && clean,
			"%s: fits in exactly %zu bytes; -ENOSPC in %zu and in "
			"0, and nothing written past the room", c->name, c->len,
			c->len - 1))
			diag("  returned %ld, %ld, %ld; canary %s", exact,
			     short1, none, clean ? "intact" : "overwritten");
	}
}

/* ---- Names relayd would refuse. ---- */

static char name254[255], name255[256], host255[256], host256[257];
static char path254[255], path255[256];

static void make_long(char *s, size_t len)
{
	memset(s, 'a', len);
	s[len] = '\0';
}

/* s with one field changed must give want, and -EINVAL writes nothing. */
static void session_case(const struct tracer_relay_session *s, long want,
			 const char *what)
{
	uint8_t buf[BUF];
	long n;

	fill(buf);
	n = tracer__relay_create_session(buf, sizeof(buf), s);
	if (!ok(n == want && (want > 0 || untouched(buf, 0)),
		"CREATE_SESSION, %s: %s", what,
		want == -EINVAL ? "-EINVAL, nothing written" : "accepted"))
		diag("  returned %ld, want %ld", n, want);
}

static void stream_case(const char *channel, const char *path, long want,
			const char *what)
{
	uint8_t buf[BUF];
	long n;

	fill(buf);
	n = tracer__relay_add_stream(buf, sizeof(buf), channel, path);
	if (!ok(n == want && (want > 0 || untouched(buf, 0)),
		"ADD_STREAM, %s: %s", what,
		want == -EINVAL ? "-EINVAL, nothing written" : "accepted"))
		diag("  returned %ld, want %ld", n, want);
}

static void test_einval(void)
{
	struct tracer_relay_session s;

	make_long(name254, 254);
	make_long(name255, 255);
	make_long(host255, 255);
	make_long(host256, 256);
	make_long(path254, 254);
	make_long(path255, 255);

	s = sess;
	s.name = "a/b";
	session_case(&s, -EINVAL, "name with a '/'");
	s = sess;
	s.name = ".s";
	session_case(&s, -EINVAL, "name with a leading '.'");
	s = sess;
	s.name = "";
	session_case(&s, -EINVAL, "empty name");
	s = sess;
	s.name = name255;
	session_case(&s, -EINVAL, "name of 255 chars (256 with its NUL)");
	s = sess;
	s.name = name254;
	session_case(&s, TRACER_RELAY_HDR + 59 + 255 + 3 + 1,
		     "name of 254 chars (255 with its NUL, the limit)");
	s = sess;
	s.hostname = host256;
	session_case(&s, -EINVAL, "hostname of 256 chars");
	s = sess;
	s.hostname = host255;
	session_case(&s, TRACER_RELAY_HDR + 59 + 2 + 256 + 1,
		     "hostname of 255 chars (256 with its NUL, the limit)");
	s = sess;
	s.hostname = "a/b";
	session_case(&s, -EINVAL, "hostname with a '/'");
	s = sess;
	s.base_path = "x/../y";
	session_case(&s, -EINVAL, "base_path with \"../\"");
	s = sess;
	s.base_path = "../y";
	session_case(&s, -EINVAL, "base_path starting with \"../\"");
	s = sess;
	s.base_path = "/abs";
	session_case(&s, -EINVAL, "absolute base_path");
	s = sess;
	s.base_path = "my/base";
	session_case(&s, TRACER_RELAY_HDR + 59 + 2 + 3 + 8,
		     "base_path \"my/base\"");
	s = sess;
	memset(s.uuid, 0, sizeof(s.uuid));
	session_case(&s, -EINVAL, "all-zero uuid");

	stream_case("channel0_0", path255, -EINVAL,
		    "path of 255 chars (256 with its NUL)");
	stream_case("channel0_0", path254, TRACER_RELAY_HDR + 32 + 11 + 255,
		    "path of 254 chars (255 with its NUL, the limit)");
	stream_case("channel0_0", "ust/../x", -EINVAL, "path with \"../\"");
	stream_case("a/b", CAP_PATH, -EINVAL, "channel with a '/'");
	stream_case("", CAP_PATH, -EINVAL, "empty channel");
}

/* ---- Decoders against relayd's replies. ---- */

static const struct rep_case {
	const char *name;
	enum tracer_relay_cmd cmd;
	const uint8_t *rep;
	size_t len;
} reps[] = {
#define R(name, cmd, rep)	{ name, TRACER_RELAY_##cmd, rep, sizeof(rep) }
	R("VERSION", VERSION, rep_version),
	R("CREATE_SESSION", CREATE_SESSION, rep_session),
	R("ADD_STREAM", ADD_STREAM, rep_add1),
	R("CREATE_TRACE_CHUNK", CREATE_TRACE_CHUNK, rep_ok),
	R("STREAMS_SENT", STREAMS_SENT, rep_ok),
	R("SEND_INDEX", SEND_INDEX, rep_ok),
	R("CLOSE_STREAM", CLOSE_STREAM, rep_ok),
	R("CLOSE_TRACE_CHUNK", CLOSE_TRACE_CHUNK, rep_close_chunk),
	R("DATA_PENDING", DATA_PENDING, rep_not_pending),
#undef R
};

#define N_REPS	((int)(sizeof(reps) / sizeof(reps[0])))

static void test_replies(void)
{
	struct tracer_relay_reply r;
	long n;
	int i;

	n = tracer__relay_reply(TRACER_RELAY_VERSION, rep_version,
				sizeof(rep_version), &r);
	ok(n == 8 && r.major == 2 && r.minor == 13 &&
	   r.ret == TRACER_RELAY_OK,
	   "VERSION reply: relayd's 2.13, 8 bytes, OK");

	memset(r.path, 'x', sizeof(r.path));
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, rep_session,
				sizeof(rep_session), &r);
	if (!ok(n == (long)sizeof(rep_session) && r.id == 1 &&
		r.ret == TRACER_RELAY_OK && !strcmp(r.path, CAP_SESSION_DIR),
		"CREATE_SESSION reply: session 1, OK, \"%s\", %zu bytes",
		CAP_SESSION_DIR, sizeof(rep_session)))
		diag("  returned %ld, id %" PRIu64 ", ret %" PRIu32, n, r.id,
		     r.ret);

	n = tracer__relay_reply(TRACER_RELAY_ADD_STREAM, rep_add1,
				sizeof(rep_add1), &r);
	ok(n == 12 && r.id == 1 && r.ret == TRACER_RELAY_OK,
	   "ADD_STREAM reply: handle 1, OK");
	n = tracer__relay_reply(TRACER_RELAY_ADD_STREAM, rep_add2,
				sizeof(rep_add2), &r);
	ok(n == 12 && r.id == 2 && r.ret == TRACER_RELAY_OK,
	   "ADD_STREAM reply: handle 2, OK");
	n = tracer__relay_reply(TRACER_RELAY_ADD_STREAM, rep_add3,
				sizeof(rep_add3), &r);
	ok(n == 12 && r.id == 3 && r.ret == TRACER_RELAY_OK,
	   "ADD_STREAM reply: handle 3, OK");

	for (i = 0; i < N_REPS; i++) {
		if (reps[i].rep != rep_ok)
			continue;
		n = tracer__relay_reply(reps[i].cmd, rep_ok, sizeof(rep_ok),
					&r);
		ok(n == 4 && r.ret == TRACER_RELAY_OK,
		   "%s reply: 4 bytes, OK", reps[i].name);
	}

	memset(r.path, 'x', sizeof(r.path));
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, rep_close_chunk,
				sizeof(rep_close_chunk), &r);
	ok(n == (long)sizeof(rep_close_chunk) && r.ret == TRACER_RELAY_OK &&
	   !strcmp(r.path, CAP_SESSION_DIR),
	   "CLOSE_TRACE_CHUNK reply: OK, \"%s\", %zu bytes", CAP_SESSION_DIR,
	   sizeof(rep_close_chunk));
}

/*
 * The first k bytes of a reply, decoded twice: from a buffer of exactly k
 * bytes (a read past it is a heap overflow a sanitizer or valgrind sees)
 * and from one where 0xff bytes follow them (a read past k sees garbage,
 * not the rest of the reply). Both must agree.
 */
static long prefix(const struct rep_case *c, size_t k)
{
	struct tracer_relay_reply r;
	uint8_t junk[64];
	uint8_t *p = malloc(k ? k : 1);
	long n, m;

	if (!p)
		bail_out("out of memory");
	memcpy(p, c->rep, k);
	n = tracer__relay_reply(c->cmd, p, k, &r);
	free(p);
	memset(junk, 0xff, sizeof(junk));
	memcpy(junk, c->rep, k);
	m = tracer__relay_reply(c->cmd, junk, k, &r);
	return n == m ? n : -ERANGE;
}

/*
 * Each reply as it may come off the socket: every prefix is "need more",
 * the whole is taken, and the whole followed by the next reply's bytes
 * takes only its own.
 */
/* DATA_PENDING's reply is a value: 0 written, 1 not yet. */
static void test_data_pending(void)
{
	static const uint8_t one[] = { 0x00, 0x00, 0x00, 0x01 };
	struct tracer_relay_reply r;
	long n;

	n = tracer__relay_reply(TRACER_RELAY_DATA_PENDING, rep_not_pending,
				sizeof(rep_not_pending), &r);
	ok(n == 4 && r.ret == 0, "DATA_PENDING reply 0: written");
	n = tracer__relay_reply(TRACER_RELAY_DATA_PENDING, one, sizeof(one),
				&r);
	ok(n == 4 && r.ret == 1, "DATA_PENDING reply 1: not yet");
}

static void test_byte_by_byte(void)
{
	struct tracer_relay_reply r;
	uint8_t more[64];
	size_t k, bad_at;
	long n, bad_n;
	int i;

	for (i = 0; i < N_REPS; i++) {
		const struct rep_case *c = &reps[i];
		bool good = true;

		bad_at = 0;
		bad_n = 0;
		for (k = 0; k <= c->len && good; k++) {
			n = prefix(c, k);
			if (n != (k < c->len ? 0 : (long)c->len)) {
				good = false;
				bad_at = k;
				bad_n = n;
			}
		}
		memcpy(more, c->rep, c->len);
		memcpy(more + c->len, rep_add2, sizeof(rep_add2));
		memset(more + c->len + sizeof(rep_add2), 0,
		       sizeof(more) - c->len - sizeof(rep_add2));
		n = tracer__relay_reply(c->cmd, more, sizeof(more), &r);
		if (!ok(good && n == (long)c->len,
			"%s reply byte by byte: 0 for each of its %zu shorter "
			"prefixes, %zu once whole, and no more of a longer "
			"input", c->name, c->len, c->len))
			diag("  %zu bytes gave %ld; a longer input %ld", bad_at,
			     bad_n, n);
	}
}

static void test_malformed(void)
{
	static uint8_t big[16 + TRACER_RELAY_REPLY_PATH + 1];
	struct tracer_relay_reply r;
	uint8_t b[64];
	long n;

	/* CREATE_SESSION: {u64 session, u32 ret, u32 length} + path. */
	memcpy(b, rep_session, 16);
	put32(b + 12, TRACER_RELAY_REPLY_PATH + 1);
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, b, 16, &r);
	is_int(n, -EPROTO, "CREATE_SESSION reply, path length 4097: -EPROTO "
	       "from its 16-byte head on");

	memcpy(big, rep_session, 16);
	put32(big + 12, TRACER_RELAY_REPLY_PATH);
	memset(big + 16, 'a', TRACER_RELAY_REPLY_PATH - 1);
	big[16 + TRACER_RELAY_REPLY_PATH - 1] = '\0';
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, big,
				16 + TRACER_RELAY_REPLY_PATH, &r);
	ok(n == 16 + TRACER_RELAY_REPLY_PATH &&
	   strlen(r.path) == TRACER_RELAY_REPLY_PATH - 1,
	   "CREATE_SESSION reply, path length 4096 (the limit): taken");

	memcpy(b, rep_session, sizeof(rep_session));
	b[sizeof(rep_session) - 1] = 'x';
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, b,
				sizeof(rep_session), &r);
	is_int(n, -EPROTO, "CREATE_SESSION reply, path without its NUL: "
	       "-EPROTO");

	memcpy(b, rep_session, sizeof(rep_session));
	b[16 + 2] = '\0';
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, b,
				sizeof(rep_session), &r);
	is_int(n, -EPROTO, "CREATE_SESSION reply, a NUL inside the path: "
	       "-EPROTO");

	/* relayd failed: ret LTTNG_ERR_FATAL, no session, no path. */
	memset(b, 0, 16);
	put32(b + 8, 25);
	memset(r.path, 'x', sizeof(r.path));
	n = tracer__relay_reply(TRACER_RELAY_CREATE_SESSION, b, 16, &r);
	ok(n == 16 && r.ret == 25 && r.path[0] == '\0',
	   "CREATE_SESSION reply, ret 25 and no path: 16 bytes, path \"\"");

	/* CLOSE_TRACE_CHUNK: {u32 ret, u32 length} + path if ret is OK. */
	memcpy(b, rep_close_chunk, 8);
	put32(b + 4, TRACER_RELAY_REPLY_PATH + 1);
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, b, 8, &r);
	is_int(n, -EPROTO, "CLOSE_TRACE_CHUNK reply, path length 4097: "
	       "-EPROTO");

	memcpy(b, rep_close_chunk, sizeof(rep_close_chunk));
	b[sizeof(rep_close_chunk) - 1] = 'x';
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, b,
				sizeof(rep_close_chunk), &r);
	is_int(n, -EPROTO, "CLOSE_TRACE_CHUNK reply, path without its NUL: "
	       "-EPROTO");

	memcpy(b, rep_close_chunk, sizeof(rep_close_chunk));
	b[8 + 5] = '\0';
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, b,
				sizeof(rep_close_chunk), &r);
	is_int(n, -EPROTO, "CLOSE_TRACE_CHUNK reply, a NUL inside the path: "
	       "-EPROTO");

	/* relayd sends the path only with LTTNG_OK (main.c:3169-3176),
	 * whatever path_length says. */
	memcpy(b, rep_close_chunk, sizeof(rep_close_chunk));
	put32(b, 11);
	memset(r.path, 'x', sizeof(r.path));
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, b,
				sizeof(rep_close_chunk), &r);
	ok(n == 8 && r.ret == 11 && r.path[0] == '\0',
	   "CLOSE_TRACE_CHUNK reply, ret 11 (path_length 21): only its 8 "
	   "bytes, path \"\"");
	n = tracer__relay_reply(TRACER_RELAY_CLOSE_TRACE_CHUNK, b, 8, &r);
	ok(n == 8 && r.ret == 11,
	   "CLOSE_TRACE_CHUNK reply, ret 11: complete with 8 bytes");

	n = tracer__relay_reply(TRACER_RELAY_SEND_METADATA, rep_ok,
				sizeof(rep_ok), &r);
	is_int(n, -EINVAL, "SEND_METADATA has no reply: -EINVAL");
	n = tracer__relay_reply((enum tracer_relay_cmd)4, rep_ok,
				sizeof(rep_ok), &r);
	is_int(n, -EINVAL, "a command we never send (4): -EINVAL");
}

/* ---- net:// addresses. ---- */

static void url_good(const char *url, const char *host, uint16_t ctrl,
		     uint16_t data)
{
	char h[64];
	uint16_t c = 0, d = 0;
	int ret;

	ret = tracer__relay_parse_url(url, h, sizeof(h), &c, &d);
	if (!ok(ret == 0 && !strcmp(h, host) && c == ctrl && d == data,
		"%s: host \"%s\", ports %u and %u", url, host, ctrl, data))
		diag("  returned %d, \"%s\" %u %u", ret, ret ? "" : h, c, d);
}

static void url_bad(const char *url, size_t room, const char *why)
{
	char h[64];
	uint16_t c, d;
	int ret;

	ret = tracer__relay_parse_url(url, h, room, &c, &d);
	is_int(ret, -EINVAL, "%s (%s): -EINVAL", url, why);
}

static void test_url(void)
{
	char h[8];
	uint16_t c = 0, d = 0;

	url_good("net://host", "host", 5342, 5343);
	url_good("net://host:1234", "host", 1234, 5343);
	url_good("net://host:1234:1235", "host", 1234, 1235);
	url_good("net://127.0.0.1:25342:25343", "127.0.0.1", 25342, 25343);
	url_good("net://[::1]:5000:5001", "::1", 5000, 5001);
	url_good("net://[::1]", "::1", 5342, 5343);
	url_good("net://h:65535:1", "h", 65535, 1);

	url_bad("tcp://host", 64, "not net://");
	url_bad("host:1234", 64, "no net://");
	url_bad("net://", 64, "empty host");
	url_bad("net://:1234", 64, "empty host");
	url_bad("net://[]:1234", 64, "empty host");
	url_bad("net://[::1:1234", 64, "no ']'");
	url_bad("net://h:0", 64, "port 0");
	url_bad("net://h:1:0", 64, "data port 0");
	url_bad("net://h:65536", 64, "port 65536");
	url_bad("net://h:12a", 64, "non-digit port");
	url_bad("net://h:-1", 64, "non-digit port");
	url_bad("net://h:", 64, "empty port");
	url_bad("net://h:1:", 64, "empty data port");
	url_bad("net://h:1:2:3", 64, "trailing garbage");
	url_bad("net://[::1]x", 64, "garbage after ']'");
	url_bad("net://h/x", 64, "path after the host");
	url_bad("net://h:1/x", 64, "path after the port");
	url_bad("net://abcdefgh", 8, "host of 8 chars, room for 7");
	ok(tracer__relay_parse_url("net://abcdefg", h, sizeof(h), &c,
				   &d) == 0 && !strcmp(h, "abcdefg"),
	   "net://abcdefg: a host of 7 chars fits in 8 bytes");
}

int main(void)
{
	plan(10 + 8 + N_ENCS + 18 + 10 + 2 + N_REPS + 12 + 26);
	test_exact();
	test_differences();
	test_room();
	test_einval();
	test_replies();
	test_data_pending();
	test_byte_by_byte();
	test_malformed();
	test_url();
	return done();
}
