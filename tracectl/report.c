/*
 * report.c - `tracectl report`: a summary of a trace, per event, call,
 * function, mutex, thread and process (report.h).
 *
 * The items of the merge (trace_merge.h) go through the slicer of
 * export.h, which pairs begins and ends per thread on a bounded stack
 * (TRACER_SLICE_MAX_DEPTH); this file keeps, beside each thread's stack,
 * a frame per open slice (the time of the functions it called, its
 * enclosing function), and one aggregate per key in open-addressing
 * tables (hash_index.h). Durations go into fixed-size histograms for p99:
 * nothing grows with the number of events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "hash_index.h"
#include "json.h"
#include "report.h"
#include "symbols.h"
#include "trace_args.h"
#include "trace_merge.h"

static const char usage[] =
	"usage: tracectl report DIR [--sort KEY] [--top N] [--json]\n"
	"                       [--pid PID] [--tid TID] [--events PATTERNS]\n"
	"                       [--since TIME] [--until TIME] [--no-symbols]\n";

static const char help[] =
	"\n"
	"Summarise the events recorded in DIR, a session directory or one of\n"
	"its process directories, in tables like strace -c: per event (count,\n"
	"errors), per call (begin/end and entry/exit pairs, and events with a\n"
	"*_ns duration: count, errors, total, avg, min, max, p99), per\n"
	"function (func:entry/exit: calls, inclusive and exclusive time), per\n"
	"mutex (pthread:mutex_wait), per thread and per process, and the\n"
	"events lost. p99 is within 3.2% of the exact value. It reads the\n"
	"trace once, in constant memory.\n"
	"\n"
	"  --sort KEY         order of the rows: total (the default), count,\n"
	"                     avg, max, p99, errors, name\n"
	"  --top N            at most N rows per table\n"
	"  --json             one JSON document instead of the tables\n"
	"  --pid PID          only this process\n"
	"  --tid TID          only this thread\n"
	"  --events PATTERNS  only these events: globs, '-' excludes, the\n"
	"                     last match wins ('libc:*,-libc:close')\n"
	"  --since TIME       from TIME: SECONDS[.FRACTION] as 'view' prints\n"
	"                     them, or +SECONDS from the first event of the\n"
	"                     whole trace, whatever --pid and --tid select\n"
	"                     (units s, ms, us, ns: '+250ms')\n"
	"  --until TIME       up to TIME (included), same forms\n"
	"  --no-symbols       functions and mutexes as bare addresses\n";

/* ----------------------------------------------------------------------
 * Durations: count, sum, min, max, and a log-linear histogram.
 *
 * A value below HIST_SUB has a bucket of its own; above, each power of two
 * [2^e, 2^(e+1)) is cut in HIST_SUB buckets of width 2^(e-4). A bucket is
 * read as its middle: off by at most half a width, 2^(e-5), of a value of
 * at least 2^e, so by at most 1/32 of it.
 */
#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_BUCKETS	(HIST_SUB + (64 - HIST_SUB_BITS) * HIST_SUB)

struct stats {
	uint64_t n;			/* durations */
	uint64_t sum, min, max;
	uint64_t *hist;			/* HIST_BUCKETS; NULL until the
					   first duration */
};

static unsigned hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB +
	       (unsigned)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* The middle of bucket b. */
static uint64_t hist_value(unsigned b)
{
	unsigned e, sub;
	uint64_t width;

	if (b < HIST_SUB)
		return b;
	e = (b - HIST_SUB) / HIST_SUB + HIST_SUB_BITS;
	sub = (b - HIST_SUB) % HIST_SUB;
	width = UINT64_C(1) << (e - HIST_SUB_BITS);
	return ((uint64_t)(HIST_SUB + sub) << (e - HIST_SUB_BITS)) + width / 2;
}

/* Add a duration. Returns 0 or -ENOMEM (nothing added). */
static int stats_add(struct stats *s, uint64_t v)
{
	if (!s->hist) {
		s->hist = calloc(HIST_BUCKETS, sizeof(*s->hist));
		if (!s->hist)
			return -ENOMEM;
	}
	s->hist[hist_bucket(v)]++;
	if (!s->n || v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->n++;
	s->sum += v;
	return 0;
}

static uint64_t stats_avg(const struct stats *s)
{
	return s->n ? s->sum / s->n : 0;
}

/* The nearest-rank 99th percentile, from the histogram. */
static uint64_t stats_p99(const struct stats *s)
{
	uint64_t rank, seen = 0, v;
	unsigned b;

	if (!s->n)
		return 0;
	rank = (s->n * 99 + 99) / 100;	/* ceil(0.99 n) */
	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += s->hist[b];
		if (seen >= rank)
			break;
	}
	v = hist_value(b < HIST_BUCKETS ? b : HIST_BUCKETS - 1);
	return v < s->min ? s->min : v > s->max ? s->max : v;
}

