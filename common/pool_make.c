/*
 * pool_make.c - lay out a pool segment (pool_make.h, pool_layout.h).
 *
 * Shared by tracerd, which makes every segment of a pool it serves, and
 * libtracer, which makes the first segment of its own pool when it
 * starts while a session records (so that it records at once, without
 * waiting for tracerd's reply; tracerd adopts the segment like the pool
 * of a process whose tracerd died: tracerd/adopt.c checks every value).
 */
#include <errno.h>
#include <string.h>

#include "compiler.h"
#include "rb.h"
#include "pool_make.h"

#define PAGE	4096ULL

static int fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -EINVAL;
}

int tracer__pool_shape(struct tracer_pool_shape *shape, const char **why)
{
	struct tracer_rb_geometry g;
	uint64_t at = 0;
	int c, ret;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		ret = tracer__rb_geometry(&g, shape->subbuf_size[c],
					  shape->subbuf_count[c], why);
		if (ret)
			return ret;
		shape->channel_offset[c] = (uint32_t)at;
		at += TRACER_ALIGN_UP(g.region_size, PAGE);
		if (at > UINT32_MAX)
			return fail(why, "a buffer would be larger than 4 GiB");
	}
	shape->buffer_size = at;
	return 0;
}

uint64_t tracer__pool_segment_bytes(uint64_t buffer_size, uint32_t count,
				    uint64_t *desc_off, uint64_t *buf_off)
{
	*desc_off = sizeof(struct tracer_pool_header);
	*buf_off = TRACER_ALIGN_UP(*desc_off + (uint64_t)count *
				   sizeof(struct tracer_pool_desc), PAGE);
	return *buf_off + (uint64_t)count * buffer_size;
}

/* The rings of buffer `index` (pool-wide) at buf. */
static int format_buffer(char *buf, const struct tracer_pool_shape *shape,
			 uint32_t index, const char **why)
{
	struct tracer_rb_config rc = { 0 };
	int c, ret;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		rc.subbuf_size = shape->subbuf_size[c];
		rc.subbuf_count = shape->subbuf_count[c];
		rc.mode = TRACER_RB_DISCARD;
		rc.stream_id = (uint32_t)c;
		rc.stream_instance_id = (uint64_t)index << 32;
		rc.zeroed = true;	/* a new memfd's pages read as zero */
		ret = tracer__rb_init(buf + shape->channel_offset[c],
				      tracer__pool_channel_size(
					shape->channel_offset,
					shape->buffer_size, c),
				      &rc, why);
		if (ret)
			return ret;
	}
	return 0;
}

int tracer__pool_format(char *base, uint64_t size,
			const struct tracer_pool_shape *shape, uint32_t index,
			uint32_t first, uint32_t count, bool spare,
			const char **why)
{
	struct tracer_pool_header *h = (void *)base;
	struct tracer_pool_desc *desc;
	uint64_t desc_off, buf_off;
	uint32_t i;
	int c, ret;

	if (tracer__pool_segment_bytes(shape->buffer_size, count, &desc_off,
				       &buf_off) != size || count == 0)
		return fail(why, "segment size does not match its buffers");
	h->version = TRACER_POOL_VERSION;
	h->header_size = sizeof(*h);
	h->desc_size = sizeof(struct tracer_pool_desc);
	h->segment_index = index;
	h->buffer_count = count;
	h->first_buffer = first;
	h->segment_size = size;
	h->desc_offset = desc_off;
	h->buffer_offset = buf_off;
	h->buffer_size = shape->buffer_size;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		h->channel_offset[c] = shape->channel_offset[c];
	desc = (void *)(base + desc_off);
	for (i = 0; i < count; i++) {
		desc[i].state = TRACER_BUF_WORD(0ULL, spare && count > 1 &&
						i == count - 1 ?
						TRACER_BUF_EMERGENCY :
						TRACER_BUF_FREE);
		ret = format_buffer(base + buf_off +
				    (uint64_t)i * shape->buffer_size, shape,
				    first + i, why);
		if (ret)
			return ret;
	}
	/* Everything above is visible before the magic that validates it. */
	__atomic_store_n(&h->magic, TRACER_POOL_MAGIC, __ATOMIC_RELEASE);
	return 0;
}
