/*
 * test_rb_salvage.c - tracer__rb_salvage(): what a writer that died left
 * in its open sub-buffer. The real writer reserves records and the test
 * leaves some uncommitted (the thread died while writing them), sometimes
 * with their header not written yet (bytes of an earlier lap there), or
 * nested (a signal handler's record committed after the interrupted one),
 * or after reserving past the sub-buffer's end. Every case checks that
 * exactly the committed records come out, intact and in order, that the
 * torn ones are counted, and that the channel is repaired: a new owner's
 * records are read normally afterwards. A fuzz run scribbles random bytes
 * and counters: salvage never reads out of bounds (ASan) and never returns
 * a packet that does not parse. And a reader that takes over a channel (a
 * new tracerd) after another one's partial read returns no record twice.
 */
#include <errno.h>
#include <string.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define ID		7u
#define MAXREC		4096

static char copy[1 << 14] __attribute__((aligned(64)));

struct chan {
	char *region;
	uint64_t size, S, B;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	uint32_t len[MAXREC];		/* record size by seq */
	uint64_t ts[MAXREC];		/* its time */
	uint8_t committed[MAXREC];
	uint64_t next;			/* next seq */
};

static void chan_open(struct chan *c, uint64_t S, uint64_t n)
{
	struct tracer_rb_config cfg = { .subbuf_size = S, .subbuf_count = n,
		.mode = TRACER_RB_DISCARD, .stream_id = 1,
		.stream_instance_id = 9 };

	memset(c, 0, sizeof(*c));
	c->S = S;
	c->B = S * n;
	c->region = chk_channel(&cfg, &c->size);
	if (!c->region ||
	    tracer__rb_writer_attach(&c->w, c->region, c->size, 77, NULL) ||
	    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
		bail_out("cannot create a channel");
}

static void chan_close(struct chan *c)
{
	tracer__rb_reader_detach(&c->r);
	free(c->region);
}

/* Reserve record seq with payload words; the caller commits or not. */
static int reserve(struct chan *c, struct tracer_rb_ctx *ctx, uint32_t words)
{
	uint64_t *p, seq = c->next;
	uint32_t i;

	if (tracer__rb_reserve(&c->w, ctx, ID, words * 8))
		return -1;
	p = ctx->payload;
	p[0] = seq;
	for (i = 1; i < words; i++)
		p[i] = seq * 1000 + i;
	c->len[seq] = tracer__rb_ctx_size(ctx, c->w.smask);
	c->ts[seq] = ctx->timestamp;
	c->next++;
	return (int)seq;
}

static void commit(struct chan *c, struct tracer_rb_ctx *ctx, int seq)
{
	tracer__rb_commit(&c->w, ctx);
	c->committed[seq] = 1;
}

static void record(struct chan *c, uint32_t words)
{
	struct tracer_rb_ctx ctx;
	int seq = reserve(c, &ctx, words);

	if (seq >= 0)
		commit(c, &ctx, seq);
}

/* The record's header as the torn writer left it: bytes of an old lap
 * (an extended header from long before this lap). The record is at
 * least 16 bytes: its first 8 are the header, or the first of one. */
static void unwrite_header(struct chan *c, struct tracer_rb_ctx *ctx,
			   int seq, uint32_t words)
{
	char *start = (char *)ctx->payload - (c->len[seq] - words * 8);
	struct tracer_rb_event_ext old = {
		.tag = tracer__rb_extended_tag(), .id = ID, .size = 48,
		.timestamp = 1 };

	memcpy(start, &old, c->len[seq] < sizeof(old) ? c->len[seq] :
	       sizeof(old));
}

/* The salvage check: id, and a payload that names a record we made. */
static bool check(void *arg, const struct tracer_rb_record *rec)
{
	const struct chan *c = arg;
	const uint64_t *p = rec->payload;

	if (rec->id != ID || rec->payload_size < 8)
		return false;
	return p[0] < c->next && c->len[p[0]] == rec->size;
}

struct result {
	uint64_t got[MAXREC];
	size_t n;
	uint32_t torn;
	uint64_t unreadable;
	int bad;			/* a packet that did not hold up */
	int loops;			/* salvage_all never finished */
	int broken;			/* -EIO: counters impossible */
};

static void collect(struct chan *c, struct result *res, uint64_t content)
{
	struct tracer_rb_record rec;
	struct tracer_rb_cursor cur = { 0 };

	while (tracer__rb_packet_next(copy, content, &cur, &rec)) {
		const uint64_t *p = rec.payload;

		if (rec.id != ID || p[0] >= c->next || res->n >= MAXREC)
			res->bad++;
		else
			res->got[res->n++] = p[0];
	}
}

/* Read everything the dead writer left, as tracerd does. */
static void salvage_all(struct chan *c, struct result *res)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_salvage s;
	int ret, guard;

	for (guard = 0; guard < 64; guard++) {
		ret = tracer__rb_read(&c->r, copy, sizeof(copy), &info);
		if (ret == 0) {
			collect(c, res, info.content_bytes);
			continue;
		}
		ret = tracer__rb_salvage(&c->r, copy, sizeof(copy), check, c,
					 UINT64_MAX / 2, &info, &s);
		if (ret == -ENODATA)
			return;
		if (ret == -EAGAIN)
			continue;
		if (ret && ret != -EBADMSG) {
			res->bad++;
			res->broken = ret == -EIO;
			return;
		}
		res->torn += s.torn;
		res->unreadable += s.unreadable;
		if (ret == 0 && info.content_bytes)
			collect(c, res, info.content_bytes);
	}
	res->bad++;
	res->loops = 1;
}

