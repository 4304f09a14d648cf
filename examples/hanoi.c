/*
 * hanoi.c - the Towers of Hanoi, printed and recorded: the tracer's demo.
 *
 *   hanoi [--quiet] N [N...]
 *
 * For each disk count N the puzzle is solved twice:
 *
 *   - the printing run writes every move as a line of text to the standard
 *     output (to /dev/null with --quiet): classic printf instrumentation,
 *     which formats and writes while the program runs;
 *   - the recording run records every call, every recursion step and every
 *     move with tracer_record(): an event id, a timestamp and the raw
 *     values; nothing is formatted until the trace is read.
 *
 * Four timing events (vital, so floods of moves can never push them out of
 * a flight-recorder buffer) bracket the two runs, and the standard error
 * gets how long each run took.
 *
 * A move is printed and recorded with the same format, so
 *
 *   tracectl record -- hanoi 4
 *   tracectl view DIR --events hanoi:move
 *
 * shows, after the event header, exactly the lines the printing run wrote
 * (tests/integration/test_hanoi.sh checks it for 1 to 10 disks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tracer.h>

#define MAX_DISKS	25

/* One format for both runs: the recorded moves read as the printed ones. */
#define MOVE_FORMAT	"Move disk %d from %-6s to %s"

enum post { LEFT, MIDDLE, RIGHT };

static const char *const post_name[] = { "LEFT", "MIDDLE", "RIGHT" };

static void hanoi_print(FILE *out, int n, enum post from, enum post to,
			enum post via)
{
	if (n == 1) {
		fprintf(out, MOVE_FORMAT "\n", n, post_name[from],
			post_name[to]);
		return;
	}
	hanoi_print(out, n - 1, from, via, to);
	fprintf(out, MOVE_FORMAT "\n", n, post_name[from], post_name[to]);
	hanoi_print(out, n - 1, via, to, from);
}

static void hanoi_record(int n, enum post from, enum post to, enum post via)
{
	tracer_record("hanoi:call", "n=%d, from=%-6s, to=%-6s, via=%-6s", n,
		      post_name[from], post_name[to], post_name[via]);
	if (n == 1) {
		tracer_record("hanoi:move", MOVE_FORMAT, n, post_name[from],
			      post_name[to]);
		return;
	}
	tracer_record("hanoi:recurse", "Recurse #1 n=%d", n);
	hanoi_record(n - 1, from, via, to);
	tracer_record("hanoi:move", MOVE_FORMAT, n, post_name[from],
		      post_name[to]);
	tracer_record("hanoi:recurse", "Recurse #2 n=%d", n);
	hanoi_record(n - 1, via, to, from);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Both runs for n disks; their times on stderr. */
static void run(FILE *out, int n)
{
	double t0, t1, t2;

	tracer_record_vital("hanoi:timing", "Begin printing Hanoi with %d "
			    "disks", n);
	t0 = now_us();
	hanoi_print(out, n, LEFT, RIGHT, MIDDLE);
	fflush(out);
	t1 = now_us();
	tracer_record_vital("hanoi:timing", "End printing Hanoi with %d disks",
			    n);
	tracer_record_vital("hanoi:timing", "Begin recording Hanoi with %d "
			    "disks", n);
	hanoi_record(n, LEFT, RIGHT, MIDDLE);
	t2 = now_us();
	tracer_record_vital("hanoi:timing", "End recording Hanoi with %d "
			    "disks", n);
	fprintf(stderr, "hanoi: %d disks, %ld moves: printing %.0f us, "
		"recording %.0f us\n", n, (1L << n) - 1, t1 - t0, t2 - t1);
}

/* N as a disk count, or 0. */
static int disks(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	return *s && !*end && n >= 1 && n <= MAX_DISKS ? (int)n : 0;
}

int main(int argc, char **argv)
{
	FILE *out = stdout;
	int i = 1, first;

	if (argc > 1 && strcmp(argv[1], "--quiet") == 0) {
		out = fopen("/dev/null", "w");
		if (!out) {
			perror("hanoi: /dev/null");
			return 1;
		}
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: hanoi [--quiet] N [N...] (1 to %d "
			"disks each)\n", MAX_DISKS);
		return 2;
	}
	for (first = i; i < argc; i++) {
		if (!disks(argv[i])) {
			fprintf(stderr, "hanoi: '%s': expected 1 to %d disks\n",
				argv[i], MAX_DISKS);
			return 2;
		}
	}
	for (i = first; i < argc; i++)
		run(out, disks(argv[i]));
	return 0;
}
