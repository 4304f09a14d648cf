/*
 * trace_dir.c - read what tracerd wrote for one traced process
 * (doc/session-files.md): decode process.meta, list the channel files, and
 * walk the records of a channel file one packet at a time.
 *
 * The files are never trusted: every field used is range-checked before
 * use, and a problem is reported as one line naming the file and where in
 * it. A channel file is read with pread(), one packet at a time into a
 * buffer reused from packet to packet, so a file of any size costs one
 * packet of memory; records are checked as they are reached, so everything
 * before a corruption can still be shown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "rb_layout.h"
#include "rb_record.h"
#include "trace_dir.h"
#include "open_regular.h"

static int fail(char *err, size_t err_size, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_size, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	return ret;
}

/* Make ret's message "cannot open 'PATH': strerror". */
static int fail_open(char *err, size_t err_size, int ret, const char *path)
{
	return fail(err, err_size, ret, "cannot open '%s': %s", path,
		    strerror(-ret));
}

/* Decimal digits at *p (at least one) into *v <= max; moves *p. */
static bool parse_dec(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0, d;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		d = (uint64_t)(*s - '0');
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return true;
}

/* A whole field as a decimal number <= max. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	return parse_dec(&s, max, v) && *s == '\0';
}

static bool parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (!parse_u64(s, UINT32_MAX, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

/* Grow an array to hold n + 1 elements: the array, or NULL (unchanged). */
static void *grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return arr;
	p = reallocarray(arr, ncap, elem);
	if (p)
		*cap = ncap;
	return p;
}

/* ----------------------------------------------------------------------
 * process.meta
 */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode a percent-encoded field in place; false if it is malformed. A
 * decoded NUL ends the string. */
static bool percent_decode(char *s)
{
	char *w = s;
	int hi, lo;

	if (strcmp(s, "%") == 0) {
		*s = '\0';
		return true;
	}
	if (*s == '\0')
		return false;
	for (; *s; s++) {
		if (*s != '%') {
			*w++ = *s;
			continue;
		}
		hi = hexval(s[1]);
		lo = hi < 0 ? -1 : hexval(s[2]);
		if (lo < 0)
			return false;
		*w++ = (char)(hi << 4 | lo);
		s += 2;
	}
	*w = '\0';
	return true;
}

/* Decode field s (in place) into a new string *out.
 * Returns 0, -EBADMSG (malformed), -ENOMEM. */
