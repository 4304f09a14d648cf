/*
 * test_rb_partial.c - tracer__rb_read_partial(): the consumer reads the
 * committed records of the sub-buffer the writer still has open, and when
 * the writer closes it tracer__rb_read() returns only the records after
 * them. Everything is checked exactly against a model of what the writer
 * did: every record once, in order and intact; the packet header fields of
 * partial and stripped packets; -ENODATA, -EBUSY, -EAGAIN, -EBADMSG; loss
 * accounting (recorded + lost + overwritten == produced) in both modes;
 * counters that wrap past 2^64; the writer running in the middle of a
 * partial read's copy (made deterministic with a page fault); a long
 * randomized single-threaded run whose every return code is predicted; and
 * a reader thread doing partial and complete reads while a writer thread
 * runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define MODEL_CAP	(1u << 18)	/* records per single-threaded channel */

static char copy[1 << 16] __attribute__((aligned(64)));

struct chan {
	char *region;
	uint64_t size;
	uint64_t S, B;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	/* model: what the writer did, by sequence number */
	uint64_t produced;
	uint64_t *ts;
	uint32_t *len;
	uint8_t *acc;			/* accepted by the writer */
	/* what the reader got */
	uint64_t next;			/* lowest seq not accounted for yet */
	uint64_t seen, missing, bad;
	int part_valid;			/* last packet was partial: */
	uint64_t part_pos, part_disc;	/* its position, events_discarded */
	uint64_t first, last;		/* seqs of the last packet's records */
	uint64_t lost_before;		/* lost when read_partial was called */
	char error[300];
};

/* A record reserved and not committed yet. */
struct pend {
	struct tracer_rb_ctx ctx;
	uint64_t seq;
	int active;
};

static void chan_open(struct chan *c, uint64_t subbuf, uint64_t count,
		      enum tracer_rb_mode mode, uint64_t start)
{
	struct tracer_rb_config cfg = { .subbuf_size = subbuf,
		.subbuf_count = count, .mode = mode, .stream_id = 3,
		.stream_instance_id = 42, .start_count = start };