/* ----------------------------------------------------------------------
 * Tables of aggregates, one row per key.
 */

enum section {
	SEC_EVENTS,
	SEC_CALLS,
	SEC_FUNCS,
	SEC_MUTEXES,
	SEC_THREADS,
	SEC_PROCS,
	NSEC,
};

/* An open slice of a thread, beside the slicer's. */
struct frame {
	uint64_t child;			/* time of the functions it called */
	uint32_t func;			/* its function's row + 1; 0: none */
	int32_t encl;			/* depth of the enclosing function's
					   frame; -1: none */
	bool outer;			/* its function is not running
					   below it on the thread */
};

struct row {
	char *name;			/* events, calls, functions */
	char *sym;			/* a mutex's symbol, or NULL */
	uint64_t key;			/* a mutex's address */
	const struct tracer_merge_proc *proc;	/* threads, processes */
	uint32_t pid, tid;
	size_t hash;
	uint64_t count;			/* events; calls; waits */
	uint64_t errors;
	struct stats st;
	uint64_t incl, excl;		/* functions */
	uint64_t lost, calls, busy;	/* threads, processes */
	uint64_t first, last;		/* their first and last event */
	uint64_t nthreads;		/* processes */
	const char *thread_name;	/* threads (NULL: none known) */
	struct frame *frames;		/* threads: the open slices */
	size_t frames_cap;
};

struct table {
	struct row *v;
	size_t n, cap;
	uint32_t *slots;		/* hash_index.h */
	size_t nslots;
};

static size_t hash_key(const char *name, size_t len, uint64_t key,
		       uint64_t pid)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
	h ^= key * 0x9e3779b97f4a7c15ULL;
	h ^= pid * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ h >> 29);
}

static size_t row_home(const void *ctx, size_t i, size_t size)
{
	return ((const struct table *)ctx)->v[i].hash & (size - 1);
}

/* A new row at the end of t. NULL: out of memory. */
static struct row *table_append(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16;
	struct row *v;

	if (t->n == t->cap) {
		v = reallocarray(t->v, cap, sizeof(*v));
		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	return &t->v[t->n++];
}

/*
 * The row of the key (name[0..len) -- NULL for none --, key, pid), made
 * when missing (name copied). Returns its index, or -ENOMEM.
 */
static long table_get(struct table *t, const char *name, size_t len,
		      uint64_t key, uint32_t pid)
{
	size_t h = hash_key(name, name ? len : 0, key, pid), s;
	struct row *r;

	if ((t->n + 1) * 2 > t->nslots &&
	    tracer__index_grow(&t->slots, &t->nslots, 64, t->n, row_home, t))
		return -ENOMEM;
	for (s = h & (t->nslots - 1); t->slots[s];
	     s = (s + 1) & (t->nslots - 1)) {
		r = &t->v[t->slots[s] - 1];
		if (r->hash == h && r->key == key && r->pid == pid &&
		    (name ? r->name && !strncmp(r->name, name, len) &&
		     !r->name[len] : !r->name))
			return (long)(t->slots[s] - 1);
	}
	r = table_append(t);
	if (!r)
		return -ENOMEM;
	if (name && !(r->name = strndup(name, len))) {
		t->n--;
		return -ENOMEM;
	}
	r->hash = h;
	r->key = key;
	r->pid = pid;
	t->slots[s] = (uint32_t)t->n;
	return (long)(t->n - 1);
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].sym);
		free(t->v[i].st.hist);
		free(t->v[i].frames);
	}
	free(t->v);
	free(t->slots);
}

/* ----------------------------------------------------------------------
 * The report.
 */

enum sort_key {
	SORT_TOTAL,
	SORT_COUNT,
	SORT_AVG,
	SORT_MAX,
	SORT_P99,
	SORT_ERRORS,
	SORT_NAME,
};

static const char *const sort_names[] = {
	"total", "count", "avg", "max", "p99", "errors", "name", NULL,
};

struct report {
	struct tracer_merge *m;
	struct tracer_syms *syms;
	struct table t[NSEC];
	long last_proc;			/* cache: a row of SEC_PROCS */
	uint64_t events, errors, lost[2];
	uint64_t unfinished;		/* slices cut or never closed */
	uint64_t unmatched;		/* ends without a begin */
	uint64_t first, last;
	bool nomem;
};

/* Where word (wlen bytes) starts a word of msg: the byte after it. */
static const char *after_word(const char *msg, size_t len, const char *word,
			      size_t wlen)
{
	const char *p = msg, *end = msg + len, *hit;

	while ((hit = memmem(p, (size_t)(end - p), word, wlen))) {
		if (hit == msg || hit[-1] == ' ')
			return hit + wlen;
		p = hit + 1;
	}
	return NULL;
}

