/*
 * rb_read.c - the reader side of a channel: take a complete sub-buffer,
 * let the caller copy it, release it, and check the copy.
 *
 * Model
 * -----
 * The reader runs in another thread or another process (tracerd). It
 * writes only read_count (published with a release store after the caller
 * has copied the sub-buffer, so in discard mode the writer, which reads it
 * with an acquire load before reusing a slot, never overwrites bytes still
 * being copied). It keeps its own private read position and never reads
 * its published copy back.
 *
 * Discard mode: the writer never enters a slot the reader has not released,
 * so a sub-buffer taken with get stays intact until put.
 *
 * Flight-recorder mode: the writer ignores the reader and overwrites the
 * oldest sub-buffer. The reader is "pushed": when write_count is more than
 * a buffer ahead, the sub-buffers in between were overwritten; it skips to
 * the oldest intact one and counts what it skipped. A sub-buffer copied
 * while the writer came round again is detected afterwards, seqlock style:
 *
 *   writer:  CAS write_count (p + B -> beyond) ; wmb ; store slot bytes
 *   reader:  load slot bytes (copy) ; rmb ; load write_count
 *
 * If the copy saw any byte of the new lap, the reload of write_count sees a
 * value beyond p + B, and put returns -ESTALE.
 *
 * Accounting: every packet header carries slot_records, the number of
 * records committed in its slot before it was opened. The reader remembers,
 * per slot, how many records it has accounted for (read or lost); the
 * difference is exactly the number of records overwritten before it could
 * read them, so recorded + overwritten + discarded == produced. A reader that
 * takes over a channel another one read (tracerd adopting the pool of a
 * process whose tracerd died) starts from what that one accounted for
 * (slot_baseline()), so the laps it read are not taken for overwritten.
 *
 * Staging: tracer__rb_ready() acquires the commit counts of the complete
 * sub-buffers at the read position; the caller copies them out in one go
 * (tracerd: pread() of the memfd) and tracer__rb_stage()s the copy. Each
 * read then takes its sub-buffer from the copy instead of the ring and is
 * otherwise unchanged: get acquires the commit count again, put publishes
 * after the copy, and in flight mode the write_count reloaded in put,
 * after the staged copy was made, finds a lap that overwrote it:
 *
 *   ready:   acquire commit[i..j]      the records of i..j are complete
 *   caller:  copy i..j                 (one pread)
 *   read i:  get ; memcpy from copy ; rmb ; load write_count ; publish
 *
 * tracer__rb_read_ref() skips the memcpy: the staged copy is already the
 * caller's own, so the packet is checked (and may be renumbered) there.
 *
 * Nothing read from the region is trusted: counters are range-checked,
 * packets are parsed from the caller's private copy.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "rb_internal.h"

#define report tracer__rb_report

int tracer__rb_report(struct tracer_rb_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * A reader before us took part of the open sub-buffer: carry on after it.
 * Only values that make sense are kept (the writer may have scribbled).
 */
static void restore_partial(struct tracer_rb_reader *r,
			    const struct tracer_rb_header *hdr)
{
	uint64_t len = TRACER_READ_ONCE(hdr->partial_len);

	if (TRACER_READ_ONCE(hdr->partial_pos) != r->read_count || len == 0 ||
	    len % TRACER_RB_ALIGN || len < TRACER_RB_PACKET_SIZE ||
	    len > r->geo.subbuf_size)
		return;
	r->partial_pos = r->read_count;
	r->partial_len = len;
	r->partial_records = TRACER_READ_ONCE(hdr->partial_records);
}

/*
 * The records slot i held before the sub-buffer the reader reads next
 * there: the first at or after read_count in slot i (at pos), plus
 * what was read of that one already (part). Opened by the writer (write
 * count w past its start): the slot_records
 * of its header, or of a newer lap's header if the writer lapped the
 * reader (the laps in between cannot be told apart: they count as read).
 * Not opened yet: every record the slot holds. Being opened (the writer
 * is past pos, the header is an older lap's): every record the slot holds
 * too, and *opening is set, because that may count records of the new lap:
 * a signal handler that interrupted the opener between its reservation and
 * its header write records into the lap (the opener's own record comes
 * after the header). Such a count is an upper bound, not the baseline.
 *
 * A reader that takes a channel over (a new tracerd adopting a pool)
 * starts from this: what the reader before it accounted for (an upper
 * bound only hides losses of a lap it read). A reader that skips what the
 * writer overwrote (flight) moves to it: the records skipped are those it
 * had not accounted for (an upper bound would count the handler's records
 * twice: skipped now, read later).
 */
