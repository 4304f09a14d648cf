/*
 * adopt.c - a traced process whose tracerd died, registering with a new
 * one: it hands over the pool it still maps, so nothing it recorded while
 * no daemon ran is lost (within what its buffers could hold). Also a
 * process that starts while a session records: it made the first segment
 * of its own pool (one buffer, the state page's geometry) to record at
 * once instead of waiting for our reply (Register.fresh_pool); the rest
 * of a new pool's buffers go to it in a Segment before Registered.
 *
 *   libtracer                               tracerd
 *   Register{adopt_segments N, epoch E} --> new control page, eventfd;
 *   Segment{0, size} + fd              -->  map, check, attach readers
 *   ...                                     (read positions as the old
 *   Segment{N-1, size} + fd            -->   tracerd left them)
 *                                       <-- Registered + control, eventfd
 *   switches to the new control page;
 *   sends every call site again
 *
 * The old control page cannot be taken over: it is sealed against
 * writable mappings (pool_layout.h), so the process gets a new one, with
 * epochs past E so that no thread mistakes the new state for the one it
 * acted on. Every value in the segments is checked as for a pool tracerd
 * made, and more: the process may have written anything there. If no
 * session records when the pool comes in, the buffers are kept as they
 * are (not read) until one starts, so that what was recorded while no
 * daemon ran lands in it; writers that fill them meanwhile count their
 * losses as usual.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracerd.h"

#define ADOPT_SUBBUF_MAX	(64ULL << 20)	/* see subbuf_limit() */

int tracerd_process_adopt(struct tracerd_process *p, const Tracer__Register *r)
{
	if (r->adopt_segments > TRACER_POOL_MAX_SEGMENTS)
		return -E2BIG;
	p->adopting = r->adopt_segments;
	p->adopt_epoch = r->epoch;
	p->fresh_pool = r->fresh_pool && r->adopt_segments == 1;
	if (!p->fresh_pool)
		tracerd_log("pid %d (%s) hands over its pool of %" PRIu32
			    " segment(s): its tracerd died", (int)p->pid,
			    p->name, r->adopt_segments);
	return 0;
}

/* The header of segment `index` of p, mapped at base (size bytes). */
static int check_header(const struct tracerd_process *p,
			const struct tracer_pool_header *h, uint64_t size)
{
	uint64_t descs, bufs;

	if (size < sizeof(*h) || h->magic != TRACER_POOL_MAGIC ||
	    h->version != TRACER_POOL_VERSION ||
	    h->header_size != sizeof(*h) ||
	    h->desc_size != sizeof(struct tracer_pool_desc) ||
	    h->segment_index != p->pool.nseg ||
	    h->first_buffer != p->pool.nbuf ||
	    h->segment_size != size || h->buffer_count == 0 ||
	    h->buffer_count > 65536)
		return -EINVAL;
	descs = h->desc_offset + (uint64_t)h->buffer_count * h->desc_size;
	bufs = h->buffer_offset + (uint64_t)h->buffer_count * h->buffer_size;
	if (h->desc_offset < sizeof(*h) || descs > h->buffer_offset ||
	    h->buffer_offset % 4096 || h->buffer_size % 4096 ||
	    h->buffer_size == 0 || bufs > size)
		return -EINVAL;
	if (p->pool.nseg && (h->buffer_size != p->pool.buffer_size ||
			memcmp(h->channel_offset, p->pool.channel_offset,
			       sizeof(p->pool.channel_offset))))
		return -EINVAL;	/* every segment has the same buffers */
	return h->channel_offset[0] != 0 ||
	       h->channel_offset[1] <= h->channel_offset[0] ||
	       h->channel_offset[1] >= h->buffer_size ? -EINVAL : 0;
}

/* Readers for the buffers of the segment at base (h: its checked header,
 * a copy). */
static int attach_all(struct tracerd_process *p,
		      const struct tracerd_segment *s,
		      const struct tracer_pool_header *h)
{
	struct tracer_pool_desc *desc = (void *)(s->base + h->desc_offset);
	struct tracerd_buffer *nb;
	uint32_t i;
	int ret, c;

	nb = realloc(p->pool.buf,
		     sizeof(*nb) * (p->pool.nbuf + h->buffer_count));
	if (!nb)
		return -ENOMEM;
	p->pool.buf = nb;
	p->pool.buffer_size = h->buffer_size;
	memcpy(p->pool.channel_offset, h->channel_offset,
	       sizeof(p->pool.channel_offset));
	for (i = 0; i < h->buffer_count; i++) {
		struct tracerd_buffer *b = &p->pool.buf[p->pool.nbuf + i];

		uint64_t off = h->buffer_offset + (uint64_t)i * h->buffer_size;

		ret = tracerd_attach_buffer(p, b, s, off, &desc[i], false);
		if (ret) {
			tracerd_detach_buffers(&p->pool.buf[p->pool.nbuf], i);
			return ret;
		}
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			p->pool.subbuf_size[c] = b->rd[c].geo.subbuf_size;
			p->pool.subbuf_count[c] = b->rd[c].geo.subbuf_count;
		}
	}
	return 0;
}

/*
 * The largest sub-buffer an adopted pool may have: what --subbuf-size or
 * the session asks for, and at least ADOPT_SUBBUF_MAX (a pool made by a
 * tracerd run with other options). The drain's scratch buffer holds one.
 */
