/*
 * bench_record.c - cost of recording one event into a ring-buffer channel,
 * compared with the floors it cannot go below.
 *
 * Cases (each prints the median and the minimum nanoseconds per event):
 *
 *   empty call       a noinline function called through a volatile function
 *                    pointer: loop and call overhead alone.
 *   timestamp read   tracer__clock_now() (clock_gettime through the vDSO).
 *   timestamp + 32-byte store floor
 *                    a timestamp read plus the stores of a 32-byte record
 *                    (id/size, timestamp, two u64) into a private per-thread
 *                    array as large as a channel: what any tracer must do.
 *   record, 1 thread tracer__rb_reserve() + two u64 stores into the payload +
 *                    tracer__rb_commit(), into a channel (default 8 x 64 KiB
 *                    sub-buffers) while a reader thread drains it
 *                    concurrently with tracer__rb_read() into a private copy
 *                    (which also checks every packet and record).
 *   record, 2 threads
 *                    the same in two writer threads at once, each with its
 *                    own channel (own region) and its own reader thread.
 *                    A writer's cost is its own elapsed time / its events;
 *                    the row shows the mean of the two, then each one.
 *   record, flight, no reader (1 and 2 threads)
 *                    the write path alone: flight-recorder channels that
 *                    nobody reads, so no reader competes for the CPUs.
 *                    The 2-thread row shows whether writers slow each other
 *                    down (they share no cache line, so they should not).
 *
 * Placement: single-thread floors run on the first allowed CPU. With one
 * writer, the writer runs on the first CPU and the reader on the second.
 * With two writers, the writers take the first two CPUs and the readers the
 * next ones if there are any. On a 2-CPU machine the readers must share the
 * writers' CPUs: each reader runs on the *other* writer's CPU, so that the
 * copy still crosses cores and each writer's wall time includes the work of
 * one reader (copy and check of the other channel's sub-buffers). Readers
 * run SCHED_FIFO when allowed (--no-rt: never), so that they drain on time
 * instead of waiting for a writer's time slice to end, and sleep --poll-us
 * microseconds when no sub-buffer is complete (0: spin), so that they do not
 * keep pulling the writer's counter cache lines to their core.
 *
 * Method: each case runs a warm-up (up to 1M events, not reported), then -r
 * runs of -n events per writer. Timing is CLOCK_MONOTONIC around the event
 * loop only; the thread's CPU time is read too, to report the share of its
 * CPU a writer really had (below 100%: preempted, by the reader or by other
 * load on the machine). Channel regions and the floor array are allocated
 * and touched once, so no page fault happens in a timed loop. Lost records
 * are events written minus records the reader got back: dropped when the
 * buffer was full (discard mode) or overwritten (flight mode).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "rb.h"

#define PROG		"bench_record"
#include "bench.h"
#define DEFAULT_EVENTS	10000000ULL
#define DEFAULT_REPS	5u
#define DEFAULT_POLL_US	50u
#define DEFAULT_SUBBUF_KIB 64u
#define DEFAULT_SUBBUFS	8u
#define MAX_EVENTS	1000000000000ULL
#define MAX_REPS	1000u
#define MAX_POLL_US	1000000u
#define WARMUP_EVENTS	1000000ULL
#define EVENT_ID	1u
#define MAX_WRITERS	2
#define MAX_CPUS	(2 * MAX_WRITERS)	/* CPUs we place threads on */
#define NO_CPU		(-1)
#define LOW_SHARE	0.95	/* warn below this share of a CPU */

struct options {
	uint64_t events;
	unsigned int reps;
	unsigned int poll_us;
	enum tracer_rb_mode mode;
	uint64_t subbuf_size;		/* bytes */
	uint64_t subbuf_count;
	int rt;				/* try a SCHED_FIFO reader */
};

/* One channel with its writer and reader state. */
struct channel {
	void *region;
	uint64_t size;
	/* written by the writer thread */
	struct tracer_rb_writer w tracer_cacheline_aligned;
	double ns, share;
	int done;			/* flushed: release/acquire */
	/* written by the reader thread */
	struct tracer_rb_reader r tracer_cacheline_aligned;
	uint64_t records_read;
	void *copy;			/* private copy of a sub-buffer */
	int error;
};

