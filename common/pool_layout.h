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
 * Written by tracerd only, read by every thread of the process with plain
 * loads, never a system call. Two levels:
 *
 *   epoch    the one word the event path loads. 0: not recording. Any
 *            other value names the current state; tracerd gives it a new
 *            value at every change (start, switch, snapshot, mode), so a
 *            thread that compares it with the epoch it last acted on knows
 *            at once whether anything changed.
 *   seq      sequence lock over the rest (session, mode, switch_seq...):
 *            a thread whose epoch differs copies them all, and keeps the
 *            copy only if seq was even and unchanged around it.
 *
 *   tracerd (one writer)                 thread (slow path, any number)
 *   seq = seq + 1          (odd)         do {
 *   release fence                          s = seq (acquire)
 *   session, mode, ... , epoch             if s odd: retry (bounded)
 *   release fence                          copy session, mode, ..., epoch
 *   seq = seq + 1          (even)          acquire fence
 *                                        } while (seq != s)
 *
 * The bounded retry matters: tracerd may be stopped (SIGSTOP) between its
 * two increments, and a traced thread must never wait for it; it then
 * carries on with the state it had.
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
 *   | (tracerd)  | (process)     |                  | 128 B each  | buffer 1 |
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
 *   owner_tid, thread_name  set by the thread that takes the buffer
 *              (thread_name again at its first event of each session).
 *   records_base, lost_base  the channels' record and loss counts at that
 *              moment (set by the taker too), so tracerd can report what
 *              the owner wrote and lost.
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
 *                   A default-channel writer looks only once its ring holds
 *                   TRACER_WAKE_SHIFT's share unread; below, tracerd's scan
 *                   timer reads it.
 *   want_grow       a thread that saw few buffers with room left stores
 *                   the number of buffers it saw (1 from older libraries):
 *                   tracerd grows a pool of that size at once, the
 *                   shortage being gone by then under short bursts.
 *   untraced_errno  the process lost its connection and cannot make a new
 *                   one (a seccomp filter, say): why, an errno value;
 *                   tracerd ends the process's trace with it.
 *   stashed         stash slots in use (threads without a buffer, or
 *                   their events after they ended: libtracer/stash.c);
 *                   atomic add and subtract on the stash's slow path, read
 *                   by status as a hint (bounded by TRACER_STASH_SLOTS).
 */
#ifndef TRACER_POOL_LAYOUT_H
#define TRACER_POOL_LAYOUT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"

#define TRACER_CONTROL_MAGIC	0x54524331u	/* "TRC1" */
#define TRACER_POOL_MAGIC	0x54525031u	/* "TRP1" */
#define TRACER_POOL_VERSION	2u
#define TRACER_CONTROL_SIZE	4096u

#define TRACER_POOL_CHANNELS	2
#define TRACER_CHANNEL_DEFAULT	0
#define TRACER_CHANNEL_VITAL	1

#define TRACER_POOL_MAX_SEGMENTS 32

/* A default-channel writer wakes tracerd once 1/2^this of its ring is
 * unread (wake_armed below); the vital channel at every close. */
#define TRACER_WAKE_SHIFT	6

enum tracer_buf_state {
	TRACER_BUF_FREE = 1,
	TRACER_BUF_IN_USE = 2,
	TRACER_BUF_EMERGENCY = 3,
};

#define TRACER_BUF_STATE(s)	((uint32_t)((s) & 0xff))
#define TRACER_BUF_GEN(s)	((s) >> 8)
#define TRACER_BUF_WORD(gen, st) (((gen) << 8) | (uint64_t)(st))

enum tracer_control_mode {
	TRACER_MODE_DISCARD = 0,	/* a full buffer drops new events */
	TRACER_MODE_FLIGHT = 1,		/* overwrite the oldest sub-buffer */
};

