/*
 * test_pattern.c - event-name filters (common/pattern.h): what parses and
 * what does not (with the reason given), separators, exclusions, the last
 * matching pattern deciding, the defaults, glob classes and escapes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "pattern.h"
#include "tap.h"

/* Parse text, expecting failure ret with a reason containing why. */
static void bad(const char *text, int ret, const char *why, const char *name)
{
	struct tracer__patterns p;
	char err[512] = "";
	int got = tracer__patterns_parse(text, &p, err, sizeof(err));

	if (!ok(got == ret && strstr(err, why) != NULL, "rejected: %s", name))
		diag("  got %d '%s', want %d '...%s...'", got, err, ret, why);
	ok(p.n == 0 && p.v == NULL, "%s: nothing left allocated", name);
}

/* Parse text, which must be valid; bail out otherwise. */
static void parse(const char *text, struct tracer__patterns *p)
{
	char err[512] = "";

	if (tracer__patterns_parse(text, p, err, sizeof(err)))
		bail_out("'%s' does not parse: %s", text, err);
}

/* Under text, is each of names[] recorded as want[] says ('y'/'n')? */
static void match(const char *text, const char *const *names,
		  const char *want)
{
	struct tracer__patterns p;
	size_t i;

	parse(text, &p);
	for (i = 0; names[i]; i++) {
		bool m = tracer__patterns_match(&p, names[i]);

		ok(m == (want[i] == 'y'), "'%s': %s %s", text, names[i],
		   want[i] == 'y' ? "recorded" : "not recorded");
	}
	tracer__patterns_free(&p);
}

static void test_errors(void)
{
	char longest[TRACER_PATTERN_MAX_LEN + 2];
	struct tracer__patterns p;
	char err[512] = "";

	bad("-", -EINVAL, "bad pattern '-': empty pattern", "'-' alone");
	bad("libc:*,-", -EINVAL, "empty pattern", "'-' alone in a list");
	bad("x[", -EINVAL, "bad pattern 'x[': unbalanced '[' in pattern",
	    "'x['");
	bad("a[!]", -EINVAL, "unbalanced '['", "'a[!]'");
	bad("a\001b", -EINVAL, "control or non-ASCII", "control character");
	bad("caf\xc3\xa9", -EINVAL, "control or non-ASCII", "non-ASCII");
	bad("x\\", -EINVAL, "ends with '\\'", "trailing backslash");
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	bad(longest, -EINVAL, "longer than 255 bytes", "256-byte pattern");
	longest[TRACER_PATTERN_MAX_LEN] = '\0';
	ok(tracer__patterns_parse(longest, &p, err, sizeof(err)) == 0 &&
	   p.n == 1, "a 255-byte pattern is fine");
	tracer__patterns_free(&p);
}

static void test_too_many(void)
{
	size_t n = TRACER_PATTERNS_MAX + 1, i;
	struct tracer__patterns p;
	char err[512] = "";
	char *text = malloc(2 * n + 1);

	if (!text)
		bail_out("out of memory");
	for (i = 0; i < n; i++)
		memcpy(text + 2 * i, "a,", 2);
	text[2 * n] = '\0';
	bad(text, -E2BIG, "too many patterns", "65537 patterns");
	text[2 * (n - 1)] = '\0';
	ok(tracer__patterns_parse(text, &p, err, sizeof(err)) == 0 &&
	   p.n == TRACER_PATTERNS_MAX, "65536 patterns are fine");
	tracer__patterns_free(&p);
	free(text);
}

static void test_empty(void)
{
	static const char *const names[] = { "libc:read", "tracer:exit",
					     "x", NULL };
	struct tracer__patterns p;

	parse("", &p);
	ok(p.n == 1 && !strcmp(p.v[0].glob, "*") && !p.v[0].exclude,
	   "empty text means '*'");
	tracer__patterns_free(&p);
	parse(" ,, \t\n", &p);
	ok(p.n == 1 && !strcmp(p.v[0].glob, "*"),
	   "separators only mean '*' too");
	tracer__patterns_free(&p);
	match(NULL, names, "yyy");
}

