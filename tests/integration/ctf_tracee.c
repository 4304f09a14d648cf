/*
 * ctf_tracee.c - a traced program for test_ctf.sh (links libtracer): what
 * it records, and what it says it recorded, for a comparison with what
 * babeltrace2 reads from the trace.
 *
 *   ctf_tracee types     the main thread and 2 others record events of
 *                        every argument type (and a vital one, and one
 *                        without arguments); one line per event on stdout:
 *                        TID TAB NAME {TAB FIELD=LETTER:VALUE}, with the
 *                        field names babeltrace2 shows; values: i, u, p in
 *                        decimal, d as %.17g, s as hex bytes, D as
 *                        mantissa,exponent,sign
 *   ctf_tracee serve     prints "ready", then reads commands, one a line,
 *                        and answers each with one line:
 *                          b N   a new thread records N events "ctf:burst"
 *                                as fast as it can and exits: "done"
 *                          s N   the main thread records N events
 *                                "ctf:step": "done"
 *                          t N   the main thread records N events
 *                                "ctf:tick" without arguments (16 bytes:
 *                                they fill 4 KiB sub-buffers exactly):
 *                                "done"
 *                          q     exit 0
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracer.h>

/* One line of stdout: what one event recorded. */
struct line {
	char buf[4096];
	size_t len;
};

static void add(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(l->buf) - l->len)
		l->len += (size_t)n;
}

static void begin(struct line *l, const char *name)
{
	l->len = 0;
	add(l, "%ld\t%s", (long)syscall(SYS_gettid), name);
}

static void add_i(struct line *l, const char *field, long long v)
{
	add(l, "\t%s=i:%lld", field, v);
}

static void add_u(struct line *l, const char *field, unsigned long long v)
{
	add(l, "\t%s=u:%llu", field, v);
}

static void add_d(struct line *l, const char *field, double v)
{
	add(l, "\t%s=d:%.17g", field, v);
}

static void add_p(struct line *l, const char *field, const void *v)
{
	add(l, "\t%s=p:%llu", field, (unsigned long long)(uintptr_t)v);
}

static void add_s(struct line *l, const char *field, const char *s)
{
	add(l, "\t%s=s:", field);
	for (; *s; s++)
		add(l, "%02x", (unsigned char)*s);
}

/* x87 extended precision: 64-bit mantissa, then sign and exponent. */
static void add_ld(struct line *l, const char *field, long double v)
{
	unsigned long long mantissa;
	unsigned short se;

	memcpy(&mantissa, &v, 8);
	memcpy(&se, (const char *)&v + 8, 2);
	add(l, "\t%s=D:%llu,%u,%u", field, mantissa, se & 0x7fffu,
	    (unsigned)se >> 15);
}

static void end(struct line *l)
{
	add(l, "\n");
	fputs(l->buf, stdout);	/* one call: lines of threads never mix */
}

/* ------------------------------------------------------------------ */
/* types                                                               */

static void record_numbers(int t)
{
	struct line l;
	int local = t;

	tracer_record("ctf:ints", "n=%d big=%lld small=%lld", -5 - t,
		      LLONG_MAX, LLONG_MIN);
	begin(&l, "ctf:ints");
	add_i(&l, "n", -5 - t);
	add_i(&l, "big", LLONG_MAX);
	add_i(&l, "small", LLONG_MIN);
	end(&l);
	tracer_record("ctf:unsigned", "u=%u max=%llu zero=%lu", 7u + t,
		      ULLONG_MAX, 0UL);
	begin(&l, "ctf:unsigned");
	add_u(&l, "u", 7u + t);
	add_u(&l, "max", ULLONG_MAX);
	add_u(&l, "zero", 0);
	end(&l);
	tracer_record("ctf:pointers", "p=%p null=%p", (void *)&local,
		      (void *)NULL);
	begin(&l, "ctf:pointers");
	add_p(&l, "p", &local);
	add_p(&l, "null", NULL);
	end(&l);
}

static void record_reals(int t)
{
	struct line l;
	double third = 1.0 / 3;

	tracer_record("ctf:doubles", "x=%f neg=%g third=%e tiny=%g single=%f",
		      2.5 + t, -0.1, third, 1e-300, 0.5f);
	begin(&l, "ctf:doubles");
	add_d(&l, "x", 2.5 + t);
	add_d(&l, "neg", -0.1);
	add_d(&l, "third", third);
	add_d(&l, "tiny", 1e-300);
	add_d(&l, "single", 0.5f);
	end(&l);
	tracer_record("ctf:ldouble", "ld=%Lf big=%Lg", -3.25L - t, 1e100L);
	begin(&l, "ctf:ldouble");
	add_ld(&l, "ld", -3.25L - t);
	add_ld(&l, "big", 1e100L);
	end(&l);
}