	memset(c, 0, sizeof(*c));
	c->S = subbuf;
	c->B = subbuf * count;
	c->region = chk_channel(&cfg, &c->size);
	c->ts = calloc(MODEL_CAP, sizeof(*c->ts));
	c->len = calloc(MODEL_CAP, sizeof(*c->len));
	c->acc = calloc(MODEL_CAP, sizeof(*c->acc));
	if (!c->region || !c->ts || !c->len || !c->acc ||
	    tracer__rb_writer_attach(&c->w, c->region, c->size, 1234, NULL) ||
	    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
		bail_out("cannot create a channel");
}

static void chan_close(struct chan *c)
{
	tracer__rb_reader_detach(&c->r);
	free(c->region);
	free(c->ts);
	free(c->len);
	free(c->acc);
}

static void fail(struct chan *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct chan *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
}

static uint64_t wc_of(const struct chan *c)
{
	return __atomic_load_n(&c->w.hdr->write_count, __ATOMIC_ACQUIRE);
}

/* The shared bytes of the sub-buffer at position pos. */
static char *at(const struct chan *c, uint64_t pos)
{
	return c->region + c->r.geo.data_offset + (pos & (c->B - 1));
}

/* A record's length with a compact header, which this channel's records
 * have (their times are close; the first opens a sub-buffer). */
static uint32_t rec_len(uint32_t payload)
{
	return tracer__rb_record_size(TRACER_RB_COMPACT_SIZE, payload);
}

/* Reserve the next record with `payload` bytes; fills the model. */
static int reserve(struct chan *c, struct tracer_rb_ctx *ctx,
		   uint32_t payload, uint64_t *seq)
{
	int ret;

	*seq = c->produced++;
	if (*seq >= MODEL_CAP)
		bail_out("model full");
	if (payload > c->w.max_payload)
		payload = c->w.max_payload;
	ret = tracer__rb_reserve(&c->w, ctx, 100, payload);
	c->acc[*seq] = ret == 0;
	if (ret == 0) {
		c->ts[*seq] = ctx->timestamp;
		c->len[*seq] = tracer__rb_ctx_size(ctx, c->w.smask);
		if (c->len[*seq] != rec_len(payload))
			bail_out("record %" PRIu64 ": %u bytes, not compact",
				 *seq, c->len[*seq]);
	} else if (ret != -ENOBUFS) {
		bail_out("reserve: %d", ret);
	}
	return ret;
}

/* One self-checking record with `payload` bytes (>= its chk size). */
static int wr_payload(struct chan *c, uint32_t payload)
{
	struct tracer_rb_ctx ctx;
	uint64_t seq;
	int ret;

	if (payload < chk_payload_size(0, c->produced))
		bail_out("record %" PRIu64 ": payload %u too small",
			 c->produced, payload);
	ret = reserve(c, &ctx, payload, &seq);
	if (ret)
		return ret;
	chk_fill(ctx.payload, 0, seq);
	tracer__rb_commit(&c->w, &ctx);
	return 0;
}

/* One record with `extra` words after its self-checking part. */
static int wr(struct chan *c, uint32_t extra)
{
	return wr_payload(c, chk_payload_size(0, c->produced) + extra * 8);
}

static int pend_begin(struct chan *c, struct pend *pd, uint32_t extra)
{
	int ret = reserve(c, &pd->ctx,
			  chk_payload_size(0, c->produced) + extra * 8,
			  &pd->seq);

	if (ret)
		return ret;
	/* Garbage until the commit: exposing it would fail the checksum. */
	memset(pd->ctx.payload, 0xAA,
	       c->len[pd->seq] - TRACER_RB_COMPACT_SIZE);
	pd->active = 1;
	return 0;
}

static void pend_end(struct chan *c, struct pend *pd)
{
	chk_fill(pd->ctx.payload, 0, pd->seq);
	tracer__rb_commit(&c->w, &pd->ctx);
	pd->active = 0;
}

/* One record that does not end exactly at a sub-buffer boundary. */
static int wr_not_exact(struct chan *c)
{
	uint64_t off = wc_of(c) & (c->S - 1);
	uint32_t len = rec_len(chk_payload_size(0, c->produced));

	return wr(c, off && off + len == c->S);
}

/*
 * Write records (in an open sub-buffer) until one opens the next
 * sub-buffer (never filling it exactly); returns the sequence number of
 * that one.
 */
static uint64_t wr_until_switch(struct chan *c)
{
	uint64_t cur = (wc_of(c) - 1) & ~(c->S - 1);

	if (!(wc_of(c) & (c->S - 1)))
		bail_out("wr_until_switch: no sub-buffer open");
	for (;;) {
		uint64_t seq = c->produced;

		if (wr_not_exact(c))
			bail_out("wr_until_switch: record discarded");
		if (((wc_of(c) - 1) & ~(c->S - 1)) != cur)
			return seq;
	}
}

/*
 * Check a packet the reader returned for position pos against the model:
 * header fields, every record intact, each accepted record exactly once and
 * in order (in flight mode, records skipped are counted as missing).
 */
static void verify(struct chan *c, const void *buf,
		   const struct tracer_rb_packet_info *info, uint64_t pos,
		   bool partial)
{
	const struct tracer_rb_packet *p = buf;
	struct tracer_rb_record rec;
	struct tracer_rb_cursor cur = { 0 };
	uint64_t n = 0, bytes = TRACER_RB_PACKET_SIZE;
	uint64_t first_ts = 0, last_ts = 0, lost = tracer__rb_lost(&c->r);
	uint64_t seqn = pos / c->S;
	const char *kind = partial ? "partial" : "complete";

	if (p->magic != TRACER_CTF_MAGIC || p->stream_id != 3 ||
	    p->stream_instance_id != 42 || p->tid != 1234 ||
	    p->packet_size != c->S * 8 || p->unit != 0)
		fail(c, "%s packet %" PRIu64 ": identity fields", kind, seqn);
	if (p->packet_seq_num != seqn || info->seq != seqn)
		fail(c, "%s packet %" PRIu64 ": seq %" PRIu64 "/%" PRIu64,
		     kind, seqn, p->packet_seq_num, info->seq);
	if (p->content_size != info->content_bytes * 8)
		fail(c, "%s packet %" PRIu64 ": content_size %" PRIu64
		     " bits, info %" PRIu64 " bytes", kind, seqn,
		     p->content_size, info->content_bytes);
	c->first = c->last = UINT64_MAX;
	while (tracer__rb_packet_next(buf, info->content_bytes, &cur, &rec)) {
		const struct chk_payload *pl = rec.payload;
		uint64_t s, i, skipped = 0;

		if (n == 0)
			first_ts = rec.timestamp;
		last_ts = rec.timestamp;
		n++;
		bytes += rec.size;
		if (!chk_payload_ok(&rec, pl) || pl->stream != 0) {
			fail(c, "%s packet %" PRIu64 ": corrupt record at "
			     "offset %" PRIu64, kind, seqn, cur.off - rec.size);
			continue;
		}
		s = pl->seq;
		if (c->first == UINT64_MAX)
			c->first = s;
		c->last = s;
		if (s >= c->produced || s < c->next || !c->acc[s]) {
			fail(c, "%s packet %" PRIu64 ": record %" PRIu64
			     " read twice, out of order or never written "
			     "(next %" PRIu64 ")", kind, seqn, s, c->next);
			continue;
		}
		for (i = c->next; i < s; i++)
			skipped += c->acc[i];
		if (skipped && c->r.mode == TRACER_RB_DISCARD)
			fail(c, "%s packet %" PRIu64 ": %" PRIu64 " records "
			     "before %" PRIu64 " never read", kind, seqn,
			     skipped, s);
		c->missing += skipped;
		c->next = s + 1;
		c->seen++;
		if (rec.timestamp != c->ts[s] || rec.size != c->len[s])
			fail(c, "record %" PRIu64 ": timestamp or size", s);
	}
	if (n != info->records || bytes != info->content_bytes)
		fail(c, "%s packet %" PRIu64 ": %" PRIu64 " records in %"
		     PRIu64 " bytes, info says %" PRIu64 " in %" PRIu64, kind,
		     seqn, n, bytes, info->records, info->content_bytes);
	if (n && p->timestamp_begin != first_ts)
		fail(c, "%s packet %" PRIu64 ": timestamp_begin %" PRIu64
		     ", first record %" PRIu64, kind, seqn, p->timestamp_begin,
		     first_ts);
	if (!n && (partial || p->timestamp_begin != p->timestamp_end))
		fail(c, "%s packet %" PRIu64 ": empty", kind, seqn);
	if (partial ? p->timestamp_end != last_ts : p->timestamp_end < last_ts)
		fail(c, "%s packet %" PRIu64 ": timestamp_end %" PRIu64
		     ", last record %" PRIu64, kind, seqn, p->timestamp_end,
		     last_ts);
	/*
	 * A partial packet says how many were discarded so far (during the
	 * call); the rest of the same sub-buffer, closed later, cannot say
	 * less. (Across sub-buffers the writer's snapshots need not
	 * increase: a record that fills its sub-buffer exactly writes it at
	 * its commit.)
	 */
	if ((partial && p->events_discarded < c->lost_before) ||
	    (!partial && c->part_valid && c->part_pos == pos &&
	     p->events_discarded < c->part_disc) ||
	    p->events_discarded > lost)
		fail(c, "%s packet %" PRIu64 ": events_discarded %" PRIu64
		     " (lost %" PRIu64 ")", kind, seqn, p->events_discarded,
		     lost);
	c->part_valid = partial;
	c->part_pos = pos;
	c->part_disc = p->events_discarded;
	if (c->r.mode == TRACER_RB_DISCARD && info->records_overwritten)
		fail(c, "%s packet %" PRIu64 ": %" PRIu64 " overwritten in "
		     "discard mode", kind, seqn, info->records_overwritten);
}

/* tracer__rb_read_partial() into copy; verify what it returned. */
static int partial(struct chan *c, struct tracer_rb_packet_info *info)
{
	uint64_t rc = c->r.read_count;
	int ret;

	c->lost_before = tracer__rb_lost(&c->r);
	ret = tracer__rb_read_partial(&c->r, copy, sizeof(copy), info);
	if (ret == 0)
		verify(c, copy, info, rc, true);
	return ret;
}

/* tracer__rb_read() into copy; verify what it returned. */
static int rd(struct chan *c, struct tracer_rb_packet_info *info)
{
	int ret = tracer__rb_read(&c->r, copy, sizeof(copy), info);

	if (ret == 0)
		verify(c, copy, info, c->r.read_count - c->S, false);
	return ret;
}

static const struct tracer_rb_packet *pkt(void)
{
	return (const void *)copy;
}

/* ------------------------------------------------------------------ */

/*
 * The life of one open sub-buffer read in parts, then closed by a record
 * that does not fit, by a flush and by a record that fills it exactly.
 */
static void test_basic(uint64_t start, const char *name)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t k, i, sum, seq0, e;
	int ret;

	chan_open(&c, 1024, 4, TRACER_RB_DISCARD, start);
	seq0 = start / 1024;
	is_int(partial(&c, &info), -ENODATA, "%s: empty channel: -ENODATA",
	       name);