static uint64_t slot_baseline(const struct tracer_rb_reader *r, uint64_t i,
			      uint64_t w, uint64_t part, bool *opening)
{
	uint32_t order = r->geo.subbuf_order;
	uint64_t k = (i - (r->read_count >> order)) & (r->geo.subbuf_count - 1);
	uint64_t pos = (r->read_count & ~r->smask) + (k << order);
	const struct tracer_rb_packet *h = (const void *)(r->data +
							  (i << order));
	uint64_t hpos, recs;

	/*
	 * The slot's record count first, then (acquire) where the writer is
	 * and which lap the header is: a count that includes a record of the
	 * lap at pos comes with that lap's write count and header (the
	 * writer opens a lap, writes its header, then counts its records,
	 * release-ordered), so the count is used only when it holds none of
	 * them. Read after the header instead, it could: those records would
	 * count as skipped here and as read when the packet is (one flight
	 * test in 30 told 1-3 records too many overwritten).
	 */
	*opening = false;
	recs = tracer__load_acquire(&r->commit[i].records);
	/* Counters wrap: positions are compared by their distance. A slot
	 * the writer has not reached has no header to read (its page may
	 * not even exist yet: reading it would make one, in every new
	 * ring). w may be older than the count: look again. */
	if ((int64_t)(w - pos) <= 0)
		w = tracer__load_acquire(&r->hdr->write_count);
	if ((int64_t)(w - pos) <= 0)
		return recs;
	hpos = TRACER_READ_ONCE(h->packet_seq_num) << order;
	if ((int64_t)(hpos - pos) < 0) {
		*opening = true;
		return recs;
	}
	return TRACER_READ_ONCE(h->slot_records) +
	       (hpos == pos && k == 0 ? part : 0);
}

/*
 * Each slot's records accounted for by the readers before us. None read
 * or skipped a packet if the read count is still 0 (either moves it):
 * every record is still to be told, read or overwritten, but for what a
 * partial read of the first sub-buffer took. Without this, a writer that
 * lapped the ring before its first reader came (a process's start
 * segment in flight mode, written before tracerd adopted it; a forked
 * writer ahead of its reader in test_rb_cross_process: 27,000-49,000
 * records of 2,000,000) had its overwritten laps taken for read.
 */
static void restore_slot_records(struct tracer_rb_reader *r)
{
	uint64_t w = TRACER_READ_ONCE(r->hdr->write_count), i;
	bool opening;

	if (r->read_count == 0) {
		r->slot_records[0] = r->partial_len ? r->partial_records : 0;
		return;		/* the others: 0, from calloc() */
	}
	for (i = 0; i < r->geo.subbuf_count; i++)
		r->slot_records[i] = slot_baseline(r, i, w, r->partial_records,
						   &opening);
}

static int attach(struct tracer_rb_reader *r, void *region, uint64_t size,
		  const char **why)
{
	struct tracer_rb_header copy;
	struct tracer_rb_header *hdr = region;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = tracer__rb_check_header(region, size, &copy, &r->geo, why);
	if (ret)
		return ret;
	r->read_count = TRACER_READ_ONCE(hdr->read_count);
	if (r->read_count & (r->geo.subbuf_size - 1)) {
		if (why)
			*why = "read count is not at a sub-buffer boundary";
		return -EINVAL;
	}
	restore_partial(r, hdr);
	r->slot_records = calloc(r->geo.subbuf_count, sizeof(uint64_t));
	if (!r->slot_records)
		return -ENOMEM;
	r->hdr = hdr;
	r->read_count_shared = &hdr->read_count;
	r->data = (const char *)region + r->geo.data_offset;
	r->commit = (const struct tracer_rb_commit *)(const void *)((const char *)region +
						      r->geo.commit_offset);
	r->smask = r->geo.subbuf_size - 1;
	r->cmask = ~0ULL >> r->geo.count_order;
	r->mode = copy.mode;
	r->stream_id = copy.stream_id;
	r->stream_instance_id = copy.stream_instance_id;
	r->instance_mask = ~0ULL;
	return 0;
}