struct tracer_control {
	/* line 0: identity, written once before the fd is passed */
	uint32_t magic;			/* TRACER_CONTROL_MAGIC, stored last */
	uint32_t version;		/* TRACER_POOL_VERSION */
	uint32_t size;			/* sizeof(struct tracer_control) */
	uint32_t tracerd_pid;		/* sender of the update signal */

	/* line 1: the state, under seq */
	uint64_t epoch __attribute__((aligned(64)));	/* 0: not recording */
	uint32_t seq;			/* odd while tracerd writes */
	uint32_t mode;			/* enum tracer_control_mode */
	uint64_t session;		/* session id, 0: none */
	uint64_t switch_seq;		/* bumped: threads close sub-buffers */
	uint64_t filter_generation;	/* last filter tracerd sent */

	/*
	 * line 2, on the state page only (SOCKET.state; 0 on a process's
	 * page): how a process starting now makes the first segment of its
	 * own pool (pool_make.h), under seq like line 1. Only meaningful
	 * when `size` covers it and `start_flags` has TRACER_START_POOL.
	 */
	uint64_t start_subbuf_size[2] __attribute__((aligned(64)));
	uint32_t start_subbuf_count[2];
	uint32_t start_flags;		/* TRACER_START_* */

	/*
	 * line 3: the trace clock (clock.h), under seq. A new epoch tells
	 * the threads of a new anchor; on the state page it changes under
	 * seq alone. Only meaningful when `size` covers it.
	 */
	struct tracer_clock clock __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/* start_flags of the state page. */
#define TRACER_START_POOL	1u	/* a starting process may make its
					   first segment (the geometry above) */
#define TRACER_START_DEFAULT_EVENTS 2u	/* the session records the default
					   events (TRACER_DEFAULT_EVENTS) */


/*
 * What a thread copies from the control page (tracer__control_read()).
 */
struct tracer_control_state {
	uint64_t epoch;
	uint64_t session;
	uint64_t switch_seq;
	uint32_t mode;
	struct tracer_clock clock;	/* MONOTONIC on an older page */
};

/* What a starting process copies from the state page (line 2 too). */
struct tracer_control_start {
	struct tracer_control_state state;
	uint32_t flags;			/* TRACER_START_* */
	uint64_t subbuf_size[2];
	uint32_t subbuf_count[2];
};

/* Signals sent by tracerd carry this value (sigqueue's si_value). */
#define TRACER_SIGNAL_COOKIE	0x54524347	/* "TRCG" */

/*
 * One consistent copy of ctl into dst by copy(), under the page's sequence
 * lock, at most `tries` attempts. Returns 0, or -EAGAIN (tracerd is in the
 * middle of an update).
 */
static inline int tracer__control_copy(const struct tracer_control *ctl,
				       void (*copy)(const struct tracer_control *,
						    void *),
				       void *dst, int tries)
{
	while (tries-- > 0) {
		/* Pairs with tracerd's release fence after the odd store. */
		uint32_t s = __atomic_load_n(&ctl->seq, __ATOMIC_ACQUIRE);

		if (s & 1)
			continue;
		copy(ctl, dst);
		/* The copies before the second look at seq. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&ctl->seq, __ATOMIC_RELAXED) == s)
			return 0;
	}
	return -EAGAIN;
}

/* The clock line, field by field (the page changes under us). */
static inline void tracer__control_copy_clock(const struct tracer_control *ctl,
					      struct tracer_clock *c)
{
	c->kind = TRACER_CLOCK_MONOTONIC;
	c->flags = 0;
	if (__atomic_load_n(&ctl->size, __ATOMIC_RELAXED) <
	    sizeof(struct tracer_control))
		return;
	c->kind = __atomic_load_n(&ctl->clock.kind, __ATOMIC_RELAXED);
	c->tsc_base = __atomic_load_n(&ctl->clock.tsc_base, __ATOMIC_RELAXED);
	c->ns_base = __atomic_load_n(&ctl->clock.ns_base, __ATOMIC_RELAXED);
	c->mult = __atomic_load_n(&ctl->clock.mult, __ATOMIC_RELAXED);
	c->tsc_hz = __atomic_load_n(&ctl->clock.tsc_hz, __ATOMIC_RELAXED);
	c->flags = __atomic_load_n(&ctl->clock.flags, __ATOMIC_RELAXED);
	if (c->kind != TRACER_CLOCK_TSC || !TRACER_CLOCK_HAVE_TSC ||
	    c->mult == 0)
		c->kind = TRACER_CLOCK_MONOTONIC;
}

static inline void tracer__control_copy_state(const struct tracer_control *ctl,
					      void *dst)
{
	struct tracer_control_state *st = dst;

	st->epoch = __atomic_load_n(&ctl->epoch, __ATOMIC_RELAXED);
	st->session = __atomic_load_n(&ctl->session, __ATOMIC_RELAXED);
	st->switch_seq = __atomic_load_n(&ctl->switch_seq, __ATOMIC_RELAXED);
	st->mode = __atomic_load_n(&ctl->mode, __ATOMIC_RELAXED);
	tracer__control_copy_clock(ctl, &st->clock);
}

/*
 * Copy the state under the sequence lock, at most `tries` attempts.
 * Returns 0, or -EAGAIN (tracerd is in the middle of an update).
 */
static inline int tracer__control_read(const struct tracer_control *ctl,
				       struct tracer_control_state *st,
				       int tries)
{
	return tracer__control_copy(ctl, tracer__control_copy_state, st,
				    tries);
}

static inline void tracer__control_copy_start(const struct tracer_control *ctl,
					      void *dst)
{
	struct tracer_control_start *st = dst;
	int c;

	tracer__control_copy_state(ctl, &st->state);
	st->flags = __atomic_load_n(&ctl->start_flags, __ATOMIC_RELAXED);
	for (c = 0; c < 2; c++) {
		st->subbuf_size[c] = __atomic_load_n(
			&ctl->start_subbuf_size[c], __ATOMIC_RELAXED);
		st->subbuf_count[c] = __atomic_load_n(
			&ctl->start_subbuf_count[c], __ATOMIC_RELAXED);
	}
}

/*
 * Copy the state page's state and start line under its sequence lock, at
 * most `tries` attempts. Returns 0, -EAGAIN (tracerd is in the middle of
 * an update) or -ENOENT (a page without line 2: an older tracerd).
 */
static inline int tracer__control_read_start(const struct tracer_control *ctl,
					     struct tracer_control_start *st,
					     int tries)
{
	if (ctl->size < offsetof(struct tracer_control, clock))
		return -ENOENT;
	return tracer__control_copy(ctl, tracer__control_copy_start, st,
				    tries);
}

/* Threads a process's stash holds at once (libtracer/stash.c). */
#define TRACER_STASH_SLOTS	256

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
	uint32_t untraced_errno;	/* the process gave up tracerd: why */
	uint32_t stashed;		/* threads whose events wait in its
					   stash, with no buffer (a hint for
					   status: libtracer/stash.c) */
} __attribute__((aligned(64)));

struct tracer_pool_desc {
	uint64_t state;			/* TRACER_BUF_WORD(generation, state) */
	uint64_t lru_stamp;
	uint32_t owner_tid;
	uint32_t reserved0;
	char thread_name[16];		/* not always NUL-terminated */
	/* Channel counters when the owner took the buffer (status). */
	uint64_t records_base[TRACER_POOL_CHANNELS];
	uint64_t lost_base[TRACER_POOL_CHANNELS];
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

_Static_assert(sizeof(struct tracer_control) == 256, "control layout");
_Static_assert(sizeof(struct tracer_control) <= TRACER_CONTROL_SIZE,
	       "control page");
_Static_assert(sizeof(struct tracer_pool_header) == 192, "pool header");
_Static_assert(sizeof(struct tracer_pool_desc) == 128, "descriptor");

#endif /* TRACER_POOL_LAYOUT_H */
