/*
 * clock.h - the trace clock.
 *
 * Event timestamps are CLOCK_MONOTONIC nanoseconds. A writer computes them
 * one of two ways (doc/clock.md):
 *
 *   MONOTONIC  clock_gettime(CLOCK_MONOTONIC) through the vDSO.
 *   TSC        from the CPU's time-stamp counter with the parameters
 *              tracerd publishes, without the vDSO's work:
 *
 *                ns = ns_base + (tsc - tsc_base) * m / 2^32
 *                m  = mult / 2^(TRACER_CLOCK_SHIFT - 32)   (truncated)
 *
 * Either way the values are nanoseconds on CLOCK_MONOTONIC's time line, so
 * the CTF clock class (1 GHz, offset CLOCK_REALTIME - CLOCK_MONOTONIC) and
 * every reader stay as they are, processes on different clocks merge, and
 * a writer may change from one to the other.
 *
 * Who writes what
 * ---------------
 * tracerd alone computes the parameters (clock.c: calibration against
 * CLOCK_MONOTONIC, then once a second a new anchor). It publishes them on
 * every control page (pool_layout.h, line 3, under the page's seq), and a
 * new epoch tells the threads. A thread copies them into its own
 * struct tracer_clock_cell when it acts on the epoch; the event path reads
 * only that copy:
 *
 *   tracerd                          thread (any context, handlers too)
 *   anchor k+1 at tsc_k:             cell.seq++ ; cell.clock = page's ;
 *     ns_base = f_k(tsc_k)           cell.seq++        (sync, slow path)
 *     mult    = rate - error / 1 s
 *   page.clock = anchor k+1          event: s = cell.seq; read clock;
 *   epoch++                                 cell.seq != s ? again
 *
 * Invariants. Each anchor starts where the previous one's line is at that
 * instant (f_{k+1}(tsc_k) = f_k(tsc_k)), so a thread still on f_k and one
 * on f_{k+1} differ by (t - tsc_k) * (slope difference): nanoseconds. The
 * cell's seq changes only in the thread itself (a signal handler that
 * syncs runs to completion inside the interrupted read), so a compiler
 * barrier is the only ordering the read needs. Steps that are not
 * continuous (tracerd restarted, a fall back to MONOTONIC) are absorbed
 * by the writer, which never stamps a record earlier than its channel's
 * previous one (rb_write.h).
 *
 * Ticks
 * -----
 * Where tracerd says so (TRACER_CLOCK_F_TICKS), a writer skips the line
 * altogether: its records hold rdtsc's value, and their packet says so
 * (unit TRACER_RB_UNIT_TSC, rb_layout.h). The reader, tracerd, turns
 * them into nanoseconds as it takes the packet, through every line it
 * published, each over the ticks it was in force for (clock_history.h):
 *
 *   writer: ts = rdtsc()                    (no cell, no multiplication)
 *   reader: ns = line_k(ts), tsc_k <= ts < tsc_k+1
 *
 * Lines are continuous at their anchors, so the result is the time the
 * writer would have computed with the newest line, without a writer's
 * copy ever being behind. A writer's unit is chosen when it takes a
 * buffer or a stash, and at each new epoch its thread takes in outside a
 * signal handler, where nothing of it is being written (tracer.c); a
 * packet never mixes units. Files hold nanoseconds only.
 */
#ifndef TRACER_CLOCK_H
#define TRACER_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"

/*
 * A load the compiler makes each time it is written, and before the loads
 * that follow it (acquire: the clock's fields are read after the first
 * look at seq, or a handler's new seq could pass with the old fields; on
 * x86 a plain load).
 */
#define TRACER_CLOCK_READ_SEQ(cell) \
	__atomic_load_n(&(cell)->seq, __ATOMIC_ACQUIRE)

#define TRACER_CLOCK_FREQ	1000000000ULL

enum tracer_clock_kind {
	TRACER_CLOCK_MONOTONIC = 0,
	TRACER_CLOCK_TSC = 1,
};