int tracer__rb_reader_attach(struct tracer_rb_reader *r, void *region,
			     uint64_t size, const char **why)
{
	int ret = attach(r, region, size, why);

	if (!ret)
		restore_slot_records(r);
	return ret;
}

/* A new channel: every slot's count is 0, as calloc() left it. */
int tracer__rb_reader_attach_new(struct tracer_rb_reader *r, void *region,
				 uint64_t size, const char **why)
{
	return attach(r, region, size, why);
}

void tracer__rb_reader_view(struct tracer_rb_reader *r, const void *view)
{
	r->data = (const char *)view + r->geo.data_offset;
}

void tracer__rb_reader_detach(struct tracer_rb_reader *r)
{
	free(r->slot_records);
	r->slot_records = NULL;
}

static uint64_t bufsize(const struct tracer_rb_reader *r)
{
	return tracer__rb_bufsize(r);
}

static uint64_t slot_of(const struct tracer_rb_reader *r, uint64_t pos)
{
	return tracer__rb_slot_of(r, pos);
}

void tracer__rb_publish(struct tracer_rb_reader *r, uint64_t pos)
{
	r->read_count = pos;
	/* The caller's copy (loads) happens before the writer may reuse. */
	tracer__store_release(r->read_count_shared, pos);
}

/*
 * Moved past sub-buffers the writer overwrote (flight): every slot's
 * records up to the sub-buffer read next there are accounted for now, and
 * those not accounted for before were overwritten. They all came before
 * the oldest packet kept, whichever slot held them: the next packet read
 * tells them all (skipped_records), instead of each slot's next packet
 * telling its own, among the kept ones. A slot being opened keeps its
 * baseline: the packet of the new lap tells its skipped records, or the
 * next rebaseline does if that one is overwritten too.
 */
static void rebaseline(struct tracer_rb_reader *r, uint64_t wc)
{
	uint64_t i, b;
	bool opening;

	/* (A partial read counted its records in slot_records already.) */
	for (i = 0; i < r->geo.subbuf_count; i++) {
		b = slot_baseline(r, i, wc, 0, &opening);
		if (!opening && b > r->slot_records[i]) {
			r->skipped_records += b - r->slot_records[i];
			r->slot_records[i] = b;
		}
	}
}

/* Flight mode, writer more than a buffer ahead: skip what it overwrote. */
static void skip_overwritten(struct tracer_rb_reader *r, uint64_t wc)
{
	uint64_t oldest = TRACER_ALIGN_UP(wc - bufsize(r), r->geo.subbuf_size);

	r->packets_overwritten += (oldest - r->read_count) >>
				  r->geo.subbuf_order;
	tracer__rb_publish(r, oldest);
	rebaseline(r, wc);
}

int tracer__rb_get_subbuf(struct tracer_rb_reader *r,
			  struct tracer_rb_subbuf *sb)
{
	uint64_t S = r->geo.subbuf_size;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		uint64_t rc = r->read_count;
		uint64_t wc = tracer__load_acquire(&r->hdr->write_count);
		uint64_t c, rel;

		if (wc - rc > bufsize(r)) {
			if (r->mode == TRACER_RB_DISCARD)
				return report(r, -EIO, "write count %" PRIu64
					      " is more than a buffer ahead of"
					      " read count %" PRIu64, wc, rc);
			skip_overwritten(r, wc);
			continue;
		}
		if (wc - rc < S)
			return -EAGAIN;
		c = tracer__load_acquire(&r->commit[slot_of(r, rc)].count);
		rel = (c - tracer__rb_lap_base(rc, r->geo.subbuf_order,
					       r->geo.count_order)) & r->cmask;
		if (rel == S) {
			sb->data = r->data + (rc & (bufsize(r) - 1));
			sb->size = S;
			sb->pos = rc;
			return 0;
		}
		if (rel < S)
			return -EAGAIN;	/* a record is still uncommitted */
		if (r->mode == TRACER_RB_DISCARD)
			return report(r, -EIO, "commit count of slot %" PRIu64
				      " runs past its sub-buffer",
				      slot_of(r, rc));
		/* flight: the writer is already on the next lap; re-read */
	}
	return -EAGAIN;
}

int tracer__rb_put_subbuf(struct tracer_rb_reader *r,
			  struct tracer_rb_subbuf *sb)
{
	bool stale = false;

