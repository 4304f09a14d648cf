/*
 * export.c - `tracectl export --format chrome`: the events of a session as
 * Chrome Trace Event Format JSON (the JSON object format), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open; and what `tracectl timeline`
 * shares with it (export.h): the output file, numbers. The slices come
 * from the slicer (slicer.c).
 *
 * The JSON is written as the merge hands out the items, one trace event a
 * line; only the per-thread stacks of open slices are kept in memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "format.h"
#include "fdnames.h"
#include "hash_index.h"
#include "trace_args.h"

/* ----------------------------------------------------------------------
 * Numbers (strings: json.c).
 */

void tracer__put_u64(FILE *f, uint64_t v)
{
	char buf[20];
	int n = sizeof(buf);

	do {
		buf[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(buf + n, 1, sizeof(buf) - (size_t)n, f);
}

/* ns as microseconds with three decimals: 1234.567 */
static void put_us(FILE *f, uint64_t ns)
{
	char frac[4] = { '.' };

	tracer__put_u64(f, ns / 1000);
	frac[1] = (char)('0' + ns / 100 % 10);
	frac[2] = (char)('0' + ns / 10 % 10);
	frac[3] = (char)('0' + ns % 10);
	fwrite_unlocked(frac, 1, sizeof(frac), f);
}

/* ----------------------------------------------------------------------
 * The output.
 */

bool tracer__out_open(struct tracer_out *o, const char *path,
		      struct tracer_merge *m)
{
	o->err = 0;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		o->name = "standard output";
	} else {
		o->f = fopen(path, "w");
		o->name = path;
	}
	if (!o->f) {
		tracer__merge_error(m, "cannot create '%s': %s", path,
				    strerror(errno));
		return false;
	}
	if (o->f != stdout)
		setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return true;
}

bool tracer__out_failed(struct tracer_out *o)
{
	if (!o->err && ferror(o->f))
		o->err = errno ? errno : EIO;
	return o->err != 0;
}

bool tracer__out_close(struct tracer_out *o, struct tracer_merge *m)
{
	errno = 0;
	if ((fflush(o->f) != 0 || ferror(o->f)) && !o->err)
		o->err = errno ? errno : EIO;
	if (o->f != stdout && fclose(o->f) != 0 && !o->err)
		o->err = errno ? errno : EIO;
	o->f = NULL;
	if (o->err)
		tracer__merge_error(m, "cannot write '%s': %s", o->name,
				    strerror(o->err));
	return o->err == 0;
}

/* ----------------------------------------------------------------------
 * The Chrome trace.
 */

struct export {
	FILE *f;
	struct tracer_merge *m;
	bool first;			/* no trace event written yet */
};

/* A pid or tid v of l's process image as exported (TRACER_IMAGE_STRIDE). */
static uint64_t image_id(const struct tracer_lane *l, uint32_t v)
{
	return v + (uint64_t)(l->image - 1) * TRACER_IMAGE_STRIDE;
}

/* Bytes of the provider in name[0..len): before the first ':'; 0: none. */
static size_t provider_len(const char *name, size_t len)
{
	const char *colon = memchr(name, ':', len);

	return colon ? (size_t)(colon - name) : 0;
}

/* The start of a trace event, up to its name and category (cat_len bytes
 * at cat; none when 0). */
static void ev_head_cat(struct export *x, char ph, uint64_t ts,
			const struct tracer_lane *l, const char *name,
			size_t name_len, const char *cat, size_t cat_len)
{
	FILE *f = x->f;

	fputs_unlocked(x->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"", f);
	x->first = false;
	putc_unlocked(ph, f);
	fputs_unlocked(ph == 'i' ? "\",\"s\":\"t\",\"ts\":" : "\",\"ts\":",
		       f);
	put_us(f, ts);
	fputs_unlocked(",\"pid\":", f);
	tracer__put_u64(f, image_id(l, l->pid));
	fputs_unlocked(",\"tid\":", f);
	tracer__put_u64(f, image_id(l, l->tid));
	fputs_unlocked(",\"name\":", f);
	tracer__json_text(f, name, name_len, 0);
	if (cat_len) {
		fputs_unlocked(",\"cat\":", f);
		tracer__json_text(f, cat, cat_len, 0);
	}
}

/* An event under its name; the category is its provider. */
static void ev_head(struct export *x, char ph, uint64_t ts,
		    const struct tracer_lane *l, const char *name,
		    size_t name_len)
{
	ev_head_cat(x, ph, ts, l, name, name_len, name,
		    provider_len(name, name_len));
}

/* A slice's event: under its label; a function's in the category of its
 * begin event's provider ("func"). */
static void ev_head_slice(struct export *x, char ph, uint64_t ts,
			  const struct tracer_lane *l,
			  const struct tracer_open *o)
{
	if (o->label == o->name)
		ev_head(x, ph, ts, l, o->label, o->label_len);
	else
		ev_head_cat(x, ph, ts, l, o->label, o->label_len, o->name,
			    provider_len(o->name, strlen(o->name)));
}

/* ,"args":{"KEY":"VALUE"}} */
static void ev_arg(struct export *x, const char *key, const char *v,
		   size_t len)
{
	fprintf(x->f, ",\"args\":{\"%s\":", key);
	tracer__json_text(x->f, v, len, 0);
	fputs_unlocked("}}", x->f);
}

/* A metadata event (process_name, thread_name) with args {"name": v}. */
static void ev_meta(struct export *x, const struct tracer_lane *l,
		    uint64_t ts, const char *what, const char *v)
{
	ev_head(x, 'M', ts, l, what, strlen(what));
	ev_arg(x, "name", v, strlen(v));
}

/* A new process image: its name; from the second image of a pid on, a
 * label with its real pid and its rank. */
static void ex_process(struct export *x, const struct tracer_lane *l,
		       uint64_t ts)
{
	char label[64];
	int n;

	ev_meta(x, l, ts, "process_name", l->proc->meta.name);
	if (l->image < 2)
		return;
	n = snprintf(label, sizeof(label), "pid %" PRIu32 ", image %" PRIu32,
		     l->pid, l->image);
	ev_head(x, 'M', ts, l, "process_labels", 14);
	ev_arg(x, "labels", label, (size_t)n);
}

/* A new thread: its name, and its process's name the first time. */
static void ex_lane(void *ctx, const struct tracer_lane *l,
		    const struct tracer_item *it)
{
	struct export *x = ctx;
	char tid_name[32];

	if (l->proc_first)
		ex_process(x, l, it->timestamp);
	snprintf(tid_name, sizeof(tid_name), "tid %" PRIu32, l->tid);
	ev_meta(x, l, it->timestamp, "thread_name",
		l->thread_name ? l->thread_name : tid_name);
}

/* A thread renamed: its new name, at the time of the rename (viewers
 * name a thread by its last thread_name). */
static void ex_rename(void *ctx, const struct tracer_lane *l, uint64_t ts)
{
	ev_meta(ctx, l, ts, "thread_name", l->thread_name);
}

static void ex_instant(void *ctx, const struct tracer_lane *l,
		       const struct tracer_item *it, unsigned flags)
{
	struct export *x = ctx;

	ev_head(x, 'i', it->timestamp, l, it->name, strlen(it->name));
	if (!flags) {
		ev_arg(x, "msg", it->msg, it->msg_len);
		return;
	}
	fputs_unlocked(",\"args\":{\"msg\":", x->f);
	tracer__json_text(x->f, it->msg, it->msg_len, 0);
	fputs_unlocked(flags & TRACER_SLICE_UNMATCHED ?
		       ",\"unmatched\":\"an end without a begin\"}}" :
		       ",\"unmatched\":\"a begin nested too deep\"}}", x->f);
}

static void ex_begin(void *ctx, const struct tracer_lane *l,
		     const struct tracer_open *o,
		     const struct tracer_item *it)
{
	struct export *x = ctx;

	ev_head_slice(x, 'B', o->ts, l, o);
	ev_arg(x, "msg", it->msg, it->msg_len);
}

static void ex_end(void *ctx, const struct tracer_lane *l,
		   const struct tracer_open *o, size_t depth,
		   const struct tracer_item *it, uint64_t ts, unsigned flags)
{
	static const char cut[] = "closed by the end of an enclosing slice";
	static const char still_open[] = "still open at the end of the trace";
	struct export *x = ctx;

	(void)depth;
	ev_head_slice(x, 'E', ts, l, o);
	if (it)
		ev_arg(x, "end_msg", it->msg, it->msg_len);
	else if (flags & TRACER_SLICE_CUT)
		ev_arg(x, "unclosed", cut, sizeof(cut) - 1);
	else
		ev_arg(x, "unclosed", still_open, sizeof(still_open) - 1);
}

static void ex_lost(void *ctx, const struct tracer_lane *l,
		    const struct tracer_item *it)
{
	struct export *x = ctx;

	ev_head(x, 'i', it->timestamp, l, it->name, strlen(it->name));
	fputs_unlocked(",\"args\":{\"lost\":", x->f);
	tracer__put_u64(x->f, it->lost);
	fputs_unlocked(it->vital ? ",\"channel\":\"vital\"" :
		       ",\"channel\":\"default\"", x->f);
	if (it->lost_since) {
		fputs_unlocked(",\"since\":", x->f);
		put_us(x->f, it->lost_since);
	}
	fputs_unlocked("}}", x->f);
}

static const struct tracer_slice_ops export_ops = {
	.lane = ex_lane,
	.instant = ex_instant,
	.begin = ex_begin,
	.end = ex_end,
	.lost = ex_lost,
	.rename = ex_rename,
};

static void write_head(FILE *f, const char *dir)
{
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":"
	      "\"tracectl export\",\"version\":\"" PACKAGE_VERSION "\","
	      "\"clock\":\"CLOCK_MONOTONIC\",\"source\":", f);
	tracer__json_text(f, dir, strlen(dir), 0);
	fputs("},\n\"traceEvents\":[", f);
}

