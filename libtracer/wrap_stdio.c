/*
 * wrap_stdio.c - stdio at the FILE level: a stream's reads, writes and
 * formatted output, recorded as libc:* events (wrap.h explains the
 * wrappers; wrap_io.c records fopen() and fclose()).
 *
 * A stream's own read() and write() calls happen inside the C library,
 * where they cannot be interposed: what a program reads and writes
 * through stdio is seen here, one event (or pair) per call of the
 * program's, with the descriptor under the stream (-1 for a stream on
 * memory: fmemopen, open_memstream, fopencookie):
 *
 *   libc:fread_entry   fd 3 size 1 count 32768
 *   libc:fread_exit    fd 3 result 32768
 *   libc:fread_exit    fd 3 result 1234 eof
 *   libc:fwrite        fd 1 size 1 count 33 result 33
 *   libc:printf        fd 1 result 12
 *   libc:fprintf       fd 2 result -1 errno EPIPE
 *
 * Reads are entry/exit pairs, writes one event after the call. A read
 * is where a program waits for its input (a pipe whose writer is slow, a
 * terminal, a socket under fdopen()): the pair's time is the time it
 * waited, which is what a user looks for in a slow reader. A stream
 * write only waits when its buffer is flushed into a full pipe or a slow
 * device, and output calls come by the line or the field (printf in a
 * loop, fputs per line): one event each keeps their cost at half a
 * pair's. (The flush's time shows as the gap before the event.)
 *
 * Which calls: what programs call. glibc's unlocked variants (gnulib's
 * unlocked-io makes coreutils call fread_unlocked, fwrite_unlocked,
 * fputs_unlocked, ...) and the fortified entry points of a program built
 * with _FORTIFY_SOURCE (Debian builds with it: __printf_chk,
 * __fprintf_chk, __fread_chk, __fgets_chk, ...) record the same event as
 * the plain call, and the va_list forms (vprintf, vfprintf, vdprintf)
 * that of printf, fprintf and dprintf: what a user looks for is "where
 * does it read", not which of glibc's names was linked. (What the
 * program's headers made of its calls decides: an optimised getline() is
 * an inline call of __getdelim(), libc:getdelim with delim 10, and a
 * fortified vprintf() one of __vfprintf_chk(stdout, ...), libc:fprintf.)
 * All the names a call may take share one pair of call sites (one
 * always-inlined body per event), so that a filter names the event once,
 * and each entry point with its events off is still a load, a branch and
 * a tail call (the recording is out of line). Not wrapped:
 * the calls of one character (fputc, putc, getc, fgetc and their
 * unlocked forms): getc_unlocked and putc_unlocked are macros that
 * touch the buffer without a call, and a call per character would cost
 * more than the program's own work; snprintf and sprintf (no stream).
 *
 * The end of a read. A read that came up short (fread fewer items than
 * asked, fgets NULL, getline -1) ends its exit event with " eof" or
 * " errno ENAME", from the stream's indicators as feof() and ferror()
 * would give them right after the call, read with feof_unlocked() and
 * ferror_unlocked(): the wrapper never takes the stream's lock (the
 * program may hold it, and the call just released it). They are plain
 * flags, sticky until clearerr(): an unlocked read sees the value the
 * call left unless another thread uses the same stream at the same time,
 * whose calls would interleave with the program's own anyway. The
 * descriptor is fileno_unlocked()'s, read the same way (it only changes
 * with freopen() and fclose()).
 *
 * Nothing changes for the program: the real call gets the program's
 * arguments (the fortified ones their object sizes and flags, checked by
 * the C library as untraced), the stream's buffering is untouched, and
 * errno is what the call left. The library's own messages (TRACER_VERBOSE,
 * written with the guard raised) are not recorded.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "wrap.h"

/* glibc's bits/stdio.h makes some of these macros when optimizing. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef getline

/*
 * The fortified entry points (glibc's bits/stdio2-decl.h declares them
 * only under _FORTIFY_SOURCE). flag: the level's check of %n and
 * positional arguments, passed on as it came.
 */
