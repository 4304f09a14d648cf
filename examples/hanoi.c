/*
 * hanoi.c - the Towers of Hanoi, traced through the ring buffer.
 *
 * This is the project's demo until tracerd exists. For every disk count on
 * the command line it solves the puzzle twice:
 *
 *   - hanoi_print() writes each move as a line of text to a FILE
 *     (/dev/null, or stdout with --print): classic printf instrumentation,
 *     which pays for formatting and I/O while the program runs;
 *   - hanoi_record() records every call, every recursion step and every
 *     move into a ring-buffer channel: an event id, a timestamp and the raw
 *     argument values, nothing formatted.
 *
 * Timing events bracket both runs. They go to a second, small channel so
 * that the flood of moves can never push them out of memory.
 *
 * Once all runs are done, both channels are flushed and read back the way
 * tracerd will read them: sub-buffer by sub-buffer, each packet checked
 * before it is used. Only then is any text produced: every event kind has a
 * descriptor (name, printf format, argument kinds) and a small dumper that
 * hands the decoded arguments to snprintf(). The two channels are merged by
 * timestamp into a single listing, followed by a summary.
 *
 * The events channel is a flight recorder (16 x 64 KiB): a run of up to 12
 * disks fits whole, but with more it wraps around, keeps the newest events,
 * and the reader counts how many older ones were overwritten; the summary
 * (or, with --moves, a warning on stderr) reports it. The timing channel
 * is in discard mode and sized from the number of runs, so nothing in it is
 * ever overwritten or dropped.
 *
 * `hanoi --print N` and `hanoi --moves N` print the same bytes: the first
 * from the printing run, the second from the moves read back out of the
 * ring buffer (tests/integration/test_hanoi.sh compares them).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rb.h"

#define MIN_DISKS	1
#define MAX_DISKS	20
#define MAX_ARGS	4
#define NSEC_PER_SEC	((uint64_t)1000000000)

/* High-rate events: a flight recorder, the newest events survive. */
#define EVENTS_SUBBUF_SIZE	(64ULL * 1024)
#define EVENTS_SUBBUF_COUNT	16ULL
/* Timing events: discard mode, as many sub-buffers as the runs need. */
#define TIMING_SUBBUF_SIZE	4096ULL
#define TIMING_RECORD_SIZE	(TRACER_RB_EVENT_SIZE + 2 * sizeof(int64_t))

enum post { LEFT, MIDDLE, RIGHT, POST_COUNT };

static const char *const post_names[POST_COUNT] = {
	"LEFT", "MIDDLE", "RIGHT",
};

enum phase { BEGIN_PRINT, END_PRINT, BEGIN_RECORD, END_RECORD, PHASE_COUNT };

static const char *const phase_names[PHASE_COUNT] = {
	"Begin printing", "End printing", "Begin recording", "End recording",
};

/*
 * Payload encoding: each argument is one int64_t slot. A post or a phase
 * travels as its index in the tables above, not as a pointer to the static
 * string. A pointer would work here, since this process both records and
 * dumps, but it means nothing to a reader in another address space (tracerd)
 * and could not safely be followed there; an index is range-checked against
 * its table when the record is decoded.
 */
enum arg_kind { ARG_INT, ARG_POST, ARG_PHASE };

/* A decoded argument, in the type its printf conversion expects. */
union arg {
	int i;
	const char *s;
};

typedef int (*dump_fn)(char *buf, size_t size, const union arg *a);

struct event_desc {
	uint32_t id;
	const char *name;
	const char *format;
	uint32_t nargs;
	enum arg_kind kinds[MAX_ARGS];
	dump_fn dump;
};

enum event_id { EV_CALL = 1, EV_RECURSE, EV_MOVE, EV_TIMING, EV_LIMIT };

#define FMT_CALL	"n=%d, left=%-6s, right=%-6s, middle=%-6s"
#define FMT_RECURSE	"Recurse #%d n=%d"
#define FMT_MOVE	"Move disk from %s to %s"
#define FMT_TIMING	"%s Hanoi with %d"

