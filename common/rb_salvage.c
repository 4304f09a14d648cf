/*
 * rb_salvage.c - reading what a dead writer left in its open sub-buffer.
 *
 * Model
 * -----
 * The writer thread (or its whole process) is gone: nothing will write
 * the channel again until the reader hands it to a new owner. The reader
 * (tracerd) has taken every complete sub-buffer with tracer__rb_read();
 * the one at its read position is incomplete: its commit count is short of
 * S because the writer died between reserving and committing a record, or
 * before closing the sub-buffer after reserving past its end.
 *
 *   rc                                                      rc + S
 *   | header | rec | rec | torn | rec (nested, committed) | ... |
 *   |<-------------------- reserved ------------------->|
 *   committed = header + every committed record (any order)
 *   deficit D = reserved - committed = the torn records' bytes (plus
 *               the unclosed tail when the writer had moved on)
 *
 * A record is committed or not as a whole, but the counters only tell the
 * sum, and the torn record's bytes may be anything (its header may not be
 * written yet, leaving bytes of an earlier lap). So the records are walked
 * from the start and each one must look like one the writer wrote: sane
 * size, this lap in its lap field (rb_layout.h), a time not before the
 * previous record's nor after now, and an id and payload the caller's
 * check accepts. Bytes of an earlier lap fail the lap test.
 *
 * The walk, with X where it stopped and R = reserved - X:
 *   R = D   everything walked is committed, [X, reserved) is torn (or the
 *           unclosed tail);
 *   R > D   committed records lie beyond X: one torn record of D bytes at
 *           X is skipped and the walk resumes after it; if that fails, the
 *           rest is reported unreadable;
 *   R < D   walked records are torn too: the last records, D - R bytes of
 *           them, are dropped.
 * When the walk reached the end (R = 0) the last D bytes of records are
 * dropped, or the one record of D bytes when no suffix fits (a handler's
 * record committed after the interrupted one).
 *
 * Then the channel is repaired as if the writer had closed the sub-buffer:
 * the slot's commit count is completed, write_count moved to the next
 * boundary, the read position published there. A later owner of the
 * buffer starts on a clean sub-buffer, so a torn record never leaves the
 * channel stuck. Only the reader writes the writer's counters here, and
 * only because there is no writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "rb.h"
#include "rb_internal.h"

struct walk {
	const char *base;		/* the copy */
	uint64_t end;			/* reserved bytes */
	uint64_t now;			/* no record is later */
	uint32_t lap;			/* the sub-buffer's lap, low 8 bits */
	tracer_rb_record_check check;
	void *arg;
};

#define report tracer__rb_report

/*
 * Could the record at off be one the writer wrote after time *prev (the
 * time before it: its header's time is rebuilt from it)? Fills rec.
 */
static bool plausible(const struct walk *w, uint64_t off, uint64_t prev,
		      struct tracer_rb_record *rec)
{
	uint64_t clock = prev;

	if (tracer__rb_record_get(w->base + off, w->end - off, &clock, rec))
		return false;
	/* Bytes an earlier lap left: their lap says so (a compact time
	 * rebuilt from ours would not). */
	if (rec->lap != w->lap || rec->timestamp < prev ||
	    rec->timestamp > w->now)
		return false;
	return w->check(w->arg, rec);
}

/* Walk plausible records from off; returns where it stopped. */
static uint64_t walk_from(const struct walk *w, uint64_t off, uint64_t *prev)
{
	struct tracer_rb_record rec;

	while (off < w->end && plausible(w, off, *prev, &rec)) {
		*prev = rec.timestamp;
		off += rec.size;
	}
	return off;
}

/* Size of the record at off, as its header says (0: no header). The
 * time does not matter here: any clock will do. */
static uint64_t size_at(const struct walk *w, uint64_t off, uint64_t stop)
{
	struct tracer_rb_record rec;
	uint64_t clock = 0;

	return tracer__rb_record_get(w->base + off, stop - off, &clock, &rec) ?
	       0 : rec.size;
}