	for (i = 0; i < 3; i++)
		wr(&c, 0);
	is_int(partial(&c, &info), 0, "%s: 3 committed records in the open "
	       "sub-buffer: read in part", name);
	ok(info.records == 3 && c.first == 0 && c.last == 2,
	   "%s: all 3 records, in order (%" PRIu64 " records, %" PRIu64
	   "..%" PRIu64 ")", name, info.records, c.first, c.last);
	ok(pkt()->magic == TRACER_CTF_MAGIC && pkt()->stream_id == 3 &&
	   pkt()->stream_instance_id == 42 && pkt()->tid == 1234 &&
	   pkt()->packet_size == 1024 * 8, "%s: partial packet: CTF magic, "
	   "stream ids, tid, packet size", name);
	sum = TRACER_RB_PACKET_SIZE + c.len[0] + c.len[1] + c.len[2];
	is_u64(pkt()->content_size, sum * 8,
	       "%s: content_size = header + 3 records, in bits", name);
	is_u64(info.content_bytes, sum, "%s: info.content_bytes", name);
	is_u64(pkt()->timestamp_begin, c.ts[0],
	       "%s: timestamp_begin is the first record's", name);
	is_u64(pkt()->timestamp_end, c.ts[2],
	       "%s: timestamp_end is the last record's", name);
	is_u64(pkt()->packet_seq_num, seq0, "%s: packet_seq_num = position "
	       "/ S", name);
	is_u64(pkt()->events_discarded, 0, "%s: events_discarded 0", name);
	is_u64(pkt()->slot_records, 0, "%s: slot_records 0 (first lap)",
	       name);
	is_int(partial(&c, &info), -ENODATA, "%s: read again: -ENODATA",
	       name);
	is_int(rd(&c, &info), -EAGAIN, "%s: tracer__rb_read: the sub-buffer "
	       "is still open", name);

	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "%s: 2 more records: read in part",
	       name);
	ok(info.records == 2 && c.first == 3 && c.last == 4, "%s: only the "
	   "2 new records (%" PRIu64 ", %" PRIu64 "..%" PRIu64 ")", name,
	   info.records, c.first, c.last);
	is_u64(info.content_bytes, TRACER_RB_PACKET_SIZE + c.len[3] + c.len[4],
	       "%s: content = header + the 2 new records", name);
	ok(pkt()->timestamp_begin == c.ts[3] && pkt()->timestamp_end ==
	   c.ts[4], "%s: timestamps of the 2 new records", name);
	is_u64(pkt()->slot_records, 3, "%s: slot_records counts the 3 read "
	       "before", name);
	is_u64(pkt()->packet_seq_num, seq0, "%s: same packet_seq_num", name);
	is_int(partial(&c, &info), -ENODATA, "%s: -ENODATA again", name);

	/* A record that does not fit closes the sub-buffer. */
	k = wr_until_switch(&c);
	is_int(partial(&c, &info), -EAGAIN, "%s: closed sub-buffer waiting: "
	       "-EAGAIN", name);
	is_int(rd(&c, &info), 0, "%s: tracer__rb_read returns the closed "
	       "sub-buffer", name);
	ok(info.records == k - 5 && c.first == 5 && c.last == k - 1,
	   "%s: only the rest: records 5..%" PRIu64 " (%" PRIu64 ", %"
	   PRIu64 "..%" PRIu64 ")", name, k - 1, info.records, c.first,
	   c.last);
	for (sum = TRACER_RB_PACKET_SIZE, i = 5; i < k; i++)
		sum += c.len[i];
	is_u64(pkt()->content_size, sum * 8, "%s: content_size = header + "
	       "the rest", name);
	is_u64(pkt()->timestamp_begin, c.ts[5], "%s: timestamp_begin is the "
	       "first remaining record's", name);
	is_u64(pkt()->timestamp_end, c.ts[k], "%s: timestamp_end is the "
	       "closing time (the switching record's)", name);
	is_u64(pkt()->slot_records, 5, "%s: slot_records counts the 5 read "
	       "in part", name);
	is_u64(info.seq, seq0, "%s: info.seq", name);

	/* The switching record, read in part; then a flush: empty rest. */
	is_int(partial(&c, &info), 0, "%s: next open sub-buffer: read in "
	       "part", name);
	ok(info.records == 1 && c.first == k && info.seq ==
	   ((start + 1024) / 1024), "%s: its one record, next seq", name);
	tracer__rb_flush(&c.w);
	is_int(partial(&c, &info), -EAGAIN, "%s: after a flush: -EAGAIN",
	       name);
	is_int(rd(&c, &info), 0, "%s: flushed sub-buffer read", name);
	ok(info.records == 0 && info.content_bytes == TRACER_RB_PACKET_SIZE &&
	   pkt()->timestamp_begin == pkt()->timestamp_end &&
	   pkt()->slot_records == 1, "%s: nothing left in it: empty packet "
	   "(%" PRIu64 " records, %" PRIu64 " bytes)", name, info.records,
	   info.content_bytes);
	is_int(partial(&c, &info), -ENODATA, "%s: nothing open: -ENODATA",
	       name);

	/* A record that fills the sub-buffer exactly closes it. */
	wr(&c, 0);
	wr(&c, 3);
	is_int(partial(&c, &info), 0, "%s: third sub-buffer read in part",
	       name);
	e = c.produced;
	ret = wr_payload(&c, (uint32_t)(1024 - (wc_of(&c) & 1023) -
					TRACER_RB_COMPACT_SIZE));
	ok(ret == 0 && wc_of(&c) == start + 3 * 1024, "%s: a record fills "
	   "it exactly", name);
	is_int(rd(&c, &info), 0, "%s: readable without a flush", name);
	ok(info.records == 1 && c.first == e && info.content_bytes ==
	   TRACER_RB_PACKET_SIZE + c.len[e] && wc_of(&c) - c.r.read_count == 0 &&
	   pkt()->timestamp_begin == c.ts[e] && pkt()->timestamp_end ==
	   c.ts[e] && pkt()->slot_records == 2, "%s: only that record "
	   "(%" PRIu64 " records, first %"
	   PRIu64 ", %" PRIu64 " bytes, slot_records %" PRIu64 ")", name,
	   info.records, c.first, info.content_bytes,
	   pkt()->slot_records);
	is_int(partial(&c, &info), -ENODATA, "%s: -ENODATA at the boundary",
	       name);

	ok(c.bad == 0, "%s: every packet verified %s", name, c.error);
	ok(c.seen == c.produced && c.next == c.produced &&
	   c.r.records_overwritten == 0 && tracer__rb_lost(&c.r) == 0,
	   "%s: each of the %" PRIu64 " records read once, none lost", name,
	   c.produced);
	if (start > UINT64_MAX / 2)
		ok(wc_of(&c) < start, "%s: the write count wrapped past 2^64 "
		   "(%" PRIu64 ")", name, wc_of(&c));
	chan_close(&c);
}