	if (r->mode == TRACER_RB_FLIGHT) {
		uint64_t wc;

		tracer__rmb();	/* the caller's copy before this load */
		wc = tracer__load_acquire(&r->hdr->write_count);
		stale = wc - sb->pos > bufsize(r);
	}
	tracer__rb_publish(r, sb->pos + sb->size);
	if (stale) {
		r->packets_overwritten++;
		rebaseline(r, tracer__load_acquire(&r->hdr->write_count));
		return -ESTALE;
	}
	return 0;
}

int tracer__rb_check_packet_header(struct tracer_rb_reader *r,
				   const struct tracer_rb_packet *p,
				   uint64_t pos)
{
	uint64_t S = r->geo.subbuf_size;
	uint64_t seq = pos >> r->geo.subbuf_order;

	if (p->magic != TRACER_CTF_MAGIC)
		return report(r, -EBADMSG, "packet %" PRIu64 ": bad magic "
			      "0x%08x at offset 0", seq, p->magic);
	if (p->stream_id != r->stream_id ||
	    ((p->stream_instance_id ^ r->stream_instance_id) &
	     r->instance_mask))
		return report(r, -EBADMSG, "packet %" PRIu64 ": stream ids "
			      "at offset 4 do not match the channel", seq);
	if (p->packet_seq_num != seq)
		return report(r, -EBADMSG, "packet %" PRIu64 ": sequence "
			      "number %" PRIu64 " at offset 48", seq,
			      p->packet_seq_num);
	if (p->packet_size != S * 8)
		return report(r, -EBADMSG, "packet %" PRIu64 ": packet size "
			      "%" PRIu64 " bits at offset 40", seq,
			      p->packet_size);
	if (p->content_size % 64 || p->content_size < TRACER_RB_PACKET_SIZE * 8
	    || p->content_size > S * 8)
		return report(r, -EBADMSG, "packet %" PRIu64 ": content size "
			      "%" PRIu64 " bits at offset 32", seq,
			      p->content_size);
	if (p->timestamp_end < p->timestamp_begin)
		return report(r, -EBADMSG, "packet %" PRIu64 ": ends before "
			      "it begins (offset 24)", seq);
	return 0;
}

/* How far ahead of CLOCK_MONOTONIC a stream's last time may be held
 * (a line runs up to 50 ms ahead before tracerd calls it a stray). */
#define TRACER_CONVERT_AHEAD_NS	100000000ULL

/*
 * Times in ns as a packet is taken (rb.h: history, converted_last): a
 * packet in TSC ticks through the lines tracerd published
 * (clock_history.h), none earlier than the end of the last packet taken
 * of the same stream, and so a packet in ns in a stream that had ticks,
 * so that a change of unit or a step between lines never shows as time
 * going back. `line` NULL: the packet is in ns.
 */
struct conv {
	const struct tracer_clock_history *h;
	const struct tracer_clock_point *line;
	uint64_t until;			/* line is in force below this tick */
	uint64_t last;			/* the last time given */
};

/* The time of t, no earlier than c->last, which moves to it. */
static uint64_t conv_time(struct conv *c, uint64_t t)
{
	uint64_t ns = t;

	if (c->line) {
		if (tracer_unlikely(t >= c->until || t < c->line->tsc))
			c->line = tracer__clock_history_line(c->h, t,
							     &c->until);
		ns = tracer__clock_point_ns(c->line, t);
	}
	if (ns < c->last)
		ns = c->last;
	c->last = ns;
	return ns;
}

/* Give the record at `at` (rec, read) the time ns, prev the time before
 * it; a compact one holds the low bits, so it is kept less than 2^32 ns
 * after prev (c->last follows). */
static void restamp(char *at, const struct tracer_rb_record *rec,
		    uint64_t ns, uint64_t prev, struct conv *c)
{
	struct tracer_rb_event_ext x;
	uint64_t w;

	if (rec->header_size == TRACER_RB_COMPACT_SIZE) {
		if (ns - prev > TRACER_RB_TIME_MASK)
			c->last = ns = prev + TRACER_RB_TIME_MASK;
		memcpy(&w, at, sizeof(w));
		w = (w & ~(TRACER_RB_TIME_MASK << TRACER__RB_TIME_SHIFT)) |
		    (ns & TRACER_RB_TIME_MASK) << TRACER__RB_TIME_SHIFT;
		memcpy(at, &w, sizeof(w));
		return;
	}
	memcpy(&x, at, sizeof(x));
	x.timestamp = ns;
	memcpy(at, &x, sizeof(x));
}

