/*
 * test_format.c - tracer__format_event() against the real snprintf.
 *
 * Each T() case records its values in a payload, as the tracer would, and
 * checks that formatting them gives byte for byte what snprintf gives with
 * the same (literal, compile-time checked) format and the arguments of the
 * C types printf reads: every conversion, flag, width, precision and length
 * modifier (with the truncations they imply), `*` and positional arguments,
 * long double. X() cases check an explicit result: markers for values of
 * the wrong kind or missing ones, unknown conversions. Then truncation of
 * the output, corrupt payloads and the payload decoder.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

#include "format.h"
#include "tap.h"

/* A recorded value of each type. */
#define VI(x)	((struct tracer__value){ .type = 'i', .i = (int64_t)(x) })
#define VU(x)	((struct tracer__value){ .type = 'u', .u = (uint64_t)(x) })
#define VD(x)	((struct tracer__value){ .type = 'd', .d = (x) })
#define VLD(x)	((struct tracer__value){ .type = 'D', .ld = (x) })
#define VS(x)	((struct tracer__value){ .type = 's', .s = (x) })
#define VE(x)	((struct tracer__value){ .type = 'e', .i = (int64_t)(x) })
#define VP(x)	((struct tracer__value){ .type = 'p', \
					.u = (uint64_t)(uintptr_t)(x) })
#define VALS(...) \
	((const struct tracer__value[]){ __VA_ARGS__, { .type = 0 } })
#define NOVALS	((const struct tracer__value[]){ { .type = 0 } })

struct payload {
	unsigned char buf[8192];
	size_t len;
	char types[32];
};

static void put_value(struct payload *p, const struct tracer__value *v)
{
	size_t n = 8;

	p->types[strlen(p->types)] = v->type;
	switch (v->type) {
	case 'i':
		memcpy(p->buf + p->len, &v->i, 8);
		break;
	case 'd':
		memcpy(p->buf + p->len, &v->d, 8);
		break;
	case 'D':
		n = TRACER__PAYLOAD_LDOUBLE;
		memset(p->buf + p->len, 0, n);
		memcpy(p->buf + p->len, &v->ld, sizeof(v->ld));
		break;
	case 's':
		n = strlen(v->s) + 1;
		memcpy(p->buf + p->len, v->s, n);
		break;
	default:
		memcpy(p->buf + p->len, &v->u, 8);
		break;
	}
	p->len += n;
}

/* Encode values as a record payload: packed, zero padding to 8 bytes. */
static void encode(struct payload *p, const struct tracer__value *vals)
{
	memset(p, 0, sizeof(*p));
	for (; vals->type; vals++)
		put_value(p, vals);
	p->len = (p->len + 7) & ~(size_t)7;
}

static void check(const char *fmt, const struct tracer__value *vals,
		  const char *want, int want_len)
{
	static struct payload p;
	char got[8192];
	size_t n = 12345;
	int ret;

	encode(&p, vals);
	ret = tracer__format_event(got, sizeof(got), fmt, p.types, p.buf,
				   p.len, &n);
	if (!ok(want_len >= 0 && ret == 0 && n == (size_t)want_len &&
		memcmp(got, want, n) == 0 && got[n] == '\0',
		"'%s' of [%s]", fmt, p.types))
		diag("  got '%s' (ret %d, %zu bytes), want '%s' (%d bytes)",
		     got, ret, n, want, want_len);
}

/* Compare with snprintf(fmt, args...) */
#define T(fmt, vals, ...)						\
	do {								\
		char want_[8192];					\
		int n_ = snprintf(want_, sizeof(want_), fmt, __VA_ARGS__); \
		check(fmt, vals, want_, n_);				\
	} while (0)
