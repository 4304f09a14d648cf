/*
 * stdiouser.c - a program that reads and writes through stdio, for
 * test_wrap_stdio.sh (not linked with libtracer: preloaded).
 *
 *   stdiouser DIR
 *
 * Writes DIR/data with fwrite, fwrite_unlocked, fputs, fputs_unlocked and
 * fprintf, reads it back with fread, fread_unlocked and their fortified
 * forms, fgets (plain, unlocked, fortified), getline and getdelim to its
 * end, makes calls that fail (a read of a write-only stream: EBADF; a
 * write to a read-only one: EBADF; getline without a buffer: EINVAL;
 * printf to a closed descriptor: EBADF), and prints with every printf
 * form, puts and dprintf. Each result, and errno's name after a failing
 * call, goes to stdout as "what value", which the test compares with the
 * events and, byte for byte, with an untraced run. Built with
 * _FORTIFY_SOURCE=2, so its printf() calls are __printf_chk(); the plain
 * entry points are called through pointers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The plain (unfortified) entry points, called as a program built
 * without _FORTIFY_SOURCE calls them. */
static int (*volatile plain_printf)(const char *, ...) = printf;
static int (*volatile plain_fprintf)(FILE *, const char *, ...) = fprintf;
static int (*volatile plain_dprintf)(int, const char *, ...) = dprintf;
static int (*volatile plain_vprintf)(const char *, va_list) = vprintf;
static int (*volatile plain_vfprintf)(FILE *, const char *, va_list) =
	vfprintf;
static int (*volatile plain_vdprintf)(int, const char *, va_list) =
	vdprintf;
static size_t (*volatile plain_fread)(void *, size_t, size_t, FILE *) =
	fread;
static char *(*volatile plain_fgets)(char *, int, FILE *) = fgets;
static ssize_t (*volatile plain_getline)(char **, size_t *, FILE *) = getline;
static char *(*volatile plain_fgets_unlocked)(char *, int, FILE *) =
	fgets_unlocked;

/* Not constants: fread() and fgets() of a buffer the compiler knows
 * become __fread_chk() and __fgets_chk() only with a size it does not. */
static volatile size_t four = 4;
static volatile int bufsz = 64;

static const char *ename(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "?";
}