/*
 * Does packet p need its times made (*c set up)? A packet in ticks does;
 * one in ns only in a stream that had ticks, when it starts before the
 * stream's last time (lines may run ahead of CLOCK_MONOTONIC). Returns 1,
 * 0 (no), or -EBADMSG (an unknown unit, or ticks and no lines to read
 * them by; r->error says which).
 */
static int conv_start(struct tracer_rb_reader *r,
		      const struct tracer_rb_packet *p, struct conv *c)
{
	*c = (struct conv){ .h = r->history, .last = r->converted_last };
	if (p->unit == TRACER_RB_UNIT_NS)
		return r->converted_ticks &&
		       p->timestamp_begin < r->converted_last;
	if (p->unit != TRACER_RB_UNIT_TSC)
		return report(r, -EBADMSG, "packet %" PRIu64 ": unknown unit "
			      "%" PRIu32 " at offset 20", p->packet_seq_num,
			      p->unit);
	if (!r->history || !r->history->n)
		return report(r, -EBADMSG, "packet %" PRIu64 ": stamped in "
			      "TSC ticks, and no clock line to read them by",
			      p->packet_seq_num);
	c->line = tracer__clock_history_line(c->h, p->timestamp_begin,
					     &c->until);
	return 1;
}

/*
 * Walk the records of a checked header: count them, check their order
 * (none before the one before it, nor after the packet's end) and, with
 * c, give them and the packet their times (above) as it goes. A packet
 * that fails is left half made: the caller drops it. A compact record
 * stays one: at the TSC rates tracerd lets writers stamp ticks at (more
 * than 1 GHz) its distance in ns from the record before is below its
 * distance in ticks; a step between lines that made it more is held
 * below 2^32 ns.
 */
static int walk_records(struct tracer_rb_reader *r, struct tracer_rb_packet *p,
			struct conv *c, uint64_t *records)
{
	char *base = (char *)p;
	uint64_t content = p->content_size / 8, off = TRACER_RB_PACKET_SIZE;
	uint64_t clock = p->timestamp_begin, prev = clock, n = 0, before;
	struct tracer_rb_record rec;

	if (c)
		p->timestamp_begin = conv_time(c, clock);
	while (off < content) {
		if (tracer__rb_record_get(base + off, content - off, &clock,
					  &rec))
			return report(r, -EBADMSG, "packet %" PRIu64 ": record "
				      "at offset %" PRIu64 " has a bad header",
				      p->packet_seq_num, off);
		if (rec.timestamp < prev || rec.timestamp > p->timestamp_end)
			return report(r, -EBADMSG, "packet %" PRIu64 ": record "
				      "at offset %" PRIu64 " is out of time "
				      "order", p->packet_seq_num, off);
		if (c) {
			before = c->last;
			restamp(base + off, &rec, conv_time(c, rec.timestamp),
				before, c);
		}
		prev = rec.timestamp;
		off += rec.size;
		n++;
	}
	if (c) {
		p->timestamp_end = conv_time(c, p->timestamp_end);
		p->unit = TRACER_RB_UNIT_NS;
	}
	*records = n;
	return 0;
}