/* Exactly the committed records, once each, in order. */
static bool only_committed(const struct chan *c, const struct result *res,
			   uint64_t from)
{
	uint64_t seq;
	size_t i = 0;

	for (seq = from; seq < c->next; seq++) {
		if (!c->committed[seq])
			continue;
		if (i >= res->n || res->got[i] != seq)
			return false;
		i++;
	}
	return i == res->n && res->bad == 0;
}

/* A new owner records after the repair; its records read back intact. */
static bool repaired(struct chan *c)
{
	struct result res = { .n = 0 };
	uint64_t from = c->next, wc, rc;
	int i;

	for (i = 0; i < 40; i++)
		record(c, 1 + (uint32_t)i % 5);
	tracer__rb_flush(&c->w);
	wc = c->w.hdr->write_count;
	salvage_all(c, &res);
	rc = c->r.read_count;
	return only_committed(c, &res, from) && res.torn == 0 && wc == rc &&
	       c->w.hdr->lost == 0;
}

/* Lap 0 written and read, so that lap 1 has stale bytes under it. */
static void old_lap(struct chan *c)
{
	struct result res = { .n = 0 };

	while (c->w.hdr->write_count < c->B - 64)
		record(c, 4);
	tracer__rb_flush(&c->w);
	salvage_all(c, &res);
	memset(c->committed, 0, sizeof(c->committed));
}

static void case_torn_last(bool header_written)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_ctx ctx;
	uint64_t from;
	int i, s_torn;

	chan_open(&c, 1024, 4);
	old_lap(&c);
	from = c.next;
	for (i = 0; i < 5; i++)
		record(&c, 2);
	s_torn = reserve(&c, &ctx, 3);	/* dies writing it */
	if (!header_written)
		unwrite_header(&c, &ctx, s_torn, 3);
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 1,
	   "last record torn (header %s): the 5 committed ones, 1 torn",
	   header_written ? "written" : "not written");
	ok(repaired(&c), "... and a new owner records normally after it");
	chan_close(&c);
}

static void case_nested(bool header_written)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_ctx outer, inner;
	uint64_t from;
	int i, s_in, s_out;

	chan_open(&c, 1024, 4);
	old_lap(&c);
	from = c.next;
	for (i = 0; i < 3; i++)
		record(&c, 2);
	s_out = reserve(&c, &outer, 4);	/* interrupted, never committed */
	if (!header_written)
		unwrite_header(&c, &outer, s_out, 4);
	s_in = reserve(&c, &inner, 1);	/* the handler's record */
	commit(&c, &inner, s_in);
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 1,
	   "interrupted record torn (header %s), the handler's record after "
	   "it kept", header_written ? "written" : "not written");
	ok(repaired(&c), "... and a new owner records normally after it");
	chan_close(&c);
}