/* A record reserved and not committed. */
static void test_pending(void)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	struct pend pd;
	uint64_t k, a, b;

	chan_open(&c, 512, 4, TRACER_RB_DISCARD, 0);
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "pending: 2 records read in part");
	pend_begin(&c, &pd, 0);
	is_int(partial(&c, &info), -EBUSY, "pending: a reserved, uncommitted "
	       "record: -EBUSY");
	wr(&c, 0);
	is_int(partial(&c, &info), -EBUSY, "pending: a committed record after "
	       "it: still -EBUSY");
	is_int(rd(&c, &info), -EAGAIN, "pending: tracer__rb_read: -EAGAIN");
	pend_end(&c, &pd);
	is_int(partial(&c, &info), 0, "pending: committed: read in part");
	ok(info.records == 2 && c.first == 2 && c.last == 3, "pending: the "
	   "committed record and the one after it (%" PRIu64 ", %" PRIu64
	   "..%" PRIu64 ")", info.records, c.first, c.last);
	is_int(partial(&c, &info), -ENODATA, "pending: then -ENODATA");

	/* The record that opens a sub-buffer, uncommitted. */
	tracer__rb_flush(&c.w);
	is_int(rd(&c, &info), 0, "pending: flushed sub-buffer read");
	a = c.produced;
	pend_begin(&c, &pd, 0);
	is_int(partial(&c, &info), -EBUSY, "pending: the record opening a "
	       "sub-buffer, uncommitted: -EBUSY");
	pend_end(&c, &pd);
	is_int(partial(&c, &info), 0, "pending: committed: read in part");
	ok(info.records == 1 && c.first == a, "pending: that record");

	/*
	 * An uncommitted record in a sub-buffer that a later record closed:
	 * tracer__rb_read() has nothing to return (-EAGAIN), so the partial
	 * read must say -EBUSY (a record is being written), not -EAGAIN
	 * ("complete sub-buffers are waiting"), or a caller alternating the
	 * two never learns that it has to wait.
	 */
	b = c.produced;
	pend_begin(&c, &pd, 0);
	k = wr_until_switch(&c);
	is_int(rd(&c, &info), -EAGAIN, "pending: the closed sub-buffer holding "
	       "it is not complete: tracer__rb_read -EAGAIN");
	is_int(partial(&c, &info), -EBUSY, "pending: uncommitted record in a "
	       "closed sub-buffer: read_partial -EBUSY");
	pend_end(&c, &pd);
	is_int(rd(&c, &info), 0, "pending: committed: the closed sub-buffer "
	       "is read");
	ok(info.records == k - b && c.first == b && c.last == k - 1,
	   "pending: the rest of it, from the committed record (%" PRIu64
	   ", %" PRIu64 "..%" PRIu64 ")", info.records, c.first, c.last);
	is_int(partial(&c, &info), 0, "pending: then the open one in part");
	ok(info.records == 1 && c.first == k, "pending: its record");
	ok(c.bad == 0 && c.seen == c.produced, "pending: every record read "
	   "once, in order, intact %s", c.error);
	chan_close(&c);
}

/* Complete sub-buffers first; losses; caller's buffer. */
static void test_eagain(void)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t k, e, lost;

	chan_open(&c, 512, 4, TRACER_RB_DISCARD, 0);
	is_int(tracer__rb_read_partial(&c.r, copy, 511, &info), -ENOBUFS,
	       "eagain: a buffer smaller than a sub-buffer: -ENOBUFS");
	is_int(tracer__rb_read_partial(&c.r, copy + 4, 1024, &info), -EINVAL,
	       "eagain: a misaligned buffer: -EINVAL");
	wr(&c, 0);
	k = wr_until_switch(&c);
	is_int(partial(&c, &info), -EAGAIN, "eagain: a complete sub-buffer "
	       "waits: -EAGAIN");
	is_int(rd(&c, &info), 0, "eagain: tracer__rb_read takes it");
	ok(info.records == k && c.first == 0, "eagain: all %" PRIu64
	   " records of it", k);
	is_int(partial(&c, &info), 0, "eagain: then the open one in part");
	ok(info.records == 1 && c.first == k, "eagain: its record");
	ok(c.bad == 0, "eagain: verified %s", c.error);
	chan_close(&c);

	/* Discard mode, buffer full: the writer drops records. */
	chan_open(&c, 512, 2, TRACER_RB_DISCARD, 0);
	while (tracer__rb_lost(&c.r) < 3)
		wr_not_exact(&c);
	lost = tracer__rb_lost(&c.r);
	is_int(partial(&c, &info), -EAGAIN, "full: -EAGAIN");
	is_int(rd(&c, &info), 0, "full: first sub-buffer read");
	is_int(partial(&c, &info), 0, "full: the open one, in part");
	is_u64(pkt()->events_discarded, lost, "full: partial packet: "
	       "events_discarded is the channel's count (%" PRIu64 ")", lost);
	e = c.produced;
	k = wr_until_switch(&c);
	is_u64(tracer__rb_lost(&c.r), lost, "full: room again: no more "
	       "losses");
	is_int(rd(&c, &info), 0, "full: the rest of the partly read one");
	ok(info.records == k - e && (k == e || c.first == e) &&
	   pkt()->events_discarded == lost, "full: the %" PRIu64 " records "
	   "after, events_discarded %" PRIu64, k - e,
	   pkt()->events_discarded);
	tracer__rb_flush(&c.w);
	is_int(rd(&c, &info), 0, "full: last one");
	ok(c.bad == 0 && c.seen + tracer__rb_lost(&c.r) == c.produced &&
	   c.seen == c.produced - lost, "full: recorded + lost == produced "
	   "(%" PRIu64 " + %" PRIu64 " == %" PRIu64 ") %s", c.seen,
	   tracer__rb_lost(&c.r), c.produced, c.error);
	chan_close(&c);
}

/* Flight mode: the partly read sub-buffer is overwritten. */
static void test_flight_lapped(uint64_t start, const char *name)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t f;
	int ret;

	chan_open(&c, 512, 4, TRACER_RB_FLIGHT, start);
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "%s: 2 records read in part", name);
	while (wc_of(&c) - start < c.B + 2 * c.S)
		wr(&c, 0);
	tracer__rb_flush(&c.w);
	f = UINT64_MAX;
	while ((ret = rd(&c, &info)) == 0)
		if (f == UINT64_MAX)
			f = c.first;
	is_int(ret, -EAGAIN, "%s: drained", name);
	ok(c.r.packets_overwritten >= 2 && f > 2 && f != UINT64_MAX,
	   "%s: the writer went round: %" PRIu64 " packets overwritten, "
	   "first record read after them %" PRIu64, name,
	   c.r.packets_overwritten, f);
	is_u64(c.r.records_overwritten, f - 2, "%s: overwritten = the "
	       "records after the 2 read in part, up to the first one read",
	       name);
	is_u64(c.missing, c.r.records_overwritten, "%s: exactly the records "
	       "never read", name);
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "%s: next open sub-buffer in part",
	       name);
	ok(info.records == 2 && info.records_overwritten == 0 &&
	   c.first == c.produced - 2, "%s: its 2 records, nothing overwritten "
	   "before them", name);
	ok(c.bad == 0 && c.seen + c.r.records_overwritten == c.produced &&
	   tracer__rb_lost(&c.r) == 0, "%s: recorded + overwritten == "
	   "produced (%" PRIu64 " + %" PRIu64 " == %" PRIu64 ") %s", name,
	   c.seen, c.r.records_overwritten, c.produced, c.error);
	chan_close(&c);
}

