/*
 * ctf_meta.c - CTF 1.8 metadata text (ctf_meta.h).
 *
 * Choices checked against babeltrace2 (see doc/session-files.md):
 *
 *  - The event header describes `id` and `timestamp`, each aligned on 64
 *    bits: id's alignment skips the zero padding after the previous record,
 *    the timestamp's skips the record's `size` field. A field of an event
 *    header that has no CTF meaning (such as `size`) makes babeltrace2
 *    warn every time it opens the trace.
 *  - Payload fields are byte aligned. An event with a string argument ends
 *    with `_padding`, an array of no integer aligned on 64 bits, that covers
 *    the record's padding: without it a reader takes the padding after the
 *    last record of a packet for the beginning of one more record.
 *  - What only the ring buffer needs (a reserved word, slot_records) lies
 *    in an alignment gap of the packet context, as the record's size does
 *    in the event header: babeltrace2 shows every packet-context field
 *    with every event, and warns about a packet-header field without a
 *    CTF meaning.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctf_meta.h"

#define MAX_CONVS	64	/* conversions of a format looked at */
#define TRACER_CTF_ERRNO_ENUM	"tracer_errno"
#define MAX_WORD	40	/* bytes of a word kept in a name */
#define NS_PER_S	1000000000ULL

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
# define BYTE_ORDER_NAME	"be"
#else
# define BYTE_ORDER_NAME	"le"
#endif

/* The preamble's type aliases: their names cannot be field names. */
static const char *const alias[][2] = {
	{ "uint8_t", "integer { size = 8; align = 8; signed = false; }" },
	{ "uint32_t", "integer { size = 32; align = 8; signed = false; }" },
	{ "uint64_t", "integer { size = 64; align = 8; signed = false; }" },
	{ "int64_t", "integer { size = 64; align = 8; signed = true; }" },
	{ "uint64_hex_t",
	  "integer { size = 64; align = 8; signed = false; base = 16; }" },
	{ "double_t",
	  "floating_point { exp_dig = 11; mant_dig = 53; align = 8; }" },
};
#define CLOCK_ALIAS	"uint64_clock_monotonic_t"	/* after the clock */

/* TSDL keywords (those starting with '_' get a '_' anyway). */
static const char *const keyword[] = {
	"align", "callsite", "const", "char", "clock", "double", "enum", "env",
	"event", "floating_point", "float", "integer", "int", "long", "short",
	"signed", "stream", "string", "struct", "trace", "typealias",
	"typedef", "unsigned", "variant", "void",
};

/* ------------------------------------------------------------------ */
/* Characters                                                          */

static bool is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_alnum(unsigned char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z');
}

static bool is_xdigit(unsigned char ch)
{
	return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

/* Bytes of words: ASCII letters, digits, '_', and any non-ASCII byte. */
static bool word_byte(unsigned char ch)
{
	return is_alnum(ch) || ch == '_' || ch >= 0x80;
}

/* Length of the valid UTF-8 sequence at s (2 to 4 bytes), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	cp = s[0] & (0x7fu >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* the NUL too */
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int tracer__ctf_put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p >= 0x20 && *p < 0x7f) {
			fputc(*p++, f);
		} else if ((n = utf8_len(p)) != 0) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fprintf(f, "\\%03o", (unsigned)*p++);
		}
	}
	fputc('"', f);
	return ferror(f) ? -EIO : 0;
}

bool tracer__ctf_uuid_valid(const char *s)
{
	size_t i;

	if (!s || strlen(s) != TRACER_CTF_UUID_LEN)
		return false;
	for (i = 0; i < TRACER_CTF_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !is_xdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

void tracer__ctf_format_uuid(const uint8_t bytes[16], char *out)
{
	uint8_t b[16];
	size_t i, at = 0;

	memcpy(b, bytes, sizeof(b));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);	/* version 4: random */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);	/* variant 1 */
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[at++] = '-';
		snprintf(out + at, 3, "%02x", b[i]);
		at += 2;
	}
	out[at] = '\0';
}

/* ------------------------------------------------------------------ */
/* Conversions of a printf format                                      */

/* One conversion: its bytes and the arguments it takes. */
struct conv {
	size_t start, end;		/* [start, end) in the format */
	int arg;			/* its value; -1: none (%m) */
	int width, prec;		/* `*` arguments; -1: none */
};