/* The items, through the slicer, until the end or a write error. */
static int export_items(struct export *x, struct tracer_out *out,
			struct tracer_syms *syms, struct tracer_fdnames *fdn)
{
	struct tracer_slicer s;
	struct tracer_item it;
	int ret = 0;

	tracer__slicer_init(&s, &export_ops, x, 0, syms);
	while (!ret && !tracer__out_failed(out) &&
	       tracer__merge_next(x->m, &it) == 1) {
		if (fdn)
			tracer__fdnames_item(fdn, &it);
		ret = tracer__slicer_item(&s, &it);
	}
	if (!ret && !tracer__out_failed(out))
		tracer__slicer_finish(&s, x->m);
	tracer__slicer_free(&s);
	return ret;
}

/* Write the trace of an open merge. */
static void export_merge(struct tracer_merge *m, const char *dir,
			 const char *out_path,
			 const struct tracer_merge_opts *opts)
{
	struct export x = { .m = m, .first = true };
	struct tracer_syms *syms = NULL;
	struct tracer_fdnames *fdn = NULL;
	struct tracer_out out;

	if ((!opts->no_symbols && tracer__syms_new(&syms, m)) ||
	    (!opts->no_fd_names && tracer__fdnames_new(&fdn))) {
		tracer__merge_error(m, "out of memory");
		tracer__syms_free(syms);
		return;
	}
	if (syms)
		tracer__syms_attach(syms, m);
	if (fdn) {
		tracer__fdnames_attach(fdn, m);
		tracer__fdnames_set_note(fdn, syms ? tracer__syms_note : NULL,
					 syms);
	}
	if (tracer__out_open(&out, out_path, m)) {
		x.f = out.f;
		write_head(out.f, dir);
		if (export_items(&x, &out, syms, fdn))
			tracer__merge_error(m, "out of memory");
		fputs("\n]}\n", out.f);
		tracer__out_close(&out, m);
	}
	tracer__merge_set_note(m, NULL, NULL);
	tracer__merge_set_watch(m, NULL, NULL);
	tracer__syms_free(syms);
	tracer__fdnames_free(fdn);
}

