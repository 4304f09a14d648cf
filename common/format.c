/*
 * format.c - re-create the text of a printf call from its format string and
 * the argument values recorded with it.
 *
 * The format is copied up to each conversion; the conversion is parsed
 * (position, flags, width, precision, length modifier, conversion letter),
 * `*` widths and precisions are taken from the values, and the conversion's
 * value is converted to the C type printf would have read for it. The
 * conversion is then re-issued to snprintf as a sub-format with the same
 * flags, width and precision (a `*` written back as the number it took), so
 * every detail of printf's output (padding, rounding, %g, %a, "(nil)") is
 * printf's own.
 *
 * The payload is checked once, before formatting; after that, decoding a
 * value cannot fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

#include "format.h"

/* ----------------------------------------------------------------------
 * Payload decoding.
 */

static int next_string(const char *p, size_t left, size_t *off,
		       struct tracer__value *v)
{
	const char *nul = left ? memchr(p, '\0', left) : NULL;

	if (!nul)
		return -EBADMSG;
	v->s = p;
	*off += (size_t)(nul - p) + 1;
	return 0;
}

static void decode_fixed(const char *p, struct tracer__value *v)
{
	switch (v->type) {
	case TRACER_ARG_SIGNED:
	case TRACER_ARG_ERRNO:
		memcpy(&v->i, p, sizeof(v->i));
		break;
	case TRACER_ARG_DOUBLE:
		memcpy(&v->d, p, sizeof(v->d));
		break;
	case TRACER_ARG_LDOUBLE:
		memcpy(&v->ld, p, sizeof(v->ld));
		break;
	default:			/* unsigned, pointer */
		memcpy(&v->u, p, sizeof(v->u));
		break;
	}
}

int tracer__payload_next(char type, const void *payload, size_t size,
			 size_t *off, struct tracer__value *v)
{
	int fixed = tracer__type_fixed_size(type);
	size_t need = fixed > 0 ? (size_t)fixed : 1, left; /* a NUL at least */
	const char *p;

	if (fixed < 0)
		return -EINVAL;
	if (*off >= size)
		return -EBADMSG;
	left = size - *off;
	p = (const char *)payload + *off;
	v->type = type;
	if (type == TRACER_ARG_STRING)
		return next_string(p, left, off, v);
	if (left < need)
		return -EBADMSG;
	decode_fixed(p, v);
	*off += need;
	return 0;
}

int tracer__payload_check(const char *types, const void *payload,
			  size_t size)
{
	struct tracer__value v;
	size_t off = 0;
	int ret;

	for (; types && *types; types++) {
		ret = tracer__payload_next(*types, payload, size, &off, &v);
		if (ret)
			return ret;
	}
	return 0;
}

/* ----------------------------------------------------------------------
 * Output buffer: out[0..size), always room for the final NUL.
 */

struct out {
	char *buf;
	size_t size;			/* > 0 */
	size_t len;			/* bytes written, < size */
	bool full;			/* something did not fit */
	const struct tracer__format_note *note;	/* after %p, or NULL */
};

/* Bytes of a note after a %p (its text is cut to this). */
#define NOTE_MAX	512

