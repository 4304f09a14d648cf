/*
 * clockee.c - a traced program for tests/integration/test_clock.sh (links
 * libtracer): ROUNDS times, PERIOD_MS apart,
 *
 *   m1 = CLOCK_MONOTONIC; clock:sample(m1); m2 = CLOCK_MONOTONIC;
 *   clock:after(m2)
 *
 * so the stamp of each clock:sample must lie between the m1 it carries and
 * the m2 of the clock:after that follows it (within the tolerance the
 * clock promises). The period spaces the samples over the session for the
 * clock's drift to show; nothing waits for anything.
 *
 *   clockee ROUNDS PERIOD_MS
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tracer.h>

static unsigned long long mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec period;
	long rounds, ms, i;

	if (argc != 3) {
		fprintf(stderr, "usage: clockee ROUNDS PERIOD_MS\n");
		return 2;
	}
	rounds = strtol(argv[1], NULL, 10);
	ms = strtol(argv[2], NULL, 10);
	period.tv_sec = ms / 1000;
	period.tv_nsec = (ms % 1000) * 1000000L;
	for (i = 0; i < rounds; i++) {
		unsigned long long m1 = mono(), m2;

		tracer_record("clock:sample", "round %ld m1 %llu", i, m1);
		m2 = mono();
		tracer_record("clock:after", "round %ld m2 %llu", i, m2);
		if (i + 1 < rounds)
			nanosleep(&period, NULL);
	}
	return 0;
}