/* One run of one case. */
struct sample {
	double ns[MAX_WRITERS];		/* per thread: wall ns / event */
	double share[MAX_WRITERS];	/* per thread: CPU time / wall time */
	uint64_t lost;
};

/* One case over all runs. */
struct result {
	double median, min;		/* of per-run means over threads */
	double thread_median[MAX_WRITERS];
	double share;			/* median per-run mean CPU share */
	uint64_t lost, produced;
};

struct bench {
	struct options opt;
	cpu_set_t allowed;		/* the process's CPUs at start */
	int cpu[MAX_CPUS];		/* first allowed CPUs, or NO_CPU */
	int ncpu;
	int rt;				/* the reader runs SCHED_FIFO */
	int nwriters;			/* of the record case being run */
	int no_reader;			/* write path alone: flight, no reader */
	pthread_barrier_t start;
	void *floor_buf;
	uint64_t floor_mask;		/* records in floor_buf - 1 */
};

typedef int (*run_fn)(struct bench *b, uint64_t n, struct sample *s);

static struct channel channels[MAX_WRITERS];
static volatile uint64_t sink;

/* ---------------------------------------------------------------------- */
/* Small helpers */

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#else
	tracer__barrier();
#endif
}

/* ---------------------------------------------------------------------- */
/* Command line */

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-n EVENTS] [-r REPS] [--mode discard|flight] [--poll-us US]\n"
"       [--subbuf-kib KIB] [--subbufs N] [--no-rt]\n"
"Measure the cost of recording an event (ns/event, median and minimum).\n"
"  -n EVENTS        events per run and writer thread (default %llu)\n"
"  -r REPS          measured runs per case (default %u)\n"
"  --mode MODE      channel mode: discard (default) or flight\n"
"  --poll-us US     reader sleep when nothing is readable, 0 = spin "
"(default %u)\n"
"  --subbuf-kib KIB sub-buffer size, a power of two (default %u)\n"
"  --subbufs N      sub-buffers per channel, a power of two (default %u)\n"
"  --no-rt          never run the reader SCHED_FIFO\n"
"  -h, --help       show this help\n",
		DEFAULT_EVENTS, DEFAULT_REPS, DEFAULT_POLL_US,
		DEFAULT_SUBBUF_KIB, DEFAULT_SUBBUFS);
}

static void bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2),
							   noreturn));

static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (try -h)\n", stderr);
	exit(2);
}

static uint64_t parse_num(const char *opt, const char *arg, uint64_t min,
			  uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || v < min || v > max)
		bad_usage("%s: '%s' is not an integer from %" PRIu64 " to %"
			  PRIu64, opt, arg, min, max);
	return v;
}

static enum tracer_rb_mode parse_mode(const char *arg)
{
	if (strcmp(arg, "discard") == 0)
		return TRACER_RB_DISCARD;
	if (strcmp(arg, "flight") == 0)
		return TRACER_RB_FLIGHT;
	bad_usage("--mode: '%s' is neither 'discard' nor 'flight'", arg);
}

/* getopt_long() returned '?' or ':' for the option in or before `arg`. */
static void bad_option(const char *arg, int c)
{
	char name[3] = { '-', (char)optopt, 0 };
	const char *what = c == ':' ? "missing argument to option" :
			   "unknown option";

	if (strncmp(arg, "--", 2) == 0 || optopt == 0)
		bad_usage("%s '%s'", c == ':' ? what :
			  "unknown option or bad use of", arg);
	bad_usage("%s '%s'", what, name);
}

static void check_geometry(const struct options *o)
{
	struct tracer_rb_geometry geo;
	const char *why = "";

	if (tracer__rb_geometry(&geo, o->subbuf_size, o->subbuf_count, &why))
		bad_usage("channel of %" PRIu64 " x %" PRIu64 " KiB: %s",
			  o->subbuf_count, o->subbuf_size / 1024, why);
}

