/*
 * test_rb_modes.c - discard and flight-recorder modes, checked exactly:
 * which records survive when the reader falls behind, that
 * recorded + lost == produced, what happens to a sub-buffer the reader is
 * copying, the guard against a nested writer lapping the buffer, and a
 * reader that takes over from one that went away (a new tracerd adopting
 * a pool): it counts as overwritten only what was, and a count of the
 * overwritten made without reading (status) agrees with the read. A
 * reader pushed forward while a signal handler records into a sub-buffer
 * whose opener it interrupted counts that record once. A reader that
 * attaches after the writer went round the ring counts those laps as
 * overwritten.
 */
#include <errno.h>
#include <string.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

static char copy[4096] __attribute__((aligned(64)));

struct chan {
	char *region;
	uint64_t size;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	struct chk_state st;
	uint64_t produced;
};

static void chan_open(struct chan *c, enum tracer_rb_mode mode)
{
	struct tracer_rb_config cfg = { .subbuf_size = 512,
		.subbuf_count = 4, .mode = mode };

	memset(c, 0, sizeof(*c));
	c->region = chk_channel(&cfg, &c->size);
	if (!c->region ||
	    tracer__rb_writer_attach(&c->w, c->region, c->size, 1, NULL) ||
	    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
		bail_out("cannot create a channel");
}

static void chan_close(struct chan *c)
{
	tracer__rb_reader_detach(&c->r);
	free(c->region);
}

static void produce(struct chan *c, int n)
{
	while (n-- > 0)
		chk_record(&c->w, 0, c->produced++);
}

static void drain(struct chan *c)
{
	tracer__rb_flush(&c->w);
	if (chk_drain(&c->r, &c->st, copy, sizeof(copy)) < 0)
		bail_out("drain: %s", c->r.error);
}

static uint64_t lost(const struct chan *c)
{
	return tracer__rb_lost(&c->r) + c->st.overwritten;
}

static void test_discard_full(void)
{
	struct chan c;

	chan_open(&c, TRACER_RB_DISCARD);
	produce(&c, 1000);
	drain(&c);
	ok(c.st.bad == 0, "discard: surviving records intact %s",
	   c.st.first_error);
	ok(c.st.seen[0] > 0 && tracer__rb_lost(&c.r) > 0,
	   "discard: %" PRIu64 " kept, %" PRIu64 " discarded",
	   c.st.seen[0], tracer__rb_lost(&c.r));
	is_u64(c.st.seen[0] + lost(&c), c.produced,
	       "discard: recorded + lost == produced");
	ok(c.st.next_seq[0] < c.produced, "discard: the newest records were "
	   "the ones dropped (last kept %" PRIu64 ")", c.st.next_seq[0] - 1);
	is_u64(c.st.overwritten, 0, "discard: nothing was overwritten");
	produce(&c, 10);
	drain(&c);
	is_u64(c.st.seen[0] + lost(&c), c.produced,
	       "discard: after the reader caught up, writing resumes");
	ok(c.st.next_seq[0] == c.produced, "discard: the new records are in");
	chan_close(&c);
}

static void test_flight_full(void)
{
	struct chan c;
	uint64_t over;

	chan_open(&c, TRACER_RB_FLIGHT);
	is_u64(tracer__rb_overwritten(&c.r), 0,
	       "flight: nothing overwritten in a new ring");
	produce(&c, 1000);
	tracer__rb_flush(&c.w);
	over = tracer__rb_overwritten(&c.r);	/* what status says */
	drain(&c);
	ok(c.st.bad == 0, "flight: surviving records intact %s",
	   c.st.first_error);
	ok(over > 0 && over == c.st.overwritten,
	   "flight: counted before the read as the read tells them (%"
	   PRIu64 ", told %" PRIu64 ")", over, c.st.overwritten);
	is_u64(tracer__rb_overwritten(&c.r), 0,
	       "flight: none left to count once told");
	is_u64(tracer__rb_lost(&c.r), 0, "flight: the writer discarded none");
	is_u64(c.st.seen[0] + lost(&c), c.produced,
	       "flight: recorded + overwritten == produced");
	is_u64(c.st.next_seq[0], c.produced,
	       "flight: the newest record survived");
	ok(c.r.packets_overwritten > 0 && c.st.seen[0] ==
	   c.produced - c.st.overwritten, "flight: the oldest %" PRIu64
	   " records (%" PRIu64 " packets) were the ones overwritten",
	   c.st.overwritten, c.r.packets_overwritten);
	chan_close(&c);
}

/* The reader holds a sub-buffer while the writer goes round the ring. */
static void test_held(enum tracer_rb_mode mode, const char *name)
{
	struct tracer_rb_packet_info info;
	struct tracer_rb_subbuf sb;
	struct chan c;
	int want = mode == TRACER_RB_FLIGHT ? -ESTALE : 0;
	char before[512] __attribute__((aligned(8)));

	chan_open(&c, mode);
	produce(&c, 40);
	if (tracer__rb_get_subbuf(&c.r, &sb))
		bail_out("%s: no sub-buffer to take", name);
	memcpy(before, sb.data, sizeof(before));
	produce(&c, 500);
	is_int(tracer__rb_put_subbuf(&c.r, &sb), want,
	       "%s: releasing a sub-buffer the writer lapped returns %d",
	       name, want);
	if (mode == TRACER_RB_DISCARD) {
		ok(memcmp(before, sb.data, sizeof(before)) == 0,
		   "discard: the held sub-buffer was not overwritten");
		if (tracer__rb_packet_parse(&c.r, before, sb.pos, &info))
			bail_out("parse: %s", c.r.error);
		chk_packet(&c.st, before, &info);
	}
	drain(&c);
	ok(c.st.bad == 0, "%s: records intact %s", name, c.st.first_error);
	is_u64(c.st.seen[0] + lost(&c), c.produced,
	       "%s: recorded + lost == produced", name);
	chan_close(&c);
}

/*
 * A record reserved and not yet committed (as if its thread were
 * interrupted) while "nested" records go all the way round the ring: the
 * writer must not reopen the slot that still holds the uncommitted record.
 */
static void test_nested_lap(enum tracer_rb_mode mode, const char *name)
{
	struct tracer_rb_ctx ctx;
	struct chan c;
	uint64_t lost_before, a;

	chan_open(&c, mode);
	a = c.produced++;
	if (tracer__rb_reserve(&c.w, &ctx, 100, chk_payload_size(0, a)))
		bail_out("reserve");
	produce(&c, 500);
	ok(tracer__rb_lost(&c.r) > 0, "%s: records that would lap an "
	   "uncommitted one are discarded (%" PRIu64 ")", name,
	   tracer__rb_lost(&c.r));
	chk_fill(ctx.payload, 0, a);
	tracer__rb_commit(&c.w, &ctx);
	drain(&c);
	lost_before = tracer__rb_lost(&c.r);
	produce(&c, 3);
	drain(&c);
	is_u64(tracer__rb_lost(&c.r), lost_before,
	       "%s: once committed, writing goes on", name);
	ok(c.st.bad == 0, "%s: every record read is intact %s", name,
	   c.st.first_error);
	if (mode == TRACER_RB_DISCARD)
		ok(c.st.seen[0] > 0 && c.st.next_seq[0] == c.produced,
		   "discard: the interrupted record and the last ones kept");
	is_u64(c.st.seen[0] + lost(&c), c.produced,
	       "%s: recorded + lost == produced", name);
	chan_close(&c);
}

/* A partial read of the open sub-buffer, as tracerd's live reads do. */
static void read_part(struct chan *c)
{
	struct tracer_rb_packet_info info;

	if (tracer__rb_read_partial(&c->r, copy, sizeof(copy), &info) == 0)
		chk_packet(&c->st, copy, &info);
}

/*
 * The first reader goes round the ring several times, reads part of the
 * open sub-buffer, and goes away; a second one attaches to the same
 * region (the read position and the partial read are in it) and reads on.
 */
static void test_takeover(enum tracer_rb_mode mode, const char *name)
{
	struct chan c;
	int lap;

	chan_open(&c, mode);
	for (lap = 0; lap < 30; lap++) {	/* one slot each: 7 laps */
		produce(&c, 5);
		drain(&c);
	}
	produce(&c, 3);
	read_part(&c);
	produce(&c, 2);
	is_u64(lost(&c), 0, "%s: the first reader lost nothing (%" PRIu64
	       " records, %" PRIu64 " read)", name, c.produced,
	       c.st.seen[0]);
	tracer__rb_reader_detach(&c.r);
	if (tracer__rb_reader_attach(&c.r, c.region, c.size, NULL))
		bail_out("cannot attach again");
	produce(&c, 10);
	drain(&c);
	ok(c.st.bad == 0, "%s: after a takeover, records in order, none "
	   "twice %s", name, c.st.first_error);
	is_u64(c.st.overwritten + tracer__rb_lost(&c.r), 0, "%s: after a "
	       "takeover, nothing counted as lost", name);
	is_u64(c.st.seen[0], c.produced, "%s: every record read once",
	       name);
	produce(&c, 1000);	/* the writer goes round the new reader */
	drain(&c);
	is_u64(c.st.seen[0] + lost(&c), c.produced, "%s: then recorded + "
	       "lost == produced, exactly", name);
	ok(lost(&c) > 0, "%s: those losses counted (%" PRIu64 ")", name,
	   lost(&c));
	chan_close(&c);
}

/*
 * The writer goes round the ring many times before its first reader
 * attaches (a process's start segment in flight mode, adopted by a late
 * tracerd): what it overwrote meanwhile counts as overwritten, not read.
 */
static void test_late_reader(void)
{
	struct chan c;

	chan_open(&c, TRACER_RB_FLIGHT);
	tracer__rb_reader_detach(&c.r);
	produce(&c, 1000);
	if (tracer__rb_reader_attach(&c.r, c.region, c.size, NULL))
		bail_out("cannot attach late");
	drain(&c);
	ok(c.st.bad == 0 && c.st.seen[0] > 0, "flight, late reader: %" PRIu64
	   " kept records intact %s", c.st.seen[0], c.st.first_error);
	is_u64(c.st.seen[0] + lost(&c), c.produced, "flight, late reader: "
	       "recorded + overwritten == produced");
	chan_close(&c);
}

static struct chan *hooked;

/*
 * on_close runs inside the writer's opening of the next sub-buffer: after
 * the reservation that moved write_count into it, before its header. Here a
 * "signal handler" records into it, and the reader, pushed forward
 * meanwhile, skips what the writer overwrote.
 */
static void opening_hook(struct tracer_rb_writer *w)
{
	struct chan *c = hooked;

	(void)w;
	if (!c)
		return;
	hooked = NULL;
	chk_record(&c->w, 1, 0);
	c->produced++;
	if (chk_drain(&c->r, &c->st, copy, sizeof(copy)) < 0)
		bail_out("drain in the hook: %s", c->r.error);
}

/* The reader skips overwritten records while a sub-buffer is being opened. */
static void test_opening_race(void)
{
	struct chan c;

	chan_open(&c, TRACER_RB_FLIGHT);
	produce(&c, 1000);
	c.w.on_close = opening_hook;
	hooked = &c;
	while (hooked)
		produce(&c, 1);
	c.w.on_close = NULL;
	produce(&c, 2);
	drain(&c);
	ok(c.st.bad == 0 && c.st.seen[1] == 1, "flight, opening: the nested "
	   "record read, every record intact %s", c.st.first_error);
	is_u64(c.st.seen[0] + c.st.seen[1] + lost(&c), c.produced,
	       "flight, opening: recorded + overwritten == produced");
	chan_close(&c);
}

int main(void)
{
	plan(47);
	test_discard_full();
	test_flight_full();
	test_held(TRACER_RB_DISCARD, "discard");
	test_held(TRACER_RB_FLIGHT, "flight");
	test_nested_lap(TRACER_RB_DISCARD, "discard");
	test_nested_lap(TRACER_RB_FLIGHT, "flight");
	test_takeover(TRACER_RB_DISCARD, "discard");
	test_takeover(TRACER_RB_FLIGHT, "flight");
	test_opening_race();
	test_late_reader();
	return done();
}
