/*
 * pool_room.h - is a FREE buffer of the pool usable by a new thread?
 *
 * A buffer's rings are never reset: the next owner writes after the
 * previous ones (pool_layout.h). Under thread churn a buffer comes back
 * FREE long before tracerd has written out what its owners left, so a FREE
 * buffer may have no room: a thread that took it would lose its events.
 * Threads prefer buffers with room (libtracer/pool.c), and both they and
 * tracerd count only those when deciding to grow the pool
 * (tracerd/process.c), so that it grows ahead of the churn.
 *
 * Room: in each discard-mode channel, at least a quarter of the
 * sub-buffers (and two) free: what is between the reader's and the
 * writer's counts is not. A flight-mode ring always has room. The counters
 * are read as they are (the writer's and the reader's own lines of the
 * channel header); nonsense reads as no room.
 */
#ifndef TRACER_POOL_ROOM_H
#define TRACER_POOL_ROOM_H

#include <stdbool.h>
#include <stdint.h>

#include "pool_layout.h"
#include "rb_layout.h"

/* Room in the channel whose header is h, read_count being rc. */
static inline bool tracer__channel_has_room(const struct tracer_rb_header *h,
					    uint64_t rc)
{
	uint32_t m = __atomic_load_n(&h->subbuf_order, __ATOMIC_RELAXED);
	uint32_t k = __atomic_load_n(&h->count_order, __ATOMIC_RELAXED);
	uint64_t n, used, keep;

	if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) != TRACER_RB_DISCARD)
		return true;
	if (m >= 48 || k >= 32 || m + k > 62)
		return false;
	n = 1ULL << k;
	keep = n / 4 > 2 ? n / 4 : 2;
	used = __atomic_load_n(&h->write_count, __ATOMIC_RELAXED) - rc;
	return used <= ((n > keep ? n - keep : 0) << m);
}

/* Room in every channel of the buffer at base (the reader's count from
 * the shared header: the process's view). */
static inline bool tracer__buffer_has_room(const char *base,
					   const uint32_t off[TRACER_POOL_CHANNELS])
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		const struct tracer_rb_header *h =
			(const struct tracer_rb_header *)(const void *)
			(base + off[c]);

		if (!tracer__channel_has_room(h, __atomic_load_n(
				&h->read_count, __ATOMIC_RELAXED)))
			return false;
	}
	return true;
}

#endif /* TRACER_POOL_ROOM_H */
