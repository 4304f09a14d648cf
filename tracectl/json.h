/*
 * json.h - a small JSON writer for `tracectl status --json` and
 * `tracectl list --json`: indented output, strings escaped (quotes,
 * backslash, control characters as \u00XX, bytes that are not UTF-8 as
 * U+FFFD), so that the result always parses.
 */
#ifndef TRACER_CTL_JSON_H
#define TRACER_CTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tracer__json {
	FILE *f;
	int depth;
	bool first;		/* nothing written yet at this depth */
};

void tracer__json_init(struct tracer__json *j, FILE *f);

/* Open an object ('{') or array ('['); key is NULL inside arrays and at
 * the top. */
void tracer__json_open(struct tracer__json *j, const char *key, char open);
void tracer__json_close(struct tracer__json *j, char close);

void tracer__json_str(struct tracer__json *j, const char *key,
		      const char *v);
void tracer__json_u64(struct tracer__json *j, const char *key, uint64_t v);
void tracer__json_i64(struct tracer__json *j, const char *key, int64_t v);
void tracer__json_bool(struct tracer__json *j, const char *key, bool v);

/* Write s as a JSON string, quotes included. */
void tracer__json_string(FILE *f, const char *s);

/* Also escape '<' (as \u003c): the string goes into an HTML <script>. */
#define TRACER_JSON_HTML	1u
/* The string was cut short: end it with " [...]". */
#define TRACER_JSON_CUT		2u

/*
 * Write len bytes at s (any bytes: NUL, control characters, invalid UTF-8)
 * as a JSON string, quotes included: '"', '\\' and control characters
 * escaped, valid UTF-8 kept, every other byte as U+FFFD.
 */
void tracer__json_text(FILE *f, const char *s, size_t len, unsigned flags);

#endif /* TRACER_CTL_JSON_H */