static void test_separators(void)
{
	static const char *const globs[] = { "a", "b", "c", "d", "e" };
	struct tracer__patterns p;
	bool same = true;
	size_t i;

	parse(" a,b c\td\ne ,, ", &p);
	for (i = 0; p.n == 5 && i < 5; i++)
		same = same && !strcmp(p.v[i].glob, globs[i]) &&
			!p.v[i].exclude;
	ok(p.n == 5 && same, "',', ' ', tab and newline separate patterns");
	tracer__patterns_free(&p);
	parse("libc:*,-libc:malloc -libc:free", &p);
	ok(p.n == 3 && !p.v[0].exclude && p.v[1].exclude && p.v[2].exclude &&
	   !strcmp(p.v[1].glob, "libc:malloc"),
	   "'-' marks an exclusion and is not part of the glob");
	ok(!p.default_on, "first pattern included: default off");
	tracer__patterns_free(&p);
	parse("-libc:malloc,libc:*", &p);
	ok(p.default_on, "first pattern excluded: default on");
	tracer__patterns_free(&p);
}

static void test_last_wins(void)
{
	static const char *const names[] = {
		"libc:read", "libc:malloc", "app:start", "tracer:thread_exit",
		NULL,
	};

	match("libc:*,-libc:malloc", names, "ynny");
	match("-libc:malloc,libc:*", names, "yyyy");
	match("-libc:*,libc:read", names, "ynyy");
	match("libc:read,-libc:*", names, "nnny");
	match("-*", names, "nnnn");
	match("*", names, "yyyy");
	match("*,-*", names, "nnnn");
	match("-*,*", names, "yyyy");
	match("-libc:malloc", names, "ynyy");
	match("app:*", names, "nnyy");
	match("-tracer:*", names, "yyyn");
}

static void test_globs(void)
{
	static const char *const q[] = { "abc", "axc", "ac", "abbc", NULL };
	static const char *const cls[] = { "xa", "xb", "xc", "x", NULL };
	static const char *const neg[] = { "xa", "xb", "x]", NULL };
	static const char *const br[] = { "x]", "xa", NULL };
	static const char *const esc[] = { "a*b", "axb", NULL };
	static const char *const comma[] = { "a,b", "a", "b", NULL };
	static const char *const dash[] = { "-x", "y", NULL };
	static const char *const q2[] = { "a?", "ab", NULL };

	match("a?c", q, "yynn");
	match("x[ab]", cls, "yynn");
	match("x[!a]", neg, "nyy");
	match("x[^a]", neg, "nyy");
	match("x[]]", br, "yn");
	match("a\\*b", esc, "yn");
	match("a\\,b", comma, "ynn");
	match("\\-x", dash, "yn");
	match("a\\?", q2, "yn");
}

/*
 * The allocation-free parse of a constant list (libtracer's default
 * filter at every program's start): the same decisions as the parse, and
 * what it refuses.
 */
static void test_borrow(void)
{
	static const char *const names[] = {
		"libc:malloc", "libc:open", "libc:free", "libc:mallo",
		"libc:mallocx", "pthread:mutex_lock", "pthread:cond_wait_entry",
		"tracer:thread_start", "app:x", "",
	};
	struct tracer__pattern v[32], small[2];
	struct tracer__patterns b, p;
	size_t i;

	ok(tracer__patterns_borrow(TRACER_DEFAULT_EVENTS, &b, v, 32) == 0,
	   "borrowed: the default filter");
	parse(TRACER_DEFAULT_EVENTS, &p);
	for (i = 0; i < TRACER_ARRAY_SIZE(names); i++)
		ok(tracer__patterns_match(&b, names[i]) ==
		   tracer__patterns_match(&p, names[i]),
		   "borrowed default, '%s': as parsed", names[i]);
	tracer__patterns_free(&p);
	ok(tracer__patterns_borrow("app:*,-app:x", &b, v, 32) == 0 &&
	   tracer__patterns_match(&b, "app:y") &&
	   !tracer__patterns_match(&b, "app:x"), "borrowed: a prefix");
	ok(tracer__patterns_borrow("a?c", &b, v, 32) == -ENOTSUP,
	   "borrowed: a glob needs fnmatch, refused");
	ok(tracer__patterns_borrow("x[ab]", &b, v, 32) == -ENOTSUP,
	   "borrowed: a class, refused");
	ok(tracer__patterns_borrow("a\\,b", &b, v, 32) == -ENOTSUP,
	   "borrowed: a quote, refused");
	ok(tracer__patterns_borrow("a,b,c", &b, small, 2) == -E2BIG,
	   "borrowed: more than the room");
	ok(tracer__patterns_borrow(" , ", &b, v, 32) == -EINVAL,
	   "borrowed: nothing");
	ok(tracer__patterns_borrow("a,-", &b, v, 32) == -EINVAL,
	   "borrowed: an empty exclusion");
}

