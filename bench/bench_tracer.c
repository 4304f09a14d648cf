/*
 * bench_tracer.c - cost of tracer_record() through the real libtracer,
 * with the real tracerd draining; and tracerd's drain rate.
 *
 * Every event is tracer_record("bench:ev", "%d %d", a, b): a 16-byte
 * header and two 8-byte integers, 32 bytes in the trace. bench_drain.sh
 * starts a private tracerd, starts and stops the sessions and runs the
 * subcommands below; run it from the build directory:
 *
 *   cd build && ../bench/bench_drain.sh
 *
 * Subcommands (times are ns per event; "best (median)" over the runs):
 *
 *   floor [EVENTS [RUNS]]
 *       the floors of a record: a clock_gettime(CLOCK_MONOTONIC) read,
 *       and a clock read plus the stores of a 32-byte record into a
 *       private 4 MiB array (what any tracer must do), inline and by a
 *       call the compiler cannot inline (as tracer_record() calls into
 *       libtracer: the floor the write path is measured against); on
 *       x86, a raw TSC read, and the same two floors with it (the floors
 *       of the TSC clock).
 *   record THREADS [EVENTS [RUNS]]
 *       THREADS threads (1 or 2) record EVENTS events per run, RUNS runs
 *       after a warm-up of 1M events; a thread's cost is its own wall time
 *       over its events, the row shows the mean over threads, then each.
 *       Meant to run in a session while tracerd drains.
 *   idle [EVENTS [RUNS]]
 *       the cost of a call site that does not record: with tracerd but no
 *       session (the call enters libtracer, checks the session, returns),
 *       or without tracerd (the call site's `enabled` is 0: a load and a
 *       branch). Which one depends on how it is run; the row says which.
 *   disabled [EVENTS [RUNS]]
 *       the cost of a call site the event filter turned off, in a session
 *       (tracectl start --events=-bench:off): tracer_record("bench:off",
 *       "%d %d", i, 0) in a loop, against an empty loop of the same shape,
 *       the two alternating run by run. Fails unless bench:off's `enabled`
 *       is 0 and bench:ev's is not (libtracer registered, the filter in
 *       force excludes bench:off), before and after the runs.
 *   filter-record [EVENTS [RUNS]]
 *       `record 1` once per phase, while the script changes the filter in
 *       between: prints "ready", reads a phase line "OFF KEY LABEL" from
 *       stdin (OFF: 1 if bench:off must be enabled under the filter the
 *       script just applied, else 0), checks that bench:ev is enabled and
 *       bench:off as OFF says (fails otherwise), runs RUNS runs of EVENTS
 *       events (after the warm-up), prints a row "filter LABEL" (with
 *       the writer's CPU time over its wall time: below 100%, it was
 *       preempted) and "@ KEY_best=... KEY_median=... KEY_share=...", and
 *       so on until end of file or a line "quit"; then "@ produced=N"
 *       (every event, warm-ups included). bench_drain.sh alternates the
 *       default filter '*' and one of 1,000 patterns, and times the
 *       `tracectl filter` changes while this process waits for a phase.
 *   first-event [THREADS [FILL]]
 *       THREADS threads (default 300) created one after another; each
 *       times its first tracer_record() (taking a buffer from the pool),
 *       its second, and the mean of 64 more: median, 99th percentile and
 *       maximum in ns. Twice: in a new process (cold pool: a thread that
 *       opens a sub-buffer is the first to touch its pages), then after
 *       FILL threads (default 10, tracerd's default pool size) one after
 *       another each filled both channels of the buffer it took (warm
 *       pool: every page resident, as in a process that ran a while).
 *   drain THREADS SECONDS [MBPS] [--ready] [--hold]
 *       THREADS writers record as fast as they can for SECONDS (or, with
 *       MBPS, paced in 1 ms batches to MBPS megabytes per second in all);
 *       prints what was produced. --ready: once registered, print "ready"
 *       and wait for a line on stdin before recording (the script stops
 *       tracerd meanwhile). --hold: then print "holding" and wait for a
 *       line on stdin, so that the script can read tracectl status while
 *       the process is still registered.
 *   churn TOTAL ALIVE EVENTS
 *       TOTAL short-lived threads, ALIVE at a time (the oldest joined
 *       before the next starts), each recording EVENTS events and
 *       exiting: prints the threads started per second and the process's
 *       peak RSS; bench_drain.sh counts what reached the trace.
 *   count DIR
 *       walk the channel files of a session (or one process) directory:
 *       packets, records, bytes, and the events the threads lost (from
 *       their tracer:thread_exit events, the packets' events_discarded,
 *       and tracer:lost_unbuffered: events of threads that ended before
 *       they had a buffer, of every kind).
 *
 * Lines starting with "@ " carry key=value results for bench_drain.sh.
 * Nothing is pinned; runs take the best of several to reduce noise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* memfd_create, RUSAGE_THREAD */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <tracer.h>

#define PROG			"bench_tracer"
#include "bench.h"
#include "paths.h"
#include "rb_record.h"
#define EVENT_NAME		"bench:ev"
#define OFF_EVENT_NAME		"bench:off"	/* the filter excludes it */
#define EXIT_EVENT_NAME		"tracer:thread_exit"
#define UNBUFFERED_EVENT_NAME	"tracer:lost_unbuffered"
#define RECORD_BYTES		32	/* header 16 + two 8-byte values */
#define DEFAULT_EVENTS		10000000ULL
#define DEFAULT_IDLE_EVENTS	20000000ULL
#define DEFAULT_RUNS		3u
#define WARMUP_EVENTS		1000000ULL
#define MAX_EVENTS		1000000000000ULL
#define MAX_RUNS		100u
#define MAX_WRITERS		64
#define DEFAULT_FIRST_THREADS	300u
#define MAX_FIRST_THREADS	100000u
/*
 * tracerd's default pool: 10 buffers, each a 4 MiB default channel and a
 * 1 MiB vital one; 24-byte events fill a little more than that.
 */
