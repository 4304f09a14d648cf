/*
 * ratelimit.h - at most RATE_BURST log lines of one cause per RATE_WINDOW
 * milliseconds, so that a peer that repeats a mistake (a refused user
 * connecting in a loop, a process that keeps its channel full of damaged
 * packets) cannot flood the log: the first line of the next window says
 * how many were left out.
 *
 *	static struct tracerd_rate rate;
 *	uint64_t skipped;
 *
 *	if (tracerd_rate_ok(&rate, tracerd_now_ms(), &skipped))
 *		tracerd_log("...%s", ..., tracerd_rate_note(skipped, buf));
 *
 * Single-threaded: tracerd's loop.
 */
#ifndef TRACERD_RATELIMIT_H
#define TRACERD_RATELIMIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TRACERD_RATE_BURST	10
#define TRACERD_RATE_WINDOW	10000	/* ms */

struct tracerd_rate {
	uint64_t start_ms;		/* of the window */
	uint32_t lines;			/* logged in it */
	uint64_t skipped;		/* not logged since the last line */
};

/* May a line of this cause be logged at now_ms? If so, *skipped gets the
 * number left out since the last one (then forgotten). */
static inline bool tracerd_rate_ok(struct tracerd_rate *r, uint64_t now_ms,
				   uint64_t *skipped)
{
	if (!r->start_ms || now_ms - r->start_ms >= TRACERD_RATE_WINDOW) {
		r->start_ms = now_ms ? now_ms : 1;
		r->lines = 0;
	}
	if (r->lines >= TRACERD_RATE_BURST) {
		r->skipped++;
		return false;
	}
	r->lines++;
	*skipped = r->skipped;
	r->skipped = 0;
	return true;
}

/* " (N more like it not logged)", or "" when none was skipped. */
static inline const char *tracerd_rate_note(uint64_t skipped, char *buf,
					    size_t n)
{
	if (!skipped)
		return "";
	snprintf(buf, n, " (%" PRIu64 " more like it not logged)", skipped);
	return buf;
}

#endif
