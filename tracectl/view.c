/*
 * view.c - `tracectl view`: print the events of a session, merged.
 *
 * Every channel file of every process directory is a source whose records
 * are already in time order; a binary min-heap of the sources, keyed by
 * (timestamp, pid, tid, file order), merges them, so the output is the same
 * on every run. Each source keeps one packet in memory (trace_dir.c).
 *
 * Problems are reported as they are met, one line each on the error stream
 * (after flushing the events printed so far), and the merge goes on with
 * whatever is still readable; the exit status is then 1.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "format.h"
#include "trace_dir.h"
#include "view.h"

#define VIEW_MSG_INITIAL	(64 * 1024)
#define VIEW_MSG_MAX		(16 * 1024 * 1024)
#define UNKNOWN_EVENT		"<unknown event ID>"
#define BAD_PAYLOAD		"<bad payload>"

static const char usage[] = "usage: tracectl view DIR\n";

static const char help[] =
	"\n"
	"Print the events recorded in DIR, a session directory or one of its\n"
	"process directories, merged in time order, one line per event:\n"
	"\n"
	"  SECONDS.NANOSECONDS NAME PID TID PROVIDER:EVENT: MESSAGE\n"
	"\n"
	"(CLOCK_MONOTONIC time; NAME is the process name.)\n";

struct view_proc {
	char *dir;
	struct tracer_meta meta;
};

/* A channel file and its current record. */
struct view_src {
	struct tracer_chan chan;
	const struct view_proc *proc;
	struct tracer_chan_record rec;
	uint32_t pid;
	size_t order;			/* place in the file order */
	bool said_unknown;		/* reported an unknown event id */
	bool said_payload;		/* reported a bad payload */
};

struct view {
	FILE *out;
	FILE *err;
	struct view_proc *procs;
	size_t nprocs;
	struct view_src *srcs;
	size_t nsrcs, srcs_cap;
	struct view_src **heap;
	size_t nheap;
	char *msg;			/* the formatted message */
	size_t msg_size;
	char errbuf[TRACER_ERR_SIZE];
	int status;
};

