/*
 * format.h - turn a recorded event back into the text printf would have
 * printed: decode the packed argument values of a record (the payload, see
 * doc/session-files.md) and apply the call site's printf format to them.
 *
 * Internal header: not installed.
 */
#ifndef TRACER_FORMAT_H
#define TRACER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "event_format.h"	/* the letters, and what each value takes */

/* Printed in place of a conversion whose value cannot be used. */
#define TRACER_FORMAT_BAD_ARG	"<bad arg>"	/* wrong kind, e.g. %s of an int */
#define TRACER_FORMAT_MISSING	"<missing>"	/* fewer values than conversions */

/*
 * Widths and precisions (literal or from `*`) above this are reduced to it,
 * so that a corrupt or hostile format cannot make one conversion produce
 * gigabytes.
 */
#define TRACER_FORMAT_MAX_FIELD	(1 << 20)

/* One decoded value. */
struct tracer__value {
	char type;			/* a letter of TRACER__TYPE_LETTERS */
	union {
		int64_t i;		/* 'i' */
		uint64_t u;		/* 'u' and 'p' (the address) */
		double d;		/* 'd' */
		long double ld;		/* 'D' */
		const char *s;		/* 's': inside the payload, NUL-ended */
	};
};

/*
 * Decode the value of type `type` that starts at payload[*off] (the payload
 * is size bytes, unaligned) into *v and move *off past it.
 * Returns 0, -EINVAL (type is not one of TRACER__TYPE_LETTERS), -EBADMSG (the
 * payload ends before the value does: too short, or a string without its
 * NUL).
 */
int tracer__payload_next(char type, const void *payload, size_t size,
			 size_t *off, struct tracer__value *v);

/*
 * Check that the payload holds one value for each letter of types (extra
 * bytes after the last value, such as padding, are allowed).
 * Returns 0, -EINVAL (a letter is not one of TRACER__TYPE_LETTERS), -EBADMSG
 * (the payload is too short or a string has no NUL).
 */
int tracer__payload_check(const char *types, const void *payload,
			  size_t size);

/*
 * Print into out[0..out_size) what printf(format, ...) would have printed
 * with the values recorded in payload (one per letter of types, "" for
 * none). Every conversion of printf is understood: flags -+ #0' (and glibc's
 * I), width and precision as numbers or `*` (an int taken from the values),
 * positional arguments (%2$d, *1$), length modifiers hh h l ll q j z Z t L,
 * conversions d i o u x X c s p f F e E g G a A n %. Each value is
 * converted to the C type the conversion and its length modifier call for
 * (%hhd of 300 prints 44), as printf would. %n prints nothing and uses its
 * value. A value of the wrong kind prints TRACER_FORMAT_BAD_ARG, a missing
 * one TRACER_FORMAT_MISSING; an unknown or unfinished conversion is copied
 * as it is. The output may contain NUL bytes (%c of 0): *written (if not
 * NULL) is its length, without the final NUL, which is always written when
 * out_size > 0.
 * Returns 0, -EINVAL (types has an unknown letter), -EBADMSG (payload too
 * short for types, or a string without NUL: out is then ""), -ENOSPC (the
 * output did not fit: it is truncated to out_size - 1 bytes).
 */
int tracer__format_event(char *out, size_t out_size, const char *format,
			 const char *types, const void *payload,
			 size_t payload_size, size_t *written);

/*
 * A note printed after each %p conversion (tracectl names the address:
 * " <main+9>"): fn writes at most size - 1 bytes and a NUL into buf, and
 * returns how many bytes it wrote (0: no note).
 */
struct tracer__format_note {
	size_t (*fn)(void *ctx, uint64_t addr, char *buf, size_t size);
	void *ctx;
};

/* tracer__format_event(), with note (NULL: none) after each %p. */
int tracer__format_event_note(char *out, size_t out_size, const char *format,
			      const char *types, const void *payload,
			      size_t payload_size, size_t *written,
			      const struct tracer__format_note *note);

/*
 * The C type each argument of printf format has, as its conversions read
 * them (the call site's values were recorded for it): types[i] is that of
 * argument i (from 0): "int", "unsigned", "long", "size_t", "char",
 * "string", "pointer", "double", "long double"... (the length modifier
 * counts: %hhd is "signed char", %zu "size_t"), "int" for a `*` width or
 * precision, NULL for an argument no conversion reads. Positional
 * conversions (%2$s, *1$) name the argument they read. Unknown and
 * unfinished conversions read none.
 * Returns how many arguments the format reads (the highest one read, plus
 * one), at most max: those past max are not counted.
 */
size_t tracer__format_arg_types(const char *format, const char **types,
				size_t max);

#endif /* TRACER_FORMAT_H */