static uint64_t subbuf_limit(const struct tracerd *d)
{
	uint64_t m = ADOPT_SUBBUF_MAX;

	if (d->cfg.subbuf_size[0] > m)
		m = d->cfg.subbuf_size[0];
	if (d->sess.subbuf_size > m)
		m = d->sess.subbuf_size;
	return m;
}

/* The scratch buffer must hold the largest sub-buffer. Returns 0,
 * -EFBIG (larger than subbuf_limit(): logged) or -ENOMEM. */
static int fit_scratch(struct tracerd_process *p)
{
	int c, ret;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		if (p->pool.subbuf_size[c] > subbuf_limit(p->d)) {
			tracerd_log("pid %d: pool refused: sub-buffers of "
				    "%" PRIu64 " bytes (at most %" PRIu64 ")",
				    (int)p->pid, p->pool.subbuf_size[c],
				    subbuf_limit(p->d));
			return -EFBIG;
		}
		ret = tracerd_scratch_fit(p->d, p->pool.subbuf_size[c]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Before fd is mapped: a memfd sealed against shrinking and growing (so
 * that the process cannot pull the pages from under our mapping: SIGBUS),
 * of the size announced, within --max-memory with the segments already
 * in. Returns NULL, or why not (*err: the errno to answer).
 */
static const char *refusal(const struct tracerd_process *p, int fd,
			   uint64_t size, int *err)
{
	const int need = F_SEAL_SHRINK | F_SEAL_GROW;
	struct stat st;
	int seals;

	*err = -EINVAL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return "not a regular file";
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & need) != need) {
		*err = -EPERM;
		return "not a memfd sealed against shrinking and growing";
	}
	if ((uint64_t)st.st_size != size || size < 4096)
		return "its size is not the one announced";
	if (size > p->d->cfg.max_memory - p->pool.bytes ||
	    p->pool.bytes > p->d->cfg.max_memory) {
		*err = -E2BIG;
		return "the pool would be larger than --max-memory";
	}
	if (!tracerd_pools_fit(p->d, size)) {
		*err = -E2BIG;
		return "all pools together would be larger than "
		       "--max-total-memory";
	}
	return NULL;
}

/*
 * Map and check segment fd, attach readers to its buffers. The header is
 * checked and used in a copy: the process may be writing it meanwhile (a
 * value read twice from its memory could pass the check and then be
 * another: a buffer count that takes the readers past the mapping).
 */
static int map_segment(struct tracerd_process *p, int fd, uint64_t size)
{
	struct tracerd_segment *s = &p->pool.seg[p->pool.nseg];
	struct tracer_pool_header copy;
	const struct tracer_pool_header *h = &copy;
	const char *why;
	void *base;
	int ret;

	why = refusal(p, fd, size, &ret);
	if (why) {
		tracerd_log("pid %d: pool segment %u refused: %s", (int)p->pid,
			    p->pool.nseg, why);
		return ret;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	tracerd_segment_open(s, base, fd, size);
	memset(&copy, 0, sizeof(copy));
	if (size >= sizeof(copy))
		memcpy(&copy, base, sizeof(copy));
	ret = check_header(p, h, size);
	if (!ret)
		ret = attach_all(p, s, h);
	if (!ret) {
		ret = fit_scratch(p);
		if (ret)	/* the readers of its buffers go with it */
			tracerd_detach_buffers(&p->pool.buf[p->pool.nbuf],
					       h->buffer_count);
	}
	if (ret) {
		if (ret != -EFBIG)	/* fit_scratch() said why */
			tracerd_log("pid %d: pool segment %u refused: %s",
				    (int)p->pid, p->pool.nseg, strerror(-ret));
		tracerd_segment_close(s);
		return ret;
	}
	s->first = p->pool.nbuf;
	s->count = h->buffer_count;
	p->pool.nseg++;
	p->pool.nbuf += h->buffer_count;
	p->pool.bytes += size;
	p->d->pools_bytes += size;
	return 0;
}

/* Every segment is in: the process goes live with a new control page. */
static int finish(struct tracerd_process *p)
{
	int ctl_fd = p->control_fd;

	p->adopting = 0;
	p->control_fd = -1;
	if (p->adopt_epoch > p->d->epoch && p->adopt_epoch < UINT64_MAX / 2)
		p->d->epoch = p->adopt_epoch;
	/* A fresh pool's records are the session's that was on at the
	 * process's start: none left for a later one. */
	p->recovering = !p->fresh_pool &&
			(!p->d->session_id || p->d->stopping);
	if (p->fresh_pool)	/* the rest of a new pool, before the reply */
		tracerd_pool_top_up(p);
	else
		tracerd_log("pid %d: pool adopted, %" PRIu32 " buffers; what "
			    "it recorded meanwhile goes to %s", (int)p->pid,
			    p->pool.nbuf, p->recovering ? "the next session"
							: "this session");
	return tracerd_process_go_live(p, ctl_fd, -1);
}

int tracerd_process_adopt_segment(struct tracerd_process *p,
				  const Tracer__Segment *s, int fd)
{
	int ret;

	if (fd < 0)
		return -EBADF;
	if (s->index != p->pool.nseg || p->pool.nseg >= p->adopting) {
		close(fd);
		return -EINVAL;
	}
	ret = map_segment(p, fd, s->size);	/* logs why not */
	close(fd);
	if (ret)
		return ret;
	return p->pool.nseg == p->adopting ? finish(p) : 0;
}
