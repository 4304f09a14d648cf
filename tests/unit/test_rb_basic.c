/*
 * test_rb_basic.c - single-threaded behaviour of a channel: records come
 * back as written, sub-buffer boundaries (exact fill, a record that needs a
 * switch, flush), the CTF packet header fields, and counters that wrap
 * modulo 2^64 during the test; a channel made in a zeroed region (a new
 * memfd) is the same as one made anywhere else, without touching the pages
 * that stay zero; records written late at times of their own; the
 * straight-through path of libtracer's events (tracer__rb_write_words)
 * leaves the same bytes as reserve + commit.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define S 256u
static char copy[1 << 16] __attribute__((aligned(64)));

struct chan {
	char *region;
	uint64_t size;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
};

static void chan_open(struct chan *c, uint64_t subbuf, uint64_t count,
		      enum tracer_rb_mode mode, uint64_t start)
{
	struct tracer_rb_config cfg = { .subbuf_size = subbuf,
		.subbuf_count = count, .mode = mode, .stream_id = 3,
		.stream_instance_id = 42, .start_count = start };

	c->region = chk_channel(&cfg, &c->size);
	if (!c->region ||
	    tracer__rb_writer_attach(&c->w, c->region, c->size, 1234, NULL) ||
	    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
		bail_out("cannot create a channel");
}

static void chan_close(struct chan *c)
{
	tracer__rb_reader_detach(&c->r);
	free(c->region);
}

/* Record one event with `words` u64 payload words, all equal to v. */
static int put(struct chan *c, uint32_t id, uint32_t words, uint64_t v)
{
	struct tracer_rb_ctx ctx;
	uint32_t i;
	int ret = tracer__rb_reserve(&c->w, &ctx, id, words * 8);

	if (ret)
		return ret;
	for (i = 0; i < words; i++)
		((uint64_t *)ctx.payload)[i] = v;
	tracer__rb_commit(&c->w, &ctx);
	return 0;
}

static void test_round_trip(void)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_record rec;
	const struct tracer_rb_packet *p = (const void *)copy;
	struct chan c;
	struct tracer_rb_cursor cur = { 0 };
	uint64_t n = 0, prev = 0, i;
	int good = 1;

	chan_open(&c, 4096, 4, TRACER_RB_DISCARD, 0);
	for (i = 0; i < 20; i++)
		put(&c, (uint32_t)i, (uint32_t)(i % 5), i * 7);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), -EAGAIN,
	       "an open sub-buffer is not readable before a switch");
	tracer__rb_flush(&c.w);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "after a flush the sub-buffer is readable");
	while (tracer__rb_packet_next(copy, info.content_bytes, &cur, &rec)) {
		good &= rec.id == n && rec.payload_size == (n % 5) * 8 &&
			rec.timestamp >= prev &&
			(n % 5 == 0 || *(const uint64_t *)rec.payload == n * 7);
		prev = rec.timestamp;
		n++;
	}
	ok(good && n == 20, "20 records back with their ids, sizes, values "
	   "and non-decreasing times (%" PRIu64 ")", n);
	ok(p->magic == TRACER_CTF_MAGIC && p->stream_id == 3 &&
	   p->stream_instance_id == 42 && p->tid == 1234,
	   "packet header: CTF magic, stream ids, writer tid");
	ok(p->packet_size == 4096 * 8 && p->content_size == info.content_bytes
	   * 8 && info.content_bytes < 4096, "packet and content sizes in bits");
	ok(p->timestamp_begin <= prev && p->timestamp_end >= prev &&
	   info.seq == 0, "begin/end timestamps bracket the records; seq 0");
	tracer__rb_flush(&c.w);
	tracer__rb_flush(&c.w);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), -EAGAIN,
	       "flushing with nothing open makes no empty packet");
	chan_close(&c);
}