int tracer__rb_packet_parse(struct tracer_rb_reader *r, const void *copy,
			    uint64_t pos, struct tracer_rb_packet_info *info)
{
	struct tracer_rb_packet *p = (struct tracer_rb_packet *)(uintptr_t)copy;
	uint64_t slot = slot_of(r, pos), n = 0;
	struct conv c;
	int ret;

	if ((uintptr_t)copy % TRACER_RB_ALIGN)
		return report(r, -EINVAL, "packet copy at %p is not 8-byte "
			      "aligned", copy);
	ret = tracer__rb_check_packet_header(r, p, pos);
	/* A new owner of the buffer is a stream of its own (its stash may
	 * hold records older than the last owner's): no clamp across. */
	if (!ret && p->stream_instance_id != r->converted_instance) {
		r->converted_instance = p->stream_instance_id;
		r->converted_last = 0;
		r->converted_ticks = false;
	}
	if (!ret)
		ret = conv_start(r, p, &c);
	if (ret >= 0)
		ret = walk_records(r, p, ret ? &c : NULL, &n);
	if (ret)
		return ret;
	info->from_ticks = c.line != NULL;
	r->converted_ticks |= info->from_ticks;
	/* A time from a writer's scribble beyond any clock's reach would
	 * hold the stream's next times: not past 100 ms from now. */
	if (p->timestamp_end > r->converted_last &&
	    p->timestamp_end < tracer__clock_now() + TRACER_CONVERT_AHEAD_NS)
		r->converted_last = p->timestamp_end;
	info->seq = p->packet_seq_num;
	info->timestamp_begin = p->timestamp_begin;
	info->timestamp_end = p->timestamp_end;
	info->content_bytes = p->content_size / 8;
	info->records = n;
	info->events_discarded = p->events_discarded;
	info->tid = p->tid;
	info->stream_instance_id = p->stream_instance_id;
	/* Below what is accounted for: a baseline that counted laps the
	 * writer had not finished as read; nothing to add. */
	info->records_overwritten = p->slot_records > r->slot_records[slot] ?
		p->slot_records - r->slot_records[slot] : 0;
	info->records_overwritten += r->skipped_records;
	r->skipped_records = 0;
	r->records_overwritten += info->records_overwritten;
	r->slot_records[slot] = p->slot_records + n;
	return 0;
}

int tracer__rb_packet_next(const void *copy, uint64_t content_bytes,
			   struct tracer_rb_cursor *cur,
			   struct tracer_rb_record *rec)
{
	if (cur->off == 0) {
		cur->off = TRACER_RB_PACKET_SIZE;
		cur->clock = ((const struct tracer_rb_packet *)copy)->
			     timestamp_begin;
	}
	if (cur->off >= content_bytes ||
	    tracer__rb_record_get((const char *)copy + cur->off,
				  content_bytes - cur->off, &cur->clock, rec))
		return 0;
	cur->off += rec->size;
	return 1;
}

uint64_t tracer__rb_time_at(const struct tracer_rb_packet *p, uint64_t at,
			    uint64_t end)
{
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;

	while (cur.off < at && tracer__rb_packet_next(p, at, &cur, &rec))
		;
	if (!cur.off)
		cur.clock = p->timestamp_begin;
	if (at < end && tracer__rb_record_get((const char *)p + at, end - at,
					      &cur.clock, &rec) == 0)
		return rec.timestamp;
	return cur.clock;
}

/*
 * The records of the packet copy p up to r->partial_len were returned by
 * tracer__rb_read_partial() already: move the rest up behind the header
 * and fix the header so the copy describes only them.
 */
static void strip_consumed(struct tracer_rb_reader *r,
			   struct tracer_rb_packet *p, uint64_t content)
{
	char *base = (char *)p;
	uint64_t keep = r->partial_len, left = content - keep;

	/* The first record left starts the packet: its time is the begin,
	 * which a reader rebuilds it (and the next ones) from. */
	p->timestamp_begin = left ? tracer__rb_time_at(p, keep, content) :
			     p->timestamp_end;
	memmove(base + TRACER_RB_PACKET_SIZE, base + keep, left);
	p->content_size = (TRACER_RB_PACKET_SIZE + left) * 8;
	p->slot_records += r->partial_records;
}

/* Is slot rc's sub-buffer complete? The acquire pairs with the writer's
 * release of the commit count: the records it counts are written before
 * any copy made after this load. */
static bool complete(const struct tracer_rb_reader *r, uint64_t rc)
{
	uint64_t c = tracer__load_acquire(&r->commit[slot_of(r, rc)].count);

	return ((c - tracer__rb_lap_base(rc, r->geo.subbuf_order,
					 r->geo.count_order)) & r->cmask) ==
	       r->geo.subbuf_size;
}

uint32_t tracer__rb_ready(const struct tracer_rb_reader *r, uint32_t max,
			  struct tracer_rb_span *span)
{
	uint64_t S = r->geo.subbuf_size, rc = r->read_count;
	uint64_t wc = tracer__load_acquire(&r->hdr->write_count);
	uint64_t off = rc & (bufsize(r) - 1), room;
	uint32_t n = 0;