WRAP_API int __printf_chk(int flag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
WRAP_API int __vprintf_chk(int flag, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
WRAP_API int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
WRAP_API int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
WRAP_API int __dprintf_chk(int fd, int flag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
WRAP_API int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
WRAP_API size_t __fread_chk(void *p, size_t plen, size_t size, size_t n,
			    FILE *f);
WRAP_API size_t __fread_unlocked_chk(void *p, size_t plen, size_t size,
				     size_t n, FILE *f);
WRAP_API char *__fgets_chk(char *s, size_t slen, int n, FILE *f);
WRAP_API char *__fgets_unlocked_chk(char *s, size_t slen, int n, FILE *f);
WRAP_API ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);

/* The entry point a shared wrapper forwards to (a constant once inlined). */
enum how {
	HOW_PLAIN,		/* fread */
	HOW_UNLOCKED,		/* fread_unlocked */
	HOW_CHK,		/* __fread_chk */
	HOW_UNLOCKED_CHK,	/* __fread_unlocked_chk */
	HOW_INTERNAL,		/* __getdelim */
};

/*
 * The shared bodies below are always inlined: each entry point gets its
 * own copy, whose `how` is a constant, so that a call with its events off
 * is still one load, one branch and a tail call. Their call sites are
 * static variables of the (one) function, so all copies share them. The
 * recording itself (STDIO_SLOW) is a function of its own, given the call
 * sites: the path with events off saves no register for it.
 */
#define STDIO_BODY	static tracer_always_inline
#define STDIO_SLOW	static __attribute__((noinline))
typedef const struct tracer_callsite cs_t;

#define stream_fd(f)	tracer__wrap_stream_fd(f)

/*
 * How a read that came up short ended: " eof" (the stream's end-of-file
 * indicator is set), else "", with *en the errno (TRACER_ARG_ERRNO) when
 * the stream's error indicator is set (err: errno as the call left it),
 * or when the call failed without setting either (getdelim()'s EINVAL or
 * ENOMEM).
 */
static const char *read_end(FILE *f, int err, int failed, int64_t *en)
{
	*en = 0;
	if (ferror_unlocked(f)) {
		*en = err;
		return "";
	}
	if (feof_unlocked(f))
		return " eof";
	if (failed)
		*en = err;
	return "";
}

/* ---- reading ------------------------------------------------------------ */

WRAP_DEFINE_REAL(size_t, fread, (void *p, size_t size, size_t n, FILE *f),
		 (p, size, n, f))
WRAP_DEFINE_REAL(size_t, fread_unlocked,
		 (void *p, size_t size, size_t n, FILE *f), (p, size, n, f))
WRAP_DEFINE_REAL(size_t, __fread_chk,
		 (void *p, size_t plen, size_t size, size_t n, FILE *f),
		 (p, plen, size, n, f))
WRAP_DEFINE_REAL(size_t, __fread_unlocked_chk,
		 (void *p, size_t plen, size_t size, size_t n, FILE *f),
		 (p, plen, size, n, f))

STDIO_BODY size_t call_fread(enum how how, void *p, size_t plen, size_t size,
			     size_t n, FILE *f)
{
	switch (how) {
	case HOW_UNLOCKED:
		return WRAP_REAL(fread_unlocked)(p, size, n, f);
	case HOW_CHK:
		return WRAP_REAL(__fread_chk)(p, plen, size, n, f);
	case HOW_UNLOCKED_CHK:
		return WRAP_REAL(__fread_unlocked_chk)(p, plen, size, n, f);
	default:
		return WRAP_REAL(fread)(p, size, n, f);
	}
}

STDIO_SLOW size_t traced_fread(cs_t *cs_in, cs_t *cs_out, enum how how,
				void *p, size_t plen, size_t size, size_t n,
				FILE *f)
{
	const char *es = "";
	int64_t en = 0;
	int fd = stream_fd(f);
	size_t ret;

	if (WRAP_ON(*cs_in))
		WRAP_EMIT(*cs_in, fd, size, n);
	ret = call_fread(how, p, plen, size, n, f);
	if (WRAP_ON(*cs_out)) {
		if (size && ret < n)
			es = read_end(f, errno, 0, &en);
		WRAP_EMIT_E(*cs_out, en, fd, ret, es);
	}
	return ret;
}

/* libc:fread_entry and libc:fread_exit (result: items, as returned). */
STDIO_BODY size_t record_fread(enum how how, void *p, size_t plen,
			       size_t size, size_t n, FILE *f)
{
	size_t ret = 0;
	int fd = -1;
	WRAP_SITE(cs_in, 0, "libc:fread_entry", "fd %d size %zu count %zu",
		  fd, size, n);
	WRAP_SITE_E(cs_out, 0, "libc:fread_exit", "fd %d result %zu%s",
		    fd, ret, "");

	if (tracer_likely(!WRAP_ON2(cs_in, cs_out)))
		return call_fread(how, p, plen, size, n, f);
	return traced_fread(&cs_in, &cs_out, how, p, plen, size, n, f);
}

WRAP_API size_t fread(void *p, size_t size, size_t n, FILE *f)
{
	return record_fread(HOW_PLAIN, p, 0, size, n, f);
}

WRAP_API size_t fread_unlocked(void *p, size_t size, size_t n, FILE *f)
{
	return record_fread(HOW_UNLOCKED, p, 0, size, n, f);
}

WRAP_API size_t __fread_chk(void *p, size_t plen, size_t size, size_t n,
			    FILE *f)
{
	return record_fread(HOW_CHK, p, plen, size, n, f);
}

WRAP_API size_t __fread_unlocked_chk(void *p, size_t plen, size_t size,
				     size_t n, FILE *f)
{
	return record_fread(HOW_UNLOCKED_CHK, p, plen, size, n, f);
}

WRAP_DEFINE_REAL(char *, fgets, (char *s, int n, FILE *f), (s, n, f))
WRAP_DEFINE_REAL(char *, fgets_unlocked, (char *s, int n, FILE *f), (s, n, f))
WRAP_DEFINE_REAL(char *, __fgets_chk, (char *s, size_t slen, int n, FILE *f),
		 (s, slen, n, f))
WRAP_DEFINE_REAL(char *, __fgets_unlocked_chk,
		 (char *s, size_t slen, int n, FILE *f), (s, slen, n, f))

STDIO_BODY char *call_fgets(enum how how, char *s, size_t slen, int n,
			    FILE *f)
{
	switch (how) {
	case HOW_UNLOCKED:
		return WRAP_REAL(fgets_unlocked)(s, n, f);
	case HOW_CHK:
		return WRAP_REAL(__fgets_chk)(s, slen, n, f);
	case HOW_UNLOCKED_CHK:
		return WRAP_REAL(__fgets_unlocked_chk)(s, slen, n, f);
	default:
		return WRAP_REAL(fgets)(s, n, f);
	}
}

STDIO_SLOW char *traced_fgets(cs_t *cs_in, cs_t *cs_out, enum how how,
			       char *s, size_t slen, int n, FILE *f)
{
	const char *es = "";
	int64_t en = 0;
	int fd = stream_fd(f);
	size_t bytes = 0;
	char *ret;

	if (WRAP_ON(*cs_in))
		WRAP_EMIT(*cs_in, fd, n);
	ret = call_fgets(how, s, slen, n, f);
	if (WRAP_ON(*cs_out)) {
		if (ret)
			bytes = strlen(ret);
		else
			es = read_end(f, errno, 0, &en);
		WRAP_EMIT_E(*cs_out, en, fd, bytes, es);
	}
	return ret;
}

/*
 * libc:fgets_entry (size: the buffer's, n) and libc:fgets_exit (bytes:
 * the length of the string read, 0 for NULL; a line holding a NUL byte
 * counts up to it).
 */
STDIO_BODY char *record_fgets(enum how how, char *s, size_t slen, int n,
			      FILE *f)
{
	size_t bytes = 0;
	int fd = -1;
	WRAP_SITE(cs_in, 0, "libc:fgets_entry", "fd %d size %d", fd, n);
	WRAP_SITE_E(cs_out, 0, "libc:fgets_exit", "fd %d bytes %zu%s",
		    fd, bytes, "");

	if (tracer_likely(!WRAP_ON2(cs_in, cs_out)))
		return call_fgets(how, s, slen, n, f);
	return traced_fgets(&cs_in, &cs_out, how, s, slen, n, f);
}

WRAP_API char *fgets(char *s, int n, FILE *f)
{
	return record_fgets(HOW_PLAIN, s, 0, n, f);
}

WRAP_API char *fgets_unlocked(char *s, int n, FILE *f)
{
	return record_fgets(HOW_UNLOCKED, s, 0, n, f);
}

WRAP_API char *__fgets_chk(char *s, size_t slen, int n, FILE *f)
{
	return record_fgets(HOW_CHK, s, slen, n, f);
}

WRAP_API char *__fgets_unlocked_chk(char *s, size_t slen, int n, FILE *f)
{
	return record_fgets(HOW_UNLOCKED_CHK, s, slen, n, f);
}

WRAP_DEFINE_REAL(ssize_t, getline, (char **line, size_t *n, FILE *f),
		 (line, n, f))
WRAP_API ssize_t getline(char **line, size_t *n, FILE *f)
{
	const char *es = "";
	int64_t en = 0;
	ssize_t ret = 0;
	int fd = -1;
	WRAP_SITE(cs_in, 0, "libc:getline_entry", "fd %d", fd);
	WRAP_SITE_E(cs_out, 0, "libc:getline_exit", "fd %d result %zd%s",
		    fd, ret, "");

	if (tracer_likely(!WRAP_ON2(cs_in, cs_out)))
		return WRAP_REAL(getline)(line, n, f);
	fd = stream_fd(f);
	if (WRAP_ON(cs_in))
		WRAP_EMIT(cs_in, fd);
	ret = WRAP_REAL(getline)(line, n, f);
	if (WRAP_ON(cs_out)) {
		if (ret < 0)
			es = read_end(f, errno, 1, &en);
		WRAP_EMIT_E(cs_out, en, fd, ret, es);
	}
	return ret;
}

WRAP_DEFINE_REAL(ssize_t, getdelim, (char **line, size_t *n, int d, FILE *f),
		 (line, n, d, f))
WRAP_DEFINE_REAL(ssize_t, __getdelim, (char **line, size_t *n, int d,
				       FILE *f), (line, n, d, f))

STDIO_BODY ssize_t call_getdelim(enum how how, char **line, size_t *n,
				 int delim, FILE *f)
{
	return how == HOW_INTERNAL ? WRAP_REAL(__getdelim)(line, n, delim, f) :
	       WRAP_REAL(getdelim)(line, n, delim, f);
}

STDIO_SLOW ssize_t traced_getdelim(cs_t *cs_in, cs_t *cs_out, enum how how,
				   char **line, size_t *n, int delim, FILE *f)
{
	const char *es = "";
	int64_t en = 0;
	int fd = stream_fd(f);
	ssize_t ret;

	if (WRAP_ON(*cs_in))
		WRAP_EMIT(*cs_in, fd, delim);
	ret = call_getdelim(how, line, n, delim, f);
	if (WRAP_ON(*cs_out)) {
		if (ret < 0)
			es = read_end(f, errno, 1, &en);
		WRAP_EMIT_E(*cs_out, en, fd, ret, es);
	}
	return ret;
}

/* libc:getdelim_entry and _exit; __getdelim: glibc's inline getline(). */
STDIO_BODY ssize_t record_getdelim(enum how how, char **line, size_t *n,
				   int delim, FILE *f)
{
	ssize_t ret = 0;
	int fd = -1;
	WRAP_SITE(cs_in, 0, "libc:getdelim_entry", "fd %d delim %d",
		  fd, delim);
	WRAP_SITE_E(cs_out, 0, "libc:getdelim_exit", "fd %d result %zd%s",
		    fd, ret, "");

	if (tracer_likely(!WRAP_ON2(cs_in, cs_out)))
		return call_getdelim(how, line, n, delim, f);
	return traced_getdelim(&cs_in, &cs_out, how, line, n, delim, f);
}

WRAP_API ssize_t getdelim(char **line, size_t *n, int delim, FILE *f)
{
	return record_getdelim(HOW_PLAIN, line, n, delim, f);
}

WRAP_API ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f)
{
	return record_getdelim(HOW_INTERNAL, line, n, delim, f);
}

/* ---- writing ------------------------------------------------------------ */

WRAP_DEFINE_REAL(size_t, fwrite,
		 (const void *p, size_t size, size_t n, FILE *f),
		 (p, size, n, f))
WRAP_DEFINE_REAL(size_t, fwrite_unlocked,
		 (const void *p, size_t size, size_t n, FILE *f),
		 (p, size, n, f))

STDIO_BODY size_t call_fwrite(enum how how, const void *p, size_t size,
			      size_t n, FILE *f)
{
	return how == HOW_UNLOCKED ? WRAP_REAL(fwrite_unlocked)(p, size, n, f) :
	       WRAP_REAL(fwrite)(p, size, n, f);
}

STDIO_SLOW size_t traced_fwrite(cs_t *cs, enum how how, const void *p,
				size_t size, size_t n, FILE *f)
{
	int64_t en;
	size_t ret = call_fwrite(how, p, size, n, f);

	en = WRAP_ERRNO(size && ret < n);
	WRAP_EMIT_E(*cs, en, stream_fd(f), size, n, ret);
	return ret;
}

/* libc:fwrite (result: items, as returned). */
STDIO_BODY size_t record_fwrite(enum how how, const void *p, size_t size,
				size_t n, FILE *f)
{
	size_t ret = 0;
	int fd = -1;
	WRAP_SITE_E(cs, 0, "libc:fwrite", "fd %d size %zu count %zu result %zu",
		    fd, size, n, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return call_fwrite(how, p, size, n, f);
	return traced_fwrite(&cs, how, p, size, n, f);
}

WRAP_API size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	return record_fwrite(HOW_PLAIN, p, size, n, f);
}

WRAP_API size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *f)
{
	return record_fwrite(HOW_UNLOCKED, p, size, n, f);
}

