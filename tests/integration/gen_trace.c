/*
 * gen_trace.c - write a large synthetic session directory, as tracerd
 * would (doc/session-files.md), for the streaming tests of `tracectl view`.
 *
 *   gen_trace DIR MEGABYTES [THREADS]
 *
 * DIR/gen-1/ gets a process.meta with one call site, "gen:tick" "tick %lu
 * of thread %lu", and one channel file per thread (default 4) of 64 KiB
 * packets, MEGABYTES in all. Record k of thread t has the timestamp
 * k * THREADS + t + 1, so a merged view interleaves the threads and every
 * line is known in advance: "tick k of thread t".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "event_format.h"
#include "rb_layout.h"
#include "rb_record.h"

#define PACKET_SIZE	65536
#define RECORD_SIZE	24		/* compact header + two values */

static unsigned char packet[PACKET_SIZE];

static void meta(const char *dir)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tracer", dir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/tracer/process.meta", dir);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, TRACER__SESSION_LINE "\npid 1\nppid 0\nname gen\n"
		"start_time 0\nclock_offset 0\nargv gen\n"
		"callsite 1 0 uu 1 gen.c gen:tick tick%%20%%25lu%%20of%%20"
		"thread%%20%%25lu\n");
	fclose(f);
}

/* Fill packet with records k0.. of thread t; returns the next k. */
static uint64_t fill(uint32_t t, uint32_t threads, uint64_t k)
{
	struct tracer_rb_packet *h = (void *)packet;
	size_t off = sizeof(*h);

	memset(h, 0, sizeof(*h));
	h->magic = TRACER_CTF_MAGIC;
	h->tid = t + 1;
	h->timestamp_begin = k * threads + t + 1;
	for (; off + RECORD_SIZE <= PACKET_SIZE; off += RECORD_SIZE, k++) {
		uint64_t v[2] = { k, t };

		memcpy(tracer__rb_header_put(packet + off, 1, 1, RECORD_SIZE,
					     k * threads + t + 1, 0), v,
		       sizeof(v));
	}
	h->timestamp_end = (k - 1) * threads + t + 1;
	h->content_size = (uint64_t)off * 8;
	h->packet_size = PACKET_SIZE * 8;	/* padded, as in a buffer */
	return k;
}

static void channel(const char *dir, uint32_t t, uint32_t threads,
		    uint64_t packets)
{
	char path[4200];
	uint64_t i, k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/default-%u", dir, t + 1);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < packets; i++) {
		k = fill(t, threads, k);
		if (fwrite(packet, PACKET_SIZE, 1, f) != 1) {
			perror(path);
			exit(1);
		}
	}
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char dir[4096];
	uint32_t t, threads = argc > 3 ? (uint32_t)atoi(argv[3]) : 4;
	uint64_t mb = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;

	if (argc < 3 || mb == 0 || threads == 0 || threads > 64) {
		fprintf(stderr, "usage: gen_trace DIR MEGABYTES [THREADS]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/gen-1", argv[1]);
	if ((mkdir(argv[1], 0755) && errno != EEXIST) ||
	    (mkdir(dir, 0755) && errno != EEXIST)) {
		perror(dir);
		return 1;
	}
	meta(dir);
	for (t = 0; t < threads; t++)
		channel(dir, t, threads, mb * 1024 * 1024 / PACKET_SIZE /
			threads);
	return 0;
}