	if (wc - rc > bufsize(r) || (r->partial_len && rc == r->partial_pos))
		return 0;
	room = (bufsize(r) - off) / S;	/* up to the end of the data */
	if (max > room)
		max = (uint32_t)room;
	while (n < max && wc - rc >= (uint64_t)(n + 1) * S &&
	       complete(r, rc + (uint64_t)n * S))
		n++;
	span->pos = rc;
	span->offset = off;
	span->len = (uint64_t)n * S;
	return n;
}

void tracer__rb_stage(struct tracer_rb_reader *r, void *copy,
		      const struct tracer_rb_span *span)
{
	r->stage = copy;
	r->stage_pos = span->pos;
	r->stage_len = span->len;
}

void tracer__rb_unstage(struct tracer_rb_reader *r)
{
	r->stage = NULL;
	r->stage_len = 0;
}

/* Sub-buffer sb in the staged copy, or NULL. */
static char *staged(const struct tracer_rb_reader *r,
		    const struct tracer_rb_subbuf *sb)
{
	uint64_t at = sb->pos - r->stage_pos;

	if (r->stage_len && sb->pos >= r->stage_pos &&
	    at + sb->size <= r->stage_len)
		return r->stage + at;
	return NULL;
}

/* The records of a partly read sub-buffer p that were not returned yet. */
static int rest_of_partial(struct tracer_rb_reader *r,
			   struct tracer_rb_packet *p,
			   const struct tracer_rb_subbuf *sb)
{
	if (p->content_size % 64 || p->content_size / 8 > sb->size ||
	    p->content_size / 8 < r->partial_len) {
		r->partial_len = 0;
		return report(r, -EBADMSG, "packet %" PRIu64 ": content "
			      "size %" PRIu64 " bits shrank below what "
			      "was read of it", sb->pos >> r->geo.subbuf_order,
			      p->content_size);
	}
	strip_consumed(r, p, p->content_size / 8);
	r->partial_len = 0;
	return 0;
}

/*
 * The next complete sub-buffer, in dst or (in_place) where it is staged:
 * *packet says which.
 */
static int read_next(struct tracer_rb_reader *r, void *dst, uint64_t dst_size,
		     struct tracer_rb_packet_info *info, void **packet,
		     bool in_place)
{
	struct tracer_rb_subbuf sb;
	char *at;
	int ret;

	if (dst_size < r->geo.subbuf_size)
		return -ENOBUFS;
	ret = tracer__rb_get_subbuf(r, &sb);
	if (ret)
		return ret;
	at = staged(r, &sb);
	if (!at || !in_place) {
		memcpy(dst, at ? at : sb.data, sb.size);
		at = dst;
	}
	/* A staged copy was made before this put: a flight writer that
	 * passed the sub-buffer before the copy is found here as well. */
	ret = tracer__rb_put_subbuf(r, &sb);
	if (ret)
		return ret;
	*packet = at;
	if (r->partial_len && sb.pos == r->partial_pos) {
		ret = rest_of_partial(r, (struct tracer_rb_packet *)(void *)at,
				      &sb);
		if (ret)
			return ret;
	}
	return tracer__rb_packet_parse(r, at, sb.pos, info);
}

int tracer__rb_read(struct tracer_rb_reader *r, void *dst, uint64_t dst_size,
		    struct tracer_rb_packet_info *info)
{
	void *packet;

	return read_next(r, dst, dst_size, info, &packet, false);
}

int tracer__rb_read_ref(struct tracer_rb_reader *r, void *dst,
			uint64_t dst_size, struct tracer_rb_packet_info *info,
			void **packet)
{
	return read_next(r, dst, dst_size, info, packet, true);
}

/* Timestamp of the last record of a copy, walking sizes defensively. */
static uint64_t last_timestamp(const struct tracer_rb_packet *p,
			       uint64_t content, uint64_t dflt)
{
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	uint64_t ts = dflt;

	while (tracer__rb_packet_next(p, content, &cur, &rec))
		if (rec.timestamp > ts)
			ts = rec.timestamp;
	return ts;	/* a record that is not one: parse reports it */
}

static uint64_t committed(const struct tracer_rb_reader *r, uint64_t rc)
{
	return tracer__rb_committed(r, rc);
}

/*
 * The open sub-buffer at rc holds `used` bytes; are they all committed?
 * Load write_count, then the commit count, then write_count again: every
 * record counted in the commit count was reserved before the second load,
 * so if write_count did not move and the count equals `used`, the records
 * counted are exactly those of [rc, rc + used). *lost is loaded in between,
 * so it counts no record dropped after those.
 */