WRAP_DEFINE_REAL(int, fputs, (const char *s, FILE *f), (s, f))
WRAP_DEFINE_REAL(int, fputs_unlocked, (const char *s, FILE *f), (s, f))

STDIO_BODY int call_fputs(enum how how, const char *s, FILE *f)
{
	return how == HOW_UNLOCKED ? WRAP_REAL(fputs_unlocked)(s, f) :
	       WRAP_REAL(fputs)(s, f);
}

STDIO_SLOW int traced_fputs(cs_t *cs, enum how how, const char *s, FILE *f)
{
	int64_t en;
	int ret = call_fputs(how, s, f);

	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(*cs, en, stream_fd(f), strlen(s), ret);
	return ret;
}

/* libc:fputs (length: the string's; result: as returned, EOF failed). */
STDIO_BODY int record_fputs(enum how how, const char *s, FILE *f)
{
	size_t len = 0;
	int ret = 0, fd = -1;
	WRAP_SITE_E(cs, 0, "libc:fputs", "fd %d length %zu result %d",
		    fd, len, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return call_fputs(how, s, f);
	return traced_fputs(&cs, how, s, f);
}

WRAP_API int fputs(const char *s, FILE *f)
{
	return record_fputs(HOW_PLAIN, s, f);
}

WRAP_API int fputs_unlocked(const char *s, FILE *f)
{
	return record_fputs(HOW_UNLOCKED, s, f);
}

/* libc:puts: the string's length (the newline after it not counted). */
IO_CALL(int, puts, (const char *s), (s), "fd %d length %zu result %d",
	(stream_fd(stdout), strlen(s), ret), ret < 0)

/* ---- formatted output --------------------------------------------------- */

/*
 * Each variadic entry point hands its arguments on as a va_list to the
 * C library's own va_list form (printf to vprintf, __printf_chk to
 * __vprintf_chk ...), which formats them exactly as the call it replaces;
 * the event gives the bytes written (the result) and the descriptor.
 * HOW_PLAIN: the plain forms; flag is used by the fortified ones only.
 */
WRAP_DEFINE_REAL(int, vprintf, (const char *fmt, va_list ap), (fmt, ap))
WRAP_DEFINE_REAL(int, __vprintf_chk, (int flag, const char *fmt, va_list ap),
		 (flag, fmt, ap))
WRAP_DEFINE_REAL(int, vfprintf, (FILE *f, const char *fmt, va_list ap),
		 (f, fmt, ap))
WRAP_DEFINE_REAL(int, __vfprintf_chk,
		 (FILE *f, int flag, const char *fmt, va_list ap),
		 (f, flag, fmt, ap))
WRAP_DEFINE_REAL(int, vdprintf, (int fd, const char *fmt, va_list ap),
		 (fd, fmt, ap))
WRAP_DEFINE_REAL(int, __vdprintf_chk,
		 (int fd, int flag, const char *fmt, va_list ap),
		 (fd, flag, fmt, ap))

/* libc:printf: printf, vprintf, __printf_chk, __vprintf_chk. */
STDIO_BODY int record_printf(enum how how, int flag, const char *fmt,
			     va_list ap)
{
	int64_t en = 0;
	int ret = 0, fd = -1;
	WRAP_SITE_E(cs, 0, "libc:printf", "fd %d result %d", fd, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return how == HOW_CHK ?
		       WRAP_REAL(__vprintf_chk)(flag, fmt, ap) :
		       WRAP_REAL(vprintf)(fmt, ap);
	ret = how == HOW_CHK ? WRAP_REAL(__vprintf_chk)(flag, fmt, ap) :
	      WRAP_REAL(vprintf)(fmt, ap);
	en = WRAP_ERRNO(ret < 0);
	fd = stream_fd(stdout);
	WRAP_EMIT_E(cs, en, fd, ret);
	return ret;
}

/* libc:fprintf: fprintf, vfprintf, __fprintf_chk, __vfprintf_chk. */
STDIO_BODY int record_fprintf(enum how how, FILE *f, int flag,
			      const char *fmt, va_list ap)
{
	int64_t en = 0;
	int ret = 0, fd = -1;
	WRAP_SITE_E(cs, 0, "libc:fprintf", "fd %d result %d", fd, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return how == HOW_CHK ?
		       WRAP_REAL(__vfprintf_chk)(f, flag, fmt, ap) :
		       WRAP_REAL(vfprintf)(f, fmt, ap);
	ret = how == HOW_CHK ? WRAP_REAL(__vfprintf_chk)(f, flag, fmt, ap) :
	      WRAP_REAL(vfprintf)(f, fmt, ap);
	en = WRAP_ERRNO(ret < 0);
	fd = stream_fd(f);
	WRAP_EMIT_E(cs, en, fd, ret);
	return ret;
}

/* libc:dprintf: dprintf, vdprintf, __dprintf_chk, __vdprintf_chk. */
STDIO_BODY int record_dprintf(enum how how, int fd, int flag,
			      const char *fmt, va_list ap)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:dprintf", "fd %d result %d", fd, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return how == HOW_CHK ?
		       WRAP_REAL(__vdprintf_chk)(fd, flag, fmt, ap) :
		       WRAP_REAL(vdprintf)(fd, fmt, ap);
	ret = how == HOW_CHK ? WRAP_REAL(__vdprintf_chk)(fd, flag, fmt, ap) :
	      WRAP_REAL(vdprintf)(fd, fmt, ap);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(cs, en, fd, ret);
	return ret;
}

WRAP_API int printf(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_printf(HOW_PLAIN, 0, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int vprintf(const char *fmt, va_list ap)
{
	return record_printf(HOW_PLAIN, 0, fmt, ap);
}

WRAP_API int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_printf(HOW_CHK, flag, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return record_printf(HOW_CHK, flag, fmt, ap);
}

WRAP_API int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_fprintf(HOW_PLAIN, f, 0, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	return record_fprintf(HOW_PLAIN, f, 0, fmt, ap);
}

WRAP_API int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_fprintf(HOW_CHK, f, flag, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	return record_fprintf(HOW_CHK, f, flag, fmt, ap);
}

WRAP_API int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_dprintf(HOW_PLAIN, fd, 0, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int vdprintf(int fd, const char *fmt, va_list ap)
{
	return record_dprintf(HOW_PLAIN, fd, 0, fmt, ap);
}

WRAP_API int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = record_dprintf(HOW_CHK, fd, flag, fmt, ap);
	va_end(ap);
	return ret;
}

WRAP_API int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return record_dprintf(HOW_CHK, fd, flag, fmt, ap);
}