/*
 * How far a writer's stamps may run ahead of the reader's clock: its copy
 * may be an anchor behind (clock_make.h: at most 500 ppm of a period).
 */
#define TRACER_CLOCK_SLACK_NS	10000000ULL

/* Fixed-point scale of mult: ns per tick, times 2^40. */
#define TRACER_CLOCK_SHIFT	40

/*
 * Every conversion uses mult's top bits, m = ns per tick times 2^32 (the
 * published mult keeps its 40 bits: readers of older builds are right),
 * so that the event path multiplies in 64 bits when the product fits, a
 * 64-bit product and a plain shift instead of a 128-bit one and a double
 * shift: 0.6-1 ns of an event on the TSC VM, on the path from rdtsc to
 * the record. The rest computes the same value in 128 bits. m's
 * resolution, 2^-32 ns a tick, is 0.5 ns over a second at 2 GHz, and
 * tracerd anchors every second.
 */
#define TRACER_CLOCK_M_BITS	32

/*
 * flags: tracerd converts records stamped in TSC ticks (kind TSC only):
 * a writer may stamp rdtsc's value as it is, and leave the line to the
 * reader (see "Ticks" below). Writers of older builds ignore the flag and
 * go on stamping nanoseconds.
 */
#define TRACER_CLOCK_F_TICKS	1u

/*
 * The parameters, as published (shared memory: fields only added at the
 * end, no pointers). kind MONOTONIC ignores the others.
 */
struct tracer_clock {
	uint32_t kind;			/* enum tracer_clock_kind */
	uint32_t flags;			/* TRACER_CLOCK_F_* (0 before) */
	uint64_t tsc_base;		/* anchor: TSC ... */
	uint64_t ns_base;		/* ... and its time, ns */
	uint64_t mult;			/* ns per tick << TRACER_CLOCK_SHIFT */
	uint64_t tsc_hz;		/* measured TSC frequency (reports) */
};

/* A thread's copy, read by the event path (see the model above). */
struct tracer_clock_cell {
	uint32_t seq;			/* changed only by the thread */
	uint32_t reserved;
	struct tracer_clock clock;
};

static inline uint64_t tracer__clock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#define TRACER_CLOCK_HAVE_TSC	1

static inline uint64_t tracer__rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* m of clock c: ns per tick times 2^TRACER_CLOCK_M_BITS. */
static inline uint64_t tracer__clock_m(const struct tracer_clock *c)
{
	return c->mult >> (TRACER_CLOCK_SHIFT - TRACER_CLOCK_M_BITS);
}

/* d ticks in ns by m, in 128 bits. */
static inline uint64_t tracer__clock_ticks_ns(uint64_t d, uint64_t m)
{
	return (uint64_t)(((unsigned __int128)d * m) >> TRACER_CLOCK_M_BITS);
}

/*
 * The same as tracer__clock_ticks_ns() with one 64-bit multiplication,
 * for the event path: false when d * m does not fit in 64 bits.
 */
static tracer_always_inline bool
tracer__clock_ticks_ns64(uint64_t d, uint64_t m, uint64_t *ns)
{
	uint64_t p;

	if (tracer_unlikely(__builtin_mul_overflow(d, m, &p)))
		return false;
	*ns = p >> TRACER_CLOCK_M_BITS;
	return true;
}

/* f(tsc) of clock c; tsc may be before the anchor (another CPU's read). */
static inline uint64_t tracer__clock_from_tsc(const struct tracer_clock *c,
					      uint64_t tsc)
{
	uint64_t d = tsc - c->tsc_base;

	if (tracer_likely((int64_t)d >= 0))
		return c->ns_base + tracer__clock_ticks_ns(d, tracer__clock_m(c));
	return c->ns_base - tracer__clock_ticks_ns(-d, tracer__clock_m(c));
}

