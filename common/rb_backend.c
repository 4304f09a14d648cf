/*
 * rb_backend.c - the memory backend of a channel: geometry, initialisation
 * of a caller-provided region, and attaching a writer to it.
 *
 * The region may be shared with a process we do not trust, so attaching
 * copies the immutable header line into private memory once and checks
 * every field of the copy; nothing is read twice.
 */
#include <errno.h>
#include <string.h>

#include "rb.h"
#include "rb_internal.h"

static bool is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static int fail(const char **why, const char *msg, int err)
{
	if (why)
		*why = msg;
	return err;
}

static int check_orders(uint32_t m, uint32_t k, const char **why)
{
	if (m < TRACER_RB_MIN_SUBBUF_ORDER)
		return fail(why, "sub-buffer size below 128 bytes cannot hold "
			    "the packet and record headers", -EINVAL);
	if (m > TRACER_RB_MAX_SUBBUF_ORDER)
		return fail(why, "sub-buffer size above 1 GiB", -EINVAL);
	if (k < TRACER_RB_MIN_COUNT_ORDER)
		return fail(why, "a channel needs at least 2 sub-buffers",
			    -EINVAL);
	if (k > TRACER_RB_MAX_COUNT_ORDER)
		return fail(why, "more than 65536 sub-buffers", -EINVAL);
	if (m + k > TRACER_RB_MAX_TOTAL_ORDER)
		return fail(why, "channel larger than 1 TiB", -EINVAL);
	return 0;
}

int tracer__rb_geometry(struct tracer_rb_geometry *geo, uint64_t subbuf_size,
			uint64_t subbuf_count, const char **why)
{
	uint32_t m, k;
	int ret;

	if (!is_pow2(subbuf_size))
		return fail(why, "sub-buffer size is not a power of two",
			    -EINVAL);
	if (!is_pow2(subbuf_count))
		return fail(why, "sub-buffer count is not a power of two",
			    -EINVAL);
	m = (uint32_t)__builtin_ctzll(subbuf_size);
	k = (uint32_t)__builtin_ctzll(subbuf_count);
	ret = check_orders(m, k, why);
	if (ret)
		return ret;
	geo->subbuf_size = subbuf_size;
	geo->subbuf_count = subbuf_count;
	geo->subbuf_order = m;
	geo->count_order = k;
	geo->commit_offset = TRACER_RB_HEADER_SIZE;
	geo->data_offset = TRACER_ALIGN_UP(geo->commit_offset +
		subbuf_count * sizeof(struct tracer_rb_commit), 4096ULL);
	geo->region_size = geo->data_offset + subbuf_count * subbuf_size;
	/* The largest record still fits with an extended header. */
	geo->max_payload = (uint32_t)((subbuf_size - TRACER_RB_PACKET_SIZE -
				       TRACER_RB_EXTENDED_SIZE) &
				      ~(uint64_t)(TRACER_RB_ALIGN - 1));
	return 0;
}

/* Commit count meaning "slot free" for the first lap at or after start. */
static uint64_t first_base(const struct tracer_rb_geometry *geo,
			   uint64_t start, uint64_t slot)
{
	uint64_t nmask = geo->subbuf_count - 1;
	uint64_t first_slot = (start >> geo->subbuf_order) & nmask;
	uint64_t pos = start + (((slot - first_slot) & nmask)
				<< geo->subbuf_order);

	return tracer__rb_lap_base(pos, geo->subbuf_order, geo->count_order);
}