/*
 * One dumper per descriptor. Each passes its format as a literal, so the
 * compiler checks the conversions against the union members passed;
 * check_descriptors() checks the same conversions against the argument
 * kinds, which decide which member decode_args() fills. Together they rule
 * out mismatched variadic arguments.
 */
static int dump_call(char *buf, size_t size, const union arg *a)
{
	return snprintf(buf, size, FMT_CALL, a[0].i, a[1].s, a[2].s, a[3].s);
}

static int dump_recurse(char *buf, size_t size, const union arg *a)
{
	return snprintf(buf, size, FMT_RECURSE, a[0].i, a[1].i);
}

static int dump_move(char *buf, size_t size, const union arg *a)
{
	return snprintf(buf, size, FMT_MOVE, a[0].s, a[1].s);
}

static int dump_timing(char *buf, size_t size, const union arg *a)
{
	return snprintf(buf, size, FMT_TIMING, a[0].s, a[1].i);
}

static const struct event_desc event_table[EV_LIMIT] = {
	[EV_CALL] = { EV_CALL, "hanoi:call", FMT_CALL, 4,
		      { ARG_INT, ARG_POST, ARG_POST, ARG_POST }, dump_call },
	[EV_RECURSE] = { EV_RECURSE, "hanoi:recurse", FMT_RECURSE, 2,
			 { ARG_INT, ARG_INT }, dump_recurse },
	[EV_MOVE] = { EV_MOVE, "hanoi:move", FMT_MOVE, 2,
		      { ARG_POST, ARG_POST }, dump_move },
	[EV_TIMING] = { EV_TIMING, "hanoi:timing", FMT_TIMING, 2,
			{ ARG_PHASE, ARG_INT }, dump_timing },
};

/* A record read back from a channel, arguments still encoded. */
struct trace_rec {
	uint64_t ts;
	uint32_t id;
	int64_t arg[MAX_ARGS];
};

struct channel {
	const char *label;
	enum tracer_rb_mode mode;
	struct tracer_rb_geometry geo;
	void *region;
	struct tracer_rb_writer w;
	uint64_t written;		/* records the writer tried to write */
	struct trace_rec *recs;		/* read back by channel_read() */
	size_t nrecs, cap;
	uint64_t overwritten;		/* flight: records lost to newer ones */
	uint64_t packets_overwritten;
	uint64_t discarded;		/* records the writer had to drop */
};

enum output { OUT_DUMP, OUT_PRINT, OUT_MOVES };

/* One solve of the puzzle, and its timing events once read back. */
struct run {
	int n;
	uint64_t recorded;		/* events of its recording run */
	uint64_t ts[PHASE_COUNT];
	unsigned int seen;		/* bit per phase found in the trace */
};

struct demo {
	enum output output;
	struct run *runs;
	size_t nruns;
	FILE *out;			/* where hanoi_print() writes */
	struct channel events;
	struct channel timing;
};

/* ------------------------------------------------------------------ */
/* Errors                                                              */