/* A writer that scribbles over its open sub-buffer. */
static void test_corrupt(void)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_packet *sp;
	uint64_t *hw, saved, size_bits = 0xfffULL << TRACER__RB_SIZE_SHIFT;
	struct chan c;
	char want[200];
	uint64_t k, l;

	/* Packet magic. */
	chan_open(&c, 512, 4, TRACER_RB_DISCARD, 0);
	wr(&c, 0);
	wr(&c, 0);
	sp = (void *)at(&c, 0);
	sp->magic = 0xdeadbeef;
	is_int(partial(&c, &info), -EBADMSG, "corrupt: packet magic: "
	       "-EBADMSG");
	ok(strcmp(c.r.error, "packet 0: bad magic 0xdeadbeef at offset 0")
	   == 0, "corrupt: the error names it: %s", c.r.error);
	is_int(partial(&c, &info), -EBADMSG, "corrupt: and again");
	k = wr_until_switch(&c);
	is_int(rd(&c, &info), -EBADMSG, "corrupt: once closed, the packet is "
	       "skipped");
	is_u64(c.r.read_count, 512, "corrupt: the reader moved past it");
	c.next = k;		/* records 0..k-1 went with it */
	is_int(partial(&c, &info), 0, "corrupt: the reader carries on: next "
	       "open sub-buffer in part");
	ok(info.records == 1 && c.first == k && c.bad == 0, "corrupt: its "
	   "record, intact %s", c.error);
	chan_close(&c);

	/* A record size, first partial read. */
	chan_open(&c, 512, 4, TRACER_RB_DISCARD, 0);
	wr(&c, 0);
	wr(&c, 0);
	wr(&c, 0);
	l = TRACER_RB_PACKET_SIZE + c.len[0];
	hw = (void *)(at(&c, 0) + l);
	saved = *hw;
	*hw |= size_bits;	/* 32760 bytes: beyond the packet */
	is_int(partial(&c, &info), -EBADMSG, "corrupt: a record size: "
	       "-EBADMSG");
	snprintf(want, sizeof(want), "packet 0: record at offset %" PRIu64
		 " has a bad header", l);
	ok(strcmp(c.r.error, want) == 0, "corrupt: the error names it: %s",
	   c.r.error);
	*hw = saved;	/* the writer was only having a bad moment */
	is_int(partial(&c, &info), 0, "corrupt: repaired: all 3 records");
	ok(info.records == 3 && c.first == 0 && c.last == 2 && c.bad == 0,
	   "corrupt: nothing was half-consumed by the failed read %s",
	   c.error);

	/* A record size after a partial read. */
	wr(&c, 0);
	wr(&c, 0);
	if (wc_of(&c) > 512)
		bail_out("corrupt: records 0..4 do not fit in a sub-buffer");
	l = TRACER_RB_PACKET_SIZE + c.len[0] + c.len[1] + c.len[2];
	hw = (void *)(at(&c, 0) + l);
	*hw &= ~size_bits;	/* 0 bytes: no record is that short */
	is_int(partial(&c, &info), -EBADMSG, "corrupt: a record size after a "
	       "partial read: -EBADMSG");
	snprintf(want, sizeof(want), "packet 0: record at offset ");
	ok(strncmp(c.r.error, want, strlen(want)) == 0 &&
	   strstr(c.r.error, "has a bad header"), "corrupt: the error names "
	   "it: "
	   "%s", c.r.error);
	k = wr_until_switch(&c);
	is_int(rd(&c, &info), -EBADMSG, "corrupt: once closed: skipped");
	c.next = k;
	is_int(partial(&c, &info), 0, "corrupt: the reader carries on");
	ok(info.records == 1 && c.first == k && c.bad == 0,
	   "corrupt: next record, intact %s", c.error);
	chan_close(&c);

	/* The closed packet's content_size shrank below what was read. */
	chan_open(&c, 512, 4, TRACER_RB_DISCARD, 0);
	wr(&c, 0);
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "corrupt: 3 records read in part");
	l = info.content_bytes;
	tracer__rb_flush(&c.w);
	sp = (void *)at(&c, 0);
	sp->content_size = (l - 8) * 8;
	is_int(rd(&c, &info), -EBADMSG, "corrupt: closed packet shorter than "
	       "what was read of it: -EBADMSG");
	snprintf(want, sizeof(want), "packet 0: content size %" PRIu64
		 " bits shrank below what was read of it", (l - 8) * 8);
	ok(strcmp(c.r.error, want) == 0, "corrupt: the error says so: %s",
	   c.r.error);
	k = c.produced;
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial(&c, &info), 0, "corrupt: the reader carries on");
	ok(info.records == 2 && c.first == k && info.content_bytes ==
	   TRACER_RB_PACKET_SIZE + c.len[k] + c.len[k + 1] && c.bad == 0,
	   "corrupt: the next sub-buffer whole, nothing stripped from it %s",
	   c.error);
	chan_close(&c);
}

/* ------------------------------------------------------------------ */
/*
 * The writer runs while tracer__rb_read_partial() copies, made
 * deterministic: the open sub-buffer (one page) is protected, the copy
 * faults on it, and the SIGSEGV handler unprotects it and runs the writer
 * (whose write path is async-signal-safe) before the copy resumes.
 */

#define PAGE 4096u

static struct {
	struct chan *c;
	char *page;
	void (*writer)(struct chan *c);
	int faults;
} trap;

static void trap_handler(int sig, siginfo_t *si, void *uc)
{
	char *addr = si->si_addr;

	(void)uc;
	if (addr < trap.page || addr >= trap.page + PAGE || trap.faults++) {
		signal(sig, SIG_DFL);	/* a real fault: crash on return */
		return;
	}
	mprotect(trap.page, PAGE, PROT_READ | PROT_WRITE);
	trap.writer(trap.c);
}

static int partial_trapped(struct chan *c, void (*writer)(struct chan *),
			   struct tracer_rb_packet_info *info)
{
	struct sigaction sa, old;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	trap.c = c;
	trap.page = at(c, c->r.read_count);
	trap.writer = writer;
	trap.faults = 0;
	if (c->S != PAGE || (uintptr_t)trap.page % PAGE ||
	    sigaction(SIGSEGV, &sa, &old) ||
	    mprotect(trap.page, PAGE, PROT_NONE))
		bail_out("cannot set the trap");
	ret = partial(c, info);
	mprotect(trap.page, PAGE, PROT_READ | PROT_WRITE);
	sigaction(SIGSEGV, &old, NULL);
	if (trap.faults != 1)
		bail_out("the copy did not fault (%d)", trap.faults);
	return ret;
}

static uint64_t race_lost;	/* lost when the writer closed the sub-buffer */

/* Close the open sub-buffer, then fill the buffer until 5 are dropped. */
static void race_close_and_drop(struct chan *c)
{
	uint64_t lost;

	wr_until_switch(c);
	race_lost = tracer__rb_lost(&c->r);
	lost = race_lost;
	while (tracer__rb_lost(&c->r) < lost + 5)
		wr_not_exact(c);
}

/* Flight mode: go round the ring, over the sub-buffer being copied. */
static void race_lap(struct chan *c)
{
	uint64_t pos = c->r.read_count;

	while (wc_of(c) - pos <= c->B + c->S)
		wr(c, 0);
}