/*
 * Is the event an error: "errno NAME" in its message, or a pthread:*
 * event's "result N" not 0?
 */
static bool is_error(const struct tracer_item *it)
{
	const char *v = after_word(it->msg, it->msg_len, "errno ", 6);
	long n;

	if (v && *v && *v != ' ')
		return true;
	if (strncmp(it->name, "pthread:", 8))
		return false;
	v = after_word(it->msg, it->msg_len, "result ", 7);
	if (!v)
		return false;
	n = strtol(v, NULL, 10);
	return n != 0;
}

/* The duration of a single event: the number after its first word
 * ending in "_ns" (waited_ns 81234). Returns whether it has one. */
static bool event_duration(const struct tracer_item *it, uint64_t *ns)
{
	const char *msg = it->msg, *end = msg + it->msg_len, *p = msg, *hit;
	const char *w;

	while ((hit = memmem(p, (size_t)(end - p), "_ns ", 4))) {
		p = hit + 1;
		for (w = hit; w > msg && w[-1] != ' '; w--)
			;
		if (w == hit || hit[4] < '0' || hit[4] > '9')
			continue;
		*ns = strtoull(hit + 4, NULL, 10);
		return true;
	}
	return false;
}

static void nomem(struct report *r)
{
	r->nomem = true;
}

/* The row of it's process. */
static struct row *proc_row(struct report *r, const struct tracer_item *it)
{
	struct table *t = &r->t[SEC_PROCS];
	long i = r->last_proc;

	if (i < 0 || t->v[i].key != (uintptr_t)it->proc) {
		i = table_get(t, NULL, 0, (uintptr_t)it->proc, it->pid);
		if (i < 0) {
			nomem(r);
			return NULL;
		}
		t->v[i].proc = it->proc;
		r->last_proc = i;
	}
	return &t->v[i];
}

static void seen_at(struct row *w, uint64_t ts)
{
	if (!w->first)
		w->first = ts;
	w->last = ts;
}

/* One more event of thread l. Returns whether it is an error. */
static bool count_event(struct report *r, const struct tracer_lane *l,
			const struct tracer_item *it)
{
	struct row *th = &r->t[SEC_THREADS].v[l->index], *p, *e;
	bool err = is_error(it);
	long i = table_get(&r->t[SEC_EVENTS], it->name, strlen(it->name), 0,
			   0);

	if (!r->first)
		r->first = it->timestamp;
	r->last = it->timestamp;
	r->events++;
	r->errors += err;
	th->count++;
	th->errors += err;
	seen_at(th, it->timestamp);
	p = proc_row(r, it);
	if (p) {
		p->count++;
		p->errors += err;
		seen_at(p, it->timestamp);
	}
	if (i < 0) {
		nomem(r);
		return err;
	}
	e = &r->t[SEC_EVENTS].v[i];
	e->count++;
	e->errors += err;
	return err;
}

/* A call of thread l ended after ns, depth calls deep. */
static void count_call(struct report *r, const struct tracer_lane *l,
		       const struct tracer_item *it, uint64_t ns, size_t depth)
{
	struct row *th = &r->t[SEC_THREADS].v[l->index];
	struct row *p = proc_row(r, it);

	th->calls++;
	if (p)
		p->calls++;
	if (depth)
		return;
	th->busy += ns;
	if (p)
		p->busy += ns;
}

/* A row of SEC_CALLS (or SEC_MUTEXES) takes a duration. */
static void add_timed(struct report *r, struct row *w, uint64_t ns,
		      bool err)
{
	w->count++;
	w->errors += err;
	if (stats_add(&w->st, ns))
		nomem(r);
}

static void add_call(struct report *r, const char *name, size_t len,
		     uint64_t ns, bool err)
{
	long i = table_get(&r->t[SEC_CALLS], name, len, 0, 0);

	if (i < 0)
		nomem(r);
	else
		add_timed(r, &r->t[SEC_CALLS].v[i], ns, err);
}