static void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void usage_error(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

static void vreport(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

static void vreport(const char *fmt, va_list ap)
{
	fputs("hanoi: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	exit(1);
}

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	exit(2);
}

/* A ring-buffer call failed: one line, with the library's explanation. */
static void rb_die(const struct channel *ch, const char *what, int err,
		   const char *why) __attribute__((noreturn));

static void rb_die(const struct channel *ch, const char *what, int err,
		   const char *why)
{
	if (why && *why)
		die("%s channel: %s: %s (%s)", ch->label, what,
		    strerror(-err), why);
	die("%s channel: %s: %s", ch->label, what, strerror(-err));
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		die("out of memory");
	p = realloc(p, n * size);
	if (!p)
		die("out of memory");
	return p;
}

/* ------------------------------------------------------------------ */
/* Descriptor self-check                                               */

/* Conversion character of the next argument in *fmt, 0 at the end. */
static char next_conversion(const char **fmt)
{
	const char *p = *fmt;

	while ((p = strchr(p, '%')) != NULL) {
		p += 1 + strspn(p + 1, "-+ #0123456789.");
		if (*p == '%') {
			p++;
			continue;
		}
		*fmt = *p ? p + 1 : p;
		return *p ? *p : '?';
	}
	return 0;
}

static int check_descriptor(const struct event_desc *d, uint32_t id)
{
	const char *fmt = d->format;
	uint32_t i;

	if (d->id != id || !d->name || !fmt || !d->dump ||
	    d->nargs > MAX_ARGS)
		return -1;
	for (i = 0; i < d->nargs; i++) {
		char want = d->kinds[i] == ARG_INT ? 'd' : 's';

		if (next_conversion(&fmt) != want)
			return -1;
	}
	return next_conversion(&fmt) == 0 ? 0 : -1;
}

static void check_descriptors(void)
{
	uint32_t id;

	for (id = EV_CALL; id < EV_LIMIT; id++)
		if (check_descriptor(&event_table[id], id))
			die("internal error: descriptor %" PRIu32 " does not "
			    "match its format", id);
}

/* ------------------------------------------------------------------ */
/* Channels and the write side                                         */

static void channel_open(struct channel *ch, const char *label,
			 enum tracer_rb_mode mode, uint64_t subbuf_count,
			 uint64_t subbuf_size, uint32_t stream_id)
{
	struct tracer_rb_config cfg = {
		.subbuf_size = subbuf_size, .subbuf_count = subbuf_count,
		.mode = mode, .stream_id = stream_id,
	};
	const char *why = NULL;
	int ret;

	ch->label = label;
	ch->mode = mode;
	ret = tracer__rb_geometry(&ch->geo, subbuf_size, subbuf_count, &why);
	if (ret)
		rb_die(ch, "geometry", ret, why);
	/* region_size is a multiple of 4096: valid for aligned_alloc(). */
	ch->region = aligned_alloc(4096, ch->geo.region_size);
	if (!ch->region)
		die("%s channel: out of memory", label);
	/* Fault the pages in now rather than in the first timed run. */
	memset(ch->region, 0, ch->geo.region_size);
	ret = tracer__rb_init(ch->region, ch->geo.region_size, &cfg, &why);
	if (ret)
		rb_die(ch, "init", ret, why);
	ret = tracer__rb_writer_attach(&ch->w, ch->region, ch->geo.region_size,
				       (uint32_t)syscall(SYS_gettid), &why);
	if (ret)
		rb_die(ch, "writer attach", ret, why);
}

/* Smallest power-of-two count of sub-buffers holding every timing event. */
static uint64_t timing_subbuf_count(size_t nruns)
{
	uint64_t per_subbuf = (TIMING_SUBBUF_SIZE - TRACER_RB_PACKET_SIZE) /
			      TIMING_RECORD_SIZE;
	uint64_t need = ((uint64_t)nruns * PHASE_COUNT + per_subbuf - 1) /
			per_subbuf;
	uint64_t count = 2;

	while (count < need)
		count <<= 1;
	return count;
}

/* Record event id with its nargs encoded arguments. */
static void record(struct channel *ch, enum event_id id, const int64_t *args,
		   uint32_t nargs)
{
	struct tracer_rb_ctx ctx;
	int64_t *payload;
	uint32_t i;
	int ret;

	if (nargs != event_table[id].nargs)
		die("internal error: %s takes %" PRIu32 " arguments",
		    event_table[id].name, event_table[id].nargs);
	ch->written++;
	ret = tracer__rb_reserve(&ch->w, &ctx, id,
				 nargs * (uint32_t)sizeof(int64_t));
	if (ret == -ENOBUFS)
		return;		/* dropped, and counted in the channel's lost */
	if (ret)
		rb_die(ch, "reserve", ret, NULL);
	payload = ctx.payload;
	for (i = 0; i < nargs; i++)
		payload[i] = args[i];
	tracer__rb_commit(&ch->w, &ctx);
}

static void record2(struct channel *ch, enum event_id id, int64_t a,
		    int64_t b)
{
	const int64_t args[2] = { a, b };

	record(ch, id, args, 2);
}

static void record_call(struct channel *ch, int n, enum post left,
			enum post right, enum post middle)
{
	const int64_t args[4] = { n, left, right, middle };

	record(ch, EV_CALL, args, 4);
}

/* ------------------------------------------------------------------ */
/* The two solvers: move n disks from `left` to `right` using `middle`. */

static void hanoi_print(FILE *out, int n, enum post left, enum post right,
			enum post middle)
{
	if (n == 1) {
		/* Errors are sticky: ferror() is checked after the run. */
		fprintf(out, FMT_MOVE "\n", post_names[left],
			post_names[right]);
		return;
	}
	hanoi_print(out, n - 1, left, middle, right);
	hanoi_print(out, 1, left, right, middle);
	hanoi_print(out, n - 1, middle, right, left);
}

static void hanoi_record(struct channel *ch, int n, enum post left,
			 enum post right, enum post middle)
{
	record_call(ch, n, left, right, middle);
	if (n == 1) {
		record2(ch, EV_MOVE, left, right);
		return;
	}
	record2(ch, EV_RECURSE, 1, n);
	hanoi_record(ch, n - 1, left, middle, right);
	record2(ch, EV_RECURSE, 2, n);
	hanoi_record(ch, 1, left, right, middle);
	record2(ch, EV_RECURSE, 3, n);
	hanoi_record(ch, n - 1, middle, right, left);
}

static void solve(struct demo *d, struct run *run)
{
	uint64_t before = d->events.written;

	record2(&d->timing, EV_TIMING, BEGIN_PRINT, run->n);
	hanoi_print(d->out, run->n, LEFT, RIGHT, MIDDLE);
	if (fflush(d->out) != 0 || ferror(d->out))
		die("writing the moves: %s", strerror(errno));
	record2(&d->timing, EV_TIMING, END_PRINT, run->n);

	record2(&d->timing, EV_TIMING, BEGIN_RECORD, run->n);
	hanoi_record(&d->events, run->n, LEFT, RIGHT, MIDDLE);
	record2(&d->timing, EV_TIMING, END_RECORD, run->n);
	run->recorded = d->events.written - before;
}

/* ------------------------------------------------------------------ */
/* The read side                                                       */

static const struct event_desc *lookup(uint32_t id)
{
	return id >= EV_CALL && id < EV_LIMIT ? &event_table[id] : NULL;
}

static void push_record(struct channel *ch, const struct tracer_rb_record *r)
{
	const struct event_desc *d = lookup(r->id);
	struct trace_rec *t;

	if (!d)
		die("%s channel: record with unknown event id %" PRIu32,
		    ch->label, r->id);
	if (r->payload_size < d->nargs * sizeof(int64_t))
		die("%s channel: %s record with a %" PRIu32 "-byte payload",
		    ch->label, d->name, r->payload_size);
	if (ch->nrecs == ch->cap) {
		ch->cap = ch->cap ? 2 * ch->cap : 1024;
		ch->recs = xrealloc(ch->recs, ch->cap, sizeof(*ch->recs));
	}
	t = &ch->recs[ch->nrecs++];
	memset(t, 0, sizeof(*t));
	t->ts = r->timestamp;
	t->id = r->id;
	memcpy(t->arg, r->payload, d->nargs * sizeof(int64_t));
}

/* Take every complete sub-buffer of ch, oldest first; keep its records. */
static void channel_read(struct channel *ch)
{
	struct tracer_rb_reader r;
	struct tracer_rb_packet_info info;
	struct tracer_rb_record rec;
	const char *why = NULL;
	void *copy;
	int ret;

	ret = tracer__rb_reader_attach(&r, ch->region, ch->geo.region_size,
				       &why);
	if (ret)
		rb_die(ch, "reader attach", ret, why);
	copy = xrealloc(NULL, 1, ch->geo.subbuf_size);
	while ((ret = tracer__rb_read(&r, copy, ch->geo.subbuf_size,
				      &info)) != -EAGAIN) {
		uint64_t off = 0;

		if (ret == -ESTALE)
			continue;	/* overwritten while copied: counted */
		if (ret)
			rb_die(ch, "read", ret, r.error);
		while (tracer__rb_packet_next(copy, info.content_bytes, &off,
					      &rec))
			push_record(ch, &rec);
	}
	ch->overwritten = r.records_overwritten;
	ch->packets_overwritten = r.packets_overwritten;
	ch->discarded = tracer__rb_lost(&r);
	free(copy);
	tracer__rb_reader_detach(&r);
}

/* Every record written is dumped, overwritten or discarded: check it. */
static void channel_check(const struct channel *ch)
{
	uint64_t seen = ch->nrecs + ch->overwritten + ch->discarded;

	if (seen != ch->written)
		die("%s channel: %" PRIu64 " records written but %zu read, "
		    "%" PRIu64 " overwritten and %" PRIu64 " discarded",
		    ch->label, ch->written, ch->nrecs, ch->overwritten,
		    ch->discarded);
}

static void flush_and_read(struct demo *d)
{
	int ret;

	ret = tracer__rb_flush(&d->events.w);
	if (ret)
		rb_die(&d->events, "flush", ret, NULL);
	ret = tracer__rb_flush(&d->timing.w);
	if (ret)
		rb_die(&d->timing, "flush", ret, NULL);
	channel_read(&d->events);
	channel_read(&d->timing);
	channel_check(&d->events);
	channel_check(&d->timing);
}

/* ------------------------------------------------------------------ */
/* Formatting, at dump time only                                       */

static const char *table_string(const char *const *table, size_t n,
				int64_t v)
{
	return v >= 0 && (uint64_t)v < n ? table[v] : NULL;
}

static int decode_arg(enum arg_kind kind, int64_t v, union arg *a)
{
	switch (kind) {
	case ARG_INT:
		if (v < INT_MIN || v > INT_MAX)
			return -1;
		a->i = (int)v;
		return 0;
	case ARG_POST:
		a->s = table_string(post_names, POST_COUNT, v);
		return a->s ? 0 : -1;
	case ARG_PHASE:
		a->s = table_string(phase_names, PHASE_COUNT, v);
		return a->s ? 0 : -1;
	}
	return -1;
}

static void format_record(const struct trace_rec *t, char *buf, size_t size)
{
	const struct event_desc *d = &event_table[t->id];
	union arg a[MAX_ARGS];
	uint32_t i;

	for (i = 0; i < d->nargs; i++)
		if (decode_arg(d->kinds[i], t->arg[i], &a[i]))
			die("%s record: argument %" PRIu32 " (%" PRId64 ") "
			    "out of range", d->name, i + 1, t->arg[i]);
	if (d->dump(buf, size, a) < 0)
		die("%s record: formatting failed", d->name);
}

/* On equal timestamps a Begin timing event sorts first, an End one last. */
static int timing_first(const struct trace_rec *ev, const struct trace_rec *tm)
{
	if (tm->ts != ev->ts)
		return tm->ts < ev->ts;
	return tm->arg[0] == BEGIN_PRINT || tm->arg[0] == BEGIN_RECORD;
}

/* Next record of the two channels merged by timestamp, NULL at the end. */
static const struct trace_rec *next_merged(const struct demo *d, size_t *ie,
					   size_t *it)
{
	const struct trace_rec *ev = NULL, *tm = NULL;

	if (*ie < d->events.nrecs)
		ev = &d->events.recs[*ie];
	if (*it < d->timing.nrecs)
		tm = &d->timing.recs[*it];
	if (tm && (!ev || timing_first(ev, tm))) {
		(*it)++;
		return tm;
	}
	if (ev)
		(*ie)++;
	return ev;
}

/* One line per event, time relative to the first one. */
static void print_dump(const struct demo *d)
{
	const struct trace_rec *t;
	size_t ie = 0, it = 0;
	uint64_t t0 = 0, rel;
	char msg[256];

	while ((t = next_merged(d, &ie, &it)) != NULL) {
		if (ie + it == 1)
			t0 = t->ts;
		rel = t->ts - t0;
		format_record(t, msg, sizeof(msg));
		printf("[%5" PRIu64 ".%09" PRIu64 "] %s: %s\n",
		       rel / NSEC_PER_SEC, rel % NSEC_PER_SEC,
		       event_table[t->id].name, msg);
	}
}

/* Only the moves, exactly as hanoi_print() writes them. */
static void print_moves(const struct demo *d)
{
	char msg[256];
	size_t i;

	for (i = 0; i < d->events.nrecs; i++) {
		if (d->events.recs[i].id != EV_MOVE)
			continue;
		format_record(&d->events.recs[i], msg, sizeof(msg));
		printf("%s\n", msg);
	}
	if (d->events.overwritten)
		fprintf(stderr, "hanoi: warning: the events channel wrapped: "
			"%" PRIu64 " older events were overwritten, only the "
			"newest moves are shown\n", d->events.overwritten);
}

/* ------------------------------------------------------------------ */
/* Summary                                                             */

/*
 * Timing records come out in the order they were written, four per run;
 * discard mode could only lose a suffix of them, never the middle.
 */
static void match_timing(struct demo *d)
{
	size_t i;

	for (i = 0; i < d->timing.nrecs; i++) {
		const struct trace_rec *t = &d->timing.recs[i];
		struct run *run;

		if (i / PHASE_COUNT >= d->nruns)
			die("timing channel: more records than runs");
		run = &d->runs[i / PHASE_COUNT];
		if (t->id != EV_TIMING ||
		    t->arg[0] != (int64_t)(i % PHASE_COUNT) ||
		    t->arg[1] != run->n)
			die("timing channel: record %zu is not the expected "
			    "timing event", i);
		run->ts[i % PHASE_COUNT] = t->ts;
		run->seen |= 1u << (i % PHASE_COUNT);
	}
}

static void print_run(const struct run *run)
{
	uint64_t moves = (1ULL << run->n) - 1, tp, tr;

	if (run->seen != (1u << PHASE_COUNT) - 1) {
		printf("  n=%d: timing events missing\n", run->n);
		return;
	}
	tp = run->ts[END_PRINT] - run->ts[BEGIN_PRINT];
	tr = run->ts[END_RECORD] - run->ts[BEGIN_RECORD];
	printf("  n=%d: printing %" PRIu64 " move%s: %" PRIu64 " ns "
	       "(%.1f ns/move); recording %" PRIu64 " events: %" PRIu64
	       " ns (%.1f ns/event)\n", run->n, moves,
	       moves == 1 ? "" : "s", tp,
	       (double)tp / (double)moves, run->recorded, tr,
	       (double)tr / (double)run->recorded);
}

static void print_channel(const struct channel *ch)
{
	printf("  %s channel (%s, %" PRIu64 " x %" PRIu64 " KiB): %" PRIu64
	       " recorded, %zu dumped, %" PRIu64 " overwritten, %" PRIu64
	       " discarded\n", ch->label,
	       ch->mode == TRACER_RB_FLIGHT ? "flight" : "discard",
	       ch->geo.subbuf_count, ch->geo.subbuf_size / 1024, ch->written,
	       ch->nrecs, ch->overwritten, ch->discarded);
}

static void print_summary(struct demo *d)
{
	size_t i;

	match_timing(d);
	printf("\nsummary:\n");
	print_channel(&d->events);
	print_channel(&d->timing);
	if (d->events.overwritten)
		printf("  note: the events channel wrapped; flight mode kept "
		       "the newest %zu events\n  and overwrote the %" PRIu64
		       " before them (%" PRIu64 " sub-buffers)\n",
		       d->events.nrecs, d->events.overwritten,
		       d->events.packets_overwritten);
	for (i = 0; i < d->nruns; i++)
		print_run(&d->runs[i]);
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */

static void usage(void)
{
	printf("Usage: hanoi [--print | --moves] N [N...]\n"
	       "Solve the Towers of Hanoi for N disks (%d to %d), once "
	       "printing the moves\nand once recording them into a ring "
	       "buffer, then dump the recorded events.\n\n"
	       "  --print     print only the moves of the printing run\n"
	       "  --moves     print only the moves read back from the ring "
	       "buffer\n"
	       "  -h, --help  show this help and exit\n\n"
	       "Without an option: every recorded event, merged by time, "
	       "then a summary.\n", MIN_DISKS, MAX_DISKS);
}

static int parse_disks(const char *arg)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || n < MIN_DISKS || n > MAX_DISKS)
		usage_error("invalid disk count '%s' (expected %d to %d)",
			    arg, MIN_DISKS, MAX_DISKS);
	return (int)n;
}

static void set_output(struct demo *d, enum output out)
{
	if (d->output != OUT_DUMP && d->output != out)
		usage_error("--print and --moves cannot be combined");
	d->output = out;
}

/* Returns 1 once "--" ends the options. */
static int parse_option(struct demo *d, const char *arg)
{
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
		usage();
		exit(0);
	}
	if (!strcmp(arg, "--print"))
		set_output(d, OUT_PRINT);
	else if (!strcmp(arg, "--moves"))
		set_output(d, OUT_MOVES);
	else if (!strcmp(arg, "--"))
		return 1;
	else
		usage_error("unknown option '%s' (try --help)", arg);
	return 0;
}