#define DEFAULT_FILL_THREADS	10u
#define FILL_DEFAULT_EVENTS	(176 * 1024)
#define FILL_VITAL_EVENTS	(44 * 1024)
#define PHASE_PAUSE_S		0.5
#define LATER_EVENTS		64
#define SYSCALL_REPS		10000
#define DRAIN_CHUNK		256	/* events between stop-flag checks */
#define PACE_PERIOD_NS		1000000ULL
#define PACKET_HEADER		TRACER_RB_PACKET_SIZE
#define CTF_MAGIC		0xC1FC1FC1u
#define MAX_PACKET		(1u << 30)
#define PATH_BYTES		4096
#define ROW_FMT			"%-40s %-9s "
#define PHASE_LINE		1024
#define PHASE_KEY		32
#define PHASE_LABEL		64

/* One writer thread of `record` or `drain`, on its own cache lines. */
struct writer {
	pthread_t th;
	int index;
	struct bench_run *run;
	double ns[MAX_RUNS];		/* record: wall ns / event per run */
	double share[MAX_RUNS];		/* record: CPU time / wall time */
	uint64_t produced;
	uint64_t elapsed;		/* drain: wall ns */
	double cpu_share;		/* drain */
} __attribute__((aligned(64)));

struct bench_run {
	int nthreads;
	uint64_t events;		/* record: per run and thread */
	unsigned int runs;
	uint64_t batch;			/* drain: per period; 0: flat out */
	pthread_barrier_t barrier;
	struct writer w[MAX_WRITERS];
};

struct first_sample {
	int index;
	double first, second, later, timer;
	double first_cpu;		/* thread CPU time of the first event */
	long faults;			/* minor faults in the first two */
	long switches;			/* context switches in the first two */
};

/* Totals of count. */
struct counts {
	uint64_t files, packets, records, events, bytes;
	uint64_t exits, lost_exit, lost_discarded, lost_unbuffered, bad;
};

struct meta_ids {
	uint32_t event, exit, unbuffered;
};

/* One phase of filter-record, as read from stdin. */
struct phase {
	int off;			/* 1: bench:off must be enabled */
	char key[PHASE_KEY];		/* of the "@" line */
	char label[PHASE_LABEL];	/* of the row */
};

/*
 * The loops of idle, disabled and the empty loop start on a 64-byte
 * boundary: a loop of a few instructions that straddles one can take a
 * cycle more per iteration, whatever is in it (seen on AMD EPYC: the
 * disabled call site at 0.6 ns instead of 0.3 after an unrelated edit).
 */
#if defined(__GNUC__) && !defined(__clang__)
# define TIMED_LOOP	__attribute__((noinline, optimize("align-loops=64")))
#else
# define TIMED_LOOP	__attribute__((noinline))
#endif

static volatile uint64_t sink;
static int drain_stop;		/* atomic: writers stop at the next chunk */

/* ---------------------------------------------------------------------- */
/* Helpers */

static void usage(FILE *f)
{
	fputs("usage: " PROG " floor [EVENTS [RUNS]]\n"
	      "       " PROG " record THREADS [EVENTS [RUNS]]\n"
	      "       " PROG " idle [EVENTS [RUNS]]\n"
	      "       " PROG " disabled [EVENTS [RUNS]]\n"
	      "       " PROG " filter-record [EVENTS [RUNS]]\n"
	      "       " PROG " first-event [THREADS [FILL]]\n"
	      "       " PROG " drain THREADS SECONDS [MBPS] [--ready] [--hold]\n"
	      "       " PROG " churn TOTAL ALIVE EVENTS\n"
	      "       " PROG " count DIR\n"
	      "Run by bench_drain.sh; see the top of bench_tracer.c.\n", f);
}

static uint64_t parse_num(const char *what, const char *arg, uint64_t min,
			  uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || v < min ||
	    v > max) {
		fprintf(stderr, PROG ": %s: '%s' is not an integer from %"
			PRIu64 " to %" PRIu64 "\n", what, arg, min, max);
		exit(2);
	}
	return v;
}

static double parse_seconds(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end || errno || !(v > 0 && v <= 3600)) {
		fprintf(stderr, PROG ": SECONDS: '%s' is not a number of "
			"seconds from 0 to 3600\n", arg);
		exit(2);
	}
	return v;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void sleep_seconds(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The q-quantile (0..1, nearest rank) of v[0..n); sorts v. */
static double quantile(double *v, size_t n, double q)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)(q * (double)n + 0.999999);
	return v[i ? (i > n ? n : i) - 1 : 0];
}

static double min_of(const double *v, size_t n)
{
	double m = v[0];
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

static void start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(th, NULL, fn, arg);

	if (err)
		die("pthread_create: %s", strerror(err));
}

/* ---------------------------------------------------------------------- */
/* The event */

/* One call site for every subcommand, inlined like user code. */
static inline __attribute__((always_inline)) void record_ev(int a, int b)
{
	tracer_record(EVENT_NAME, "%d %d", a, b);
}

/* The same shape under the name the filter excludes (disabled). */
static inline __attribute__((always_inline)) void record_off(int a, int b)
{
	tracer_record(OFF_EVENT_NAME, "%d %d", a, b);
}

static const struct tracer_callsite *find_callsite(const char *name)
{
	struct tracer_callsite *cs;

	for (cs = __start_tracer_callsites;
	     cs && cs < __stop_tracer_callsites; cs++)
		if (cs->name && strcmp(cs->name, name) == 0)
			return cs;
	return NULL;
}

/* Is the call site called name enabled (its `enabled` word nonzero)? */
static bool callsite_on(const char *name)
{
	const struct tracer_callsite *cs = find_callsite(name);

	if (!cs)
		die("call site '%s' not found in this program", name);
	return __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED) != 0;
}

/* Is the call site recording (libtracer registered with tracerd)? */
static bool callsite_enabled(void)
{
	return callsite_on(EVENT_NAME);
}