static void record_strings(int t)
{
	static const char quoted[] = "say \"hi\" \\ back\ttab";
	static const char utf8[] = "h\xc3\xa9llo \xe2\x9c\x93";
	struct line l;

	tracer_record("ctf:strings", "s=%s empty=%s quoted=%s utf8=%s",
		      "hello", "", quoted, utf8);
	begin(&l, "ctf:strings");
	add_s(&l, "s", "hello");
	add_s(&l, "empty", "");
	add_s(&l, "quoted", quoted);
	add_s(&l, "utf8", utf8);
	end(&l);
	tracer_record("ctf:keywords", "string %s int %d", "kw", t);
	begin(&l, "ctf:keywords");	/* "_string", "_int" in TSDL */
	add_s(&l, "string", "kw");
	add_i(&l, "int", t);
	end(&l);
}

static void record_others(int t)
{
	struct line l;

	tracer_record("ctf:noargs", "no arguments at all");
	begin(&l, "ctf:noargs");
	end(&l);
	tracer_record_vital("ctf:vital", "thread %d is vital", t);
	begin(&l, "ctf:vital");
	add_i(&l, "thread", t);
	end(&l);
	tracer_record("ctf:star", "pad %*d name %.*s", 4, t, 3, "abcdef");
	begin(&l, "ctf:star");
	add_i(&l, "pad_width", 4);
	add_i(&l, "pad", t);
	add_i(&l, "name_precision", 3);
	add_s(&l, "name", "abcdef");
	end(&l);
	tracer_record("ctf:positional", "b=%2$d a=%1$d", 10 + t, 20 + t);
	begin(&l, "ctf:positional");
	add_i(&l, "a", 10 + t);
	add_i(&l, "b", 20 + t);
	end(&l);
	tracer_record("ctf:quote\"d", "v=%d", t);
	begin(&l, "ctf:quote\"d");
	add_i(&l, "v", t);
	end(&l);
}

/* Names and formats that must not break the metadata. */
static void record_hostile(int t)
{
	static const char name[] = "ctf:evil\"}; event { name = \"x\\y\x01\xff";
	struct line l;

	tracer_record("ctf:evil\"}; event { name = \"x\\y\x01\xff",
		      "align %d \"}; typealias %s pct=%d%% 2nd=%d _x=%d "
		      "\xc3\xa9=%d", t, "s", 1, 2, 3, 4);
	begin(&l, name);
	add_i(&l, "align", t);		/* TSDL: _align */
	add_s(&l, "typealias", "s");	/* _typealias */
	add_i(&l, "pct", 1);
	add_i(&l, "2nd", 2);		/* _2nd */
	add_i(&l, "_x", 3);		/* __x */
	add_i(&l, "arg6", 4);		/* no ASCII in the word */
	end(&l);
}

static void *record_all(void *arg)
{
	int t = (int)(long)arg;

	record_numbers(t);
	record_reals(t);
	record_strings(t);
	record_others(t);
	record_hostile(t);
	return NULL;
}

static int run_types(void)
{
	pthread_t th[2];
	long i;

	record_all((void *)0L);
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, record_all, (void *)(i + 1)))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* serve                                                               */

static void *burst(void *arg)
{
	long n = (long)arg, i;

	for (i = 0; i < n; i++)
		tracer_record("ctf:burst", "seq %ld", i);
	return NULL;
}

static int command(const char *line)
{
	static long steps;
	long n = atol(line + 1), i;
	pthread_t th;

	switch (line[0]) {
	case 'b':
		if (pthread_create(&th, NULL, burst, (void *)n) ||
		    pthread_join(th, NULL))
			return 1;
		break;
	case 's':
		for (i = 0; i < n; i++, steps++)
			tracer_record("ctf:step", "step %ld", steps);
		break;
	case 't':
		for (i = 0; i < n; i++)
			tracer_record("ctf:tick", "tick");
		break;
	default:
		return 1;
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}

static int run_serve(void)
{
	char line[64];

	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && line[0] != 'q')
		if (command(line))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "types"))
		return run_types();
	if (!strcmp(mode, "serve"))
		return run_serve();
	fprintf(stderr, "usage: ctf_tracee types|serve\n");
	return 2;
}