static int decode_dup(char *s, char **out)
{
	if (!percent_decode(s))
		return -EBADMSG;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

struct meta_parse {
	struct tracer_meta *m;
	size_t lineno;
	const char *why;		/* set with -EBADMSG */
	bool have_pid, have_name;
	size_t callsites_cap, threads_cap, argv_cap;
};

/* Fail a line parser: -EBADMSG, saying why. */
static int bad(struct meta_parse *p, const char *why)
{
	p->why = why;
	return -EBADMSG;
}

/* decode_dup() for a line parser. */
static int field_string(struct meta_parse *p, char *s, char **out)
{
	int ret = decode_dup(s, out);

	return ret == -EBADMSG ? bad(p, "bad percent-encoding") : ret;
}

static int parse_pid(struct meta_parse *p, char **f, size_t n)
{
	(void)n;
	p->have_pid = true;
	return parse_u32(f[0], &p->m->pid) ? 0 : bad(p, "bad PID");
}

static int parse_ppid(struct meta_parse *p, char **f, size_t n)
{
	(void)n;
	return parse_u32(f[0], &p->m->ppid) ? 0 : bad(p, "bad PPID");
}

static int parse_name(struct meta_parse *p, char **f, size_t n)
{
	(void)n;
	if (p->have_name)
		return bad(p, "second name line");
	p->have_name = true;
	return field_string(p, f[0], &p->m->name);
}

static int parse_start_time(struct meta_parse *p, char **f, size_t n)
{
	(void)n;
	return parse_u64(f[0], UINT64_MAX, &p->m->start_time) ? 0 :
		bad(p, "bad time");
}

static int parse_clock_offset(struct meta_parse *p, char **f, size_t n)
{
	bool neg = f[0][0] == '-';
	uint64_t v;

	(void)n;
	/* signed, but a writer may print it unsigned: accept both */
	if (!parse_u64(f[0] + neg, neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX,
		       &v))
		return bad(p, "bad offset");
	p->m->clock_offset = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int parse_argv(struct meta_parse *p, char **f, size_t n)
{
	struct tracer_meta *m = p->m;
	char **v;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		v = grow(m->argv, &p->argv_cap, m->argc, sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->argv = v;
		ret = field_string(p, f[i], &m->argv[m->argc]);
		if (ret)
			return ret;
		m->argc++;
	}
	return 0;
}

static int parse_thread(struct meta_parse *p, char **f, size_t n)
{
	struct tracer_meta *m = p->m;
	struct tracer_thread *t;
	int ret;

	t = grow(m->threads, &p->threads_cap, m->nthreads, sizeof(*t));
	if (!t)
		return -ENOMEM;
	m->threads = t;
	t += m->nthreads;
	memset(t, 0, sizeof(*t));
	if (!parse_u32(f[0], &t->tid))
		return bad(p, "bad TID");
	if (n > 2 && !parse_u64(f[2], UINT64_MAX, &t->since))
		return bad(p, "bad SINCE");
	ret = field_string(p, f[1], &t->name);
	if (!ret)
		m->nthreads++;
	return ret;
}

/* The plain fields of a callsite line: ID VITAL TYPES LINE. */
static int callsite_numbers(struct meta_parse *p, struct tracer__site *cs,
			    char **f)
{
	const char *types = f[2];
	uint64_t id;

	if (!parse_u64(f[0], UINT32_MAX, &id) || id == 0)
		return bad(p, "bad ID");
	cs->id = (uint32_t)id;
	if (strcmp(f[1], "0") != 0 && strcmp(f[1], "1") != 0)
		return bad(p, "bad VITAL");
	cs->vital = f[1][0] == '1';
	if (strcmp(types, "-") == 0)
		types = "";
	else if (!*types || !tracer__types_valid(types))
		return bad(p, "bad TYPES");
	if (!parse_u32(f[3], &cs->line))
		return bad(p, "bad LINE");
	cs->types = strdup(types);
	return cs->types ? 0 : -ENOMEM;
}

static int parse_callsite(struct meta_parse *p, char **f, size_t n)
{
	struct tracer_meta *m = p->m;
	struct tracer__site *cs;
	int ret;

	(void)n;
	cs = grow(m->callsites, &p->callsites_cap, m->ncallsites,
		  sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	m->callsites = cs;
	cs += m->ncallsites++;		/* filled in place: freed on error */
	memset(cs, 0, sizeof(*cs));
	cs->meta_line = (uint32_t)p->lineno;
	ret = callsite_numbers(p, cs, f);
	if (!ret)
		ret = field_string(p, f[4], &cs->file);
	if (!ret)
		ret = field_string(p, f[5], &cs->name);
	if (!ret)
		ret = field_string(p, f[6], &cs->format);
	return ret;
}

static const struct meta_kind {
	const char *word;
	size_t nfields;			/* after the word, at least */
	int (*parse)(struct meta_parse *p, char **f, size_t n);
} meta_kinds[] = {
	{ "pid", 1, parse_pid },
	{ "ppid", 1, parse_ppid },
	{ "name", 1, parse_name },
	{ "start_time", 1, parse_start_time },
	{ "clock_offset", 1, parse_clock_offset },
	{ "argv", 0, parse_argv },
	{ "callsite", 7, parse_callsite },
	{ "thread", 2, parse_thread },
};

/* Split line at single spaces into (*f)[0..*n), *f grown as needed. */
static int split(char *line, char ***f, size_t *cap, size_t *n)
{
	char **v;

	*n = 0;
	for (;;) {
		v = grow(*f, cap, *n, sizeof(**f));
		if (!v)
			return -ENOMEM;
		*f = v;
		v[(*n)++] = line;
		line = strchr(line, ' ');
		if (!line)
			return 0;
		*line++ = '\0';
	}
}

static const char unsupported_version[] = "unsupported format version";

/* The first line: "tracer-process VERSION". */
static int parse_first(struct meta_parse *p, char **f, size_t n)
{
	uint64_t version;

	if (strcmp(f[0], "tracer-process") != 0)
		return bad(p, "not a process.meta file (expected '"
			   TRACER__SESSION_LINE "')");
	if (n < 2 || !parse_u64(f[1], UINT32_MAX, &version))
		return bad(p, "malformed tracer-process line");
	p->m->version = (uint32_t)version;
	if (version < TRACER__SESSION_FORMAT_OLDEST ||
	    version > TRACER__SESSION_FORMAT)
		return bad(p, unsupported_version);
	return 0;
}

static int parse_line(struct meta_parse *p, char **f, size_t n)
{
	size_t i;

	if (p->lineno == 1)
		return parse_first(p, f, n);
	for (i = 0; i < sizeof(meta_kinds) / sizeof(meta_kinds[0]); i++) {
		if (strcmp(f[0], meta_kinds[i].word) != 0)
			continue;
		if (n - 1 < meta_kinds[i].nfields)
			return bad(p, "missing fields");
		return meta_kinds[i].parse(p, f + 1, n - 1);
	}
	return 0;			/* unknown: ignored */
}

/* Report a line's failure: "PATH:LINE: malformed WORD line: why". */
static int line_error(const struct meta_parse *p, const char *path,
		      const char *word, int ret, char *err, size_t err_size)
{
	if (ret != -EBADMSG)
		return fail(err, err_size, ret, "%s: %s", path,
			    strerror(-ret));
	if (p->why == unsupported_version)
		return fail(err, err_size, -EPROTO, "%s:1: %s %" PRIu32, path,
			    p->why, p->m->version);
	if (p->lineno == 1)
		return fail(err, err_size, ret, "%s:1: %s", path, p->why);
	return fail(err, err_size, ret, "%s:%zu: malformed %s line: %s",
		    path, p->lineno, word, p->why);
}

/* By id, then by line in the file. */
static int cmp_callsite(const void *a, const void *b)
{
	const struct tracer__site *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->meta_line < y->meta_line ? -1 : x->meta_line > y->meta_line;
}

/* After the last line: required lines, call sites sorted and unique. */
static int meta_finish(struct meta_parse *p, const char *path, char *err,
		       size_t err_size)
{
	struct tracer_meta *m = p->m;
	struct tracer__site *cs = m->callsites;
	size_t i;

	if (p->lineno == 0)
		return fail(err, err_size, -EBADMSG, "%s: empty file "
			    "(expected '" TRACER__SESSION_LINE "')", path);
	if (!p->have_pid || !p->have_name)
		return fail(err, err_size, -EBADMSG, "%s: missing '%s' line",
			    path, p->have_pid ? "name" : "pid");
	if (m->ncallsites)
		qsort(cs, m->ncallsites, sizeof(*cs), cmp_callsite);
	for (i = 1; i < m->ncallsites; i++)
		if (cs[i].id == cs[i - 1].id)
			return fail(err, err_size, -EBADMSG, "%s:%" PRIu32
				    ": malformed callsite line: duplicate ID "
				    "%" PRIu32 " (first on line %" PRIu32 ")",
				    path, cs[i].meta_line, cs[i].id,
				    cs[i - 1].meta_line);
	return 0;
}

/*
 * Parse every line of the open file f. A last line without its newline
 * is one tracerd is still appending (it writes through a buffer, flushed
 * wherever it fills: a reader of a live session, view --follow, sees
 * part of a call site's line): left for the next read, once whole.
 */
static int meta_read(struct meta_parse *p, FILE *f, const char *path,
		     char *err, size_t err_size)
{
	char *line = NULL, **fields = NULL;
	size_t line_cap = 0, fields_cap = 0, n = 0;
	ssize_t len;
	int ret = 0;

	while (!ret && (len = getline(&line, &line_cap, f)) >= 0) {
		if (len > 0 && line[len - 1] != '\n' && p->lineno > 0)
			break;		/* still being written */
		p->lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		ret = split(line, &fields, &fields_cap, &n);
		if (!ret)
			ret = parse_line(p, fields, n);
		if (ret)
			ret = line_error(p, path, n ? fields[0] : "", ret,
					 err, err_size);
	}
	if (!ret && ferror(f))
		ret = fail(err, err_size, -EIO, "cannot read '%s': %s", path,
			   strerror(errno));
	free(fields);
	free(line);
	return ret;
}

/* open_regular()'s failure as err: "cannot open 'PATH': ...". */
static int fail_regular(char *err, size_t err_size, int ret, const char *path)
{
	if (ret == -EINVAL)
		return fail(err, err_size, ret, "cannot open '%s': not a "
			    "regular file", path);
	return fail_open(err, err_size, ret, path);
}

int tracer__meta_load(struct tracer_meta *m, const char *path, char *err,
		      size_t err_size)
{
	struct meta_parse p = { .m = m };
	struct stat st;
	FILE *f;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	fd = tracer__open_regular(path, &st);
	if (fd < 0)
		return fail_regular(err, err_size, fd, path);
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return fail_open(err, err_size, ret, path);
	}
	ret = meta_read(&p, f, path, err, err_size);
	fclose(f);
	if (!ret)
		ret = meta_finish(&p, path, err, err_size);
	if (ret)
		tracer__meta_free(m);
	return ret;
}

void tracer__meta_free(struct tracer_meta *m)
{
	size_t i;

	for (i = 0; i < m->ncallsites; i++) {
		free(m->callsites[i].types);
		free(m->callsites[i].file);
		free(m->callsites[i].name);
		free(m->callsites[i].format);
	}
	for (i = 0; i < m->nthreads; i++)
		free(m->threads[i].name);
	for (i = 0; i < m->argc; i++)
		free(m->argv[i]);
	free(m->callsites);
	free(m->threads);
	free(m->argv);
	free(m->name);
	memset(m, 0, sizeof(*m));
}

const struct tracer__site *tracer__meta_callsite(
	const struct tracer_meta *m, uint32_t id)
{
	size_t lo = 0, hi = m->ncallsites, mid;

	/* ids are usually 1..N: try the direct slot first */
	if (id >= 1 && id <= hi && m->callsites[id - 1].id == id)
		return &m->callsites[id - 1];
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->callsites[mid].id == id)
			return &m->callsites[mid];
		if (m->callsites[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ----------------------------------------------------------------------
 * Channel files of a process directory.
 */

/* CHANNEL-TID[.N] into *cn (not its path); false if name is not one. */
static bool parse_chan_name(const char *name, struct tracer_chan_name *cn)
{
	uint64_t tid, gen = 0;

	if (strncmp(name, "default-", 8) == 0) {
		cn->vital = 0;
		name += 8;
	} else if (strncmp(name, "vital-", 6) == 0) {
		cn->vital = 1;
		name += 6;
	} else {
		return false;
	}
	if (!parse_dec(&name, UINT32_MAX, &tid))
		return false;
	if (*name == '.' && (name++, !parse_dec(&name, UINT32_MAX, &gen)))
		return false;
	if (*name != '\0')
		return false;
	cn->tid = (uint32_t)tid;
	cn->gen = (uint32_t)gen;
	return true;
}

static int cmp_chan_name(const void *a, const void *b)
{
	const struct tracer_chan_name *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return x->vital - y->vital;
}

/* Append dir/name to the list if name is a channel file's. */
static int add_chan_name(struct tracer_chan_name **names, size_t *count,
			 size_t *cap, const char *dir, const char *name)
{
	struct tracer_chan_name cn, *v;

	if (!parse_chan_name(name, &cn))
		return 0;
	if (asprintf(&cn.path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	v = grow(*names, cap, *count, sizeof(*v));
	if (!v) {
		free(cn.path);
		return -ENOMEM;
	}
	*names = v;
	v[(*count)++] = cn;
	return 0;
}

int tracer__dir_channels(const char *dir, struct tracer_chan_name **names,
			 size_t *count, char *err, size_t err_size)
{
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int ret = 0;

	*names = NULL;
	*count = 0;
	d = opendir(dir);
	if (!d)
		return fail_open(err, err_size, -errno, dir);
	while (!ret && (errno = 0, de = readdir(d)))
		ret = add_chan_name(names, count, &cap, dir, de->d_name);
	if (!ret && errno)
		ret = fail(err, err_size, -errno, "cannot read '%s': %s",
			   dir, strerror(errno));
	else if (ret)
		fail(err, err_size, ret, "%s: %s", dir, strerror(-ret));
	closedir(d);
	if (ret) {
		tracer__chan_names_free(*names, *count);
		*names = NULL;
		*count = 0;
		return ret;
	}
	if (*count)
		qsort(*names, *count, sizeof(**names), cmp_chan_name);
	return 0;
}

void tracer__chan_names_free(struct tracer_chan_name *names, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		free(names[i].path);
	free(names);
}

/* ----------------------------------------------------------------------
 * Reading a channel file.
 */

int tracer__chan_open(struct tracer_chan *c, const char *path,
		      uint32_t format, char *err, size_t err_size)
{
	struct stat st;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (format < TRACER__SESSION_FORMAT_OLDEST ||
	    format > TRACER__SESSION_FORMAT)
		return fail(err, err_size, -EINVAL, "%s: unsupported format "
			    "version %" PRIu32, path, format);
	c->format = format;
	c->fd = tracer__open_regular(path, &st);
	if (c->fd < 0) {
		int ret = c->fd;

		c->fd = -1;
		return fail_regular(err, err_size, ret, path);
	}
	c->path = strdup(path);
	if (!c->path)
		return fail(err, err_size, -ENOMEM, "%s: out of memory",
			    path);
	c->file_size = (uint64_t)st.st_size;
	posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

void tracer__chan_close(struct tracer_chan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void tracer__chan_park(struct tracer_chan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->buf_size = 0;
}

bool tracer__chan_parked(const struct tracer_chan *c)
{
	return c->path && c->fd < 0;
}

static int reserve(struct tracer_chan *c, uint64_t n, char *err,
		   size_t err_size);
static int pread_full(int fd, void *buf, size_t n, uint64_t off);
static int read_error(const struct tracer_chan *c, uint64_t off, int ret,
		      char *err, size_t err_size);

/* Reopen c's file and read its current packet again. 0 or -errno. */
static int reopen(struct tracer_chan *c, char *err, size_t err_size)
{
	struct stat st;
	int ret;

	c->fd = tracer__open_regular(c->path, &st);
	if (c->fd < 0) {
		ret = c->fd;
		c->fd = -1;
		return fail_regular(err, err_size, ret, c->path);
	}
	if ((uint64_t)st.st_size < c->file_size)
		return fail(err, err_size, -EBADMSG, "%s: the file shrank "
			    "while being read", c->path);
	posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (!c->content)
		return 0;
	ret = reserve(c, c->content, err, err_size);
	if (ret)
		return ret;
	ret = pread_full(c->fd, c->buf, c->content, c->packet_offset);
	return ret ? read_error(c, c->packet_offset, ret, err, err_size) : 0;
}

int tracer__chan_unpark(struct tracer_chan *c, struct tracer_chan_record *rec,
			char *err, size_t err_size)
{
	int ret = reopen(c, err, err_size);

	if (ret) {
		tracer__chan_park(c);
		return ret;
	}
	/* The record last returned is in the current packet. */
	if (rec && !rec->lost && c->content)
		rec->payload = c->buf + rec->offset + rec->header_size;
	return 0;
}

/* "PATH: packet at offset N: ..." into err; returns -EBADMSG. */
static int bad_packet(const struct tracer_chan *c, uint64_t off, char *err,
		      size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int bad_packet(const struct tracer_chan *c, uint64_t off, char *err,
		      size_t err_size, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, err_size, "%s: packet at offset %" PRIu64 ": ",
		     c->path, off);
	if (n >= 0 && (size_t)n < err_size) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* n bytes at file offset off into buf. Returns 0, -errno, or -ENODATA if
 * the file ends first. */
static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = pread(fd, (char *)buf + done, n - done,
			  (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		done += (size_t)r;
	}
	return 0;
}

static int read_error(const struct tracer_chan *c, uint64_t off, int ret,
		      char *err, size_t err_size)
{
	if (ret == -ENODATA)
		return bad_packet(c, off, err, err_size, "the file ends "
				  "early (it shrank while being read)");
	return fail(err, err_size, ret, "cannot read '%s': %s", c->path,
		    strerror(-ret));
}

/* The checks of a packet header at file offset off, left bytes before the
 * end of the file. */
static int check_packet(const struct tracer_chan *c,
			const struct tracer_rb_packet *h, uint64_t off,
			uint64_t left, char *err, size_t err_size)
{
	uint64_t ps = h->packet_size, cs = h->content_size;

	if (h->magic != TRACER_CTF_MAGIC)
		return bad_packet(c, off, err, err_size, "bad magic 0x%08"
				  PRIx32, h->magic);
	if (ps % 64 || ps / 8 < TRACER_RB_PACKET_SIZE ||
	    ps / 8 > TRACER_MAX_PACKET)
		return bad_packet(c, off, err, err_size, "bad packet size %"
				  PRIu64 " bits", ps);
	if (ps / 8 > left)
		return bad_packet(c, off, err, err_size, "truncated file: "
				  "packet of %" PRIu64 " bytes, %" PRIu64
				  " bytes left", ps / 8, left);
	if (cs % 64 || cs / 8 < TRACER_RB_PACKET_SIZE)
		return bad_packet(c, off, err, err_size, "bad content size %"
				  PRIu64 " bits", cs);
	if (cs > ps)
		return bad_packet(c, off, err, err_size, "content size %"
				  PRIu64 " bits exceeds packet size %" PRIu64
				  " bits", cs, ps);
	/* tracerd converts TSC ticks before it writes (doc/clock.md). */
	if (h->unit != TRACER_RB_UNIT_NS)
		return bad_packet(c, off, err, err_size, "times in unit %"
				  PRIu32 " (TSC ticks?), not nanoseconds",
				  h->unit);
	return 0;
}

/* Make c->buf hold at least n bytes. */
static int reserve(struct tracer_chan *c, uint64_t n, char *err,
		   size_t err_size)
{
	unsigned char *buf;

	if (n <= c->buf_size)
		return 0;
	buf = realloc(c->buf, n);
	if (!buf)
		return fail(err, err_size, -ENOMEM, "%s: no memory for a "
			    "packet of %" PRIu64 " bytes", c->path, n);
	c->buf = buf;
	c->buf_size = n;
	return 0;
}

/* A packet header of session format 2 (TRACER__SESSION_FORMAT_OLDEST)
 * in today's layout. */
static void from_v2(struct tracer_rb_packet *h)
{
	struct tracer_rb_packet_v2 old;

	memcpy(&old, h, sizeof(old));
	*h = (struct tracer_rb_packet){
		.magic = old.magic, .stream_id = old.stream_id,
		.stream_instance_id = old.stream_instance_id,
		.slot_records = old.slot_records, .unit = TRACER_RB_UNIT_NS,
		.tid = old.tid, .timestamp_begin = old.timestamp_begin,
		.timestamp_end = old.timestamp_end,
		.content_size = old.content_size,
		.packet_size = old.packet_size,
		.packet_seq_num = old.packet_seq_num,
		.events_discarded = old.events_discarded,
	};
}

/* The packet header at file offset off into *h, in today's layout.
 * Returns 0, -ENODATA (the file ends first) or the errno of pread. */
static int read_header(const struct tracer_chan *c, uint64_t off,
		       struct tracer_rb_packet *h)
{
	int ret = pread_full(c->fd, h, sizeof(*h), off);

	if (!ret && c->format == TRACER__SESSION_FORMAT_OLDEST)
		from_v2(h);		/* the one older format read */
	return ret;
}

/* Is there a packet header that passes the checks at file offset off?
 * 1, 0, or a negative errno of pread. */
static int header_at(const struct tracer_chan *c, uint64_t off,
		     struct tracer_rb_packet *h)
{
	char ignored[8];
	int ret;

	if (c->file_size - off < sizeof(*h))
		return 0;
	ret = read_header(c, off, h);
	if (ret)
		return ret == -ENODATA ? 0 : ret;
	return check_packet(c, h, off, c->file_size - off, ignored,
			    sizeof(ignored)) == 0;
}

/*
 * After damage at file offset off: the offset of the next intact packet
 * (8-byte aligned, like every packet of a file), or the file size. Looks
 * for the magic a block at a time, then checks the whole header.
 */
static uint64_t resync(const struct tracer_chan *c, uint64_t off)
{
	uint32_t block[8192];
	struct tracer_rb_packet h;
	uint64_t pos = (off + 8) & ~(uint64_t)7;
	size_t i, n;
	ssize_t r;

	while (pos < c->file_size) {
		r = pread(c->fd, block, sizeof(block), (off_t)pos);
		if (r <= 0)
			break;
		n = (size_t)r / 8;
		for (i = 0; i < n; i++)
			if (block[2 * i] == TRACER_CTF_MAGIC &&
			    header_at(c, pos + 8 * i, &h) == 1)
				return pos + 8 * i;
		if (n == 0)
			break;
		pos += 8 * n;
	}
	return c->file_size;
}

/* The packet at off is damaged (err says how): go on after it. */
static int skip_damage(struct tracer_chan *c, uint64_t off, int ret,
		       char *err, size_t err_size)
{
	size_t len = strlen(err);

	c->next_packet = resync(c, off);
	c->content = c->record = 0;
	c->last_timestamp = 0;
	if (c->next_packet < c->file_size)
		snprintf(err + len, err_size - len, " (reading resumes at "
			 "offset %" PRIu64 ")", c->next_packet);
	else
		snprintf(err + len, err_size - len, " (nothing readable "
			 "after it)");
	return ret;
}

/* Losses announced by the header h of a packet that is kept: returned as
 * a "lost" record before its records. */
static void note_losses(struct tracer_chan *c,
			const struct tracer_rb_packet *h)
{
	if (h->events_discarded > c->discarded) {
		c->pending_lost = h->events_discarded - c->discarded;
		c->lost_since = c->any_packet ? c->prev_end : 0;
		c->lost_at = h->timestamp_begin;
	}
}

/* Take the header h at off as the current packet; its content is read
 * unless it ends before c->skip_before. Returns 1 or an error. */
static int take_packet(struct tracer_chan *c, const struct tracer_rb_packet *h,
		       uint64_t off, char *err, size_t err_size)
{
	int ret;

	c->next_packet = off + h->packet_size / 8;
	c->content = c->record = 0;
	if (h->timestamp_end >= c->skip_before) {
		note_losses(c, h);
		ret = reserve(c, h->content_size / 8, err, err_size);
		if (ret)
			return ret;
		ret = pread_full(c->fd, c->buf, h->content_size / 8, off);
		if (ret)
			return read_error(c, off, ret, err, err_size);
		c->content = h->content_size / 8;
		c->record = TRACER_RB_PACKET_SIZE;
		c->clock = h->timestamp_begin;
	}
	c->packet_offset = off;
	c->discarded = h->events_discarded;
	c->prev_end = h->timestamp_end;
	c->any_packet = true;
	c->tid = h->tid;
	c->stream_id = h->stream_id;
	return 1;
}

/* Read the packet at c->next_packet. Returns 1, 0 at the end of the
 * file, or an error. */
static int read_packet(struct tracer_chan *c, char *err, size_t err_size)
{
	uint64_t off = c->next_packet, left = c->file_size - off;
	struct tracer_rb_packet h;
	int ret;

	if (left == 0)
		return 0;
	if (left < sizeof(h)) {
		bad_packet(c, off, err, err_size, "truncated file: %" PRIu64
			   " bytes left for an 80-byte header", left);
		c->next_packet = c->file_size;
		return -EBADMSG;
	}
	ret = read_header(c, off, &h);
	if (ret)
		return read_error(c, off, ret, err, err_size);
	ret = check_packet(c, &h, off, left, err, err_size);
	if (ret)
		return skip_damage(c, off, ret, err, err_size);
	return take_packet(c, &h, off, err, err_size);
}

/* Check and return the record at c->record of the current packet. */
static int take_record(struct tracer_chan *c, struct tracer_chan_record *rec,
		       char *err, size_t err_size)
{
	uint64_t off = c->record, left = c->content - off, clock = c->clock;
	struct tracer_rb_record r;

	if (left < TRACER_RB_COMPACT_SIZE)
		return bad_packet(c, c->packet_offset, err, err_size,
				  "record at offset %" PRIu64 ": only %"
				  PRIu64 " bytes left for its header", off,
				  left);
	if (tracer__rb_record_get(c->buf + off, left, &clock, &r))
		return bad_packet(c, c->packet_offset, err, err_size,
				  "record at offset %" PRIu64 ": bad header: "
				  "size %" PRIu64 " (%" PRIu64 " bytes left in "
				  "the packet content)", off,
				  tracer__rb_header_claims(c->buf + off, left),
				  left);
	if (r.timestamp < c->last_timestamp)
		return bad_packet(c, c->packet_offset, err, err_size,
				  "record at offset %" PRIu64 ": timestamp %"
				  PRIu64 " is before the previous record's %"
				  PRIu64, off, r.timestamp,
				  c->last_timestamp);
	rec->id = r.id;
	rec->tid = c->tid;
	rec->timestamp = r.timestamp;
	rec->packet_offset = c->packet_offset;
	rec->offset = off;
	rec->payload = r.payload;
	rec->payload_size = r.payload_size;
	rec->header_size = r.header_size;
	rec->lost = 0;
	rec->lost_since = 0;
	c->record = off + r.size;
	c->clock = clock;
	c->last_timestamp = r.timestamp;
	return 1;
}

/* The "lost" record announced by the current packet. */
static int take_lost(struct tracer_chan *c, struct tracer_chan_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->lost = c->pending_lost;
	rec->lost_since = c->lost_since;
	rec->timestamp = c->lost_at > c->last_timestamp ? c->lost_at :
			 c->last_timestamp;
	rec->tid = c->tid;
	rec->packet_offset = c->packet_offset;
	c->pending_lost = 0;
	return 1;
}

int tracer__chan_next(struct tracer_chan *c, struct tracer_chan_record *rec,
		      char *err, size_t err_size)
{
	int ret;

	while (c->record >= c->content && !c->pending_lost) {
		ret = read_packet(c, err, err_size);
		if (ret <= 0)
			return ret;
	}
	if (c->pending_lost)
		return take_lost(c, rec);
	ret = take_record(c, rec, err, err_size);
	if (ret == -EBADMSG) {
		/* The rest of this packet cannot be trusted; the next can. */
		size_t len = strlen(err);

		snprintf(err + len, err_size - len, " (rest of the packet "
			 "skipped)");
		c->record = c->content;
	}
	return ret;
}