struct convs {
	struct conv v[MAX_CONVS];
	size_t n;
	int next;			/* next argument taken in order */
};

/* "N$" at s[*i]: moves past it and returns N - 1; else -1, not moved. */
static int position(const char *s, size_t *i)
{
	size_t j = *i;
	int n = 0;

	while (is_digit((unsigned char)s[j])) {
		if (n < 10000)
			n = n * 10 + (s[j] - '0');
		j++;
	}
	if (j == *i || s[j] != '$' || n == 0)
		return -1;
	*i = j + 1;
	return n - 1;
}

/* A width or precision at s[*i]: the argument a `*` takes, else -1. */
static int star(struct convs *c, const char *s, size_t *i)
{
	int pos = -1;

	if (s[*i] == '*') {
		(*i)++;
		pos = position(s, i);
		if (pos < 0)
			pos = c->next++;
	}
	while (is_digit((unsigned char)s[*i]))
		(*i)++;
	return pos;
}

/*
 * The conversion that starts at s[i] ('%') into *cv. Returns its length,
 * or 0 when it is not a conversion (unknown or unfinished): text then.
 */
static size_t parse_conv(struct convs *c, const char *s, size_t i,
			 struct conv *cv)
{
	size_t j = i + 1;
	int saved = c->next, pos = position(s, &j);

	j += strspn(s + j, "-+ #0'I");
	cv->width = star(c, s, &j);
	cv->prec = -1;
	if (s[j] == '.') {
		j++;
		cv->prec = star(c, s, &j);
	}
	j += strspn(s + j, "hlqjzZtL");
	if (s[j] == 'm') {
		cv->arg = -1;
	} else if (s[j] && strchr("diouxXcsSCpfFeEgGaAn", s[j])) {
		cv->arg = pos >= 0 ? pos : c->next++;
	} else {
		c->next = saved;
		return 0;
	}
	cv->start = i;
	cv->end = j + 1;
	return cv->end - i;
}

