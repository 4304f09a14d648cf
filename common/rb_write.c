/*
 * rb_write.c - the slow half of the write path: opening and closing
 * sub-buffers, and the flush (switch).
 *
 * Same model as rb_write.h: only the writer thread and its signal handlers
 * run this code for a given channel, so single-instruction local operations
 * are enough.
 *
 * Who writes the sub-buffer header
 * --------------------------------
 *   begin fields (magic, ids, timestamp_begin, packet_size, packet_seq_num,
 *   slot_records, tid): the record whose reservation opens the sub-buffer.
 *
 *   end fields (timestamp_end, content_size, events_discarded): the one
 *   context whose CAS moves write_count out of the sub-buffer (a record
 *   that does not fit, or a flush), or the record that fills it exactly,
 *   always before the commit that completes the sub-buffer.
 *
 * The two sets never overlap, and neither writer touches the other's
 * fields: a handler may close a sub-buffer whose opener was interrupted
 * before it wrote the begin fields.
 */
#include <errno.h>
#include <string.h>

#include "rb.h"

static struct tracer_rb_packet *packet_at(const struct tracer_rb_writer *w,
					  uint64_t pos)
{
	return (struct tracer_rb_packet *)(void *)(w->data +
		(pos & (w->bufsize - 1) & ~w->smask));
}

/*
 * May the sub-buffer starting at pos be opened? It may when the previous lap
 * of its slot is fully committed (no interrupted record below us still owns
 * bytes there) and, in discard mode, when the reader has released it.
 * *records gets the slot's record count, exact when the answer is yes.
 */
static bool slot_free(const struct tracer_rb_writer *w, uint64_t pos,
		      uint64_t *records)
{
	struct tracer_rb_commit *c = tracer__rb_slot(w, pos);
	uint64_t count = TRACER_READ_ONCE(c->count);

	tracer__barrier();	/* count before records: see tracer__rb_commit */
	*records = TRACER_READ_ONCE(c->records);
	if (((count - tracer__rb_lap_base(pos, w->subbuf_order,
					  w->count_order)) & w->cmask) != 0)
		return false;
	if (w->mode == TRACER_RB_DISCARD) {
		/* Pairs with the reader's release store after its copy. */
		uint64_t rc = tracer__load_acquire(&w->hdr->read_count);

		if (pos - rc >= w->bufsize)
			return false;
	}
	return true;
}

/* Write the end fields of the sub-buffer at start: content bytes used. */
static void close_fields(const struct tracer_rb_writer *w, uint64_t start,
			 uint64_t content, uint64_t ts)
{
	struct tracer_rb_packet *pkt = packet_at(w, start);

	pkt->timestamp_end = ts;
	pkt->content_size = content * 8;
	pkt->events_discarded = TRACER_READ_ONCE(w->hdr->lost);
}

/* Close the sub-buffer that `old` points into and commit its padding. */
static void close_subbuf(struct tracer_rb_writer *w, uint64_t old, uint64_t ts)
{
	uint64_t off = old & w->smask;

	close_fields(w, old & ~w->smask, off, ts);
	tracer__wmb_local();	/* end fields before the completing commit */
	tracer__local_add64(&tracer__rb_slot(w, old)->count,
			    w->smask + 1 - off);
}

static void open_subbuf(const struct tracer_rb_writer *w, uint64_t pos,
			uint64_t ts, uint64_t records)
{
	struct tracer_rb_packet *pkt = packet_at(w, pos);

	pkt->magic = TRACER_CTF_MAGIC;
	pkt->stream_id = w->stream_id;
	pkt->stream_instance_id = w->stream_instance_id;
	pkt->timestamp_begin = ts;
	pkt->packet_size = (w->smask + 1) * 8;
	pkt->packet_seq_num = pos >> w->subbuf_order;
	pkt->slot_records = records;
	pkt->tid = w->tid;
	pkt->unit = w->unit;
}

/* Sizes of a record with each header; may it be compact at all? */
struct lens {
	uint32_t compact, extended;
	bool may_compact;
};

