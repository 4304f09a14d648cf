/*
 * hanoi_traced.c - the Towers of Hanoi, traced with tracer_record().
 *
 *   hanoi_traced N [N...]   one thread per N solves the puzzle with N disks
 *
 * Every call, recursion and move is an event; each thread records into its
 * own buffer, and tracerd writes one channel file per thread. Run it under
 * a session (scripts/demo does it all) and read the trace with
 * `tracectl view DIR`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <tracer.h>

static const char *const post_names[] = { "LEFT", "MIDDLE", "RIGHT" };

static long hanoi(int n, int from, int to, int via)
{
	long moves;

	tracer_record("hanoi:call", "n=%d, from=%-6s, to=%-6s, via=%-6s", n,
		      post_names[from], post_names[to], post_names[via]);
	if (n == 1) {
		tracer_record("hanoi:move", "Move disk from %s to %s",
			      post_names[from], post_names[to]);
		return 1;
	}
	moves = hanoi(n - 1, from, via, to);
	moves += hanoi(1, from, to, via);
	moves += hanoi(n - 1, via, to, from);
	return moves;
}

static void *solve(void *arg)
{
	int n = (int)(long)arg;
	long moves;

	tracer_record("hanoi:timing", "Begin Hanoi with %d disks", n);
	moves = hanoi(n, 0, 2, 1);
	tracer_record("hanoi:timing", "End Hanoi with %d disks: %ld moves", n,
		      moves);
	return (void *)moves;
}

int main(int argc, char **argv)
{
	pthread_t th[16];
	int i, n = argc - 1;

	if (n < 1 || n > 16) {
		fprintf(stderr, "usage: hanoi_traced N [N...] (1 to 16 "
			"puzzles, one thread each)\n");
		return 2;
	}
	tracer_record_vital("hanoi:config", "%d puzzle(s), first with %s disks",
			    n, argv[1]);
	for (i = 0; i < n; i++) {
		int disks = atoi(argv[i + 1]);

		if (disks < 1 || disks > 30) {
			fprintf(stderr, "hanoi_traced: '%s': expected 1 to 30 "
				"disks\n", argv[i + 1]);
			return 2;
		}
		pthread_create(&th[i], NULL, solve, (void *)(long)disks);
	}
	for (i = 0; i < n; i++) {
		void *moves;

		pthread_join(th[i], &moves);
		printf("%s disks: %ld moves\n", argv[i + 1], (long)moves);
	}
	return 0;
}