/* pthread:mutex_wait: the time waited on its mutex (its first value). */
static void add_mutex_wait(struct report *r, const struct tracer_item *it,
			   uint64_t ns, bool err)
{
	struct tracer__value v;
	const char *sym = NULL;
	char name[512];
	uint64_t off = 0;
	size_t pos = 0;
	long i;

	if (strcmp(it->name, "pthread:mutex_wait") || !it->cs ||
	    !it->payload || it->cs->types[0] != TRACER_ARG_POINTER ||
	    tracer__payload_next(TRACER_ARG_POINTER, it->payload,
				 it->payload_size, &pos, &v))
		return;
	if (r->syms)
		sym = tracer__syms_lookup(r->syms, it->proc, it->timestamp,
					  v.u, &off);
	if (sym && off)
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, sym, off);
	else if (sym)
		snprintf(name, sizeof(name), "%s", sym);
	i = table_get(&r->t[SEC_MUTEXES], NULL, 0, v.u, it->pid);
	if (i < 0) {
		nomem(r);
		return;
	}
	if (sym && !r->t[SEC_MUTEXES].v[i].sym &&
	    !(r->t[SEC_MUTEXES].v[i].sym = strdup(name)))
		nomem(r);
	add_timed(r, &r->t[SEC_MUTEXES].v[i], ns, err);
}

static void rp_lane(void *ctx, const struct tracer_lane *l,
		    const struct tracer_item *it)
{
	struct report *r = ctx;
	struct row *th = table_append(&r->t[SEC_THREADS]);

	(void)it;
	if (!th) {
		/* Its items must still find a row: give up. */
		nomem(r);
		return;
	}
	th->pid = l->pid;
	th->tid = l->tid;
	th->proc = l->proc;
}

static void rp_instant(void *ctx, const struct tracer_lane *l,
		       const struct tracer_item *it, unsigned flags)
{
	struct report *r = ctx;
	bool err;
	uint64_t ns;

	if (r->nomem)
		return;
	err = count_event(r, l, it);

	if (flags & TRACER_SLICE_UNMATCHED)
		r->unmatched++;
	if (flags || !event_duration(it, &ns))
		return;
	add_call(r, it->name, strlen(it->name), ns, err);
	add_mutex_wait(r, it, ns, err);
	count_call(r, l, it, ns, l->depth);
}

/* Room for the frame at depth in thread row th. */
static struct frame *frame_at(struct report *r, struct row *th, size_t depth)
{
	size_t cap = th->frames_cap ? th->frames_cap * 2 : 16;
	struct frame *f;

	while (depth >= th->frames_cap) {
		f = reallocarray(th->frames, cap, sizeof(*f));
		if (!f) {
			nomem(r);
			return NULL;
		}
		th->frames = f;
		th->frames_cap = cap;
		cap *= 2;
	}
	return &th->frames[depth];
}

/* The row of o's function; -1 if o is not a function's slice. */
static long func_row(struct report *r, const struct tracer_open *o)
{
	char addr[32];
	long i;

	if (!o->fn)
		return -1;
	if (o->label != o->name)
		i = table_get(&r->t[SEC_FUNCS], o->label, o->label_len, 0, 0);
	else
		i = table_get(&r->t[SEC_FUNCS], addr,
			      (size_t)snprintf(addr, sizeof(addr), "0x%" PRIx64,
					       o->fn), 0, 0);
	if (i < 0)
		nomem(r);
	return i;
}

static void rp_begin(void *ctx, const struct tracer_lane *l,
		     const struct tracer_open *o, const struct tracer_item *it)
{
	struct report *r = ctx;
	size_t depth = l->depth - 1;
	struct frame *f, *below;
	struct row *th;
	long fn;
	int32_t e;

	if (r->nomem)
		return;
	th = &r->t[SEC_THREADS].v[l->index];
	count_event(r, l, it);
	f = frame_at(r, th, depth);
	if (!f)
		return;
	below = depth ? &th->frames[depth - 1] : NULL;
	f->child = 0;
	f->encl = !below ? -1 : below->func ? (int32_t)(depth - 1) :
		  below->encl;
	fn = func_row(r, o);
	f->func = fn < 0 ? 0 : (uint32_t)fn + 1;
	f->outer = true;
	for (e = f->encl; f->func && e >= 0; e = th->frames[e].encl)
		if (th->frames[e].func == f->func)
			f->outer = false;
}

/* A function's call of thread th ended after ns (frame f). */
static void end_func(struct report *r, struct row *th, const struct frame *f,
		     uint64_t ns)
{
	struct row *fr = &r->t[SEC_FUNCS].v[f->func - 1];

	fr->count++;
	if (stats_add(&fr->st, ns))
		nomem(r);
	if (f->outer)
		fr->incl += ns;
	fr->excl += ns - (f->child < ns ? f->child : ns);
	if (f->encl >= 0)
		th->frames[f->encl].child += ns;
}

static void rp_end(void *ctx, const struct tracer_lane *l,
		   const struct tracer_open *o, size_t depth,
		   const struct tracer_item *it, uint64_t ts, unsigned flags)
{
	struct report *r = ctx;
	const struct frame *f = NULL;
	uint64_t ns = ts - o->ts;
	struct row *th;
	bool err;

	if (r->nomem)
		return;
	th = &r->t[SEC_THREADS].v[l->index];
	if (depth < th->frames_cap)
		f = &th->frames[depth];
	err = it ? count_event(r, l, it) : false;
	if (flags || !it) {
		r->unfinished++;
		return;
	}
	if (f && f->func)
		end_func(r, th, f, ns);
	else if (!o->fn)
		add_call(r, o->name, o->key_len - 1, ns, err);
	count_call(r, l, it, ns, depth);
}

