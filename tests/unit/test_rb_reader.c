/*
 * test_rb_reader.c - the reader side: a reader thread draining while the
 * writer runs (both modes, exact accounting), and a reader facing a region
 * that lies: every corruption is reported as an error naming what and
 * where, the bad packet is skipped, and reading goes on. The reader thread
 * also runs staging (as tracerd's drain does: tracer__rb_ready() counts
 * the complete sub-buffers, they are copied out in one go, and the reads
 * take them from that copy) with the same exact accounting.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define EVENTS 2000000

struct shared {
	char *region;
	uint64_t size;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	struct chk_state st;
	uint64_t produced;
	uint64_t read_while_writing;
	int done;			/* writer finished and flushed */
	int stage;			/* read through staged copies */
	uint64_t staged;		/* sub-buffers staged */
	uint64_t in_place;		/* packets checked in the copy */
	char copy[1 << 16] __attribute__((aligned(64)));
	char stage_copy[1 << 16] __attribute__((aligned(64)));
};

/*
 * What tracerd's stage_ahead() does, with memcpy for its pread(). First a
 * get, which moves a flight reader past what the writer overwrote (ready
 * only looks: a writer that laps the reader all the time, as under
 * AddressSanitizer, left nothing to stage until the reader skipped).
 */
static void stage_ahead(struct shared *s)
{
	struct tracer_rb_subbuf sb;
	struct tracer_rb_span span;
	uint32_t n;

	if (tracer__rb_get_subbuf(&s->r, &sb))
		return;
	n = tracer__rb_ready(&s->r, (uint32_t)(sizeof(s->stage_copy) /
					       s->r.geo.subbuf_size), &span);
	if (n == 0)
		return;
	memcpy(s->stage_copy, s->r.data + span.offset, span.len);
	tracer__rb_stage(&s->r, s->stage_copy, &span);
	s->staged += n;
}

static void *writer_main(void *arg)
{
	struct shared *s = arg;
	uint64_t i;

	for (i = 0; i < EVENTS; i++)
		chk_record(&s->w, 0, s->produced++);
	tracer__rb_flush(&s->w);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct shared *s = arg;
	int n, last = 0;

	while (!last) {
		last = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
		if (s->stage)
			stage_ahead(s);
		n = s->stage ? chk_drain_ref(&s->r, &s->st, s->copy,
					     sizeof(s->copy), &s->in_place)
			     : chk_drain(&s->r, &s->st, s->copy,
					 sizeof(s->copy));
		tracer__rb_unstage(&s->r);
		if (n < 0)
			bail_out("reader: %s", s->r.error);
		if (!last)
			s->read_while_writing += (uint64_t)n;
		if (n == 0 && !last)
			sched_yield();
	}
	return NULL;
}

static void test_threads(enum tracer_rb_mode mode, int stage,
			 const char *name)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
		.subbuf_count = 8, .mode = mode };
	struct shared *s = calloc(1, sizeof(*s));
	pthread_t wt, rt;

	s->stage = stage;
	s->region = chk_channel(&cfg, &s->size);
	if (!s->region ||
	    tracer__rb_writer_attach(&s->w, s->region, s->size, 1, NULL) ||
	    tracer__rb_reader_attach(&s->r, s->region, s->size, NULL))
		bail_out("cannot create a channel");
	pthread_create(&rt, NULL, reader_main, s);
	pthread_create(&wt, NULL, writer_main, s);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	ok(s->read_while_writing > 0, "%s: the reader thread took %" PRIu64
	   " packets while the writer ran", name, s->read_while_writing);
	if (stage)
		ok(s->staged > 0 && s->in_place > 0 &&
		   s->in_place <= s->staged, "%s: %" PRIu64 " sub-buffers "
		   "were staged, %" PRIu64 " packets checked there", name,
		   s->staged, s->in_place);
	ok(s->st.bad == 0, "%s: every record read intact and in order %s",
	   name, s->st.first_error);
	is_u64(chk_total_seen(&s->st) + tracer__rb_lost(&s->r) +
	       s->st.overwritten, s->produced,
	       "%s: recorded + lost == produced (%" PRIu64 " lost, %" PRIu64
	       " overwritten)", name, tracer__rb_lost(&s->r),
	       s->st.overwritten);
	tracer__rb_reader_detach(&s->r);
	free(s->region);
	free(s);
}

struct victim {
	char *region;
	uint64_t size;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	uint64_t produced;		/* records written */
	char copy[4096] __attribute__((aligned(64)));
};

