/*
 * rb_write.h - the event write fast path: reserve, write, commit.
 *
 * Concurrency model
 * -----------------
 * One writer thread per channel, plus the signal handlers that interrupt it
 * on the same CPU and run to completion (LIFO). No lock, no system call
 * (the clock is the TSC, or read through the vDSO), no allocation, no
 * LOCK-prefixed instruction: the reservation is a local CAS on
 * write_count, the commit a local add on the slot's commit counter (see
 * arch.h).
 *
 *   reserve:  loop { old = write_count; ts = clock; new = old + len;
 *                    CAS(write_count, old, new) }
 *   write:    the caller stores its payload into ctx->payload
 *   commit:   commit[slot].records += 1; commit[slot].count += len
 *
 * A handler that interrupts between reserve and commit reserves *after* the
 * interrupted record (write_count already moved) and commits first; the
 * sub-buffer becomes readable only when its commit count covers every byte,
 * so the out-of-order commit never exposes a half-written record.
 *
 * The timestamp is read inside the CAS loop: if a handler reserved in
 * between, the CAS fails and the timestamp is read again, so physically
 * consecutive records never go back in time. The clock is the thread's
 * copy of tracerd's (clock.h); should it step back (tracerd restarted
 * with a new calibration, or the TSC given up for CLOCK_MONOTONIC),
 * w->last_ts holds the stamps at the channel's last one until the clock
 * passes it again:
 *
 *   do { ts = max(clock, last); } while (!CAS(last_ts, last, ts))
 *                                          both before the reservation
 *
 * last_ts only grows, and every stamp is the value last_ts had or took
 * when the stamp was made. A handler that interrupts after our stamp
 * reads a last_ts at least as late; one that stamps between our load of
 * last_ts and our CAS on it makes that CAS fail; one that reserves
 * before us makes the reservation's CAS fail, and we stamp again.
 *
 * Compact headers
 * ---------------
 * A record's header holds only the low 32 bits of its time when the time
 * is less than 2^32 ns (4.29 s) after its predecessor in the packet, the
 * time a reader rebuilds it from (rb_layout.h). The writer does not know
 * its predecessor's time (a handler may have reserved in between; a
 * record stamped and then dropped raised last_ts without one), so it
 * compares with a time no later than it: ref_ts, the time of a record
 * that was committed, stored by every commit. Such a record lies before
 * ours, so its time is at most the predecessor's:
 *
 *   ref_ts <= predecessor's time <= ts,  ts - ref_ts < 2^32  =>  compact
 *
 * and that holds for the predecessor tracerd's salvage leaves (it drops
 * records that were never committed, so the one before ours may go; a
 * committed one stays). A record that opens a sub-buffer is its packet's
 * timestamp_begin: compact whatever the gap. Otherwise, and for ids or
 * sizes too large for the compact fields, the header is extended (24
 * bytes).
 *
 * The fast path handles compact records that fit in the open sub-buffer.
 * Opening a sub-buffer (the first record after a boundary, or one that
 * does not fit) and extended headers go to tracer__rb_reserve_slow() in
 * rb_write.c.
 *
 * Straight through
 * ----------------
 * libtracer's events whose values are all 8 bytes (most of them) take
 * tracer__rb_write_words(): the same steps, in the same order, for the
 * common case only (a TSC clock, a compact record that leaves room in
 * the open sub-buffer), with no loop and no call: each place where the
 * general path would loop (the clock cell replaced, last_ts or
 * write_count moved by a handler) or branch off gives up and makes the
 * record through reserve and commit instead, so the model above holds
 * unchanged:
 *
 *   old = write_count            (before the clock, as above)
 *   ts  = rdtsc (unit TSC), or the TSC line of the cell (gives up:
 *         not TSC, cell replaced)
 *   ts  = max(ts, last_ts)
 *   gives up: off == 0, off + len >= S, ts - ref_ts >= 2^32
 *   CAS(last_ts, last, ts); CAS(write_count, old, old + len)
 *                                (gives up if either fails)
 *   header, values; records += 1; count += len; ref_ts = ts
 *
 * Without its loops the compiler keeps every value in a register: 35 ns
 * an event became 26 on the machine of the README's table.
 *
 * On x86-64, for a thread whose C library registered a restartable
 * sequence area (rseq.h, w->rseq_slot), the two CAS are plain stores in a
 * restartable sequence instead (TRACER__RB_RSEQ_RESERVE below): the kernel
 * sends a thread interrupted inside it to the general path, so a handler
 * never sees the reservation half done.
 */
#ifndef TRACER_RB_WRITE_H
#define TRACER_RB_WRITE_H

#include <errno.h>
#include <stdint.h>