static void view_error(struct view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report a problem: "tracectl: ...", after the events printed so far. */
static void view_error(struct view *v, const char *fmt, ...)
{
	va_list ap;

	fflush(v->out);
	fputs("tracectl: ", v->err);
	va_start(ap, fmt);
	vfprintf(v->err, fmt, ap);
	va_end(ap);
	fputc('\n', v->err);
	fflush(v->err);
	v->status = 1;
}

/* ----------------------------------------------------------------------
 * Finding the process directories.
 */

/*
 * Is dir a process directory, one holding process.meta? 1, 0, or -ENOMEM.
 * A process.meta that cannot be looked at (EACCES...) counts: reading it
 * will tell why.
 */
static int has_meta(const char *dir)
{
	struct stat st;
	char *path;
	int ret;

	if (asprintf(&path, "%s/process.meta", dir) < 0)
		return -ENOMEM;
	ret = stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
	free(path);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append dir/name to list[] if it is a process directory. */
static int add_proc_dir(char ***list, size_t *n, const char *dir,
			const char *name)
{
	char *path, **l;
	int ret;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	ret = has_meta(path);
	l = ret == 1 ? reallocarray(*list, *n + 1, sizeof(*l)) : NULL;
	if (!l) {
		free(path);
		return ret == 1 ? -ENOMEM : ret;
	}
	*list = l;
	l[(*n)++] = path;
	return 0;
}

/* The process directories of the session directory dir, sorted.
 * Returns 0, or -EIO when a problem was reported. */
static int session_dirs(struct view *v, const char *dir, char ***list,
			size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d) {
		view_error(v, "cannot open '%s': %s", dir, strerror(errno));
		return -EIO;
	}
	while (!ret && (errno = 0, de = readdir(d)))
		ret = add_proc_dir(list, n, dir, de->d_name);
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	if (ret) {
		view_error(v, "cannot read '%s': %s", dir, strerror(-ret));
		return -EIO;
	}
	if (*n == 0) {
		view_error(v, "'%s' is not a session directory: no process."
			   "meta in it or in its subdirectories", dir);
		return -EIO;
	}
	qsort(*list, *n, sizeof(**list), cmp_str);
	return 0;
}

/* The process directories to show: dir itself, or those in it.
 * Returns 0, or -EIO when a problem was reported. */
static int find_procs(struct view *v, const char *dir, char ***list,
		      size_t *n)
{
	struct stat st;
	int ret;

	*list = NULL;
	*n = 0;
	ret = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (ret) {
		view_error(v, "cannot open '%s': %s", dir, strerror(ret));
		return -EIO;
	}
	ret = has_meta(dir);
	if (ret == 0)
		return session_dirs(v, dir, list, n);
	*list = ret == 1 ? malloc(sizeof(**list)) : NULL;
	if (!*list || !(**list = strdup(dir))) {
		view_error(v, "out of memory");
		return -EIO;
	}
	*n = 1;
	return 0;
}

/* ----------------------------------------------------------------------
 * Opening the sources.
 */

static struct view_src *new_src(struct view *v)
{
	struct view_src *s = v->srcs;
	size_t cap = v->srcs_cap ? v->srcs_cap * 2 : 16;

	if (v->nsrcs == v->srcs_cap) {
		s = reallocarray(v->srcs, cap, sizeof(*s));
		if (!s)
			return NULL;
		v->srcs = s;
		v->srcs_cap = cap;
	}
	s = &v->srcs[v->nsrcs];
	memset(s, 0, sizeof(*s));
	s->order = v->nsrcs;
	return s;
}

/* Open the channel files of a loaded process as sources. */
static int open_channels(struct view *v, const struct view_proc *p)
{
	struct tracer_chan_name *names;
	struct view_src *s;
	size_t n, i;
	int ret;

	ret = tracer__dir_channels(p->dir, &names, &n, v->errbuf,
				   sizeof(v->errbuf));
	if (ret) {
		view_error(v, "%s", v->errbuf);
		return ret == -ENOMEM ? ret : 0;
	}
	for (i = 0; i < n; i++) {
		s = new_src(v);
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		if (tracer__chan_open(&s->chan, names[i].path, v->errbuf,
				      sizeof(v->errbuf))) {
			view_error(v, "%s", v->errbuf);
			tracer__chan_close(&s->chan);
			continue;
		}
		s->proc = p;
		s->pid = p->meta.pid;
		v->nsrcs++;
	}
	tracer__chan_names_free(names, n);
	return ret;
}

/* Read process.meta of a process directory and open its channels. */
static int load_proc(struct view *v, struct view_proc *p)
{
	char *path;
	int ret;

	if (asprintf(&path, "%s/process.meta", p->dir) < 0)
		return -ENOMEM;
	ret = tracer__meta_load(&p->meta, path, v->errbuf,
				sizeof(v->errbuf));
	free(path);
	if (ret == 0)
		return open_channels(v, p);
	view_error(v, "%s", v->errbuf);
	return ret == -ENOMEM ? ret : 0;
}

/* Load the process directories (taking the strings of dirs[]) and open
 * their channel files. */
static int open_sources(struct view *v, char **dirs, size_t n)
{
	struct view_proc *p;
	size_t i;
	int ret = 0;

	v->procs = calloc(n, sizeof(*v->procs));
	if (!v->procs)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		p = &v->procs[v->nprocs++];
		p->dir = dirs[i];
		dirs[i] = NULL;
		ret = load_proc(v, p);
	}
	return ret;
}

/* ----------------------------------------------------------------------
 * The merge.
 */

/* Does a's record come before b's: time, pid, tid, file order. */
static bool before(const struct view_src *a, const struct view_src *b)
{
	if (a->rec.timestamp != b->rec.timestamp)
		return a->rec.timestamp < b->rec.timestamp;
	if (a->pid != b->pid)
		return a->pid < b->pid;
	if (a->rec.tid != b->rec.tid)
		return a->rec.tid < b->rec.tid;
	return a->order < b->order;
}

