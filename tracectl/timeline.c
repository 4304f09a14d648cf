/*
 * timeline.c - `tracectl timeline`: the events of a session as one
 * self-contained HTML page (tracectl/timeline.html: inline CSS and
 * JavaScript, nothing fetched), one lane per thread of each process image
 * (export.h) on a shared time axis, drawn on a canvas.
 *
 * The page's data is written as the merge hands out the items, into two
 * <script type="application/json"> blocks where timeline.html has the line
 * <!--TIMELINE-DATA-->:
 *
 *   tl-events  an array of records, times in ns from the first item:
 *                [0, LANE, T, NAME, MSG, FLAGS]   an instant
 *                [1, LANE, T, NAME, MSG, DUR, DEPTH, END_MSG, FLAGS]
 *                                                 a slice (written when
 *                                                 it closes)
 *                [2, LANE, T, SINCE, COUNT, VITAL] lost events (SINCE
 *                                                 null: unknown)
 *              NAME indexes "names"; FLAGS are export.h's TRACER_SLICE_*.
 *   tl-meta    what is known at the end: t0 (first item, CLOCK_MONOTONIC
 *              as t0s seconds and t0ns nanoseconds), span, items, limit,
 *              truncated, lanes [[PID, TID, PROCESS, THREAD|null, FORMER,
 *              PROC], ...] in order of first appearance (THREAD the
 *              thread's last name, FORMER the names it had before, oldest
 *              first: a thread renamed; PROC its process image, an index
 *              of procs), procs [[PID, PROCESS, DIR, IMAGE], ...] (the
 *              process images in order of first appearance: DIR the last
 *              part of the process directory, IMAGE the rank among the
 *              images of the pid, export.h), names.
 *
 * Strings escape '<', so that no "</script>" can end a block early.
 * Messages are cut at TIMELINE_MSG_MAX bytes; at most max_items items are
 * embedded (--max-events), with a notice in the page and on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "fdnames.h"
#include "hash_index.h"
#include "trace_args.h"
#include "tracectl/timeline_page.h"

#define TIMELINE_MSG_MAX	1024
#define TIMELINE_MAX_ITEMS	2000000
#define DATA_MARK		"<!--TIMELINE-DATA-->\n"

/* An event or slice name. */
struct tl_name {
	const char *s;
	size_t len;
};

struct timeline {
	FILE *f;
	uint64_t t0;			/* the first item's time */
	uint64_t items;			/* embedded */
	bool first;			/* no record written yet */
	bool nomem;
	struct tl_name *names;		/* by index */
	size_t nnames, names_cap;
	uint32_t *hash;			/* name index + 1; 0: free */
	size_t hash_size;
};

/* ----------------------------------------------------------------------
 * Names.
 */

static size_t name_hash(const char *s, size_t len, size_t size)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h & (size - 1);
}

static size_t name_home(const void *ctx, size_t i, size_t size)
{
	const struct timeline *t = ctx;

	return name_hash(t->names[i].s, t->names[i].len, size);
}

static int names_rehash(struct timeline *t)
{
	return tracer__index_grow(&t->hash, &t->hash_size, 256, t->nnames,
				  name_home, t);
}

/* Add a name at hash slot h. */
static uint32_t names_add(struct timeline *t, size_t h, const char *s,
			  size_t len)
{
	size_t cap = t->names_cap ? t->names_cap * 2 : 64;
	struct tl_name *n = t->names;

	if (t->nnames == t->names_cap) {
		n = reallocarray(t->names, cap, sizeof(*n));
		if (!n) {
			t->nomem = true;
			return 0;
		}
		t->names = n;
		t->names_cap = cap;
	}
	n[t->nnames].s = s;		/* call-site names live as long as */
	n[t->nnames].len = len;		/* the merge */
	t->hash[h] = (uint32_t)++t->nnames;
	return (uint32_t)(t->nnames - 1);
}

/* The index of a name (0 when out of memory: t->nomem). */
static uint32_t name_index(struct timeline *t, const char *s, size_t len)
{
	const struct tl_name *n;
	size_t h;

	if ((t->nnames + 1) * 2 > t->hash_size && names_rehash(t)) {
		t->nomem = true;
		return 0;
	}
	h = name_hash(s, len, t->hash_size);
	while (t->hash[h]) {
		n = &t->names[t->hash[h] - 1];
		if (n->len == len && !memcmp(n->s, s, len))
			return t->hash[h] - 1;
		h = (h + 1) & (t->hash_size - 1);
	}
	return names_add(t, h, s, len);
}

/* ----------------------------------------------------------------------
 * Records.
 */

/* A string of the page's data. */
static void put_str(FILE *f, const char *s, size_t len)
{
	if (len > TIMELINE_MSG_MAX)
		tracer__json_text(f, s, TIMELINE_MSG_MAX,
				  TRACER_JSON_HTML | TRACER_JSON_CUT);
	else
		tracer__json_text(f, s, len, TRACER_JSON_HTML);
}

