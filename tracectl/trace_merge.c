/*
 * trace_merge.c - the events of a session in time order (trace_merge.h).
 *
 * Every channel file of every process directory is a source whose records
 * are already in time order; a binary min-heap of the sources, keyed by
 * (timestamp, pid, tid, file order), merges them, so the output is the same
 * on every run. Each source keeps one packet in memory (trace_dir.c).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "format.h"
#include "hash_index.h"
#include "paths.h"
#include "pattern.h"
#include "trace_merge.h"

#define MSG_INITIAL	(64 * 1024)
#define MSG_MAX		(16 * 1024 * 1024)
#define UNKNOWN_EVENT	"<unknown event ID>"
#define BAD_PAYLOAD	"<bad payload>"
#define LOST_EVENT	"tracer:lost"

/* A channel file and its current record. */
struct merge_src {
	struct tracer_chan chan;
	const struct tracer_merge_proc *proc;
	struct tracer_chan_record rec;
	uint32_t pid;
	int vital;
	size_t order;			/* place in the file order */
	bool said_unknown;		/* reported an unknown event id */
	bool said_payload;		/* reported a bad payload */
	bool named;			/* name_at is name_tid's entry */
	uint32_t name_tid;
	size_t name_at;
};

/* What the merge knows of a thread's name. */
struct merge_name {
	const struct tracer_merge_proc *proc;
	uint32_t tid;
	const char *name;		/* NULL: none known */
	uint64_t since;			/* when an event named it (0:
					   process.meta did) */
};

struct tracer_merge {
	struct tracer_merge_opts opts;
	struct tracer_merge_proc *procs;
	size_t nprocs;
	struct merge_src *srcs;
	size_t nsrcs, srcs_cap;
	struct merge_src **heap;
	size_t nheap;
	uint64_t since;			/* absolute */
	uint64_t until;			/* absolute; UINT64_MAX: none */
	char *dir;			/* as given, for messages */
	bool given;			/* an item was handed out */
	bool said_empty;		/* the selection found nothing: said */
	char *msg;			/* the formatted message */
	size_t msg_size;
	void *pay;			/* a copy of the item's payload (the */
	size_t pay_size;		/* source moves on before it is used) */
	char errbuf[TRACER_ERR_SIZE];
	bool failed;
	tracer_merge_note_fn note;	/* after %p values, or NULL */
	void *note_ctx;
	tracer_merge_watch_fn watch;	/* every record read, or NULL */
	void *watch_ctx;
	struct merge_name *names;	/* threads seen, by (proc, tid) */
	size_t nnames, names_cap;
	uint32_t *names_hash;		/* index + 1; 0: free */
	size_t names_hash_size;
	char **strs;			/* names the events gave (owned) */
	size_t nstrs, strs_cap;
	struct tracer_rename *renames;	/* since the last item given */
	size_t nrenames, renames_cap;
	bool renames_given;		/* the last item took them */
	bool skipping;			/* before --since: no renames */
	size_t nopen;			/* sources with their file open */
	size_t max_open;		/* at most (open_budget()) */
	size_t clock;			/* the next to park, when full */
};

/* What the note of a %p value is about: the record being formatted. */
struct note_arg {
	const struct tracer_merge *m;
	const struct merge_src *s;
};

void tracer__merge_error(struct tracer_merge *m, const char *fmt, ...)
{
	va_list ap;

	fflush(m->opts.out);
	fputs("tracectl: ", m->opts.err);
	va_start(ap, fmt);
	vfprintf(m->opts.err, fmt, ap);
	va_end(ap);
	fputc('\n', m->opts.err);
	fflush(m->opts.err);
	m->failed = true;
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

	if (asprintf(&path, "%s/" TRACER_META_FILE, dir) < 0)
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
 * Returns 0, -ENOENT (reported), -ENOMEM. */
static int session_dirs(struct tracer_merge *m, const char *dir,
			char ***list, size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d) {
		tracer__merge_error(m, "cannot open '%s': %s", dir,
				    strerror(errno));
		return -ENOENT;
	}
	while (!ret && (errno = 0, de = readdir(d)))
		ret = add_proc_dir(list, n, dir, de->d_name);
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		tracer__merge_error(m, "cannot read '%s': %s", dir,
				    strerror(-ret));
		return -ENOENT;
	}
	if (*n == 0) {
		tracer__merge_error(m, "'%s' is not a session directory: no "
				    TRACER_META_FILE " in it or in its "
				    "subdirectories", dir);
		return -ENOENT;
	}
	qsort(*list, *n, sizeof(**list), cmp_str);
	return 0;
}

/* The process directories to read: dir itself, or those in it.
 * Returns 0, -ENOENT (reported), -ENOMEM. */