/* A list of names only is indexed by name hash: no name it holds is
 * missed, whatever its length and letters. */
static void test_name_index(void)
{
	char text[8192], name[32];
	struct tracer__patterns p;
	size_t o = 0;
	int i, wrong = 0;

	for (i = 0; i < 300; i += 3)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "%s-p%d:e%0*d", o ? "," : "", i % 7,
				      i % 11, i);
	parse(text, &p);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "p%d:e%0*d", i % 7, i % 11, i);
		wrong += tracer__patterns_match(&p, name) != (i % 3 != 0);
	}
	ok(p.only_names && wrong == 0,
	   "100 excluded names among 300: every decision right (%d wrong)",
	   wrong);
	tracer__patterns_free(&p);
}

/* Misspellings (tracectl warns about patterns that match no known name):
 * one pattern against one name, the provider of a pattern, distances. */
static void test_misspelled(void)
{
	struct tracer__patterns p;
	const char *lib = "libc";

	parse("libc:opne,-libc:op*,*:open,lib*,a\\:b,x", &p);
	ok(!tracer__pattern_matches(&p.v[0], "libc:open") &&
	   tracer__pattern_matches(&p.v[0], "libc:opne"),
	   "pattern_matches: a name, exactly");
	ok(tracer__pattern_matches(&p.v[1], "libc:openat") &&
	   !tracer__pattern_matches(&p.v[1], "libc:close"),
	   "pattern_matches: an exclusion's glob, its '-' aside");
	ok(tracer__pattern_matches(&p.v[2], "libc:open"),
	   "pattern_matches: a glob");
	ok(tracer__pattern_provider(&p.v[0]) == 4 &&
	   tracer__pattern_provider(&p.v[1]) == 4,
	   "pattern_provider: 'libc' of 'libc:opne' and '-libc:op*'");
	ok(tracer__pattern_provider(&p.v[2]) == 0 &&
	   tracer__pattern_provider(&p.v[3]) == 0 &&
	   tracer__pattern_provider(&p.v[4]) == 0 &&
	   tracer__pattern_provider(&p.v[5]) == 0,
	   "pattern_provider: none for '*:open', 'lib*', 'a\\:b', 'x'");
	tracer__patterns_free(&p);
	ok(tracer__name_distance("libc:opne", 9, "libc:open", 9) == 1,
	   "distance: two neighbours swapped, one edit");
	ok(tracer__name_distance("lib", 3, lib, 4) == 1 &&
	   tracer__name_distance(lib, 4, "lib", 3) == 1,
	   "distance: one character more or less, one edit");
	ok(tracer__name_distance("kitten", 6, "sitting", 7) == 3,
	   "distance: kitten/sitting, three edits");
	ok(tracer__name_distance("pthread", 7, "pthread:x", 7) == 0 &&
	   tracer__name_distance("", 0, "abc", 3) == 3,
	   "distance: the lengths given are compared, empty too");
	ok(tracer__name_distance(lib, TRACER_PATTERN_MAX_LEN + 1, lib, 4) ==
	   UINT32_MAX, "distance: a name too long is UINT32_MAX");
}

int main(void)
{
	plan(127);
	test_misspelled();
	test_borrow();
	test_name_index();
	test_errors();
	test_too_many();
	test_empty();
	test_separators();
	test_last_wins();
	test_globs();
	return done();
}