static void test_exact_fill(void)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	uint32_t per = (S - TRACER_RB_PACKET_SIZE) / 24, i;

	chan_open(&c, S, 2, TRACER_RB_DISCARD, 0);
	is_int(put(&c, 1, c.w.max_payload / 8, 9), 0,
	       "a record of the largest payload is accepted");
	tracer__rb_flush(&c.w);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "it fits its sub-buffer with a compact header");
	ok(info.records == 1 && info.content_bytes == TRACER_RB_PACKET_SIZE +
	   TRACER_RB_COMPACT_SIZE + c.w.max_payload,
	   "content size: packet header, record header, payload");
	/* 7 records of 24 bytes after the 80-byte header leave 8 bytes. */
	for (i = 0; i < per; i++)
		put(&c, 2, 2, i);
	is_int(put(&c, 3, 0, 0), 0, "a bare 8-byte record fills the rest");
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "several records ending exactly at the boundary: readable "
	       "without a flush");
	ok(info.records == per + 1 && info.content_bytes == S,
	   "%u records, content size %u", per + 1, S);
	is_u64(c.w.hdr->write_count, 2 * S, "write count at the boundary");
	chan_close(&c);
}

static void test_switch(void)
{
	struct tracer_rb_packet_info info;
	struct chan c;

	chan_open(&c, S, 4, TRACER_RB_DISCARD, 0);
	put(&c, 1, 11, 1);	/* 80 + 96 = 176 bytes used, 80 left */
	is_int(put(&c, 2, 11, 2), 0, "a record that does not fit is accepted");
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "it switched: the previous sub-buffer is readable");
	ok(info.records == 1 && info.content_bytes == 176,
	   "the closed packet holds the first record, padding after 176");
	tracer__rb_flush(&c.w);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "the record that switched is in the next packet");
	ok(info.records == 1 && info.seq == 1, "next packet: seq 1, 1 record");
	chan_close(&c);
}

/*
 * The backlog (libtracer wakes tracerd on it): what the writer reserved
 * and the reader did not take, the open sub-buffer included; it falls as
 * the reader takes packets, and never exceeds the ring, also across the
 * counters' wrap (start just below 2^64) and in flight mode, where the
 * writer laps a reader that does not read.
 */
static void test_backlog(enum tracer_rb_mode mode, uint64_t start)
{
	struct tracer_rb_packet_info info;
	struct chan c;
	int i;

	chan_open(&c, S, 4, mode, start);
	is_int((int)tracer__rb_backlog(&c.w), 0, "backlog: none at first");
	put(&c, 1, 11, 1);	/* 80 + 96 bytes */
	is_int((int)tracer__rb_backlog(&c.w), 176,
	       "backlog: the open sub-buffer's bytes");
	put(&c, 2, 11, 2);	/* switched: S + 176 */
	put(&c, 3, 11, 3);	/* switched again: 2 S + 176 */
	is_int((int)tracer__rb_backlog(&c.w), 2 * S + 176,
	       "backlog: two closed sub-buffers and the open one");
	tracer__rb_read(&c.r, copy, sizeof(copy), &info);
	is_int((int)tracer__rb_backlog(&c.w), S + 176,
	       "backlog: less the packet the reader took");
	for (i = 0; i < 20; i++)
		put(&c, 4, 11, 4);
	ok(tracer__rb_backlog(&c.w) <= 4 * S &&
	   tracer__rb_backlog(&c.w) >= 3 * S,
	   "backlog: at most the ring, a full ring near it (%s, start %llu)",
	   mode == TRACER_RB_FLIGHT ? "flight" : "discard",
	   (unsigned long long)start);
	chan_close(&c);
}

/*
 * Records written late at their own times (libtracer's stash): the packet
 * they open begins at the first one's time, each keeps its time, the
 * reader takes them as valid, and the sub-buffers they fill close at the
 * time of the record that closes them; a record made with the clock after
 * them follows in order. A payload too large is refused.
 */