static void require_registered(void)
{
	if (!callsite_enabled())
		die("the call site is disabled: libtracer is not registered "
		    "with tracerd (is TRACER_SOCKET right?)");
}

/* ---------------------------------------------------------------------- */
/* floor */

static double run_clock(uint64_t n)
{
	struct stopwatch sw;
	uint64_t i, sum = 0;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++)
		sum += now_ns();
	sink = sum;
	return sw_stop(&sw, n, &share);
}

#if defined(__x86_64__) || defined(__i386__)
/* For reference: the raw TSC, which a trace clock could use instead. */
static double run_rdtsc(uint64_t n)
{
	struct stopwatch sw;
	uint64_t i, sum = 0;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++)
		sum += __builtin_ia32_rdtsc();
	sink = sum;
	return sw_stop(&sw, n, &share);
}
#endif

static double run_floor(uint64_t n, struct floor_record *buf, bool tsc)
{
	const uint64_t mask = FLOOR_BYTES / sizeof(*buf) - 1;
	struct stopwatch sw;
	uint64_t i, pos = 0;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++) {
		floor_store(&buf[pos], tsc, (int)i, 0);
		pos = (pos + 1) & mask;
	}
	/* The stores are observable: keep them. */
	__asm__ __volatile__("" : : "r"(buf) : "memory");
	return sw_stop(&sw, n, &share);
}

/* The same record written by a call (FLOOR_CALL, bench.h). */
typedef void floor_put_fn(struct floor_record *r, int64_t a, int64_t b);

static FLOOR_CALL void floor_put_clock(struct floor_record *r, int64_t a,
				       int64_t b)
{
	floor_store(r, false, a, b);
}

#if defined(__x86_64__) || defined(__i386__)
static FLOOR_CALL void floor_put_tsc(struct floor_record *r, int64_t a,
				     int64_t b)
{
	floor_store(r, true, a, b);
}
#endif

static double run_floor_call(uint64_t n, struct floor_record *buf,
			     floor_put_fn *put)
{
	const uint64_t mask = FLOOR_BYTES / sizeof(*buf) - 1;
	struct stopwatch sw;
	uint64_t i, pos = 0;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++) {
		put(&buf[pos], (int)i, 0);
		pos = (pos + 1) & mask;
	}
	return sw_stop(&sw, n, &share);
}

static void print_best(const char *name, const char *key, double *v,
		       unsigned int runs)
{
	double best = min_of(v, runs), med = median(v, runs);

	printf(ROW_FMT "%.1f (%.1f)\n", name, "1", best, med);
	printf("@ %s=%.2f %s_median=%.2f\n", key, best, key, med);
}

static int cmd_floor(uint64_t events, unsigned int runs)
{
	struct floor_record *buf = alloc_touched(FLOOR_BYTES);
	double v[MAX_RUNS];
	unsigned int r;

	run_clock(events / 10);		/* warm-up */
	for (r = 0; r < runs; r++)
		v[r] = run_clock(events);
	print_best("timestamp read (clock_gettime)", "clock", v, runs);
	run_floor(events / 10, buf, false);
	for (r = 0; r < runs; r++)
		v[r] = run_floor(events, buf, false);
	print_best("timestamp + 32-byte store floor", "floor", v, runs);
	for (r = 0; r < runs; r++)
		v[r] = run_floor_call(events, buf, floor_put_clock);
	print_best("the same, written by a call", "floor_call", v, runs);
#if defined(__x86_64__) || defined(__i386__)
	for (r = 0; r < runs; r++)
		v[r] = run_rdtsc(events);
	print_best("(reference: TSC read, rdtsc)", "rdtsc", v, runs);
	for (r = 0; r < runs; r++)
		v[r] = run_floor(events, buf, true);
	print_best("rdtsc + 32-byte store floor", "floor_tsc", v, runs);
	for (r = 0; r < runs; r++)
		v[r] = run_floor_call(events, buf, floor_put_tsc);
	print_best("the same, written by a call", "floor_tsc_call", v, runs);
#endif
	free(buf);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* record */

static void record_loop(int t, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		record_ev((int)i, t);
}

static void *record_thread(void *arg)
{
	struct writer *w = arg;
	struct bench_run *b = w->run;
	struct stopwatch sw;
	unsigned int r;

	record_loop(w->index, WARMUP_EVENTS);
	for (r = 0; r < b->runs; r++) {
		pthread_barrier_wait(&b->barrier);
		sw_start(&sw);
		record_loop(w->index, b->events);
		w->ns[r] = sw_stop(&sw, b->events, &w->share[r]);
	}
	w->produced = WARMUP_EVENTS + b->runs * b->events;
	return NULL;
}

static void run_writers(struct bench_run *b, void *(*fn)(void *),
			unsigned int barrier_count)
{
	int i;

	pthread_barrier_init(&b->barrier, NULL, barrier_count);
	for (i = 0; i < b->nthreads; i++) {
		b->w[i].index = i;
		b->w[i].run = b;
		start_thread(&b->w[i].th, fn, &b->w[i]);
	}
}

static void join_writers(struct bench_run *b)
{
	int i;

	for (i = 0; i < b->nthreads; i++)
		pthread_join(b->w[i].th, NULL);
	pthread_barrier_destroy(&b->barrier);
}

static void print_record(const struct bench_run *b)
{
	double mean[MAX_RUNS] = { 0 }, share[MAX_RUNS] = { 0 };
	double cpu[MAX_RUNS] = { 0 };
	double each[MAX_WRITERS], tmp[MAX_RUNS], best, med, sh;
	uint64_t produced = 0;
	char threads[16];
	unsigned int r;
	int i;

	for (r = 0; r < b->runs; r++) {
		for (i = 0; i < b->nthreads; i++) {
			mean[r] += b->w[i].ns[r] / b->nthreads;
			share[r] += b->w[i].share[r] / b->nthreads;
			/* thread CPU time per event */
			cpu[r] += b->w[i].ns[r] * b->w[i].share[r] /
				  b->nthreads;
		}
	}
	for (i = 0; i < b->nthreads; i++) {
		memcpy(tmp, b->w[i].ns, sizeof(double) * b->runs);
		each[i] = min_of(tmp, b->runs);
		produced += b->w[i].produced;
	}
	best = min_of(mean, b->runs);
	med = median(mean, b->runs);
	sh = median(share, b->runs);
	snprintf(threads, sizeof(threads), "%d", b->nthreads);
	printf(ROW_FMT "%.1f (%.1f)", "tracer_record, 2 x int (session)",
	       threads, best, med);
	if (b->nthreads > 1) {
		printf(" per thread (");
		for (i = 0; i < b->nthreads; i++)
			printf("%s%.1f", i ? ", " : "", each[i]);
		printf(")");
	}
	printf("\n@ threads=%d best=%.2f median=%.2f produced=%" PRIu64
	       " share=%.3f cpu_best=%.2f", b->nthreads, best, med, produced,
	       sh, min_of(cpu, b->runs));
	printf(" cpu_median=%.2f\n", median(cpu, b->runs));
}

static int cmd_record(int nthreads, uint64_t events, unsigned int runs)
{
	static struct bench_run b;

	require_registered();
	b.nthreads = nthreads;
	b.events = events;
	b.runs = runs;
	run_writers(&b, record_thread, (unsigned int)nthreads);
	join_writers(&b);
	print_record(&b);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* idle */

/* The barrier makes `enabled` be loaded again every iteration. */
static TIMED_LOOP double run_idle(uint64_t n)
{
	struct stopwatch sw;
	uint64_t i;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++) {
		record_ev((int)i, 0);
		__asm__ __volatile__("" : : : "memory");
	}
	return sw_stop(&sw, n, &share);
}

static TIMED_LOOP double run_empty(uint64_t n)
{
	struct stopwatch sw;
	uint64_t i;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++)
		__asm__ __volatile__("" : : : "memory");
	return sw_stop(&sw, n, &share);
}

