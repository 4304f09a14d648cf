/*
 * test_header_c.c: <tracer.h> compiles as strict C99, tracer_version()
 * matches the headers, and tracer_record() takes every kind of argument
 * it can record, with the type letters of common/event_format.h (read
 * from the call sites' descriptors in this program's section). What it
 * refuses, and the messages, is tests/integration/test_api_errors.sh's.
 * Prints TAP.
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <tracer.h>

enum colour { RED, GREEN };

struct bits {
	int s : 5;
	unsigned u : 3;
};

/* Never true: the calls below are compiled, and run with nothing on. */
static volatile int record_now;

static void record_all(void)
{
	signed char sc = -1;
	short sh = -2;
	int i = -3;
	long l = -4;
	long long ll = -5;
	unsigned char uc = 1;
	unsigned short us = 2;
	unsigned u = 3;
	unsigned long ul = 4;
	unsigned long long ull = 5;
	_Bool b = 1;
	size_t z = 6;
	char c = 'c';
	float f = 1.5f;
	double d = 2.5;
	long double ld = 3.5L;
	char buf[8] = "buf";
	const char *cs = "cs";
	char *s = buf;
	void *vp = buf;
	int *ip = &i;
	const unsigned char *ucp = &uc;
	enum colour e = GREEN;
	struct bits bf = { -3, 5 };

	if (!record_now)
		return;
	tracer_record("t:signed", "%hhd %hd %d %ld %lld", sc, sh, i, l, ll);
	tracer_record("t:unsigned", "%hhu %hu %u %lu %llu %d %zu",
		      uc, us, u, ul, ull, b, z);
	tracer_record("t:char", "%c", c);
	tracer_record("t:floating", "%f %f %Lf", f, d, ld);
	tracer_record("t:strings", "%s %s %s %s", "literal", buf, cs, s);
	tracer_record("t:pointers", "%p %p %p %p", vp, (void *)ip,
		      (const void *)ucp, NULL);
	tracer_record("t:enum", "%d", e);
	tracer_record("t:bitfields", "%d %u", bf.s, bf.u);
	tracer_record("t:none", "no arguments");
	tracer_record_vital("t:eight", "%d %d %d %d %d %d %d %d",
			    1, 2, 3, 4, 5, 6, 7, 8);
}

/* The type letters of call site name in this program, or NULL. */
static const char *types_of(const char *name)
{
	struct tracer_callsite *cs;

	for (cs = __start_tracer_callsites; cs < __stop_tracer_callsites; cs++)
		if (strcmp(cs->name, name) == 0)
			return cs->types;
	return NULL;
}

static int n;
static int failed;

static void check_types(const char *name, const char *want)
{
	const char *got = types_of(name);

	n++;
	if (got != NULL && strcmp(got, want) == 0) {
		printf("ok %d - %s records types \"%s\"\n", n, name, want);
	} else {
		printf("not ok %d - %s records types \"%s\" (got \"%s\")\n",
		       n, name, want, got != NULL ? got : "(no call site)");
		failed = 1;
	}
}

/* Call site name records nargs integers, signed or unsigned. */
static void check_integers(const char *name, size_t nargs)
{
	const char *got = types_of(name);

	n++;
	if (got != NULL && strlen(got) == nargs &&
	    strspn(got, "iu") == nargs) {
		printf("ok %d - %s records integers (\"%s\")\n", n, name, got);
	} else {
		printf("not ok %d - %s records %zu integers (got \"%s\")\n",
		       n, name, nargs, got != NULL ? got : "(no call site)");
		failed = 1;
	}
}

int main(void)
{
	const char *v = tracer_version();
	const char *e;
	char chr[2] = { (char)-1 < 0 ? 'i' : 'u', '\0' };

	printf("1..13\n");

	if (v != NULL) {
		printf("ok 1 - tracer_version() is not NULL\n");
	} else {
		printf("not ok 1 - tracer_version() is not NULL\n");
		failed = 1;
	}

	if (v != NULL && strcmp(v, TRACER_VERSION_STRING) == 0) {
		printf("ok 2 - tracer_version() equals TRACER_VERSION_STRING (%s)\n",
		       TRACER_VERSION_STRING);
	} else {
		printf("not ok 2 - tracer_version() \"%s\" equals "
		       "TRACER_VERSION_STRING \"%s\"\n",
		       v != NULL ? v : "(null)", TRACER_VERSION_STRING);
		failed = 1;
	}
	n = 2;

	record_all();
	check_types("t:signed", "iiiii");
	check_types("t:unsigned", "uuuuuuu");
	check_types("t:char", chr);
	check_types("t:floating", "ddD");
	check_types("t:strings", "ssss");
	check_types("t:pointers", "pppp");
	check_types("t:none", "");
	check_types("t:eight", "iiiiiiii");

	/* An enumeration is the integer type the compiler gives it. */
	check_integers("t:enum", 1);
	/* A signed bit-field is signed; an unsigned one, its type (clang)
	 * or promoted to int (GCC). */
	check_integers("t:bitfields", 2);
	e = types_of("t:bitfields");
	n++;
	if (e != NULL && e[0] == 'i') {
		printf("ok %d - t:bitfields: a signed bit-field is signed\n", n);
	} else {
		printf("not ok %d - t:bitfields: a signed bit-field is signed "
		       "(got \"%s\")\n", n, e != NULL ? e : "(no call site)");
		failed = 1;
	}

	return failed;
}