static bool prefix_committed(const struct tracer_rb_reader *r, uint64_t rc,
			     uint64_t wc, uint64_t *lost)
{
	uint64_t rel = committed(r, rc);

	*lost = tracer__load_acquire(&r->hdr->lost);
	return rel == wc - rc &&
	       tracer__load_acquire(&r->hdr->write_count) == wc;
}

/*
 * The copy of `used` bytes is the writer's open sub-buffer: fill in the end
 * fields it has not written yet, after dropping what was returned before.
 */
static void close_copy(struct tracer_rb_reader *r, struct tracer_rb_packet *p,
		       uint64_t rc, uint64_t used, uint64_t lost)
{
	p->content_size = used * 8;
	p->events_discarded = lost;
	if (r->partial_len && r->partial_pos == rc)
		strip_consumed(r, p, used);
	else
		r->partial_records = 0;
	p->timestamp_end = last_timestamp(p, p->content_size / 8,
					  p->timestamp_begin);
}

/* For a later reader: what was taken of the open sub-buffer. */
static void publish_partial(struct tracer_rb_reader *r)
{
	struct tracer_rb_header *h = (struct tracer_rb_header *)
		(uintptr_t)r->hdr;	/* line 2 is the reader's */

	if (r->quiet)
		return;
	TRACER_WRITE_ONCE(h->partial_pos, r->partial_pos);
	TRACER_WRITE_ONCE(h->partial_records, r->partial_records);
	TRACER_WRITE_ONCE(h->partial_len, r->partial_len);
}

int tracer__rb_read_partial(struct tracer_rb_reader *r, void *dst,
			    uint64_t dst_size,
			    struct tracer_rb_packet_info *info)
{
	uint64_t rc = r->read_count, wc, used, lost;
	int ret;

	if (dst_size < r->geo.subbuf_size)
		return -ENOBUFS;
	if ((uintptr_t)dst % TRACER_RB_ALIGN)
		return -EINVAL;
	wc = tracer__load_acquire(&r->hdr->write_count);
	if (wc - rc >= r->geo.subbuf_size) {
		/* Complete ones first, unless the oldest one cannot be. */
		if (wc - rc <= bufsize(r) &&
		    committed(r, rc) < r->geo.subbuf_size)
			return -EBUSY;
		return -EAGAIN;
	}
	used = wc - rc;
	if (used == 0 || (r->partial_len && r->partial_pos == rc &&
			  used <= r->partial_len))
		return -ENODATA;
	if (used < TRACER_RB_PACKET_SIZE || used % TRACER_RB_ALIGN)
		return report(r, -EIO, "write count %" PRIu64 " is inside a "
			      "packet header", wc);
	if (!prefix_committed(r, rc, wc, &lost))
		return -EBUSY;
	memcpy(dst, r->data + (rc & (bufsize(r) - 1)), used);
	if (r->mode == TRACER_RB_FLIGHT) {
		tracer__rmb();	/* the copy before the check, as put */
		if (tracer__load_acquire(&r->hdr->write_count) - rc >
		    bufsize(r))
			return -ESTALE;
	}
	close_copy(r, dst, rc, used, lost);
	ret = tracer__rb_packet_parse(r, dst, rc, info);
	if (ret)
		return ret;
	r->partial_pos = rc;
	r->partial_len = used;
	r->partial_records += info->records;
	publish_partial(r);
	return 0;
}

uint64_t tracer__rb_lost(const struct tracer_rb_reader *r)
{
	return TRACER_READ_ONCE(r->hdr->lost);
}

uint64_t tracer__rb_overwritten(const struct tracer_rb_reader *r)
{
	struct tracer_rb_reader at = *r;	/* moved, in this copy only */
	uint64_t wc = tracer__load_acquire(&r->hdr->write_count);
	uint64_t sum = r->skipped_records, i, b;
	bool opening;

	if (r->mode != TRACER_RB_FLIGHT || wc - r->read_count <= bufsize(r))
		return sum;
	at.read_count = TRACER_ALIGN_UP(wc - bufsize(r), r->geo.subbuf_size);
	for (i = 0; i < r->geo.subbuf_count; i++) {
		b = slot_baseline(&at, i, wc, 0, &opening);
		if (!opening && b > r->slot_records[i])
			sum += b - r->slot_records[i];
	}
	return sum;
}