static void test_race(void)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t k, n, i, before, disc;
	int ret;

	/*
	 * Discard mode. The partial packet may only claim the records
	 * discarded before its last record's successors were written: here
	 * the sub-buffer is closed (with events_discarded = race_lost) and
	 * only then are 5 more records dropped, while the copy is under way.
	 */
	chan_open(&c, PAGE, 4, TRACER_RB_DISCARD, 0);
	while (tracer__rb_lost(&c.r) < 2)
		wr_not_exact(&c);
	while (rd(&c, &info) == 0)
		;
	before = tracer__rb_lost(&c.r);
	for (n = 0, i = c.next; i < c.produced; i++)
		n += c.acc[i];		/* accepted in the open sub-buffer */
	k = c.produced;
	while (!c.acc[k - 1])
		k--;
	ret = partial_trapped(&c, race_close_and_drop, &info);
	disc = pkt()->events_discarded;
	ok(ret == -EAGAIN || ret == -EBUSY || (ret == 0 && n > 0 &&
	   info.records == n && c.last == k - 1),
	   "race: the copy made while the writer closed the sub-buffer: "
	   "its %" PRIu64 " records (%d, %" PRIu64 " records, last %" PRIu64
	   ")", n, ret, info.records, c.last);
	ok(ret != 0 || (disc >= before && disc <= race_lost),
	   "race: partial packet events_discarded %" PRIu64 " is at most "
	   "the %" PRIu64 " of the closed sub-buffer (%" PRIu64 " when "
	   "called, %" PRIu64 " now)", disc, race_lost, before,
	   tracer__rb_lost(&c.r));
	while (rd(&c, &info) == 0)
		;
	tracer__rb_flush(&c.w);
	while (rd(&c, &info) == 0)
		;
	is_int(partial(&c, &info), -ENODATA, "race: drained");
	ok(c.bad == 0 && c.seen + tracer__rb_lost(&c.r) == c.produced,
	   "race: every record read once, in order; recorded + lost == "
	   "produced (%" PRIu64 " + %" PRIu64 " == %" PRIu64 ") %s", c.seen,
	   tracer__rb_lost(&c.r), c.produced, c.error);
	chan_close(&c);

	/* Flight mode: the sub-buffer is overwritten during the copy. */
	chan_open(&c, PAGE, 4, TRACER_RB_FLIGHT, 0);
	wr(&c, 0);
	wr(&c, 0);
	wr(&c, 0);
	is_int(partial_trapped(&c, race_lap, &info), -ESTALE,
	       "race: flight: overwritten during the copy: -ESTALE");
	is_int(partial(&c, &info), -EAGAIN, "race: flight: then -EAGAIN");
	tracer__rb_flush(&c.w);
	while ((ret = rd(&c, &info)) == 0)
		;
	is_int(ret, -EAGAIN, "race: flight: drained");
	ok(c.bad == 0 && c.first != UINT64_MAX && c.next == c.produced &&
	   c.missing >= 3 && c.missing == c.r.records_overwritten &&
	   c.seen + c.r.records_overwritten == c.produced, "race: flight: "
	   "recorded + overwritten == produced (%" PRIu64 " + %" PRIu64
	   " == %" PRIu64 "), the 3 records copied counted overwritten %s",
	   c.seen, c.r.records_overwritten, c.produced, c.error);
	chan_close(&c);
}

/* ------------------------------------------------------------------ */
/* Long randomized single-threaded run, every return code predicted.  */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

struct model_read {
	uint64_t cons_pos, cons_len;	/* bytes of the open one returned */
	uint64_t partial_ok, nodata, busy, again, reads, stripped, known;
};

/* What tracer__rb_read_partial() must return now; *alt: also accepted. */
static int expect_partial(const struct chan *c, const struct model_read *m,
			  const struct pend *pd, int *alt)
{
	uint64_t rc = c->r.read_count, used = wc_of(c) - rc;

	*alt = 1;
	if (used >= c->S) {
		/* uncommitted record in the closed sub-buffer at rc */
		if (pd->active && pd->ctx.commit_pos - rc < c->S) {
			*alt = -EAGAIN;	/* see test_pending */
			return -EBUSY;
		}
		return -EAGAIN;
	}
	if (used == 0 || (m->cons_len && m->cons_pos == rc &&
			  used <= m->cons_len))
		return -ENODATA;
	return pd->active ? -EBUSY : 0;
}

/* What tracer__rb_read() must return now, and the position it reads. */
static int expect_read(const struct chan *c, const struct pend *pd,
		       uint64_t *pos)
{
	uint64_t rc = c->r.read_count, wc = wc_of(c);

	if (c->r.mode == TRACER_RB_FLIGHT && wc - rc > c->B)
		rc = TRACER_ALIGN_UP(wc - c->B, c->S);
	*pos = rc;
	if (wc - rc < c->S)
		return -EAGAIN;
	if (pd->active && pd->ctx.commit_pos - rc < c->S)
		return -EAGAIN;
	return 0;
}

static void rand_partial(struct chan *c, struct model_read *m,
			 const struct pend *pd)
{
	struct tracer_rb_packet_info info;
	uint64_t rc = c->r.read_count, wc = wc_of(c);
	int alt, want = expect_partial(c, m, pd, &alt);
	int ret = partial(c, &info);

	if (ret != want && ret != alt)
		fail(c, "read_partial at %" PRIu64 " (write %" PRIu64 "): "
		     "%d, want %d %s", rc, wc, ret, want, c->r.error);
	if (ret == alt)
		m->known++;
	switch (ret) {
	case 0:
		m->partial_ok++;
		m->cons_pos = rc;
		m->cons_len = wc - rc;
		break;
	case -ENODATA: m->nodata++; break;
	case -EBUSY: m->busy++; break;
	case -EAGAIN: m->again++; break;
	default: break;
	}
}

static void rand_read(struct chan *c, struct model_read *m,
		      const struct pend *pd, int max)
{
	struct tracer_rb_packet_info info;
	uint64_t pos;
	int want, ret;

	while (max-- > 0) {
		want = expect_read(c, pd, &pos);
		ret = rd(c, &info);
		if (ret != want)
			fail(c, "read at %" PRIu64 ": %d, want %d %s",
			     c->r.read_count, ret, want, c->r.error);
		if (ret)
			return;
		m->reads++;
		if (c->r.read_count != pos + c->S)
			fail(c, "read: packet at %" PRIu64 ", want %" PRIu64,
			     c->r.read_count - c->S, pos);
		if (m->cons_len && m->cons_pos == pos) {
			m->stripped++;
			m->cons_len = 0;
		}
	}
}

