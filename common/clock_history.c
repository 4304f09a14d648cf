/*
 * clock_history.c - the lines tracerd published, by the tick they took
 * effect at (model: clock_history.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "clock_history.h"

/* The rate of the chord from a to b (b later). */
static uint64_t chord(const struct tracer_clock_point *a,
		      const struct tracer_clock_point *b)
{
	if (b->tsc <= a->tsc || b->ns < a->ns)
		return a->m;
	return (uint64_t)(((unsigned __int128)(b->ns - a->ns) <<
			   TRACER_CLOCK_M_BITS) / (b->tsc - a->tsc));
}

/* Full: every other point of the older half goes (clock_history.h). */
static void thin(struct tracer_clock_history *h)
{
	uint32_t half = h->n / 2, i, j = 0;

	for (i = 0; i < half; i += 2) {
		h->v[j] = h->v[i];
		/* To the next point kept: i + 2, or the first of the
		 * newer half. */
		h->v[j].m = chord(&h->v[i], &h->v[i + 2 < half ? i + 2 : half]);
		j++;
	}
	for (i = half; i < h->n; i++)
		h->v[j++] = h->v[i];
	h->n = j;
}

/* Room for one more point. Returns 0 or -ENOMEM. */
static int make_room(struct tracer_clock_history *h)
{
	struct tracer_clock_point *v;
	uint32_t cap;

	if (h->n == TRACER_CLOCK_HISTORY_MAX)
		thin(h);
	if (h->n < h->cap)
		return 0;
	cap = h->cap ? h->cap * 2 : 64;
	if (cap > TRACER_CLOCK_HISTORY_MAX)
		cap = TRACER_CLOCK_HISTORY_MAX;
	v = realloc(h->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

int tracer__clock_history_add(struct tracer_clock_history *h,
			      const struct tracer_clock *c)
{
	struct tracer_clock_point p = {
		.tsc = c->tsc_base, .ns = c->ns_base,
		.m = c->mult >> (TRACER_CLOCK_SHIFT - TRACER_CLOCK_M_BITS),
	};
	int ret;

	if (c->kind != TRACER_CLOCK_TSC || p.m == 0)
		return -EINVAL;
	while (h->n && h->v[h->n - 1].tsc >= p.tsc)
		h->n--;		/* lines it starts before */
	ret = make_room(h);
	if (ret)
		return ret;
	h->v[h->n++] = p;
	return 0;
}

/* The last point at or before t (the first if none): usually the newest. */
static const struct tracer_clock_point *
line_at(const struct tracer_clock_history *h, uint64_t t)
{
	uint32_t lo = 0, hi = h->n - 1;

	if (t >= h->v[hi].tsc)
		return &h->v[hi];
	if (hi && t >= h->v[hi - 1].tsc)
		return &h->v[hi - 1];
	while (lo < hi) {	/* v[lo].tsc <= t < v[hi].tsc, or lo = 0 */
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (h->v[mid].tsc <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &h->v[lo];
}

uint64_t tracer__clock_history_ns(const struct tracer_clock_history *h,
				  uint64_t tsc)
{
	if (!h->n)
		return 0;
	return tracer__clock_point_ns(line_at(h, tsc), tsc);
}

const struct tracer_clock_point *
tracer__clock_history_line(const struct tracer_clock_history *h,
			   uint64_t tsc, uint64_t *until)
{
	const struct tracer_clock_point *p = line_at(h, tsc);

	*until = p + 1 < h->v + h->n ? p[1].tsc : UINT64_MAX;
	return p;
}

void tracer__clock_history_free(struct tracer_clock_history *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