static void case_opening(void)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_ctx ctx;
	uint64_t from;

	chan_open(&c, 1024, 4);
	old_lap(&c);
	from = c.next;
	reserve(&c, &ctx, 2);		/* opens the sub-buffer, dies */
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.n == 0 && res.torn == 1,
	   "the record opening a sub-buffer torn: nothing kept, 1 torn");
	ok(repaired(&c), "... and a new owner records normally after it");
	chan_close(&c);
}

/* Died after reserving past the end, before closing the sub-buffer. */
static void case_unclosed(void)
{
	struct chan c;
	struct result res = { .n = 0 };
	uint64_t from, wc, next;
	int i;

	chan_open(&c, 1024, 4);
	old_lap(&c);
	from = c.next;
	for (i = 0; i < 6; i++)
		record(&c, 3);
	wc = c.w.hdr->write_count;
	next = (wc | (c.S - 1)) + 1;
	c.w.hdr->write_count = next + TRACER_RB_PACKET_SIZE + 32;
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 1,
	   "unclosed sub-buffer: its 6 records kept, the record that "
	   "crossed out of it torn");
	ok(repaired(&c), "... and a new owner records normally after it");
	chan_close(&c);
}

static void case_partial_read_first(void)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_packet_info info;
	struct tracer_rb_ctx ctx;
	uint64_t from;
	int i;

	chan_open(&c, 1024, 4);
	from = c.next;
	for (i = 0; i < 4; i++)
		record(&c, 2);
	if (tracer__rb_read_partial(&c.r, copy, sizeof(copy), &info) == 0)
		collect(&c, &res, info.content_bytes);
	for (i = 0; i < 3; i++)
		record(&c, 2);
	reserve(&c, &ctx, 2);
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 1,
	   "after a partial read: the rest once, the torn one dropped");
	chan_close(&c);
}

/* A new reader (a new tracerd) takes over after a partial read. */
static void case_takeover(void)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_packet_info info;
	uint64_t from;
	int i;

	chan_open(&c, 1024, 4);
	from = c.next;
	for (i = 0; i < 4; i++)
		record(&c, 2);
	if (tracer__rb_read_partial(&c.r, copy, sizeof(copy), &info) == 0)
		collect(&c, &res, info.content_bytes);
	tracer__rb_reader_detach(&c.r);
	if (tracer__rb_reader_attach(&c.r, c.region, c.size, NULL))
		bail_out("cannot attach again");
	for (i = 0; i < 30; i++)
		record(&c, 2);
	tracer__rb_flush(&c.w);
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 0,
	   "a second reader carries on after the first one's partial read: "
	   "every record once");
	chan_close(&c);
}

/* Random bytes and counters: no crash, every packet returned parses. */
static void case_fuzz(void)
{
	int round, bad = 0, stuck = 0;

	for (round = 0; round < 3000; round++) {
		struct chan c;
		struct result res = { .n = 0 };
		uint64_t i, n;

		chan_open(&c, 512, 4);
		n = chk_rnd() % 40;
		for (i = 0; i < n; i++)
			record(&c, 1 + (uint32_t)(chk_rnd() % 6));
		n = chk_rnd() % 24;
		for (i = 0; i < n; i++)
			c.region[c.r.geo.data_offset + chk_rnd() % c.B] =
				(char)chk_rnd();
		if (chk_rnd() % 3 == 0)
			c.w.commit[chk_rnd() % 4].count += chk_rnd() % 700;
		if (chk_rnd() % 3 == 0)
			c.w.hdr->write_count += (chk_rnd() % 90) * 8;
		salvage_all(&c, &res);
		bad += res.loops;
		stuck += !res.loops && !res.broken &&
			 c.r.read_count != c.w.hdr->write_count;
		chan_close(&c);
	}
	ok(bad == 0, "fuzz: 3000 scribbled channels salvaged to the end "
	   "without a crash (%d went round in circles)", bad);
	ok(stuck == 0, "fuzz: the reader always ends where the writer does "
	   "(%d stuck)", stuck);
}

