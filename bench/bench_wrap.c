/*
 * bench_wrap - the cost of the C library wrappers on an unmodified
 * program (not linked with libtracer): N malloc+free pairs, timed.
 * bench/bench_wrap.sh runs it untraced, preloaded with the memory events
 * off (the default filter) and on.
 *
 *   bench_wrap malloc N     prints "malloc+free NS ns/pair"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long i, n = argc == 3 ? atol(argv[2]) : 0;
	double best = 0;
	int round;

	if (argc != 3 || strcmp(argv[1], "malloc") || n <= 0) {
		fprintf(stderr, "usage: bench_wrap malloc N\n");
		return 2;
	}
	/* The best of 5 rounds: the least disturbed by the machine. */
	for (round = 0; round < 5; round++) {
		double t0 = now_ns(), t;

		for (i = 0; i < n; i++) {
			void *volatile p = malloc((size_t)(i & 127) + 1);

			free(p);
		}
		t = (now_ns() - t0) / (double)n;
		if (round == 0 || t < best)
			best = t;
	}
	printf("malloc+free %.1f ns/pair\n", best);
	return 0;
}
