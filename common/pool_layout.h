/*
 * pool_layout.h - shared memory between tracerd and one traced process:
 * the control page and the buffer pool.
 *
 * tracerd creates every region (memfd, sealed so it can never shrink) and
 * passes it to the process with SCM_RIGHTS. Nothing in them is a pointer;
 * structures start with magic, version and size, and fields are only added
 * at the end. tracerd checks every value it reads back: the process may
 * have written anything there.
 *
 * Control page (one page, read-only in the process)
 * ------------
 * Written by tracerd only. `session` is the id of the session being
 * recorded, 0 when none: the write path loads it on every event (one plain
 * load) and compares it with the session its thread last prepared for.
 *
 * Pool segments
 * -------------
 * The pool is a list of segments; segment 0 comes with the registration
 * reply, each later one (growth, doubling the buffer count) with a Segment
 * message. A segment is:
 *
 *   0            128             192                desc_offset   buffer_offset
 *   +------------+---------------+---------...------+-------------+----------+
 *   | identity   | pool line     |                  | desc[0..n)  | buffer 0 |
 *   | (tracerd)  | (process)     |                  | 64 B each   | buffer 1 |
 *   +------------+---------------+---------...------+-------------+----------+
 *
 *   buffer = channel 0 (default, high rate) + channel 1 (vital), each a
 *            ring-buffer region (rb_layout.h), at channel_offset[c].
 *
 * Buffer descriptors: who writes what
 * -----------------------------------
 *   state      (generation << 8) | TRACER_BUF_*. Changed only by CAS
 *              (bus-locked, off the event path: a thread's first event and
 *              its exit) so that two threads of the process, or tracerd,
 *              never both take a buffer:
 *
 *      tracerd creates          thread's first event        thread exit
 *   ------------------> FREE --------------------> IN_USE -----------> FREE
 *                        |  ^  (generation + 1)
 *                        v  |  tracerd: keeps one spare when it grows
 *                     EMERGENCY -- taken only when no FREE buffer is left
 *
 *   lru_stamp  pool line's release_clock when the buffer was last
 *              released; a thread takes the FREE buffer with the smallest
 *              stamp (least recently used), so the data of the threads that
 *              exited last survives longest.
 *   owner_tid, thread_name  set by the thread that takes the buffer.
 *
 * A buffer's ring counters are never reset: the next owner writes after
 * the previous one, and each packet names its owner through
 * stream_instance_id = (buffer index << 32) | (generation & 0xffffffff), so
 * tracerd can hand a buffer back immediately and still file every packet
 * under the right thread.
 *
 * Pool line (segment 0 only; written by the process, checked by tracerd)
 * ---------
 *   release_clock   LRU stamps; atomic fetch-add at each release.
 *   lost_no_buffer  events dropped because no buffer was left (memory cap);
 *                   atomic add by the thread that dropped them.
 *   wake_armed      tracerd stores 1 before it sleeps; a writer closing a
 *                   sub-buffer exchanges it with 0 and, if it was 1, writes
 *                   the eventfd: at most one system call per tracerd nap.
 *   want_grow       a thread that saw few FREE buffers left stores 1.
 */
#ifndef TRACER_POOL_LAYOUT_H
#define TRACER_POOL_LAYOUT_H

#include <stdint.h>

#define TRACER_CONTROL_MAGIC	0x54524331u	/* "TRC1" */
#define TRACER_POOL_MAGIC	0x54525031u	/* "TRP1" */
#define TRACER_POOL_VERSION	1u
#define TRACER_CONTROL_SIZE	4096u

#define TRACER_POOL_CHANNELS	2
#define TRACER_CHANNEL_DEFAULT	0
#define TRACER_CHANNEL_VITAL	1

#define TRACER_POOL_MAX_SEGMENTS 32

enum tracer_buf_state {
	TRACER_BUF_FREE = 1,
	TRACER_BUF_IN_USE = 2,
	TRACER_BUF_EMERGENCY = 3,
};

#define TRACER_BUF_STATE(s)	((uint32_t)((s) & 0xff))
#define TRACER_BUF_GEN(s)	((s) >> 8)
#define TRACER_BUF_WORD(gen, st) (((gen) << 8) | (uint64_t)(st))

struct tracer_control {
	uint32_t magic;			/* TRACER_CONTROL_MAGIC, stored last */
	uint32_t version;		/* TRACER_POOL_VERSION */
	uint32_t size;			/* sizeof(struct tracer_control) */
	uint32_t reserved0;
	uint64_t session __attribute__((aligned(64)));	/* 0: not recording */
} __attribute__((aligned(64)));

struct tracer_pool_header {
	/* lines 0-1: identity, written by tracerd before the fd is passed */
	uint32_t magic;			/* TRACER_POOL_MAGIC */
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct tracer_pool_header) */
	uint32_t desc_size;		/* sizeof(struct tracer_pool_desc) */
	uint32_t segment_index;
	uint32_t buffer_count;		/* buffers in this segment */
	uint32_t first_buffer;		/* pool-wide index of its buffer 0 */
	uint32_t reserved0;
	uint64_t segment_size;
	uint64_t desc_offset;
	uint64_t buffer_offset;
	uint64_t buffer_size;		/* both channels, page multiple */
	uint32_t channel_offset[TRACER_POOL_CHANNELS];	/* in a buffer */

	/* line 2: the pool line, written by the process (segment 0 only) */
	uint64_t release_clock __attribute__((aligned(64)));
	uint64_t lost_no_buffer;
	uint32_t wake_armed;
	uint32_t want_grow;
} __attribute__((aligned(64)));

struct tracer_pool_desc {
	uint64_t state;			/* TRACER_BUF_WORD(generation, state) */
	uint64_t lru_stamp;
	uint32_t owner_tid;
	uint32_t reserved0;
	char thread_name[16];		/* not always NUL-terminated */
} __attribute__((aligned(64)));

/* Bytes of channel c of a buffer: up to the next channel, or the end. */
static inline uint64_t tracer__pool_channel_size(
	const uint32_t channel_offset[TRACER_POOL_CHANNELS],
	uint64_t buffer_size, int c)
{
	uint64_t end = c + 1 < TRACER_POOL_CHANNELS ? channel_offset[c + 1]
						    : buffer_size;

	return end - channel_offset[c];
}

_Static_assert(sizeof(struct tracer_control) == 128, "control layout");
_Static_assert(sizeof(struct tracer_pool_header) == 192, "pool header");
_Static_assert(sizeof(struct tracer_pool_desc) == 64, "descriptor");

#endif /* TRACER_POOL_LAYOUT_H */