#define TI(fmt, x)	T(fmt, VALS(VI(x)), x)
#define TU(fmt, x)	T(fmt, VALS(VU(x)), x)
#define TD(fmt, x)	T(fmt, VALS(VD(x)), x)
#define TLD(fmt, x)	T(fmt, VALS(VLD(x)), x)
#define TS(fmt, x)	T(fmt, VALS(VS(x)), x)
#define TP(fmt, x)	T(fmt, VALS(VP(x)), x)

/* Compare with an explicit result. */
#define X(fmt, vals, want)	check(fmt, vals, want, (int)strlen(want))

static void test_signed(void)
{
	TI("%d", 0);
	TI("%d", 42);
	TI("%d", -42);
	TI("%d", INT_MAX);
	TI("%d", INT_MIN);
	TI("%i", -7);
	TI("[%5d]", 42);
	TI("[%-5d]", 42);
	TI("[%05d]", -42);
	TI("%+d", 42);
	TI("% d", 42);
	X("%+ d", VALS(VI(3)), "+3");	/* ' ' ignored with '+' */
	TI("%.3d", 7);
	TI("[%8.3d]", -7);
	TI("[%-8.3d]", 7);
	TI("[%.0d]", 0);
	TI("[%+.0d]", 0);
	TI("%'d", 1234567);
	X("[%-+08d]", VALS(VI(99)), "[+99     ]");	/* '0' with '-' */
	TI("%ld", -1L);
	TI("%ld", LONG_MIN);
	TI("%lld", LLONG_MAX);
	TI("%li", LONG_MAX);
	TI("%jd", (intmax_t)-5);
	TI("%zd", (ssize_t)-3);
	TI("%td", (ptrdiff_t)-9);
	TI("[%20lld]", LLONG_MIN);
	/* the C type of the modifier truncates the recorded 64 bits */
	T("%hhd", VALS(VI(300)), (signed char)300);
	T("%hhd", VALS(VI(-129)), (signed char)-129);
	T("%hd", VALS(VI(70000)), (short)70000);
	T("%hd", VALS(VI(-32769)), (short)-32769);
	T("%d", VALS(VI(0x100000005LL)), 5);
	T("%d", VALS(VI(INT64_MIN)), 0);
	T("%d", VALS(VU(4294967295u)), -1);
	T("%ld", VALS(VU(UINT64_MAX)), -1L);
	T("%lld", VALS(VP(-1)), -1LL);
}

static void test_unsigned(void)
{
	TU("%u", 0u);
	TU("%u", UINT_MAX);
	TU("%lu", ULONG_MAX);
	TU("%llu", ULLONG_MAX);
	T("%u", VALS(VI(-1)), UINT_MAX);
	T("%lu", VALS(VI(-1)), ULONG_MAX);
	T("%hhu", VALS(VU(257)), (unsigned char)257);
	T("%hu", VALS(VU(65537)), (unsigned short)65537);
	T("%hhx", VALS(VI(-1)), (unsigned char)-1);
	T("%u", VALS(VU(0x1ffffffffULL)), 0xffffffffu);
	TU("%o", 8u);
	TU("%#o", 8u);
	TU("%#o", 0u);
	TU("%x", 255u);
	TU("%#x", 255u);
	TU("%#X", 255u);
	TU("%#x", 0u);
	TU("%08x", 0xbeefu);
	TU("[%-#10x]", 0xbeefu);
	TU("[%#10.6x]", 0xbeefu);
	TU("%.5x", 0xabu);
	TU("%llx", 0xfedcba9876543210ULL);
	TU("%lX", 0xfedcba9876543210UL);
	TU("%lo", 01234567012345670UL);
	TU("%jx", (uintmax_t)0x123456789ULL);
	TU("%zu", (size_t)SIZE_MAX);
	TU("%zx", (size_t)0xabcdef);
	TU("%'u", 4000000000u);
	T("%lx", VALS(VP(0xdeadbeef)), 0xdeadbeefUL);
	T("%tx", VALS(VI(-1)), (ptrdiff_t)-1);
}