/* Apply option c; returns 0 if c is not an option. */
static int set_option(struct options *o, int c, const char *arg)
{
	switch (c) {
	case 'n':
		o->events = parse_num("-n", arg, 1, MAX_EVENTS);
		return 1;
	case 'r':
		o->reps = (unsigned int)parse_num("-r", arg, 1, MAX_REPS);
		return 1;
	case 'm':
		o->mode = parse_mode(arg);
		return 1;
	case 'p':
		o->poll_us = (unsigned int)parse_num("--poll-us", arg, 0,
						     MAX_POLL_US);
		return 1;
	case 's':
		o->subbuf_size = 1024 * parse_num("--subbuf-kib", arg, 1,
						  1024 * 1024);
		return 1;
	case 'c':
		o->subbuf_count = parse_num("--subbufs", arg, 1, 65536);
		return 1;
	case 'R':
		o->rt = 0;
		return 1;
	}
	return 0;
}

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "poll-us", required_argument, NULL, 'p' },
		{ "subbuf-kib", required_argument, NULL, 's' },
		{ "subbufs", required_argument, NULL, 'c' },
		{ "no-rt", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:r:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (!set_option(o, c, optarg))
			bad_option(argv[optind - 1], c);
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	check_geometry(o);
}

/* ---------------------------------------------------------------------- */
/* CPU placement and threads */

static void list_cpus(struct bench *b)
{
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(b->allowed), &b->allowed))
		die("sched_getaffinity: %s", strerror(errno));
	for (i = 0; i < MAX_CPUS; i++)
		b->cpu[i] = NO_CPU;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &b->allowed))
			continue;
		if (n < MAX_CPUS)
			b->cpu[n] = i;
		n++;
	}
	b->ncpu = n;
}

/* Writer i: the i-th allowed CPU (the first if there are too few). */
static int writer_cpu(const struct bench *b, int i)
{
	return b->cpu[i] != NO_CPU ? b->cpu[i] : b->cpu[0];
}

/*
 * Reader of channel i of nwriters: a CPU of its own if there is one, else
 * the first CPU after the writers', else the next writer's CPU.
 */
static int reader_cpu(const struct bench *b, int nwriters, int i)
{
	if (b->cpu[nwriters + i] != NO_CPU)
		return b->cpu[nwriters + i];
	if (b->cpu[nwriters] != NO_CPU)
		return b->cpu[nwriters];
	return writer_cpu(b, (i + 1) % nwriters);
}

/* CPU set for one CPU, or every allowed CPU for NO_CPU. */
static void cpu_set_for(const struct bench *b, int cpu, cpu_set_t *set)
{
	if (cpu == NO_CPU) {
		*set = b->allowed;
		return;
	}
	CPU_ZERO(set);
	CPU_SET(cpu, set);
}

static void pin_self(const struct bench *b, int cpu)
{
	cpu_set_t set;
	int err;

	cpu_set_for(b, cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		die("pthread_setaffinity_np: %s", strerror(err));
}

/* May this process create SCHED_FIFO threads? Probe on this thread. */
static int can_rt(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		return 0;
	sp.sched_priority = 0;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	return 1;
}

static int try_start(const struct bench *b, pthread_t *t, int cpu, int rt,
		     void *(*fn)(void *), void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	cpu_set_for(b, cpu, &set);
	pthread_attr_init(&attr);
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err && rt) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		err = pthread_attr_setschedparam(&attr, &sp);
	}
	if (!err)
		err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

/* Start fn(arg) on cpu (NO_CPU: any allowed), SCHED_FIFO if rt and allowed. */
static void start_thread(const struct bench *b, pthread_t *t, int cpu,
			 int rt, void *(*fn)(void *), void *arg)
{
	int err = try_start(b, t, cpu, rt, fn, arg);

	if (err == EPERM && rt)
		err = try_start(b, t, cpu, 0, fn, arg);
	if (err)
		die("pthread_create: %s", strerror(err));
}

/* ---------------------------------------------------------------------- */
/* Floors */

__attribute__((noinline)) static void empty_call(uint64_t i)
{
	(void)i;
	__asm__ __volatile__("");
}