static void test_reserve_at(void)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_record rec;
	const struct tracer_rb_packet *p = (const void *)copy;
	struct tracer_rb_ctx ctx;
	struct chan c;
	struct tracer_rb_cursor cur = { 0 };
	uint64_t ts[12], i, n = 0;
	int good = 1;

	chan_open(&c, S, 4, TRACER_RB_DISCARD, 0);
	for (i = 0; i < 12; i++)
		ts[i] = 1000 + i * 10;	/* long before the clock's now */
	for (i = 0; i < 12; i++) {
		if (tracer__rb_reserve_at(&c.w, &ctx, 7, 16, ts[i]))
			good = 0;
		else
			tracer__rb_commit(&c.w, &ctx);
	}
	ok(good, "12 records reserved at given times");
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "they filled a sub-buffer: readable");
	ok(p->timestamp_begin == ts[0] && p->timestamp_end ==
	   ts[info.records], "its packet begins at the first record's time "
	   "and ends at the time of the one that closed it");
	while (tracer__rb_packet_next(copy, info.content_bytes, &cur, &rec))
		good &= rec.timestamp == ts[n++];
	ok(good && n == info.records && n > 1, "each record keeps its time "
	   "(%" PRIu64 " records)", n);
	put(&c, 8, 0, 0);	/* the clock's time, after them */
	tracer__rb_flush(&c.w);
	is_int(tracer__rb_read(&c.r, copy, sizeof(copy), &info), 0,
	       "the rest, and a record at the clock's time, read as valid");
	is_int(tracer__rb_reserve_at(&c.w, &ctx, 9, c.w.max_payload + 8, 5),
	       -EMSGSIZE, "a payload larger than a sub-buffer holds: refused");
	chan_close(&c);
}

/* Counters start 3 buffers before 2^64 and wrap during the loop. */
static void test_wrap(enum tracer_rb_mode mode, const char *name)
{
	struct tracer_rb_packet_info info;
	struct chk_state st;
	struct chan c;
	uint64_t start = UINT64_MAX - 3ULL * 4 * S + 1, produced = 0, seq_ok = 1;
	uint64_t expect_seq = start / S, seq_mask = UINT64_MAX / S;
	int i, ret;

	memset(&st, 0, sizeof(st));
	chan_open(&c, S, 4, mode, start);
	for (i = 0; i < 3000; i++) {
		chk_record(&c.w, 0, produced++);
		while ((ret = tracer__rb_read(&c.r, copy, sizeof(copy),
					      &info)) == 0) {
			/* seq = position / S: it wraps with the position */
			seq_ok &= info.seq == expect_seq;
			expect_seq = (expect_seq + 1) & seq_mask;
			chk_packet(&st, copy, &info);
		}
		if (ret != -EAGAIN)
			bail_out("read: %s", c.r.error);
	}
	tracer__rb_flush(&c.w);
	chk_drain(&c.r, &st, copy, sizeof(copy));
	ok(c.w.hdr->write_count < start, "%s: write count wrapped past 2^64 "
	   "(now %" PRIu64 ")", name, c.w.hdr->write_count);
	ok(seq_ok, "%s: packet sequence numbers consecutive across the wrap",
	   name);
	ok(st.bad == 0, "%s: every record intact and in order %s", name,
	   st.first_error);
	is_u64(chk_total_seen(&st) + tracer__rb_lost(&c.r) + st.overwritten,
	       produced, "%s: recorded + lost == produced", name);
	is_u64(chk_total_seen(&st), produced, "%s: nothing lost while the "
	       "reader keeps up", name);
	chan_close(&c);
}

/* Pages of [p, p + len) that are resident (touched), by mincore(). */
static unsigned resident_pages(void *p, uint64_t len)
{
	unsigned char vec[64];
	uint64_t n = len / 4096, i;
	unsigned count = 0;

	if (n > sizeof(vec) || mincore(p, len, vec) < 0)
		return ~0u;
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	return count;
}

/*
 * tracerd makes its channels in a new memfd (all zero): the init writes
 * only what is not zero, so a channel's commit array (a 64-byte line per
 * sub-buffer: 16 KiB for 256) costs no page until the writer reaches it.
 */