/* Is `at` where a record starts, walking from the header up to stop? */
static bool record_starts(const struct walk *w, uint64_t at, uint64_t stop)
{
	uint64_t off = TRACER_RB_PACKET_SIZE, sz = 1;

	while (off < stop && off < at && (sz = size_at(w, off, stop)) != 0)
		off += sz;
	return off == at;
}

/* A record of exactly `size` bytes in [from, stop), from the end; 0: none. */
static uint64_t record_of_size(const struct walk *w, uint64_t size,
			       uint64_t stop)
{
	uint64_t off = TRACER_RB_PACKET_SIZE, found = 0, sz;

	while (off < stop && (sz = size_at(w, off, stop)) != 0) {
		if (sz == size)
			found = off;
		off += sz;
	}
	return found;
}

/*
 * Dropping the record at `hole` (extra bytes), does the record after it
 * keep its time? Readers will rebuild it from the record before the hole
 * instead of the dropped one. When the dropped record is the torn one,
 * both give the same time (the writer made it compact against a
 * committed record's time, no later than either). When the record found
 * by size is a committed one (a torn record of the same size walked as
 * plausible), they may not: the rest is then not kept with a wrong time.
 */
static bool rest_holds(const struct walk *w, uint64_t hole, uint64_t extra,
		       uint64_t stop)
{
	const struct tracer_rb_packet *p = (const void *)w->base;
	uint64_t at = hole + extra, clock = tracer__rb_time_at(p, hole, hole);
	struct tracer_rb_record rec;

	if (at >= stop)
		return true;
	return tracer__rb_record_get(w->base + at, stop - at, &clock,
				     &rec) == 0 &&
	       rec.timestamp == tracer__rb_time_at(p, at, stop);
}

/* What to keep: up to two ranges of records of the copy. */
struct keep {
	uint64_t a1, b1, a2, b2;
};

/*
 * The walk reached stop with `extra` bytes of walked records not
 * committed: drop them from the end, or the one record of that size.
 */
static void drop_walked(const struct walk *w, uint64_t stop, uint64_t extra,
			struct keep *k, struct tracer_rb_salvage *s)
{
	uint64_t hole;

	k->a1 = TRACER_RB_PACKET_SIZE;
	k->b1 = stop;
	if (extra == 0)
		return;
	s->torn++;
	s->torn_bytes += extra;
	if (extra >= stop - TRACER_RB_PACKET_SIZE) {
		k->b1 = k->a1;		/* the opening record is torn too */
		s->torn_offset = TRACER_RB_PACKET_SIZE;
	} else if (record_starts(w, stop - extra, stop)) {
		k->b1 = stop - extra;
		s->torn_offset = k->b1;
	} else if ((hole = record_of_size(w, extra, stop)) != 0 &&
		   rest_holds(w, hole, extra, stop)) {
		k->b1 = hole;		/* a nested record was committed */
		k->a2 = hole + extra;	/* after the interrupted one */
		k->b2 = stop;
		s->torn_offset = hole;
	} else {
		k->b1 = k->a1;		/* cannot tell which: keep none */
		s->torn_offset = TRACER_RB_PACKET_SIZE;
		s->unreadable = stop - TRACER_RB_PACKET_SIZE;
		s->unreadable_offset = TRACER_RB_PACKET_SIZE;
	}
}

/*
 * Decide what to keep of the copy: reserved bytes, deficit bytes not
 * committed, moved_on when the writer reserved past this sub-buffer (the
 * tail is then an unclosed end, not a torn record).
 */
static void decide(struct walk *w, uint64_t deficit, bool moved_on,
		   struct keep *k, struct tracer_rb_salvage *s)
{
	const struct tracer_rb_packet *p = (const void *)w->base;
	uint64_t prev = p->timestamp_begin, x, rest;