int tracer__rb_init(void *region, uint64_t size,
		    const struct tracer_rb_config *cfg, const char **why)
{
	struct tracer_rb_geometry geo;
	struct tracer_rb_header *hdr = region;
	struct tracer_rb_commit *commit;
	uint64_t i;
	int ret;

	ret = tracer__rb_geometry(&geo, cfg->subbuf_size, cfg->subbuf_count,
				  why);
	if (ret)
		return ret;
	if (cfg->mode != TRACER_RB_DISCARD && cfg->mode != TRACER_RB_FLIGHT)
		return fail(why, "unknown channel mode", -EINVAL);
	if (cfg->start_count & (geo.subbuf_size - 1))
		return fail(why, "start count is not a multiple of the "
			    "sub-buffer size", -EINVAL);
	if ((uintptr_t)region & (TRACER_CACHELINE - 1))
		return fail(why, "region is not 64-byte aligned", -EINVAL);
	if (size < geo.region_size)
		return fail(why, "region too small for this geometry",
			    -ENOSPC);
	if (!cfg->zeroed)
		memset(region, 0, geo.data_offset);
	hdr->version = TRACER_RB_VERSION;
	hdr->header_size = TRACER_RB_HEADER_SIZE;
	hdr->packet_header_size = TRACER_RB_PACKET_SIZE;
	hdr->event_header_size = TRACER_RB_COMPACT_SIZE;
	hdr->subbuf_order = (uint8_t)geo.subbuf_order;
	hdr->count_order = (uint8_t)geo.count_order;
	hdr->mode = (uint8_t)cfg->mode;
	hdr->stream_id = cfg->stream_id;
	hdr->stream_instance_id = cfg->stream_instance_id;
	hdr->region_size = geo.region_size;
	hdr->commit_offset = geo.commit_offset;
	hdr->data_offset = geo.data_offset;
	hdr->write_count = cfg->start_count;
	hdr->read_count = cfg->start_count;
	commit = (struct tracer_rb_commit *)(void *)((char *)region +
					     geo.commit_offset);
	for (i = 0; i < geo.subbuf_count; i++) {
		uint64_t base = first_base(&geo, cfg->start_count, i);

		/* A lap base is 0 in the first lap from 0: in a zeroed
		 * region, the commit array's pages are not touched. */
		if (base || !cfg->zeroed)
			commit[i].count = base;
	}
	/* Everything above is visible before the magic that validates it. */
	tracer__store_release(&hdr->magic, TRACER_RB_MAGIC);
	return 0;
}

int tracer__rb_check_header(const void *region, uint64_t size,
			    struct tracer_rb_header *copy,
			    struct tracer_rb_geometry *geo, const char **why)
{
	const struct tracer_rb_header *hdr = region;
	int ret;

	if (size < TRACER_RB_HEADER_SIZE)
		return fail(why, "region smaller than a channel header",
			    -ENOSPC);
	if (tracer__load_acquire(&hdr->magic) != TRACER_RB_MAGIC)
		return fail(why, "bad channel magic", -EINVAL);
	memcpy(copy, hdr, offsetof(struct tracer_rb_header, write_count));
	if (copy->version != TRACER_RB_VERSION)
		return fail(why, "unsupported channel layout version", -EPROTO);
	if (copy->header_size != TRACER_RB_HEADER_SIZE ||
	    copy->packet_header_size != TRACER_RB_PACKET_SIZE ||
	    copy->event_header_size != TRACER_RB_COMPACT_SIZE)
		return fail(why, "channel header sizes do not match this "
			    "layout version", -EINVAL);
	if (copy->mode != TRACER_RB_DISCARD && copy->mode != TRACER_RB_FLIGHT)
		return fail(why, "unknown channel mode", -EINVAL);
	ret = check_orders(copy->subbuf_order, copy->count_order, why);
	if (ret)
		return ret;
	tracer__rb_geometry(geo, 1ULL << copy->subbuf_order,
			    1ULL << copy->count_order, NULL);
	if (copy->commit_offset != geo->commit_offset ||
	    copy->data_offset != geo->data_offset ||
	    copy->region_size != geo->region_size)
		return fail(why, "channel offsets do not match its geometry",
			    -EINVAL);
	if (size < geo->region_size)
		return fail(why, "region smaller than its channel header says",
			    -ENOSPC);
	return 0;
}

int tracer__rb_writer_attach(struct tracer_rb_writer *w, void *region,
			     uint64_t size, uint32_t tid, const char **why)
{
	struct tracer_rb_header copy;
	struct tracer_rb_geometry geo;
	int ret;

	ret = tracer__rb_check_header(region, size, &copy, &geo, why);
	if (ret)
		return ret;
	w->hdr = region;
	w->data = (char *)region + geo.data_offset;
	w->commit = (struct tracer_rb_commit *)(void *)((char *)region +
						geo.commit_offset);
	w->smask = geo.subbuf_size - 1;
	w->cmask = ~0ULL >> geo.count_order;
	w->bufsize = geo.subbuf_size * geo.subbuf_count;
	w->bufmask = w->bufsize - 1;
	w->slot_mask = geo.subbuf_count - 1;
	w->subbuf_order = geo.subbuf_order;
	w->count_order = geo.count_order;
	w->lap_shift = geo.subbuf_order + geo.count_order;
	w->max_payload = geo.max_payload;
	w->mode = copy.mode;
	w->stream_id = copy.stream_id;
	w->tid = tid;
	w->stream_instance_id = copy.stream_instance_id;
	w->on_close = NULL;
	w->owner = NULL;
	w->clock = &tracer__clock_monotonic;
	w->unit = TRACER_RB_UNIT_NS;
	w->rseq_slot = 0;
	w->rseq_aborts = 0;
	w->last_ts = 0;
	w->ref_ts = 0;
	return 0;
}