static void (*volatile empty_fn)(uint64_t) = empty_call;

static int run_empty(struct bench *b, uint64_t n, struct sample *s)
{
	struct stopwatch sw;
	uint64_t i;

	(void)b;
	sw_start(&sw);
	for (i = 0; i < n; i++)
		empty_fn(i);
	s->ns[0] = sw_stop(&sw, n, &s->share[0]);
	return 0;
}

static int run_clock(struct bench *b, uint64_t n, struct sample *s)
{
	struct stopwatch sw;
	uint64_t i, sum = 0;

	(void)b;
	sw_start(&sw);
	for (i = 0; i < n; i++)
		sum += tracer__clock_now();
	s->ns[0] = sw_stop(&sw, n, &s->share[0]);
	sink = sum;
	return 0;
}

/* A record of the floor: struct floor_record (bench.h). */
static int run_floor(struct bench *b, uint64_t n, struct sample *s)
{
	struct floor_record *buf = b->floor_buf;
	struct stopwatch sw;
	uint64_t i, pos = 0;

	sw_start(&sw);
	for (i = 0; i < n; i++) {
		struct floor_record *r = &buf[pos];

		r->timestamp = tracer__clock_now();
		r->id = EVENT_ID;
		r->size = sizeof(*r);
		r->arg[0] = i;
		r->arg[1] = n - i;
		pos = (pos + 1) & b->floor_mask;
	}
	s->ns[0] = sw_stop(&sw, n, &s->share[0]);
	/* The stores are observable: keep them. */
	__asm__ __volatile__("" : : "r"(buf) : "memory");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Channels */

static void channel_alloc(struct channel *ch, const struct options *o)
{
	struct tracer_rb_geometry geo;

	tracer__rb_geometry(&geo, o->subbuf_size, o->subbuf_count, NULL);
	ch->size = geo.region_size;
	ch->region = alloc_touched(ch->size);
	ch->copy = alloc_touched(o->subbuf_size);
}

static void channel_free(struct channel *ch)
{
	free(ch->region);
	free(ch->copy);
}

/* Fresh channel state for one run; the memory stays mapped and touched. */
static void channel_reset(struct channel *ch, uint32_t id,
			  const struct options *o, enum tracer_rb_mode mode)
{
	struct tracer_rb_config cfg = { .subbuf_size = o->subbuf_size,
		.subbuf_count = o->subbuf_count, .mode = mode,
		.stream_id = 0, .stream_instance_id = id, .start_count = 0 };
	const char *why = "";

	if (tracer__rb_init(ch->region, ch->size, &cfg, &why) ||
	    tracer__rb_writer_attach(&ch->w, ch->region, ch->size, id, &why) ||
	    tracer__rb_reader_attach(&ch->r, ch->region, ch->size, &why))
		die("cannot set up a channel: %s", why);
	ch->ns = 0;
	ch->share = 0;
	ch->done = 0;
	ch->records_read = 0;
	ch->error = 0;
}

/* ---------------------------------------------------------------------- */
/* Reader thread */

/* Read every complete sub-buffer of ch. Returns how many were taken. */
static unsigned int drain(struct channel *ch, uint64_t size)
{
	struct tracer_rb_packet_info info;
	unsigned int got = 0;
	int ret;

	for (;;) {
		ret = tracer__rb_read(&ch->r, ch->copy, size, &info);
		if (ret == -EAGAIN)
			return got;
		got++;
		if (ret == -ESTALE)
			continue;	/* flight: overwritten while copied */
		if (ret) {
			fprintf(stderr, PROG ": reader: %s (%s)\n",
				strerror(-ret), ch->r.error);
			ch->error = 1;
			return got;
		}
		ch->records_read += info.records;
	}
}

static void reader_idle(const struct bench *b)
{
	struct timespec ts = { 0, (long)b->opt.poll_us * 1000L };

	if (b->opt.poll_us == 0)
		cpu_relax();
	else
		nanosleep(&ts, NULL);
}

struct reader_arg {
	struct bench *b;
	struct channel *ch;
};

static void *reader_main(void *p)
{
	const struct reader_arg *a = p;
	struct channel *ch = a->ch;
	unsigned int got;
	int done;

	/* Wake up on time: the default 50 us timer slack is too coarse. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_barrier_wait(&a->b->start);
	do {
		/* Seen done (after its flush): one empty drain ends it. */
		done = tracer__load_acquire(&ch->done);
		got = drain(ch, a->b->opt.subbuf_size);
		if (!got && !done)
			reader_idle(a->b);
	} while (!ch->error && (got || !done));
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Writer threads */

/* The measured loop: n records of event EVENT_ID with 2 x u64 payload. */
__attribute__((noinline)) static void write_events(struct tracer_rb_writer *w,
						   uint64_t n)
{
	struct tracer_rb_ctx ctx;
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t *arg;

		if (tracer_unlikely(tracer__rb_reserve(w, &ctx, EVENT_ID,
						       2 * sizeof(uint64_t))))
			continue;	/* lost: counted by the channel */
		arg = ctx.payload;
		arg[0] = i;
		arg[1] = n - i;
		tracer__rb_commit(w, &ctx);
	}
}

