/*
 * trace_build.h - build session directories by hand, exactly as
 * doc/session-files.md describes them (tracer/process.meta with
 * percent-encoded fields; channel files of CTF packets), for the unit tests
 * of the commands that read traces (test_view.c, test_export.c).
 *
 * Also: running a tracer__ctl_* command in a child with its output
 * captured (run_ctl), and removing the tree at the end (remove_one).
 *
 * Included once by a test, after it defines `static char root[]` (the
 * temporary directory, made with mkdtemp) and includes tap.h. Every
 * function bails out of the test on failure.
 */
#ifndef TRACER_TEST_TRACE_BUILD_H
#define TRACER_TEST_TRACE_BUILD_H

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "event_format.h"
#include "rb_layout.h"
#include "rb_record.h"

/* Not every test uses every builder. */
#define TB_FN	static __attribute__((unused))

TB_FN char *path_of(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* A new string: root/ then fmt. */
TB_FN char *path_of(const char *fmt, ...)
{
	char *rel, *path;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&rel, fmt, ap) < 0)
		bail_out("out of memory");
	va_end(ap);
	if (asprintf(&path, "%s/%s", root, rel) < 0)
		bail_out("out of memory");
	free(rel);
	return path;
}

/* mkdir -p root/rel */
TB_FN void make_dir(const char *rel)
{
	char *path = path_of("%s", rel);
	char *p = path + strlen(root);

	do {
		p = strchr(p + 1, '/');
		if (p)
			*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			bail_out("mkdir %s: %s", path, strerror(errno));
		if (p)
			*p = '/';
	} while (p);
	free(path);
}

TB_FN FILE *create(const char *rel, const char *mode)
{
	char *path = path_of("%s", rel);
	FILE *f = fopen(path, mode);

	if (!f)
		bail_out("cannot create %s: %s", path, strerror(errno));
	free(path);
	return f;
}

TB_FN void write_file(const char *rel, const char *text)
{
	FILE *f = create(rel, "w");

	fputs(text, f);
	fclose(f);
}

/* Percent-encode s as process.meta does (into a static buffer). */
TB_FN const char *pct(const char *s)
{
	static char buf[4][1024];
	static int next;
	char *out = buf[next++ % 4], *w = out;
	const unsigned char *p = (const unsigned char *)s;

	if (!*p)
		return "%";
	for (; *p; p++) {
		if (*p <= 0x20 || *p == '%' || *p == 0x7f)
			w += sprintf(w, "%%%02X", *p);
		else
			*w++ = (char)*p;
	}
	*w = '\0';
	return out;
}

/* A packet being built: header, then records. */
struct pkt {
	unsigned char buf[1 << 16];
	size_t len;
	uint64_t last_ts;		/* of the last record */
	uint64_t clock;			/* the time before the next record */
	int extended;			/* every header extended */
};

TB_FN void pkt_begin(struct pkt *p, uint32_t stream_id, uint32_t tid,
		      uint64_t ts)
{
	struct tracer_rb_packet h = { .magic = TRACER_CTF_MAGIC,
		.stream_id = stream_id, .timestamp_begin = ts, .tid = tid };

	memset(p->buf, 0, sizeof(p->buf));
	memcpy(p->buf, &h, sizeof(h));
	p->len = sizeof(h);
	p->last_ts = 0;
	p->clock = ts;
	p->extended = 0;
}

/* Append raw payload bytes at the end of the packet. */
TB_FN void put(struct pkt *p, const void *data, size_t n)
{
	if (p->len + n + 8 > sizeof(p->buf))
		bail_out("packet too large");
	memcpy(p->buf + p->len, data, n);
	p->len += n;
}