static void lens_of(struct lens *l, uint32_t id, uint32_t payload_size)
{
	l->compact = tracer__rb_record_size(TRACER_RB_COMPACT_SIZE,
					    payload_size);
	l->extended = tracer__rb_record_size(TRACER_RB_EXTENDED_SIZE,
					     payload_size);
	l->may_compact = tracer__rb_compact_fits(id, l->compact);
}

/*
 * Is a record at time ts that does not open a sub-buffer compact? Its
 * time is within reach of ref_ts (rb_write.h); a record made earlier
 * (at) must also be no earlier than any record before it (last, the
 * channel's last stamp before it), or a reader would take its time for
 * one 2^32 ns later.
 */
static bool compact_after(const struct tracer_rb_writer *w,
			  const struct lens *l, uint64_t ts,
			  const uint64_t *at, uint64_t last)
{
	if (!l->may_compact ||
	    ((ts - TRACER_READ_ONCE(w->ref_ts)) >> TRACER_RB_TIME_BITS))
		return false;
	return !at || ts >= last;
}

/* The time of a record: *at for one made earlier, else the clock's. */
static uint64_t stamp_at(struct tracer_rb_writer *w, const uint64_t *at)
{
	return at ? *at : tracer__rb_stamp(w);
}

/*
 * The record at *old opens the sub-buffer at `open`: is its slot free
 * (*records: the slot's record count)? Returns 0 (yes), -EAGAIN (a
 * handler moved write_count meanwhile: *old is where it is now, look
 * again) or -ENOBUFS (full: the record is dropped and counted).
 */
static int may_open(struct tracer_rb_writer *w, uint64_t *old, uint64_t open,
		    uint64_t *records)
{
	uint64_t now;

	if (slot_free(w, open, records))
		return 0;
	/* A handler that interrupted us may have opened that very
	 * sub-buffer since we read *old: not full, just taken. Look again
	 * before dropping. */
	now = TRACER_READ_ONCE(w->hdr->write_count);
	if (now != *old) {
		*old = now;
		return -EAGAIN;
	}
	tracer__local_inc64(&w->hdr->lost);
	return -ENOBUFS;
}

/*
 * Reserve a record of event id with payload_size bytes of payload,
 * opening a new sub-buffer when the record is first after a boundary or
 * does not fit in the open one, at the time *at (NULL: the clock's), its
 * header compact or extended (rb_write.h). Same contract as
 * tracer__rb_reserve().
 */
static int reserve_slow(struct tracer_rb_writer *w, struct tracer_rb_ctx *ctx,
			uint32_t id, uint32_t payload_size, const uint64_t *at)
{
	struct tracer_rb_header *hdr = w->hdr;
	uint64_t old, new, ts = 0, open = 0, records = 0, begin, S = w->smask + 1;
	uint64_t last = TRACER_READ_ONCE(w->last_ts);
	uint32_t len = 0;
	struct lens l;
	bool opening, compact = false;
	int ret;

	lens_of(&l, id, payload_size);
	old = TRACER_READ_ONCE(hdr->write_count);
	for (;;) {
		uint64_t off = old & w->smask;

		/*
		 * Opening a sub-buffer whatever the header (the compact one
		 * does not fit): the slot is checked first, so that a dropped
		 * record does not pay for the clock. Otherwise the time says
		 * which header, and so whether the record fits. Either way
		 * the time is taken before the CAS: a handler that reserves
		 * in between makes it fail, and the time is read again.
		 */
		opening = off == 0 || off + l.compact > S;
		if (!opening) {
			ts = stamp_at(w, at);
			compact = compact_after(w, &l, ts, at, last);
			len = compact ? l.compact : l.extended;
			opening = off + len > S;
		}
		if (!opening) {	/* in the open one (a handler may have
				 * opened it since the fast path looked) */
			begin = old;
		} else {
			open = off ? (old | w->smask) + 1 : old;
			ret = may_open(w, &old, open, &records);
			if (ret == -EAGAIN)
				continue;
			if (ret)
				return ret;
			/* The packet's first record: its begin. */
			ts = stamp_at(w, at);
			compact = l.may_compact;
			len = compact ? l.compact : l.extended;
			begin = open + TRACER_RB_PACKET_SIZE;
		}
		new = begin + len;
		if (tracer__local_cas64(&hdr->write_count, &old, new))
			break;
	}
	tracer__wmb_local();	/* flight mode: CAS before the slot stores */
	/* A record made earlier: what follows is stamped no earlier. */
	if (at) {
		while (ts > last &&
		       !tracer__local_cas64(&w->last_ts, &last, ts))
			;
	}
	if (opening && (old & w->smask)) {
		close_subbuf(w, old, ts);
		if (w->on_close)
			w->on_close(w);
	}
	if (opening)
		open_subbuf(w, open, ts, records);
	tracer__rb_event_init(w, ctx, begin, new, compact, id, ts);
	ctx->commit_pos = opening ? open : begin;
	ctx->commit_len = opening ? len + TRACER_RB_PACKET_SIZE : len;
	return 0;
}