	x = walk_from(w, TRACER_RB_PACKET_SIZE, &prev);
	rest = w->end - x;
	memset(k, 0, sizeof(*k));
	if (deficit % TRACER_RB_ALIGN) {
		/* A commit count no writer could leave: trust the walk. */
		k->a1 = TRACER_RB_PACKET_SIZE;
		k->b1 = x;
		s->unreadable = rest;
		s->unreadable_offset = rest ? x : 0;
		return;
	}
	if (rest <= deficit) {
		drop_walked(w, x, deficit - rest, k, s);
		if (rest && !moved_on) {
			s->torn++;
			s->torn_bytes += rest;
			if (!s->torn_offset)
				s->torn_offset = x;
		}
		return;
	}
	k->a1 = TRACER_RB_PACKET_SIZE;
	k->b1 = x;
	if (deficit && walk_from(w, x + deficit, &prev) == w->end) {
		k->a2 = x + deficit;	/* one torn record at x */
		k->b2 = w->end;
		s->torn++;
		s->torn_bytes += deficit;
		s->torn_offset = x;
		return;
	}
	s->unreadable = rest;
	s->unreadable_offset = x;
}

/*
 * Move the kept records behind the header; returns the content bytes.
 * Records a partial read returned are dropped too: the packet then
 * begins at the first one left (its time is rebuilt from the begin).
 */
static uint64_t compact(char *base, struct keep *k, uint64_t consumed)
{
	struct tracer_rb_packet *p = (struct tracer_rb_packet *)(void *)base;
	uint64_t at = TRACER_RB_PACKET_SIZE, n;

	if (consumed > k->a1 && consumed <= k->b1) {
		p->timestamp_begin = tracer__rb_time_at(p, consumed, k->b1);
		k->a1 = consumed;
	}
	n = k->b1 - k->a1;
	memmove(base + at, base + k->a1, n);
	at += n;
	n = k->b2 - k->a2;
	memmove(base + at, base + k->a2, n);
	return at + n;
}

/* Time of the last record of the compacted copy (begin if none). */
static uint64_t last_time(const char *base, uint64_t content)
{
	const struct tracer_rb_packet *p = (const void *)base;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	uint64_t ts = p->timestamp_begin;

	while (tracer__rb_packet_next(p, content, &cur, &rec))
		ts = rec.timestamp;
	return ts;
}

/*
 * Complete the slot of the sub-buffer at rc as the writer would have, and
 * move past it: the writer is gone, nothing races these stores.
 */
static void repair(struct tracer_rb_reader *r, uint64_t rc, uint64_t wc,
		   uint64_t rel)
{
	uint64_t S = r->geo.subbuf_size, slot = tracer__rb_slot_of(r, rc);
	struct tracer_rb_commit *c = (struct tracer_rb_commit *)
		(uintptr_t)&r->commit[slot];
	struct tracer_rb_header *h = (struct tracer_rb_header *)
		(uintptr_t)r->hdr;

	/* Bytes before the counters that make them count, as a writer. */
	tracer__store_release(&c->count, c->count + (S - rel));
	if (wc - rc < S)
		tracer__store_release(&h->write_count, rc + S);
	r->slot_records[slot] = TRACER_READ_ONCE(c->records);
	r->partial_len = 0;
	r->partial_records = 0;
	tracer__rb_publish(r, rc + S);
}

/* Header fields the opening record writes; end fields made neutral. */
static int check_header(struct tracer_rb_reader *r, struct tracer_rb_packet *p,
			uint64_t rc)
{
	p->content_size = TRACER_RB_PACKET_SIZE * 8;
	p->timestamp_end = p->timestamp_begin;
	return tracer__rb_check_packet_header(r, p, rc);
}

/* The copy's end fields, for what was kept. */
static void close_salvaged(struct tracer_rb_reader *r,
			   struct tracer_rb_packet *p, uint64_t content)
{
	p->content_size = content * 8;
	p->timestamp_end = last_time((const char *)p, content);
	p->events_discarded = TRACER_READ_ONCE(r->hdr->lost);
	if (r->partial_len && r->partial_pos == r->read_count)
		p->slot_records += r->partial_records;
}

/* Records committed in the slot of rc that the packet p does not hold. */
static uint64_t committed_lost(const struct tracer_rb_reader *r,
			       const struct tracer_rb_packet *p, uint64_t rc,
			       uint64_t kept)
{
	uint64_t now = TRACER_READ_ONCE(
		r->commit[tracer__rb_slot_of(r, rc)].records);
	uint64_t made = now - p->slot_records;

	if (made <= kept ||
	    made > r->geo.subbuf_size / TRACER_RB_COMPACT_SIZE)
		return 0;	/* none, or counters not to be trusted */
	return made - kept;
}