static void test_char_string_pointer(void)
{
	static char long_str[512];

	memset(long_str, 'x', sizeof(long_str) - 1);
	TI("%c", 65);
	TI("[%5c]", 'z');
	TI("[%-5c]", 'z');
	T("%c", VALS(VI(321)), 321);
	T("%c", VALS(VU(0x100 + '!')), 0x100 + '!');
	T("a%cb", VALS(VI(0)), 0);
	T("%lc", VALS(VU('A')), (wint_t)'A');
	TS("%s", "hello");
	TS("[%10s]", "hello");
	TS("[%-10s]", "hello");
	TS("%.3s", "hello");
	TS("[%10.3s]", "hello");
	TS("[%.0s]", "hello");
	TS("[%s]", "");
	TS("%s", "(null)");
	TS("%s", "caf\xc3\xa9 \t%d\n");
	TS("%s", long_str);
	TS("%.511s", long_str);
	TS("[%.5s]", long_str + 500);
	TP("%p", (void *)0x1234);
	TP("%p", (void *)NULL);
	TP("[%20p]", (void *)0x7fffdeadbeef);
	TP("[%-20p]", (void *)0x7fffdeadbeef);
	T("%p", VALS(VU(0xabc)), (void *)0xabc);
}

static void test_double(void)
{
	TD("%f", 3.14159);
	TD("%f", -0.0);
	TD("%f", 1e300);
	TD("%f", 1e-300);
	TD("%f", (double)INFINITY);
	TD("%f", -(double)INFINITY);
	TD("%f", (double)NAN);
	TD("%F", (double)INFINITY);
	TD("%F", (double)NAN);
	TD("%.2f", 2.675);
	TD("[%10.3f]", -3.14159);
	TD("[%-10.1f]", 3.14159);
	TD("%+f", 1.5);
	TD("% f", 1.5);
	TD("%010.2f", -3.5);
	TD("%#.0f", 3.0);
	TD("%.0f", 2.5);
	TD("%'.1f", 1234567.25);
	TD("%lf", 2.5);
	TD("%e", 12345.678);
	TD("%E", 12345.678);
	TD("%.0e", 5e-324);
	TD("%+.3e", DBL_MAX);
	TD("%g", 0.0001);
	TD("%g", 0.00001);
	TD("%g", 1e10);
	TD("%G", 1e-10);
	TD("%#g", 1.0);
	TD("%.10g", 1.0 / 3);
	TD("%a", 1.0);
	TD("%A", -0.5);
	TD("%.3a", 1.0 / 3);
	TD("[%20a]", DBL_MIN);
	TD("%.17g", 0.1);
	TD("%.1100f", 5e-324);
}

static void test_long_double(void)
{
	TLD("%Lf", 1.5L);
	TLD("%.20Lf", 1.0L / 3);
	TLD("%Le", LDBL_MAX);
	TLD("%Lg", LDBL_MIN);
	TLD("%La", 1.0L);
	TLD("%LA", -0.1L);
	TLD("[%-30.25Le]", 1.0L / 7);
	TLD("%Lf", -(long double)INFINITY);
	TLD("%LG", (long double)NAN);
	TLD("%#.0Lf", 2.0L);
	/* a double through L, a long double without it: converted */
	T("%Lf", VALS(VD(2.5)), 2.5L);
	T("%.25Lf", VALS(VD(0.1)), (long double)0.1);
	T("%.20f", VALS(VLD(1.0L / 3)), (double)(1.0L / 3));
	T("%e", VALS(VLD(LDBL_MAX)), (double)INFINITY);
}

