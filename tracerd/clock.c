/*
 * clock.c - the trace clock tracerd gives the writers (common/clock.h,
 * doc/clock.md).
 *
 *   start        --clock (or TRACER_CLOCK) and the machine decide: the
 *                TSC where it is usable (common/clock.c), CLOCK_MONOTONIC
 *                elsewhere. The pages say MONOTONIC until the TSC is
 *                calibrated, CALIBRATE_NS later; a line left on the
 *                state page by the previous tracerd is kept meanwhile if
 *                it still agrees with CLOCK_MONOTONIC, so that a restart
 *                does not step the processes' clocks.
 *   calibrated   every CPU's TSC must agree with the line; then the pages
 *                get it (kind TSC).
 *   every second a new anchor (tracer__clock_steer()), published on every
 *                control page with a new epoch where a session records
 *                (the threads copy it at their next event) and on the
 *                state page under its seq.
 *   stray        the TSC more than TRACER_CLOCK_STRAY_NS off: the pages
 *                say MONOTONIC from then on, and the log says why.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_make.h"
#include "tracerd.h"

#define MS(ns)	((uint64_t)(ns) / 1000000)

/*
 * Line c goes into the history; writers may stamp ticks by it where the
 * TSC runs at more than TRACER_CLOCK_TICKS_MIN_HZ (a compact record's
 * distance in ns is then below its distance in ticks: rb_read.c) and the
 * history took it. The rate is judged once, by the first line: a TSC
 * measured now above, now below the bound would move every thread from
 * one unit to the other each time.
 */
static void remember(struct tracerd *d, struct tracer_clock *c)
{
	if (!d->clock.ticks)
		d->clock.ticks = c->tsc_hz >= TRACER_CLOCK_TICKS_MIN_HZ ? 1 : -1;
	c->flags &= ~TRACER_CLOCK_F_TICKS;
	if (tracer__clock_history_add(&d->clock.history, c) == 0 &&
	    d->clock.ticks > 0)
		c->flags |= TRACER_CLOCK_F_TICKS;
}

/* Writers on CLOCK_MONOTONIC from now on; if some were on the TSC, the
 * timer goes on sampling it for the history (their ticks until they
 * leave them). */
static void use_monotonic(struct tracerd *d, const char *why)
{
	d->clock.c.kind = TRACER_CLOCK_MONOTONIC;
	d->clock.c.flags = 0;
	snprintf(d->clock.why, sizeof(d->clock.why), "%s", why);
	d->clock.sampling = d->clock.history.n != 0;
	if (!d->clock.sampling)
		uv_timer_stop(&d->clock.timer);
}

/*
 * Sampling after a stray: the line through the last two samples, in the
 * history and on the state page (kind MONOTONIC: writers do not use it),
 * where a tracerd started after this one finds it for the ticks left in
 * the rings.
 */
static void sample_line(struct tracerd *d)
{
	struct tracer_clock_sample s;
	struct tracer_clock line;

	tracer__clock_sample(&s);
	if (tracer__clock_start(&line, &d->clock.anchor, &s) == 0 &&
	    tracer__clock_history_add(&d->clock.history, &line) == 0) {
		line.kind = TRACER_CLOCK_MONOTONIC;
		d->clock.c = line;
		if (d->state)
			tracerd_control_clock_page(d, d->state);
	}
	d->clock.anchor = s;
}

/* The previous tracerd's line, if it still agrees with s. */
static bool keep_old(struct tracerd *d, const struct tracer_clock_sample *s)
{
	struct tracer_clock old;
	int64_t e;

	if (!d->state)
		return false;
	tracer__control_copy_clock(d->state, &old);
	if (old.kind != TRACER_CLOCK_TSC)
		return false;
	e = (int64_t)(tracer__clock_from_tsc(&old, s->tsc) - s->ns);
	if (e > 1000000 || e < -1000000)
		return false;
	d->clock.c = old;
	remember(d, &d->clock.c);
	return true;
}

/*
 * The previous tracerd's line reads the ticks its writers stamped, even
 * one it left after a stray (kind MONOTONIC, the line still there).
 */
static void inherit(struct tracerd *d)
{
	struct tracer_clock old;

	if (!d->state)
		return;
	tracer__control_copy_clock(d->state, &old);
	if (!old.mult || !TRACER_CLOCK_HAVE_TSC)
		return;
	old.kind = TRACER_CLOCK_TSC;
	tracer__clock_history_add(&d->clock.history, &old);
}