static void rp_lost(void *ctx, const struct tracer_lane *l,
		    const struct tracer_item *it)
{
	struct report *r = ctx;
	struct row *p;

	if (r->nomem)
		return;
	p = proc_row(r, it);
	r->lost[it->vital ? 1 : 0] += it->lost;
	r->t[SEC_THREADS].v[l->index].lost += it->lost;
	if (p)
		p->lost += it->lost;
}

static const struct tracer_slice_ops report_ops = {
	.lane = rp_lane,
	.instant = rp_instant,
	.begin = rp_begin,
	.end = rp_end,
	.lost = rp_lost,
};

/* After the items: the threads' last names, each process's threads. */
static void name_threads(struct report *r, const struct tracer_slicer *s)
{
	struct table *th = &r->t[SEC_THREADS], *pt = &r->t[SEC_PROCS];
	size_t i, k;

	for (i = 0; i < th->n && i < s->nlanes; i++) {
		th->v[i].thread_name = s->lanes[i].thread_name;
		for (k = 0; k < pt->n; k++)
			if (pt->v[k].proc == th->v[i].proc)
				break;
		if (k < pt->n)
			pt->v[k].nthreads++;
	}
}

/* Read the whole merge. */
static void report_items(struct report *r)
{
	struct tracer_slicer s;
	struct tracer_item it;

	tracer__slicer_init(&s, &report_ops, r, 0, r->syms);
	while (!r->nomem && tracer__merge_next(r->m, &it) == 1)
		if (tracer__slicer_item(&s, &it))
			nomem(r);
	if (!r->nomem)
		tracer__slicer_finish(&s, r->m);
	name_threads(r, &s);
	tracer__slicer_free(&s);
}

/* ----------------------------------------------------------------------
 * Sorting.
 */

struct sorter {
	enum section sec;
	enum sort_key key;
	const struct row *v;
};

/* The number the rows of sec are sorted by for key. */
static uint64_t metric(enum section sec, enum sort_key key,
		       const struct row *w)
{
	bool timed = sec == SEC_CALLS || sec == SEC_FUNCS ||
		     sec == SEC_MUTEXES;

	if (key == SORT_ERRORS)
		return w->errors;
	if (key == SORT_COUNT || (sec == SEC_EVENTS))
		return w->count;
	if (!timed)
		return w->busy;
	switch (key) {
	case SORT_AVG:
		return stats_avg(&w->st);
	case SORT_MAX:
		return w->st.max;
	case SORT_P99:
		return stats_p99(&w->st);
	default:
		return sec == SEC_FUNCS ? w->incl : w->st.sum;
	}
}

static const char *row_name(enum section sec, const struct row *w)
{
	if (sec == SEC_THREADS)
		return w->thread_name ? w->thread_name : "";
	if (sec == SEC_PROCS)
		return w->proc->meta.name;
	if (sec == SEC_MUTEXES)
		return w->sym ? w->sym : "";
	return w->name ? w->name : "";
}