static void test_random(enum tracer_rb_mode mode, uint64_t start,
			const char *name, uint64_t seed)
{
	struct model_read m;
	struct chan c;
	struct pend pd;
	struct tracer_rb_packet_info info;
	int i, k, ret;
	uint32_t op;

	memset(&m, 0, sizeof(m));
	memset(&pd, 0, sizeof(pd));
	rng_state = seed;
	chan_open(&c, 512, 4, mode, start);
	for (i = 0; i < 150000; i++) {
		op = rnd(100);
		if (op < 40) {
			for (k = 1 + (int)rnd(3); k > 0; k--)
				wr(&c, rnd(4) ? rnd(6) : rnd(40));
		} else if (op < 65) {
			rand_partial(&c, &m, &pd);
		} else if (op < 82) {
			rand_read(&c, &m, &pd, 1 + (int)rnd(6));
		} else if (op < 86) {
			tracer__rb_flush(&c.w);
		} else if (op < 92) {
			if (!pd.active)
				pend_begin(&c, &pd, rnd(10));
		} else if (pd.active) {
			pend_end(&c, &pd);
		}
	}
	if (pd.active)
		pend_end(&c, &pd);
	tracer__rb_flush(&c.w);
	rand_read(&c, &m, &pd, 1 << 20);
	ret = partial(&c, &info);
	if (ret != -ENODATA)
		fail(&c, "at the end: read_partial %d, want -ENODATA", ret);

	ok(c.bad == 0, "%s: %" PRIu64 " records, %" PRIu64 " partial reads, %"
	   PRIu64 " reads: every record once, in order, intact, headers and "
	   "return codes as predicted %s", name, c.produced, m.partial_ok,
	   m.reads, c.error);
	is_u64(c.seen + tracer__rb_lost(&c.r) + c.r.records_overwritten,
	       c.produced, "%s: recorded + lost + overwritten == produced "
	       "(%" PRIu64 " + %" PRIu64 " + %" PRIu64 ")", name, c.seen,
	       tracer__rb_lost(&c.r), c.r.records_overwritten);
	is_u64(c.missing, c.r.records_overwritten, "%s: the records never "
	       "read are exactly those counted overwritten", name);
	ok(m.partial_ok > 2000 && m.stripped > 1000 && m.nodata > 1000 &&
	   m.busy > 500 && m.again > 1000 && tracer__rb_lost(&c.r) > 0 &&
	   (mode == TRACER_RB_DISCARD ? c.r.records_overwritten == 0 :
	    c.r.records_overwritten > 0), "%s: coverage: %" PRIu64
	   " partial, %" PRIu64 " stripped, %" PRIu64 " -ENODATA, %" PRIu64
	   " -EBUSY, %" PRIu64 " -EAGAIN, %" PRIu64 " lost, %" PRIu64
	   " overwritten", name, m.partial_ok, m.stripped, m.nodata, m.busy,
	   m.again, tracer__rb_lost(&c.r), c.r.records_overwritten);
	if (m.known)
		diag("%s: %" PRIu64 " times read_partial returned -EAGAIN for "
		     "an uncommitted record in a closed sub-buffer", name,
		     m.known);
	if (start > UINT64_MAX / 2)
		ok(wc_of(&c) < start, "%s: the write count wrapped past 2^64",
		   name);
	chan_close(&c);
}

/* ------------------------------------------------------------------ */
/* A reader thread doing partial and complete reads while a writer     */
/* thread writes.                                                      */

#define T_EVENTS	1000000u
#define T_HANDSHAKE	5000u

struct tshared {
	struct chan c;			/* only region, S, B, w, r used */
	uint8_t *acc;			/* writer: accepted, by seq */
	uint64_t *got;			/* reader: seqs read, in order */
	uint64_t ngot;
	int done;			/* writer finished and flushed */
	int want_partial;		/* writer waits for a partial read */
	uint64_t partial_pkts, complete_pkts, stripped, handshakes;
	uint64_t partial_positions;	/* distinct sub-buffers read in part */
	uint64_t last_partial_pos;
	int have_partial;
	uint64_t prev_seq, prev_ts, discarded;
	uint64_t bad;
	char error[300];
	char buf[1 << 16] __attribute__((aligned(64)));
};

