/*
 * test_header_cxx.cpp: <tracer.h> compiles as strict C++11,
 * tracer_version() links with C linkage and matches the headers, and
 * tracer_record() takes every kind of argument it can record, with the
 * type letters of common/event_format.h (read from the call sites'
 * descriptors in this program's section): an argument goes through unary
 * + first, as in a variadic call. What it refuses, and the messages, is
 * tests/integration/test_api_errors.sh's. Prints TAP.
 */

#include <cstdio>
#include <cstring>
#include <string>

#include <tracer.h>

enum colour { RED, GREEN };
enum class shape { SQUARE, CIRCLE };

struct bits {
	unsigned u : 3;
	int s : 5;
};

/* Never true: the calls below are compiled, and run with nothing on. */
static volatile int record_now;

static void record_all()
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
	bool b = true;
	char c = 'c';
	float f = 1.5f;
	double d = 2.5;
	long double ld = 3.5L;
	char buf[8] = "buf";
	const char *cs = "cs";
	char *s = buf;
	std::string str("str");
	void *vp = buf;
	int *ip = &i;
	const unsigned char *ucp = &uc;
	colour e = GREEN;
	shape sp = shape::CIRCLE;
	bits bf = { 5, -3 };

	if (!record_now)
		return;
	tracer_record("t:signed", "%hhd %hd %d %ld %lld", sc, sh, i, l, ll);
	tracer_record("t:unsigned", "%u %lu %llu", u, ul, ull);
	tracer_record("t:promoted", "%d %d %d %d %d %d", uc, us, b, c, e,
		      static_cast<int>(sp));
	tracer_record("t:floating", "%f %f %Lf", f, d, ld);
	tracer_record("t:strings", "%s %s %s %s %s", "literal", buf, cs, s,
		      str.c_str());
#ifdef __clang__	/* -Wformat-pedantic: "%p" takes a void * */
# pragma clang diagnostic push
# pragma clang diagnostic ignored "-Wformat-pedantic"
#endif
	tracer_record("t:pointers", "%p %p %p %p", vp, static_cast<void *>(ip),
		      static_cast<const void *>(ucp), nullptr);
#ifdef __clang__
# pragma clang diagnostic pop
#endif
	tracer_record("t:bitfields", "%u %d", bf.u, bf.s);
	tracer_record("t:none", "no arguments");
	tracer_record_vital("t:eight", "%d %d %d %d %d %d %d %d",
			    1, 2, 3, 4, 5, 6, 7, 8);
}

/* The type letters of call site name in this program, or nullptr. */
static const char *types_of(const char *name)
{
	for (tracer_callsite *cs = __start_tracer_callsites;
	     cs < __stop_tracer_callsites; cs++)
		if (std::strcmp(cs->name, name) == 0)
			return cs->types;
	return nullptr;
}

static int n;
static int failed;

static void check_types(const char *name, const char *want)
{
	const char *got = types_of(name);

	n++;
	if (got != nullptr && std::strcmp(got, want) == 0) {
		std::printf("ok %d - %s records types \"%s\"\n", n, name, want);
	} else {
		std::printf("not ok %d - %s records types \"%s\" (got \"%s\")\n",
			    n, name, want,
			    got != nullptr ? got : "(no call site)");
		failed = 1;
	}
}

int main()
{
	const char *v = tracer_version();

	std::printf("1..12\n");

	if (v != nullptr) {
		std::printf("ok 1 - tracer_version() is not NULL\n");
	} else {
		std::printf("not ok 1 - tracer_version() is not NULL\n");
		failed = 1;
	}

	if (v != nullptr && std::strcmp(v, TRACER_VERSION_STRING) == 0) {
		std::printf("ok 2 - tracer_version() equals TRACER_VERSION_STRING (%s)\n",
			    TRACER_VERSION_STRING);
	} else {
		std::printf("not ok 2 - tracer_version() \"%s\" equals "
			    "TRACER_VERSION_STRING \"%s\"\n",
			    v != nullptr ? v : "(null)", TRACER_VERSION_STRING);
		failed = 1;
	}
	n = 2;

	record_all();
	check_types("t:signed", "iiiii");
	check_types("t:unsigned", "uuu");
	/* unsigned char, unsigned short, bool, char, a plain enum: int */
	check_types("t:promoted", "iiiiii");
	check_types("t:floating", "ddD");
	check_types("t:strings", "sssss");
	check_types("t:pointers", "pppp");
	/* The bit-field's declared type: unsigned, int. */
	check_types("t:bitfields", "ui");
	check_types("t:none", "");
	check_types("t:eight", "iiiiiiii");
	n++;
	if (__stop_tracer_callsites - __start_tracer_callsites == 9) {
		std::printf("ok %d - 9 call sites in the section\n", n);
	} else {
		std::printf("not ok %d - 9 call sites in the section (got %d)\n",
			    n, static_cast<int>(__stop_tracer_callsites -
						__start_tracer_callsites));
		failed = 1;
	}

	return failed;
}