static int by_name(const struct sorter *s, const struct row *a,
		   const struct row *b)
{
	int c;

	if (s->sec == SEC_THREADS || s->sec == SEC_PROCS ||
	    s->sec == SEC_MUTEXES) {
		if (a->pid != b->pid)
			return a->pid < b->pid ? -1 : 1;
		if (a->tid != b->tid)
			return a->tid < b->tid ? -1 : 1;
	}
	c = strcmp(row_name(s->sec, a), row_name(s->sec, b));
	if (c)
		return c;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int compare(const void *pa, const void *pb, void *ctx)
{
	const struct sorter *s = ctx;
	const struct row *a = &s->v[*(const size_t *)pa];
	const struct row *b = &s->v[*(const size_t *)pb];
	uint64_t ma, mb;

	if (s->key != SORT_NAME) {
		ma = metric(s->sec, s->key, a);
		mb = metric(s->sec, s->key, b);
		if (ma != mb)
			return ma > mb ? -1 : 1;
	}
	return by_name(s, a, b);
}

/* The rows of sec in order, at most top (0: all); *n set. NULL: none or
 * no memory. */
static size_t *sorted(struct report *r, enum section sec, enum sort_key key,
		      uint64_t top, size_t *n)
{
	struct sorter s = { sec, key, r->t[sec].v };
	size_t i, *order;

	*n = r->t[sec].n;
	if (!*n)
		return NULL;
	order = calloc(*n, sizeof(*order));
	if (!order) {
		nomem(r);
		*n = 0;
		return NULL;
	}
	for (i = 0; i < *n; i++)
		order[i] = i;
	qsort_r(order, *n, sizeof(*order), compare, &s);
	if (top && *n > top)
		*n = (size_t)top;
	return order;
}

/* ----------------------------------------------------------------------
 * The tables.
 */

/* ns, readable: 850ns 12.345us 1.234ms 2.500s */
static const char *dur(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.3fms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3fs", (double)ns / 1e9);
	return buf;
}

#define DUR_SIZE	32

static void print_events(FILE *f, const struct row *w)
{
	fprintf(f, "%10" PRIu64 " %8" PRIu64 "  %s\n", w->count, w->errors,
		w->name);
}

/* total avg min max p99 of a row's durations. */
static void print_stats(FILE *f, uint64_t total, const struct stats *s)
{
	char b[5][DUR_SIZE];

	fprintf(f, " %11s %11s %11s %11s %11s", dur(b[0], DUR_SIZE, total),
		dur(b[1], DUR_SIZE, stats_avg(s)), dur(b[2], DUR_SIZE, s->min),
		dur(b[3], DUR_SIZE, s->max),
		dur(b[4], DUR_SIZE, stats_p99(s)));
}

static void print_calls(FILE *f, const struct row *w)
{
	fprintf(f, "%10" PRIu64 " %8" PRIu64, w->count, w->errors);
	print_stats(f, w->st.sum, &w->st);
	fprintf(f, "  %s\n", w->name);
}

static void print_funcs(FILE *f, const struct row *w)
{
	char b[DUR_SIZE];

	fprintf(f, "%10" PRIu64 " %11s", w->count,
		dur(b, sizeof(b), w->excl));
	print_stats(f, w->incl, &w->st);
	fprintf(f, "  %s\n", w->name);
}

static void print_mutexes(FILE *f, const struct row *w)
{
	fprintf(f, "%10" PRIu64 " %8" PRIu64, w->count, w->errors);
	print_stats(f, w->st.sum, &w->st);
	fprintf(f, " %7" PRIu32 "  0x%" PRIx64 "%s%s%s\n", w->pid, w->key,
		w->sym ? " <" : "", w->sym ? w->sym : "",
		w->sym ? ">" : "");
}

static void print_threads(FILE *f, const struct row *w)
{
	char b[DUR_SIZE];

	fprintf(f, "%7" PRIu32 " %7" PRIu32 " %10" PRIu64 " %8" PRIu64
		" %8" PRIu64 " %10" PRIu64 " %11s  %s (%s)\n", w->pid, w->tid,
		w->count, w->errors, w->lost, w->calls,
		dur(b, sizeof(b), w->busy),
		w->thread_name ? w->thread_name : "?", w->proc->meta.name);
}

static void print_procs(FILE *f, const struct row *w)
{
	char b[DUR_SIZE];

	fprintf(f, "%7" PRIu32 " %7" PRIu64 " %10" PRIu64 " %8" PRIu64
		" %8" PRIu64 " %10" PRIu64 " %11s  %s\n", w->pid, w->nthreads,
		w->count, w->errors, w->lost, w->calls,
		dur(b, sizeof(b), w->busy), w->proc->meta.name);
}

static const struct table_format {
	const char *title;
	const char *head;
	void (*row)(FILE *f, const struct row *w);
} formats[NSEC] = {
	[SEC_EVENTS] = { "Events",
		"     count   errors  event", print_events },
	[SEC_CALLS] = { "Calls (begin/end and entry/exit pairs, *_ns "
		"durations)",
		"     calls   errors       total         avg         min"
		"         max         p99  call", print_calls },
	[SEC_FUNCS] = { "Functions (total: inclusive; self: exclusive)",
		"     calls        self       total         avg         min"
		"         max         p99  function", print_funcs },
	[SEC_MUTEXES] = { "Mutex waits (pthread:mutex_wait)",
		"     waits   errors       total         avg         min"
		"         max         p99     pid  mutex", print_mutexes },
	[SEC_THREADS] = { "Threads (in calls: outermost calls)",
		"    pid     tid     events   errors     lost      calls"
		"    in calls  thread (process)", print_threads },
	[SEC_PROCS] = { "Processes (in calls: outermost calls)",
		"    pid threads     events   errors     lost      calls"
		"    in calls  process", print_procs },
};

static void print_summary(FILE *f, const struct report *r, const char *dir)
{
	char b[DUR_SIZE];

	fprintf(f, "Trace %s: %" PRIu64 " events, %zu process%s, %zu "
		"thread%s, over %s; %" PRIu64 " error%s; %" PRIu64
		" lost (default %" PRIu64 ", vital %" PRIu64 ")\n", dir,
		r->events, r->t[SEC_PROCS].n,
		r->t[SEC_PROCS].n == 1 ? "" : "es", r->t[SEC_THREADS].n,
		r->t[SEC_THREADS].n == 1 ? "" : "s",
		dur(b, sizeof(b), r->last - r->first), r->errors,
		r->errors == 1 ? "" : "s", r->lost[0] + r->lost[1], r->lost[0],
		r->lost[1]);
	if (r->unfinished || r->unmatched)
		fprintf(f, "(%" PRIu64 " call%s without an end and %" PRIu64
			" end%s without a begin are not in the calls)\n",
			r->unfinished, r->unfinished == 1 ? "" : "s",
			r->unmatched, r->unmatched == 1 ? "" : "s");
}

static void print_tables(FILE *f, struct report *r, const char *dir,
			 enum sort_key key, uint64_t top)
{
	size_t *order, n, i;
	int sec;

	print_summary(f, r, dir);
	for (sec = 0; sec < NSEC; sec++) {
		order = sorted(r, (enum section)sec, key, top, &n);
		if (!order)
			continue;
		fprintf(f, "\n%s\n%s\n", formats[sec].title, formats[sec].head);
		for (i = 0; i < n; i++)
			formats[sec].row(f, &r->t[sec].v[order[i]]);
		if (n < r->t[sec].n)
			fprintf(f, "(%zu more)\n", r->t[sec].n - n);
		free(order);
	}
}

/* ----------------------------------------------------------------------
 * JSON.
 */

static void json_stats(struct tracer__json *j, uint64_t total,
		       const struct stats *s)
{
	tracer__json_u64(j, "total_ns", total);
	tracer__json_u64(j, "avg_ns", stats_avg(s));
	tracer__json_u64(j, "min_ns", s->min);
	tracer__json_u64(j, "max_ns", s->max);
	tracer__json_u64(j, "p99_ns", stats_p99(s));
}

static void json_row(struct tracer__json *j, enum section sec,
		     const struct row *w)
{
	char addr[32];

	tracer__json_open(j, NULL, '{');
	if (sec == SEC_MUTEXES) {
		tracer__json_u64(j, "pid", w->pid);
		snprintf(addr, sizeof(addr), "0x%" PRIx64, w->key);
		tracer__json_str(j, "address", addr);
		tracer__json_str(j, "name", w->sym ? w->sym : addr);
	} else if (sec == SEC_THREADS || sec == SEC_PROCS) {
		tracer__json_u64(j, "pid", w->pid);
		if (sec == SEC_THREADS)
			tracer__json_u64(j, "tid", w->tid);
		tracer__json_str(j, "name", row_name(sec, w));
		if (sec == SEC_THREADS)
			tracer__json_str(j, "process", w->proc->meta.name);
		else
			tracer__json_u64(j, "threads", w->nthreads);
	} else {
		tracer__json_str(j, "name", w->name);
	}
	tracer__json_u64(j, sec == SEC_EVENTS ? "count" :
			 sec == SEC_THREADS || sec == SEC_PROCS ? "events" :
			 sec == SEC_MUTEXES ? "waits" : "calls", w->count);
	if (sec != SEC_FUNCS)
		tracer__json_u64(j, "errors", w->errors);
	if (sec == SEC_FUNCS) {
		tracer__json_u64(j, "inclusive_ns", w->incl);
		tracer__json_u64(j, "exclusive_ns", w->excl);
	}
	if (sec == SEC_CALLS || sec == SEC_FUNCS || sec == SEC_MUTEXES)
		json_stats(j, sec == SEC_FUNCS ? w->incl : w->st.sum, &w->st);
	if (sec == SEC_THREADS || sec == SEC_PROCS) {
		tracer__json_u64(j, "lost", w->lost);
		tracer__json_u64(j, "calls", w->calls);
		tracer__json_u64(j, "in_calls_ns", w->busy);
		tracer__json_u64(j, "first_ns", w->first);
		tracer__json_u64(j, "last_ns", w->last);
	}
	tracer__json_close(j, '}');
}

static const char *const json_keys[NSEC] = {
	"events", "calls", "functions", "mutexes", "threads", "processes",
};

static void print_json(FILE *f, struct report *r, const char *dir,
		       enum sort_key key, uint64_t top)
{
	struct tracer__json j;
	size_t *order, n, i;
	int sec;

	tracer__json_init(&j, f);
	tracer__json_open(&j, NULL, '{');
	tracer__json_str(&j, "source", dir);
	tracer__json_str(&j, "sort", sort_names[key]);
	tracer__json_u64(&j, "top", top);
	tracer__json_u64(&j, "first_ns", r->first);
	tracer__json_u64(&j, "last_ns", r->last);
	tracer__json_u64(&j, "events_total", r->events);
	tracer__json_u64(&j, "errors_total", r->errors);
	tracer__json_open(&j, "lost", '{');
	tracer__json_u64(&j, "default", r->lost[0]);
	tracer__json_u64(&j, "vital", r->lost[1]);
	tracer__json_close(&j, '}');
	tracer__json_u64(&j, "calls_without_end", r->unfinished);
	tracer__json_u64(&j, "ends_without_begin", r->unmatched);
	for (sec = 0; sec < NSEC; sec++) {
		order = sorted(r, (enum section)sec, key, top, &n);
		tracer__json_open(&j, json_keys[sec], '[');
		for (i = 0; i < n; i++)
			json_row(&j, (enum section)sec,
				 &r->t[sec].v[order[i]]);
		tracer__json_close(&j, ']');
		free(order);
	}
	tracer__json_close(&j, '}');
	fputc('\n', f);
}

/* ----------------------------------------------------------------------
 * The command.
 */

struct report_args {
	enum sort_key sort;
	uint64_t top;
	bool json;
};

/* Summarise dir to out. Returns the exit status: 0, or 1. */
static int report(const char *dir, const struct tracer_merge_opts *opts,
		  const struct report_args *ra, FILE *out)
{
	struct report r = { .last_proc = -1 };
	struct tracer_merge_opts o = *opts;
	int ret, status, sec;

	o.out = out;
	ret = tracer__merge_open(&r.m, dir, &o);
	if (!ret && !o.no_symbols && tracer__syms_new(&r.syms, r.m)) {
		tracer__merge_close(r.m);
		ret = -ENOMEM;
	}
	if (ret == -ENOMEM)
		fprintf(opts->err, "tracectl: out of memory\n");
	if (ret)
		return 1;
	report_items(&r);
	if (r.nomem)
		tracer__merge_error(r.m, "out of memory");
	else if (ra->json)
		print_json(out, &r, dir, ra->sort, ra->top);
	else
		print_tables(out, &r, dir, ra->sort, ra->top);
	if (fflush(out) != 0 || ferror(out))
		tracer__merge_error(r.m, "cannot write the report: %s",
				    strerror(errno));
	status = tracer__merge_failed(r.m) ? 1 : 0;
	tracer__merge_close(r.m);
	tracer__syms_free(r.syms);
	for (sec = 0; sec < NSEC; sec++)
		table_free(&r.t[sec]);
	return status;
}

enum { KEY_JSON = 1, KEY_SORT, KEY_TOP };

static const struct tracer__ctl_opt report_opts[] = {
	{ "json", KEY_JSON, false, 0 },
	{ "sort", KEY_SORT, true, 0 },
	{ "top", KEY_TOP, true, 0 },
	{ NULL, 0, false, 0 },
};

/* --sort KEY. Returns 0 or 2. */
static int sort_arg(struct tracer_trace_args *a, struct report_args *ra,
		    const char *val)
{
	int k;

	for (k = 0; sort_names[k] && strcmp(sort_names[k], val); k++)
		;
	if (!sort_names[k])
		return tracer__ctl_syntax_error(&a->ctl, "--sort: '%s' is not "
						"one of total, count, avg, "
						"max, p99, errors, name", val);
	ra->sort = (enum sort_key)k;
	return 0;
}

/* --sort, --top or --json (ctx: the report's arguments). Returns 0 or 2. */
static int report_arg(struct tracer_trace_args *a, void *ctx, int key,
		      const char *val)
{
	struct report_args *ra = ctx;
	char *end;

	if (key == KEY_JSON) {
		ra->json = true;
		return 0;
	}
	if (key == KEY_SORT)
		return sort_arg(a, ra, val);
	errno = 0;
	ra->top = strtoull(val, &end, 10);
	if (*val < '0' || *val > '9' || *end || errno || !ra->top ||
	    ra->top > 1000000000)
		return tracer__ctl_syntax_error(&a->ctl, "--top: '%s' is not a "
						"number of rows (1 to "
						"1000000000)", val);
	return 0;
}

int tracer__ctl_report(int argc, char **argv)
{
	struct tracer_trace_args a;
	struct report_args ra = { .sort = SORT_TOTAL };
	int ret;

	tracer__trace_args_init(&a, "report");
	ret = tracer__trace_parse(&a, argc, argv, report_opts, report_arg,
				  &ra, usage, help);
	if (ret < 0) {
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		tracer__raise_file_limit();
		ret = report(a.dir, &a.opts, &ra, stdout);
	}
	tracer__trace_args_free(&a);
	return ret;
}
