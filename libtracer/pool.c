/*
 * pool.c - the traced process's side of its buffer pool (pool_layout.h).
 *
 * Segments arrive from tracerd on the listener thread, which maps them and
 * publishes them by storing the new segment count with release semantics;
 * threads read the count with acquire semantics before they look at a
 * segment. Segments are never unmapped while the process lives.
 *
 * Taking and releasing a buffer are CAS operations on its descriptor's
 * state word (bus-locked, but only at a thread's first event and at its
 * exit, never per event).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "pool_room.h"
#include "pool_make.h"

struct segment {
	char *base;
	uint64_t size;			/* its memfd: slot SEG0 + index */
	struct tracer_pool_header *hdr;
	struct tracer_pool_desc *desc;
};

static struct segment segs[TRACER_POOL_MAX_SEGMENTS] TRACER_COLD_BSS;
static uint32_t nsegs;		/* published count */

static uint32_t segment_count(void)
{
	return __atomic_load_n(&nsegs, __ATOMIC_ACQUIRE);
}

/* The pool line lives in segment 0. */
static struct tracer_pool_header *pool_line(void)
{
	return segment_count() ? segs[0].hdr : NULL;
}

static int check_segment(const struct tracer_pool_header *h, uint64_t size,
			 uint32_t index)
{
	if (size < sizeof(*h) || h->magic != TRACER_POOL_MAGIC ||
	    h->version != TRACER_POOL_VERSION ||
	    h->header_size != sizeof(*h) ||
	    h->desc_size != sizeof(struct tracer_pool_desc) ||
	    h->segment_index != index || h->segment_size != size)
		return -EINVAL;
	if (h->desc_offset + (uint64_t)h->buffer_count * h->desc_size >
	    h->buffer_offset ||
	    h->buffer_offset + (uint64_t)h->buffer_count * h->buffer_size >
	    size)
		return -EINVAL;
	return 0;
}

/* Publish segment `n` mapped at base (checked here), its memfd kept. */
static int publish_segment(int fd, void *base, uint64_t size)
{
	uint32_t n = segment_count();
	struct segment *s = &segs[n];
	int ret = check_segment(base, size, n);

	if (ret) {
		munmap(base, size);
		close(fd);
		return ret;
	}
	s->base = base;
	s->size = size;
	s->hdr = base;
	/* Kept for a new tracerd, out of the program's way (fds.c). */
	tracer__fd_keep(TRACER__FD_SEG0 + (int)n, fd);
	s->desc = (struct tracer_pool_desc *)(void *)(s->base +
						   s->hdr->desc_offset);
	/* The segment is complete before threads can see it. */
	__atomic_store_n(&nsegs, n + 1, __ATOMIC_RELEASE);
	return 0;
}

