/*
 * json.c - a small JSON writer (json.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "json.h"

void tracer__json_init(struct tracer__json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first = true;
}

static const char hex_digits[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at s (avail bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, above U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Is the ASCII byte c written as it is? */
static bool json_plain(unsigned char c, unsigned flags)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' &&
	       !(c == '<' && (flags & TRACER_JSON_HTML));
}

/* An ASCII byte that needs escaping. */
static void json_escape(FILE *f, unsigned char c)
{
	char u[6] = { '\\', 'u', '0', '0' };

	if (c == '"' || c == '\\') {
		putc_unlocked('\\', f);
		putc_unlocked(c, f);
	} else if (c == '\n') {
		fputs_unlocked("\\n", f);
	} else if (c == '\t') {
		fputs_unlocked("\\t", f);
	} else {
		u[4] = hex_digits[c >> 4];
		u[5] = hex_digits[c & 15];
		fwrite_unlocked(u, 1, sizeof(u), f);
	}
}

void tracer__json_text(FILE *f, const char *str, size_t len, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + len;
	const unsigned char *run;
	size_t n;

	putc_unlocked('"', f);
	while (s < end) {
		for (run = s; s < end && json_plain(*s, flags); s++)
			;
		fwrite_unlocked(run, 1, (size_t)(s - run), f);
		if (s == end)
			break;
		if (*s < 0x80) {
			json_escape(f, *s++);
		} else if ((n = utf8_len(s, (size_t)(end - s))) != 0) {
			fwrite_unlocked(s, 1, n, f);
			s += n;
		} else {
			fputs_unlocked("\\ufffd", f);
			s++;
		}
	}
	if (flags & TRACER_JSON_CUT)
		fputs_unlocked(" [...]", f);
	putc_unlocked('"', f);
}

void tracer__json_string(FILE *f, const char *s)
{
	s = s ? s : "";
	tracer__json_text(f, s, strlen(s), 0);
}

/* Separator, new line, indentation and key before a value. */
static void item(struct tracer__json *j, const char *key)
{
	if (j->depth) {
		fprintf(j->f, "%s\n%*s", j->first ? "" : ",", 2 * j->depth,
			"");
	}
	j->first = false;
	if (key) {
		tracer__json_string(j->f, key);
		fputs(": ", j->f);
	}
}

void tracer__json_open(struct tracer__json *j, const char *key, char open)
{
	item(j, key);
	fputc(open, j->f);
	j->depth++;
	j->first = true;
}

void tracer__json_close(struct tracer__json *j, char close)
{
	j->depth--;
	if (!j->first)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(close, j->f);
	j->first = false;
	if (!j->depth)
		fputc('\n', j->f);
}

void tracer__json_str(struct tracer__json *j, const char *key, const char *v)
{
	item(j, key);
	tracer__json_string(j->f, v);
}

void tracer__json_u64(struct tracer__json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void tracer__json_i64(struct tracer__json *j, const char *key, int64_t v)
{
	item(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void tracer__json_bool(struct tracer__json *j, const char *key, bool v)
{
	item(j, key);
	fputs(v ? "true" : "false", j->f);
}