static void test_star_positional(void)
{
	T("[%*d]", VALS(VI(5), VI(42)), 5, 42);
	T("[%-*d]", VALS(VI(5), VI(42)), 5, 42);
	T("[%*d]", VALS(VI(-5), VI(42)), -5, 42);
	T("[%*d]", VALS(VU(3), VI(42)), 3, 42);
	T("[%*d]", VALS(VI(0), VI(42)), 0, 42);
	T("[%.*d]", VALS(VI(3), VI(7)), 3, 7);
	T("[%.*d]", VALS(VI(-1), VI(7)), -1, 7);
	T("[%.*d]", VALS(VI(0), VI(0)), 0, 0);
	T("[%*.*f]", VALS(VI(10), VI(2), VD(3.14159)), 10, 2, 3.14159);
	T("[%-*.*e]", VALS(VI(-12), VI(1), VD(31.4)), -12, 1, 31.4);
	T("[%.*s]", VALS(VI(3), VS("abcdef")), 3, "abcdef");
	T("[%*s]", VALS(VI(-6), VS("ab")), -6, "ab");
	T("[%*c]", VALS(VI(4), VI('q')), 4, 'q');
	T("[%*.*Lf]", VALS(VI(12), VI(3), VLD(2.0L / 3)), 12, 3, 2.0L / 3);
	T("%hhd %*d", VALS(VI(200), VI(4), VI(5)), (signed char)200, 4, 5);
	T("%2$s %1$s", VALS(VS("world"), VS("hello")), "world", "hello");
	T("%1$d %1$d %1$x", VALS(VI(255)), 255);
	T("[%2$*1$d]", VALS(VI(6), VI(42)), 6, 42);
	T("[%1$.*2$f]", VALS(VD(3.14159), VI(2)), 3.14159, 2);
	T("%3$s %2$lu %1$c", VALS(VI('z'), VU(7), VS("s")), 'z', 7UL, "s");
}

static void test_mixed(void)
{
	int dummy = 0;

	X("plain text", NOVALS, "plain text");
	X("", NOVALS, "");
	X("100%%", NOVALS, "100%");
	T("%% %d %%", VALS(VI(1)), 1);
	T("a %d b %s c %.2f d %p e %lu", VALS(VI(-1), VS("str"), VD(0.5),
	  VP(0x10), VU(99)), -1, "str", 0.5, (void *)0x10, 99UL);
	T("ab%ncd", VALS(VP(&dummy)), &dummy);
	T("%d%n%d", VALS(VI(1), VP(&dummy), VI(2)), 1, &dummy, 2);
	T("x%hhny", VALS(VP(&dummy)), (signed char *)&dummy);
	T("n=%d, left=%-6s, right=%-6s, middle=%-6s",
	  VALS(VI(4), VS("LEFT"), VS("RIGHT"), VS("MIDDLE")),
	  4, "LEFT", "RIGHT", "MIDDLE");
	/* values the format does not use are ignored */
	T("%d", VALS(VI(1), VI(2), VS("three")), 1);
}

/* An errno value (e) after the format's: " errno ENAME" when not 0. */
static void test_errno(void)
{
	X("fd %d", VALS(VI(-1), VE(ENOENT)), "fd -1 errno ENOENT");
	X("fd %d", VALS(VI(3), VE(0)), "fd 3");
	X("r %d", VALS(VI(-1), VE(99999)), "r -1 errno 99999");
	X("r %d", VALS(VI(-1), VE(-5)), "r -1 errno -5");
	X("%s", VALS(VS(" eof"), VE(EIO)), " eof errno EIO");
	/* A format that reads it shows its number as well. */
	X("n %d", VALS(VE(EBADF)), "n 9 errno EBADF");
}