static int find_procs(struct tracer_merge *m, const char *dir, char ***list,
		      size_t *n)
{
	struct stat st;
	int ret;

	*list = NULL;
	*n = 0;
	ret = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (ret) {
		tracer__merge_error(m, "cannot open '%s': %s", dir,
				    strerror(ret));
		return -ENOENT;
	}
	ret = has_meta(dir);
	if (ret == 0)
		return session_dirs(m, dir, list, n);
	if (ret < 0)
		return ret;
	*list = malloc(sizeof(**list));
	if (!*list || !(**list = strdup(dir)))
		return -ENOMEM;
	*n = 1;
	return 0;
}

/* ----------------------------------------------------------------------
 * Opening the sources.
 */

static struct merge_src *new_src(struct tracer_merge *m)
{
	struct merge_src *s = m->srcs;
	size_t cap = m->srcs_cap ? m->srcs_cap * 2 : 16;

	if (m->nsrcs == m->srcs_cap) {
		s = reallocarray(m->srcs, cap, sizeof(*s));
		if (!s)
			return NULL;
		m->srcs = s;
		m->srcs_cap = cap;
	}
	s = &m->srcs[m->nsrcs];
	memset(s, 0, sizeof(*s));
	s->order = m->nsrcs;
	return s;
}

/* Open one channel file of p as a source, unless --tid leaves it out. */
static int open_channel(struct tracer_merge *m,
			const struct tracer_merge_proc *p,
			const struct tracer_chan_name *cn)
{
	struct merge_src *s;

	if (m->opts.tid && cn->tid != m->opts.tid)
		return 0;
	s = new_src(m);
	if (!s)
		return -ENOMEM;
	if (tracer__chan_open(&s->chan, cn->path, p->meta.version,
			      m->errbuf, sizeof(m->errbuf))) {
		tracer__merge_error(m, "%s", m->errbuf);
		tracer__chan_close(&s->chan);
		return 0;
	}
	s->proc = p;
	s->pid = p->meta.pid;
	s->vital = cn->vital;
	m->nsrcs++;
	/* Taken up when its first record is wanted (build_heap). */
	tracer__chan_park(&s->chan);
	return 0;
}

/* Open the channel files of a loaded process as sources. */
static int open_channels(struct tracer_merge *m,
			 const struct tracer_merge_proc *p)
{
	struct tracer_chan_name *names;
	size_t n, i;
	int ret;

	ret = tracer__dir_channels(p->dir, &names, &n, m->errbuf,
				   sizeof(m->errbuf));
	if (ret) {
		tracer__merge_error(m, "%s", m->errbuf);
		return ret == -ENOMEM ? ret : 0;
	}
	for (i = 0; i < n && !ret; i++)
		ret = open_channel(m, p, &names[i]);
	tracer__chan_names_free(names, n);
	return ret;
}

/* Does cs name a thread: "tid %d name %s..." of the library? */
static bool names_thread(const struct tracer__site *cs)
{
	static const char *const names[] = {
		"tracer:thread_start", "tracer:thread_name",
		"tracer:thread_exit",
	};
	size_t i;

	if (!cs->vital || strncmp(cs->types, "is", 2))
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(cs->name, names[i]))
			return true;
	return false;
}

static void find_name_sites(struct tracer_merge_proc *p)
{
	size_t i;

	for (i = 0; i < p->meta.ncallsites; i++)
		if (p->nname_ids < TRACER_NAME_SITES &&
		    names_thread(&p->meta.callsites[i]))
			p->name_ids[p->nname_ids++] = p->meta.callsites[i].id;
}

/* Read process.meta of a process directory and open its channels. */
static int load_proc(struct tracer_merge *m, struct tracer_merge_proc *p)
{
	char *path;
	int ret;

	if (asprintf(&path, "%s/" TRACER_META_FILE, p->dir) < 0)
		return -ENOMEM;
	ret = tracer__meta_load(&p->meta, path, m->errbuf,
				sizeof(m->errbuf));
	free(path);
	if (ret == 0 && m->opts.pid && p->meta.pid != m->opts.pid)
		return 0;
	if (ret == 0) {
		find_name_sites(p);
		return open_channels(m, p);
	}
	tracer__merge_error(m, "%s", m->errbuf);
	return ret == -ENOMEM ? ret : 0;
}

/* Load the process directories (taking the strings of dirs[]) and open
 * their channel files. */
static int open_sources(struct tracer_merge *m, char **dirs, size_t n)
{
	struct tracer_merge_proc *p;
	size_t i;
	int ret = 0;

	m->procs = calloc(n ? n : 1, sizeof(*m->procs));
	if (!m->procs)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		p = &m->procs[m->nprocs++];
		p->dir = dirs[i];
		dirs[i] = NULL;
		ret = load_proc(m, p);
	}
	return ret;
}

/* ----------------------------------------------------------------------
 * Thread names.
 */

/* The name of tid in process.meta when it took its buffer (the last
 * such line: a thread id the kernel gave again), or NULL. */
