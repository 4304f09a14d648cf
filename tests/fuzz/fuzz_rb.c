/*
 * fuzz_rb.c - libFuzzer target: tracerd's side of a ring buffer that the
 * traced process may have scribbled on (common/rb_read.c, rb_salvage.c):
 * attach, read every packet, the committed part of the open sub-buffer,
 * then salvage as after the writer's death. A real writer fills the ring
 * first; the input then patches it: every 3 bytes are a 16-bit offset
 * (scaled to the region) and a byte to store there. With an odd first
 * byte the writer stamps TSC ticks, which the reader converts through a
 * history of lines (clock_history.h). Nothing may crash, hang, or read or
 * write outside the region.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SUBBUF	4096
#define COUNT	4

static void fill(void *region, uint64_t size, uint32_t unit)
{
	struct tracer_rb_config cfg = { .subbuf_size = SUBBUF,
					.subbuf_count = COUNT,
					.mode = TRACER_RB_FLIGHT,
					.stream_instance_id = 1 };
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	const char *why;
	int i;

	if (tracer__rb_init(region, size, &cfg, &why) ||
	    tracer__rb_writer_attach(&w, region, size, 7, &why))
		abort();
	tracer__rb_set_unit(&w, unit);
	for (i = 0; i < 600; i++)
		if (tracer__rb_reserve(&w, &ctx, 3, 24) == 0) {
			memset(ctx.payload, i, 24);
			/* The last one stays open: a writer that died. */
			if (i < 599)
				tracer__rb_commit(&w, &ctx);
		}
}

static bool keep(void *arg, const struct tracer_rb_record *rec)
{
	(void)arg;
	(void)rec;
	return true;
}

static void read_all(void *region, uint64_t size)
{
	static uint8_t dst[SUBBUF] __attribute__((aligned(64)));
	struct tracer_rb_reader r;
	struct tracer_rb_packet_info info;
	struct tracer_rb_salvage s;
	struct tracer_clock_history h = { 0 };
	struct tracer_clock line = { .kind = TRACER_CLOCK_TSC,
		.tsc_base = 1ULL << 40, .ns_base = 1ULL << 39,
		.mult = 1ULL << (TRACER_CLOCK_SHIFT - 1), .tsc_hz = 2000000000 };
	const char *why;
	int n, ret;

	if (tracer__rb_reader_attach(&r, region, size, &why))
		return;
	tracer__clock_history_add(&h, &line);
	line.tsc_base += 1ULL << 32;	/* a second line, stepping back */
	tracer__clock_history_add(&h, &line);
	r.history = &h;
	for (n = 0; n < 4 * COUNT; n++) {
		ret = tracer__rb_read(&r, dst, sizeof(dst), &info);
		if (ret == -EAGAIN || ret == -ENODATA || ret == -EIO)
			break;
		if (ret == 0 && info.content_bytes > sizeof(dst))
			abort();
	}
	tracer__rb_read_partial(&r, dst, sizeof(dst), &info);
	for (n = 0; n < 2 * COUNT; n++) {
		ret = tracer__rb_salvage(&r, dst, sizeof(dst), keep, NULL,
					 UINT64_MAX / 2, &info, &s);
		if (ret == -ENODATA || ret == -EIO)
			break;
	}
	tracer__rb_reader_detach(&r);
	tracer__clock_history_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tracer_rb_geometry g;
	const char *why;
	uint8_t *region;
	size_t i;

	if (tracer__rb_geometry(&g, SUBBUF, COUNT, &why))
		abort();
	region = aligned_alloc(64, g.region_size);
	if (!region)
		return 0;
	memset(region, 0, g.region_size);
	fill(region, g.region_size, size && (data[0] & 1) ?
	     TRACER_RB_UNIT_TSC : TRACER_RB_UNIT_NS);
	for (i = 0; i + 3 <= size; i += 3) {
		uint64_t off = (uint64_t)(data[i] | data[i + 1] << 8) *
			       g.region_size / 65536;

		region[off] = data[i + 2];
	}
	read_all(region, g.region_size);
	free(region);
	return 0;
}
