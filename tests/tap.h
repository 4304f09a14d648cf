/*
 * tap.h - a minimal Test Anything Protocol producer for the unit and
 * integration tests (run by automake's tap-driver.sh).
 *
 *   plan(N); ok(cond, "name %d", x); is_u64(got, want, "name"); ...
 *   return done();
 */
#ifndef TRACER_TESTS_TAP_H
#define TRACER_TESTS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count;
static int tap_failed;

static inline void plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void tap_vresult(int pass, const char *fmt, va_list ap)
{
	printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	if (!pass)
		tap_failed++;
}

static inline int ok(int pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int ok(int pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(pass, fmt, ap);
	va_end(ap);
	return pass;
}

static inline void diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ok() for two integers, showing both on failure. */
#define is_u64(got, want, ...)						\
	do {								\
		uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want); \
		if (!ok(got_ == want_, __VA_ARGS__))			\
			diag("  got %" PRIu64 ", want %" PRIu64,	\
			     got_, want_);				\
	} while (0)

#define is_int(got, want, ...)						\
	do {								\
		long long got_ = (got), want_ = (want);			\
		if (!ok(got_ == want_, __VA_ARGS__))			\
			diag("  got %lld, want %lld", got_, want_);	\
	} while (0)

/* Stop the test at once: a precondition failed. */
#define bail_out(...)							\
	do {								\
		printf("Bail out! ");					\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		exit(1);						\
	} while (0)

static inline int done(void)
{
	return tap_failed ? 1 : 0;
}

#endif /* TRACER_TESTS_TAP_H */