static int cmd_idle(uint64_t events, unsigned int runs)
{
	bool on = callsite_enabled();
	const char *name = on ? "tracer_record, registered, no session" :
			   "tracer_record, libtracer not registered";
	double v[MAX_RUNS];
	unsigned int r;

	run_idle(events / 10);
	for (r = 0; r < runs; r++)
		v[r] = run_idle(events);
	printf(ROW_FMT "%.2f (%.2f)\n", name, "1", min_of(v, runs),
	       median(v, runs));
	printf("@ enabled=%d idle=%.3f\n", on, min_of(v, runs));
	if (on)
		return 0;
	for (r = 0; r < runs; r++)
		v[r] = run_empty(events);
	printf(ROW_FMT "%.2f (%.2f)\n", "empty loop (no call site)", "1",
	       min_of(v, runs), median(v, runs));
	printf("@ empty=%.3f\n", min_of(v, runs));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* disabled */

/* run_idle over the call site the filter excludes. */
static TIMED_LOOP double run_off(uint64_t n)
{
	struct stopwatch sw;
	uint64_t i;
	double share;

	sw_start(&sw);
	for (i = 0; i < n; i++) {
		record_off((int)i, 0);
		__asm__ __volatile__("" : : : "memory");
	}
	return sw_stop(&sw, n, &share);
}

/* bench:ev enabled, bench:off disabled by the filter; or fail. */
static void require_off(const char *when)
{
	require_registered();
	if (callsite_on(OFF_EVENT_NAME))
		die("%s: call site '%s' is enabled: the filter in force does "
		    "not exclude it (start the session with --events=-%s)",
		    when, OFF_EVENT_NAME, OFF_EVENT_NAME);
}

static void print_pair(const char *name, const char *key, double *v,
		       unsigned int runs, const char *note)
{
	double best = min_of(v, runs), med = median(v, runs);

	printf(ROW_FMT "%.2f (%.2f)%s\n", name, "1", best, med, note);
	printf("@ %s=%.3f %s_median=%.3f\n", key, best, key, med);
}

static int cmd_disabled(uint64_t events, unsigned int runs)
{
	double off[MAX_RUNS], empty[MAX_RUNS];
	unsigned int r;

	require_off("before the runs");
	run_off(events / 10);
	run_empty(events / 10);
	for (r = 0; r < runs; r++) {
		off[r] = run_off(events);
		empty[r] = run_empty(events);
	}
	require_off("after the runs");
	print_pair("tracer_record, disabled by the filter", "disabled", off,
		   runs, "  (" OFF_EVENT_NAME ": enabled == 0, checked)");
	print_pair("empty loop (no call site)", "empty", empty, runs, "");
	printf("@ off_enabled=0\n");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* filter-record */

/* Say "ready", read the next phase; false at end of file or "quit". */
static bool read_phase(struct phase *ph)
{
	char line[PHASE_LINE];
	int at = 0;

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) ||
	    strncmp(line, "quit", 4) == 0)
		return false;
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%d %31s %n", &ph->off, ph->key, &at) != 2 ||
	    at == 0 || (ph->off != 0 && ph->off != 1))
		die("filter-record: bad phase line '%s' (want OFF KEY LABEL)",
		    line);
	snprintf(ph->label, sizeof(ph->label), "%s", line + at);
	return true;
}

/* The filter in force is the one the phase names; or fail. */
static void check_phase(const struct phase *ph, const char *when)
{
	bool off_on = callsite_on(OFF_EVENT_NAME);

	require_registered();
	if (off_on != (ph->off != 0))
		die("phase '%s', %s: call site '%s' is %s, expected %s: the "
		    "filter in force is not the one the phase names",
		    ph->label, when, OFF_EVENT_NAME,
		    off_on ? "enabled" : "disabled",
		    ph->off ? "enabled" : "disabled");
}

