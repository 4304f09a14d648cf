/*
 * test_rb_geometry.c - geometry and attach checks: every bad geometry and
 * every inconsistent channel header is refused with an error code and a
 * message, never an abort; oversize records are refused.
 */
#include <errno.h>
#include <string.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

static void refused(uint64_t size, uint64_t count, const char *what)
{
	struct tracer_rb_geometry geo;
	const char *why = NULL;
	int ret = tracer__rb_geometry(&geo, size, count, &why);

	ok(ret == -EINVAL && why && *why, "%s refused: %s", what,
	   why ? why : "(no message)");
}

static void test_geometry(void)
{
	struct tracer_rb_geometry geo;
	const char *why = NULL;

	refused(3000, 4, "sub-buffer size 3000 (not a power of two)");
	refused(4096, 3, "3 sub-buffers (not a power of two)");
	refused(4096, 0, "0 sub-buffers");
	refused(0, 4, "sub-buffer size 0");
	refused(64, 4, "64-byte sub-buffers (cannot hold the headers)");
	refused(4096, 1, "a single sub-buffer");
	refused(1ULL << 31, 2, "2 GiB sub-buffers");
	refused(1ULL << 30, 1ULL << 12, "4 TiB channel");
	ok(tracer__rb_geometry(&geo, 128, 2, &why) == 0,
	   "128-byte sub-buffers x 2 accepted");
	is_u64(geo.max_payload, 128 - TRACER_RB_PACKET_SIZE -
	       TRACER_RB_EXTENDED_SIZE, "smallest geometry still fits a record "
	       "with an extended header");
	ok(geo.data_offset % 4096 == 0 && geo.region_size == geo.data_offset +
	   256, "sub-buffers start page aligned, region size adds up");
}

static void test_init_errors(void)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
					.subbuf_count = 4 };
	struct tracer_rb_geometry geo;
	const char *why = NULL;
	char *region;

	tracer__rb_geometry(&geo, 4096, 4, NULL);
	region = aligned_alloc(4096, TRACER_ALIGN_UP(geo.region_size + 64, 4096));
	is_int(tracer__rb_init(region, geo.region_size - 1, &cfg, &why),
	       -ENOSPC, "region one byte too small refused");
	cfg.start_count = 100;
	is_int(tracer__rb_init(region, geo.region_size, &cfg, &why), -EINVAL,
	       "start count off a boundary refused: %s", why);
	cfg.start_count = 0;
	cfg.mode = (enum tracer_rb_mode)7;
	is_int(tracer__rb_init(region, geo.region_size, &cfg, &why), -EINVAL,
	       "unknown mode refused: %s", why);
	cfg.mode = TRACER_RB_DISCARD;
	is_int(tracer__rb_init(region + 8, geo.region_size, &cfg, &why),
	       -EINVAL, "misaligned region refused: %s", why);
	free(region);
}

static void attach_refused(char *region, uint64_t size, int want,
			   const char *what)
{
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	const char *why = NULL, *why2 = NULL;
	int rw = tracer__rb_writer_attach(&w, region, size, 1, &why);
	int rr = tracer__rb_reader_attach(&r, region, size, &why2);

	ok(rw == want && rr == want && why && why2,
	   "%s: writer and reader refuse (%d, %d): %s", what, rw, rr,
	   why ? why : "(no message)");
}

static void test_attach_errors(void)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
					.subbuf_count = 4 };
	struct tracer_rb_header *hdr;
	uint64_t size;
	char *region = chk_channel(&cfg, &size);

	if (!region)
		bail_out("cannot create a channel");
	hdr = (struct tracer_rb_header *)region;
	attach_refused(region, size - 1, -ENOSPC, "truncated region");
	attach_refused(region, 100, -ENOSPC, "region smaller than a header");
	hdr->version = 1;
	attach_refused(region, size, -EPROTO, "layout version 1 (16-byte "
		       "record headers)");
	hdr->version = TRACER_RB_VERSION;
	hdr->subbuf_order = 63;
	attach_refused(region, size, -EINVAL, "sub-buffer order 63");
	hdr->subbuf_order = 12;
	hdr->data_offset += 4096;
	attach_refused(region, size, -EINVAL, "data offset off geometry");
	hdr->data_offset -= 4096;
	hdr->packet_header_size = 8;
	attach_refused(region, size, -EINVAL, "packet header size 8");
	hdr->packet_header_size = TRACER_RB_PACKET_SIZE;
	hdr->magic = 0xdeadbeef;
	attach_refused(region, size, -EINVAL, "bad magic");
	memset(region, 0xa5, size);
	attach_refused(region, size, -EINVAL, "random bytes");
	hdr->magic = TRACER_RB_MAGIC;
	attach_refused(region, size, -EPROTO,
		       "random bytes behind a valid magic");
	free(region);
}

static void test_oversize(void)
{
	struct tracer_rb_config cfg = { .subbuf_size = 256,
					.subbuf_count = 2 };
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	uint64_t size;
	char *region = chk_channel(&cfg, &size);

	if (!region || tracer__rb_writer_attach(&w, region, size, 1, NULL))
		bail_out("cannot create a channel");
	is_int(tracer__rb_reserve(&w, &ctx, 1, w.max_payload + 1), -EMSGSIZE,
	       "record one byte larger than a sub-buffer holds refused");
	is_int(tracer__rb_reserve(&w, &ctx, 1, 1u << 20), -EMSGSIZE,
	       "1 MiB record in 256-byte sub-buffers refused");
	is_int(tracer__rb_reserve(&w, &ctx, 1, UINT32_MAX), -EMSGSIZE,
	       "4 GiB record refused without overflow");
	is_u64(w.hdr->write_count, 0, "refused records reserve nothing");
	is_u64(w.hdr->lost, 0, "refused records are not counted as lost");
	free(region);
}

int main(void)
{
	plan(29);
	test_geometry();
	test_init_errors();
	test_attach_errors();
	test_oversize();
	return done();
}
