/*
 * bench_wrap - the cost of the C library wrappers on an unmodified
 * program (not linked with libtracer): N malloc+free pairs, timed.
 * bench/bench_wrap.sh runs it untraced, preloaded with the memory events
 * off (the default filter) and on; bench/bench_path.sh also runs its
 * floor.
 *
 *   bench_wrap malloc N     prints "malloc+free NS ns/pair"
 *   bench_wrap floor N [tsc|monotonic]
 *                           the floor of a traced pair: the same pairs,
 *                           each call followed by what any tracer must
 *                           do for its event, a call the compiler can
 *                           neither inline nor look into that reads the
 *                           clock (rdtsc, the default on x86, or
 *                           clock_gettime(CLOCK_MONOTONIC)) and stores a
 *                           32-byte record into a 4 MiB array; prints
 *                           "floor NS ns/pair"
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_BYTES	(4u << 20)	/* a default channel's size */

/* What a record holds: its header (id, size, time) and two values. */
struct floor_record {
	uint32_t id;
	uint32_t size;
	uint64_t timestamp;
	uint64_t arg[2];
};

static int use_tsc;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t floor_clock(void)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (use_tsc)
		return __builtin_ia32_rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An event, as a tracer's entry would take it: by a call. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, noipa))
#else
__attribute__((noinline))
#endif
static void floor_put(struct floor_record *r, uint64_t a, uint64_t b)
{
	r->timestamp = floor_clock();
	r->id = 1;
	r->size = sizeof(*r);
	r->arg[0] = a;
	r->arg[1] = b;
}

/* n pairs, each call followed by its record when buf is set. */
static double run_pairs(long n, struct floor_record *buf)
{
	const size_t mask = FLOOR_BYTES / sizeof(*buf) - 1;
	double t0 = now_ns();
	size_t pos = 0;
	long i;

	for (i = 0; i < n; i++) {
		size_t size = (size_t)(i & 127) + 1;
		void *volatile p = malloc(size);

		if (buf) {
			floor_put(&buf[pos], size, (uintptr_t)p);
			pos = (pos + 1) & mask;
		}
		free(p);
		if (buf) {
			floor_put(&buf[pos], (uintptr_t)p, 0);
			pos = (pos + 1) & mask;
		}
	}
	return (now_ns() - t0) / (double)n;
}

/* N: a whole positive number, nothing after it; 0 if it is not one. */
static long count_arg(const char *arg)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	return errno || end == arg || *end || n <= 0 ? 0 : n;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_wrap malloc N | floor N "
		"[tsc|monotonic]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long n = argc >= 3 ? count_arg(argv[2]) : 0;
	struct floor_record *buf = NULL;
	int round, floor_run;
	double best = 0;

	if (argc < 3 || n <= 0)
		return usage();
	floor_run = !strcmp(argv[1], "floor");
	if ((!floor_run && (strcmp(argv[1], "malloc") || argc != 3)) ||
	    (floor_run && argc > 4))
		return usage();
#if defined(__x86_64__) || defined(__i386__)
	use_tsc = argc < 4 || !strcmp(argv[3], "tsc");
#endif
	if (floor_run && argc == 4 && strcmp(argv[3], "monotonic") &&
	    (strcmp(argv[3], "tsc") || !use_tsc))
		return usage();
	if (floor_run) {
		/* Written once (not zeroed: a fresh block may be mapped
		 * zero pages, never touched): no page fault in a timed
		 * loop. */
		buf = malloc(FLOOR_BYTES);
		if (!buf)
			return 1;
		memset(buf, 0xff, FLOOR_BYTES);
	}
	/* The best of 5 rounds: the least disturbed by the machine. */
	for (round = 0; round < 5; round++) {
		double t = run_pairs(n, buf);

		if (round == 0 || t < best)
			best = t;
	}
	printf("%s %.1f ns/pair\n", floor_run ? "floor" : "malloc+free",
	       best);
	free(buf);
	return 0;
}