static void sift_down(struct view_src **heap, size_t n, size_t i)
{
	struct view_src *top = heap[i];
	size_t child;

	while ((child = 2 * i + 1) < n) {
		if (child + 1 < n && before(heap[child + 1], heap[child]))
			child++;
		if (!before(heap[child], top))
			break;
		heap[i] = heap[child];
		i = child;
	}
	heap[i] = top;
}

/* Move a source to its next record: false at its end or on an error
 * (reported); the file is then closed. */
static bool advance(struct view *v, struct view_src *s)
{
	int ret = tracer__chan_next(&s->chan, &s->rec, v->errbuf,
				    sizeof(v->errbuf));

	if (ret < 0)
		view_error(v, "%s", v->errbuf);
	if (ret <= 0)
		tracer__chan_close(&s->chan);
	return ret == 1;
}

/* The heap of the sources that have a record. */
static int build_heap(struct view *v)
{
	size_t i;

	v->heap = calloc(v->nsrcs ? v->nsrcs : 1, sizeof(*v->heap));
	if (!v->heap)
		return -ENOMEM;
	for (i = 0; i < v->nsrcs; i++)
		if (advance(v, &v->srcs[i]))
			v->heap[v->nheap++] = &v->srcs[i];
	for (i = v->nheap / 2; i-- > 0;)
		sift_down(v->heap, v->nheap, i);
	return 0;
}

/* ----------------------------------------------------------------------
 * Printing.
 */

/* Format the message of a record into v->msg, growing it as needed.
 * Returns the result of tracer__format_event(); *len the length. */
static int format_message(struct view *v, const struct view_src *s,
			  const struct tracer_callsite *cs, size_t *len)
{
	char *msg;
	int ret;

	for (;;) {
		ret = tracer__format_event(v->msg, v->msg_size, cs->format,
					   cs->types, s->rec.payload,
					   s->rec.payload_size, len);
		if (ret != -ENOSPC || v->msg_size >= VIEW_MSG_MAX)
			return ret;
		msg = realloc(v->msg, v->msg_size * 2);
		if (!msg)
			return ret;	/* print it truncated */
		v->msg = msg;
		v->msg_size *= 2;
	}
}

/* "PATH: packet at offset P: record at offset R: " */
#define REC_FMT	"%s: packet at offset %" PRIu64 ": record at offset %" PRIu64
#define REC_ARGS(s) (s)->chan.path, (s)->rec.packet_offset, (s)->rec.offset

/* Report, once per file, a record that cannot be shown as it should. */
static void record_problem(struct view *v, struct view_src *s,
			   const struct tracer_callsite *cs, int ret)
{
	if (!cs && !s->said_unknown) {
		s->said_unknown = true;
		view_error(v, REC_FMT ": unknown event ID %" PRIu32 " (no "
			   "callsite line in process.meta)", REC_ARGS(s),
			   s->rec.id);
	} else if (cs && ret && ret != -ENOSPC && !s->said_payload) {
		s->said_payload = true;
		view_error(v, REC_FMT ": payload of %zu bytes does not hold "
			   "the values '%s' of event ID %" PRIu32 " (%s)",
			   REC_ARGS(s), s->rec.payload_size, cs->types,
			   s->rec.id, cs->name);
	}
}

/* Append v in decimal, at least width digits, at p: the end. */
static char *put_dec(char *p, uint64_t v, int width)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v || n < width);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/*
 * "SSSS.NNNNNNNNN NAME PID TID EVENT: " (printf would do, but this is the
 * hot path of a view of millions of events; the merge is single-threaded,
 * so the stream needs no locking).
 */
static void print_head(FILE *out, const struct view_src *s,
		       const char *event)
{
	char buf[64], *p;

	p = put_dec(buf, s->rec.timestamp / 1000000000, 1);
	*p++ = '.';
	p = put_dec(p, s->rec.timestamp % 1000000000, 9);
	*p++ = ' ';
	fwrite_unlocked(buf, 1, (size_t)(p - buf), out);
	fputs_unlocked(s->proc->meta.name, out);
	p = buf;
	*p++ = ' ';
	p = put_dec(p, s->pid, 1);
	*p++ = ' ';
	p = put_dec(p, s->rec.tid, 1);
	*p++ = ' ';
	fwrite_unlocked(buf, 1, (size_t)(p - buf), out);
	fputs_unlocked(event, out);
	fputs_unlocked(": ", out);
}

