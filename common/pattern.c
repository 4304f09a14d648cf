/*
 * pattern.c - parsing and matching event-name filters (pattern.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static bool is_separator(char ch)
{
	return ch == ',' || ch == ' ' || ch == '\t' || ch == '\n';
}

/* Returns NULL if glob[0..len) is well formed, else why not. */
static const char *check_glob(const char *g, size_t len)
{
	size_t i;

	if (len == 0)
		return "empty pattern";
	if (len > TRACER_PATTERN_MAX_LEN)
		return "pattern longer than 255 bytes";
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)g[i];

		if (ch < 0x21 || ch > 0x7e)
			return "pattern has a control or non-ASCII character";
		if (ch == '\\' && ++i >= len)
			return "pattern ends with '\\'";
		if (ch != '[')
			continue;
		/* A class: [!x], [^x]; a ']' right after the opening is data. */
		i++;
		if (i < len && (g[i] == '!' || g[i] == '^'))
			i++;
		if (i < len && g[i] == ']')
			i++;
		while (i < len && g[i] != ']')
			i++;
		if (i >= len)
			return "unbalanced '[' in pattern";
	}
	return NULL;
}

/*
 * Most patterns are a name or a "provider:*": those are compared as
 * strings (fnmatch() costs ~200 instructions a name, for every call site
 * of every program at each filter change); the others go to fnmatch().
 */
enum { KIND_GLOB, KIND_EXACT, KIND_PREFIX };

static void classify(struct tracer__pattern *v)
{
	size_t n = strcspn(v->glob, "*?[\\");

	v->len = n;
	if (!v->glob[n])
		v->kind = KIND_EXACT;
	else if (v->glob[n] == '*' && !v->glob[n + 1])
		v->kind = KIND_PREFIX;
	else
		v->kind = KIND_GLOB;
}

/* nlen: strlen(name), compared first (most names differ in length). */
static bool matches(const struct tracer__pattern *v, const char *name,
		    size_t nlen)
{
	switch (v->kind) {
	case KIND_EXACT:
		return nlen == v->len && memcmp(v->glob, name, nlen) == 0;
	case KIND_PREFIX:
		return nlen >= v->len && memcmp(v->glob, name, v->len) == 0;
	default:
		return fnmatch(v->glob, name, 0) == 0;
	}
}

/*
 * A list of names only (the default filter, most --events) is indexed by a
 * 256-bit set of name hashes: a name whose bit is clear matches none of
 * them, found without looking at each (every call site of every program
 * is matched at its start).
 */
static unsigned name_hash(const char *s, size_t len)
{
	return (unsigned)(len * 7 + (unsigned char)s[len - 1] +
			  2u * (unsigned char)s[len / 2]) & 255;
}

static void index_names(struct tracer__patterns *p)
{
	size_t i;
	unsigned h;

	p->only_names = true;
	memset(p->names, 0, sizeof(p->names));
	for (i = 0; i < p->n; i++) {
		if (p->v[i].kind != KIND_EXACT) {
			p->only_names = false;
			return;
		}
		h = name_hash(p->v[i].glob, p->v[i].len);
		p->names[h >> 6] |= 1ull << (h & 63);
	}
}

static bool maybe_named(const struct tracer__patterns *p, const char *name,
			size_t nlen)
{
	unsigned h;

	if (!p->only_names)
		return true;
	if (nlen == 0)
		return false;
	h = name_hash(name, nlen);
	return p->names[h >> 6] >> (h & 63) & 1;
}

