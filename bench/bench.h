/*
 * bench.h - helpers shared by the benchmarks (bench_record, bench_tracer,
 * bench_wrap): fatal errors, clocks and a wall/CPU stopwatch, medians,
 * pre-touched memory, the floor record. Define PROG (the program's name)
 * before including it.
 */
#ifndef TRACER_BENCH_H
#define TRACER_BENCH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static inline void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct stopwatch {
	uint64_t wall, cpu;
};

static inline void sw_start(struct stopwatch *sw)
{
	sw->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sw->wall = clock_ns(CLOCK_MONOTONIC);
}

/* Wall ns per event of n events; *share = CPU time / wall time. */
static inline double sw_stop(const struct stopwatch *sw, uint64_t n,
			     double *share)
{
	uint64_t wall = clock_ns(CLOCK_MONOTONIC) - sw->wall;
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - sw->cpu;

	*share = wall ? (double)cpu / (double)wall : 1.0;
	if (*share > 1.0)
		*share = 1.0;	/* the CPU interval encloses wall's */
	return (double)wall / (double)n;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n); sorts v. */
static inline double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* size bytes, page aligned, every page already faulted in. */
static inline void *alloc_touched(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, size))
		die("cannot allocate %zu bytes", size);
	memset(p, 0, size);
	return p;
}

/* ---- the floor of a record (bench_tracer, bench_wrap) ---------------- */

#define FLOOR_BYTES	(4u << 20)	/* a default channel's size */

/* What a record holds: event header (id, size, timestamp) + 2 x 8 bytes. */
struct floor_record {
	uint32_t id;
	uint32_t size;
	uint64_t timestamp;
	int64_t arg[2];
};

/* The time of a floor record: CLOCK_MONOTONIC, or the raw TSC. */
static inline uint64_t floor_clock(bool tsc)
{
#if defined(__x86_64__) || defined(__i386__)
	if (tsc)
		return __builtin_ia32_rdtsc();
#endif
	(void)tsc;
	return clock_ns(CLOCK_MONOTONIC);
}

/* A floor record: its time, then its header and two values. */
static inline void floor_store(struct floor_record *r, bool tsc, int64_t a,
			       int64_t b)
{
	r->timestamp = floor_clock(tsc);
	r->id = 1;
	r->size = sizeof(*r);
	r->arg[0] = a;
	r->arg[1] = b;
}

/*
 * For a floor record written by a function the compiler may neither
 * inline nor see into, as tracer_record() calls into libtracer: the floor
 * the write path is held to (issue 17: "empty call + rdtsc + 4 stores").
 */
#if defined(__GNUC__) && !defined(__clang__)
# define FLOOR_CALL	__attribute__((noinline, noipa))
#else
# define FLOOR_CALL	__attribute__((noinline))
#endif

#endif /* TRACER_BENCH_H */