static void out_mem(struct out *o, const char *s, size_t n)
{
	size_t room = o->size - 1 - o->len;

	if (n > room) {
		n = room;
		o->full = true;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

/* Print one conversion: sub is a sub-format built by build_sub(). */
static void out_conv(struct out *o, const char *sub, ...)
{
	size_t room = o->size - o->len;
	va_list ap;
	int n;

	va_start(ap, sub);
	/*
	 * sub is built at run time from the recorded format (it cannot be a
	 * literal); every caller passes one value of exactly the C type that
	 * sub's conversion and length modifier name.
	 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	n = vsnprintf(o->buf + o->len, room, sub, ap);
#pragma GCC diagnostic pop
	va_end(ap);
	if (n < 0) {		/* e.g. %lc of a character the locale lacks */
		o->buf[o->len] = '\0';
		out_str(o, TRACER_FORMAT_BAD_ARG);
	} else if ((size_t)n >= room) {
		o->len = o->size - 1;
		o->full = true;
	} else {
		o->len += (size_t)n;
	}
}

/* ----------------------------------------------------------------------
 * Values, by position.
 */

struct args {
	const char *types;
	const void *payload;
	size_t size;
	size_t count;			/* values in the payload */
	size_t next;			/* value of the next `*` or conversion */
	size_t at;			/* index of the value at `off` */
	size_t off;
};

/* Value number idx (from 0) into *v; false if there are fewer values. */
static bool arg_at(struct args *a, size_t idx, struct tracer__value *v)
{
	if (idx >= a->count)
		return false;
	if (idx < a->at) {
		a->at = 0;
		a->off = 0;
	}
	for (;;) {
		/* cannot fail: tracer__payload_check() passed */
		tracer__payload_next(a->types[a->at], a->payload, a->size,
				     &a->off, v);
		if (a->at++ == idx)
			return true;
	}
}

/* The value at 1-based position pos, or the next one if pos is 0. */
static bool arg_fetch(struct args *a, size_t pos, struct tracer__value *v)
{
	return arg_at(a, pos ? pos - 1 : a->next++, v);
}

static bool is_integer(char type)
{
	return type == TRACER_ARG_SIGNED || type == TRACER_ARG_UNSIGNED ||
	       type == TRACER_ARG_POINTER || type == TRACER_ARG_ERRNO;
}

/* The 64 bits of an integer or pointer value. */
static uint64_t int_bits(const struct tracer__value *v)
{
	return v->type == TRACER_ARG_SIGNED || v->type == TRACER_ARG_ERRNO ?
	       (uint64_t)v->i : v->u;
}

/* ----------------------------------------------------------------------
 * Parsing a conversion specification.
 */

enum len_mod {
	LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_J, LEN_Z, LEN_T, LEN_BIG_L,
};

/* Flags, in the order they are written back into a sub-format. */
static const char flag_chars[] = "-+ #0'I";
#define FLAG_MINUS	1u		/* bit of '-' in spec.flags */

static const char conversions[] = "diouxXcspfFeEgGaAn%";

struct spec {
	unsigned flags;			/* bit i: flag_chars[i] */
	int width;			/* -1: none */
	int prec;			/* -1: none */
	bool width_star, prec_star;
	size_t width_pos, prec_pos;	/* `*n$`: n; plain `*`: 0 */
	size_t pos;			/* `n$`: n; none: 0 */
	enum len_mod len;
	char conv;
};

/* Decimal digits at *p, saturating at TRACER_FORMAT_MAX_FIELD. */
static int parse_num(const char **p)
{
	int n = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		if (n <= TRACER_FORMAT_MAX_FIELD)
			n = n * 10 + (**p - '0');
	return n > TRACER_FORMAT_MAX_FIELD ? TRACER_FORMAT_MAX_FIELD : n;
}

/* An argument position `n$` at *p (n >= 1): n, or 0 if there is none. */
static size_t parse_pos(const char **p)
{
	const char *q = *p;
	int n;

	if (*q < '1' || *q > '9')
		return 0;
	n = parse_num(&q);
	if (*q != '$')
		return 0;
	*p = q + 1;
	return (size_t)n;
}

/* The bit of a flag character in spec.flags, or 0. */
static unsigned flag_bit(char c)
{
	const char *f = c ? strchr(flag_chars, c) : NULL;

	return f ? 1u << (f - flag_chars) : 0;
}

static const char *parse_flags(const char *p, struct spec *s)
{
	unsigned bit;

	while ((bit = flag_bit(*p))) {
		s->flags |= bit;
		p++;
	}
	return p;
}

static const char *parse_width(const char *p, struct spec *s)
{
	if (*p == '*') {
		p++;
		s->width_star = true;
		s->width_pos = parse_pos(&p);
	} else {
		s->width = parse_num(&p);
	}
	return p;
}

static const char *parse_prec(const char *p, struct spec *s)
{
	if (*p != '.')
		return p;
	p++;
	if (*p == '*') {
		p++;
		s->prec_star = true;
		s->prec_pos = parse_pos(&p);
	} else {
		s->prec = parse_num(&p);
	}
	return p;
}

static const char *parse_len(const char *p, struct spec *s)
{
	switch (*p) {
	case 'h':
		s->len = p[1] == 'h' ? LEN_HH : LEN_H;
		return p + 1 + (p[1] == 'h');
	case 'l':
		s->len = p[1] == 'l' ? LEN_LL : LEN_L;
		return p + 1 + (p[1] == 'l');
	case 'q':
		s->len = LEN_LL;
		return p + 1;
	case 'L':
		s->len = LEN_BIG_L;
		return p + 1;
	case 'j':
		s->len = LEN_J;
		return p + 1;
	case 'z':
	case 'Z':
		s->len = LEN_Z;
		return p + 1;
	case 't':
		s->len = LEN_T;
		return p + 1;
	default:
		return p;
	}
}

/* Parse the conversion starting at the '%' at p: its end, or NULL if the
 * format ends before the conversion letter. */
static const char *parse_spec(const char *p, struct spec *s)
{
	memset(s, 0, sizeof(*s));
	s->width = -1;
	s->prec = -1;
	p++;
	s->pos = parse_pos(&p);
	p = parse_flags(p, s);
	p = parse_width(p, s);
	p = parse_prec(p, s);
	p = parse_len(p, s);
	if (*p == '\0')
		return NULL;
	s->conv = *p;
	return p + 1;
}

/* ----------------------------------------------------------------------
 * Formatting one conversion.
 */

/* The int of a `*` into *n: NULL, or the marker to print instead. */
static const char *star_value(struct args *a, size_t pos, int *n)
{
	struct tracer__value v;

	if (!arg_fetch(a, pos, &v))
		return TRACER_FORMAT_MISSING;
	if (!is_integer(v.type))
		return TRACER_FORMAT_BAD_ARG;
	*n = (int)int_bits(&v);
	return NULL;
}

static int clamp_field(int n)
{
	return n > TRACER_FORMAT_MAX_FIELD ? TRACER_FORMAT_MAX_FIELD : n;
}

/* Replace `*` width and precision by the values they take, as printf:
 * a negative width is the '-' flag, a negative precision none. Both are
 * taken even if the first is bad, so later conversions stay in step. */
static const char *resolve_stars(struct args *a, struct spec *s)
{
	const char *why = NULL, *bad;
	int n = 0;

	if (s->width_star && !(why = star_value(a, s->width_pos, &n))) {
		if (n < 0) {
			s->flags |= FLAG_MINUS;
			n = n < -TRACER_FORMAT_MAX_FIELD ?
				TRACER_FORMAT_MAX_FIELD : -n;
		}
		s->width = clamp_field(n);
	}
	if (s->prec_star) {
		bad = star_value(a, s->prec_pos, &n);
		if (!bad)
			s->prec = n < 0 ? -1 : clamp_field(n);
		why = why ? why : bad;
	}
	return why;
}

/* Write "%[flags][width][.prec]<len><conv>" into sub[32]. */
static void build_sub(char *sub, const struct spec *s, const char *len,
		      char conv)
{
	char *p = sub;
	unsigned i;

	*p++ = '%';
	for (i = 0; flag_chars[i]; i++)
		if (s->flags & (1u << i))
			*p++ = flag_chars[i];
	if (s->width > 0)
		p += snprintf(p, 12, "%d", s->width);
	if (s->prec >= 0)
		p += snprintf(p, 13, ".%d", s->prec);
	p = stpcpy(p, len);
	*p++ = conv;
	*p = '\0';
}

/* Length modifiers of integer sub-formats (L and q read a long long). */
static const char *const int_len[] = {
	[LEN_NONE] = "", [LEN_HH] = "hh", [LEN_H] = "h", [LEN_L] = "l",
	[LEN_LL] = "ll", [LEN_J] = "j", [LEN_Z] = "z", [LEN_T] = "t",
	[LEN_BIG_L] = "ll",
};

static void conv_signed(struct out *o, const struct spec *s, uint64_t raw)
{
	char sub[32];

	build_sub(sub, s, int_len[s->len], s->conv);
	switch (s->len) {
	case LEN_HH:
		out_conv(o, sub, (int)(signed char)raw);
		break;
	case LEN_H:
		out_conv(o, sub, (int)(short)raw);
		break;
	case LEN_NONE:
		out_conv(o, sub, (int)raw);
		break;
	case LEN_L:
		out_conv(o, sub, (long)raw);
		break;
	case LEN_J:
		out_conv(o, sub, (intmax_t)raw);
		break;
	case LEN_Z:
		out_conv(o, sub, (ssize_t)raw);
		break;
	case LEN_T:
		out_conv(o, sub, (ptrdiff_t)raw);
		break;
	default:
		out_conv(o, sub, (long long)raw);
		break;
	}
}

static void conv_unsigned(struct out *o, const struct spec *s, uint64_t raw)
{
	char sub[32];

	build_sub(sub, s, int_len[s->len], s->conv);
	switch (s->len) {
	case LEN_HH:
		out_conv(o, sub, (unsigned)(unsigned char)raw);
		break;
	case LEN_H:
		out_conv(o, sub, (unsigned)(unsigned short)raw);
		break;
	case LEN_NONE:
		out_conv(o, sub, (unsigned)raw);
		break;
	case LEN_L:
		out_conv(o, sub, (unsigned long)raw);
		break;
	case LEN_J:
		out_conv(o, sub, (uintmax_t)raw);
		break;
	case LEN_Z:
	case LEN_T:		/* the unsigned type of ptrdiff_t's size */
		out_conv(o, sub, (size_t)raw);
		break;
	default:
		out_conv(o, sub, (unsigned long long)raw);
		break;
	}
}

static void conv_char(struct out *o, const struct spec *s, uint64_t raw)
{
	char sub[32];

	if (s->len == LEN_L) {
		build_sub(sub, s, "l", 'c');
		out_conv(o, sub, (wint_t)raw);
	} else {
		build_sub(sub, s, "", 'c');
		out_conv(o, sub, (int)raw);
	}
}

/* %f and friends: L (and glibc's ll and q) read a long double. */
static void conv_float(struct out *o, const struct spec *s,
		       const struct tracer__value *v)
{
	long double x = v->type == TRACER_ARG_LDOUBLE ? v->ld
						      : (long double)v->d;
	char sub[32];

	if (s->len == LEN_BIG_L || s->len == LEN_LL) {
		build_sub(sub, s, "L", s->conv);
		out_conv(o, sub, x);
	} else {
		build_sub(sub, s, "", s->conv);
		out_conv(o, sub, v->type == TRACER_ARG_LDOUBLE ? (double)v->ld
								: v->d);
	}
}

/* Strings and pointers: no length modifier (%ls of a recorded narrow
 * string prints it as %s). */
static void conv_string_pointer(struct out *o, const struct spec *s,
				const struct tracer__value *v)
{
	char sub[32];

	build_sub(sub, s, "", s->conv);
	if (s->conv == 's') {
		out_conv(o, sub, v->s);
		return;
	}
	out_conv(o, sub, (void *)(uintptr_t)int_bits(v));
	if (o->note) {
		char note[NOTE_MAX];
		size_t n = o->note->fn(o->note->ctx, int_bits(v), note,
				       sizeof(note));

		out_mem(o, note, n < sizeof(note) ? n : sizeof(note) - 1);
	}
}

/* Can a value of this type be printed by this conversion? */
static bool accepts(char conv, char type)
{
	switch (conv) {
	case 'n':
		return true;
	case 's':
		return type == TRACER_ARG_STRING;
	case 'd': case 'i': case 'o': case 'u': case 'x': case 'X':
	case 'c': case 'p':
		return is_integer(type);
	default:			/* f F e E g G a A */
		return type == TRACER_ARG_DOUBLE || type == TRACER_ARG_LDOUBLE;
	}
}

/* Print the value of a parsed conversion, or why it cannot be printed. */
static void convert(struct out *o, const struct spec *s,
		    const struct tracer__value *v)
{
	if (!accepts(s->conv, v->type)) {
		out_str(o, TRACER_FORMAT_BAD_ARG);
		return;
	}
	switch (s->conv) {
	case 'n':
		break;
	case 'd': case 'i':
		conv_signed(o, s, int_bits(v));
		break;
	case 'o': case 'u': case 'x': case 'X':
		conv_unsigned(o, s, int_bits(v));
		break;
	case 'c':
		conv_char(o, s, int_bits(v));
		break;
	case 's': case 'p':
		conv_string_pointer(o, s, v);
		break;
	default:
		conv_float(o, s, v);
		break;
	}
}

/* Handle the conversion at pc (a '%'); return where the format goes on. */
static const char *directive(struct out *o, struct args *a, const char *pc)
{
	struct tracer__value v;
	const char *end, *why;
	struct spec s;

	end = parse_spec(pc, &s);
	if (!end) {				/* unfinished: copy it */
		out_str(o, pc);
		return pc + strlen(pc);
	}
	if (!strchr(conversions, s.conv)) {	/* unknown: copy it */
		out_mem(o, pc, (size_t)(end - pc));
		return end;
	}
	if (s.conv == '%') {
		out_mem(o, "%", 1);
		return end;
	}
	why = resolve_stars(a, &s);
	if (!arg_fetch(a, s.pos, &v) && !why)	/* used even after a bad `*` */
		why = TRACER_FORMAT_MISSING;
	if (why)
		out_str(o, why);
	else
		convert(o, &s, &v);
	return end;
}

/*
 * After the message: " errno ENAME" (its number where the name is not
 * known) for each errno value (TRACER_ARG_ERRNO) that is not 0. The
 * library's events carry it after the values their formats read.
 */
static void errno_suffix(struct out *o, struct args *a)
{
	struct tracer__value v;
	const char *name;
	char num[24];
	size_t i;

	for (i = 0; i < a->count && !o->full; i++) {
		if (a->types[i] != TRACER_ARG_ERRNO || !arg_at(a, i, &v) ||
		    v.i == 0)
			continue;
		name = v.i > 0 && v.i < 4096 ? strerrorname_np((int)v.i) : NULL;
		if (!name) {
			snprintf(num, sizeof(num), "%" PRId64, v.i);
			name = num;
		}
		out_str(o, " errno ");
		out_str(o, name);
	}
}

int tracer__format_event(char *out, size_t out_size, const char *format,
			 const char *types, const void *payload,
			 size_t payload_size, size_t *written)
{
	return tracer__format_event_note(out, out_size, format, types,
					 payload, payload_size, written, NULL);
}

int tracer__format_event_note(char *out, size_t out_size, const char *format,
			      const char *types, const void *payload,
			      size_t payload_size, size_t *written,
			      const struct tracer__format_note *note)
{
	struct args a = { .types = types ? types : "", .payload = payload,
			  .size = payload_size };
	struct out o = { .buf = out, .size = out_size, .note = note };
	const char *p = format, *pc;
	int ret = tracer__payload_check(a.types, payload, payload_size);

	if (written)
		*written = 0;
	if (ret || out_size == 0) {
		if (out_size)
			out[0] = '\0';
		return ret ? ret : -ENOSPC;
	}
	a.count = strlen(a.types);
	while (*p && !o.full) {
		pc = strchrnul(p, '%');
		out_mem(&o, p, (size_t)(pc - p));
		p = *pc ? directive(&o, &a, pc) : pc;
	}
	errno_suffix(&o, &a);
	out[o.len] = '\0';
	if (written)
		*written = o.len;
	return o.full ? -ENOSPC : 0;
}

/* ----------------------------------------------------------------------
 * Argument types, from the format alone.
 */

static const char *const signed_name[] = {
	[LEN_NONE] = "int", [LEN_HH] = "signed char", [LEN_H] = "short",
	[LEN_L] = "long", [LEN_LL] = "long long", [LEN_J] = "intmax_t",
	[LEN_Z] = "ssize_t", [LEN_T] = "ptrdiff_t", [LEN_BIG_L] = "long long",
};

static const char *const unsigned_name[] = {
	[LEN_NONE] = "unsigned", [LEN_HH] = "unsigned char",
	[LEN_H] = "unsigned short", [LEN_L] = "unsigned long",
	[LEN_LL] = "unsigned long long", [LEN_J] = "uintmax_t",
	[LEN_Z] = "size_t", [LEN_T] = "size_t",
	[LEN_BIG_L] = "unsigned long long",
};

/* The C type conversion s reads (NULL: none, as %%). */
static const char *conv_type(const struct spec *s)
{
	switch (s->conv) {
	case 'd': case 'i':
		return signed_name[s->len];
	case 'o': case 'u': case 'x': case 'X':
		return unsigned_name[s->len];
	case 'c':
		return s->len == LEN_L ? "wint_t" : "char";
	case 's':
		return "string";
	case 'p': case 'n':
		return "pointer";
	case 'f': case 'F': case 'e': case 'E': case 'g': case 'G':
	case 'a': case 'A':
		return s->len == LEN_BIG_L || s->len == LEN_LL ? "long double"
							       : "double";
	default:
		return NULL;
	}
}

/* Argument pos (1-based; 0: the next one) has type t. */
static void arg_type(const char **types, size_t max, size_t *next,
		     size_t *count, size_t pos, const char *t)
{
	size_t i = pos ? pos - 1 : (*next)++;

	if (i >= max)
		return;
	types[i] = t;
	if (i + 1 > *count)
		*count = i + 1;
}

size_t tracer__format_arg_types(const char *format, const char **types,
				size_t max)
{
	const char *p = format ? format : "", *t;
	size_t next = 0, count = 0, i;
	struct spec s;

	for (i = 0; i < max; i++)
		types[i] = NULL;
	while (*(p = strchrnul(p, '%'))) {
		const char *end = parse_spec(p, &s);

		if (!end)
			break;
		p = end;
		if (!strchr(conversions, s.conv) || s.conv == '%')
			continue;
		if (s.width_star)
			arg_type(types, max, &next, &count, s.width_pos, "int");
		if (s.prec_star)
			arg_type(types, max, &next, &count, s.prec_pos, "int");
		t = conv_type(&s);
		if (t)
			arg_type(types, max, &next, &count, s.pos, t);
	}
	return count;
}
