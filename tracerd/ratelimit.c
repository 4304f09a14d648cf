/*
 * ratelimit.c - log lines of one cause, at most TRACERD_RATE_BURST every
 * TRACERD_RATE_WINDOW ms (ratelimit.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "tracerd.h"
#include "clock.h"

/* May a line be logged now? If so, *skipped: those left out before. */
static bool rate_ok(struct tracerd_rate *r, uint64_t *skipped)
{
	uint64_t now_ms = tracer__clock_now() / 1000000;

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

void tracerd_log_rated(struct tracerd_rate *r, const char *fmt, ...)
{
	char line[1024];
	uint64_t skipped;
	va_list ap;

	if (!rate_ok(r, &skipped))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (skipped)
		tracerd_log("%s (%" PRIu64 " more like it not logged)", line,
			    skipped);
	else
		tracerd_log("%s", line);
}

void tracerd_rate_done(struct tracerd_rate *r, const char *who)
{
	if (r->skipped)
		tracerd_log("%s: %" PRIu64 " more log line(s) like the last "
			    "not logged", who, r->skipped);
	r->skipped = 0;
}