/* The time by clock c: its TSC line, or CLOCK_MONOTONIC. */
static inline uint64_t tracer__clock_read(const struct tracer_clock *c)
{
	if (tracer_likely(c->kind == TRACER_CLOCK_TSC))
		return tracer__clock_from_tsc(c, tracer__rdtsc());
	return tracer__clock_now();
}
#else
#define TRACER_CLOCK_HAVE_TSC	0

static inline uint64_t tracer__rdtsc(void)
{
	return 0;
}

static inline uint64_t tracer__clock_from_tsc(const struct tracer_clock *c,
					      uint64_t tsc)
{
	(void)c;
	(void)tsc;
	return tracer__clock_now();
}

static inline uint64_t tracer__clock_read(const struct tracer_clock *c)
{
	(void)c;
	return tracer__clock_now();
}
#endif

/* Does clock c let writers stamp TSC ticks (see "Ticks" at the top)? */
static inline bool tracer__clock_ticks(const struct tracer_clock *c)
{
	return TRACER_CLOCK_HAVE_TSC && c->kind == TRACER_CLOCK_TSC &&
	       (c->flags & TRACER_CLOCK_F_TICKS);
}

/*
 * The time by a thread's cell: a consistent copy even when a signal
 * handler of the same thread replaces it in the middle of the read.
 */
static tracer_always_inline uint64_t
tracer__clock_cell_read(const struct tracer_clock_cell *cell)
{
	for (;;) {
		uint32_t s = TRACER_CLOCK_READ_SEQ(cell);
		uint64_t ns = tracer__clock_read(&cell->clock);

		/* The clock's loads before the second look at seq. */
		__asm__ __volatile__("" ::: "memory");
		if (tracer_likely(TRACER_CLOCK_READ_SEQ(cell) == s))
			return ns;
	}
}

/*
 * One try at the time by a thread's cell, for the event fast path, where
 * nothing loops: false when the cell is not a TSC clock, the TSC reads
 * before the anchor or too long after it for one 64-bit multiplication,
 * or a handler replaced the cell meanwhile; the
 * caller then takes its slow path, which reads with
 * tracer__clock_cell_read().
 */
static tracer_always_inline bool
tracer__clock_cell_try_tsc(const struct tracer_clock_cell *cell, uint64_t *ns)
{
#if TRACER_CLOCK_HAVE_TSC
	uint32_t s = TRACER_CLOCK_READ_SEQ(cell);
	uint64_t m, d, n;

	if (tracer_unlikely(cell->clock.kind != TRACER_CLOCK_TSC))
		return false;
	m = tracer__clock_m(&cell->clock);
	d = tracer__rdtsc() - cell->clock.tsc_base;
	/* The product past 64 bits: a TSC before the anchor (d wrapped;
	 * m >= 2 for any real TSC), or 2^64 / m ticks after it (4.3 s at
	 * 2 GHz; tracerd anchors every second). Otherwise the same value
	 * as tracer__clock_ticks_ns(). */
	if (tracer_unlikely(!tracer__clock_ticks_ns64(d, m, &n)))
		return false;
	*ns = cell->clock.ns_base + n;
	/* The clock's loads before the second look at seq. */
	__asm__ __volatile__("" ::: "memory");
	return TRACER_CLOCK_READ_SEQ(cell) == s;
#else
	(void)cell;
	(void)ns;
	return false;
#endif
}

/*
 * Replace a thread's copy with *c (the slow path, or a handler of the
 * thread): seq brackets the stores so that an interrupted read retries.
 */
static inline void tracer__clock_cell_set(struct tracer_clock_cell *cell,
					  const struct tracer_clock *c)
{
	cell->seq++;
	__asm__ __volatile__("" ::: "memory");
	cell->clock = *c;
	__asm__ __volatile__("" ::: "memory");
	cell->seq++;
}

/* The monotonic cell, for writers without a tracerd (tests, tools). */
extern const struct tracer_clock_cell tracer__clock_monotonic;

#endif /* TRACER_CLOCK_H */