static const char *meta_name(const struct tracer_meta *meta, uint32_t tid)
{
	size_t i;

	for (i = meta->nthreads; i-- > 0;)
		if (meta->threads[i].tid == tid && !meta->threads[i].since)
			return meta->threads[i].name;
	return NULL;
}

static size_t name_hash(const struct tracer_merge_proc *p, uint32_t tid,
			size_t size)
{
	uint64_t k = ((uint64_t)(uintptr_t)p << 32 ^ tid) *
		     0x9e3779b97f4a7c15ULL;

	return (size_t)(k >> 32) & (size - 1);
}

static size_t name_home(const void *ctx, size_t i, size_t size)
{
	const struct tracer_merge *m = ctx;

	return name_hash(m->names[i].proc, m->names[i].tid, size);
}

/* A new entry for (p, tid) at hash slot h: SIZE_MAX when out of memory. */
static size_t new_name(struct tracer_merge *m, size_t h,
		       const struct tracer_merge_proc *p, uint32_t tid)
{
	size_t cap = m->names_cap ? m->names_cap * 2 : 16;
	struct merge_name *n = m->names;

	if (m->nnames == m->names_cap) {
		n = reallocarray(m->names, cap, sizeof(*n));
		if (!n)
			return SIZE_MAX;
		m->names = n;
		m->names_cap = cap;
	}
	n += m->nnames;
	n->proc = p;
	n->tid = tid;
	n->name = meta_name(&p->meta, tid);
	n->since = 0;
	m->names_hash[h] = (uint32_t)++m->nnames;
	return m->nnames - 1;
}

/* The entry of thread tid of p, made when first asked: SIZE_MAX when out
 * of memory. */
static size_t name_entry(struct tracer_merge *m,
			 const struct tracer_merge_proc *p, uint32_t tid)
{
	const struct merge_name *n;
	size_t h;

	if ((m->nnames + 1) * 2 > m->names_hash_size &&
	    tracer__index_grow(&m->names_hash, &m->names_hash_size, 64,
			       m->nnames, name_home, m))
		return SIZE_MAX;
	h = name_hash(p, tid, m->names_hash_size);
	while (m->names_hash[h]) {
		n = &m->names[m->names_hash[h] - 1];
		if (n->proc == p && n->tid == tid)
			return m->names_hash[h] - 1;
		h = (h + 1) & (m->names_hash_size - 1);
	}
	return new_name(m, h, p, tid);
}

/* A copy of name that lives as long as the merge; NULL: no memory. */
static const char *keep_name(struct tracer_merge *m, const char *name)
{
	size_t cap = m->strs_cap ? m->strs_cap * 2 : 16;
	char **v = m->strs;

	if (m->nstrs == m->strs_cap) {
		v = reallocarray(m->strs, cap, sizeof(*v));
		if (!v)
			return NULL;
		m->strs = v;
		m->strs_cap = cap;
	}
	v[m->nstrs] = strdup(name);
	return v[m->nstrs] ? v[m->nstrs++] : NULL;
}

/* Hand the rename of n to the next item. */
static void tell_rename(struct tracer_merge *m, const struct merge_name *n)
{
	size_t cap = m->renames_cap ? m->renames_cap * 2 : 8;
	struct tracer_rename *r = m->renames;

	if (m->renames_given) {
		m->nrenames = 0;
		m->renames_given = false;
	}
	if (m->nrenames == m->renames_cap) {
		r = reallocarray(m->renames, cap, sizeof(*r));
		if (!r)
			return;		/* its items' names still say */
		m->renames = r;
		m->renames_cap = cap;
	}
	r += m->nrenames++;
	r->proc = n->proc;
	r->pid = n->proc->meta.pid;
	r->tid = n->tid;
	r->name = n->name;
	r->timestamp = n->since;
}

/* Thread tid of p is called name since ts: the newest event decides. */
static void set_name(struct tracer_merge *m, const struct tracer_merge_proc *p,
		     uint32_t tid, const char *name, uint64_t ts)
{
	size_t i = name_entry(m, p, tid);
	struct merge_name *n;

	if (i == SIZE_MAX || m->names[i].since > ts)
		return;
	n = &m->names[i];
	n->since = ts;
	if (n->name && !strcmp(n->name, name))
		return;
	name = keep_name(m, name);
	if (!name)
		return;
	n->name = name;
	if (!m->skipping)
		tell_rename(m, n);
}

/* If s's record names a thread, note it. */
static void note_name(struct tracer_merge *m, const struct merge_src *s)
{
	const struct tracer_merge_proc *p = s->proc;
	struct tracer__value tid, name;
	size_t i, off = 0;

	if (s->rec.lost)
		return;
	for (i = 0; i < p->nname_ids && p->name_ids[i] != s->rec.id; i++)
		;
	if (i == p->nname_ids ||
	    tracer__payload_next('i', s->rec.payload, s->rec.payload_size,
				 &off, &tid) ||
	    tracer__payload_next('s', s->rec.payload, s->rec.payload_size,
				 &off, &name) ||
	    tid.i <= 0 || tid.i > UINT32_MAX)
		return;
	set_name(m, p, (uint32_t)tid.i, name.s, s->rec.timestamp);
}