int tracer__export(const char *dir, const struct tracer_merge_opts *opts,
		   const char *out_path)
{
	struct tracer_merge *m;
	int ret, status;

	ret = tracer__merge_open(&m, dir, opts);
	if (ret == -ENOMEM)
		fprintf(opts->err ? opts->err : stderr,
			"tracectl: out of memory\n");
	if (ret)
		return 1;
	export_merge(m, dir, out_path, opts);
	status = tracer__merge_failed(m) ? 1 : 0;
	tracer__merge_close(m);
	return status;
}

/* ----------------------------------------------------------------------
 * The command line.
 */

static const char export_usage[] =
	"usage: tracectl export [--format chrome] DIR [-o FILE] [--pid PID]\n"
	"                       [--tid TID] [--events PATTERNS] "
	"[--since TIME]\n"
	"                       [--until TIME] [--no-symbols] "
	"[--no-fd-names]\n";

static const char export_help[] =
	"\n"
	"Write the events recorded in DIR, a session directory or one of its\n"
	"process directories, as a Chrome trace (Trace Event Format, JSON),\n"
	"which ui.perfetto.dev and chrome://tracing open. Times are\n"
	"CLOCK_MONOTONIC, in microseconds, as 'tracectl view' prints them.\n"
	"\n"
	"Begin and end events of a thread become slices named BASE:\n"
	"BASE:begin/BASE:end, BASE_begin/BASE_end (also '-' and '.'),\n"
	"BASE:entry/BASE:exit and BASE_entry/BASE_exit; func:entry and\n"
	"func:exit of -finstrument-functions become slices named by the\n"
	"function's symbol; the library's proc:exit and pthread:exit never\n"
	"pair. Other events are instants with their message; lost events are\n"
	"'tracer:lost' instants. Addresses and descriptors in messages are\n"
	"named as 'tracectl view' names them. Each process image (a pid before and after exec,\n"
	"or a pid used again) is a process of its own: image N > 1 of a pid\n"
	"is exported with its pid and tids plus (N - 1) x 4194304, and a\n"
	"'pid P, image N' process label.\n"
	"\n"
	"  --format chrome    the output format (the only one, the default)\n"
	"  -o, --output FILE  write to FILE (default: standard output)\n"
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

