/*
 * pool.c - a process's pool: its geometry, its memfd segments, their
 * buffers and rings, and their growth.
 *
 * tracerd makes a pool's segments (pool_layout.h): a header, a descriptor
 * per buffer, the buffers, each holding one ring per channel (rb.h), all
 * in a new sealed memfd that it maps and passes to the process. It
 * attaches a reader to every ring at once (the drain is process.c's). The
 * pool starts with --buffers buffers plus a spare, and doubles (a new
 * segment) when fewer than half of its buffers are usable for a new
 * thread (pool_room.h), or a thread saw so, up to --max-memory. Pools are
 * also made ahead, in idle time, for processes still to come (stock.c):
 * tracerd_process_take_pool() moves one into a process.
 *
 * What the process writes into its pool is never trusted here: descriptor
 * states are only compared and counted, the rings are read through rb.h's
 * checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracerd.h"
#include "pool_room.h"
#include "pool_make.h"

/* p's geometry as a segment's shape (pool_make.h). */
static struct tracer_pool_shape shape_of(const struct tracerd_process *p)
{
	struct tracer_pool_shape sh;
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		sh.subbuf_size[c] = p->pool.subbuf_size[c];
		sh.subbuf_count[c] = p->pool.subbuf_count[c];
		sh.channel_offset[c] = p->pool.channel_offset[c];
	}
	sh.buffer_size = p->pool.buffer_size;
	return sh;
}

/* Offsets and size of one buffer of p: both channels, page aligned. */
static int buffer_geometry(struct tracerd_process *p)
{
	struct tracer_pool_shape sh = shape_of(p);
	const char *why = "invalid";
	int ret = tracer__pool_shape(&sh, &why);

	if (ret) {
		tracerd_log("pool geometry: %s", why);
		return ret;
	}
	memcpy(p->pool.channel_offset, sh.channel_offset,
	       sizeof(sh.channel_offset));
	p->pool.buffer_size = sh.buffer_size;
	return 0;
}

static uint64_t segment_bytes(uint64_t buffer_size, uint32_t count,
			      uint64_t *desc_off, uint64_t *buf_off)
{
	return tracer__pool_segment_bytes(buffer_size, count, desc_off,
					  buf_off);
}

int tracerd_pool_geometry_ok(const struct tracerd *d, uint64_t subbuf_size,
			     uint64_t subbuf_count, char *why, size_t n)
{
	struct tracer_pool_shape sh = {
		.subbuf_size = { subbuf_size, d->cfg.subbuf_size[1] },
		.subbuf_count = { subbuf_count, d->cfg.subbuf_count[1] },
	};
	const char *gwhy = "invalid";
	uint64_t dsc, bo;

	if (tracer__pool_shape(&sh, &gwhy)) {
		snprintf(why, n, "sub-buffers: %" PRIu64 " x %" PRIu64 " bytes: "
			 "%s", subbuf_count, subbuf_size, gwhy);
		return -EINVAL;
	}
	if (segment_bytes(sh.buffer_size, 1, &dsc, &bo) > d->cfg.max_memory) {
		snprintf(why, n, "sub-buffers: %" PRIu64 " x %" PRIu64 " bytes "
			 "make a thread's buffer (%" PRIu64 " MiB) larger than "
			 "tracerd's --max-memory (%" PRIu64 " MiB)",
			 subbuf_count, subbuf_size, sh.buffer_size >> 20,
			 d->cfg.max_memory >> 20);
		return -E2BIG;
	}
	return 0;
}

/* Largest count <= want that fits under the memory caps: the process's
 * (--max-memory) and that of all pools (--max-total-memory). */
static uint32_t fit_count(const struct tracerd_process *p, uint32_t want)
{
	uint64_t cap = p->d->cfg.max_memory, d, b, size;

	for (; want > 0; want--) {
		size = segment_bytes(p->pool.buffer_size, want, &d, &b);
		if (p->pool.bytes + size <= cap &&
		    tracerd_pools_fit(p->d, size))
			break;
	}
	return want;
}

bool tracerd_pools_fit(const struct tracerd *d, uint64_t size)
{
	return d->pools_bytes <= d->cfg.max_total_memory &&
	       size <= d->cfg.max_total_memory - d->pools_bytes;
}

/* A sealed memfd of size bytes, mapped; returns the fd or -errno. */
int tracerd_make_memfd(const char *name, uint64_t size, void **map)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), ret;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED)
		goto fail;
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

void tracerd_segment_open(struct tracerd_segment *s, char *base, int fd,
			  uint64_t size)
{
	void *v = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

	s->base = base;
	s->view = v == MAP_FAILED ? NULL : v;
	s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	s->size = size;
}