/* A discard channel with three complete packets of good records. */
static void victim_open(struct victim *v)
{
	struct tracer_rb_config cfg = { .subbuf_size = 1024,
		.subbuf_count = 4 };
	uint64_t i;

	v->region = chk_channel(&cfg, &v->size);
	if (!v->region ||
	    tracer__rb_writer_attach(&v->w, v->region, v->size, 1, NULL) ||
	    tracer__rb_reader_attach(&v->r, v->region, v->size, NULL))
		bail_out("cannot create a channel");
	for (i = 0; v->w.hdr->write_count < 2 * 1024 + 100; i++)
		chk_record(&v->w, 0, i);
	v->produced = i;
	tracer__rb_flush(&v->w);
}

static void victim_close(struct victim *v)
{
	tracer__rb_reader_detach(&v->r);
	free(v->region);
}

static struct tracer_rb_packet *victim_packet(struct victim *v, int n)
{
	return (void *)(v->region + v->r.geo.data_offset + n * 1024);
}

static void corrupt_packet(const char *what, uint64_t field_off,
			   uint64_t value, const char *expect)
{
	struct tracer_rb_packet_info info;
	struct victim v;
	int ret;

	victim_open(&v);
	memcpy((char *)victim_packet(&v, 1) + field_off, &value, 8);
	is_int(tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info), 0,
	       "%s: the packet before it reads fine", what);
	ret = tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info);
	ok(ret == -EBADMSG && strstr(v.r.error, expect),
	   "%s: reported (%d): %s", what, ret, v.r.error);
	is_int(tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info), 0,
	       "%s: the packet after it still reads", what);
	victim_close(&v);
}

static void test_bad_counters(void)
{
	struct tracer_rb_packet_info info;
	struct victim v;
	int ret;

	victim_open(&v);
	v.w.hdr->write_count += 1ULL << 40;
	ret = tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info);
	ok(ret == -EIO && strstr(v.r.error, "ahead"),
	   "write count far ahead of the reader: %s", v.r.error);
	v.w.hdr->write_count -= 1ULL << 40;
	v.w.commit[0].count += 4096;
	ret = tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info);
	ok(ret == -EIO && strstr(v.r.error, "commit count"),
	   "commit count past its sub-buffer: %s", v.r.error);
	victim_close(&v);
}

static void test_random_bytes(void)
{
	struct tracer_rb_packet_info info;
	struct victim v;
	uint64_t i, *words;
	int ret, errors = 0, reads = 0;

	victim_open(&v);
	words = (uint64_t *)(v.region + v.r.geo.data_offset);
	for (i = 0; i < 4 * 1024 / 8; i++)
		words[i] = chk_mix(i + 1);
	for (i = 0; i < 4; i++)		/* every slot claims to be complete */
		v.w.commit[i].count = 1024;
	v.w.hdr->write_count = 4 * 1024;
	while ((ret = tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info))
	       != -EAGAIN && reads++ < 10)
		errors += ret == -EBADMSG;
	ok(errors == 4 && reads == 4, "random bytes in every sub-buffer: "
	   "4 packets reported corrupt, reading went on (%d/%d)", errors,
	   reads);
	victim_close(&v);
}

/*
 * A reader attaching to a ring (tracerd, at every process's registration)
 * reads nothing of a sub-buffer the writer has not reached: in a new pool
 * those pages do not exist yet, and reading them would make every one of
 * them (17 ms of tracerd's time per process start, before this was
 * tested). Here they are unreadable: touching one kills the test.
 */
static void test_attach_untouched(void)
{
	struct tracer_rb_config cfg = {
		.subbuf_size = 4096, .subbuf_count = 64,
		.mode = TRACER_RB_DISCARD,
	};
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	struct tracer_rb_geometry geo;
	uint64_t size;
	char *region = chk_channel(&cfg, &size);
	int i, ret;

	if (!region || tracer__rb_geometry(&geo, cfg.subbuf_size,
					   cfg.subbuf_count, NULL) ||
	    tracer__rb_writer_attach(&w, region, size, 1, NULL))
		bail_out("cannot make a channel");
	for (i = 0; i < 10; i++)	/* in the first sub-buffer only */
		chk_record(&w, 0, (uint64_t)i);
	if (mprotect(region + geo.data_offset + cfg.subbuf_size,
		     size - geo.data_offset - cfg.subbuf_size, PROT_NONE))
		bail_out("mprotect: %s", strerror(errno));
	ret = tracer__rb_reader_attach(&r, region, size, NULL);
	ok(ret == 0, "a reader attaches without reading the sub-buffers "
	   "the writer has not reached");
	tracer__rb_reader_detach(&r);
	mprotect(region, size, PROT_READ | PROT_WRITE);
	free(region);
}

