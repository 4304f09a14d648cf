/*
 * clock.c - making the TSC line of the trace clock (clock.h): may the TSC
 * stamp events here, its first calibration, and the anchors that keep it
 * on CLOCK_MONOTONIC. tracerd runs all of this; writers only read.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "clock_make.h"

const struct tracer_clock_cell tracer__clock_monotonic = {
	.clock = { .kind = TRACER_CLOCK_MONOTONIC },
};

#define SAMPLE_TRIES	16

void tracer__clock_sample(struct tracer_clock_sample *s)
{
	int i;

	s->width = UINT64_MAX;
	for (i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t t0 = tracer__rdtsc();
		uint64_t ns = tracer__clock_now();
		uint64_t t1 = tracer__rdtsc();

		/* The narrowest bracket: no interrupt, no preemption. */
		if (t1 - t0 < s->width) {
			s->width = t1 - t0;
			s->tsc = t0 + (t1 - t0) / 2;
			s->ns = ns;
		}
	}
}

/* Does /proc/cpuinfo's first "flags" line have every flag of want? */
static bool cpu_flags(const char *const *want, int n)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");
	int i, have = 0;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		found = true;
		for (i = 0; i < n; i++) {
			char *p = strstr(line, want[i]);
			size_t len = strlen(want[i]);

			if (p && p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n'))
				have++;
		}
	}
	fclose(f);
	return found && have == n;
}

/* The kernel's clocksource, into out ("" if unknown). */
static void clocksource(char *out, size_t n)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource", "re");

	out[0] = '\0';
	if (f) {
		if (!fgets(out, (int)n, f))
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
}

int tracer__clock_tsc_usable(bool forced, char *why, size_t n)
{
	static const char *const invariant[] = { "constant_tsc",
						 "nonstop_tsc" };
	char cs[64];

	if (!TRACER_CLOCK_HAVE_TSC) {
		snprintf(why, n, "not an x86-64 CPU");
		return -ENOTSUP;
	}
	if (!cpu_flags(invariant, 2)) {
		snprintf(why, n, "the CPU's TSC is not invariant (no "
			 "constant_tsc and nonstop_tsc in /proc/cpuinfo)");
		return -ENOTSUP;
	}
	clocksource(cs, sizeof(cs));
	if (!forced && strcmp(cs, "tsc") != 0) {
		snprintf(why, n, "the kernel's clocksource is '%s', not 'tsc'",
			 cs[0] ? cs : "unknown");
		return -ENOTSUP;
	}
	snprintf(why, n, "invariant TSC, clocksource '%s'%s", cs,
		 forced ? " (forced)" : "");
	return 0;
}

/* mult of the line through samples a and b (b later): ns per tick. */
static uint64_t slope(const struct tracer_clock_sample *a,
		      const struct tracer_clock_sample *b)
{
	unsigned __int128 ns = (unsigned __int128)(b->ns - a->ns)
			       << TRACER_CLOCK_SHIFT;

	return (uint64_t)(ns / (b->tsc - a->tsc));
}

int tracer__clock_start(struct tracer_clock *c,
			const struct tracer_clock_sample *a,
			const struct tracer_clock_sample *b)
{
	if (b->tsc <= a->tsc || b->ns <= a->ns)
		return -ERANGE;
	c->kind = TRACER_CLOCK_TSC;
	c->flags = 0;
	c->tsc_base = b->tsc;
	c->ns_base = b->ns;
	c->mult = slope(a, b);
	c->tsc_hz = (uint64_t)(((unsigned __int128)(b->tsc - a->tsc) *
				TRACER_CLOCK_FREQ) / (b->ns - a->ns));
	return c->mult ? 0 : -ERANGE;
}

int tracer__clock_steer(struct tracer_clock *c,
			const struct tracer_clock_sample *prev,
			const struct tracer_clock_sample *s, int64_t *err)
{
	struct tracer_clock next;
	uint64_t at, span, size;
	int64_t e;

	if (tracer__clock_start(&next, prev, s))
		return -ERANGE;
	at = tracer__clock_from_tsc(c, s->tsc);
	e = (int64_t)(at - s->ns);
	*err = e;
	if (e > TRACER_CLOCK_STRAY_NS || e < -TRACER_CLOCK_STRAY_NS)
		return -ERANGE;
	/*
	 * Continue from where the old line is at s, and aim to meet
	 * CLOCK_MONOTONIC one period later: over the next `span` ns the
	 * line runs (span - e) / span as fast as the measured rate. Large
	 * errors are spread so that the rate never changes by more than
	 * TRACER_CLOCK_MAX_SLEW_PPM.
	 */
	size = (uint64_t)(e < 0 ? -e : e);
	span = size * 1000000 / TRACER_CLOCK_MAX_SLEW_PPM;
	if (span < TRACER_CLOCK_PERIOD_NS)
		span = TRACER_CLOCK_PERIOD_NS;
	next.ns_base = at;
	next.mult = (uint64_t)((unsigned __int128)next.mult *
			       (uint64_t)((int64_t)span - e) / span);
	*c = next;
	return 0;
}

int tracer__clock_cpus_agree(const struct tracer_clock *c, uint64_t tol_ns,
			     char *why, size_t n)
{
	cpu_set_t was, one;
	int cpu, ret = 0;

	if (sched_getaffinity(0, sizeof(was), &was) < 0)
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && ret == 0; cpu++) {
		struct tracer_clock_sample s;
		int64_t d;

		if (!CPU_ISSET(cpu, &was))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			continue;	/* offline meanwhile */
		tracer__clock_sample(&s);
		d = (int64_t)(tracer__clock_from_tsc(c, s.tsc) - s.ns);
		if (d > (int64_t)tol_ns || d < -(int64_t)tol_ns) {
			snprintf(why, n, "the TSC of CPU %d is %lld ns off",
				 cpu, (long long)d);
			ret = -ERANGE;
		}
	}
	sched_setaffinity(0, sizeof(was), &was);
	return ret;
}