struct writer_arg {
	struct bench *b;
	struct channel *ch;
	uint64_t n;
};

static void *writer_main(void *p)
{
	struct writer_arg *a = p;
	struct channel *ch = a->ch;
	struct stopwatch sw;

	pthread_barrier_wait(&a->b->start);
	sw_start(&sw);
	write_events(&ch->w, a->n);
	ch->ns = sw_stop(&sw, a->n, &ch->share);
	tracer__rb_flush(&ch->w);
	tracer__store_release(&ch->done, 1);
	return NULL;
}

/* Collect a run's results from the channels; nonzero if the reader failed. */
static int collect(struct bench *b, uint64_t n, struct sample *s)
{
	int i, err = 0;

	s->lost = 0;
	for (i = 0; i < b->nwriters; i++) {
		struct channel *ch = &channels[i];

		s->ns[i] = ch->ns;
		s->share[i] = ch->share;
		s->lost += b->no_reader ? tracer__rb_lost(&ch->r) :
			   n - ch->records_read;
		err |= ch->error;
		tracer__rb_reader_detach(&ch->r);
	}
	return err;
}

static int run_writers(struct bench *b, uint64_t n, struct sample *s)
{
	struct writer_arg warg[MAX_WRITERS];
	struct reader_arg rarg[MAX_WRITERS];
	pthread_t wt[MAX_WRITERS], rt[MAX_WRITERS];
	int i, nw = b->nwriters, readers = !b->no_reader;

	for (i = 0; i < nw; i++)
		channel_reset(&channels[i], (uint32_t)i + 1, &b->opt,
			      readers ? b->opt.mode : TRACER_RB_FLIGHT);
	pthread_barrier_init(&b->start, NULL,
			     (unsigned int)((1 + readers) * nw));
	for (i = 0; i < nw; i++) {
		rarg[i] = (struct reader_arg){ b, &channels[i] };
		if (readers)
			start_thread(b, &rt[i], reader_cpu(b, nw, i), b->rt,
				     reader_main, &rarg[i]);
		warg[i] = (struct writer_arg){ b, &channels[i], n };
		start_thread(b, &wt[i], writer_cpu(b, i), 0, writer_main,
			     &warg[i]);
	}
	for (i = 0; i < nw; i++) {
		pthread_join(wt[i], NULL);
		if (readers)
			pthread_join(rt[i], NULL);
	}
	pthread_barrier_destroy(&b->start);
	return collect(b, n, s);
}

static int run_record1(struct bench *b, uint64_t n, struct sample *s)
{
	b->nwriters = 1;
	return run_writers(b, n, s);
}

static int run_record2(struct bench *b, uint64_t n, struct sample *s)
{
	b->nwriters = 2;
	return run_writers(b, n, s);
}

/* The write path alone: flight mode, nobody reads, nothing is lost. */
static int run_alone1(struct bench *b, uint64_t n, struct sample *s)
{
	b->nwriters = 1;
	b->no_reader = 1;
	return run_writers(b, n, s);
}