static void print_phase(const struct bench_run *b, const struct phase *ph)
{
	double v[MAX_RUNS], best, med, share;
	char name[PHASE_LABEL + 32];

	memcpy(v, b->w[0].ns, sizeof(double) * b->runs);
	best = min_of(v, b->runs);
	med = median(v, b->runs);
	memcpy(v, b->w[0].share, sizeof(double) * b->runs);
	share = median(v, b->runs);
	snprintf(name, sizeof(name), "tracer_record, filter %s", ph->label);
	printf(ROW_FMT "%.1f (%.1f)  writer had %.0f%% of a CPU\n", name,
	       "1", best, med, 100 * share);
	printf("@ %s_best=%.2f %s_median=%.2f %s_share=%.3f\n", ph->key,
	       best, ph->key, med, ph->key, share);
}

static int cmd_filter_record(uint64_t events, unsigned int runs)
{
	static struct bench_run b;
	uint64_t produced = 0;
	struct phase ph;

	b.nthreads = 1;
	b.events = events;
	b.runs = runs;
	while (read_phase(&ph)) {
		check_phase(&ph, "before the runs");
		run_writers(&b, record_thread, 1);
		join_writers(&b);
		check_phase(&ph, "after the runs");
		produced += b.w[0].produced;
		print_phase(&b, &ph);
	}
	printf("@ produced=%" PRIu64 "\n", produced);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* first-event */

static void thread_usage(long *faults, long *switches)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*faults = ru.ru_minflt;
	*switches = ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * Wall time of the first and second events; the thread CPU time read
 * (a system call) around the first one is outside the wall-time window.
 */
static void *first_thread(void *arg)
{
	struct first_sample *s = arg;
	uint64_t c0, c1, t0, t1, t2, t3;
	long f0, f1, w0, w1;
	int k;

	thread_usage(&f0, &w0);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns();
	record_ev(s->index, 0);
	t1 = now_ns();
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t2 = now_ns();
	record_ev(s->index, 1);
	t3 = now_ns();
	thread_usage(&f1, &w1);
	s->first = (double)(t1 - t0);
	s->first_cpu = (double)(c1 - c0);
	s->second = (double)(t3 - t2);
	s->faults = f1 - f0;
	s->switches = w1 - w0;
	t0 = now_ns();
	for (k = 0; k < LATER_EVENTS; k++)
		record_ev(s->index, k + 2);
	t1 = now_ns();
	s->later = (double)(t1 - t0) / LATER_EVENTS;
	t0 = now_ns();
	t1 = now_ns();
	s->timer = (double)(t1 - t0);
	return NULL;
}

/*
 * Between the phases: a thread that writes a little more than a whole
 * default channel and a whole vital channel of tracerd's default geometry,
 * so that every page of the buffer it took is resident afterwards.
 */
static void *fill_thread(void *arg)
{
	int i, t = (int)(long)arg;

	for (i = 0; i < FILL_DEFAULT_EVENTS; i++)
		record_ev(i, t);
	for (i = 0; i < FILL_VITAL_EVENTS; i++)
		tracer_record_vital("bench:fill", "%d %d", i, t);
	return NULL;
}

static void spawn_one(void *(*fn)(void *), void *arg)
{
	pthread_t th;

	start_thread(&th, fn, arg);
	pthread_join(th, NULL);
}

/* Mean ns of a system call the slow path makes. */
static double time_syscall(int which)
{
	char name[16];
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < SYSCALL_REPS; i++) {
		if (which == 0)
			sink += (uint64_t)syscall(SYS_gettid);
		else
			sink += (uint64_t)prctl(PR_GET_NAME, name, 0, 0, 0);
	}
	return (double)(now_ns() - t0) / SYSCALL_REPS;
}

/* Mean ns of the first write to a page of a new shared memfd mapping. */
static double time_page_touch(void)
{
	const size_t size = 4u << 20;
	int fd = memfd_create("bench", MFD_CLOEXEC);
	uint64_t t0;
	char *p;
	size_t off;

	if (fd < 0 || ftruncate(fd, (off_t)size))
		die("memfd: %s", strerror(errno));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	t0 = now_ns();
	for (off = 0; off < size; off += 4096)
		p[off] = 1;
	t0 = now_ns() - t0;
	munmap(p, size);
	close(fd);
	return (double)t0 / (double)(size / 4096);
}

/* Statistic (0 median, 1 p99, 2 max) of a field over threads 1..n-1. */
static double first_stat(const struct first_sample *s, unsigned int n,
			 size_t field, int which)
{
	double *v = calloc(n, sizeof(*v)), r;
	unsigned int i;

	if (!v)
		die("out of memory");
	for (i = 1; i < n; i++)
		memcpy(&v[i - 1], (const char *)&s[i] + field, sizeof(double));
	r = quantile(v, n - 1, which == 0 ? 0.5 : which == 1 ? 0.99 : 1.0);
	free(v);
	return r;
}

static void first_row(const char *name, const char *key, size_t field,
		      const struct first_sample *cold,
		      const struct first_sample *warm, unsigned int n)
{
	double c[3], w[3];
	int k;

	for (k = 0; k < 3; k++) {
		c[k] = first_stat(cold, n, field, k);
		w[k] = first_stat(warm, n, field, k);
	}
	printf("%-36s %7.0f %7.0f %7.0f   %7.0f %7.0f %7.0f\n", name, c[0],
	       c[1], c[2], w[0], w[1], w[2]);
	printf("@ cold_%s_median=%.1f cold_%s_p99=%.1f warm_%s_median=%.1f "
	       "warm_%s_p99=%.1f\n", key, c[0], key, c[1], key, w[0], key,
	       w[1]);
}

static void first_usage(const char *name, const struct first_sample *s,
			unsigned int n)
{
	long faults = 0, switches = 0;
	unsigned int i;

	for (i = 1; i < n; i++) {
		faults += s[i].faults;
		switches += s[i].switches;
	}
	printf("%s: %.2f minor page faults, %.2f context switches per thread "
	       "in its first two events (mean)\n", name,
	       (double)faults / (n - 1), (double)switches / (n - 1));
}