int tracer__output_arg(struct tracer_trace_args *a, const char *val,
		       const char **path)
{
	if (!val[0])
		return tracer__ctl_syntax_error(&a->ctl, "--output: empty file "
						"name");
	*path = val;
	return 0;
}

#define KEY_FORMAT	1

static const struct tracer__ctl_opt export_opts[] = {
	{ "format", KEY_FORMAT, true, 0 },
	TRACE_OUTPUT_OPT,
	{ NULL, 0, false, 0 },
};

/* --format or --output (ctx: the output path). Returns 0 or 2. */
static int export_arg(struct tracer_trace_args *a, void *ctx, int key,
		      const char *val)
{
	if (key == TRACE_KEY_OUTPUT)
		return tracer__output_arg(a, val, ctx);
	if (strcmp(val, "chrome"))
		return tracer__ctl_syntax_error(&a->ctl, "unknown format "
						"'%s'", val);
	return 0;
}

int tracer__ctl_export(int argc, char **argv)
{
	struct tracer_trace_args a;
	const char *out_path = NULL;
	int ret;

	tracer__trace_args_init(&a, "export");
	ret = tracer__trace_parse(&a, argc, argv, export_opts, export_arg,
				  &out_path, export_usage, export_help);
	if (ret < 0) {
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		tracer__raise_file_limit();
		ret = tracer__export(a.dir, &a.opts, out_path);
	}
	tracer__trace_args_free(&a);
	return ret;
}