/* A victim whose first two sub-buffers (of three complete) are staged in
 * stage (2048 bytes), copied as tracerd's pread() would. */
static void victim_staged(struct victim *v, char *stage)
{
	struct tracer_rb_span span;

	victim_open(v);
	tracer__rb_ready(&v->r, 2, &span);
	memcpy(stage, v->r.data, span.len);
	tracer__rb_stage(&v->r, stage, &span);
}

/*
 * tracer__rb_ready() counts complete sub-buffers up to what is asked, and
 * reads take staged sub-buffers from the copy: a packet spoiled in the
 * copy alone is reported, the ring's intact one is not read instead; past
 * the staged ones, reads come from the ring again.
 */
static void test_stage_source(void)
{
	struct victim v;
	struct tracer_rb_span span;
	struct tracer_rb_packet_info info;
	static char stage[2048] __attribute__((aligned(64)));
	uint64_t bad = 0x1234;
	uint32_t n;

	victim_staged(&v, stage);	/* three complete sub-buffers of four */
	n = tracer__rb_ready(&v.r, 8, &span);
	ok(n == 3 && span.pos == 0 && span.offset == 0 && span.len == 3072,
	   "ready: the three complete sub-buffers (%u, %" PRIu64 " bytes)",
	   n, span.len);
	n = tracer__rb_ready(&v.r, 2, &span);
	ok(n == 2 && span.len == 2048, "ready: no more than asked");
	memcpy(stage + 1024, &bad, sizeof(bad));	/* packet 1's magic */
	ok(tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info) == 0 &&
	   tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info) == -EBADMSG &&
	   strstr(v.r.error, "magic"),
	   "staged reads come from the copy (%s)", v.r.error);
	ok(tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info) == 0 &&
	   tracer__rb_read(&v.r, v.copy, sizeof(v.copy), &info) == -EAGAIN,
	   "the next one comes from the ring, then nothing");
	tracer__rb_unstage(&v.r);
	victim_close(&v);
}

/* tracer__rb_read_ref() of v's next packet; its records added up. */
static int read_ref(struct victim *v, void **pk, uint64_t *records)
{
	struct tracer_rb_packet_info info;
	int ret = tracer__rb_read_ref(&v->r, v->copy, sizeof(v->copy), &info,
				      pk);

	if (!ret)
		*records += info.records;
	return ret;
}

/*
 * tracer__rb_read_ref() checks staged packets where they are, with the
 * same accounting as a copy, and copies the others to dst.
 */
static void test_stage_in_place(void)
{
	struct victim v;
	static char stage[2048] __attribute__((aligned(64)));
	uint64_t records = 0;
	void *pk[3];
	int ret[4];

	victim_staged(&v, stage);
	memset(v.copy, 0xa5, sizeof(v.copy));
	ret[0] = read_ref(&v, &pk[0], &records);
	ret[1] = read_ref(&v, &pk[1], &records);
	ok(!ret[0] && !ret[1] && pk[0] == stage && pk[1] == stage + 1024 &&
	   (unsigned char)v.copy[0] == 0xa5,
	   "staged packets are checked in the copy, not copied to dst");
	ret[2] = read_ref(&v, &pk[2], &records);
	ret[3] = read_ref(&v, &pk[0], &records);
	ok(!ret[2] && pk[2] == v.copy && ret[3] == -EAGAIN,
	   "the next one is copied to dst, then nothing");
	is_u64(records, v.produced, "every record counted, staged or not");
	tracer__rb_unstage(&v.r);
	victim_close(&v);
}

int main(void)
{
	plan(34);
	test_attach_untouched();
	test_threads(TRACER_RB_DISCARD, 0, "discard");
	test_threads(TRACER_RB_FLIGHT, 0, "flight");
	test_threads(TRACER_RB_DISCARD, 1, "discard, staged");
	test_threads(TRACER_RB_FLIGHT, 1, "flight, staged");
	test_stage_source();
	test_stage_in_place();
	corrupt_packet("bad packet magic", 0, 0x1234, "magic");
	corrupt_packet("content size past the packet",
		       offsetof(struct tracer_rb_packet, content_size), 1 << 20,
		       "content size");
	corrupt_packet("record header zero (size 0)", TRACER_RB_PACKET_SIZE, 0,
		       "bad header");
	test_bad_counters();
	test_random_bytes();
	return done();
}