int tracer__rb_reserve_slow(struct tracer_rb_writer *w,
			    struct tracer_rb_ctx *ctx, uint32_t id,
			    uint32_t payload_size)
{
	return reserve_slow(w, ctx, id, payload_size, NULL);
}

int tracer__rb_reserve_at(struct tracer_rb_writer *w,
			  struct tracer_rb_ctx *ctx, uint32_t id,
			  uint32_t payload_size, uint64_t ts)
{
	if (payload_size > w->max_payload)
		return -EMSGSIZE;
	return reserve_slow(w, ctx, id, payload_size, &ts);
}

void tracer__rb_write_words_slow(struct tracer_rb_writer *w, uint32_t id,
				 const void *src, size_t stride, uint32_t n)
{
	struct tracer_rb_ctx ctx;
	char *p;
	uint32_t i;

	if (tracer__rb_reserve(w, &ctx, id, 8 * n)) {
		/* -ENOBUFS was counted by the channel; count -EMSGSIZE too. */
		if (8 * n > w->max_payload)
			tracer__local_inc64(&w->hdr->lost);
		return;
	}
	p = ctx.payload;
	for (i = 0; i < n; i++)
		memcpy(p + 8 * i, (const char *)src + i * stride, 8);
	tracer__rb_commit(w, &ctx);
}

/* The record in ctx ends exactly at a boundary: it closes its sub-buffer. */
void tracer__rb_close_exact(struct tracer_rb_writer *w,
			    const struct tracer_rb_ctx *ctx)
{
	close_fields(w, ctx->commit_pos & ~w->smask, w->smask + 1,
		     ctx->timestamp);
}

uint64_t tracer__rb_backlog(const struct tracer_rb_writer *w)
{
	/* Both loads relaxed: a stale read count only overstates it. */
	uint64_t wc = TRACER_READ_ONCE(w->hdr->write_count);
	uint64_t rc = TRACER_READ_ONCE(w->hdr->read_count);

	return wc - rc > w->bufsize ? w->bufsize : wc - rc;
}

int tracer__rb_flush(struct tracer_rb_writer *w)
{
	struct tracer_rb_header *hdr = w->hdr;
	uint64_t old, ts;

	old = TRACER_READ_ONCE(hdr->write_count);
	do {
		if ((old & w->smask) == 0)
			return 0;	/* nothing open */
		ts = tracer__rb_stamp(w);
	} while (!tracer__local_cas64(&hdr->write_count, &old,
				      (old | w->smask) + 1));
	close_subbuf(w, old, ts);
	if (w->on_close)
		w->on_close(w);
	return 0;
}

void tracer__rb_set_unit(struct tracer_rb_writer *w, uint32_t unit)
{
	if (w->unit == unit)
		return;
	tracer__rb_flush(w);	/* stamped in the old unit */
	w->unit = unit;
	w->last_ts = 0;
	w->ref_ts = 0;
}