/* The first line, from the first sample to s, if every CPU agrees. */
static int first_line(struct tracer_clock *next,
		      const struct tracer_clock_sample *first,
		      const struct tracer_clock_sample *s, char *why, size_t n)
{
	if (tracer__clock_start(next, first, s)) {
		snprintf(why, n, "the TSC did not advance with CLOCK_MONOTONIC");
		return -ERANGE;
	}
	return tracer__clock_cpus_agree(next, TRACER_CLOCK_CPU_TOLERANCE_NS,
					why, n);
}

/* Line next, anchored at sample s, is the clock from now on. */
static void take_line(struct tracerd *d, const struct tracer_clock *next,
		      const struct tracer_clock_sample *s, int64_t err)
{
	if (d->clock.c.kind != TRACER_CLOCK_TSC)
		tracerd_log("trace clock: TSC at %" PRIu64 " Hz", next->tsc_hz);
	d->clock.c = *next;
	remember(d, &d->clock.c);
	snprintf(d->clock.why, sizeof(d->clock.why), "%s%s", d->clock.usable,
		 d->clock.c.flags & TRACER_CLOCK_F_TICKS ?
		 "; records stamped in ticks, converted by tracerd" : "");
	d->clock.anchor = *s;
	d->clock.err = err;
}

/* The calibration, then every period a new anchor (the top). */
static void on_clock(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	struct tracer_clock_sample s;
	struct tracer_clock next = d->clock.c;
	char why[160];
	int64_t err = 0;
	int ret;

	if (d->clock.sampling) {
		sample_line(d);
		return;
	}
	tracer__clock_sample(&s);
	if (d->clock.c.kind == TRACER_CLOCK_TSC) {
		ret = tracer__clock_steer(&next, &d->clock.anchor, &s, &err);
		snprintf(why, sizeof(why), "the TSC strayed %" PRId64 " ns "
			 "from CLOCK_MONOTONIC", err);
	} else {
		ret = first_line(&next, &d->clock.anchor, &s, why,
				 sizeof(why));
	}
	if (ret == 0) {
		take_line(d, &next, &s, err);
	} else {
		tracerd_log("trace clock: CLOCK_MONOTONIC from now on: %s",
			    why);
		use_monotonic(d, why);
	}
	tracerd_control_clock(d);
}

/* CLOCK_MONOTONIC from the start; the previous tracerd's writers may
 * still stamp ticks, sampled as after a stray. */
static void start_monotonic(struct tracerd *d, const char *why)
{
	use_monotonic(d, why);
	if (!d->clock.sampling)
		return;
	tracer__clock_sample(&d->clock.anchor);
	uv_timer_start(&d->clock.timer, on_clock, MS(TRACER_CLOCK_PERIOD_NS),
		       MS(TRACER_CLOCK_PERIOD_NS));
}

void tracerd_clock_init(struct tracerd *d)
{
	char why[160];

	uv_timer_init(d->loop, &d->clock.timer);
	d->clock.timer.data = d;
	uv_unref((uv_handle_t *)&d->clock.timer);
	d->clock.c = (struct tracer_clock){ .kind = TRACER_CLOCK_MONOTONIC };
	inherit(d);
	if (d->cfg.clock == TRACERD_CLOCK_MONOTONIC) {
		start_monotonic(d, "asked for (--clock monotonic)");
	} else if (tracer__clock_tsc_usable(d->cfg.clock == TRACERD_CLOCK_TSC,
					    why, sizeof(why))) {
		start_monotonic(d, why);
	} else {
		snprintf(d->clock.usable, sizeof(d->clock.usable), "%s", why);
		snprintf(d->clock.why, sizeof(d->clock.why), "%s",
			 TRACERD_CLOCK_CALIBRATING);
		tracer__clock_sample(&d->clock.anchor);
		if (keep_old(d, &d->clock.anchor)) {
			snprintf(d->clock.why, sizeof(d->clock.why),
				 "%s; the previous tracerd's line, kept",
				 d->clock.usable);
			tracerd_log("trace clock: TSC at %" PRIu64 " Hz, the "
				    "line the previous tracerd left (no step)",
				    d->clock.c.tsc_hz);
		}
		uv_timer_start(&d->clock.timer, on_clock,
			       MS(TRACER_CLOCK_CALIBRATE_NS),
			       MS(TRACER_CLOCK_PERIOD_NS));
	}
	tracerd_control_clock(d);	/* the state page */
}

uint64_t tracerd_now(const struct tracerd *d)
{
	return tracer__clock_read(&d->clock.c);
}

const char *tracerd_clock_name(const struct tracerd *d)
{
	return d->clock.c.kind == TRACER_CLOCK_TSC ? "tsc" : "monotonic";
}
