/*
 * test_clock_ticks.c - records stamped in TSC ticks, turned into ns by
 * the reader (common/clock.h "Ticks", clock_history.c, rb_read.c):
 *   - the history converts a tick by the line in force at it: before the
 *     first anchor, at each anchor (no step), between, after the last; a
 *     line anchored earlier replaces the later ones;
 *   - full, it thins its older half: still growing with the tick, and
 *     within 1 us of the lines it had;
 *   - a writer in unit TSC: every record read back has the history's time
 *     for the tick it was stamped with, compact headers at every
 *     boundary (first of a packet, 2^32 - 1 ticks on, 2^32 on, an id
 *     past the compact range) decoded exactly, partial reads too;
 *   - a step back between lines never makes a time go back, one forward
 *     past what a compact header can say is held there; a packet in ns
 *     after ticks by a line ahead does not go back either;
 *   - a packet in ticks that is corrupt is refused, not half converted;
 *   - set_unit() closes the open packet: one unit a packet;
 *   - the clamp holds within a stream (a buffer's owner), not across;
 *   - a packet in ticks and no history is refused with a reason;
 *   - a dead writer's packet in ticks is salvaged with its times, also
 *     the rest of one a partial read began.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_history.h"
#include "clock_make.h"
#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define MULT_HALF	(1ULL << (TRACER_CLOCK_SHIFT - 1))	/* 0.5 ns/tick */
#define SEC		2000000000ULL		/* ticks, 2 GHz */

static struct tracer_clock line(uint64_t tsc, uint64_t ns, uint64_t mult)
{
	return (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
				      .tsc_base = tsc, .ns_base = ns,
				      .mult = mult, .tsc_hz = 2000000000ULL };
}

/* Ten anchors a second apart, each steered from the one before. */
static void steered(struct tracer_clock_history *h, struct tracer_clock *k,
		    int n)
{
	struct tracer_clock_sample prev = { .tsc = 10 * SEC,
					    .ns = 5000000000ULL }, s;
	int64_t err;
	int i;

	k[0] = line(prev.tsc, prev.ns + 2000, MULT_HALF + MULT_HALF / 100000);
	tracer__clock_history_add(h, &k[0]);
	for (i = 1; i < n; i++) {
		s.tsc = prev.tsc + SEC;
		s.ns = prev.ns + 1000000000ULL + (uint64_t)(i % 3) * 7;
		k[i] = k[i - 1];
		if (tracer__clock_steer(&k[i], &prev, &s, &err))
			bail_out("steer failed");
		tracer__clock_history_add(h, &k[i]);
		prev = s;
	}
}

static void test_history(void)
{
	struct tracer_clock_history h = { 0 };
	struct tracer_clock k[10], early;
	uint64_t t, prev = 0;
	int i, bad = 0, steps = 0;

	is_u64(tracer__clock_history_ns(&h, 12345), 0,
	       "an empty history converts nothing (0)");
	steered(&h, k, 10);
	is_u64(tracer__clock_history_ns(&h, k[0].tsc_base - 1000),
	       tracer__clock_from_tsc(&k[0], k[0].tsc_base - 1000),
	       "a tick before the first anchor: the first line");
	for (i = 0; i < 10; i++) {
		uint64_t mid = k[i].tsc_base + SEC / 2;

		bad |= tracer__clock_history_ns(&h, k[i].tsc_base) !=
		       k[i].ns_base;
		bad |= tracer__clock_history_ns(&h, mid) !=
		       tracer__clock_from_tsc(&k[i], mid);
		if (i)
			steps |= tracer__clock_from_tsc(&k[i - 1],
							k[i].tsc_base) !=
				 k[i].ns_base;
	}
	ok(!bad, "each anchor and each tick between: the line in force");
	ok(!steps, "each line starts where the one before is (no step)");
	is_u64(tracer__clock_history_ns(&h, k[9].tsc_base + 5 * SEC),
	       tracer__clock_from_tsc(&k[9], k[9].tsc_base + 5 * SEC),
	       "after the last anchor: the last line");
	for (t = k[0].tsc_base - SEC; t < k[9].tsc_base + SEC; t += 999983) {
		uint64_t ns = tracer__clock_history_ns(&h, t);

		bad |= ns < prev;
		prev = ns;
	}
	ok(!bad, "times grow with the tick across all the anchors");
	early = line(k[5].tsc_base + 10, 1, MULT_HALF);
	tracer__clock_history_add(&h, &early);
	ok(h.n == 7 && tracer__clock_history_ns(&h, k[9].tsc_base) ==
	   tracer__clock_from_tsc(&early, k[9].tsc_base) &&
	   tracer__clock_history_ns(&h, k[4].tsc_base) == k[4].ns_base,
	   "a line anchored before the last ones replaces them, and only "
	   "them");
	ok(tracer__clock_history_add(&h, &(struct tracer_clock){
		.kind = TRACER_CLOCK_MONOTONIC }) == -EINVAL,
	   "a CLOCK_MONOTONIC clock is no line (-EINVAL)");
	tracer__clock_history_free(&h);
}

