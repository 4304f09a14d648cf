/*
 * test_pool.c - a process's pool as tracerd makes it (tracerd/pool.c),
 * driven directly: the first segment (its header, its descriptors, a ring
 * per channel of every buffer, the spare), the pages a new pool touches,
 * the memory cap, and growth when few buffers are usable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracerd_stubs.h"
#include "pool_make.h"
#include "tap.h"

static struct tracerd d;

/* tracerd as it starts without options. */
static void defaults(void)
{
	tracerd_scratch_free(&d);	/* of the test before */
	memset(&d, 0, sizeof(d));
	tracerd_config_defaults(&d.cfg);
}

static struct tracerd_process *new_process(void)
{
	struct tracerd_process *p = calloc(1, sizeof(*p));

	if (!p)
		bail_out("calloc");
	p->d = &d;
	p->pid = 4242;
	p->client = (struct tracerd_client *)(uintptr_t)1;	/* stubbed */
	return p;
}

/* Every ring of every buffer: a valid header of the configured geometry. */
static bool rings_valid(const struct tracerd_process *p)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			const struct tracer_rb_reader *r =
				&p->pool.buf[i].rd[c];

			if (r->geo.subbuf_size != d.cfg.subbuf_size[c] ||
			    r->geo.subbuf_count != d.cfg.subbuf_count[c] ||
			    r->stream_id != (uint32_t)c ||
			    r->stream_instance_id != (uint64_t)i << 32)
				return false;
		}
	return true;
}

static unsigned count_state(const struct tracerd_process *p, uint32_t state)
{
	unsigned n = 0;
	uint32_t i;

	for (i = 0; i < p->pool.nbuf; i++)
		n += TRACER_BUF_STATE(p->pool.buf[i].desc->state) == state;
	return n;
}