static void test_zeroed(uint64_t start)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
		.subbuf_count = 256, .mode = TRACER_RB_DISCARD, .stream_id = 1,
		.stream_instance_id = 7, .start_count = start };
	struct tracer_rb_geometry geo;
	const char *why;
	char *fresh, *other;
	uint64_t head;
	int fd = memfd_create("test-zeroed", MFD_CLOEXEC);

	if (fd < 0 || tracer__rb_geometry(&geo, 4096, 256, &why) ||
	    ftruncate(fd, (off_t)geo.data_offset) < 0)
		bail_out("cannot make a memfd");
	fresh = mmap(NULL, geo.data_offset, PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, 0);
	other = aligned_alloc(4096, geo.data_offset);
	if (fresh == MAP_FAILED || !other)
		bail_out("cannot map the memfd");
	memset(other, 0xa5, geo.data_offset);
	cfg.zeroed = true;
	ok(tracer__rb_init(fresh, geo.region_size, &cfg, &why) == 0,
	   "zeroed init (start %llu)", (unsigned long long)start);
	cfg.zeroed = false;
	ok(tracer__rb_init(other, geo.region_size, &cfg, &why) == 0,
	   "init over garbage (start %llu)", (unsigned long long)start);
	/* Before anything reads it: a read of shmem allocates pages too. */
	head = TRACER_ALIGN_UP(geo.commit_offset, 4096) / 4096;
	if (start == 0)
		is_u64(resident_pages(fresh, geo.data_offset), head,
		       "from 0: only the header's page is touched");
	else
		ok(resident_pages(fresh, geo.data_offset) > head,
		   "from another start: the commit array is written");
	ok(memcmp(fresh, other, geo.data_offset) == 0,
	   "both make the same header and commit array");
	munmap(fresh, geo.data_offset);
	free(other);
	close(fd);
}

/* The records of test_header_kinds(): each packet opens with a small one
 * (the first of a packet is compact whatever its gap), then one at a
 * boundary of the compact header. */
static const struct kind {
	uint32_t id, payload;
	uint64_t gap;			/* ns after the previous record */
	uint32_t header;		/* the header it must get */
	const char *what;
} kinds[] = {
	{ 1, 8, 0, 8, "a packet's first record" },
	{ 1, 32752, 1, 8, "32,760 bytes: the longest compact record" },
	{ 0, 0, 0, 0, NULL },		/* next packet */
	{ 1, 8, 1ULL << 40, 8, "first of a packet, 2^40 ns later" },
	{ 1, 32753, 1, 24, "one byte more: extended" },
	{ 0, 0, 0, 0, NULL },
	{ 1, 8, 1, 8, "first of a packet" },
	{ 4094, 8, 1, 8, "id 4094: compact" },
	{ 4095, 8, 1, 24, "id 4095: extended" },
	{ 70000, 8, 1, 24, "id 70000: extended" },
	{ 1, 8, (1ULL << 32) - 1, 8, "2^32 - 1 ns later: compact" },
	{ 1, 8, 1ULL << 32, 24, "2^32 ns later: extended" },
	{ 1, 8, (1ULL << 32) + 1, 24, "2^32 + 1 ns later: extended" },
	{ 1, 8, 3, 8, "3 ns later: compact again" },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

/* Write the records of kinds[] with a clock that says what we set. */
static void write_kinds(struct chan *c, uint64_t *ts)
{
	struct tracer_clock_cell cell = { .clock = {
		.kind = TRACER_CLOCK_TSC, .mult = 0 } };
	struct tracer_rb_ctx ctx;
	uint64_t t = 5000000000000ULL + 0xfffffff0ULL;	/* low bits wrap */
	size_t i;

	c->w.clock = &cell;
	for (i = 0; i < NKINDS; i++) {
		if (!kinds[i].what) {
			tracer__rb_flush(&c->w);
			continue;
		}
		cell.clock.ns_base = t += kinds[i].gap;
		if (tracer__rb_reserve(&c->w, &ctx, kinds[i].id,
				       kinds[i].payload))
			bail_out("%s: not reserved", kinds[i].what);
		memset(ctx.payload, (int)i, kinds[i].payload);
		tracer__rb_commit(&c->w, &ctx);
		ts[i] = ctx.timestamp;
	}
	tracer__rb_flush(&c->w);
	c->w.clock = &tracer__clock_monotonic;
}

/*
 * The header each record gets at the boundaries of the compact one
 * (size, id, time since the previous record), and every field read back
 * exactly from the packets.
 */
static void test_header_kinds(void)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur;
	struct tracer_rb_record rec;
	uint64_t ts[NKINDS];
	struct chan c;
	size_t i = 0;

	if (!TRACER_CLOCK_HAVE_TSC) {
		for (i = 0; i < 13; i++)
			ok(1, "# SKIP no TSC line to set the times with");
		return;
	}
	chan_open(&c, 1 << 16, 4, TRACER_RB_DISCARD, 0);
	write_kinds(&c, ts);
	while (i < NKINDS &&
	       tracer__rb_read(&c.r, copy, sizeof(copy), &info) == 0) {
		cur = (struct tracer_rb_cursor){ 0 };
		for (; i < NKINDS && kinds[i].what &&
		     tracer__rb_packet_next(copy, info.content_bytes, &cur,
					    &rec); i++)
			ok(rec.header_size == kinds[i].header &&
			   rec.id == kinds[i].id &&
			   rec.timestamp == ts[i] && rec.payload_size ==
			   ((kinds[i].payload + 7) & ~7u) &&
			   ((const unsigned char *)rec.payload)[0] ==
			   (unsigned char)i, "%s: %u-byte header, read back "
			   "exactly", kinds[i].what, rec.header_size);
		i++;		/* the packet break */
	}
	is_int((int)i, (int)NKINDS + 1, "every record read back");
	chan_close(&c);
}