static void parse_args(struct demo *d, int argc, char **argv)
{
	int i, options_done = 0;

	d->runs = xrealloc(NULL, (size_t)argc, sizeof(*d->runs));
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!options_done && arg[0] == '-' && arg[1] &&
		    !isdigit((unsigned char)arg[1])) {
			options_done = parse_option(d, arg);
			continue;
		}
		memset(&d->runs[d->nruns], 0, sizeof(d->runs[0]));
		d->runs[d->nruns++].n = parse_disks(arg);
	}
	if (!d->nruns)
		usage_error("missing disk count (try --help)");
}

/* ------------------------------------------------------------------ */

static void demo_close(struct demo *d)
{
	if (d->out != stdout && fclose(d->out) != 0)
		die("/dev/null: %s", strerror(errno));
	free(d->events.recs);
	free(d->timing.recs);
	free(d->events.region);
	free(d->timing.region);
	free(d->runs);
}

int main(int argc, char **argv)
{
	struct demo d;
	size_t i;

	memset(&d, 0, sizeof(d));
	parse_args(&d, argc, argv);
	check_descriptors();
	channel_open(&d.events, "events", TRACER_RB_FLIGHT,
		     EVENTS_SUBBUF_COUNT, EVENTS_SUBBUF_SIZE, 1);
	channel_open(&d.timing, "timing", TRACER_RB_DISCARD,
		     timing_subbuf_count(d.nruns), TIMING_SUBBUF_SIZE, 2);
	d.out = d.output == OUT_PRINT ? stdout : fopen("/dev/null", "w");
	if (!d.out)
		die("/dev/null: %s", strerror(errno));
	for (i = 0; i < d.nruns; i++)
		solve(&d, &d.runs[i]);
	flush_and_read(&d);
	if (d.output == OUT_DUMP) {
		print_dump(&d);
		print_summary(&d);
	} else if (d.output == OUT_MOVES) {
		print_moves(&d);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		die("writing to stdout: %s", strerror(errno));
	demo_close(&d);
	return 0;
}