static void test_markers(void)
{
	X("%s", VALS(VI(5)), "<bad arg>");
	X("%s", VALS(VP(0x1000)), "<bad arg>");
	X("%d", VALS(VS("5")), "<bad arg>");
	X("%x", VALS(VD(1.0)), "<bad arg>");
	X("%f", VALS(VI(1)), "<bad arg>");
	X("%Lf", VALS(VU(1)), "<bad arg>");
	X("%p", VALS(VS("str")), "<bad arg>");
	X("%c", VALS(VD(65.0)), "<bad arg>");
	X("[%5s]", VALS(VI(5)), "[<bad arg>]");
	X("%d %d", VALS(VI(1)), "1 <missing>");
	X("%s", NOVALS, "<missing>");
	X("a%nb", NOVALS, "a<missing>b");
	X("%*d", VALS(VI(5)), "<missing>");
	X("%*d|%d", VALS(VS("x"), VI(5), VI(6)), "<bad arg>|6");
	X("%.*f|%d", VALS(VD(2.0), VD(1.5), VI(7)), "<bad arg>|7");
	X("%*.*d|%d", VALS(VD(1), VI(2), VI(3), VI(4)), "<bad arg>|4");
	X("%3$d", VALS(VI(1), VI(2)), "<missing>");
	X("%d %s %d", VALS(VS("a"), VI(1), VI(2)),
	  "<bad arg> <bad arg> 2");
	/* unknown and unfinished conversions are copied, using no value */
	X("%y %d", VALS(VI(5)), "%y 5");
	X("%m|%d", VALS(VI(5)), "%m|5");
	X("abc%", NOVALS, "abc%");
	X("abc%-5", NOVALS, "abc%-5");
	X("%0$d", VALS(VI(5)), "%0$d");
	X("%ls", VALS(VS("narrow")), "narrow");
	X("%5%|%d", VALS(VI(1)), "%|1");
}

/* A 16-byte payload: "ab" at most, then 14 bytes of zero padding. */
static void test_truncation(void)
{
	struct payload p;
	char out[64];
	size_t n = 99;
	int ret;

	encode(&p, VALS(VS("world")));
	memset(out, 'Z', sizeof(out));
	ret = tracer__format_event(out, 8, "hello %s", p.types, p.buf, p.len,
				   &n);
	ok(ret == -ENOSPC && n == 7 && strcmp(out, "hello w") == 0 &&
	   out[8] == 'Z', "output truncated to 7 bytes + NUL: -ENOSPC");
	encode(&p, VALS(VI(123456)));
	ret = tracer__format_event(out, 4, "%d", p.types, p.buf, p.len, &n);
	ok(ret == -ENOSPC && n == 3 && strcmp(out, "123") == 0,
	   "a conversion truncated in the middle");
	ret = tracer__format_event(out, 4, "abc", "", NULL, 0, &n);
	ok(ret == 0 && n == 3 && strcmp(out, "abc") == 0, "an exact fit");
	ret = tracer__format_event(out, 3, "a%s", "s", "xyz", 4, &n);
	ok(ret == -ENOSPC && n == 2 && strcmp(out, "ax") == 0,
	   "a string conversion truncated");
	ret = tracer__format_event(out, 4, "abcdef%d", "", NULL, 0, &n);
	ok(ret == -ENOSPC && n == 3 && strcmp(out, "abc") == 0,
	   "literal text truncated (then the missing value is moot)");
	memset(out, 'Z', sizeof(out));
	ret = tracer__format_event(out, 0, "abc", "", NULL, 0, &n);
	ok(ret == -ENOSPC && n == 0 && out[0] == 'Z',
	   "out_size 0: -ENOSPC, nothing written");
	ret = tracer__format_event(out, 1, "", "", NULL, 0, &n);
	ok(ret == 0 && n == 0 && out[0] == '\0', "empty output in 1 byte");
}