void tracerd_segment_close(struct tracerd_segment *s)
{
	if (s->view)
		munmap((void *)s->view, s->size);
	munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->view = NULL;
	s->fd = -1;
}

/*
 * The losses a reader before us told (rb_layout.h, lost_told): a pool
 * adopted from a tracerd that died tells, in the new session, the losses
 * of the time no tracerd ran. A fresh ring: 0. A value past the writer's
 * count (nonsense) tells nothing more.
 */
uint64_t tracerd_lost_told(const struct tracer_rb_reader *r)
{
	uint64_t told = TRACER_READ_ONCE(r->hdr->lost_told);
	uint64_t lost = tracer__rb_lost(r);

	return told <= lost ? told : lost;
}

void tracerd_detach_buffers(struct tracerd_buffer *b, uint32_t n)
{
	uint32_t i;
	int c;

	for (i = 0; i < n; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			tracer__rb_reader_detach(&b[i].rd[c]);
}

int tracerd_attach_buffer(struct tracerd_process *p, struct tracerd_buffer *b,
			  const struct tracerd_segment *s, uint64_t off,
			  struct tracer_pool_desc *desc, bool fresh)
{
	int (*attach)(struct tracer_rb_reader *, void *, uint64_t,
		      const char **) = fresh ? tracer__rb_reader_attach_new
					     : tracer__rb_reader_attach;
	int c, ret;

	memset(b, 0, sizeof(*b));
	b->desc = desc;
	b->seg_fd = s->fd;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		b->st[c].fd = -1;
		b->st[c].counted = true;
		ret = attach(&b->rd[c], s->base + off + p->pool.channel_offset[c],
			     tracer__pool_channel_size(p->pool.channel_offset,
						       p->pool.buffer_size, c),
			     NULL);
		if (ret) {
			tracerd_detach_buffers(b, 1);
			return ret;
		}
		if (s->view)
			tracer__rb_reader_view(&b->rd[c], s->view + off +
					       p->pool.channel_offset[c]);
		b->data_at[c] = off + p->pool.channel_offset[c] +
				b->rd[c].geo.data_offset;
		b->rd[c].instance_mask = TRACERD_INSTANCE_MASK;
		b->rd[c].history = &p->d->clock.history;
		b->st[c].lost_seen = tracerd_lost_told(&b->rd[c]);
	}
	return 0;
}

/* Does any buffer wait in reserve (EMERGENCY)? */
static bool has_spare(const struct tracerd_process *p)
{
	uint32_t i;

	for (i = 0; i < p->pool.nbuf; i++)
		if (TRACER_BUF_STATE(TRACER_READ_ONCE(
			p->pool.buf[i].desc->state)) == TRACER_BUF_EMERGENCY)
			return true;
	return false;
}

static int fill_segment(struct tracerd_process *p,
			const struct tracerd_segment *s, uint32_t count,
			uint64_t buf_off)
{
	struct tracer_pool_header *h = (void *)s->base;
	struct tracer_pool_desc *desc;
	struct tracer_pool_shape sh = shape_of(p);
	const char *why = "invalid";
	uint32_t i;
	int ret;

	ret = tracer__pool_format(s->base, s->size, &sh, p->pool.nseg,
				  p->pool.nbuf, count, !has_spare(p), &why);
	if (ret) {
		tracerd_log("cannot lay out a pool segment: %s", why);
		return ret;
	}
	desc = (void *)(s->base + h->desc_offset);
	for (i = 0; i < count; i++) {
		uint64_t off = buf_off + (uint64_t)i * p->pool.buffer_size;

		ret = tracerd_attach_buffer(p, &p->pool.buf[p->pool.nbuf + i],
					    s, off, &desc[i], true);
		if (ret) {
			tracerd_detach_buffers(&p->pool.buf[p->pool.nbuf], i);
			return ret;
		}
	}
	return 0;
}

/*
 * Create a segment of `count` buffers (fewer under the memory cap).
 * Returns its fd (the caller sends it), or -ENOSPC (at the cap), -ENOMEM,
 * -E2BIG (too many segments), or the errno of memfd/mmap.
 */
