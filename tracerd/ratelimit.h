/*
 * ratelimit.h - at most TRACERD_RATE_BURST log lines of one cause per
 * TRACERD_RATE_WINDOW milliseconds (ratelimit.c), so that a peer that
 * repeats a mistake (a refused user connecting in a loop, a process that
 * keeps its channel full of damaged packets) cannot flood the log: the
 * first line of the next window says how many were left out.
 *
 *	static struct tracerd_rate rate;
 *
 *	tracerd_log_rated(&rate, "client pid %d: %s", pid, why);
 *
 * Single-threaded: tracerd's loop.
 */
#ifndef TRACERD_RATELIMIT_H
#define TRACERD_RATELIMIT_H

#include <stdint.h>

#define TRACERD_RATE_BURST	10
#define TRACERD_RATE_WINDOW	10000	/* ms */

struct tracerd_rate {
	uint64_t start_ms;		/* of the window */
	uint32_t lines;			/* logged in it */
	uint64_t skipped;		/* not logged since the last line */
};

/* tracerd_log() the line, unless r's cause logged TRACERD_RATE_BURST lines
 * in this window already; a line logged after some were left out ends
 * with " (N more like it not logged)". */
void tracerd_log_rated(struct tracerd_rate *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* r's cause is over (its process ended): log how many of its lines were
 * left out since the last one logged, if any ("WHO: N more ..."). */
void tracerd_rate_done(struct tracerd_rate *r, const char *who);

#endif
