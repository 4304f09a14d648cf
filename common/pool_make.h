/*
 * pool_make.h - the layout of a pool segment (pool_layout.h), made by
 * tracerd for a process, or by a process that starts while a session
 * records and hands its first segment over (libtracer/client.c).
 *
 * Pure layout: no system call, no allocation. The caller provides a
 * zeroed region (a new memfd's pages read as zero) and maps it.
 */
#ifndef TRACER_POOL_MAKE_H
#define TRACER_POOL_MAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "pool_layout.h"

/* What a segment holds, as the header will say. */
struct tracer_pool_shape {
	uint64_t subbuf_size[TRACER_POOL_CHANNELS];
	uint64_t subbuf_count[TRACER_POOL_CHANNELS];
	uint32_t channel_offset[TRACER_POOL_CHANNELS];	/* in a buffer */
	uint64_t buffer_size;		/* both channels, page multiple */
};

/*
 * Fill in shape's channel offsets and buffer size from its sub-buffer
 * sizes and counts. Returns 0, or -EINVAL (*why says which channel and
 * why: an invalid geometry, or a buffer larger than 4 GiB).
 */
int tracer__pool_shape(struct tracer_pool_shape *shape, const char **why);

/* Bytes of a segment of count buffers of buffer_size, and where its
 * descriptors and buffers start. */
uint64_t tracer__pool_segment_bytes(uint64_t buffer_size, uint32_t count,
				    uint64_t *desc_off, uint64_t *buf_off);

/*
 * Lay out segment `index` (its buffer 0 is the pool's `first`) of count
 * buffers of shape in the zeroed region base of size bytes (from
 * tracer__pool_segment_bytes()): header, descriptors (FREE, the last one
 * EMERGENCY when spare and count > 1), every channel's ring; the header's
 * magic last, with release semantics. Returns 0 or -EINVAL (*why).
 */
int tracer__pool_format(char *base, uint64_t size,
			const struct tracer_pool_shape *shape, uint32_t index,
			uint32_t first, uint32_t count, bool spare,
			const char **why);

#endif