/* Append one value of type t, taken from ap, to the packet. */
TB_FN void put_arg(struct pkt *p, char t, va_list *ap)
{
	unsigned char ld[16] = { 0 };
	unsigned long long u;
	long double x;
	long long i;
	double d;
	const char *s;

	if (t == 'i') {
		i = va_arg(*ap, long long);
		put(p, &i, 8);
	} else if (t == 'd') {
		d = va_arg(*ap, double);
		put(p, &d, 8);
	} else if (t == 'D') {
		x = va_arg(*ap, long double);
		/* x86-64: 10 bytes of value, then padding stored as zeros */
		memcpy(ld, &x, LDBL_MANT_DIG == 64 ? 10 : sizeof(x));
		put(p, ld, 16);
	} else if (t == 's') {
		s = va_arg(*ap, const char *);
		put(p, s, strlen(s) + 1);
	} else {
		u = va_arg(*ap, unsigned long long);
		put(p, &u, 8);
	}
}

/*
 * Append a record with the values of types: i long long, u and p
 * unsigned long long, d double, D long double, s const char *.
 */
TB_FN void rec(struct pkt *p, uint32_t id, uint64_t ts, const char *types,
		...)
{
	size_t start = p->len, n;
	va_list ap;
	int compact;

	/* Room for an extended header; the payload moves up when the
	 * header is compact, as the writer makes it (rb_layout.h). */
	p->len += TRACER_RB_EXTENDED_SIZE;
	va_start(ap, types);
	for (; *types; types++)
		put_arg(p, *types, &ap);
	va_end(ap);
	p->len = (p->len + 7) & ~(size_t)7;
	n = p->len - start - TRACER_RB_EXTENDED_SIZE;
	compact = !p->extended && ts >= p->clock &&
		  !((ts - p->clock) >> TRACER_RB_TIME_BITS) &&
		  tracer__rb_compact_fits(id, (uint32_t)(n + 8));
	if (compact) {
		memmove(p->buf + start + TRACER_RB_COMPACT_SIZE,
			p->buf + start + TRACER_RB_EXTENDED_SIZE, n);
		p->len -= TRACER_RB_EXTENDED_SIZE - TRACER_RB_COMPACT_SIZE;
		memset(p->buf + p->len, 0,
		       TRACER_RB_EXTENDED_SIZE - TRACER_RB_COMPACT_SIZE);
	}
	tracer__rb_header_put(p->buf + start, compact, id,
			      (uint32_t)(p->len - start), ts, 0);
	p->last_ts = ts;
	p->clock = ts;
}

/* The packet header h in the layout of session format 2 (rb_layout.h). */
TB_FN void header_v2(const struct tracer_rb_packet *h, void *out)
{
	struct tracer_rb_packet_v2 v = {
		.magic = h->magic, .stream_id = h->stream_id,
		.stream_instance_id = h->stream_instance_id,
		.timestamp_begin = h->timestamp_begin,
		.timestamp_end = h->timestamp_end,
		.content_size = h->content_size, .packet_size = h->packet_size,
		.packet_seq_num = h->packet_seq_num,
		.events_discarded = h->events_discarded,
		.slot_records = h->slot_records, .tid = h->tid,
		.reserved = h->unit,
	};

	memcpy(out, &v, sizeof(v));
}

/* Close the packet (content = what was built, then pad bytes of padding)
 * and append it to f, its header laid out for session format `format`. */
TB_FN void pkt_write_format(struct pkt *p, FILE *f, size_t pad,
			    unsigned format)
{
	struct tracer_rb_packet h;

	memcpy(&h, p->buf, sizeof(h));
	h.content_size = p->len * 8;
	h.packet_size = (p->len + pad) * 8;
	/* As the writer does: at or after every record. */
	h.timestamp_end = h.timestamp_begin + 1000000;
	if (h.timestamp_end < p->last_ts)
		h.timestamp_end = p->last_ts;
	if (format == 2)
		header_v2(&h, p->buf);
	else
		memcpy(p->buf, &h, sizeof(h));
	fwrite(p->buf, 1, p->len + pad, f);
}