static int run_alone2(struct bench *b, uint64_t n, struct sample *s)
{
	b->nwriters = 2;
	b->no_reader = 1;
	return run_writers(b, n, s);
}

/* ---------------------------------------------------------------------- */
/* Harness */

static double mean(const double *v, int n)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += v[i];
	return sum / n;
}

/*
 * Warm up, then run `reps` times. v holds, by blocks of reps values: the
 * per-run mean ns, the per-run mean CPU share, then each thread's ns.
 */
static void measure(struct bench *b, run_fn run, int threads,
		    struct result *res)
{
	unsigned int reps = b->opt.reps, r;
	uint64_t n = b->opt.events;
	double *v = calloc(reps * (MAX_WRITERS + 2u), sizeof(*v));
	struct sample s;
	int i;

	if (!v)
		die("out of memory");
	memset(res, 0, sizeof(*res));
	if (run(b, n < WARMUP_EVENTS ? n : WARMUP_EVENTS, &s))
		die("the reader failed during the warm-up");
	for (r = 0; r < reps; r++) {
		if (run(b, n, &s))
			die("the reader failed");
		v[r] = mean(s.ns, threads);
		v[reps + r] = mean(s.share, threads);
		for (i = 0; i < threads; i++)
			v[reps * (i + 2u) + r] = s.ns[i];
		res->lost += s.lost;
	}
	res->produced = n * reps * (uint64_t)threads;
	res->median = median(v, reps);
	res->min = v[0];	/* sorted by median() */
	res->share = median(v + reps, reps);
	for (i = 0; i < threads; i++)
		res->thread_median[i] = median(v + reps * (i + 2u), reps);
	free(v);
}

/* ---------------------------------------------------------------------- */
/* Report */

static const char *mode_name(enum tracer_rb_mode mode)
{
	return mode == TRACER_RB_FLIGHT ? "flight" : "discard";
}

static void print_row(const char *name, int threads, const struct result *r,
		      const char *extra)
{
	char cell[48];

	snprintf(cell, sizeof(cell), "%.1f (%.1f)", r->median, r->min);
	printf("%-38s %-9d %s%s\n", name, threads, cell, extra);
	fflush(stdout);
}

/* Does a reader of a case with nwriters run on a writer's CPU? */
static int readers_share(const struct bench *b, int nwriters)
{
	return b->cpu[nwriters] == NO_CPU;
}

static void print_placement(const struct bench *b)
{
	printf("1 thread: writer on CPU %d, reader on CPU %d%s\n",
	       writer_cpu(b, 0), reader_cpu(b, 1, 0),
	       readers_share(b, 1) ? " (1 CPU: they share it)" : "");
	printf("2 threads: writers on CPUs %d and %d, readers on CPUs %d and "
	       "%d%s\n", writer_cpu(b, 0), writer_cpu(b, 1),
	       reader_cpu(b, 2, 0), reader_cpu(b, 2, 1),
	       readers_share(b, 2) ? " (too few CPUs: each reader shares "
	       "the other writer's CPU)" : "");
}

static void print_header(const struct bench *b)
{
	const struct options *o = &b->opt;

	printf("tracer ring buffer benchmark: %" PRIu64 " events x %u runs, "
	       "median (min) ns/event\n", o->events, o->reps);
	printf("channel: %" PRIu64 " x %" PRIu64 " KiB sub-buffers per "
	       "writer, %s mode\n", o->subbuf_count, o->subbuf_size / 1024,
	       mode_name(o->mode));
	printf("readers: tracer__rb_read() into a private copy, %s, ",
	       b->rt ? "SCHED_FIFO" : "SCHED_OTHER");
	if (o->poll_us)
		printf("sleep %u us when idle\n", o->poll_us);
	else
		printf("spin when idle\n");
	print_placement(b);
	printf("\n%-38s %-9s %s\n", "case", "threads", "ns/event");
}

/* Warn when a single-thread case did not have its CPU to itself. */
static void check_share(const char *name, const struct result *r)
{
	if (r->share < LOW_SHARE)
		fprintf(stderr, PROG ": warning: '%s' had %.0f%% of its CPU: "
			"other load inflates the result\n", name,
			100 * r->share);
}