static void print_first(const struct first_sample *cold,
			const struct first_sample *warm, unsigned int n,
			unsigned int fill)
{
	printf("%-36s %23s   %23s\n", "", "cold pool (new process)",
	       "warm pool");
	printf("%-36s %7s %7s %7s   %7s %7s %7s\n", "ns, threads 2..N",
	       "median", "p99", "max", "median", "p99", "max");
#define ROW(name, key, field) \
	first_row(name, key, offsetof(struct first_sample, field), cold, \
		  warm, n)
	ROW("first event (takes a buffer)", "first", first);
	ROW("first event, thread CPU time", "first_cpu", first_cpu);
	ROW("second event", "second", second);
	ROW("events 3..66, mean per event", "later", later);
	ROW("empty timed region (2 clock reads)", "timer", timer);
#undef ROW
	printf("warm pool: after %u threads, one after another, each filled "
	       "the two channels of the buffer it took\n", fill);
	first_usage("cold pool", cold, n);
	first_usage("warm pool", warm, n);
	printf("first thread of the process (also records process_start): "
	       "first event %.0f ns, second %.0f ns\n", cold[0].first,
	       cold[0].second);
	printf("reference: gettid() %.0f ns, prctl(PR_GET_NAME) %.0f ns "
	       "(system calls of the slow path);\n"
	       "           first write to a page of a new memfd mapping %.0f "
	       "ns\n", time_syscall(0), time_syscall(1), time_page_touch());
}

static void run_first(struct first_sample *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		s[i].index = (int)i;
		spawn_one(first_thread, &s[i]);
	}
}