/* ,N */
static void put_num(FILE *f, uint64_t v)
{
	putc_unlocked(',', f);
	tracer__put_u64(f, v);
}

/* "[KIND,LANE,T" */
static void rec_head(struct timeline *t, int kind,
		     const struct tracer_lane *l, uint64_t ts)
{
	fputs_unlocked(t->first ? "\n[" : ",\n[", t->f);
	t->first = false;
	putc_unlocked('0' + kind, t->f);
	put_num(t->f, l->index);
	put_num(t->f, ts - t->t0);
}

/* ,NAME (its index) */
static void rec_name(struct timeline *t, const char *s, size_t len)
{
	put_num(t->f, name_index(t, s, len));
}

static void tl_instant(void *ctx, const struct tracer_lane *l,
		       const struct tracer_item *it, unsigned flags)
{
	struct timeline *t = ctx;

	rec_head(t, 0, l, it->timestamp);
	rec_name(t, it->name, strlen(it->name));
	putc_unlocked(',', t->f);
	put_str(t->f, it->msg, it->msg_len);
	put_num(t->f, flags);
	putc_unlocked(']', t->f);
}

static void tl_end(void *ctx, const struct tracer_lane *l,
		   const struct tracer_open *o, size_t depth,
		   const struct tracer_item *it, uint64_t ts, unsigned flags)
{
	struct timeline *t = ctx;

	rec_head(t, 1, l, o->ts);
	rec_name(t, o->label, o->label_len);
	putc_unlocked(',', t->f);
	put_str(t->f, o->msg ? o->msg : "", o->msg_len);
	put_num(t->f, ts - o->ts);
	put_num(t->f, depth);
	putc_unlocked(',', t->f);
	put_str(t->f, it ? it->msg : "", it ? it->msg_len : 0);
	put_num(t->f, flags);
	putc_unlocked(']', t->f);
}

static void tl_lost(void *ctx, const struct tracer_lane *l,
		    const struct tracer_item *it)
{
	struct timeline *t = ctx;

	rec_head(t, 2, l, it->timestamp);
	if (!it->lost_since) {
		fputs_unlocked(",null", t->f);
	} else if (it->lost_since >= t->t0) {
		put_num(t->f, it->lost_since - t->t0);
	} else {
		fputs_unlocked(",-", t->f);
		tracer__put_u64(t->f, t->t0 - it->lost_since);
	}
	put_num(t->f, it->lost);
	put_num(t->f, (uint64_t)it->vital);
	putc_unlocked(']', t->f);
}

static const struct tracer_slice_ops timeline_ops = {
	.instant = tl_instant,
	.end = tl_end,
	.lost = tl_lost,
};

/* ----------------------------------------------------------------------
 * The page.
 */

/* Write the lines of the page from *line up to the data mark (skipped) or
 * the end. */
static void page_part(FILE *f, size_t *line)
{
	for (; timeline_page[*line]; (*line)++) {
		if (!strcmp(timeline_page[*line], DATA_MARK)) {
			(*line)++;
			return;
		}
		fputs_unlocked(timeline_page[*line], f);
	}
}

static void put_key(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, ",\"%s\":", key);
	tracer__put_u64(f, v);
}

/* A JSON string for the page, or null. */
static void put_text(FILE *f, const char *s)
{
	if (s)
		tracer__json_text(f, s, strlen(s), TRACER_JSON_HTML);
	else
		fputs("null", f);
}

/* "lanes":[[PID,TID,"PROCESS","THREAD"|null,["FORMER",...],PROC],...] */
static void put_lanes(FILE *f, const struct tracer_slicer *s)
{
	const struct tracer_lane *l;
	size_t i, j;

	fputs(",\n\"lanes\":[", f);
	for (i = 0; i < s->nlanes; i++) {
		l = &s->lanes[i];
		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",", i ? ",\n" : "\n",
			l->pid, l->tid);
		put_text(f, l->proc->meta.name);
		putc(',', f);
		put_text(f, l->thread_name);
		fputs(",[", f);
		for (j = 0; j < l->nformer; j++) {
			if (j)
				putc(',', f);
			put_text(f, l->former[j]);
		}
		fprintf(f, "],%" PRIu32 "]", l->proc_index);
	}
	fputs("]", f);
}

/* The last part of a directory's path. */
static const char *dir_base(const char *dir)
{
	const char *slash = strrchr(dir, '/');

	return slash && slash[1] ? slash + 1 : dir;
}