static void run_floors(struct bench *b, struct result *floor)
{
	static const char *const names[] = { "empty call",
		"timestamp read (clock_gettime)",
		"timestamp + 32-byte store floor" };
	static const run_fn runs[] = { run_empty, run_clock, run_floor };
	struct result r;
	size_t i;

	pin_self(b, b->cpu[0]);
	for (i = 0; i < TRACER_ARRAY_SIZE(runs); i++) {
		measure(b, runs[i], 1, &r);
		print_row(names[i], 1, &r, "");
		check_share(names[i], &r);
	}
	*floor = r;	/* the last one */
}

/* Rows for the write path alone; returns the 2/1-thread ratio. */
static double run_alone(struct bench *b)
{
	static const char name[] = "record, 2 x u64 (flight, no reader)";
	struct result one, two;
	char extra[96];

	measure(b, run_alone1, 1, &one);
	print_row(name, 1, &one, "");
	measure(b, run_alone2, 2, &two);
	snprintf(extra, sizeof(extra), " per thread (%.1f, %.1f)",
		 two.thread_median[0], two.thread_median[1]);
	print_row(name, 2, &two, extra);
	b->no_reader = 0;
	return two.median / one.median;
}

static void run_records(struct bench *b, struct result *one,
			struct result *two)
{
	char name[64], extra[96];

	snprintf(name, sizeof(name), "record, 2 x u64 (%s mode)",
		 mode_name(b->opt.mode));
	measure(b, run_record1, 1, one);
	print_row(name, 1, one, "");
	measure(b, run_record2, 2, two);
	snprintf(extra, sizeof(extra), " per thread (%.1f, %.1f)",
		 two->thread_median[0], two->thread_median[1]);
	print_row(name, 2, two, extra);
	if (!readers_share(b, 1))
		check_share("record, 1 thread", one);
	if (!readers_share(b, 2))
		check_share("record, 2 threads", two);
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_summary(const struct result *floor, const struct result *one,
			  const struct result *two)
{
	printf("lost records: %" PRIu64 " of %" PRIu64 " (%.2f%%, 1 thread), "
	       "%" PRIu64 " of %" PRIu64 " (%.2f%%, 2 threads)\n", one->lost,
	       one->produced, percent(one->lost, one->produced), two->lost,
	       two->produced, percent(two->lost, two->produced));
	printf("writers' CPU share (CPU time / wall time): %.0f%% (1 thread), "
	       "%.0f%% (2 threads)\n", 100 * one->share, 100 * two->share);
	printf("ratio record / floor: %.2f\n", one->median / floor->median);
	printf("ratio 2-thread / 1-thread record (per thread): %.2f\n",
	       two->median / one->median);
}

int main(int argc, char **argv)
{
	struct bench b = { .opt = { DEFAULT_EVENTS, DEFAULT_REPS,
		DEFAULT_POLL_US, TRACER_RB_DISCARD,
		DEFAULT_SUBBUF_KIB * 1024ULL, DEFAULT_SUBBUFS, 1 } };
	struct result floor, one, two;
	double alone_ratio;
	uint64_t bufsize;
	int i;

	parse_args(argc, argv, &b.opt);
	list_cpus(&b);
	b.rt = b.opt.rt && can_rt();
	bufsize = b.opt.subbuf_size * b.opt.subbuf_count;
	b.floor_buf = alloc_touched(bufsize);
	b.floor_mask = bufsize / sizeof(struct floor_record) - 1;
	for (i = 0; i < MAX_WRITERS; i++)
		channel_alloc(&channels[i], &b.opt);
	print_header(&b);
	run_floors(&b, &floor);
	run_records(&b, &one, &two);
	alone_ratio = run_alone(&b);
	print_summary(&floor, &one, &two);
	printf("ratio 2-thread / 1-thread, write path alone (per thread): "
	       "%.2f\n", alone_ratio);
	for (i = 0; i < MAX_WRITERS; i++)
		channel_free(&channels[i]);
	free(b.floor_buf);
	return 0;
}