static void test_huge_fields(void)
{
	static char out[1 << 16];
	struct payload p;
	size_t n = 0, i, spaces = 0;
	int ret;

	encode(&p, VALS(VI(7)));
	ret = tracer__format_event(out, sizeof(out), "%2147483647d", p.types,
				   p.buf, p.len, &n);
	for (i = 0; i < n; i++)
		spaces += out[i] == ' ';
	ok(ret == -ENOSPC && n == sizeof(out) - 1 && spaces == n,
	   "an absurd width fills the output with padding: -ENOSPC");
	encode(&p, VALS(VI(INT_MIN), VI(7)));
	ret = tracer__format_event(out, sizeof(out), "%*d|", p.types, p.buf,
				   p.len, &n);
	ok(ret == -ENOSPC && out[0] == '7' && out[1] == ' ',
	   "`*` width INT_MIN: left-justified, capped");
	encode(&p, VALS(VI(1 << 30), VD(1.0)));
	ret = tracer__format_event(out, sizeof(out), "%.*f", p.types, p.buf,
				   p.len, &n);
	ok(ret == -ENOSPC && strncmp(out, "1.000", 5) == 0,
	   "`*` precision 2^30 is capped and truncated");
}

static void test_bad_payloads(void)
{
	static const unsigned char zeros[32];
	char out[64];
	size_t n = 5;
	int ret;

	memset(out, 'Z', sizeof(out));
	ret = tracer__format_event(out, sizeof(out), "%d", "i", zeros, 7, &n);
	ok(ret == -EBADMSG && out[0] == '\0' && n == 0,
	   "7 bytes for an i: -EBADMSG, empty output");
	is_int(tracer__format_event(out, sizeof(out), "%Lf", "D", zeros, 8,
				    NULL), -EBADMSG, "8 bytes for a D");
	is_int(tracer__format_event(out, sizeof(out), "%s", "s", "abc", 3,
				    NULL), -EBADMSG, "a string without NUL");
	is_int(tracer__format_event(out, sizeof(out), "%s", "s", "", 0,
				    NULL), -EBADMSG, "a string in 0 bytes");
	is_int(tracer__format_event(out, sizeof(out), "%d%s", "is", zeros, 8,
				    NULL), -EBADMSG, "the second value missing");
	is_int(tracer__format_event(out, sizeof(out), "", "ii", zeros, 16,
				    NULL), 0, "values the format does not use");
	is_int(tracer__format_event(out, sizeof(out), "%d", "x", zeros, 8,
				    NULL), -EINVAL, "unknown type letter");
	is_int(tracer__format_event(out, sizeof(out), "%d", "-", zeros, 8,
				    NULL), -EINVAL, "'-' is not a type letter");
	is_int(tracer__format_event(out, sizeof(out), "x", NULL, NULL, 0,
				    NULL), 0, "NULL types: no values");
	is_int(tracer__payload_check("iudDps", zeros, 32), -EBADMSG,
	       "payload_check: no NUL for the string");
	is_int(tracer__payload_check("iudDps", zeros, 31), -EBADMSG,
	       "payload_check: too short");
}

static void test_decoder(void)
{
	struct payload p;
	struct tracer__value v[6];
	size_t off = 0, offs[6];
	int ret = 0, i;

	encode(&p, VALS(VI(-5), VU(UINT64_MAX), VD(0.25), VLD(1.0L / 3),
			VP(0xabc), VS("str")));
	for (i = 0; i < 6 && !ret; i++) {
		ret = tracer__payload_next(p.types[i], p.buf + 0, p.len, &off,
					   &v[i]);
		offs[i] = off;
	}
	ok(ret == 0 && v[0].type == 'i' && v[0].i == -5 &&
	   v[1].u == UINT64_MAX && v[2].d == 0.25 && v[3].ld == 1.0L / 3 &&
	   v[4].type == 'p' && v[4].u == 0xabc && strcmp(v[5].s, "str") == 0,
	   "payload_next decodes i u d D p s");
	ok(offs[0] == 8 && offs[1] == 16 && offs[2] == 24 && offs[3] == 40 &&
	   offs[4] == 48 && offs[5] == 52, "offsets: 8 each, 16 for D, "
	   "string + NUL");
	off = p.len;
	is_int(tracer__payload_next('i', p.buf, p.len, &off, &v[0]),
	       -EBADMSG, "payload_next at the end: -EBADMSG");
	off = p.len + 8;
	is_int(tracer__payload_next('i', p.buf, p.len, &off, &v[0]),
	       -EBADMSG, "payload_next past the end: -EBADMSG");
	off = 0;
	is_int(tracer__payload_next('q', p.buf, p.len, &off, &v[0]), -EINVAL,
	       "payload_next of an unknown letter: -EINVAL");
	is_int(tracer__payload_next('\0', p.buf, p.len, &off, &v[0]),
	       -EINVAL, "payload_next of NUL: -EINVAL");
}