/* ---- tracer__rb_write_words() ---------------------------------------- */

/* Values 16 bytes apart, as libtracer passes its union tracer_arg. */
struct word_arg {
	uint64_t v, pad;
};

/* An id: mostly small, now and then one at the compact header's edge. */
static uint32_t pick_id(uint64_t r)
{
	static const uint32_t rare[] = { 4094, 4095, 70000, 0 };

	return r % 10 == 0 ? rare[(r >> 8) % 4] : 1 + (uint32_t)(r >> 8) % 100;
}

/* The clock's next time: mostly a small step, now and then a gap at the
 * compact header's edge, one far ahead, or a step back (clamped). */
static uint64_t pick_time(uint64_t t, uint64_t r)
{
	switch ((r >> 20) % 25) {
	case 0:
		return t + (1ULL << 32) - 1;
	case 1:
		return t + (1ULL << 32);
	case 2:
		return t + (1ULL << 40);
	case 3:
		return t - 1000;
	default:
		return t + 1 + (r >> 32) % 1000;
	}
}

/*
 * The same records written by tracer__rb_write_words() into channel a and
 * by reserve + commit into channel b, with a clock that says what we set
 * (a TSC line of slope 0; now and then anchored after the TSC, which the
 * fast path leaves to the slow one): every boundary is crossed (packets
 * opened and filled exactly, ids and gaps too large for a compact header,
 * the clock stepping back), and the two regions must end up the same,
 * byte for byte.
 */