static void parse_format(struct convs *c, const char *s)
{
	size_t i = 0, len;

	c->n = 0;
	c->next = 0;
	while (s[i] && c->n < MAX_CONVS) {
		if (s[i] != '%') {
			i++;
		} else if (s[i + 1] == '%') {
			i += 2;
		} else {
			len = parse_conv(c, s, i, &c->v[c->n]);
			c->n += len != 0;
			i += len ? len : 1;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Words                                                               */

struct span {
	size_t start, end;
};

/* The next word of s[*at..b) into *w, moving *at past it; false: none. */
static bool next_word(const char *s, size_t *at, size_t b, struct span *w)
{
	size_t i = *at;

	while (i < b && !word_byte((unsigned char)s[i]))
		i++;
	if (i >= b)
		return false;
	w->start = i;
	while (i < b && word_byte((unsigned char)s[i]))
		i++;
	w->end = i;
	*at = i;
	return true;
}

/* Does w[0..n) name anything? Numbers (42, 0x1f, 0x) do not, nor words
 * without an ASCII letter or digit. */
static bool names_something(const char *w, size_t n)
{
	bool hex = n >= 2 && w[0] == '0' && (w[1] | 0x20) == 'x';
	size_t i, alnum = 0;

	for (i = 0; i < n; i++)
		alnum += is_alnum((unsigned char)w[i]);
	if (alnum == 0)
		return false;
	if (!is_digit((unsigned char)w[0]))
		return true;
	for (i = hex ? 2 : 0; i < n; i++)
		if (hex ? !is_xdigit((unsigned char)w[i])
			: !is_digit((unsigned char)w[i]))
			return true;
	return false;
}

/* The first (or, when last, the last) word of s[a..b) that names
 * something, into *out. */
static bool find_word(const char *s, size_t a, size_t b, bool last,
		      struct span *out)
{
	struct span w;
	bool found = false;

	while (next_word(s, &a, b, &w)) {
		if (!names_something(s + w.start, w.end - w.start))
			continue;
		*out = w;
		found = true;
		if (!last)
			break;
	}
	return found;
}

/* Is s[a..b) only blanks and punctuation (no letter, digit, or byte of
 * a UTF-8 character)? */
static bool only_separators(const char *s, size_t a, size_t b)
{
	for (; a < b; a++) {
		unsigned char ch = (unsigned char)s[a];

		if (ch >= 0x80 || ch == '_' || is_digit(ch) ||
		    (unsigned)((ch | 0x20) - 'a') < 26u)
			return false;
	}
	return true;
}

/* Where conversion k's word was found (name_conv()). */
enum word_at { WORD_NONE, WORD_BEFORE, WORD_AFTER, WORD_AGAIN };

/*
 * The word naming conversion k of format s into *w. *used is where the
 * text before it starts to be free: a conversion that took the first word
 * after it took it from the next conversion's text. A format that names
 * its values before them ("fds %d %d result %d", "signal %d (%s) handler
 * %p") never lends the word after a conversion that has none (prev: where
 * the previous one's was): that word is the next value's (WORD_AGAIN:
 * the previous conversion's word serves again, numbered; WORD_NONE for
 * one glued to the previous, as the wrappers' " errno E" suffix is).
 */
static enum word_at conv_word(const struct convs *c, const char *s,
			      size_t k, size_t *used, enum word_at prev,
			      struct span *w)
{
	size_t before = k ? c->v[k - 1].end : 0;
	size_t after = k + 1 < c->n ? c->v[k + 1].start : strlen(s);

	if (*used > before)
		before = *used;
	if (find_word(s, before, c->v[k].start, true, w))
		return WORD_BEFORE;
	/* (Glued to the previous one, "%d%s": a suffix of its own; after
	 * text that is not a name, "\xc3\xa9=%d": none.) */
	if ((prev == WORD_BEFORE || prev == WORD_AGAIN) &&
	    c->v[k].start > before && only_separators(s, before,
						      c->v[k].start))
		return WORD_AGAIN;
	if (prev == WORD_BEFORE || prev == WORD_AGAIN)
		return WORD_NONE;
	if (!find_word(s, c->v[k].end, after, false, w))
		return WORD_NONE;
	*used = w->end;
	return WORD_AFTER;
}

/* w[0..n) as identifier characters into out: ASCII letters, digits and
 * '_' kept, other bytes (UTF-8) one '_' a run, none at the ends. */
static void copy_word(char *out, const char *w, size_t n)
{
	size_t i, o = 0;
	bool gap = false;

	for (i = 0; i < n && o < MAX_WORD; i++) {
		unsigned char ch = (unsigned char)w[i];

		if (ch >= 0x80) {
			gap = o > 0;
			continue;
		}
		if (gap && o < MAX_WORD - 1)
			out[o++] = '_';
		gap = false;
		out[o++] = (char)ch;
	}
	out[o] = '\0';
}

/* ------------------------------------------------------------------ */
/* Field names                                                         */

typedef char name_t[TRACER_CTF_NAME_MAX];

/* base[arg] = word + suffix, unless arg is out of range or named. */
static void set_base(name_t *base, size_t nargs, int arg, const char *word,
		     const char *suffix)
{
	if (arg >= 0 && (size_t)arg < nargs && !base[arg][0])
		snprintf(base[arg], sizeof(base[arg]), "%s%s", word, suffix);
}

/* Name conversion k's arguments in base; *at: where the previous
 * conversion's word was, then this one's. A word served again only names
 * a value of the same type ("fds %d %d"; "pid %d %s": arg2). */
static void name_conv(const struct convs *c, const char *s, size_t k,
		      size_t *used, enum word_at *at, name_t *base,
		      const char *types, size_t nargs)
{
	const struct conv *cv = &c->v[k];
	char word[TRACER_CTF_NAME_MAX] = "";
	int prev = k ? c->v[k - 1].arg : -1;
	struct span w;

	*at = conv_word(c, s, k, used, *at, &w);
	if (*at == WORD_BEFORE || *at == WORD_AFTER)
		copy_word(word, s + w.start, w.end - w.start);
	else if (*at == WORD_AGAIN && prev >= 0 && (size_t)prev < nargs &&
		 cv->arg >= 0 && (size_t)cv->arg < nargs &&
		 types[prev] == types[cv->arg])
		snprintf(word, sizeof(word), "%s", base[prev]);
	if (!word[0] && cv->arg >= 0)
		snprintf(word, sizeof(word), "arg%d", cv->arg + 1);
	if (!word[0])
		return;
	set_base(base, nargs, cv->arg, word, "");
	set_base(base, nargs, cv->width, word, "_width");
	set_base(base, nargs, cv->prec, word, "_precision");
}

static bool reserved(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(keyword) / sizeof(keyword[0]); i++)
		if (!strcmp(s, keyword[i]))
			return true;
	for (i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(s, alias[i][0]))
			return true;
	return !strcmp(s, CLOCK_ALIAS);
}

static bool taken(const name_t *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return true;
	return false;
}

/* names[i] from base: '_' in front if needed, then unique. */
static void finish_name(name_t *names, size_t i, const char *base)
{
	bool under = is_digit((unsigned char)base[0]) || base[0] == '_' ||
		     reserved(base);
	char name[TRACER_CTF_NAME_MAX];
	unsigned dup;

	snprintf(name, sizeof(name), "%s%.*s", under ? "_" : "",
		 TRACER_CTF_NAME_MAX - 8, base);
	snprintf(names[i], sizeof(names[i]), "%s", name);
	for (dup = 2; taken(names, i, names[i]); dup++)
		snprintf(names[i], sizeof(names[i]), "%.*s_%u",
			 TRACER_CTF_NAME_MAX - 12, name, dup);
}

int tracer__ctf_field_names(const char *format, const char *types,
			    char names[][TRACER_CTF_NAME_MAX])
{
	name_t base[TRACER_MAX_ARGS];
	struct convs c;
	size_t n, k, used = 0;
	enum word_at at = WORD_NONE;

	if (!types || (n = strlen(types)) > TRACER_MAX_ARGS)
		return -EINVAL;
	if (!format)
		format = "";
	memset(base, 0, sizeof(base));
	parse_format(&c, format);
	for (k = 0; k < c.n; k++)
		name_conv(&c, format, k, &used, &at, base, types, n);
	for (k = 0; k < n; k++) {
		if (!base[k][0] && types[k] == TRACER_ARG_ERRNO)
			snprintf(base[k], sizeof(base[k]), "errno");
		else if (!base[k][0])
			snprintf(base[k], sizeof(base[k]), "arg%zu", k + 1);
		finish_name(names, k, base[k]);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Preamble                                                            */

/* Largest errno value the enumeration names (Linux has about 133). */
#define ERRNO_MAX	4095

/*
 * The type of an errno value (TRACER_ARG_ERRNO): an enumeration of the
 * names this C library knows, so that babeltrace2 shows
 * errno = ( "ENOENT" : container = 2 ); "none" for 0 (no error).
 */
static void put_errno_enum(FILE *f)
{
	const char *name;
	int e;

	fputs("enum " TRACER_CTF_ERRNO_ENUM " : int64_t {\n\t\"none\" = 0", f);
	for (e = 1; e <= ERRNO_MAX; e++)
		if ((name = strerrorname_np(e)))
			fprintf(f, ",\n\t\"%s\" = %d", name, e);
	fputs("\n};\n\n", f);
}

static void put_aliases(FILE *f)
{
	size_t i;

	for (i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		fprintf(f, "typealias %s := %s;\n", alias[i][1], alias[i][0]);
	fputc('\n', f);
	put_errno_enum(f);
}

static void put_trace(FILE *f, const struct tracer_ctf_trace *t)
{
	fprintf(f, "trace {\n"
		"\tmajor = 1;\n"
		"\tminor = 8;\n"
		"\tuuid = \"%s\";\n"
		"\tbyte_order = " BYTE_ORDER_NAME ";\n"
		"\tpacket.header := struct {\n"
		"\t\tuint32_t magic;\n"
		"\t\tuint32_t stream_id;\n"
		"\t\tuint64_t stream_instance_id;\n"
		"\t};\n"
		"};\n\n", t->uuid);
}

/* A string entry of env. */
static void put_env_string(FILE *f, const char *key, const char *value)
{
	fprintf(f, "\t%s = ", key);
	tracer__ctf_put_string(f, value);
	fputs(";\n", f);
}

/* An integer entry of env, when it is one (0 .. INT64_MAX). */
static void put_env_int(FILE *f, const char *key, int64_t value)
{
	if (value >= 0)
		fprintf(f, "\t%s = %" PRId64 ";\n", key, value);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, never before the epoch. */
static int64_t clock_offset(const struct tracer_ctf_trace *t)
{
	return t->clock_offset_ns > INT64_MAX ? 0 : (int64_t)t->clock_offset_ns;
}

static void put_env(FILE *f, const struct tracer_ctf_trace *t)
{
	fputs("env {\n", f);
	put_env_string(f, "hostname", t->hostname);
	put_env_string(f, "tracer_name", "tracer");
	put_env_string(f, "tracer_version", t->tracer_version);
	put_env_string(f, "procname", t->procname);
	put_env_int(f, "vpid", t->vpid);
	put_env_int(f, "ppid", t->ppid);
	put_env_int(f, "start_time", t->start_time_ns > INT64_MAX ? -1 :
		    (int64_t)t->start_time_ns);
	put_env_int(f, "clock_offset", clock_offset(t));
	put_env_string(f, "tracer_clock", t->tsc_hz ? "tsc" : "monotonic");
	if (t->tsc_hz)
		put_env_int(f, "tracer_tsc_frequency", (int64_t)t->tsc_hz);
	fputs("};\n\n", f);
}

static void put_clock(FILE *f, const struct tracer_ctf_trace *t)
{
	uint64_t off = (uint64_t)clock_offset(t);

	fputs("clock {\n\tname = \"monotonic\";\n", f);
	if (t->clock_uuid)
		fprintf(f, "\tuuid = \"%s\";\n", t->clock_uuid);
	if (t->tsc_hz)
		fprintf(f, "\tdescription = \"CLOCK_MONOTONIC nanoseconds, "
			"from the TSC (%" PRIu64 " Hz) kept on CLOCK_MONOTONIC "
			"by tracerd; offset: CLOCK_REALTIME - CLOCK_MONOTONIC "
			"when the process registered\";\n", t->tsc_hz);
	else
		fputs("\tdescription = \"CLOCK_MONOTONIC (clock_gettime); "
		      "offset: CLOCK_REALTIME - CLOCK_MONOTONIC when the "
		      "process registered\";\n", f);
	fprintf(f, "\tfreq = %llu;\n"
		"\tprecision = 1;\n"
		"\toffset_s = %" PRIu64 ";\n"
		"\toffset = %" PRIu64 ";\n"
		"\tabsolute = false;\n"
		"};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.monotonic.value; } := " CLOCK_ALIAS ";\n\n",
		NS_PER_S, (uint64_t)(off / NS_PER_S),
		(uint64_t)(off % NS_PER_S));
}

/*
 * The record header (rb_layout.h): compact, or extended behind the id
 * 4095. Bit fields pack from the least significant bit of a little-endian
 * word, from the most significant of a big-endian one: the same
 * declaration describes both. The record's size and lap lie in the
 * alignment gaps (bits 12-31 of a compact header, before its 32-bit
 * aligned time; bits 32-63 and 96-127 of an extended one, before its
 * 64-bit aligned id and time): readers that step over records find them
 * there, and a CTF reader skips them.
 */
#define EVENT_HEADER \
	"struct {\n" \
	"\t\tenum : integer { size = 12; align = 64; signed = false; } {\n" \
	"\t\t\tcompact = 0 ... 4094,\n" \
	"\t\t\textended = 4095\n" \
	"\t\t} id;\n" \
	"\t\tvariant <id> {\n" \
	"\t\t\tstruct {\n" \
	"\t\t\t\tinteger { size = 32; align = 32; signed = false; " \
	"map = clock.monotonic.value; } timestamp;\n" \
	"\t\t\t} compact;\n" \
	"\t\t\tstruct {\n" \
	"\t\t\t\tinteger { size = 32; align = 64; signed = false; } id;\n" \
	"\t\t\t\tinteger { size = 64; align = 64; signed = false; " \
	"map = clock.monotonic.value; } timestamp;\n" \
	"\t\t\t} extended;\n" \
	"\t\t} v;\n" \
	"\t}"

/* A stream class: struct tracer_rb_packet's context (its header is the
 * trace's packet.header) and the record header. timestamp_begin's 16-byte
 * alignment skips the ring's bookkeeping after tid (rb_layout.h); no more
 * than 16 bytes, or the context itself would start later. */
static void put_stream(FILE *f, unsigned id, const char *channel)
{
	fprintf(f, "stream {\n"
		"\tid = %u;\t/* %s channel */\n"
		"\tpacket.context := struct {\n"
		"\t\tuint32_t tid;\n"
		"\t\tinteger { size = 64; align = 128; signed = false; "
		"map = clock.monotonic.value; } timestamp_begin;\n"
		"\t\t" CLOCK_ALIAS " timestamp_end;\n"
		"\t\tuint64_t content_size;\n"
		"\t\tuint64_t packet_size;\n"
		"\t\tuint64_t packet_seq_num;\n"
		"\t\tuint64_t events_discarded;\n"
		"\t};\n"
		"\tevent.header := " EVENT_HEADER ";\n"
		"};\n\n", id, channel);
}

int tracer__ctf_write_preamble(FILE *f, const struct tracer_ctf_trace *t)
{
	if (!tracer__ctf_uuid_valid(t->uuid) ||
	    (t->clock_uuid && !tracer__ctf_uuid_valid(t->clock_uuid)))
		return -EINVAL;
	fputs("/* CTF 1.8 */\n\n", f);
	put_aliases(f);
	put_trace(f, t);
	put_env(f, t);
	put_clock(f, t);
	put_stream(f, TRACER_CTF_STREAM_DEFAULT, "default");
	put_stream(f, TRACER_CTF_STREAM_VITAL, "vital");
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Event classes                                                       */

#if defined(__x86_64__) || defined(__i386__)
/* x87 extended precision, then 6 bytes of padding: 16 bytes. */
# define LDOUBLE_TYPE \
	"struct {\n" \
	"\t\t\tuint64_t mantissa;\n" \
	"\t\t\tinteger { size = 15; align = 8; signed = false; } exponent;\n" \
	"\t\t\tinteger { size = 1; align = 1; signed = false; } sign;\n" \
	"\t\t\tuint8_t padding[6];\n" \
	"\t\t}"
# define LDOUBLE_DIMS	""
#else
/* The bytes of the long double object. */
# define LDOUBLE_TYPE	"uint8_t"
# define LDOUBLE_DIMS	"[16]"
#endif

/*
 * What covers the padding at the end of a record with a string: an array
 * of no integer, aligned on 64 bits. It holds no value, so it never moves
 * the clock it maps to; being clock-mapped, it is one of the fields a CTF
 * reader takes for the event's time rather than showing it (babeltrace2
 * printed an empty structure there as `padding = { }`).
 */
#define PADDING_DECL \
	"integer { size = 8; align = 64; signed = false; " \
	"map = clock.monotonic.value; }"

static void put_field(FILE *f, char type, const char *name)
{
	const char *decl = type == TRACER_ARG_SIGNED ? "int64_t"
			 : type == TRACER_ARG_UNSIGNED ? "uint64_t"
			 : type == TRACER_ARG_POINTER ? "uint64_hex_t"
			 : type == TRACER_ARG_DOUBLE ? "double_t"
			 : type == TRACER_ARG_STRING ? "string { encoding = UTF8; }"
			 : type == TRACER_ARG_ERRNO ? "enum " TRACER_CTF_ERRNO_ENUM
			 : LDOUBLE_TYPE;

	fprintf(f, "\t\t%s %s%s;\n", decl, name,
		type == TRACER_ARG_LDOUBLE ? LDOUBLE_DIMS : "");
}

static bool valid_types(const char *t)
{
	return t && tracer__types_valid(t);
}

int tracer__ctf_write_event(FILE *f, const struct tracer_ctf_event *e)
{
	name_t names[TRACER_MAX_ARGS];
	size_t i;

	if (e->stream_id > TRACER_CTF_STREAM_VITAL || !valid_types(e->types) ||
	    tracer__ctf_field_names(e->format, e->types, names))
		return -EINVAL;
	fputs("event {\n\tname = ", f);
	tracer__ctf_put_string(f, e->name);
	fprintf(f, ";\n\tid = %" PRIu32 ";\n\tstream_id = %" PRIu32 ";\n",
		e->id, e->stream_id);
	if (e->types[0]) {
		fputs("\tfields := struct {\n", f);
		for (i = 0; e->types[i]; i++)
			put_field(f, e->types[i], names[i]);
		if (strchr(e->types, TRACER_ARG_STRING))
			fputs("\t\t" PADDING_DECL " _padding[0];\n", f);
		fputs("\t};\n", f);
	}
	fputs("};\n\n", f);
	return ferror(f) ? -EIO : 0;
}