/*
 * event_format.h is the one description of the values: its letters are
 * tracer.h's TRACER_ARG_*, its sizes and limits are those the decoder
 * reads back.
 */
static void test_one_description(void)
{
	const char args[] = { TRACER_ARG_SIGNED, TRACER_ARG_UNSIGNED,
			      TRACER_ARG_DOUBLE, TRACER_ARG_LDOUBLE,
			      TRACER_ARG_POINTER, TRACER_ARG_STRING,
			      TRACER_ARG_ERRNO };
	char buf[TRACER_STRING_MAX + 64], big[600], *end;
	struct tracer__value v;
	long double ld = -2.5L;
	size_t i, found = 0, off = 0;

	for (i = 0; i < sizeof(args); i++)
		found += strchr(TRACER__TYPE_LETTERS, args[i]) != NULL;
	ok(found == 7 && strlen(TRACER__TYPE_LETTERS) == 7,
	   "the type letters are tracer.h's seven TRACER_ARG_*");
	ok(tracer__type_fixed_size('i') == 8 &&
	   tracer__type_fixed_size('u') == 8 &&
	   tracer__type_fixed_size('d') == 8 &&
	   tracer__type_fixed_size('p') == 8 &&
	   tracer__type_fixed_size('D') == 16 &&
	   tracer__type_fixed_size('s') == 0 &&
	   tracer__type_fixed_size('q') == -1 &&
	   tracer__type_fixed_size('\0') == -1,
	   "fixed sizes: 8, 16 for D, 0 for a string, -1 for no letter");
	ok(tracer__types_valid("") && tracer__types_valid("iudDpsii") &&
	   !tracer__types_valid("iudDpsiii") && !tracer__types_valid("iq"),
	   "a call site's letters: at most TRACER_MAX_ARGS known ones");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(tracer__string_stored(NULL) == sizeof(TRACER__NULL_STRING) &&
	   tracer__string_stored("abc") == 4 &&
	   tracer__string_stored(big) == TRACER_STRING_MAX,
	   "a string takes its bytes and a NUL, TRACER_STRING_MAX at most");
	end = tracer__store_string(buf, big);
	end = tracer__store_ldouble(end, &ld);
	ok(end - buf == TRACER_STRING_MAX + TRACER__PAYLOAD_LDOUBLE &&
	   tracer__payload_next('s', buf, (size_t)(end - buf), &off, &v) ==
	   0 && strlen(v.s) == TRACER_STRING_MAX - 1 &&
	   tracer__payload_next('D', buf, (size_t)(end - buf), &off, &v) ==
	   0 && v.ld == ld && off == (size_t)(end - buf),
	   "what the writer stores, the decoder reads back (a cut string, "
	   "a long double)");
}

