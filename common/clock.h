/*
 * clock.h - the trace clock.
 *
 * Event timestamps are CLOCK_MONOTONIC nanoseconds, read through the vDSO
 * (no system call with the TSC clocksource). The CTF metadata describes this
 * clock (frequency 1 GHz) together with its offset to the epoch, sampled when
 * a trace starts.
 */
#ifndef TRACER_CLOCK_H
#define TRACER_CLOCK_H

#include <stdint.h>
#include <time.h>

#define TRACER_CLOCK_FREQ	1000000000ULL

static inline uint64_t tracer__clock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* TRACER_CLOCK_H */