static unsigned resident_pages(const struct tracerd_segment *s)
{
	size_t n = s->size / 4096, i;
	unsigned char *vec = malloc(n);
	unsigned count = 0;

	if (!vec || mincore(s->base, s->size, vec) < 0)
		bail_out("mincore");
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

static void test_first_segment(void)
{
	struct tracerd_process *p = new_process();
	struct tracer_pool_header *h;
	int fd;

	defaults();
	fd = tracerd_pool_create(p);
	ok(fd >= 0, "a pool is made (fd %d)", fd);
	if (fd < 0)
		bail_out("no pool");
	h = tracerd_pool_line(p);
	ok(p->pool.nseg == 1 && p->pool.nbuf == d.cfg.buffers + 1 &&
	   h->magic == TRACER_POOL_MAGIC &&
	   h->version == TRACER_POOL_VERSION &&
	   h->buffer_count == d.cfg.buffers + 1,
	   "one segment of the default buffers and a spare, its header valid");
	ok(rings_valid(p), "a ring per channel of each buffer, of the "
	   "configured geometry, its instance the buffer's index");
	ok(count_state(p, TRACER_BUF_FREE) == d.cfg.buffers &&
	   TRACER_BUF_STATE(p->pool.buf[d.cfg.buffers].desc->state) ==
	   TRACER_BUF_EMERGENCY,
	   "%u buffers free, the last one the spare", d.cfg.buffers);
	/* Header, descriptors: a page or two; then one page per ring. */
	ok(resident_pages(&p->pool.seg[0]) <= 2 + 2 * (d.cfg.buffers + 1),
	   "a new pool touches a page per ring, not its commit counters "
	   "(%u resident pages of %zu)", resident_pages(&p->pool.seg[0]),
	   (size_t)(p->pool.seg[0].size / 4096));
	ok(d.scratch.buf && d.scratch.size >= TRACERD_BATCH_BYTES,
	   "the drain's scratch buffer is there for it");
	close(fd);
	stub_free_process(p);
}

static void test_cap(void)
{
	struct tracerd_process *p = new_process();
	uint64_t one;
	int fd;

	/* --max-memory itself is under test here; the rest as default. */
	defaults();
	fd = tracerd_pool_create(p);
	one = p->pool.buffer_size;
	close(fd);
	stub_free_process(p);

	p = new_process();
	defaults();
	d.cfg.max_memory = 4 * one + one / 2;
	fd = tracerd_pool_create(p);
	ok(fd >= 0 && p->pool.nbuf == 4 && p->pool.bytes <= d.cfg.max_memory,
	   "under --max-memory, as many buffers as fit (%u)", p->pool.nbuf);
	if (fd >= 0)
		close(fd);
	stub_free_process(p);

	p = new_process();
	defaults();
	d.cfg.max_memory = one / 2;
	fd = tracerd_pool_create(p);
	is_int(fd, -ENOSPC, "a cap below one buffer: -ENOSPC");
	if (fd >= 0)
		close(fd);
	stub_free_process(p);
}

/* --max-total-memory: all pools together, whoever asks. */
static void test_total_cap(void)
{
	struct tracerd_process *a = new_process(), *b = new_process(),
			       *c = new_process();
	int fa, fb, fc;

	defaults();
	fa = tracerd_pool_create(a);
	d.cfg.max_total_memory = a->pool.bytes + a->pool.bytes / 2;
	fb = tracerd_pool_create(b);
	ok(fa >= 0 && fb >= 0 && b->pool.nbuf < a->pool.nbuf &&
	   d.pools_bytes == a->pool.bytes + b->pool.bytes &&
	   d.pools_bytes <= d.cfg.max_total_memory,
	   "a second pool gets what still fits under --max-total-memory "
	   "(%u buffers of %u)", b->pool.nbuf, a->pool.nbuf);
	fc = tracerd_pool_create(c);
	is_int(fc, -ENOSPC, "a third, with nothing left: -ENOSPC");
	close(fa);
	stub_free_process(a);
	ok(d.pools_bytes == b->pool.bytes, "a pool freed gives its bytes "
	   "back to the total");
	close(fb);
	stub_free_process(b);
	stub_free_process(c);
	is_u64(d.pools_bytes, 0, "no pool, nothing counted");
}

static void take_all(struct tracerd_process *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p->pool.buf[i].desc->state = TRACER_BUF_WORD(1ULL,
							TRACER_BUF_IN_USE);
}

static void test_growth(void)
{
	struct tracerd_process *p = new_process();
	int fd;

	defaults();
	fd = tracerd_pool_create(p);
	if (fd < 0)
		bail_out("no pool");
	close(fd);
	stub_sent.messages = 0;
	/* 10 buffers and the spare: growth below half of 11 usable. */
	take_all(p, 4);
	tracerd_pool_maybe_grow(p);
	ok(p->pool.nseg == 1 && stub_sent.messages == 0,
	   "6 of 11 buffers usable: no growth");
	take_all(p, 5);
	tracerd_pool_maybe_grow(p);
	ok(p->pool.nseg == 2 && p->pool.nbuf == 22 && rings_valid(p),
	   "fewer than half usable: a second segment doubles the pool "
	   "(%u buffers)", p->pool.nbuf);
	ok(stub_sent.messages == 1 &&
	   stub_sent.body_case == TRACER__MESSAGE__BODY_SEGMENT &&
	   stub_sent.nfds == 1, "the new segment is sent to the process");
	ok(p->pool.seg[1].first == 11 &&
	   count_state(p, TRACER_BUF_FREE) == 16 &&
	   count_state(p, TRACER_BUF_EMERGENCY) == 1,
	   "its buffers follow the first segment's, free (one spare in all)");
	stub_sent_clear();
	stub_free_process(p);
}

/*
 * The first segment a process makes at its start (libtracer/pool.c, from
 * the state page's geometry: tracerd_pool_pick()): the layout tracerd
 * makes for one buffer, which tracerd then adopts; its first growth, the
 * rest of a new pool's buffers.
 */
static void test_start_segment(void)
{
	struct tracer_pool_shape sh;
	struct tracer_rb_reader r;
	uint64_t desc_off, buf_off, size;
	struct tracerd_process *p = new_process();
	struct tracerd_segment seg;
	const struct tracer_pool_header *h;
	const struct tracer_pool_desc *desc;
	void *base;
	bool rings = true;
	int fd, c;

	defaults();
	memset(&sh, 0, sizeof(sh));
	tracerd_pool_pick(&d, sh.subbuf_size, sh.subbuf_count);
	ok(tracer__pool_shape(&sh, NULL) == 0, "the state page's geometry "
	   "gives a buffer's shape (%llu bytes)",
	   (unsigned long long)sh.buffer_size);
	size = tracer__pool_segment_bytes(sh.buffer_size, 1, &desc_off,
					  &buf_off);
	fd = tracerd_make_memfd("start", size, &base);
	if (fd < 0)
		bail_out("memfd");
	ok(tracer__pool_format(base, size, &sh, 0, 0, 1, true, NULL) == 0,
	   "one buffer laid out in a new memfd");
	h = base;
	desc = (const void *)((const char *)base + h->desc_offset);
	/* Before anything reads it: header, descriptor, two ring headers. */
	seg = (struct tracerd_segment){ .base = base, .fd = -1, .size = size };
	ok(resident_pages(&seg) <= 4, "a start touches %u pages of it",
	   resident_pages(&seg));
	/* tracerd's own pool of the same geometry, for comparison. */
	d.cfg.buffers = 0;
	if (tracerd_pool_create(p) < 0)
		bail_out("no pool");
	ok(h->magic == TRACER_POOL_MAGIC && h->buffer_count == 1 &&
	   h->buffer_size == p->pool.buffer_size &&
	   !memcmp(h->channel_offset, p->pool.channel_offset,
		   sizeof(h->channel_offset)) &&
	   TRACER_BUF_STATE(desc[0].state) == TRACER_BUF_FREE,
	   "its header and buffer are those tracerd makes; the buffer free, "
	   "no spare of one");
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		rings &= tracer__rb_reader_attach(&r, (char *)base + buf_off +
				h->channel_offset[c],
				tracer__pool_channel_size(h->channel_offset,
							  h->buffer_size, c),
				NULL) == 0 &&
			 r.geo.subbuf_size == sh.subbuf_size[c] &&
			 r.stream_id == (uint32_t)c;
		tracer__rb_reader_detach(&r);
	}
	ok(rings, "a reader attaches to both rings, of the geometry asked");
	munmap(base, size);
	close(fd);
	/* tracerd's pool of one buffer, as adopted: the rest comes. */
	d.cfg.buffers = 10;
	stub_sent_clear();
	stub_sent.messages = 0;
	tracerd_pool_top_up(p);
	ok(p->pool.nseg == 2 && p->pool.nbuf == 11 && rings_valid(p) &&
	   stub_sent.messages == 1 &&
	   stub_sent.body_case == TRACER__MESSAGE__BODY_SEGMENT,
	   "topped up to the buffers a pool starts with, the segment sent "
	   "(%u buffers)", p->pool.nbuf);
	tracerd_pool_top_up(p);
	ok(stub_sent.messages == 1, "only once");
	stub_sent_clear();
	stub_free_process(p);
}

int main(void)
{
	plan(23);
	test_first_segment();
	test_cap();
	test_total_cap();
	test_growth();
	test_start_segment();
	tracerd_scratch_free(&d);
	return done();
}