static void test_words_same(enum tracer_rb_mode mode, uint64_t subbuf,
			    int records, const char *name)
{
	struct tracer_clock_cell cell = { .clock = {
		.kind = TRACER_CLOCK_TSC, .mult = 0 } };
	struct word_arg args[8];
	struct tracer_rb_ctx ctx;
	uint64_t t = 5000000000000ULL, lost;
	struct chan a, b;
	int i;

	if (!TRACER_CLOCK_HAVE_TSC) {
		ok(1, "# SKIP %s: no TSC line to set the times with", name);
		ok(1, "# SKIP %s", name);
		return;
	}
	chan_open(&a, subbuf, 4, mode, 0);
	chan_open(&b, subbuf, 4, mode, 0);
	a.w.clock = b.w.clock = &cell;
	for (i = 0; i < records; i++) {
		uint64_t r = chk_rnd();
		uint32_t n = (uint32_t)(r % 9), id = pick_id(r), j;

		cell.clock.ns_base = t = pick_time(t, r);
		cell.clock.tsc_base = (r >> 40) % 16 == 0 ?
				      tracer__rdtsc() + (1ULL << 40) : 0;
		for (j = 0; j < n; j++)
			args[j] = (struct word_arg){ r ^ j, ~0ULL };
		tracer__rb_write_words(&a.w, id, args, sizeof(args[0]), n);
		if (tracer__rb_reserve(&b.w, &ctx, id, 8 * n))
			continue;
		for (j = 0; j < n; j++)
			memcpy((char *)ctx.payload + 8 * j, &args[j].v, 8);
		tracer__rb_commit(&b.w, &ctx);
	}
	tracer__rb_flush(&a.w);
	tracer__rb_flush(&b.w);
	lost = b.w.hdr->lost;
	ok(memcmp(a.region, b.region, a.size) == 0 && a.w.last_ts ==
	   b.w.last_ts && a.w.ref_ts == b.w.ref_ts, "%s: %d records written "
	   "as words and through reserve/commit leave the same bytes", name,
	   records);
	if (mode == TRACER_RB_FLIGHT)
		ok(b.w.hdr->write_count > 8 * subbuf, "%s: the ring was "
		   "lapped more than once", name);
	else
		ok(lost > 0, "%s: the channel filled, and both dropped the "
		   "same records (%" PRIu64 ")", name, lost);
	a.w.clock = b.w.clock = &tracer__clock_monotonic;
	chan_close(&a);
	chan_close(&b);
}

/*
 * With the CLOCK_MONOTONIC clock (the fast path leaves it to the slow
 * one) the records are all there, values and order kept.
 */
static void test_words_monotonic(void)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	struct word_arg args[3];
	uint64_t prev = 0, n = 0, i;
	struct chan c;
	int good = 1;

	chan_open(&c, 4096, 4, TRACER_RB_DISCARD, 0);
	for (i = 0; i < 50; i++) {
		args[0].v = i;
		args[1].v = i * 3;
		args[2].v = ~i;
		tracer__rb_write_words(&c.w, 7, args, sizeof(args[0]), 3);
	}
	tracer__rb_flush(&c.w);
	if (tracer__rb_read(&c.r, copy, sizeof(copy), &info))
		bail_out("no packet");
	while (tracer__rb_packet_next(copy, info.content_bytes, &cur, &rec)) {
		const uint64_t *v = rec.payload;

		good &= rec.id == 7 && rec.payload_size == 24 &&
			rec.header_size == TRACER_RB_COMPACT_SIZE &&
			v[0] == n && v[1] == n * 3 && v[2] == ~n &&
			rec.timestamp >= prev;
		prev = rec.timestamp;
		n++;
	}
	ok(good && n == 50, "CLOCK_MONOTONIC: 50 records as words, values, "
	   "order and compact headers kept (%" PRIu64 ")", n);
	chan_close(&c);
}

int main(void)
{
	plan(58 + 12 + 1 + 2 * 3 + 1);
	test_round_trip();
	test_reserve_at();
	test_exact_fill();
	test_switch();
	test_backlog(TRACER_RB_DISCARD, 0);
	test_backlog(TRACER_RB_DISCARD, UINT64_MAX - 2 * S + 1);
	test_backlog(TRACER_RB_FLIGHT, 0);
	test_wrap(TRACER_RB_DISCARD, "discard");
	test_wrap(TRACER_RB_FLIGHT, "flight");
	test_zeroed(0);
	test_zeroed(77ULL * 4096 * 256 + 5 * 4096);
	test_header_kinds();
	test_words_same(TRACER_RB_FLIGHT, S, 3000, "flight, 256-byte packets");
	test_words_same(TRACER_RB_FLIGHT, 4096, 3000, "flight, 4 KiB packets");
	test_words_same(TRACER_RB_DISCARD, 4096, 3000, "discard");
	test_words_monotonic();
	return done();
}