/* "procs":[[PID,"PROCESS","DIR",IMAGE],...] */
static void put_procs(FILE *f, const struct tracer_slicer *s)
{
	const struct tracer_image *im;
	size_t i;

	fputs(",\n\"procs\":[", f);
	for (i = 0; i < s->nimages; i++) {
		im = &s->images[i];
		fprintf(f, "%s[%" PRIu32 ",", i ? ",\n" : "\n", im->pid);
		put_text(f, im->proc->meta.name);
		putc(',', f);
		put_text(f, dir_base(im->proc->dir));
		fprintf(f, ",%" PRIu32 "]", im->image);
	}
	fputs("]", f);
}

static void put_names(FILE *f, const struct timeline *t)
{
	size_t i;

	fputs(",\n\"names\":[", f);
	for (i = 0; i < t->nnames; i++) {
		fputs(i ? ",\n" : "\n", f);
		tracer__json_text(f, t->names[i].s, t->names[i].len,
				  TRACER_JSON_HTML);
	}
	fputs("]", f);
}

static void put_meta(FILE *f, const struct timeline *t,
		     const struct tracer_slicer *s, const char *dir,
		     uint64_t limit, bool truncated)
{
	fputs("<script type=\"application/json\" id=\"tl-meta\">"
	      "{\"version\":1,\"source\":", f);
	tracer__json_text(f, dir, strlen(dir), TRACER_JSON_HTML);
	put_key(f, "t0s", t->t0 / 1000000000);
	put_key(f, "t0ns", t->t0 % 1000000000);
	put_key(f, "span", t->items ? s->last_ts - t->t0 : 0);
	put_key(f, "items", t->items);
	put_key(f, "limit", limit);
	fprintf(f, ",\"truncated\":%s,\"msgMax\":%d",
		truncated ? "true" : "false", TIMELINE_MSG_MAX);
	put_lanes(f, s);
	put_procs(f, s);
	put_names(f, t);
	fputs("}</script>\n", f);
}

/* The items through the slicer, at most limit (0: all). Returns 0, 1 (more
 * items than the limit) or -ENOMEM. */
static int timeline_items(struct timeline *t, struct tracer_slicer *s,
			  struct tracer_merge *m, struct tracer_out *out,
			  uint64_t limit, struct tracer_fdnames *fdn)
{
	struct tracer_item it;
	int ret = 0;

	while (!ret && !t->nomem && !tracer__out_failed(out) &&
	       tracer__merge_next(m, &it) == 1) {
		if (limit && t->items == limit)
			return 1;
		if (!t->items)
			t->t0 = it.timestamp;
		t->items++;
		if (fdn)
			tracer__fdnames_item(fdn, &it);
		ret = tracer__slicer_item(s, &it);
	}
	return t->nomem ? -ENOMEM : ret;
}

/* Write the page of an open merge to out. Returns whether it was cut. */
static bool timeline_write(struct timeline *t, struct tracer_merge *m,
			   struct tracer_out *out, const char *dir,
			   uint64_t limit, struct tracer_syms *syms,
			   struct tracer_fdnames *fdn)
{
	struct tracer_slicer s;
	size_t line = 0;
	int ret;

	tracer__slicer_init(&s, &timeline_ops, t, TIMELINE_MSG_MAX, syms);
	page_part(out->f, &line);
	fputs("<script type=\"application/json\" id=\"tl-events\">[",
	      out->f);
	ret = timeline_items(t, &s, m, out, limit, fdn);
	if (ret >= 0)
		tracer__slicer_finish(&s, ret == 0 ? m : NULL);
	else
		tracer__merge_error(m, "out of memory");
	fputs("\n]</script>\n", out->f);
	put_meta(out->f, t, &s, dir, limit, ret == 1);
	page_part(out->f, &line);
	tracer__slicer_free(&s);
	return ret == 1;
}

int tracer__timeline(const char *dir, const struct tracer_merge_opts *opts,
		     const char *out_path, uint64_t max_items)
{
	struct timeline t = { .first = true };
	FILE *err = opts->err ? opts->err : stderr;
	struct tracer_syms *syms = NULL;
	struct tracer_fdnames *fdn = NULL;
	struct tracer_merge *m;
	struct tracer_out out;
	bool cut = false;
	int ret, status;

	ret = tracer__merge_open(&m, dir, opts);
	if (!ret && ((!opts->no_symbols && tracer__syms_new(&syms, m)) ||
		     (!opts->no_fd_names && tracer__fdnames_new(&fdn)))) {
		tracer__merge_close(m);
		tracer__syms_free(syms);
		ret = -ENOMEM;
	}
	if (ret == -ENOMEM)
		fprintf(err, "tracectl: out of memory\n");
	if (ret)
		return 1;
	if (syms)
		tracer__syms_attach(syms, m);
	if (fdn) {
		tracer__fdnames_attach(fdn, m);
		tracer__fdnames_set_note(fdn, syms ? tracer__syms_note : NULL,
					 syms);
	}
	if (tracer__out_open(&out, out_path, m)) {
		t.f = out.f;
		cut = timeline_write(&t, m, &out, dir, max_items, syms, fdn);
		tracer__out_close(&out, m);
	}
	if (cut)
		fprintf(err, "tracectl: warning: the trace has more than %"
			PRIu64 " events; the timeline shows the first %" PRIu64
			" (see --max-events)\n", max_items, max_items);
	status = tracer__merge_failed(m) ? 1 : 0;
	tracer__merge_close(m);
	tracer__fdnames_free(fdn);
	tracer__syms_free(syms);	/* after the names, some of which */
	free(t.names);			/* are its */
	free(t.hash);
	return status;
}