/* More lines than the history holds; a rate that moves by ppm. */
static void test_thin(void)
{
	struct tracer_clock_history h = { 0 };
	uint32_t n = TRACER_CLOCK_HISTORY_MAX + 1000, i;
	struct tracer_clock *k = calloc(n, sizeof(*k));
	uint64_t t, prev = 0, tsc = SEC, ns = 1000000000ULL;
	int64_t worst = 0;
	int bad = 0;

	if (!k)
		bail_out("no memory");
	for (i = 0; i < n; i++) {
		/* 0.5 ns a tick, +-0.3 ppm from second to second */
		uint64_t mult = MULT_HALF + (uint64_t)((i % 2 ? 1 : -1) *
				(int64_t)(MULT_HALF / 3333333));

		k[i] = line(tsc, ns, mult);
		bad |= tracer__clock_history_add(&h, &k[i]);
		ns = tracer__clock_from_tsc(&k[i], tsc + SEC);
		tsc += SEC;
	}
	ok(!bad && h.n <= TRACER_CLOCK_HISTORY_MAX && h.n > n / 2,
	   "%u lines kept in at most %u (%u)", n, TRACER_CLOCK_HISTORY_MAX,
	   h.n);
	for (i = 0; i < n; i += 7) {
		for (t = k[i].tsc_base; t < k[i].tsc_base + SEC; t += SEC / 3) {
			uint64_t got = tracer__clock_history_ns(&h, t);
			int64_t e = (int64_t)(got -
					      tracer__clock_from_tsc(&k[i], t));

			bad |= got < prev;
			prev = got;
			if (e < 0)
				e = -e;
			if (e > worst)
				worst = e;
		}
	}
	ok(!bad && worst < 1000, "thinned: times still grow, within 1 us of "
	   "the lines it had (worst %lld ns)", (long long)worst);
	tracer__clock_history_free(&h);
	free(k);
}

struct chan {
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	struct tracer_clock_history h;
	char *region;
	uint64_t size;
};