/* Close the packet and append it to f (pkt_write_format, today's format). */
TB_FN void pkt_write(struct pkt *p, FILE *f, size_t pad)
{
	pkt_write_format(p, f, pad, TRACER__SESSION_FORMAT);
}

/* Change a header field of the packet being built. */
TB_FN void pkt_set(struct pkt *p, size_t offset, uint64_t v, size_t size)
{
	memcpy(p->buf + offset, &v, size);
}

/* Set the events_discarded field of the packet being built. */
TB_FN void pkt_discarded(struct pkt *p, uint64_t n)
{
	pkt_set(p, offsetof(struct tracer_rb_packet, events_discarded), n,
		8);
}

/* Write the packet as pkt_write() would, then overwrite 8 bytes at
 * offset (content_size or packet_size) with v. */
TB_FN void pkt_write_raw(struct pkt *p, FILE *f, size_t offset, uint64_t v)
{
	struct tracer_rb_packet h;

	memcpy(&h, p->buf, sizeof(h));
	h.content_size = p->len * 8;
	h.packet_size = p->len * 8;
	memcpy(p->buf, &h, sizeof(h));
	memcpy(p->buf + offset, &v, 8);
	fwrite(p->buf, 1, p->len, f);
}

/* process.meta of session format `format` with the usual header lines,
 * then extra (raw) lines. */
TB_FN void write_meta_format(const char *dir, unsigned format, uint32_t pid,
			      const char *name, const char *extra)
{
	char *rel;
	FILE *f;

	if (asprintf(&rel, "%s/tracer", dir) < 0)
		bail_out("out of memory");
	make_dir(rel);
	free(rel);
	if (asprintf(&rel, "%s/tracer/process.meta", dir) < 0)
		bail_out("out of memory");
	f = create(rel, "w");
	fprintf(f, "tracer-process %u\npid %u\nppid 1\nname %s\n"
		"start_time 1763738412123456789\n"
		"clock_offset 1763730000000000000\nargv ./%s -v\n%s",
		format, pid, pct(name), pct(name), extra);
	fclose(f);
	free(rel);
}

/* process.meta of today's session format (write_meta_format). */
TB_FN void write_meta(const char *dir, uint32_t pid, const char *name,
		       const char *extra)
{
	write_meta_format(dir, TRACER__SESSION_FORMAT, pid, name, extra);
}

/* A callsite line. */
TB_FN char *callsite(unsigned id, int vital, const char *types,
		      const char *name, const char *format)
{
	char *line;

	if (asprintf(&line, "callsite %u %d %s 42 %s %s %s\n", id, vital,
		     types, pct("src/a file.c"), pct(name), pct(format)) < 0)
		bail_out("out of memory");
	return line;
}

/* ----------------------------------------------------------------------
 * Running a command.
 */

struct run {
	char *out, *err;
	size_t out_len, err_len;
	int status;
};

/* The contents of a file, NUL-terminated (empty if it cannot be read). */
TB_FN char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 65536, n = 0, got;
	char *buf = malloc(cap + 1);

	if (!buf)
		bail_out("out of memory");
	while (f && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap && !(buf = realloc(buf, (cap *= 2) + 1)))
			bail_out("out of memory");
	}
	if (f)
		fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Run fn(argv) (a tracer__ctl_* command) in a child, its stdout and
 * stderr in r. */
TB_FN void run_ctl(struct run *r, int (*fn)(int, char **), char **argv)
{
	char *out = path_of("ctl.out"), *err = path_of("ctl.err");
	int status, argc = 0;
	pid_t pid;

	while (argv[argc])
		argc++;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(99);
		status = fn(argc, argv);
		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r->out = read_all(out, &r->out_len);
	r->err = read_all(err, &r->err_len);
	free(out);
	free(err);
}

TB_FN void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* For nftw(): remove everything under root at the end. */
TB_FN int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

#endif /* TRACER_TEST_TRACE_BUILD_H */