/*
 * The torn record's place holds a whole record of the earlier lap: the
 * same size, a compact time that rebuilds to a plausible one, a payload
 * the check accepts; a signal handler's record of the same size follows.
 * Only its lap field tells it from one of this lap (without it, salvage
 * would drop the handler's record, the last one, and keep the stale).
 */
static void case_stale_record(void)
{
	struct chan c;
	struct result res = { .n = 0 };
	struct tracer_rb_ctx ctx;
	uint64_t from, lap, word;
	int i;

	chan_open(&c, 1024, 4);
	old_lap(&c);			/* records of 4 words: 40 bytes */
	from = c.next;
	for (i = 0; i < 3; i++)
		record(&c, 4);
	i = reserve(&c, &ctx, 4);	/* dies before its header */
	if (i < 0 || c.len[i] != 40 || c.len[from - 1] != 40)
		bail_out("stale: records of 40 bytes expected");
	lap = ctx.commit_pos >> c.w.lap_shift;
	word = tracer__rb_compact_word(ID, 40, ctx.timestamp + 1, lap - 1);
	memcpy((char *)ctx.payload - 8, &word, 8);
	((uint64_t *)ctx.payload)[0] = from - 1;	/* an old record's */
	record(&c, 4);		/* a handler's, of the same size, after it */
	salvage_all(&c, &res);
	ok(only_committed(&c, &res, from) && res.torn == 1,
	   "a whole record of the earlier lap where the torn one is, a "
	   "handler's after it: its lap tells it, it is dropped as torn");
	ok(repaired(&c), "... and a new owner records normally after it");
	chan_close(&c);
}

/*
 * A torn record A whose header was written (plausible), then records B
 * (A's size) and C (another size) committed by a handler: salvage finds
 * the uncommitted bytes by size, and the last record of that size is B,
 * not A. Dropping B, readers would rebuild C's compact time from A's,
 * 2^32 ns early (C was made compact against B's time). Whatever salvage
 * keeps must carry its own time.
 */
static void case_hole_times(void)
{
	struct tracer_clock_cell cell = { .clock = {
		.kind = TRACER_CLOCK_TSC, .mult = 0 } };
	uint64_t t0 = 1000000000000ULL, G = 1ULL << TRACER_RB_TIME_BITS;
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	struct tracer_rb_salvage s;
	struct tracer_rb_ctx a;
	struct chan c;
	int bad = 0, kept = 0, ret;

	if (!TRACER_CLOCK_HAVE_TSC) {
		ok(1, "# SKIP no TSC line to set the times with");
		return;
	}
	chan_open(&c, 1024, 4);
	c.w.clock = &cell;
	cell.clock.ns_base = t0;
	record(&c, 1);
	cell.clock.ns_base = t0 + 1;
	reserve(&c, &a, 1);		/* A: header written, never committed */
	cell.clock.ns_base = t0 + G - 10;
	record(&c, 1);			/* B: compact against the first */
	cell.clock.ns_base = t0 + G + 90;
	record(&c, 2);			/* C: compact against B */
	ret = tracer__rb_salvage(&c.r, copy, sizeof(copy), check, &c,
				 UINT64_MAX / 2, &info, &s);
	while (ret == 0 &&
	       tracer__rb_packet_next(copy, info.content_bytes, &cur, &rec)) {
		uint64_t seq = *(const uint64_t *)rec.payload;

		kept++;
		bad |= seq >= c.next || rec.timestamp != c.ts[seq];
	}
	ok((ret == 0 || ret == -EBADMSG) && !bad, "a record of the torn one's "
	   "size committed after it: what salvage keeps has its own time "
	   "(%d kept)", kept);
	c.w.clock = &tracer__clock_monotonic;
	tracer__rb_reader_detach(&c.r);
	free(c.region);
}

int main(void)
{
	plan(19);
	case_torn_last(true);
	case_torn_last(false);
	case_nested(true);
	case_nested(false);
	case_stale_record();
	case_hole_times();
	case_opening();
	case_unclosed();
	case_partial_read_first();
	case_takeover();
	case_fuzz();
	return done();
}
