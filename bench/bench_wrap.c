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

#define PROG	"bench_wrap"
#include "bench.h"

static bool use_tsc;

/* An event, as a tracer's entry would take it: by a call. */
static FLOOR_CALL void floor_put(struct floor_record *r, int64_t a,
				 int64_t b)
{
	floor_store(r, use_tsc, a, b);
}

/* n pairs, each call followed by its record when buf is set. */
static double run_pairs(long n, struct floor_record *buf)
{
	const size_t mask = FLOOR_BYTES / sizeof(*buf) - 1;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t pos = 0;
	long i;

	for (i = 0; i < n; i++) {
		size_t size = (size_t)(i & 127) + 1;
		void *volatile p = malloc(size);

		if (buf) {
			floor_put(&buf[pos], (int64_t)size,
				  (int64_t)(uintptr_t)p);
			pos = (pos + 1) & mask;
		}
		free(p);
		if (buf) {
			floor_put(&buf[pos], (int64_t)(uintptr_t)p, 0);
			pos = (pos + 1) & mask;
		}
	}
	return (double)(clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;
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
	if (floor_run)	/* no page fault in a timed loop */
		buf = alloc_touched(FLOOR_BYTES);
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
