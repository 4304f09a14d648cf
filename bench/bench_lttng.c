/*
 * bench_lttng.c - LTTng-UST's cost for the loop bench_tracer times:
 * lttng_ust_tracepoint(bench_lttng, pair, i, t), two 64-bit integers, in
 * a running session (bench_path.sh creates it, per-UID buffers, with
 * LTTng's own session daemon and consumer draining).
 *
 *   bench_lttng record THREADS EVENTS RUNS
 *       THREADS threads (1 or 2) record EVENTS events per run, RUNS runs
 *       after a warm-up of WARMUP_EVENTS, as bench_tracer record does;
 *       prints the row and "@ threads= best= median= cpu_best=
 *       cpu_median= produced=" (wall and thread CPU ns per event).
 *
 * Fails unless the tracepoint is enabled (a session is recording it)
 * within 10 s of the start: the cost of a disabled tracepoint is not
 * what the row is about.
 *
 * Built by bench_path.sh from LTTng-UST's installed headers (pkg-config
 * lttng-ust); not part of the project's build, which does not need
 * LTTng.
 */
#define _GNU_SOURCE 1
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "bench_lttng_tp.h"

#define PROG		"bench_lttng"
#include "bench.h"

#define WARMUP_EVENTS	1000000ULL
#define MAX_RUNS	100u
#define MAX_WRITERS	2

struct writer {
	pthread_t th;
	int index;
	double ns[MAX_RUNS], cpu[MAX_RUNS];
};

static struct {
	uint64_t events;
	unsigned int runs;
	int nthreads;
	pthread_barrier_t barrier;
	struct writer w[MAX_WRITERS];
} b;

static void loop(long t, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		lttng_ust_tracepoint(bench_lttng, pair, (long)i, t);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct stopwatch sw;
	double share;
	unsigned int r;

	loop(w->index, WARMUP_EVENTS);
	for (r = 0; r < b.runs; r++) {
		pthread_barrier_wait(&b.barrier);
		sw_start(&sw);
		loop(w->index, b.events);
		w->ns[r] = sw_stop(&sw, b.events, &share);
		w->cpu[r] = w->ns[r] * share;
	}
	return NULL;
}

static double best_of(const double *v, unsigned int n)
{
	double m = v[0];
	unsigned int i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* Wait until a session records the tracepoint; 0 or -1 after 10 s. */
static int wait_enabled(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 1000; i++) {
		if (lttng_ust_tracepoint_enabled(bench_lttng, pair))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void print_row(void)
{
	double wall[MAX_RUNS] = { 0 }, cpu[MAX_RUNS] = { 0 };
	unsigned int r;
	int i;

	for (r = 0; r < b.runs; r++)
		for (i = 0; i < b.nthreads; i++) {
			wall[r] += b.w[i].ns[r] / b.nthreads;
			cpu[r] += b.w[i].cpu[r] / b.nthreads;
		}
	printf("%-40s %-9d %.1f (%.1f)\n", "LTTng-UST tracepoint, 2 x int",
	       b.nthreads, best_of(wall, b.runs), median(wall, b.runs));
	printf("@ threads=%d best=%.2f median=%.2f", b.nthreads,
	       best_of(wall, b.runs), median(wall, b.runs));
	printf(" cpu_best=%.2f cpu_median=%.2f produced=%" PRIu64 "\n",
	       best_of(cpu, b.runs), median(cpu, b.runs),
	       (uint64_t)(b.nthreads * (WARMUP_EVENTS + b.runs * b.events)));
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 5 || strcmp(argv[1], "record") != 0) {
		fprintf(stderr, "usage: " PROG " record THREADS EVENTS RUNS\n");
		return 2;
	}
	b.nthreads = atoi(argv[2]);
	b.events = strtoull(argv[3], NULL, 10);
	b.runs = (unsigned int)atoi(argv[4]);
	if (b.nthreads < 1 || b.nthreads > MAX_WRITERS || b.events == 0 ||
	    b.runs < 1 || b.runs > MAX_RUNS) {
		fprintf(stderr, PROG ": THREADS 1 or 2, EVENTS > 0, RUNS "
			"1-%u\n", MAX_RUNS);
		return 2;
	}
	if (wait_enabled())
		die("bench_lttng:pair is not enabled: no LTTng session "
		    "records it");
	pthread_barrier_init(&b.barrier, NULL, (unsigned int)b.nthreads);
	for (i = 0; i < b.nthreads; i++) {
		b.w[i].index = i;
		if (pthread_create(&b.w[i].th, NULL, writer_main, &b.w[i]))
			die("cannot create a thread");
	}
	for (i = 0; i < b.nthreads; i++)
		pthread_join(b.w[i].th, NULL);
	print_row();
	return 0;
}
