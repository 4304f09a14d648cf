/*
 * compact_trace.c - a session directory whose records sit at every
 * boundary of the compact record header (common/rb_layout.h), written by
 * the real writer and taken out by the real reader, for test_compact.sh
 * to read back with `tracectl view` and babeltrace2.
 *
 *   compact_trace DIR
 *
 * DIR/compact-1/ gets process.meta, metadata and default-1. The writer's
 * clock is a TSC line whose rate is 0, so each record is stamped with the
 * time the program sets before it. Records: the first of a packet after a
 * gap far beyond the compact reach; gaps of 2^32 - 1, 2^32 and 2^32 + 1
 * ns from the previous record; a time whose low 32 bits wrap; ids 4094
 * (the last compact one), 4095 and 5000 (extended). Prints, per record,
 * "TIME NAME HEADER" (HEADER: compact or extended, as the writer chose),
 * which the test compares with what the readers show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "ctf_meta.h"
#include "rb.h"

#define S	4096u		/* sub-buffer */
#define N	4u
#define G	(1ULL << TRACER_RB_TIME_BITS)

static struct tracer_rb_writer w;
static struct tracer_rb_reader r;
static struct tracer_clock_cell cell;
static FILE *chan;
static char copy[S] __attribute__((aligned(64)));

static const uint32_t ids[] = { 1, 4094, 4095, 5000 };

static void die(const char *what)
{
	fprintf(stderr, "compact_trace: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void channel(void)
{
	struct tracer_rb_config cfg = { .subbuf_size = S, .subbuf_count = N,
		.mode = TRACER_RB_DISCARD, .stream_id = 0,
		.stream_instance_id = 1 };
	struct tracer_rb_geometry geo;
	void *region;

	if (tracer__rb_geometry(&geo, S, N, NULL))
		die("geometry");
	region = aligned_alloc(4096, geo.region_size);
	if (!region || tracer__rb_init(region, geo.region_size, &cfg, NULL) ||
	    tracer__rb_writer_attach(&w, region, geo.region_size, 1, NULL) ||
	    tracer__rb_reader_attach(&r, region, geo.region_size, NULL))
		die("channel");
	cell.clock = (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
					    .mult = 0 };
	w.clock = &cell;
}

/* Out with every complete packet, as tracerd writes them. */
static void drain(void)
{
	struct tracer_rb_packet_info info;

	while (tracer__rb_read(&r, copy, sizeof(copy), &info) == 0)
		if (fwrite(copy, 1, S, chan) != S)
			die("write default-1");
}

/* One record of event id (value v) at time t; prints what it expects. */
static void put(uint32_t id, uint64_t t, uint64_t v)
{
	struct tracer_rb_ctx ctx;

	cell.clock.ns_base = t;
	if (tracer__rb_reserve(&w, &ctx, id, 8))
		die("reserve");
	memcpy(ctx.payload, &v, 8);
	tracer__rb_commit(&w, &ctx);
	printf("%" PRIu64 " t:id%u %s\n", ctx.timestamp, id,
	       tracer__rb_ctx_size(&ctx, w.smask) == 16 ? "compact" :
	       "extended");
}

static void switch_packet(void)
{
	tracer__rb_flush(&w);
	drain();
}

static void records(void)
{
	uint64_t t = 1000000000000ULL;	/* 1000 s */

	put(1, t, 1);			/* opens the packet */
	put(1, t += 100, 2);
	put(1, t += G - 1, 3);		/* the last compact gap */
	put(1, t += G, 4);		/* extended */
	put(1, t += G + 1, 5);		/* extended */
	put(1, t += 7, 6);
	t = (t | (G - 1)) - 3;		/* low 32 bits about to wrap */
	put(1, t, 7);
	put(1, t += 10, 8);		/* wrapped: rebuilt with + 2^32 */
	put(4094, t += 1, 9);		/* the last compact id */
	put(4095, t += 1, 10);		/* extended */
	put(5000, t += 1, 11);
	put(1, t += 1, 12);
	switch_packet();
	put(1, t += 100 * G, 13);	/* first of a packet: compact */
	put(4095, t += 1, 14);
	put(1, t += 1, 15);
	switch_packet();
}

static FILE *open_in(const char *dir, const char *name)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die(path);
	return f;
}

static void meta(const char *dir)
{
	struct tracer_ctf_trace t = {
		.uuid = "5a1b2c3d-0000-4000-8000-000000000001",
		.hostname = "compact", .tracer_version = "test",
		.procname = "compact", .vpid = 1 };
	FILE *m = open_in(dir, "metadata"), *p;
	char sub[4200], name[32];
	size_t i;

	if ((size_t)snprintf(sub, sizeof(sub), "%s/tracer", dir) >=
	    sizeof(sub))
		die("directory name too long");
	if (mkdir(sub, 0755) && errno != EEXIST)
		die(sub);
	p = open_in(sub, "process.meta");
	fprintf(p, TRACER__SESSION_LINE "\npid 1\nppid 0\nname compact\n"
		"start_time 0\nclock_offset 0\nargv compact\n");
	if (tracer__ctf_write_preamble(m, &t))
		die("metadata");
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct tracer_ctf_event e = { .id = ids[i], .name = name,
			.format = "v=%lu", .types = "u" };

		snprintf(name, sizeof(name), "t:id%u", ids[i]);
		if (tracer__ctf_write_event(m, &e))
			die("metadata");
		fprintf(p, "callsite %u 0 u 1 compact.c %s v=%%25lu\n", ids[i],
			name);
	}
	if (fclose(m) || fclose(p))
		die("metadata");
}

int main(int argc, char **argv)
{
	char dir[4200];

	if (argc != 2) {
		fprintf(stderr, "usage: compact_trace DIR\n");
		return 2;
	}
	if (!TRACER_CLOCK_HAVE_TSC) {
		fprintf(stderr, "compact_trace: no TSC line on this machine\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "%s/compact-1", argv[1]);
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	meta(dir);
	chan = open_in(dir, "default-1");
	channel();
	records();
	if (fclose(chan))
		die("default-1");
	tracer__rb_reader_detach(&r);
	return 0;
}