static int add_segment(struct tracerd_process *p, uint32_t count)
{
	struct tracerd_segment *s = &p->pool.seg[p->pool.nseg];
	uint64_t desc_off, buf_off, size;
	struct tracerd_buffer *nb;
	void *base;
	int fd, ret;

	if (p->pool.nseg == TRACER_POOL_MAX_SEGMENTS)
		return -E2BIG;
	count = fit_count(p, count);
	if (count == 0)
		return -ENOSPC;
	size = segment_bytes(p->pool.buffer_size, count, &desc_off, &buf_off);
	nb = realloc(p->pool.buf, sizeof(*nb) * (p->pool.nbuf + count));
	if (!nb)
		return -ENOMEM;
	p->pool.buf = nb;
	fd = tracerd_make_memfd("tracer-pool", size, &base);
	if (fd < 0)
		return fd;
	tracerd_segment_open(s, base, fd, size);
	ret = fill_segment(p, s, count, buf_off);
	if (ret) {
		tracerd_segment_close(s);
		close(fd);
		return ret;
	}
	s->first = p->pool.nbuf;
	s->count = count;
	p->pool.nseg++;
	p->pool.nbuf += count;
	p->pool.bytes += size;
	p->d->pools_bytes += size;
	return fd;
}

/* The pool line, or a line of nobody's while p has no pool yet. */
struct tracer_pool_header *tracerd_pool_line(struct tracerd_process *p)
{
	static struct tracer_pool_header none;

	if (!p->pool.nseg)
		return &none;
	return (struct tracer_pool_header *)(void *)p->pool.seg[0].base;
}

void tracerd_buffer_release(struct tracerd_process *p,
			    struct tracerd_buffer *b, uint64_t word)
{
	uint64_t stamp = __atomic_add_fetch(
		&tracerd_pool_line(p)->release_clock, 1,
					    __ATOMIC_RELAXED);

	TRACER_WRITE_ONCE(b->desc->lru_stamp, stamp);
	/* The repaired channels before the buffer is free to take. */
	__atomic_compare_exchange_n(&b->desc->state, &word,
				    TRACER_BUF_WORD(TRACER_BUF_GEN(word),
						    TRACER_BUF_FREE),
				    false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Growth                                                              */

static void send_segment(struct tracerd_process *p, int fd)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Segment s = TRACER__SEGMENT__INIT;

	s.index = p->pool.nseg - 1;
	s.size = p->pool.seg[p->pool.nseg - 1].size;
	m.body_case = TRACER__MESSAGE__BODY_SEGMENT;
	m.segment = &s;
	if (p->client)
		tracerd_send(p->client, &m, &fd, 1);
	else
		close(fd);
}

/* A segment of count more buffers, sent to the process; at the memory
 * caps, nothing (and nothing said: the threads count what they drop). */
static void grow_by(struct tracerd_process *p, uint32_t count)
{
	int fd = add_segment(p, count);

	if (fd >= 0)
		send_segment(p, fd);
	else if (fd != -ENOSPC && fd != -E2BIG)
		tracerd_log("pid %d: cannot grow the pool: %s", (int)p->pid,
			    strerror(-fd));
}

/* A FREE buffer whose rings have room for a new owner (pool_room.h). */
static bool usable(const struct tracerd_buffer *b)
{
	int c;

	if (TRACER_BUF_STATE(TRACER_READ_ONCE(b->desc->state)) !=
	    TRACER_BUF_FREE)
		return false;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (!b->broken[c] &&
		    !tracer__channel_has_room(b->rd[c].hdr, b->rd[c].read_count))
			return false;
	return true;
}

/*
 * Double the pool when a thread saw few buffers usable in the pool as it
 * is now (want_grow holds the number of buffers it saw), or when few are
 * usable now: FREE with room in their rings, not merely FREE (under thread
 * churn buffers come back long before their last owners are written out).
 * The thread's word counts: a burst of threads is often over by the time
 * we look, and the next one finds no buffer (doc/thread-churn.md). An ask
 * about a smaller pool (before the last growth) does not.
 */
void tracerd_pool_maybe_grow(struct tracerd_process *p)
{
	struct tracer_pool_header *h = tracerd_pool_line(p);
	uint32_t i, nfree = 0, asked = TRACER_READ_ONCE(h->want_grow);

	if (asked)
		TRACER_WRITE_ONCE(h->want_grow, 0);
	if (asked < p->pool.nbuf) {
		for (i = 0; i < p->pool.nbuf; i++)
			nfree += usable(&p->pool.buf[i]);
		if (nfree * 2 >= p->pool.nbuf)
			return;
	}
	grow_by(p, p->pool.nbuf);
}

void tracerd_pool_pick(const struct tracerd *d,
		       uint64_t size[TRACER_POOL_CHANNELS],
		       uint64_t count[TRACER_POOL_CHANNELS])
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		size[c] = d->cfg.subbuf_size[c];
		count[c] = d->cfg.subbuf_count[c];
	}
	if ((d->session_id || d->starting) && d->sess.subbuf_size)
		size[0] = d->sess.subbuf_size;
	if ((d->session_id || d->starting) && d->sess.subbuf_count)
		count[0] = d->sess.subbuf_count;
}