int tracer__pool_add_segment(int fd, uint64_t size)
{
	void *base;

	if (segment_count() == TRACER_POOL_MAX_SEGMENTS) {
		close(fd);
		return -E2BIG;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	return publish_segment(fd, base, size);
}

/*
 * Segment 0 made here, for a process that starts while a session records
 * (client.c): one buffer of the state page's geometry in a new sealed
 * memfd, laid out as tracerd lays out its own (pool_make.h), which tracerd
 * then adopts. A buffer's pages are touched only as it is written: the
 * header, the descriptor and two ring headers now.
 */
int tracer__pool_make_first(const struct tracer_control_start *st)
{
	struct tracer_pool_shape sh = {
		.subbuf_size = { st->subbuf_size[0], st->subbuf_size[1] },
		.subbuf_count = { st->subbuf_count[0], st->subbuf_count[1] },
	};
	uint64_t desc_off, buf_off, size;
	void *base;
	int fd, ret;

	if (segment_count())
		return -EEXIST;
	ret = tracer__pool_shape(&sh, NULL);
	if (ret)
		return ret;
	size = tracer__pool_segment_bytes(sh.buffer_size, 1, &desc_off,
					  &buf_off);
	fd = (int)syscall(SYS_memfd_create, "tracer-pool",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	base = MAP_FAILED;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0 ||
	    (base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0)) == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = tracer__pool_format(base, size, &sh, 0, 0, 1, true, NULL);
	if (ret) {
		munmap(base, size);
		close(fd);
		return ret;
	}
	return publish_segment(fd, base, size);
}

void tracer__pool_set_wake_fd(int fd)
{
	/* The old one is closed once no writer uses it (fds.c). */
	tracer__fd_keep(TRACER__FD_WAKE, fd);
}

void tracer__pool_set_untraced(int err)
{
	struct tracer_pool_header *p = pool_line();

	if (p)
		__atomic_store_n(&p->untraced_errno, (uint32_t)err,
				 __ATOMIC_RELEASE);
}

uint32_t tracer__pool_segments(void)
{
	return segment_count();
}

uint64_t tracer__pool_segment_size(uint32_t i)
{
	return i < segment_count() ? segs[i].size : 0;
}

/*
 * Child of fork(): the segments are the parent's pool (their memfds and
 * the eventfd are closed with every slot: tracer__fd_forget_all()). Only
 * the forking thread runs here, and no thread of the child holds a
 * buffer (tracer.c reset it), so nothing can be using them.
 */
void tracer__pool_fork_child(void)
{
	uint32_t n = segment_count(), s;

	__atomic_store_n(&nsegs, 0, __ATOMIC_RELEASE);
	for (s = 0; s < n; s++)
		munmap(segs[s].base, segs[s].size);
	memset(segs, 0, sizeof(segs));
}

void tracer__pool_wake(void)
{
	struct tracer_pool_header *p = pool_line();
	unsigned token;
	int saved, fd;

	if (!p || !TRACER_READ_ONCE(p->wake_armed))
		return;
	/* Only the context that disarms it pays for the system call. */
	if (!__atomic_exchange_n(&p->wake_armed, 0, __ATOMIC_SEQ_CST))
		return;
	saved = errno;
	/* Held: the number cannot become the program's meanwhile (fds.c). */
	token = tracer__fd_hold();
	fd = tracer__fd(TRACER__FD_WAKE);
	/* The system call itself: the event path must not reach write(). */
	if (fd >= 0 &&
	    syscall(SYS_write, fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		(void)0;	/* tracerd's timer scan covers it */
	tracer__fd_release(token);
	errno = saved;
}

/*
 * A sub-buffer of the vital channel closed: thread starts and ends,
 * renames. tracerd reads them at once (buffers are handed over on them).
 */
static void vital_closed(struct tracer_rb_writer *w)
{
	(void)w;
	tracer__pool_wake();
}

/*
 * A sub-buffer of the default channel closed. tracerd is woken only once
 * the ring holds TRACER_WAKE_SHIFT's share of unread bytes (1/64: 64 KiB
 * of the default 4 MiB, four sub-buffers); below that its timer
 * (--scan-ms) reads them. Woken at every close, a writer recording flat
 * out made a write(2) and woke another CPU every 16 us, for one packet
 * each time: tracerd spent 30% more CPU a byte, and the writer made 15-30%
 * fewer events (bench_drain.sh drain).
 */
static void default_closed(struct tracer_rb_writer *w)
{
	if (tracer__rb_backlog(w) >= w->bufsize >> TRACER_WAKE_SHIFT)
		tracer__pool_wake();
}

uint64_t tracer__pool_epoch(void)
{
	struct tracer_pool_header *p = pool_line();

	if (!p)
		return 2;
	return (TRACER_READ_ONCE(p->release_clock) << 6 | segment_count())
		<< 1;
}

void tracer__pool_add_lost(uint64_t n)
{
	struct tracer_pool_header *p = pool_line();

	if (p)
		__atomic_fetch_add(&p->lost_no_buffer, n, __ATOMIC_RELAXED);
}

bool tracer__pool_add_stashed(int delta)
{
	struct tracer_pool_header *p = pool_line();

	if (!p)
		return false;
	/* A bus-locked add, on the stash's slow path only (a thread's
	 * first event without a buffer, and its stash written out). */
	__atomic_fetch_add(&p->stashed, (uint32_t)delta, __ATOMIC_RELAXED);
	return true;
}

/* A candidate of pick(): the least recently used of its kind. */
struct choice {
	struct tracer_pool_desc *d;
	uint64_t word, stamp;
	uint32_t index;
};

static void consider(struct choice *c, struct tracer_pool_desc *d,
		     uint64_t w, uint32_t index)
{
	uint64_t stamp = TRACER_READ_ONCE(d->lru_stamp);

	if (!c->d || stamp < c->stamp)
		*c = (struct choice){ d, w, stamp, index };
}

/*
 * The least recently used FREE buffer with room in its rings
 * (pool_room.h), else (unless need_room) the least recently used FREE
 * one, else an EMERGENCY one. *nroom: FREE buffers with room; *total: all
 * of them.
 */
static struct tracer_pool_desc *pick(uint32_t *index, uint64_t *word,
				     uint32_t *nroom, uint32_t *total,
				     bool need_room)
{
	struct choice room = { 0 }, full = { 0 }, spare = { 0 }, *c;
	uint32_t n = segment_count(), s, i;

	*nroom = *total = 0;
	for (s = 0; s < n; s++) {
		const struct tracer_pool_header *h = segs[s].hdr;

		for (i = 0; i < h->buffer_count; i++) {
			struct tracer_pool_desc *d = &segs[s].desc[i];
			uint64_t w = __atomic_load_n(&d->state,
						     __ATOMIC_ACQUIRE);
			uint32_t at = h->first_buffer + i;

			(*total)++;
			if (TRACER_BUF_STATE(w) == TRACER_BUF_EMERGENCY)
				consider(&spare, d, w, at);
			if (TRACER_BUF_STATE(w) != TRACER_BUF_FREE)
				continue;
			/* Never owned (generation 0): its rings are as tracerd
			 * made them, empty; their headers are not read (in a
			 * new pool, a page fault each). */
			if (TRACER_BUF_GEN(w) != 0 &&
			    !tracer__buffer_has_room(segs[s].base +
					h->buffer_offset +
					(uint64_t)i * h->buffer_size,
					segs[0].hdr->channel_offset)) {
				consider(&full, d, w, at);
				continue;
			}
			(*nroom)++;
			consider(&room, d, w, at);
		}
	}
	c = room.d ? &room : need_room ? &(struct choice){ 0 } :
	    full.d ? &full : &spare;
	*word = c->word;
	*index = c->index;
	return c->d;
}

static char *buffer_base(uint32_t index)
{
	uint32_t n = segment_count(), s;

	for (s = 0; s < n; s++) {
		const struct tracer_pool_header *h = segs[s].hdr;

		if (index >= h->first_buffer &&
		    index - h->first_buffer < h->buffer_count)
			return segs[s].base + h->buffer_offset +
			       (uint64_t)(index - h->first_buffer) *
			       h->buffer_size;
	}
	return NULL;
}

int tracer__pool_acquire(struct tracer__buffer *b, uint32_t tid,
			 const char *name, bool need_room)
{
	uint32_t tries, nroom, total, index = 0;
	struct tracer_pool_desc *d = NULL;
	uint64_t word = 0;

	for (tries = 0; tries < 16 && !d; tries++) {
		d = pick(&index, &word, &nroom, &total, need_room);
		if (!d)
			break;
		/* Full barrier: the previous owner's writes are visible. */
		if (!__atomic_compare_exchange_n(&d->state, &word,
				TRACER_BUF_WORD(TRACER_BUF_GEN(word) + 1,
						TRACER_BUF_IN_USE), false,
				__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			d = NULL;
	}
	if (d && nroom > 0)
		nroom--;
	/* Grow ahead: before the buffers with room run out. The count we
	 * saw tells tracerd the ask is about its pool as it is now. */
	if (pool_line() && nroom * 2 < total) {
		TRACER_WRITE_ONCE(pool_line()->want_grow, total);
		tracer__pool_wake();
	}
	if (!d)
		return -ENOBUFS;
	d->owner_tid = tid;
	memcpy(d->thread_name, name, sizeof(d->thread_name));
	b->desc = d;
	b->index = index;
	b->generation = TRACER_BUF_GEN(word) + 1;
	b->base = buffer_base(index);
	return 0;
}

int tracer__pool_attach(const struct tracer__buffer *b, int c,
			struct tracer_rb_writer *w, uint32_t tid)
{
	const struct tracer_pool_header *h = segs[0].hdr;
	char *region = b->base + h->channel_offset[c];
	uint64_t size = tracer__pool_channel_size(h->channel_offset,
						  h->buffer_size, c);
	int ret;

	ret = tracer__rb_writer_attach(w, region, size, tid, NULL);
	if (ret)
		return ret;
	/* The calling thread writes it: its restartable sequence area. */
	w->rseq_slot = tracer__rseq_slot();
	w->stream_instance_id = (uint64_t)b->index << 32 |
				(b->generation & 0xffffffffu);
	w->on_close = c == TRACER_CHANNEL_VITAL ? vital_closed
						: default_closed;
	return 0;
}

int tracer__pool_attach_all(const struct tracer__buffer *b,
			    struct tracer_rb_writer *w, uint64_t *lost_base,
			    uint32_t tid)
{
	int c, ret;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		ret = tracer__pool_attach(b, c, &w[c], tid);
		if (ret)
			return ret;
		/* The channel's count runs on across owners: ours from here. */
		lost_base[c] = TRACER_READ_ONCE(w[c].hdr->lost);
		b->desc->lost_base[c] = lost_base[c];
		/* A ring never owned (generation 1 is its first owner) has
		 * committed nothing: its counters, pages of their own, are
		 * not read. */
		b->desc->records_base[c] = b->generation == 1 ? 0 :
			tracer__rb_records_committed(w[c].commit,
						     1ULL << w[c].count_order);
	}
	return 0;
}

void tracer__pool_release(struct tracer__buffer *b, bool wake)
{
	struct tracer_pool_header *p = pool_line();
	uint64_t word = TRACER_BUF_WORD(b->generation, TRACER_BUF_IN_USE);

	TRACER_WRITE_ONCE(b->desc->lru_stamp,
			  __atomic_add_fetch(&p->release_clock, 1,
					     __ATOMIC_RELAXED));
	/* Release: the channels' last writes before the buffer is free. */
	__atomic_compare_exchange_n(&b->desc->state, &word,
				    TRACER_BUF_WORD(b->generation,
						    TRACER_BUF_FREE),
				    false, __ATOMIC_SEQ_CST,
				    __ATOMIC_RELAXED);
	if (wake)
		tracer__pool_wake();
}