static int cmd_first(unsigned int n, unsigned int fill)
{
	struct first_sample *cold = calloc(n, sizeof(*cold));
	struct first_sample *warm = calloc(n, sizeof(*warm));
	unsigned int i;

	if (!cold || !warm)
		die("out of memory");
	require_registered();
	run_first(cold, n);
	sleep_seconds(PHASE_PAUSE_S);	/* tracerd drains the cold phase */
	for (i = 0; i < fill; i++)
		spawn_one(fill_thread, (void *)(long)i);
	sleep_seconds(PHASE_PAUSE_S);
	run_first(warm, n);
	print_first(cold, warm, n, fill);
	printf("@ produced=%" PRIu64 "\n", (uint64_t)n * 2 *
	       (2 + LATER_EVENTS) + (uint64_t)fill * FILL_DEFAULT_EVENTS);
	free(cold);
	free(warm);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* drain */

static void drain_flat_out(struct writer *w)
{
	int k;

	while (!__atomic_load_n(&drain_stop, __ATOMIC_RELAXED)) {
		for (k = 0; k < DRAIN_CHUNK; k++)
			record_ev(k, w->index);
		w->produced += DRAIN_CHUNK;
	}
}

/* batch events every PACE_PERIOD_NS, on an absolute schedule. */
static void drain_paced(struct writer *w, uint64_t start)
{
	uint64_t next = start, k;
	struct timespec ts;

	while (!__atomic_load_n(&drain_stop, __ATOMIC_RELAXED)) {
		for (k = 0; k < w->run->batch; k++)
			record_ev((int)k, w->index);
		w->produced += w->run->batch;
		next += PACE_PERIOD_NS;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
}

static void *drain_thread(void *arg)
{
	struct writer *w = arg;
	uint64_t cpu, start;

	pthread_barrier_wait(&w->run->barrier);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	start = now_ns();
	if (w->run->batch)
		drain_paced(w, start);
	else
		drain_flat_out(w);
	w->elapsed = now_ns() - start;
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	w->cpu_share = w->elapsed ? (double)cpu / (double)w->elapsed : 0;
	return NULL;
}

static void print_drain(const struct bench_run *b, double mbps)
{
	uint64_t produced = 0, elapsed = 0;
	double share = 0;
	int i;

	for (i = 0; i < b->nthreads; i++) {
		produced += b->w[i].produced;
		if (b->w[i].elapsed > elapsed)
			elapsed = b->w[i].elapsed;
		share += b->w[i].cpu_share / b->nthreads;
	}
	printf("%d writer(s), %s: %" PRIu64 " events in %.3f s = %.1f M "
	       "events/s, %.1f MB/s of records; writers had %.0f%% of a CPU "
	       "each\n", b->nthreads, mbps > 0 ? "paced" : "flat out",
	       produced, elapsed / 1e9, produced / (elapsed / 1e3),
	       produced * (double)RECORD_BYTES / (elapsed / 1e3),
	       100 * share);
	printf("@ pid=%d threads=%d produced=%" PRIu64 " elapsed_ns=%" PRIu64
	       " share=%.3f\n", (int)getpid(), b->nthreads, produced,
	       elapsed, share);
}

/* Say `what`, then wait for a line on stdin (EOF: go on). */
static void hold(const char *what)
{
	char line[16];

	printf("%s\n", what);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		(void)0;
}

static int cmd_drain(int nthreads, double seconds, double mbps, bool ready,
		     bool held)
{
	static struct bench_run b;
	double per_thread;

	require_registered();
	if (ready)
		hold("ready");
	b.nthreads = nthreads;
	if (mbps > 0) {
		per_thread = mbps * 1e6 / RECORD_BYTES / nthreads;
		b.batch = (uint64_t)(per_thread * PACE_PERIOD_NS / 1e9 + 0.5);
		if (b.batch == 0)
			b.batch = 1;
	}
	run_writers(&b, drain_thread, (unsigned int)nthreads + 1);
	pthread_barrier_wait(&b.barrier);
	sleep_seconds(seconds);
	__atomic_store_n(&drain_stop, 1, __ATOMIC_RELAXED);
	join_writers(&b);
	print_drain(&b, mbps);
	if (held)
		hold("holding");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* churn */

static uint64_t churn_events;

static void *churn_thread(void *arg)
{
	uint64_t i;

	for (i = 0; i < churn_events; i++)
		record_ev((int)i, (int)(intptr_t)arg);
	return NULL;
}

/* total threads, alive at a time, events each: a thread pool's churn. */
static int cmd_churn(uint64_t total, unsigned int alive, uint64_t events)
{
	pthread_t *th = calloc(alive, sizeof(*th));
	struct rusage ru;
	uint64_t i, t0;
	double secs;

	if (!th)
		die("out of memory");
	require_registered();
	churn_events = events;
	t0 = now_ns();
	for (i = 0; i < total; i++) {
		if (i >= alive && pthread_join(th[i % alive], NULL))
			die("pthread_join failed");
		if (pthread_create(&th[i % alive], NULL, churn_thread,
				   (void *)(intptr_t)(i & 0xffff)))
			die("pthread_create failed");
	}
	for (i = total > alive ? total - alive : 0; i < total; i++)
		pthread_join(th[i % alive], NULL);
	secs = (double)(now_ns() - t0) / 1e9;
	getrusage(RUSAGE_SELF, &ru);
	printf("churn: %" PRIu64 " threads, %u alive, %" PRIu64 " events "
	       "each: %.0f thread starts/s; peak RSS %ld KiB\n", total, alive,
	       events, (double)total / secs, ru.ru_maxrss);
	printf("@ threads=%" PRIu64 " made=%" PRIu64 " starts_per_s=%.0f "
	       "maxrss_kib=%ld\n", total, total * events,
	       (double)total / secs, ru.ru_maxrss);
	free(th);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* count */

/* dir/name into path (PATH_BYTES), or die. */
static void join_path(char *path, const char *dir, const char *name)
{
	int n = snprintf(path, PATH_BYTES, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_BYTES)
		die("path too long: '%s/%s'", dir, name);
}

/* The ids of our event and of tracer:thread_exit, from process.meta. */
static void read_meta(const char *dir, struct meta_ids *ids)
{
	char path[PATH_BYTES], line[8192], name[4096];
	unsigned int id, vital, lineno;
	FILE *f;

	ids->event = ids->exit = ids->unbuffered = 0;
	join_path(path, dir, TRACER_META_FILE);
	f = fopen(path, "re");
	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "callsite %u %u %*s %u %*s %4095s", &id,
			   &vital, &lineno, name) != 4)
			continue;
		if (strcmp(name, EVENT_NAME) == 0)
			ids->event = id;
		else if (strcmp(name, EXIT_EVENT_NAME) == 0)
			ids->exit = id;
		else if (strcmp(name, UNBUFFERED_EVENT_NAME) == 0)
			ids->unbuffered = id;
	}
	fclose(f);
}

/* The lost count of a tracer:thread_exit record: tid, name, lost. */
static uint64_t exit_lost(const void *p, uint32_t len)
{
	const char *payload = p, *nul;
	uint64_t lost;

	if (len < 8 + 1 + 8)
		return 0;
	nul = memchr(payload + 8, '\0', len - 8);
	if (!nul || (size_t)(nul + 1 - payload) + 8 > len)
		return 0;
	memcpy(&lost, nul + 1, 8);
	return lost;
}

/* Records of one packet (header at pk, content bytes long). */
static void count_records(const char *pk, uint64_t content, bool vital,
			  const struct meta_ids *ids, struct counts *c)
{
	uint64_t off = PACKET_HEADER, clock = 0;	/* times unused */
	struct tracer_rb_record r;

	while (off < content) {
		if (tracer__rb_record_get(pk + off, content - off, &clock,
					  &r)) {
			c->bad++;
			return;
		}
		c->records++;
		if (!vital && r.id == ids->event)
			c->events++;
		if (vital && r.id == ids->exit) {
			c->exits++;
			c->lost_exit += exit_lost(r.payload,
						  r.payload_size);
		}
		if (vital && r.id == ids->unbuffered && r.payload_size >= 8) {
			uint64_t n;	/* events of threads without a buffer */

			memcpy(&n, r.payload, 8);
			c->lost_unbuffered += n;
		}
		off += r.size;
	}
}

static bool read_full(int fd, char *buf, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, buf, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		buf += r;
		n -= (size_t)r;
	}
	return true;
}

static void count_file(const char *path, bool vital,
		       const struct meta_ids *ids, struct counts *c)
{
	static char *buf;
	static size_t cap;
	uint64_t content, size, discarded, max_discarded = 0;
	uint32_t magic;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	c->files++;
	for (;;) {
		if (cap < PACKET_HEADER && !(buf = realloc(buf, cap = 65536)))
			die("out of memory");
		if (!read_full(fd, buf, PACKET_HEADER))
			break;
		memcpy(&magic, buf, 4);
		memcpy(&content, buf + offsetof(struct tracer_rb_packet,
						content_size), 8);
		memcpy(&size, buf + offsetof(struct tracer_rb_packet,
					     packet_size), 8);
		memcpy(&discarded, buf + offsetof(struct tracer_rb_packet,
						  events_discarded), 8);
		content /= 8;
		size /= 8;
		if (magic != CTF_MAGIC || content < PACKET_HEADER ||
		    size < content || size > MAX_PACKET) {
			c->bad++;
			break;
		}
		if (size > cap && !(buf = realloc(buf, cap = size)))
			die("out of memory");
		if (!read_full(fd, buf + PACKET_HEADER, size - PACKET_HEADER)) {
			c->bad++;
			break;
		}
		c->packets++;
		c->bytes += size;
		if (discarded > max_discarded)
			max_discarded = discarded;
		count_records(buf, content, vital, ids, c);
	}
	if (!vital)
		c->lost_discarded += max_discarded;
	close(fd);
}