void tracerd_pool_top_up(struct tracerd_process *p)
{
	uint32_t want = p->d->cfg.buffers + 1;

	if (p->pool.nbuf < want)
		grow_by(p, want - p->pool.nbuf);
}

/* tracerd's geometry, or the session's for the default channel. */
static void pick_geometry(struct tracerd_process *p)
{
	tracerd_pool_pick(p->d, p->pool.subbuf_size, p->pool.subbuf_count);
}

int tracerd_pool_create(struct tracerd_process *p)
{
	uint64_t max = 0;
	int c, ret;

	pick_geometry(p);
	ret = buffer_geometry(p);
	if (ret)
		return ret;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (p->pool.subbuf_size[c] > max)
			max = p->pool.subbuf_size[c];
	ret = tracerd_scratch_fit(p->d, max);
	if (ret)
		return ret;
	/* The initial buffers plus one in reserve. */
	return add_segment(p, p->d->cfg.buffers + 1);
}

int tracerd_process_ensure_pool(struct tracerd_process *p)
{
	int fd;

	if (p->pool.nseg || p->adopting || !p->client)
		return 0;
	fd = tracerd_pool_create(p);
	if (fd < 0) {
		tracerd_log("pid %d: cannot make its pool: %s", (int)p->pid,
			    strerror(-fd));
		return fd;
	}
	send_segment(p, fd);
	return 0;
}

bool tracerd_process_pool_fits(const struct tracerd_process *shadow)
{
	struct tracerd_process want = { .d = shadow->d };
	int c;

	pick_geometry(&want);
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (want.pool.subbuf_size[c] != shadow->pool.subbuf_size[c] ||
		    want.pool.subbuf_count[c] != shadow->pool.subbuf_count[c])
			return false;
	return true;
}

void tracerd_process_take_pool(struct tracerd_process *p,
			       struct tracerd_process *shadow)
{
	p->pool = shadow->pool;
	p->control = shadow->control;
	p->control->tracerd_pid = (uint32_t)getpid();
	free(shadow);
}

void tracerd_config_defaults(struct tracerd_config *cfg)
{
	cfg->buffers = 10;
	cfg->max_memory = 1ULL << 30;
	/* Pools are address space, their pages used as they are written;
	 * what tracerd itself commits is about 1/400 of this (the rings'
	 * headers and its readers' bookkeeping). 4,096 clients with the
	 * default first segment (55 MiB) fit. */
	cfg->max_total_memory = 256ULL << 30;
	cfg->max_site_memory = 32ULL << 20;
	cfg->max_total_site_memory = 256ULL << 20;
	cfg->max_clients = 4096;
	cfg->max_clients_per_user = 1024;
	cfg->silent_ms = 10000;
	/*
	 * 4 MiB per thread for the default channel, 1 MiB for the vital
	 * one (address space: pages are used as they are written). Many
	 * small sub-buffers: each thread that exits closes one per channel,
	 * so the count bounds how many exited threads a buffer holds before
	 * tracerd has written them out (256 per buffer, in both channels:
	 * the vital one had 128 and filled first under thread churn).
	 */
	cfg->subbuf_size[TRACER_CHANNEL_DEFAULT] = 16 << 10;
	cfg->subbuf_count[TRACER_CHANNEL_DEFAULT] = 256;
	cfg->subbuf_size[TRACER_CHANNEL_VITAL] = 4 << 10;
	cfg->subbuf_count[TRACER_CHANNEL_VITAL] = 256;
	cfg->scan_ms = 100;
	cfg->relay_backlog = 64ULL << 20;
}

void tracerd_pool_free(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			tracer__rb_reader_detach(&p->pool.buf[i].rd[c]);
	for (i = 0; i < p->pool.nseg; i++)
		tracerd_segment_close(&p->pool.seg[i]);
	free(p->pool.buf);
	p->pool.buf = NULL;
	p->pool.nbuf = p->pool.nseg = 0;
	p->d->pools_bytes -= p->pool.bytes;
	p->pool.bytes = 0;
}

int tracerd_scratch_fit(struct tracerd *d, uint64_t need)
{
	void *n;

	if (need < TRACERD_BATCH_BYTES)
		need = TRACERD_BATCH_BYTES;
	if (d->scratch.buf && d->scratch.size >= need)
		return 0;
	n = aligned_alloc(64, need);
	if (!n)
		return -ENOMEM;
	free(d->scratch.buf);
	d->scratch.buf = n;
	d->scratch.size = need;
	return 0;
}

void tracerd_scratch_free(struct tracerd *d)
{
	free(d->scratch.buf);
	free(d->scratch.stage);
	d->scratch.buf = d->scratch.stage = NULL;
	d->scratch.size = 0;
}