/* The name of s's thread now (NULL: none known, or no memory). */
static const char *name_now(struct tracer_merge *m, struct merge_src *s)
{
	if (!s->named || s->name_tid != s->rec.tid) {
		s->name_at = name_entry(m, s->proc, s->rec.tid);
		if (s->name_at == SIZE_MAX)
			return NULL;
		s->name_tid = s->rec.tid;
		s->named = true;
	}
	return m->names[s->name_at].name;
}

/* ----------------------------------------------------------------------
 * The merge.
 */

/* Does a's record come before b's: time, pid, tid, file order. */
static bool before(const struct merge_src *a, const struct merge_src *b)
{
	if (a->rec.timestamp != b->rec.timestamp)
		return a->rec.timestamp < b->rec.timestamp;
	if (a->pid != b->pid)
		return a->pid < b->pid;
	if (a->rec.tid != b->rec.tid)
		return a->rec.tid < b->rec.tid;
	return a->order < b->order;
}

static void sift_down(struct merge_src **heap, size_t n, size_t i)
{
	struct merge_src *top = heap[i];
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

/* ----------------------------------------------------------------------
 * Open files. A trace of many threads has more channel files than a
 * process may hold open (100,000 threads of a churning program: 200,000
 * files): at most max_open sources have their file open, the others are
 * parked (tracer__chan_park()) and taken up again when their record is
 * wanted, parking another one in turn (the next open one after the
 * clock hand: threads of a churning program come and go in time order,
 * so most parked files are done or not yet begun).
 */

/* Half the descriptors this process may open, 16 to 4096. */
static size_t open_budget(void)
{
	struct rlimit rl;
	rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur / 2 : 16;

	return n < 16 ? 16 : n > 4096 ? 4096 : (size_t)n;
}

static void park(struct tracer_merge *m, struct merge_src *s)
{
	if (s->chan.fd >= 0) {
		tracer__chan_park(&s->chan);
		m->nopen--;
	}
}

/* Park an open source other than keep, the clock hand's next. */
static void park_another(struct tracer_merge *m, const struct merge_src *keep)
{
	size_t i;

	for (i = 0; i < m->nsrcs && m->nopen >= m->max_open; i++) {
		struct merge_src *s = &m->srcs[m->clock];

		m->clock = (m->clock + 1) % m->nsrcs;
		if (s != keep)
			park(m, s);
	}
}

/* s's file open, its record's payload there: false after an error
 * (reported; the file is then closed). */
static bool take_up(struct tracer_merge *m, struct merge_src *s)
{
	if (!tracer__chan_parked(&s->chan))
		return s->chan.path != NULL;
	if (m->nopen >= m->max_open)
		park_another(m, s);
	if (tracer__chan_unpark(&s->chan, &s->rec, m->errbuf,
				sizeof(m->errbuf))) {
		tracer__merge_error(m, "%s", m->errbuf);
		tracer__chan_close(&s->chan);
		return false;
	}
	m->nopen++;
	return true;
}

static void close_src(struct tracer_merge *m, struct merge_src *s)
{
	if (s->chan.fd >= 0)
		m->nopen--;
	tracer__chan_close(&s->chan);
}

/* Move a source to its next record: false at its end or after an error it
 * cannot read on from (reported); the file is then closed. */
static bool advance(struct tracer_merge *m, struct merge_src *s)
{
	int ret;

	if (!take_up(m, s))
		return false;
	for (;;) {
		ret = tracer__chan_next(&s->chan, &s->rec, m->errbuf,
					sizeof(m->errbuf));
		if (ret < 0)
			tracer__merge_error(m, "%s", m->errbuf);
		if (ret != -EBADMSG)
			break;
	}
	if (ret <= 0)
		close_src(m, s);
	return ret == 1;
}

static void heapify(struct tracer_merge *m)
{
	size_t i;

	for (i = m->nheap / 2; i-- > 0;)
		sift_down(m->heap, m->nheap, i);
}

/* The heap of the sources that have a record. */
static int build_heap(struct tracer_merge *m)
{
	size_t i;

	m->heap = calloc(m->nsrcs ? m->nsrcs : 1, sizeof(*m->heap));
	if (!m->heap)
		return -ENOMEM;
	for (i = 0; i < m->nsrcs; i++)
		if (advance(m, &m->srcs[i]))
			m->heap[m->nheap++] = &m->srcs[i];
	heapify(m);
	return 0;
}

/* Advance s until its record is at or after since: false at its end. */
static bool advance_past(struct tracer_merge *m, struct merge_src *s,
			 uint64_t since)
{
	while (s->rec.timestamp < since) {
		if (!take_up(m, s))
			return false;
		note_name(m, s);	/* the names at since */
		if (!advance(m, s))
			return false;
	}
	return true;
}

/* Sources drop the packets that end before since (absolute), and the
 * records before it are passed over. */
static void skip_to(struct tracer_merge *m, uint64_t since)
{
	size_t i;

	for (i = 0; i < m->nsrcs; i++)
		m->srcs[i].chan.skip_before = since;
	m->skipping = true;
	i = 0;
	while (i < m->nheap) {
		struct merge_src *s = m->heap[i];

		if (s->rec.timestamp >= since || advance_past(m, s, since))
			i++;
		else
			m->heap[i] = m->heap[--m->nheap];
	}
	m->skipping = false;
	heapify(m);
}

/* The timestamp of the first record (lost or not) of the channel file
 * at path (session format `format`) into *ts: false when it has none or
 * cannot be read (the merge reports that if it reads the file). */
static bool file_first(struct tracer_merge *m, const char *path,
		       uint32_t format, uint64_t *ts)
{
	struct tracer_chan c;
	struct tracer_chan_record rec;
	int ret = tracer__chan_open(&c, path, format, m->errbuf,
				    sizeof(m->errbuf));

	while (!ret && (ret = tracer__chan_next(&c, &rec, m->errbuf,
						sizeof(m->errbuf))) == -EBADMSG)
		ret = 0;	/* on to the next intact packet */
	if (ret == 1)
		*ts = rec.timestamp;
	tracer__chan_close(&c);
	return ret == 1;
}

/*
 * The first timestamp of the whole trace, +TIME's origin: that of the
 * processes and threads --pid and --tid leave out too (their channel
 * files are not sources: each one's first record is read here), so that
 * +TIME is the same instant whatever the selection. UINT64_MAX: none.
 */
static uint64_t trace_first(struct tracer_merge *m)
{
	uint64_t first = m->nheap ? m->heap[0]->rec.timestamp : UINT64_MAX;
	struct tracer_chan_name *names;
	size_t i, j, n;
	uint64_t ts;

	if (!m->opts.pid && !m->opts.tid)
		return first;	/* every file is a source */
	for (i = 0; i < m->nprocs; i++) {
		const struct tracer_merge_proc *p = &m->procs[i];

		if (!p->meta.name || tracer__dir_channels(p->dir, &names, &n,
				m->errbuf, sizeof(m->errbuf)))
			continue;	/* not read: as without --pid */
		for (j = 0; j < n; j++)
			if (file_first(m, names[j].path, p->meta.version,
				       &ts) && ts < first)
				first = ts;
		tracer__chan_names_free(names, n);
	}
	return first;
}

/* "SECONDS.NANOSECONDS" of ts into buf. */
static const char *time_text(char buf[32], uint64_t ts)
{
	snprintf(buf, 32, "%" PRIu64 ".%09" PRIu64, ts / 1000000000,
		 ts % 1000000000);
	return buf;
}

/* origin + rel, at most UINT64_MAX. */
static uint64_t after(uint64_t origin, uint64_t rel)
{
	return origin + rel < origin ? UINT64_MAX : origin + rel;
}

/*
 * The time bounds, made absolute from the first record of the whole
 * trace; --until before --since (known only now when one is +TIME) is a
 * problem: nothing is read.
 */
static void set_bounds(struct tracer_merge *m)
{
	uint64_t first = m->nheap ? m->heap[0]->rec.timestamp : 0;
	uint64_t origin = 0, since = m->opts.since, until = m->opts.until;
	bool has_until = m->opts.until || m->opts.until_relative;
	char a[32], b[32];

	if (m->opts.since_relative || m->opts.until_relative)
		origin = trace_first(m);
	if (origin == UINT64_MAX)
		origin = 0;		/* no record at all */
	if (m->opts.since_relative)
		since = after(origin, since);
	if (m->opts.until_relative)
		until = after(origin, until);
	m->since = since;
	m->until = has_until ? until : UINT64_MAX;
	if (m->until < since) {
		tracer__merge_error(m, "--until %s is before --since %s",
				    time_text(a, until), time_text(b, since));
		m->nheap = 0;
		m->said_empty = true;
	} else if (since > first) {
		skip_to(m, since);
	}
}

/* ----------------------------------------------------------------------
 * Items.
 */

/* The format's note: the merge's, for the record's process and time. */
static size_t note_of(void *ctx, uint64_t addr, char *buf, size_t size)
{
	const struct note_arg *a = ctx;

	return a->m->note(a->m->note_ctx, a->s->proc, a->s->rec.timestamp,
			  addr, buf, size);
}

/* Format the message of s's record into m->msg, growing it as needed.
 * Returns the result of tracer__format_event(); *len the length. */
static int format_message(struct tracer_merge *m, const struct merge_src *s,
			  const struct tracer__site *cs, size_t *len)
{
	struct note_arg arg = { .m = m, .s = s };
	struct tracer__format_note note = { .fn = note_of, .ctx = &arg };
	char *msg;
	int ret;

	for (;;) {
		ret = tracer__format_event_note(m->msg, m->msg_size,
						cs->format, cs->types,
						s->rec.payload,
						s->rec.payload_size, len,
						m->note ? &note : NULL);
		if (ret != -ENOSPC || m->msg_size >= MSG_MAX)
			return ret;
		msg = realloc(m->msg, m->msg_size * 2);
		if (!msg)
			return ret;	/* shown truncated */
		m->msg = msg;
		m->msg_size *= 2;
	}
}

/* "PATH: packet at offset P: record at offset R" */
#define REC_FMT	"%s: packet at offset %" PRIu64 ": record at offset %" PRIu64
#define REC_ARGS(s) (s)->chan.path, (s)->rec.packet_offset, (s)->rec.offset

/* Report, once per file, a record that cannot be shown as it should. */
static void record_problem(struct tracer_merge *m, struct merge_src *s,
			   const struct tracer__site *cs, int ret)
{
	if (!cs && !s->said_unknown) {
		s->said_unknown = true;
		tracer__merge_error(m, REC_FMT ": unknown event ID %" PRIu32
				    " (no callsite line in process.meta)",
				    REC_ARGS(s), s->rec.id);
	} else if (cs && ret && ret != -ENOSPC && !s->said_payload) {
		s->said_payload = true;
		tracer__merge_error(m, REC_FMT ": payload of %zu bytes does "
				    "not hold the values '%s' of event ID %"
				    PRIu32 " (%s)", REC_ARGS(s),
				    s->rec.payload_size, cs->types,
				    s->rec.id, cs->name);
	}
}

/* Does the --events filter let s's record through? */
static bool wanted(const struct tracer_merge *m, const struct merge_src *s)
{
	const struct tracer__site *cs;

	if (!m->opts.events)
		return true;
	if (s->rec.lost)
		return true;	/* the events lost may be any of them */
	cs = tracer__meta_callsite(&s->proc->meta, s->rec.id);
	return tracer__patterns_select(m->opts.events,
				      cs ? cs->name : UNKNOWN_EVENT);
}

/* The item's copy of s's payload (none when out of memory). */
static void keep_payload(struct tracer_merge *m, const struct merge_src *s,
			 struct tracer_item *it)
{
	size_t n = s->rec.payload_size;
	void *p = m->pay;

	if (n > m->pay_size) {
		p = realloc(m->pay, n);
		if (!p)
			return;
		m->pay = p;
		m->pay_size = n;
	}
	if (n)
		memcpy(p, s->rec.payload, n);
	it->payload = p;
	it->payload_size = n;
}

/* The message of an event item. */
static void event_item(struct tracer_merge *m, struct merge_src *s,
		       struct tracer_item *it)
{
	const struct tracer__site *cs =
		tracer__meta_callsite(&s->proc->meta, s->rec.id);
	int ret = 0;

	it->kind = TRACER_ITEM_EVENT;
	it->cs = cs;
	it->name = cs ? cs->name : UNKNOWN_EVENT;
	it->msg = "";
	it->msg_len = 0;
	if (cs) {
		keep_payload(m, s, it);
		ret = format_message(m, s, cs, &it->msg_len);
		it->msg = m->msg;
		if (ret && ret != -ENOSPC) {
			it->msg = BAD_PAYLOAD;
			it->msg_len = strlen(BAD_PAYLOAD);
		}
	}
	if (!cs || ret)
		record_problem(m, s, cs, ret);
}

static void fill_item(struct tracer_merge *m, struct merge_src *s,
		      struct tracer_item *it)
{
	memset(it, 0, sizeof(*it));
	it->timestamp = s->rec.timestamp;
	it->proc = s->proc;
	it->pid = s->pid;
	it->tid = s->rec.tid;
	it->thread_name = name_now(m, s);
	if (!m->renames_given && m->nrenames) {
		it->renames = m->renames;
		it->nrenames = m->nrenames;
		m->renames_given = true;
	}
	it->vital = s->vital;
	if (s->rec.lost) {
		it->kind = TRACER_ITEM_LOST;
		it->name = LOST_EVENT;
		it->msg = "";
		it->lost = s->rec.lost;
		it->lost_since = s->rec.lost_since;
	} else {
		event_item(m, s, it);
	}
}

/* s's record was used: move s on, keep the heap in order. */
static void next_of(struct tracer_merge *m, struct merge_src *s)
{
	if (!advance(m, s))
		m->heap[0] = m->heap[--m->nheap];
	if (m->nheap)
		sift_down(m->heap, m->nheap, 0);
}

/* Show s's record to the watcher, if any. */
static void watch_record(struct tracer_merge *m, const struct merge_src *s)
{
	const struct tracer__site *cs;

	if (!m->watch || s->rec.lost)
		return;
	cs = tracer__meta_callsite(&s->proc->meta, s->rec.id);
	if (cs)
		m->watch(m->watch_ctx, s->proc, s->pid, s->rec.timestamp, cs,
			 s->rec.payload, s->rec.payload_size);
}

/* The next item (tracer__merge_next()). */
static int next_item(struct tracer_merge *m, struct tracer_item *it)
{
	struct merge_src *s;
	bool take;

	while (m->nheap) {
		s = m->heap[0];
		if (s->rec.timestamp > m->until)
			return 0;	/* every other source is later too */
		if (!take_up(m, s)) {	/* reported */
			m->heap[0] = m->heap[--m->nheap];
			if (m->nheap)
				sift_down(m->heap, m->nheap, 0);
			continue;
		}
		note_name(m, s);
		watch_record(m, s);
		take = wanted(m, s);
		if (take)
			fill_item(m, s, it);	/* copies what it needs */
		next_of(m, s);
		if (take)
			return 1;
	}
	return 0;
}

/* Does the merge select some items only? */
static bool selects(const struct tracer_merge_opts *o)
{
	return o->pid || o->tid || o->events || o->since || o->until ||
	       o->since_relative || o->until_relative;
}

/* Append the text of the patterns p, as given, to b (at *n of size). */
static void put_patterns(char *b, size_t size, size_t *n,
			 const struct tracer__patterns *p)
{
	size_t i;

	for (i = 0; i < p->n && *n < size; i++)
		*n += (size_t)snprintf(b + *n, size - *n, "%s%s%s",
				       i ? "," : "", p->v[i].exclude ? "-" :
				       "", p->v[i].glob);
}

/*
 * The end, and no item was handed out: with opts.check, say what the
 * selection was ("no events of process 12 thread 13 matching 'libc:*'
 * from T up to T in 'DIR'").
 */
static void say_empty(struct tracer_merge *m)
{
	const struct tracer_merge_opts *o = &m->opts;
	char b[1024], t[32];
	size_t n = 0, size = sizeof(b) - 1;

	if (!o->check || m->given || m->said_empty || !selects(o))
		return;
	m->said_empty = true;
	n += (size_t)snprintf(b, size, "no events");
	if (o->pid && n < size)
		n += (size_t)snprintf(b + n, size - n, " of process %" PRIu32,
				      o->pid);
	if (o->tid && n < size)
		n += (size_t)snprintf(b + n, size - n, "%s thread %" PRIu32,
				      o->pid ? "" : " of", o->tid);
	if (o->events && n < size) {
		n += (size_t)snprintf(b + n, size - n, " matching '");
		put_patterns(b, size, &n, o->events);
		if (n < size)
			n += (size_t)snprintf(b + n, size - n, "'");
	}
	if ((o->since || o->since_relative) && n < size)
		n += (size_t)snprintf(b + n, size - n, " from %s",
				      time_text(t, m->since));
	if (m->until != UINT64_MAX && n < size)
		n += (size_t)snprintf(b + n, size - n, " up to %s",
				      time_text(t, m->until));
	if (n < size)
		snprintf(b + n, size - n, " in '%s'", m->dir);
	tracer__merge_error(m, "%s", b);
}

int tracer__merge_next(struct tracer_merge *m, struct tracer_item *it)
{
	int ret = next_item(m, it);

	if (ret)
		m->given = true;
	else
		say_empty(m);
	return ret;
}

/* ----------------------------------------------------------------------
 * Opening and closing.
 */

/* dir without its trailing slashes ("/" stays "/"): a new string. */
static char *trim_dir(const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	return strndup(dir, len);
}

static void free_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Is name the name of an event of a process of the merge, or of an item
 * the merge makes? Else, the nearest such name at most max edits away
 * into *near (when not NULL). */
static bool event_known(const struct tracer_merge *m,
			const struct tracer__pattern *v, const char **near,
			uint32_t max)
{
	static const char *const made[] = { LOST_EVENT, UNKNOWN_EVENT };
	const struct tracer__site *cs;
	size_t i, j;
	uint32_t d;

	for (i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		if (tracer__pattern_matches(v, made[i]))
			return true;
	for (i = 0; i < m->nprocs; i++)
		for (j = 0; j < m->procs[i].meta.ncallsites; j++) {
			cs = &m->procs[i].meta.callsites[j];
			if (tracer__pattern_matches(v, cs->name))
				return true;
			d = near ? tracer__name_distance(v->glob, v->len,
					cs->name, strlen(cs->name)) : max + 1;
			if (d <= max) {
				*near = cs->name;
				max = d - 1;	/* d > 0: no match */
			}
		}
	return false;
}

/* With opts.check, warn about each pattern of --events that matches no
 * event of the trace, a misspelling (trace_merge.h). */
static void check_events(struct tracer_merge *m)
{
	const struct tracer__patterns *p = m->opts.events;
	const struct tracer__pattern *v;
	const char *near;
	size_t i;

	for (i = 0; p && m->opts.check && i < p->n; i++) {
		v = &p->v[i];
		near = NULL;
		if (event_known(m, v, v->glob[v->len] ? NULL : &near, 2))
			continue;
		fflush(m->opts.out);
		fprintf(m->opts.err, "tracectl: warning: --events: '%s%s' "
			"matches no event of '%s'", v->exclude ? "-" : "",
			v->glob, m->dir);
		if (near)
			fprintf(m->opts.err, " (did you mean '%s%s'?)",
				v->exclude ? "-" : "", near);
		fputc('\n', m->opts.err);
		fflush(m->opts.err);
	}
}

/* Find, load and open everything; returns 0, -ENOENT or -ENOMEM. */
static int merge_start(struct tracer_merge *m, const char *dir)
{
	char **dirs = NULL, *root = trim_dir(dir);
	size_t n = 0;
	int ret;

	m->max_open = open_budget();
	m->msg = malloc(MSG_INITIAL);
	m->msg_size = MSG_INITIAL;
	m->dir = strdup(dir);
	ret = m->msg && root && m->dir ? find_procs(m, root, &dirs, &n) :
	      -ENOMEM;
	if (!ret)
		ret = open_sources(m, dirs, n);
	if (!ret)
		check_events(m);
	if (!ret)
		ret = build_heap(m);
	if (!ret)
		set_bounds(m);
	free_list(dirs, n);
	free(root);
	return ret;
}

int tracer__merge_open(struct tracer_merge **mp, const char *dir,
		       const struct tracer_merge_opts *opts)
{
	struct tracer_merge *m = calloc(1, sizeof(*m));
	int ret;

	*mp = NULL;
	if (!m)
		return -ENOMEM;
	m->opts = *opts;
	if (!m->opts.err)
		m->opts.err = stderr;
	if (!m->opts.out)
		m->opts.out = stdout;
	ret = merge_start(m, dir);
	if (ret) {
		tracer__merge_close(m);
		return ret;
	}
	*mp = m;
	return 0;
}

size_t tracer__merge_renames_left(const struct tracer_merge *m,
				  const struct tracer_rename **r)
{
	*r = m->renames;
	return m->renames_given ? 0 : m->nrenames;
}

size_t tracer__merge_nprocs(const struct tracer_merge *m)
{
	return m->nprocs;
}

const struct tracer_merge_proc *tracer__merge_proc(
	const struct tracer_merge *m, size_t i)
{
	return i < m->nprocs ? &m->procs[i] : NULL;
}

void tracer__merge_set_watch(struct tracer_merge *m, tracer_merge_watch_fn fn,
			     void *ctx)
{
	m->watch = fn;
	m->watch_ctx = ctx;
}

void tracer__merge_set_note(struct tracer_merge *m, tracer_merge_note_fn fn,
			    void *ctx)
{
	m->note = fn;
	m->note_ctx = ctx;
}

bool tracer__merge_failed(const struct tracer_merge *m)
{
	return m->failed;
}

void tracer__merge_close(struct tracer_merge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nsrcs; i++)
		tracer__chan_close(&m->srcs[i].chan);
	for (i = 0; i < m->nprocs; i++) {
		tracer__meta_free(&m->procs[i].meta);
		free(m->procs[i].dir);
	}
	for (i = 0; i < m->nstrs; i++)
		free(m->strs[i]);
	free(m->strs);
	free(m->names);
	free(m->names_hash);
	free(m->renames);
	free(m->srcs);
	free(m->procs);
	free(m->heap);
	free(m->msg);
	free(m->pay);
	free(m->dir);
	free(m);
}

/* ----------------------------------------------------------------------
 * Times.
 */

/* Nanoseconds per unit of the suffix at s (none: seconds); 0 if unknown. */
static uint64_t unit_ns(const char *s)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "", 1000000000 }, { "s", 1000000000 }, { "ms", 1000000 },
		{ "us", 1000 }, { "ns", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(s, units[i].name) == 0)
			return units[i].ns;
	return 0;
}

int tracer__parse_time(const char *s, uint64_t *ns, bool *relative)
{
	uint64_t whole = 0, frac = 0, scale = 1, unit;
	int digits = 0;

	*relative = *s == '+';
	s += *relative;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
	unit = unit_ns(s);
	if (!unit)
		return -EINVAL;
	if (whole > UINT64_MAX / unit)
		return -ERANGE;
	*ns = whole * unit + frac * unit / scale;
	return *ns < whole * unit ? -ERANGE : 0;
}