static void count_process(const char *dir, struct counts *c)
{
	char path[PATH_BYTES];
	struct meta_ids ids;
	struct dirent *e;
	DIR *d;

	read_meta(dir, &ids);
	d = opendir(dir);
	if (!d)
		die("cannot open '%s': %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		bool def = strncmp(e->d_name, "default-", 8) == 0;
		bool vital = strncmp(e->d_name, "vital-", 6) == 0;

		if (!def && !vital)
			continue;
		join_path(path, dir, e->d_name);
		count_file(path, vital, &ids, c);
	}
	closedir(d);
}

static bool is_process_dir(const char *dir)
{
	char path[PATH_BYTES];

	join_path(path, dir, TRACER_META_FILE);
	return access(path, F_OK) == 0;
}

static int cmd_count(const char *dir)
{
	struct counts c = { 0 };
	char path[PATH_BYTES];
	struct dirent *e;
	DIR *d;

	if (is_process_dir(dir)) {
		count_process(dir, &c);
	} else {
		d = opendir(dir);
		if (!d)
			die("cannot open '%s': %s", dir, strerror(errno));
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			join_path(path, dir, e->d_name);
			if (is_process_dir(path))
				count_process(path, &c);
		}
		closedir(d);
	}
	printf("%" PRIu64 " files, %" PRIu64 " packets, %" PRIu64 " bytes; %"
	       PRIu64 " records, %" PRIu64 " of them " EVENT_NAME "; %" PRIu64
	       " thread exits reporting %" PRIu64 " lost%s\n", c.files,
	       c.packets, c.bytes, c.records, c.events, c.exits, c.lost_exit,
	       c.bad ? "; CORRUPT PACKETS" : "");
	printf("@ files=%" PRIu64 " packets=%" PRIu64 " bytes=%" PRIu64
	       " records=%" PRIu64 " events=%" PRIu64 " exits=%" PRIu64
	       " lost_exit=%" PRIu64 " lost_discarded=%" PRIu64
	       " lost_unbuffered=%" PRIu64 " bad=%" PRIu64 "\n", c.files,
	       c.packets, c.bytes, c.records, c.events, c.exits, c.lost_exit,
	       c.lost_discarded, c.lost_unbuffered, c.bad);
	return c.bad ? 1 : 0;
}

/* ---------------------------------------------------------------------- */

static uint64_t opt_arg(int argc, char **argv, int i, const char *what,
			uint64_t def, uint64_t min, uint64_t max)
{
	return i < argc ? parse_num(what, argv[i], min, max) : def;
}

static int drain_main(int argc, char **argv)
{
	bool held = false, ready = false;
	double mbps = 0;
	int nthreads;

	for (; argc > 2; argc--)
		if (strcmp(argv[argc - 1], "--hold") == 0)
			held = true;
		else if (strcmp(argv[argc - 1], "--ready") == 0)
			ready = true;
		else
			break;
	if (argc < 4 || argc > 5) {
		usage(stderr);
		return 2;
	}
	nthreads = (int)parse_num("THREADS", argv[2], 1, MAX_WRITERS);
	if (argc == 5)
		mbps = (double)parse_num("MBPS", argv[4], 1, 100000);
	return cmd_drain(nthreads, parse_seconds(argv[3]), mbps, ready,
			 held);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "floor") == 0 && argc <= 4)
		return cmd_floor(opt_arg(argc, argv, 2, "EVENTS",
					 DEFAULT_EVENTS, 1, MAX_EVENTS),
				 (unsigned int)opt_arg(argc, argv, 3, "RUNS",
					 DEFAULT_RUNS, 1, MAX_RUNS));
	if (strcmp(cmd, "record") == 0 && argc >= 3 && argc <= 5)
		return cmd_record((int)parse_num("THREADS", argv[2], 1,
						 MAX_WRITERS),
				  opt_arg(argc, argv, 3, "EVENTS",
					  DEFAULT_EVENTS, 1, MAX_EVENTS),
				  (unsigned int)opt_arg(argc, argv, 4, "RUNS",
					  DEFAULT_RUNS, 1, MAX_RUNS));
	if (strcmp(cmd, "churn") == 0 && argc == 5)
		return cmd_churn(parse_num("TOTAL", argv[2], 1, 10000000),
				 (unsigned int)parse_num("ALIVE", argv[3], 1,
							 1024),
				 parse_num("EVENTS", argv[4], 0, 1000000));
	if (strcmp(cmd, "idle") == 0 && argc <= 4)
		return cmd_idle(opt_arg(argc, argv, 2, "EVENTS",
					DEFAULT_IDLE_EVENTS, 1, MAX_EVENTS),
				(unsigned int)opt_arg(argc, argv, 3, "RUNS",
					DEFAULT_RUNS, 1, MAX_RUNS));
	if (strcmp(cmd, "disabled") == 0 && argc <= 4)
		return cmd_disabled(opt_arg(argc, argv, 2, "EVENTS",
					    DEFAULT_IDLE_EVENTS, 1, MAX_EVENTS),
				    (unsigned int)opt_arg(argc, argv, 3, "RUNS",
					    DEFAULT_RUNS, 1, MAX_RUNS));
	if (strcmp(cmd, "filter-record") == 0 && argc <= 4)
		return cmd_filter_record(opt_arg(argc, argv, 2, "EVENTS",
					 DEFAULT_EVENTS, 1, MAX_EVENTS),
					 (unsigned int)opt_arg(argc, argv, 3,
					 "RUNS", DEFAULT_RUNS, 1, MAX_RUNS));
	if (strcmp(cmd, "first-event") == 0 && argc <= 4)
		return cmd_first((unsigned int)opt_arg(argc, argv, 2,
				 "THREADS", DEFAULT_FIRST_THREADS, 2,
				 MAX_FIRST_THREADS),
				 (unsigned int)opt_arg(argc, argv, 3, "FILL",
				 DEFAULT_FILL_THREADS, 0, 1000));
	if (strcmp(cmd, "drain") == 0)
		return drain_main(argc, argv);
	if (strcmp(cmd, "count") == 0 && argc == 3)
		return cmd_count(argv[2]);
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