/* ----------------------------------------------------------------------
 * The command line.
 */

static const char timeline_usage[] =
	"usage: tracectl timeline DIR [-o FILE.html] [--max-events N] "
	"[--pid PID]\n"
	"                         [--tid TID] [--events PATTERNS] "
	"[--since TIME]\n"
	"                         [--until TIME] [--no-symbols] "
	"[--no-fd-names]\n";

static const char timeline_help[] =
	"\n"
	"Write the events recorded in DIR, a session directory or one of its\n"
	"process directories, as one HTML page that any browser opens without\n"
	"network access: one lane per thread, grouped by process (each\n"
	"process image apart: a pid before and after exec is two), on a\n"
	"shared time axis; begin/end pairs (as 'tracectl export' pairs them,\n"
	"and names functions) as slices, other events as marks, lost events\n"
	"as shaded bands, a legend of the colours. A slice is always drawn\n"
	"to its end, at any zoom. Wheel or +/- to zoom, drag or arrow keys\n"
	"to pan; hover for an event's time, name and message (descriptors\n"
	"named as 'tracectl view' names them).\n"
	"\n"
	"  -o, --output FILE  write to FILE (default: standard output, if\n"
	"                     it is not a terminal)\n"
	"  --max-events N     embed at most the first N events (default\n"
	"                     2000000; 0: no limit)\n"
	"  --pid PID          only this process\n"
	"  --tid TID          only this thread\n"
	"  --events PATTERNS  only these events: globs, '-' excludes, the\n"
	"                     last match wins ('hanoi:*,-hanoi:call')\n"
	"  --since TIME       from TIME: SECONDS[.FRACTION] as 'view' prints\n"
	"                     them, or +SECONDS from the first event of the\n"
	"                     whole trace, whatever --pid and --tid select\n"
	"                     (units s, ms, us, ns: '+250ms')\n"
	"  --until TIME       up to TIME (included), same forms\n"
	"  --no-symbols       addresses without their names\n"
	"  --no-fd-names      descriptors without their names\n";

struct timeline_args {
	struct tracer_trace_args a;
	const char *out_path;
	uint64_t max_items;
};

#define KEY_MAX_EVENTS	1

static const struct tracer__ctl_opt timeline_opts[] = {
	{ "max-events", KEY_MAX_EVENTS, true, 0 },
	TRACE_OUTPUT_OPT,
	{ NULL, 0, false, 0 },
};

/* --max-events or --output (ctx: t). Returns 0 or 2. */
static int timeline_arg(struct tracer_trace_args *a, void *ctx, int key,
			const char *val)
{
	struct timeline_args *t = ctx;
	char *end;

	if (key == TRACE_KEY_OUTPUT)
		return tracer__output_arg(a, val, &t->out_path);
	errno = 0;
	t->max_items = strtoull(val, &end, 10);
	if (*val < '0' || *val > '9' || *end || errno)
		return tracer__ctl_syntax_error(&a->ctl, "--max-events: '%s' "
						"is not a number of events",
						val);
	return 0;
}

/* Returns -1 to go on, or an exit status. */
static int timeline_parse(struct timeline_args *t, int argc, char **argv)
{
	int ret = tracer__trace_parse(&t->a, argc, argv, timeline_opts,
				      timeline_arg, t, timeline_usage,
				      timeline_help);

	if (ret >= 0)
		return ret;
	if ((!t->out_path || !strcmp(t->out_path, "-")) &&
	    isatty(STDOUT_FILENO))
		return tracer__ctl_syntax_error(&t->a.ctl, "not writing HTML "
						"to a terminal: give -o FILE");
	return -1;
}

int tracer__ctl_timeline(int argc, char **argv)
{
	struct timeline_args t = { .max_items = TIMELINE_MAX_ITEMS };
	int ret;

	tracer__trace_args_init(&t.a, "timeline");
	ret = timeline_parse(&t, argc, argv);
	if (ret < 0) {
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		tracer__raise_file_limit();
		ret = tracer__timeline(t.a.dir, &t.a.opts, t.out_path,
				       t.max_items);
	}
	tracer__trace_args_free(&t.a);
	return ret;
}
