/*
 * event_format.h - the one description of how an event's values are
 * recorded, for everyone who writes or reads them: the writer
 * (libtracer/tracer.c), tracerd's own events (tracerd/salvage.c) and its
 * checks of what a process registers (tracerd/process.c), the decoder and
 * formatter (common/format.c), the CTF generator (common/ctf_meta.c) and
 * the readers (tracectl).
 *
 * A call site's values are described by its type letters, one per
 * argument, at most TRACER_MAX_ARGS of them (include/tracer.h names each
 * letter TRACER_ARG_*, because the macros there pick them). A record's
 * payload holds the values one after the other, unaligned
 * (doc/session-files.md):
 *
 *   letter  C types            bytes in the payload
 *   i       signed integers    8  (int64_t)
 *   u       unsigned integers  8  (uint64_t)
 *   d       float, double      8  (double)
 *   p       other pointers     8  (the address, uint64_t)
 *   D       long double        TRACER__PAYLOAD_LDOUBLE (its bytes,
 *                              zero-padded)
 *   s       char *             the bytes and a NUL, TRACER_STRING_MAX in
 *                              all at most; a NULL pointer is "(null)";
 *                              a longer string is cut and ends with
 *                              TRACER__STRING_CUT (below)
 *   e       errno              8  (int64_t): the library's wrappers' last
 *                              value, which their formats do not read;
 *                              0 when the call did not fail. Readers
 *                              append " errno ENAME" to the message when
 *                              it is not 0 (format.c), CTF has it as the
 *                              enumeration tracer_errno (ctf_meta.c)
 *
 * Internal header: not installed.
 */
#ifndef TRACER_EVENT_FORMAT_H
#define TRACER_EVENT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The letters and limits are the public header's. A daemon or reader
 * that includes this header first does not link libtracer: it registers
 * no call sites of its own. */
#ifndef TRACER_H
# ifndef TRACER_NO_AUTO_REGISTER
#  define TRACER_NO_AUTO_REGISTER
# endif
#endif
#include "tracer.h"

/* Every type letter (tests/unit/test_format.c checks it against the
 * TRACER_ARG_* of tracer.h). */
#define TRACER__TYPE_LETTERS	"iudDpse"

#define TRACER__PAYLOAD_WORD	8	/* i u d p e */
#define TRACER__PAYLOAD_LDOUBLE	16	/* D */
#define TRACER__NULL_STRING	"(null)"	/* stored for a NULL char * */

/*
 * A string argument of up to TRACER_STRING_MAX - 2 bytes is stored whole.
 * A longer one is cut: its first TRACER_STRING_MAX - 1 - 3 bytes, then
 * TRACER__STRING_CUT, then the NUL. So a stored string of exactly
 * TRACER_STRING_MAX - 1 bytes is always a cut one (tracer__string_cut()),
 * and every reader (tracectl view, babeltrace2) shows the marker as it is
 * stored.
 */
#define TRACER__STRING_CUT	"..."
#define TRACER__STRING_CUT_LEN	3

/* The session directory's format (doc/session-files.md), on
 * process.meta's first line: 3 since the packet header holds the ring's
 * bookkeeping (rb_layout.h); 2 had compact record headers and the older
 * packet layout, which tracectl still reads; 1 had 16-byte record headers,
 * which it does not. */
#define TRACER__SESSION_FORMAT_OLDEST	2
#define TRACER__SESSION_FORMAT	3
#define TRACER__SESSION_LINE	"tracer-process 3"	/* the same */

_Static_assert(sizeof(long double) <= TRACER__PAYLOAD_LDOUBLE,
	       "a long double does not fit its payload slot");

/* Bytes a value of type t takes in a payload: 8 or 16; 0 for a string
 * (its length: tracer__string_stored()); -1 for no type letter. */
static inline int tracer__type_fixed_size(char t)
{
	switch (t) {
	case TRACER_ARG_SIGNED:
	case TRACER_ARG_UNSIGNED:
	case TRACER_ARG_DOUBLE:
	case TRACER_ARG_POINTER:
	case TRACER_ARG_ERRNO:
		return TRACER__PAYLOAD_WORD;
	case TRACER_ARG_LDOUBLE:
		return TRACER__PAYLOAD_LDOUBLE;
	case TRACER_ARG_STRING:
		return 0;
	default:
		return -1;
	}
}

/* Is types (NUL-terminated) a call site's letters: at most
 * TRACER_MAX_ARGS known ones ("" for none)? */
static inline bool tracer__types_valid(const char *types)
{
	size_t n = strnlen(types, TRACER_MAX_ARGS + 1);

	return n <= TRACER_MAX_ARGS &&
	       strspn(types, TRACER__TYPE_LETTERS) == n;
}

/*
 * The strnlen() bounds below are limits, not sizes: the strings end with
 * a NUL before them. GCC 11 and later warn when one of these inline
 * functions is given a shorter string literal (-Wstringop-overread).
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

/* Bytes that string argument s takes in a payload, its NUL included. */
static inline size_t tracer__string_stored(const char *s)
{
	return strnlen(s ? s : TRACER__NULL_STRING, TRACER_STRING_MAX - 1) + 1;
}

/* Store string argument s at p (tracer__string_stored() bytes), ending
 * with TRACER__STRING_CUT if it was cut; returns the end. No call but
 * memcpy: this is the event write path. */
static inline char *tracer__store_string(char *p, const char *s)
{
	size_t n = tracer__string_stored(s) - 1;

	memcpy(p, s ? s : TRACER__NULL_STRING, n);
	if (n == TRACER_STRING_MAX - 1)
		memcpy(p + n - TRACER__STRING_CUT_LEN, TRACER__STRING_CUT,
		       TRACER__STRING_CUT_LEN);
	p[n] = '\0';
	return p + n + 1;
}

/* Was the stored string s (NUL-ended, from a payload) cut? */
static inline bool tracer__string_cut(const char *s)
{
	return strnlen(s, TRACER_STRING_MAX) == TRACER_STRING_MAX - 1;
}

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

/* Store the bytes of a long double (ld: its sizeof(long double) bytes) at
 * p; returns the end. */
static inline char *tracer__store_ldouble(char *p, const void *ld)
{
	memset(p, 0, TRACER__PAYLOAD_LDOUBLE);
	memcpy(p, ld, sizeof(long double));
	return p + TRACER__PAYLOAD_LDOUBLE;
}

/*
 * A call site as tracerd keeps it and a reader finds it in process.meta
 * (`callsite` lines): the description a process registered, its strings
 * owned by whoever holds it. (The program's own static descriptor is
 * struct tracer_callsite, include/tracer.h.)
 */
struct tracer__site {
	uint32_t id;			/* >= 1 */
	uint32_t line;
	bool vital;			/* tracer_record_vital() */
	char *types;			/* letters; "" for none */
	char *file;
	char *name;			/* provider:event */
	char *format;			/* printf format */
	uint32_t meta_line;		/* its line in process.meta (readers;
					   0: not read from one) */
};

#endif /* TRACER_EVENT_FORMAT_H */