static void tfail(struct tshared *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void tfail(struct tshared *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
}

static void *twriter(void *arg)
{
	struct tshared *t = arg;
	struct tracer_rb_ctx ctx;
	uint32_t i, pl;

	for (i = 0; i < T_EVENTS; i++) {
		pl = chk_payload_size(0, i) + (uint32_t)(chk_mix(i) % 9) * 8;
		if (tracer__rb_reserve(&t->c.w, &ctx, 100, pl) == 0) {
			t->acc[i] = 1;
			chk_fill(ctx.payload, 0, i);
			tracer__rb_commit(&t->c.w, &ctx);
		}
		if (i % T_HANDSHAKE == T_HANDSHAKE / 2) {
			__atomic_store_n(&t->want_partial, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&t->want_partial,
					       __ATOMIC_ACQUIRE))
				sched_yield();
		}
	}
	tracer__rb_flush(&t->c.w);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Check a packet from its contents alone; append its seqs to got. */
static void tcheck(struct tshared *t, const struct tracer_rb_packet_info *info,
		   uint64_t pos, bool partial_pkt)
{
	const struct tracer_rb_packet *p = (const void *)t->buf;
	struct tracer_rb_record rec;
	struct tracer_rb_cursor cur = { 0 };
	uint64_t n = 0, bytes = TRACER_RB_PACKET_SIZE, first_ts = 0;
	uint64_t last_ts = 0, lost = tracer__rb_lost(&t->c.r);
	uint64_t seqn = pos / t->c.S;

	if (p->magic != TRACER_CTF_MAGIC || p->packet_seq_num != seqn ||
	    info->seq != seqn || p->stream_instance_id != 42)
		tfail(t, "packet %" PRIu64 ": header", seqn);
	while (tracer__rb_packet_next(t->buf, info->content_bytes, &cur,
				      &rec)) {
		const struct chk_payload *pl = rec.payload;

		if (!n)
			first_ts = rec.timestamp;
		last_ts = rec.timestamp;
		n++;
		bytes += rec.size;
		if (!chk_payload_ok(&rec, pl)) {
			tfail(t, "packet %" PRIu64 ": corrupt record", seqn);
			continue;
		}
		if (t->ngot && pl->seq <= t->prev_seq)
			tfail(t, "packet %" PRIu64 ": record %" PRIu64 " after "
			      "%" PRIu64, seqn, pl->seq, t->prev_seq);
		if (rec.timestamp < t->prev_ts)
			tfail(t, "record %" PRIu64 ": time went back", pl->seq);
		if (t->ngot < T_EVENTS)
			t->got[t->ngot++] = pl->seq;
		t->prev_seq = pl->seq;
		t->prev_ts = rec.timestamp;
	}
	if (n != info->records || bytes != info->content_bytes ||
	    (n && p->timestamp_begin != first_ts) ||
	    (partial_pkt ? !n || p->timestamp_end != last_ts :
	     p->timestamp_end < last_ts) ||
	    p->events_discarded < t->discarded || p->events_discarded > lost ||
	    (t->c.r.mode == TRACER_RB_DISCARD && info->records_overwritten))
		tfail(t, "%s packet %" PRIu64 ": %" PRIu64 " records, %" PRIu64
		      " bytes, info %" PRIu64 "/%" PRIu64 ", ts %" PRIu64 "..%"
		      PRIu64 " records %" PRIu64 "..%" PRIu64 ", discarded %"
		      PRIu64 " (%" PRIu64 "..%" PRIu64 ")",
		      partial_pkt ? "partial" : "complete", seqn, n, bytes,
		      info->records, info->content_bytes, p->timestamp_begin,
		      p->timestamp_end, first_ts, last_ts, p->events_discarded,
		      t->discarded, lost);
	t->discarded = p->events_discarded;
}

/* Read every complete sub-buffer; returns how many. */
static uint64_t tdrain(struct tshared *t)
{
	struct tracer_rb_packet_info info;
	uint64_t n = 0;
	int ret;

	for (;;) {
		ret = tracer__rb_read(&t->c.r, t->buf, sizeof(t->buf), &info);
		if (ret == -ESTALE)
			continue;
		if (ret == -EAGAIN)
			return n;
		if (ret) {
			tfail(t, "read: %d %s", ret, t->c.r.error);
			return n;
		}
		n++;
		t->complete_pkts++;
		if (t->have_partial &&
		    t->c.r.read_count - t->c.S == t->last_partial_pos) {
			t->stripped++;
			t->have_partial = 0;
		}
		tcheck(t, &info, t->c.r.read_count - t->c.S, false);
	}
}

static void *treader(void *arg)
{
	struct tshared *t = arg;
	struct tracer_rb_packet_info info;
	uint64_t rc;
	int last = 0, ret;

	while (!last) {
		last = __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
		tdrain(t);
		rc = t->c.r.read_count;
		ret = tracer__rb_read_partial(&t->c.r, t->buf, sizeof(t->buf),
					      &info);
		if (ret == 0) {
			t->partial_pkts++;
			if (!t->have_partial || t->last_partial_pos != rc)
				t->partial_positions++;
			t->have_partial = 1;
			t->last_partial_pos = rc;
			tcheck(t, &info, rc, true);
		} else if (ret != -ENODATA && ret != -EBUSY &&
			   ret != -EAGAIN && ret != -ESTALE) {
			tfail(t, "read_partial: %d %s", ret, t->c.r.error);
		} else if (last && ret != -ENODATA) {
			tfail(t, "writer done: read_partial %d, want "
			      "-ENODATA", ret);
		}
		if ((ret == 0 || ret == -ENODATA) &&
		    __atomic_load_n(&t->want_partial, __ATOMIC_ACQUIRE)) {
			t->handshakes++;
			__atomic_store_n(&t->want_partial, 0,
					 __ATOMIC_RELEASE);
		}
		if (ret)
			sched_yield();
	}
	return NULL;
}

static void test_threads(enum tracer_rb_mode mode, uint64_t start,
			 const char *name)
{
	struct tshared *t = aligned_alloc(64, TRACER_ALIGN_UP(sizeof(*t),
							       64));
	struct tracer_rb_config cfg = { .subbuf_size = 1024,
		.subbuf_count = 4, .mode = mode, .stream_id = 3,
		.stream_instance_id = 42, .start_count = start };
	uint64_t i, j = 0, missing = 0, accepted = 0, lost;
	pthread_t wt, rt;

	if (!t)
		bail_out("out of memory");
	memset(t, 0, sizeof(*t));
	t->c.S = 1024;
	t->c.B = 4096;
	t->c.region = chk_channel(&cfg, &t->c.size);
	t->acc = calloc(T_EVENTS, 1);
	t->got = calloc(T_EVENTS, sizeof(uint64_t));
	if (!t->c.region || !t->acc || !t->got ||
	    tracer__rb_writer_attach(&t->c.w, t->c.region, t->c.size, 1234,
				     NULL) ||
	    tracer__rb_reader_attach(&t->c.r, t->c.region, t->c.size, NULL))
		bail_out("cannot create a channel");
	pthread_create(&rt, NULL, treader, t);
	pthread_create(&wt, NULL, twriter, t);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);

	/* got must be the accepted records, in order, minus overwritten. */
	for (i = 0; i < T_EVENTS; i++) {
		if (!t->acc[i])
			continue;
		accepted++;
		if (j < t->ngot && t->got[j] == i)
			j++;
		else
			missing++;
	}
	lost = tracer__rb_lost(&t->c.r);
	ok(t->bad == 0 && j == t->ngot, "%s: %" PRIu64 " partial and %" PRIu64
	   " complete packets read while writing: every record read was "
	   "written, once, in order, intact %s", name, t->partial_pkts,
	   t->complete_pkts, t->error);
	is_u64(lost, T_EVENTS - accepted, "%s: lost == records the writer "
	       "refused", name);
	is_u64(missing, mode == TRACER_RB_DISCARD ? 0 :
	       t->c.r.records_overwritten, "%s: records accepted and never "
	       "read == overwritten (%" PRIu64 ")", name,
	       t->c.r.records_overwritten);
	is_u64(t->ngot + lost + t->c.r.records_overwritten, T_EVENTS,
	       "%s: recorded + lost + overwritten == produced", name);
	ok(t->handshakes == T_EVENTS / T_HANDSHAKE && t->partial_pkts > 0 &&
	   (mode == TRACER_RB_FLIGHT || t->stripped == t->partial_positions),
	   "%s: %" PRIu64 " sub-buffers read in part, %" PRIu64 " of them "
	   "later read to the end", name, t->partial_positions, t->stripped);
	tracer__rb_reader_detach(&t->c.r);
	free(t->c.region);
	free(t->acc);
	free(t->got);
	free(t);
}

/*
 * RB_PARTIAL_ROUNDS=N (make check-stress: tests/stress/stress_partial.sh)
 * runs the threads flight test N times: its accounting races show in a
 * few runs in a hundred, not in every one.
 */
static int flight_rounds(void)
{
	const char *env = getenv("RB_PARTIAL_ROUNDS");
	int n = env ? atoi(env) : 1;

	return n > 0 && n <= 100000 ? n : 1;
}

int main(void)
{
	uint64_t near_wrap = 0 - 2 * 1024ULL;
	int rounds = flight_rounds(), i;

	plan(186 + 5 * rounds);
	test_basic(0, "basic");
	test_basic(near_wrap, "basic, wrapping");
	test_pending();
	test_eagain();
	test_flight_lapped(0, "lapped");
	test_flight_lapped(0 - 3 * 2048ULL, "lapped, wrapping");
	test_corrupt();
	test_race();
	test_random(TRACER_RB_DISCARD, 0, "random discard", 0x9E3779B97F4A7C15);
	test_random(TRACER_RB_FLIGHT, 0, "random flight", 0xD1B54A32D192ED03);
	test_random(TRACER_RB_DISCARD, 0 - 5 * 2048ULL,
		    "random discard, wrapping", 0x8CB92BA72F3D8DD7);
	test_random(TRACER_RB_FLIGHT, 0 - 5 * 2048ULL,
		    "random flight, wrapping", 0xA0761D6478BD642F);
	test_threads(TRACER_RB_DISCARD, 0, "threads discard");
	for (i = 0; i < rounds; i++)
		test_threads(TRACER_RB_FLIGHT, 0 - 7 * 4096ULL,
			     "threads flight, wrapping");
	return done();
}