#include "arch.h"
#include "clock.h"
#include "compiler.h"
#include "rb_layout.h"
#include "rb_record.h"
#include "rseq.h"

/* Slot of position pos. */
static inline struct tracer_rb_commit *
tracer__rb_slot(const struct tracer_rb_writer *w, uint64_t pos)
{
	uint64_t n_mask = (1ULL << w->count_order) - 1;

	return &w->commit[(pos >> w->subbuf_order) & n_mask];
}

/*
 * Write the header of the record reserved at [begin, end) and point ctx at
 * its payload; flags it when it ends exactly at a sub-buffer boundary.
 */
static inline void tracer__rb_event_init(const struct tracer_rb_writer *w,
					 struct tracer_rb_ctx *ctx,
					 uint64_t begin, uint64_t end,
					 int compact, uint32_t id, uint64_t ts)
{
	void *at = w->data + (begin & (w->bufsize - 1));

	ctx->payload = tracer__rb_header_put(at, compact, id,
					     (uint32_t)(end - begin), ts,
					     begin >> w->lap_shift);
	ctx->timestamp = ts;
	ctx->flags = (end & w->smask) == 0 ? TRACER_RB_CTX_CLOSE : 0;
}

/*
 * A reading of w's clock in w's unit: the TSC's count as it is (unit TSC:
 * the reader converts it, clock.h "Ticks"), or ns by its clock cell.
 */
static tracer_always_inline uint64_t
tracer__rb_clock(const struct tracer_rb_writer *w)
{
	if (tracer_likely(w->unit == TRACER_RB_UNIT_TSC))
		return tracer__rdtsc();
	return tracer__clock_cell_read(w->clock);
}

/*
 * The time for a record of w, read inside the reservation loop: its
 * clock, never earlier than the channel's previous stamp (see the top).
 * last_ts moves by a local CAS, so that it only grows: a handler that
 * stamped between our load and our store makes the CAS fail, and the
 * time is taken again from its stamp on.
 */
static tracer_always_inline uint64_t
tracer__rb_stamp(struct tracer_rb_writer *w)
{
	uint64_t last = TRACER_READ_ONCE(w->last_ts), ts;

	do {
		ts = tracer__rb_clock(w);
		if (tracer_unlikely(ts < last))
			ts = last;
	} while (tracer_unlikely(!tracer__local_cas64(&w->last_ts, &last,
						      ts)));
	return ts;
}

/*
 * Reserve a record of event `id` with payload_size bytes of payload.
 * On success ctx->payload points to the payload area and the record must
 * be committed with tracer__rb_commit(), by the same context, soon.
 * Returns 0, -EMSGSIZE (record larger than a sub-buffer can hold), or
 * -ENOBUFS (discarded and counted in `lost`: buffer full in discard mode,
 * or the whole buffer lapped by nested writers).
 */
static tracer_always_inline int
tracer__rb_reserve(struct tracer_rb_writer *w, struct tracer_rb_ctx *ctx,
		   uint32_t id, uint32_t payload_size)
{
	struct tracer_rb_header *hdr = w->hdr;
	uint64_t old, new, ts;
	uint32_t len;

	if (tracer_unlikely(payload_size > w->max_payload))
		return -EMSGSIZE;
	len = tracer__rb_record_size(TRACER_RB_COMPACT_SIZE, payload_size);
	if (tracer_unlikely(!tracer__rb_compact_fits(id, len)))
		return tracer__rb_reserve_slow(w, ctx, id, payload_size);
	old = TRACER_READ_ONCE(hdr->write_count);
	do {
		uint64_t off = old & w->smask;

		ts = tracer__rb_stamp(w);
		if (tracer_unlikely(off == 0 || off + len > w->smask + 1 ||
				    ((ts - TRACER_READ_ONCE(w->ref_ts)) >>
				     TRACER_RB_TIME_BITS)))
			return tracer__rb_reserve_slow(w, ctx, id,
						       payload_size);
		new = old + len;
	} while (tracer_unlikely(!tracer__local_cas64(&hdr->write_count,
						      &old, new)));
	/* Flight mode: the CAS store is visible before the record's stores. */
	tracer__wmb_local();
	tracer__rb_event_init(w, ctx, old, new, 1, id, ts);
	ctx->commit_pos = old;
	ctx->commit_len = len;
	return 0;
}

/*
 * Commit a reserved record: it becomes part of its sub-buffer's commit
 * count, and the sub-buffer is readable once every byte of it is committed.
 */
