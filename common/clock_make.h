/*
 * clock_make.h - tracerd's side of the TSC clock (clock.c): whether the
 * TSC may stamp events, its calibration and its anchors. See clock.h for
 * the model and doc/clock.md for when it falls back.
 */
#ifndef TRACER_CLOCK_MAKE_H
#define TRACER_CLOCK_MAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"

/* tracerd takes a new anchor this often while a session records. */
#define TRACER_CLOCK_PERIOD_NS		1000000000ULL
/* The first calibration: two samples this far apart. */
#define TRACER_CLOCK_CALIBRATE_NS	100000000ULL
/* Off CLOCK_MONOTONIC by more than this: the TSC is not usable. */
#define TRACER_CLOCK_STRAY_NS		50000000LL
/* At most this change of rate to bring an error back. */
#define TRACER_CLOCK_MAX_SLEW_PPM	500
/* Writers stamp raw ticks (clock.h, "Ticks") only on a TSC this fast:
 * a distance in ticks is then longer than the same in ns. */
#define TRACER_CLOCK_TICKS_MIN_HZ	1100000000ULL
/* A CPU whose TSC line is this far off the others' is refused. */
#define TRACER_CLOCK_CPU_TOLERANCE_NS	20000ULL

/* One simultaneous reading of the TSC and CLOCK_MONOTONIC. */
struct tracer_clock_sample {
	uint64_t tsc;			/* middle of the bracket */
	uint64_t ns;			/* CLOCK_MONOTONIC */
	uint64_t width;			/* ticks the bracket took */
};

/* The narrowest of several brackets rdtsc, clock_gettime, rdtsc. */
void tracer__clock_sample(struct tracer_clock_sample *s);

/*
 * May the TSC stamp events here? An x86-64 CPU with an invariant TSC
 * (constant_tsc, nonstop_tsc) whose kernel keeps time with it
 * (clocksource 'tsc'); forced: any clocksource. why gets the reason
 * either way. Returns 0 or -ENOTSUP.
 */
int tracer__clock_tsc_usable(bool forced, char *why, size_t n);

/*
 * The line through samples a and b (b later), anchored at b, kind TSC.
 * Returns 0 or -ERANGE (samples not increasing).
 */
int tracer__clock_start(struct tracer_clock *c,
			const struct tracer_clock_sample *a,
			const struct tracer_clock_sample *b);

/*
 * The next anchor of *c at sample s (prev: the sample of the current
 * anchor): continuous with *c at s, its rate the one measured from prev
 * to s, corrected so that the error *err (c's time at s minus s's
 * CLOCK_MONOTONIC) is gone one period later. Returns 0, or -ERANGE (the
 * TSC strayed by more than TRACER_CLOCK_STRAY_NS, or the samples do not
 * increase; *c unchanged).
 */
int tracer__clock_steer(struct tracer_clock *c,
			const struct tracer_clock_sample *prev,
			const struct tracer_clock_sample *s, int64_t *err);

/*
 * Does clock c agree with CLOCK_MONOTONIC within tol_ns on every CPU the
 * caller may run on? Moves the calling thread from CPU to CPU and back.
 * Returns 0, -ERANGE (why says which CPU), or -errno of
 * sched_getaffinity.
 */
int tracer__clock_cpus_agree(const struct tracer_clock *c, uint64_t tol_ns,
			     char *why, size_t n);

#endif /* TRACER_CLOCK_MAKE_H */