static int add(struct tracer__patterns *p, const char *g, size_t len,
	       bool exclude, size_t *cap)
{
	if (p->n == TRACER_PATTERNS_MAX)
		return -E2BIG;
	if (p->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct tracer__pattern *v = realloc(p->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		*cap = ncap;
	}
	p->v[p->n].glob = strndup(g, len);
	if (!p->v[p->n].glob)
		return -ENOMEM;
	p->v[p->n].exclude = exclude;
	classify(&p->v[p->n]);
	p->n++;
	return 0;
}

static int parse_one(struct tracer__patterns *p, const char *s, size_t len,
		     size_t *cap, char *err, size_t errlen)
{
	bool exclude = s[0] == '-';
	const char *why = check_glob(s + exclude, len - exclude);
	int ret;

	if (why) {
		snprintf(err, errlen, "bad pattern '%.*s': %s",
			 (int)(len > 300 ? 300 : len), s, why);
		return -EINVAL;
	}
	ret = add(p, s + exclude, len - exclude, exclude, cap);
	if (ret == -E2BIG)
		snprintf(err, errlen, "too many patterns (at most %d)",
			 TRACER_PATTERNS_MAX);
	else if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
}

int tracer__patterns_parse(const char *text, struct tracer__patterns *p,
			   char *err, size_t errlen)
{
	size_t cap = 0, len;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	if (!text)
		text = "";
	while (!ret && *text) {
		while (is_separator(*text))
			text++;
		for (len = 0; text[len] && !is_separator(text[len]); len++)
			if (text[len] == '\\' && text[len + 1])
				len++;
		if (len)
			ret = parse_one(p, text, len, &cap, err, errlen);
		text += len;
	}
	if (!ret && p->n == 0)
		ret = add(p, "*", 1, false, &cap);
	if (ret) {
		tracer__patterns_free(p);
		return ret;
	}
	p->default_on = p->v[0].exclude;
	index_names(p);
	return 0;
}

/* The last pattern that matches name decides: 1 (on), 0 (off), or -1
 * when none matches. */
static int decide(const struct tracer__patterns *p, const char *name)
{
	size_t i = p->n, nlen = strlen(name);

	if (!maybe_named(p, name, nlen))
		return -1;
	while (i-- > 0)
		if (matches(&p->v[i], name, nlen))
			return !p->v[i].exclude;
	return -1;
}

bool tracer__patterns_match(const struct tracer__patterns *p,
			    const char *name)
{
	int d = decide(p, name);

	if (d >= 0)
		return d;
	return p->default_on || strncmp(name, "tracer:", 7) == 0;
}

bool tracer__patterns_select(const struct tracer__patterns *p,
			     const char *name)
{
	int d = decide(p, name);

	return d >= 0 ? d : p->default_on;
}

/* The kind of g[0..len), checked as check_glob() would, without
 * fnmatch(): -ENOTSUP when it needs it, -EINVAL when it is bad. */
static int borrowed_kind(const char *g, size_t len, size_t *lit)
{
	size_t n;

	if (len == 0 || len > TRACER_PATTERN_MAX_LEN)
		return -EINVAL;
	for (n = 0; n < len; n++) {
		unsigned char ch = (unsigned char)g[n];

		if (ch < 0x21 || ch > 0x7e)
			return -EINVAL;
		if (ch == '*' || ch == '?' || ch == '[' || ch == '\\')
			break;
	}
	*lit = n;
	if (n == len)
		return KIND_EXACT;
	return g[n] == '*' && n + 1 == len ? KIND_PREFIX : -ENOTSUP;
}

int tracer__patterns_borrow(const char *text, struct tracer__patterns *p,
			    struct tracer__pattern *v, size_t cap)
{
	size_t len;
	int kind;

	memset(p, 0, sizeof(*p));
	p->v = v;
	for (; *text; text += len) {
		while (is_separator(*text))
			text++;
		for (len = 0; text[len] && !is_separator(text[len]); len++)
			if (text[len] == '\\' && text[len + 1])
				len++;
		if (!len)
			continue;
		if (p->n == cap)
			return -E2BIG;
		v[p->n].exclude = text[0] == '-';
		v[p->n].glob = (char *)(text + v[p->n].exclude);
		kind = borrowed_kind(v[p->n].glob, len - v[p->n].exclude,
				     &v[p->n].len);
		if (kind < 0)
			return kind;
		v[p->n++].kind = (uint8_t)kind;
	}
	if (p->n == 0)
		return -EINVAL;
	p->default_on = v[0].exclude;
	index_names(p);
	return 0;
}

bool tracer__pattern_matches(const struct tracer__pattern *v,
			     const char *name)
{
	return matches(v, name, strlen(name));
}

size_t tracer__pattern_provider(const struct tracer__pattern *v)
{
	const char *colon = memchr(v->glob, ':', v->len);

	return colon ? (size_t)(colon - v->glob) : 0;
}

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Three rows of the table of distances between prefixes: the one before
 * the one before (for swaps), the one before, and this one. */
uint32_t tracer__name_distance(const char *a, size_t alen, const char *b,
			       size_t blen)
{
	uint32_t rows[3][TRACER_PATTERN_MAX_LEN + 1];
	uint32_t *pp = rows[0], *prev = rows[1], *cur = rows[2], *t;
	size_t i, j;

	if (alen > TRACER_PATTERN_MAX_LEN || blen > TRACER_PATTERN_MAX_LEN)
		return UINT32_MAX;
	for (j = 0; j <= blen; j++)
		prev[j] = (uint32_t)j;
	for (i = 1; i <= alen; i++) {
		cur[0] = (uint32_t)i;
		for (j = 1; j <= blen; j++) {
			uint32_t cost = a[i - 1] != b[j - 1];

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1,
				      prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
		}
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[blen];
}

void tracer__patterns_free(struct tracer__patterns *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i].glob);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