static tracer_always_inline void
tracer__rb_commit(struct tracer_rb_writer *w, const struct tracer_rb_ctx *ctx)
{
	struct tracer_rb_commit *c = tracer__rb_slot(w, ctx->commit_pos);

	if (tracer_unlikely(ctx->flags & TRACER_RB_CTX_CLOSE))
		tracer__rb_close_exact(w, ctx);
	/*
	 * `records` first: when `count` shows the lap complete, every record
	 * of the lap is in `records` (same CPU: program order suffices).
	 */
	tracer__local_inc64(&c->records);
	/* Record bytes (and end fields) before the count, for the reader. */
	tracer__wmb_local();
	tracer__local_add64(&c->count, ctx->commit_len);
	/* Committed: a time the next records may be compact against. Only
	 * this thread and its handlers write it; any committed record's time
	 * will do, so a handler's newer one overwritten by ours is fine. */
	TRACER_WRITE_ONCE(w->ref_ts, ctx->timestamp);
	if (tracer_unlikely(ctx->flags & TRACER_RB_CTX_CLOSE) && w->on_close)
		w->on_close(w);
}

#if TRACER_HAVE_RSEQ
/*
 * The reservation of tracer__rb_write_words() as a restartable sequence
 * (rseq.h), for a thread whose C library registered one: the steps of the
 * compare-and-swap reservation with plain loads and stores, the store of
 * write_count last, which commits it. ts, read from the TSC before, is
 * made no earlier than last_ts inside:
 *
 *   rseq_cs = &this sequence            (the kernel's to read)
 *   1: old = write_count
 *      ts = max(ts, last_ts)
 *      to `slow`: off == 0, off + len >= S, ts - ref_ts >= 2^32
 *      last_ts = ts
 *      write_count = old + len           (commits)
 *   2:
 *   to `aborted`: a signal or a preemption between 1 and 2
 *
 * A handler can no longer interrupt between the load of write_count and
 * the store that moves it: the kernel moves the thread to the abort
 * address before the handler runs, and the caller makes the record
 * through the general path, which reloads everything. One that comes
 * between the clock read and 1 has recorded and raised last_ts before
 * the sequence loads both: the record goes after its own, stamped no
 * earlier. An abort after last_ts was raised leaves it raised without a
 * record, as a failed CAS on write_count did. The store of rseq_cs is the
 * instruction right before 1: interrupted before it, the thread has not
 * begun; after it, it is inside.
 */
#define TRACER__RB_RSEQ_RESERVE(w, len, old, ts, slow, aborted) \
	__asm__ goto( \
		"leaq 3f(%%rip), %[old]\n\t" \
		"movq %[old], %%fs:(%[slot])\n" \
		"1:\n\t" \
		"movq %[wc], %[old]\n\t" \
		"cmpq %[last], %[ts]\n\t" \
		"cmovbq %[last], %[ts]\n\t" \
		"movq %[old], %[tmp]\n\t" \
		"andq %[smask], %[tmp]\n\t" \
		"subq $1, %[tmp]\n\t" \
		"cmpq %[lim], %[tmp]\n\t" \
		"jae %l[" #slow "]\n\t" \
		"movq %[ts], %[tmp]\n\t" \
		"subq %[ref], %[tmp]\n\t" \
		"shrq $32, %[tmp]\n\t" \
		"jnz %l[" #slow "]\n\t" \
		"movq %[ts], %[last]\n\t" \
		"movq %[old], %[tmp]\n\t" \
		"addq %[len], %[tmp]\n\t" \
		"movq %[tmp], %[wc]\n" \
		"2:\n\t" \
		/* The abort address, after the signature the kernel \
		 * checks. */ \
		".pushsection __tracer_rseq_abort, \"ax\"\n\t" \
		".long %c[sig]\n" \
		"4:\n\t" \
		"jmp %l[" #aborted "]\n\t" \
		".popsection\n\t" \
		/* struct rseq_cs: version, flags, start, length, \
		 * abort. */ \
		".pushsection __tracer_rseq_cs, \"aw\"\n\t" \
		".balign 32\n" \
		"3:\n\t" \
		".long 0, 0\n\t" \
		".quad 1b, 2b - 1b, 4b\n\t" \
		".popsection\n" \
		: [old] "=&r"(old), [ts] "+&r"(ts), [tmp] "=&r"(tracer__rb_tmp), \
		  [wc] "+m"((w)->hdr->write_count), [last] "+m"((w)->last_ts) \
		: [slot] "r"((w)->rseq_slot), [smask] "m"((w)->smask), \
		  [lim] "r"((w)->smask - (len)), [ref] "m"((w)->ref_ts), \
		  [len] "er"(len), [sig] "i"(RSEQ_SIG) \
		: "cc", "memory" \
		: slow, aborted)
#endif

