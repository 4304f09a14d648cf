/*
 * pattern.h - event-name filters: `tracectl start --events`,
 * `tracectl filter`, and the enable table of every traced process.
 *
 * Text: a comma- or space-separated list of globs over event names
 * (`*`, `?`, `[...]`, `\` quotes the next character), each optionally
 * preceded by `-` to exclude what it matches. For a given name, the last
 * pattern that matches decides. A name no pattern matches is recorded when
 * the first pattern is an exclusion (`-libc:malloc` alone means "all but
 * libc:malloc"), or when it is one of the library's own lifecycle events
 * (`tracer:*`); otherwise it is not. An empty text means `*`.
 *
 *   'libc:*,-libc:malloc'   libc events except malloc (and tracer:*)
 *   '*'                     everything
 *   '-*'                    nothing at all
 *
 * Used by tracectl (to reject a bad pattern at once), tracerd (list,
 * validation) and libtracer's listener thread; never on the event path.
 */
#ifndef TRACER_PATTERN_H
#define TRACER_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The events a session records when it is given no --events: everything
 * but the calls a program makes too often for a default (the allocator,
 * and every uncontended lock and unlock); `--events '*'` or naming them
 * records them too.
 */
#define TRACER_DEFAULT_EVENTS \
	"-libc:malloc,-libc:calloc,-libc:realloc,-libc:free," \
	"-libc:posix_memalign,-libc:aligned_alloc,-libc:memalign," \
	"-libc:mmap,-libc:munmap," \
	"-pthread:mutex_lock,-pthread:mutex_trylock,-pthread:mutex_unlock"

#define TRACER_PATTERN_MAX_LEN	255	/* bytes in one glob */
#define TRACER_PATTERNS_MAX	65536	/* globs in one list */

struct tracer__pattern {
	char *glob;
	bool exclude;
	uint8_t kind;			/* how it matches (pattern.c) */
	size_t len;			/* of glob, or of its literal prefix */
};

struct tracer__patterns {
	struct tracer__pattern *v;
	size_t n;
	bool default_on;		/* first pattern is an exclusion */
	bool only_names;		/* every pattern is a name: */
	uint64_t names[4];		/* a bit per name hash (pattern.c) */
};

/*
 * Parse text into p (free it with tracer__patterns_free()). On error, err
 * (errlen bytes) gets a one-line reason naming the pattern.
 * Returns 0, -EINVAL (bad pattern), -E2BIG (too many), -ENOMEM.
 */
int tracer__patterns_parse(const char *text, struct tracer__patterns *p,
			   char *err, size_t errlen);

/* Is an event called name recorded under p? */
bool tracer__patterns_match(const struct tracer__patterns *p,
			    const char *name);

/* The same without the rule for tracer:* (reading a trace: `tracectl view
 * --events` shows exactly what the patterns select). */
bool tracer__patterns_select(const struct tracer__patterns *p,
			     const char *name);

void tracer__patterns_free(struct tracer__patterns *p);

/*
 * Checking patterns against the names an event can have (tracectl warns
 * about a pattern that matches none of them: a misspelling).
 */

/* Does the pattern v of a parsed list match name (its '-' aside)? */
bool tracer__pattern_matches(const struct tracer__pattern *v,
			     const char *name);

/*
 * The provider v names: the length of the text before its ':' when that
 * text has no wildcard ("libc" of "libc:open*"), else 0 ("*:open", "lib*").
 */
size_t tracer__pattern_provider(const struct tracer__pattern *v);

/*
 * How many edits (a character inserted, deleted or replaced, or two
 * neighbours swapped) turn the first alen bytes of a into the first blen
 * of b; both at most TRACER_PATTERN_MAX_LEN long, or the result is
 * UINT32_MAX.
 */
uint32_t tracer__name_distance(const char *a, size_t alen, const char *b,
			       size_t blen);

/*
 * Parse a constant text into p without allocating (libtracer's default
 * filter, read at every program's start): p->v is v (room for cap
 * patterns), each glob points into text and is not NUL-terminated, so
 * only names and "prefix*" patterns are taken. Never free p; text must
 * outlive it. Returns 0, -ENOTSUP (a pattern that needs fnmatch() or a
 * quote), -E2BIG (more than cap patterns), -EINVAL (a bad pattern).
 */
int tracer__patterns_borrow(const char *text, struct tracer__patterns *p,
			    struct tracer__pattern *v, size_t cap);

#endif /* TRACER_PATTERN_H */