static void die(const char *what)
{
	dprintf(2, "stdiouser: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Fortified vprintf() is __vfprintf_chk(stdout, ...): this one is called
 * by name (glibc declares it only in its own headers). */
extern int __vprintf_chk(int flag, const char *fmt, va_list ap);

/* The va_list forms: plain ones through pointers, fortified direct. */
static int my_vprintf(int plain, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int my_vprintf(int plain, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = plain ? plain_vprintf(fmt, ap) : __vprintf_chk(1, fmt, ap);
	va_end(ap);
	return r;
}

static int my_vfprintf(int plain, FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int my_vfprintf(int plain, FILE *f, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = plain ? plain_vfprintf(f, fmt, ap) : vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

static int my_vdprintf(int plain, int fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int my_vdprintf(int plain, int fd, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = plain ? plain_vdprintf(fd, fmt, ap) : vdprintf(fd, fmt, ap);
	va_end(ap);
	return r;
}

/* Write DIR/data: 12 + 10 + 9 + 11 + 10 = 52 bytes. */
static void write_data(FILE *f)
{
	printf("fwrite %zu\n", fwrite("hello world\n", 1, 12, f));
	printf("fwrite_unlocked %zu\n",
	       fwrite_unlocked("0123456789", 2, 5, f));
	printf("fputs %d\n", fputs("line two\n", f));
	printf("fputs_unlocked %d\n", fputs_unlocked("line three\n", f));
	printf("fprintf %d\n", plain_fprintf(f, "%s=%d\n", "answer", 42));
}

static void read_data(FILE *f)
{
	char buf[512], *line = NULL;
	size_t cap = 0, n;
	ssize_t r;

	rewind(f);
	printf("fread %zu\n", plain_fread(buf, 1, 8, f));
	printf("fread_chk %zu\n", fread(buf, four, 2, f));
	printf("fread_unlocked_chk %zu\n", fread_unlocked(buf, four, 1, f));
	n = fread_unlocked(buf, 4, 100, f);		/* 32 bytes */
	printf("fread_unlocked %zu eof %d\n", n, feof(f));
	rewind(f);
	printf("fgets %zu\n", strlen(plain_fgets(buf, bufsz, f)));
	printf("fgets_chk %zu\n", strlen(fgets(buf, bufsz, f)));
	printf("fgets_unlocked_chk %zu\n",
	       strlen(fgets_unlocked(buf, bufsz, f)));
	printf("getdelim %zd\n", getdelim(&line, &cap, '=', f));
	printf("getline %zd\n", getline(&line, &cap, f));
	r = getline(&line, &cap, f);
	printf("getline_end %zd eof %d\n", r, feof(f));
	printf("fgets_end %s\n", fgets(buf, bufsz, f) ? "line" : "NULL");
	rewind(f);
	printf("fgets_unlocked %zu\n",
	       strlen(plain_fgets_unlocked(buf, bufsz, f)));
	free(line);
}

static void failures(const char *dir)
{
	char path[4096], buf[16], *line = NULL;
	FILE *wo, *ro;
	size_t r;
	int e;

	snprintf(path, sizeof(path), "%s/wo", dir);
	if (!(wo = fopen(path, "w")))
		die(path);
	errno = 0;
	r = plain_fread(buf, 1, sizeof(buf), wo);
	e = errno;
	printf("fread_wo %zu ferror %d errno %s\n", r, ferror(wo), ename(e));
	fclose(wo);

	snprintf(path, sizeof(path), "%s/data", dir);
	if (!(ro = fopen(path, "r")))
		die(path);
	errno = 0;
	r = (size_t)fputs("nope", ro);
	e = errno;
	printf("fputs_ro %d errno %s\n", (int)r, ename(e));
	errno = 0;
	r = (size_t)plain_getline(&line, NULL, ro);
	e = errno;
	printf("getline_null %zd errno %s\n", (ssize_t)r, ename(e));
	fclose(ro);

	errno = 0;
	r = (size_t)plain_dprintf(99, "x%d\n", 1);
	e = errno;
	printf("dprintf_bad %d errno %s\n", (int)r, ename(e));
}

static void formatted(void)
{
	int r;

	fflush(stdout);
	r = plain_printf("%-40s%d\n", "printf", 1);	/* 42 bytes */
	r += printf("%-41s%d\n", "__printf_chk", 2);		/* 43 */
	r += my_vprintf(1, "%-42s%d\n", "vprintf", 3);		/* 44 */
	r += my_vprintf(0, "%-43s%d\n", "__vprintf_chk", 4);	/* 45 */
	r += puts("a puts line");
	r += fprintf(stdout, "%s\n", "chk fprintf");
	r += my_vfprintf(1, stdout, "%s\n", "plain vfprintf");
	r += my_vfprintf(0, stdout, "%s\n", "chk vfprintf");
	fflush(stdout);
	r += plain_dprintf(1, "%s\n", "plain dprintf");
	r += dprintf(1, "%s\n", "chk dprintf");
	r += my_vdprintf(1, 1, "%s\n", "plain vdprintf");
	r += my_vdprintf(0, 1, "%s\n", "chk vdprintf");
	printf("formatted %d\n", r);
	r = fprintf(stderr, "to stderr %d\n", 2);
	printf("fprintf_stderr %d\n", r);
}

int main(int argc, char **argv)
{
	char path[4096];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: stdiouser DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	if (!(f = fopen(path, "w+")))
		die(path);
	write_data(f);
	read_data(f);
	fclose(f);
	failures(argv[1]);
	formatted();
	return fflush(stdout) ? 1 : 0;
}