/*
 * Write a record of event id whose payload is n 8-byte values, the first
 * 8 bytes of each of n objects `stride` bytes apart from src (n <= 8):
 * reserve, store and commit in one, for most records: a TSC clock, a
 * compact header, in the open sub-buffer, leaving room after it. It is
 * tracer__rb_stamp(), tracer__rb_reserve() and tracer__rb_commit() with
 * their loops and rare cases taken out, so that it runs straight through
 * with its values in registers: where one of them would loop (a handler
 * moved the cell, last_ts or write_count meanwhile) or go slow (a
 * sub-buffer to open or one the record fills, an id or a time too far
 * for a compact header, the CLOCK_MONOTONIC clock), it gives up, before
 * or after stamping, and tracer__rb_write_words_slow() makes the record
 * through them. Giving up after the CAS on last_ts leaves last_ts raised
 * without a record, which the model allows (see the top); giving up
 * before the CAS on write_count reserves nothing. A record that cannot be
 * written at all is counted in the channel's `lost`.
 */
static tracer_always_inline void
tracer__rb_write_words(struct tracer_rb_writer *w, uint32_t id,
		       const void *src, size_t stride, uint32_t n)
{
	/* The header but for lap and time; the rest is derived from it,
	 * so that few values stay live across the clock read. */
	uint64_t head = tracer__rb_compact_word(id, TRACER_RB_COMPACT_SIZE +
						8 * n, 0, 0);
	uint64_t old, last, ts, len, *p;
	struct tracer_rb_commit *c;
	uint32_t i;

	if (tracer_unlikely(id >= TRACER_RB_ID_EXTENDED)) {
		/* Not in head's id field: below, head says the id. */
		tracer__rb_write_words_slow(w, id, src, stride, n);
		return;
	}
	/* With n a constant (tracer_record_emitN()), so is len: no
	 * register holds it, and the copy below is n moves. */
	len = __builtin_constant_p(n) ? TRACER_RB_COMPACT_SIZE + 8 * n :
	      tracer__rb_compact_size(head);
#if TRACER_HAVE_RSEQ
	if (tracer_likely(w->unit == TRACER_RB_UNIT_TSC && w->rseq_slot)) {
		uint64_t tracer__rb_tmp;

		ts = tracer__rdtsc();	/* the reader converts it */
		TRACER__RB_RSEQ_RESERVE(w, len, old, ts, slow, aborted);
		goto reserved;
	}
#endif
	/* write_count before the clock: a handler that reserves after
	 * this load makes the CAS below fail, whatever it stamped. */
	old = TRACER_READ_ONCE(w->hdr->write_count);
	if (tracer_likely(w->unit == TRACER_RB_UNIT_TSC))
		ts = tracer__rdtsc();	/* the reader converts it */
	else if (tracer_unlikely(!tracer__clock_cell_try_tsc(w->clock, &ts)))
		goto slow;
	last = TRACER_READ_ONCE(w->last_ts);
	if (tracer_unlikely(ts < last))
		ts = last;
	/* off - 1 >= S - 1 - len: off is 0 (a sub-buffer to open), or
	 * off + len >= S (the record does not fit, or closes the
	 * sub-buffer). A time 2^32 ns after ref_ts or more needs an
	 * extended header (see the top). */
	if (tracer_unlikely(((old & w->smask) - 1 >= w->smask - len) |
			    (((ts - TRACER_READ_ONCE(w->ref_ts)) >>
			      TRACER_RB_TIME_BITS) != 0)))
		goto slow;
	if (tracer_unlikely(!tracer__local_cas64(&w->last_ts, &last, ts) ||
			    !tracer__local_cas64(&w->hdr->write_count, &old,
						 old + len)))
		goto slow;
#if TRACER_HAVE_RSEQ
reserved:
#endif
	/* Flight mode: the reservation's store is visible before the
	 * record's stores. */
	tracer__wmb_local();
	p = (uint64_t *)(void *)(w->data + (old & w->bufmask));
	p[0] = head | tracer__rb_compact_word(0, 0, ts, old >> w->lap_shift);
	for (i = 0; i < len / 8 - 1; i++)
		memcpy(&p[1 + i], (const char *)src + i * stride, 8);
	/* The commit, as tracer__rb_commit() makes it: records, then (after
	 * the record's bytes) count, then the new ref_ts. */
	c = &w->commit[(old >> w->subbuf_order) & w->slot_mask];
	tracer__local_inc64(&c->records);
	tracer__wmb_local();
	tracer__local_add64(&c->count, len);
	TRACER_WRITE_ONCE(w->ref_ts, ts);
	return;
#if TRACER_HAVE_RSEQ
aborted:
	tracer__local_inc64(&w->rseq_aborts);
#endif
slow:
	tracer__rb_write_words_slow(w, tracer__rb_compact_id(head), src,
				    stride,
				    tracer__rb_compact_size(head) / 8 - 1);
}

#endif /* TRACER_RB_WRITE_H */