/* s of n bytes of c into buf (n + 1 bytes). */
static const char *string_of(char *buf, size_t n, char c)
{
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/*
 * A string longer than the limit is stored cut, its end marked "...": a
 * reader can tell (tracer__string_cut()); one that fits is stored whole,
 * up to TRACER_STRING_MAX - 2 bytes.
 */
static void test_cut_strings(void)
{
	char in[700], out[TRACER_STRING_MAX + 8], want[TRACER_STRING_MAX];
	size_t fit = TRACER_STRING_MAX - 2;

	memset(out, '#', sizeof(out));
	ok(tracer__store_string(out, string_of(in, fit, 'a')) ==
	   out + fit + 1 && !strcmp(out, in) && !tracer__string_cut(out),
	   "a string of TRACER_STRING_MAX - 2 bytes is stored whole");
	tracer__store_string(out, string_of(in, fit + 1, 'b'));
	string_of(want, fit + 1 - 3, 'b');
	strcat(want, "...");
	ok(!strcmp(out, want) && tracer__string_cut(out),
	   "one byte more: cut, its last 3 bytes \"...\"");
	ok(tracer__store_string(out, string_of(in, 650, 'c')) ==
	   out + TRACER_STRING_MAX && strlen(out) == TRACER_STRING_MAX - 1 &&
	   !strncmp(out + TRACER_STRING_MAX - 4, "...", 4) &&
	   out[TRACER_STRING_MAX - 5] == 'c' && out[TRACER_STRING_MAX] == '#',
	   "a long one: TRACER_STRING_MAX bytes, NUL included, ending "
	   "\"...\", nothing written past them");
	tracer__store_string(in, out);
	ok(!strcmp(in, out), "a cut string stored again is the same "
	   "(tracerd's salvage)");
	ok(!tracer__string_cut("") && !tracer__string_cut("abc..."),
	   "a short string ending with dots is not a cut one");
}

/* The C type of each argument a format reads, for tracectl list. */
static void test_arg_types(void)
{
	const char *t[TRACER_MAX_ARGS];
	size_t n;

	n = tracer__format_arg_types("fd %d addr %s result %d%s", t, 8);
	ok(n == 4 && !strcmp(t[0], "int") && !strcmp(t[1], "string") &&
	   !strcmp(t[2], "int") && !strcmp(t[3], "string"),
	   "arg types: %%d %%s %%d %%s");
	n = tracer__format_arg_types("%hhd %lu %zu %llx %p %#lx %c %lc", t, 8);
	ok(n == 8 && !strcmp(t[0], "signed char") &&
	   !strcmp(t[1], "unsigned long") && !strcmp(t[2], "size_t") &&
	   !strcmp(t[3], "unsigned long long") && !strcmp(t[4], "pointer") &&
	   !strcmp(t[5], "unsigned long") && !strcmp(t[6], "char") &&
	   !strcmp(t[7], "wint_t"),
	   "arg types: length modifiers make the C type");
	n = tracer__format_arg_types("%.2f %Lg %*d %% %.*s", t, 8);
	ok(n == 6 && !strcmp(t[0], "double") &&
	   !strcmp(t[1], "long double") && !strcmp(t[2], "int") &&
	   !strcmp(t[3], "int") && !strcmp(t[4], "int") &&
	   !strcmp(t[5], "string"),
	   "arg types: doubles, `*` widths and precisions are int, %%%% none");
	n = tracer__format_arg_types("%3$s %1$d", t, 8);
	ok(n == 3 && !strcmp(t[0], "int") && t[1] == NULL &&
	   !strcmp(t[2], "string"),
	   "arg types: positional conversions; one no conversion reads is NULL");
	ok(tracer__format_arg_types("no values %y %", t, 8) == 0 &&
	   tracer__format_arg_types(NULL, t, 8) == 0,
	   "arg types: none for plain text, unknown or unfinished "
	   "conversions, NULL");
	n = tracer__format_arg_types("%d %d %d", t, 2);
	ok(n == 2 && !strcmp(t[1], "int"), "arg types: at most max");
}

int main(void)
{
	plan(243);
	test_signed();
	test_unsigned();
	test_char_string_pointer();
	test_double();
	test_long_double();
	test_star_positional();
	test_mixed();
	test_errno();
	test_markers();
	test_truncation();
	test_huge_fields();
	test_bad_payloads();
	test_decoder();
	test_one_description();
	test_cut_strings();
	test_arg_types();
	return done();
}