static int salvage_copy(struct tracer_rb_reader *r, char *dst, uint64_t rc,
			struct walk *w, uint64_t rel, uint64_t wc,
			struct tracer_rb_packet_info *info,
			struct tracer_rb_salvage *s)
{
	struct tracer_rb_packet *p = (struct tracer_rb_packet *)(void *)dst;
	uint64_t consumed = r->partial_pos == rc ? r->partial_len : 0, content;
	struct keep k;
	int ret;

	if (rel > w->end)
		return report(r, -EIO, "slot of packet %" PRIu64 ": %" PRIu64
			      " bytes committed of %" PRIu64 " reserved",
			      rc >> r->geo.subbuf_order, rel, w->end);
	decide(w, w->end - rel, wc - rc > r->geo.subbuf_size, &k, s);
	content = compact(dst, &k, consumed);
	close_salvaged(r, p, content);
	ret = tracer__rb_packet_parse(r, dst, rc, info);
	if (ret)
		return ret;
	s->lost = committed_lost(r, p, rc, info->records);
	if (s->unreadable)
		report(r, -EBADMSG, "packet %" PRIu64 ": no valid record at "
		       "offset %" PRIu64 "; %" PRIu64 " bytes after it are "
		       "unreadable", rc >> r->geo.subbuf_order,
		       s->unreadable_offset, s->unreadable);
	return 0;
}

int tracer__rb_salvage(struct tracer_rb_reader *r, void *dst,
		       uint64_t dst_size, tracer_rb_record_check check,
		       void *arg, uint64_t now,
		       struct tracer_rb_packet_info *info,
		       struct tracer_rb_salvage *s)
{
	uint64_t S = r->geo.subbuf_size, rc = r->read_count, wc, rel;
	/* Writers on the TSC clock run on a copy of tracerd's that may be
	 * a period old: their stamps may be a little ahead of `now`. */
	struct walk w = { .base = dst, .now = now + TRACER_CLOCK_SLACK_NS,
			  .check = check, .arg = arg,
			  .lap = (uint32_t)(rc >> (r->geo.subbuf_order +
						   r->geo.count_order)) & 0xff };
	int ret;

	memset(s, 0, sizeof(*s));
	memset(info, 0, sizeof(*info));
	if (dst_size < S || (uintptr_t)dst % TRACER_RB_ALIGN)
		return -ENOBUFS;
	wc = tracer__load_acquire(&r->hdr->write_count);
	if (wc == rc)
		return -ENODATA;
	if (wc - rc > tracer__rb_bufsize(r))
		return r->mode == TRACER_RB_FLIGHT ? -EAGAIN :
		       report(r, -EIO, "write count %" PRIu64 " is more than "
			      "a buffer ahead of read count %" PRIu64, wc, rc);
	rel = tracer__rb_committed(r, rc);
	if (rel == S)
		return -EAGAIN;
	w.end = wc - rc < S ? wc - rc : S;
	memcpy(dst, r->data + (rc & (tracer__rb_bufsize(r) - 1)), S);
	/* Stamped in ticks: the TSC's count now bounds them, with as much
	 * slack (another CPU's TSC may run a little ahead of ours). */
	if (((const struct tracer_rb_packet *)dst)->unit == TRACER_RB_UNIT_TSC)
		w.now = tracer__rdtsc() + TRACER_CLOCK_SLACK_NS;
	if (w.end < TRACER_RB_PACKET_SIZE || w.end % TRACER_RB_ALIGN ||
	    check_header(r, dst, rc)) {
		s->torn = rel == 0;	/* died opening it */
		s->torn_bytes = rel == 0 ? w.end : 0;
		ret = rel == 0 ? 0 : report(r, -EBADMSG, "packet %" PRIu64
					    ": header unusable", rc >>
					    r->geo.subbuf_order);
	} else {
		ret = salvage_copy(r, dst, rc, &w, rel, wc, info, s);
	}
	repair(r, rc, wc, rel);
	return ret;
}
