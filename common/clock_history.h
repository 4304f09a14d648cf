/*
 * clock_history.h - the lines tracerd published, kept to turn records
 * stamped in TSC ticks into nanoseconds after the fact (clock.h, "Ticks").
 *
 * Model
 * -----
 * One owner (tracerd's event loop) adds and reads; nothing is shared.
 * Each line is kept as the point it starts at and its rate:
 *
 *   ns
 *   |                        ____----  line k+1 from tsc_k+1
 *   |              ___---''''
 *   |      __--''''    line k, over [tsc_k, tsc_k+1)
 *   +----|-------------|-----------|----> tsc
 *       tsc_k       tsc_k+1
 *
 * A tick t is converted by the last line whose anchor is at or before t
 * (the first line for a tick before all of them): the line that was in
 * force when t was read, or would have been had the writer's copy been
 * the newest. tracerd anchors each line where the one before is at that
 * tick (clock_make.h), so the result is continuous and grows with t. A
 * line that does not continue the one before (a calibration after a stray,
 * a new tracerd's own) may step either way: the reader clamps
 * (rb_read.c), so that a channel's times never go back.
 *
 * Bounded: at most TRACER_CLOCK_HISTORY_MAX lines, 18 hours of anchors at
 * one a second. When full, the older half keeps every other point, each
 * joined to the next kept one by a chord: still continuous and growing,
 * off by at most the rate change across the point dropped times a period
 * (parts per million of a second: a microsecond or less).
 */
#ifndef TRACER_CLOCK_HISTORY_H
#define TRACER_CLOCK_HISTORY_H

#include <stdint.h>

#include "clock.h"

#define TRACER_CLOCK_HISTORY_MAX	65536u

/* One line: from tick `tsc` on, ns + (t - tsc) * m / 2^32. */
struct tracer_clock_point {
	uint64_t tsc;
	uint64_t ns;
	uint64_t m;			/* ns per tick << TRACER_CLOCK_M_BITS */
};

struct tracer_clock_history {
	struct tracer_clock_point *v;	/* by tsc, increasing */
	uint32_t n, cap;
};

/*
 * Add clock c's line (kind TSC), in force from its anchor on. A line
 * anchored at or before the last one replaces those it starts before.
 * Returns 0, -EINVAL (not a TSC line), or -ENOMEM (the history is kept
 * as it was).
 */
int tracer__clock_history_add(struct tracer_clock_history *h,
			      const struct tracer_clock *c);

/* Nanoseconds of tick tsc (h->n > 0; 0 when the history is empty). */
uint64_t tracer__clock_history_ns(const struct tracer_clock_history *h,
				  uint64_t tsc);

/*
 * The line that converts tick tsc (h->n > 0), in force for every tick
 * below *until: a reader converting ticks in order looks it up again
 * only when one reaches *until (or is below the line's anchor, before
 * the first line).
 */
const struct tracer_clock_point *
tracer__clock_history_line(const struct tracer_clock_history *h,
			   uint64_t tsc, uint64_t *until);

/* ns of tick t on line p: one 64-bit product while it fits (t less than
 * 2^64 / m ticks after the anchor: 4.3 s at 2 GHz), else 128 bits. */
static inline uint64_t tracer__clock_point_ns(const struct tracer_clock_point *p,
					      uint64_t t)
{
	uint64_t d = t - p->tsc, prod;

	if (tracer_likely(t >= p->tsc && !__builtin_mul_overflow(d, p->m,
								  &prod)))
		return p->ns + (prod >> TRACER_CLOCK_M_BITS);
	if (t >= p->tsc)
		return p->ns + (uint64_t)(((unsigned __int128)d * p->m) >>
					  TRACER_CLOCK_M_BITS);
	return p->ns - (uint64_t)(((unsigned __int128)(p->tsc - t) * p->m) >>
				  TRACER_CLOCK_M_BITS);
}

void tracer__clock_history_free(struct tracer_clock_history *h);

#endif /* TRACER_CLOCK_HISTORY_H */