static void print_record(struct view *v, struct view_src *s)
{
	const struct tracer_callsite *cs =
		tracer__meta_callsite(&s->proc->meta, s->rec.id);
	const char *msg = "";
	size_t len = 0;
	int ret = 0;

	if (cs) {
		ret = format_message(v, s, cs, &len);
		msg = ret && ret != -ENOSPC ? BAD_PAYLOAD : v->msg;
		len = ret && ret != -ENOSPC ? strlen(BAD_PAYLOAD) : len;
	}
	print_head(v->out, s, cs ? cs->name : UNKNOWN_EVENT);
	fwrite_unlocked(msg, 1, len, v->out);
	putc_unlocked('\n', v->out);
	if (!cs || ret)
		record_problem(v, s, cs, ret);
}

static void merge(struct view *v)
{
	struct view_src *s;

	while (v->nheap) {
		s = v->heap[0];
		print_record(v, s);
		if (!advance(v, s))
			v->heap[0] = v->heap[--v->nheap];
		if (v->nheap)
			sift_down(v->heap, v->nheap, 0);
	}
}

/* ----------------------------------------------------------------------
 * Entry points.
 */

static void view_free(struct view *v)
{
	size_t i;

	for (i = 0; i < v->nsrcs; i++)
		tracer__chan_close(&v->srcs[i].chan);
	for (i = 0; i < v->nprocs; i++) {
		tracer__meta_free(&v->procs[i].meta);
		free(v->procs[i].dir);
	}
	free(v->srcs);
	free(v->procs);
	free(v->heap);
	free(v->msg);
}

static void free_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* dir without its trailing slashes ("/" stays "/"): a new string. */
static char *trim_dir(const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	return strndup(dir, len);
}

/* Find, open and merge; problems are reported in v->status. */
static void view_run(struct view *v, const char *dir)
{
	char **dirs = NULL;
	size_t n = 0;
	int ret;

	v->msg = malloc(VIEW_MSG_INITIAL);
	v->msg_size = VIEW_MSG_INITIAL;
	ret = v->msg ? find_procs(v, dir, &dirs, &n) : -ENOMEM;
	if (!ret)
		ret = open_sources(v, dirs, n);
	if (!ret)
		ret = build_heap(v);
	if (!ret)
		merge(v);
	free_list(dirs, n);
	if (ret == -ENOMEM)
		view_error(v, "out of memory");
}

int tracer__view_dir(const char *dir, FILE *out, FILE *err)
{
	struct view v = { .out = out, .err = err };
	char *root = trim_dir(dir);

	if (root)
		view_run(&v, root);
	else
		view_error(&v, "out of memory");
	view_free(&v);
	free(root);
	if (fflush(out) != 0 || ferror(out))
		view_error(&v, "cannot write the events: %s",
			   strerror(errno));
	return v.status;
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* One line, "tracectl: view: ... (see ...)": exit status 2. */
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tracectl: view: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'tracectl view --help')\n", stderr);
	return 2;
}

/* Allow as many open channel files as the hard limit does. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int tracer__ctl_view(int argc, char **argv)
{
	const char *dir = NULL;
	bool options = true;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (options && strcmp(a, "--") == 0) {
			options = false;
		} else if (options && (strcmp(a, "--help") == 0 ||
				       strcmp(a, "-h") == 0)) {
			printf("%s%s", usage, help);
			return 0;
		} else if (options && a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (dir) {
			return usage_error("unexpected argument '%s'", a);
		} else {
			dir = a;
		}
	}
	if (!dir)
		return usage_error("missing DIR");
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	raise_file_limit();
	return tracer__view_dir(dir, stdout, stderr);
}