static void chan_open(struct chan *c, uint32_t subbuf)
{
	struct tracer_rb_config cfg = { .subbuf_size = subbuf,
		.subbuf_count = 4, .mode = TRACER_RB_DISCARD };
	struct tracer_clock k = line(1ULL << 40, 7000000000ULL,
				     MULT_HALF - MULT_HALF / 1000);

	memset(c, 0, sizeof(*c));
	c->region = chk_channel(&cfg, &c->size);
	if (!c->region ||
	    tracer__rb_writer_attach(&c->w, c->region, c->size, 9, NULL) ||
	    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
		bail_out("cannot create a channel");
	tracer__clock_history_add(&c->h, &k);
	c->r.history = &c->h;
	tracer__rb_set_unit(&c->w, TRACER_RB_UNIT_TSC);
}

static void chan_close(struct chan *c)
{
	tracer__rb_reader_detach(&c->r);
	tracer__clock_history_free(&c->h);
	free(c->region);
}

/* A record of event id at tick ts (8 bytes: the tick itself). */
static int put_at(struct chan *c, uint32_t id, uint64_t ts)
{
	struct tracer_rb_ctx ctx;
	int ret = tracer__rb_reserve_at(&c->w, &ctx, id, 8, ts);

	if (ret)
		return ret;
	memcpy(ctx.payload, &ts, 8);
	tracer__rb_commit(&c->w, &ctx);
	return 0;
}

/*
 * Read every packet there is: each record's time must be the history's
 * for the tick in its payload; *n counts them, *ext the extended ones.
 */
static int read_all(struct chan *c, uint64_t *n, uint64_t *ext,
		    uint64_t *prev)
{
	static uint64_t copy[8192];
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur;
	struct tracer_rb_record rec;
	int ret, bad = 0;

	while ((ret = tracer__rb_read(&c->r, copy, sizeof(copy), &info)) ==
	       0) {
		const struct tracer_rb_packet *p = (const void *)copy;

		bad |= p->unit != TRACER_RB_UNIT_NS;
		cur = (struct tracer_rb_cursor){ 0 };
		while (tracer__rb_packet_next(copy, info.content_bytes, &cur,
					      &rec)) {
			uint64_t tick;

			memcpy(&tick, rec.payload, 8);
			bad |= rec.timestamp !=
			       tracer__clock_history_ns(&c->h, tick);
			bad |= rec.timestamp < *prev;
			*prev = rec.timestamp;
			*ext += rec.header_size == TRACER_RB_EXTENDED_SIZE;
			(*n)++;
		}
	}
	return ret == -EAGAIN ? bad : 1;
}

static void test_ring(void)
{
	struct chan c;
	uint64_t t = (1ULL << 40) + 5000, n = 0, ext = 0, prev = 0, i;
	int bad = 0;

	chan_open(&c, 4096);
	bad |= put_at(&c, 1, t);			/* opens: compact */
	bad |= put_at(&c, 2, t += 0xffffffffULL);	/* compact at most */
	bad |= put_at(&c, 3, t += 1ULL << 32);		/* extended */
	bad |= put_at(&c, 5000, t += 3);		/* id: extended */
	bad |= put_at(&c, 4, t += 1);			/* compact again */
	for (i = 0; i < 600; i++)			/* across packets */
		bad |= put_at(&c, 6, t += 1 + i * 977);
	tracer__rb_flush(&c.w);
	bad |= read_all(&c, &n, &ext, &prev);
	ok(!bad && n == 605 && ext == 2,
	   "ticks at every boundary come back as the history's ns, in "
	   "order, compact where they were (%llu records, %llu extended)",
	   (unsigned long long)n, (unsigned long long)ext);
	chan_close(&c);
}

static void test_partial(void)
{
	static uint64_t copy[1024];
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t t = (1ULL << 40) + 77, n = 0, ext = 0, prev = 0;
	int bad = 0, i;

	chan_open(&c, 4096);
	for (i = 0; i < 10; i++)
		bad |= put_at(&c, 1, t += 1000);
	bad |= tracer__rb_read_partial(&c.r, copy, sizeof(copy), &info);
	bad |= info.records != 10 ||
	       info.timestamp_end != tracer__clock_history_ns(&c.h, t);
	for (i = 0; i < 5; i++)
		bad |= put_at(&c, 1, t += 1000);
	bad |= tracer__rb_read_partial(&c.r, copy, sizeof(copy), &info);
	bad |= info.records != 5;
	for (i = 0; i < 5; i++)
		bad |= put_at(&c, 1, t += 1000);
	tracer__rb_flush(&c.w);
	bad |= read_all(&c, &n, &ext, &prev);
	ok(!bad && n == 5 && prev == tracer__clock_history_ns(&c.h, t),
	   "a packet in ticks read in parts, then the rest: every time the "
	   "history's");
	chan_close(&c);
}

static void test_step_back(void)
{
	struct chan c;
	struct tracer_clock back;
	uint64_t t = (1ULL << 40) + 10, n = 0, prev = 0, copy[512];
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	int bad = 0, i, ret;

	chan_open(&c, 4096);
	/* From tick t + 5000 on, a line 3 us behind the first one. */
	back = line(t + 5000, tracer__clock_history_ns(&c.h, t + 5000) - 3000,
		    MULT_HALF);
	tracer__clock_history_add(&c.h, &back);
	for (i = 0; i < 10; i++)
		bad |= put_at(&c, 1, t += 1000);
	tracer__rb_flush(&c.w);
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	while (!ret && tracer__rb_packet_next(copy, info.content_bytes, &cur,
					      &rec)) {
		uint64_t tick, want;

		memcpy(&tick, rec.payload, 8);
		want = tracer__clock_history_ns(&c.h, tick);
		bad |= rec.timestamp != (want > prev ? want : prev);
		prev = rec.timestamp;
		n++;
	}
	ok(!ret && !bad && n == 10, "a line 3 us behind the one before: each "
	   "time the history's or the one before, never back, the packet "
	   "kept");
	chan_close(&c);
}

/* A line 5 s ahead of the one before, inside a packet: the compact
 * record after the step cannot say 5 s; it is held 2^32 - 1 ns on. */
static void test_step_forward(void)
{
	static uint64_t copy[512];
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec[2];
	struct tracer_clock ahead;
	struct chan c;
	uint64_t t = (1ULL << 40) + 10;
	int bad = 0, ret, i = 0;

	chan_open(&c, 4096);
	ahead = line(t + 1000, tracer__clock_history_ns(&c.h, t + 1000) +
		     5000000000ULL, MULT_HALF);
	tracer__clock_history_add(&c.h, &ahead);
	bad |= put_at(&c, 1, t + 500);
	bad |= put_at(&c, 1, t + 1500);
	tracer__rb_flush(&c.w);
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	while (!ret && i < 2 && tracer__rb_packet_next(copy, info.content_bytes,
						       &cur, &rec[i]))
		i++;
	ok(!ret && !bad && i == 2 &&
	   rec[1].header_size == TRACER_RB_COMPACT_SIZE &&
	   rec[1].timestamp == rec[0].timestamp + 0xffffffffULL &&
	   info.timestamp_end >= rec[1].timestamp,
	   "a line 5 s ahead within a packet: the compact record after it "
	   "is held 2^32 - 1 ns on, still compact, the packet kept");
	chan_close(&c);
}

/*
 * A packet in ticks whose third record goes back in ticks to a value
 * that, read as ns, would fit after the first two converted: refused
 * whole, not kept half converted.
 */
static void test_bad_back(void)
{
	static uint64_t copy[512];
	struct tracer_rb_packet_info info;
	struct tracer_rb_packet *p;
	struct chan c;
	uint64_t t = (1ULL << 40) + 10;
	int bad = 0, ret;

	chan_open(&c, 4096);
	bad |= put_at(&c, 1, t + 100);
	bad |= put_at(&c, 1, t + 200);		/* 7000000100 ns or so */
	bad |= put_at(&c, 1, 7000000150ULL);	/* back in ticks */
	tracer__rb_flush(&c.w);
	p = (struct tracer_rb_packet *)(void *)c.w.data;
	p->timestamp_end = t + 1000;		/* a writer's scribble */
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	ok(!bad && ret == -EBADMSG && strstr(c.r.error, "out of time order"),
	   "a packet in ticks going back in ticks: refused whole (%s)",
	   c.r.error);
	chan_close(&c);
}

/* After packets in ticks by a line ahead of CLOCK_MONOTONIC (as before a
 * stray), the channel's next packet in ns does not go back in time. */
static void test_back_to_ns(void)
{
	static uint64_t copy[512];
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	struct tracer_clock fast;
	struct tracer_rb_ctx ctx;
	struct chan c;
	uint64_t tick = tracer__rdtsc(), end;
	int bad = 0, ret;

	chan_open(&c, 4096);
	fast = line(tick, tracer__clock_now() + 60000000ULL, MULT_HALF);
	tracer__clock_history_add(&c.h, &fast);
	bad |= put_at(&c, 1, tick + 10);
	tracer__rb_set_unit(&c.w, TRACER_RB_UNIT_NS);
	bad |= tracer__rb_reserve(&c.w, &ctx, 1, 8);
	tracer__rb_commit(&c.w, &ctx);
	tracer__rb_flush(&c.w);
	bad |= tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	end = info.timestamp_end;
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	bad |= ret || !tracer__rb_packet_next(copy, info.content_bytes, &cur,
					      &rec);
	ok(!bad && ctx.timestamp < end && info.timestamp_begin == end &&
	   rec.timestamp == end,
	   "ns after ticks 60 ms ahead: the ns packet holds at the last "
	   "time instead of going back");
	chan_close(&c);
}

static void test_units(void)
{
	struct chan c;
	static uint64_t copy[1024];
	struct tracer_rb_packet_info info;
	const struct tracer_rb_packet *p = (const void *)copy;
	struct tracer_rb_ctx ctx;
	int bad = 0, ret;

	struct tracer_clock k;
	uint64_t tick, end, want;

	chan_open(&c, 4096);
	/* The line of this machine, as tracerd would have it. */
	if (chk_tsc_line(&k, 20))
		bail_out("no TSC line here");
	tracer__clock_history_add(&c.h, &k);
	tracer__rb_set_unit(&c.w, TRACER_RB_UNIT_NS);
	bad |= tracer__rb_reserve(&c.w, &ctx, 1, 8);
	tracer__rb_commit(&c.w, &ctx);
	tracer__rb_set_unit(&c.w, TRACER_RB_UNIT_TSC);
	tick = tracer__rdtsc();
	bad |= put_at(&c, 2, tick);
	tracer__rb_flush(&c.w);
	bad |= tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	bad |= info.records != 1 || info.timestamp_begin != ctx.timestamp ||
	       p->unit != TRACER_RB_UNIT_NS;
	end = info.timestamp_end;
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	want = tracer__clock_history_ns(&c.h, tick);
	ok(!bad && !ret && info.records == 1 && p->unit == 0 &&
	   info.timestamp_begin == (want > end ? want : end),
	   "a change of unit closes the open packet: a packet in ns, then "
	   "one in ticks, each read right, the second not before the first");
	chan_close(&c);

	chan_open(&c, 4096);
	c.r.history = NULL;
	bad = put_at(&c, 1, (1ULL << 40) + 5);
	tracer__rb_flush(&c.w);
	ret = tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	ok(!bad && ret == -EBADMSG && strstr(c.r.error, "TSC ticks"),
	   "a packet in ticks with no history to read it: refused, and "
	   "said why (%s)", c.r.error);
	chan_close(&c);
}

/* The buffer's next owner (another stream instance) may have records
 * older than the last owner's (its stash): they are not clamped. */
static void test_owners(void)
{
	static uint64_t copy[1024];
	struct tracer_rb_packet_info info;
	struct chan c;
	uint64_t t = (1ULL << 40) + 1000;
	int bad = 0;

	chan_open(&c, 4096);
	c.r.instance_mask = 0;
	bad |= put_at(&c, 1, t + 1000000);
	tracer__rb_flush(&c.w);
	bad |= tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	c.w.stream_instance_id = 2;
	bad |= put_at(&c, 1, t);
	tracer__rb_flush(&c.w);
	bad |= tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	ok(!bad && info.timestamp_begin == tracer__clock_history_ns(&c.h, t),
	   "the next owner's older records keep their times (no clamp to "
	   "another stream's)");
	chan_close(&c);
}

static bool any(void *arg, const struct tracer_rb_record *rec)
{
	(void)arg;
	(void)rec;
	return true;
}

/*
 * Salvage c's open packet: *n counts the records kept; returns nonzero if
 * salvage failed or a record's time is not the history's for its tick.
 */
static int salvaged(struct chan *c, struct tracer_rb_packet_info *info,
		    struct tracer_rb_salvage *s, uint64_t *n)
{
	static uint64_t copy[1024];
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	int bad = tracer__rb_salvage(&c->r, copy, sizeof(copy), any, NULL,
				     tracer__clock_now(), info, s);

	while (!bad && tracer__rb_packet_next(copy, info->content_bytes, &cur,
					      &rec)) {
		uint64_t tick;

		memcpy(&tick, rec.payload, 8);
		bad |= rec.timestamp != tracer__clock_history_ns(&c->h, tick);
		(*n)++;
	}
	return bad;
}

/*
 * A writer that died with a record reserved, not committed: after 5
 * committed records, or (partial) after 3 that a partial read took and 3
 * more.
 */
static void test_salvage(bool partial)
{
	static uint64_t copy[1024];
	struct tracer_rb_packet_info info;
	struct tracer_rb_salvage s;
	struct tracer_rb_ctx ctx;
	struct chan c;
	uint64_t t = tracer__rdtsc() - 100000, n = 0;
	int bad = 0, i;

	chan_open(&c, 4096);
	for (i = 0; i < (partial ? 6 : 5); i++) {
		if (partial && i == 3)
			bad |= tracer__rb_read_partial(&c.r, copy,
						       sizeof(copy), &info);
		bad |= put_at(&c, 1, t += 1000);
	}
	bad |= tracer__rb_reserve_at(&c.w, &ctx, 1, 8, t + 1000);
	bad |= salvaged(&c, &info, &s, &n);
	if (partial)
		ok(!bad && n == 3, "a dead writer's packet read in part "
		   "before: the rest salvaged with its times (%llu records)",
		   (unsigned long long)n);
	else
		ok(!bad && n == 5 && s.torn == 1, "a dead writer's packet in "
		   "ticks: its 5 committed records kept with their times, the "
		   "torn one dropped (%llu kept, %u torn)",
		   (unsigned long long)n, s.torn);
	chan_close(&c);
}

int main(void)
{
	if (!TRACER_CLOCK_HAVE_TSC) {
		printf("1..0 # SKIP no TSC on this architecture\n");
		return 0;
	}
	plan(21);
	test_history();
	test_thin();
	test_ring();
	test_partial();
	test_step_back();
	test_step_forward();
	test_bad_back();
	test_back_to_ns();
	test_units();
	test_owners();
	test_salvage(false);
	test_salvage(true);
	return done();
}
