/*
 * start.c - `tracectl start` and `tracectl stop`, and what `tracectl
 * record` shares with them (control.h): the start options, their checks,
 * the session request.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay_proto.h"
#include "control.h"
#include "pattern.h"
#include "rb.h"

enum { KEY_MODE = 1, KEY_EVENTS, KEY_SUBBUF_SIZE, KEY_SUBBUF_COUNT,
       KEY_LIVE, KEY_OUTPUT, KEY_RELAY, KEY_RELAY_ONLY };

const struct tracer__ctl_opt tracer__ctl_start_opts[] = {
	{ "mode", KEY_MODE, true, 0 },
	{ "events", KEY_EVENTS, true, 0 },
	{ "subbuf-size", KEY_SUBBUF_SIZE, true, 0 },
	{ "subbuf-count", KEY_SUBBUF_COUNT, true, 0 },
	{ "live-interval", KEY_LIVE, true, 0 },
	{ "output", KEY_OUTPUT, true, 'o' },
	{ "relay", KEY_RELAY, true, 0 },
	{ "relay-only", KEY_RELAY_ONLY, false, 0 },
	{ NULL, 0, false, 0 },
};

static int mode_opt(const struct tracer__ctl *c, struct tracer__ctl_start *s,
		    const char *val)
{
	if (strcmp(val, "discard") && strcmp(val, "flight"))
		return tracer__ctl_usage_error(c,
			"--mode must be 'discard' or 'flight', not '%s'", val);
	s->mode = val;
	return 0;
}

/* --output DIR: made absolute (tracerd has its own working directory). */
static int output_opt(const struct tracer__ctl *c, struct tracer__ctl_start *s,
		      const char *val)
{
	char cwd[PATH_MAX];
	int n;

	if (!val[0])
		return tracer__ctl_usage_error(c, "--output needs a non-empty "
					       "DIR");
	if (val[0] == '/')
		n = snprintf(s->directory, sizeof(s->directory), "%s", val);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(s->directory, sizeof(s->directory), "%s/%s", cwd,
			     val);
	else
		return tracer__ctl_fail("--output '%s': cannot tell the "
					"current directory: %s", val,
					strerror(errno));
	if (n < 0 || (size_t)n >= sizeof(s->directory))
		return tracer__ctl_usage_error(c, "--output: '%s' is too long",
					       val);
	return 0;
}

/* --relay net://HOST[:CTRL[:DATA]], or none. */
static int relay_opt(const struct tracer__ctl *c, struct tracer__ctl_start *s,
		     const char *val)
{
	char host[256];
	uint16_t a, b;

	if (strcmp(val, "none") &&
	    tracer__relay_parse_url(val, host, sizeof(host), &a, &b))
		return tracer__ctl_usage_error(c, "--relay must be net://HOST"
			"[:CONTROL_PORT[:DATA_PORT]] or none, not '%s'", val);
	s->relay = val;
	return 0;
}

int tracer__ctl_start_opt(const struct tracer__ctl *c,
			  struct tracer__ctl_start *s, int key,
			  const char *val)
{
	switch (key) {
	case KEY_MODE:
		return mode_opt(c, s, val);
	case KEY_EVENTS:
		s->events = val;
		return tracer__ctl_patterns(val);
	case KEY_SUBBUF_SIZE:
		return tracer__ctl_number(c, "--subbuf-size", val, 4096,
					  1ULL << 30, CTL_NUM_SIZE |
					  CTL_NUM_POW2, &s->subbuf_size);
	case KEY_SUBBUF_COUNT:
		return tracer__ctl_number(c, "--subbuf-count", val, 2, 65536,
					  CTL_NUM_POW2, &s->subbuf_count);
	case KEY_LIVE:
		return tracer__ctl_number(c, "--live-interval", val, 1,
					  3600000, 0, &s->live_ms);
	case KEY_OUTPUT:
		return output_opt(c, s, val);
	case KEY_RELAY:
		return relay_opt(c, s, val);
	case KEY_RELAY_ONLY:
		s->relay_only = true;
		return 0;
	default:
		return tracer__ctl_syntax_error(c, "unexpected option");
	}
}

int tracer__ctl_start_check(const struct tracer__ctl *c,
			    const struct tracer__ctl_start *s)
{
	struct tracer_rb_geometry geo;
	const char *why = NULL;
	char a[32], b[32];

	if (!s->subbuf_size || !s->subbuf_count ||
	    !tracer__rb_geometry(&geo, s->subbuf_size, s->subbuf_count, &why))
		return 0;
	return tracer__ctl_usage_error(c,
		"--subbuf-size %s with --subbuf-count %s: %s",
		tracer__ctl_show_number(a, sizeof(a), s->subbuf_size, CTL_NUM_SIZE),
		tracer__ctl_show_number(b, sizeof(b), s->subbuf_count, 0), why);
}

static void fill_start(Tracer__SessionStart *m,
		       const struct tracer__ctl_start *s)
{
	m->mode = (char *)(s->mode ? s->mode : "");
	m->events = (char *)(s->events ? s->events : "");
	m->subbuf_size = s->subbuf_size;
	m->subbuf_count = (uint32_t)s->subbuf_count;
	m->live_interval_ms = (uint32_t)s->live_ms;
	m->directory = (char *)s->directory;
	m->relay = (char *)(s->relay ? s->relay : "");
	m->relay_only = s->relay_only;
}

tracer_msg *tracer__ctl_session_request(const struct tracer__ctl *c,
					const struct tracer__ctl_start *s,
					char *why, size_t n)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__SessionStart start = TRACER__SESSION_START__INIT;
	Tracer__SessionStop stop_msg = TRACER__SESSION_STOP__INIT;

	m.body_case = s ? TRACER__MESSAGE__BODY_SESSION_START :
		TRACER__MESSAGE__BODY_SESSION_STOP;
	if (s)
		fill_start(m.session_start = &start, s);
	else
		m.session_stop = &stop_msg;
	return tracer__ctl_request(c, &m, TRACER__MESSAGE__BODY_SESSION, why,
				   n);
}

int tracer__ctl_session(const struct tracer__ctl *c,
			const struct tracer__ctl_start *s)
{
	char why[TRACER_PATH_MAX + 4096];
	const Tracer__Session *r;
	tracer_msg *reply = tracer__ctl_session_request(c, s, why,
							sizeof(why));

	if (!reply)
		return tracer__ctl_fail("%s", why);
	r = reply->session;
	tracer__ctl_warn(r->warning);
	if (s)
		printf("session %" PRIu64 " started (%s); trace directory:\n",
		       r->id, r->mode[0] ? r->mode :
		       s->mode ? s->mode : "discard");
	else
		printf("session %" PRIu64 " stopped; trace directory:\n",
		       r->id);
	printf("%s\n", r->directory);
	tracer__wire_free(reply);
	return CTL_OK;
}

int tracer__ctl_start(struct tracer__ctl *c, int argc, char **argv)
{
	struct tracer__ctl_start s = { .mode = NULL };
	struct tracer__ctl_args a;
	int key, ret = 0;

	tracer__ctl_args_init(&a, c, tracer__ctl_start_opts, argc, argv);
	while (!ret && (key = tracer__ctl_next(&a)) != CTL_END) {
		if (key == CTL_STOP)
			return a.status;
		if (key == CTL_ARG)
			return tracer__ctl_syntax_error(c,
				"unexpected argument '%s'", a.val);
		ret = tracer__ctl_start_opt(c, &s, key, a.val);
	}
	if (!ret)
		ret = tracer__ctl_start_check(c, &s);
	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	return ret ? ret : tracer__ctl_session(c, &s);
}

int tracer__ctl_stop(struct tracer__ctl *c, int argc, char **argv)
{
	struct tracer__ctl_args a;
	int ret;

	tracer__ctl_args_init(&a, c, NULL, argc, argv);
	ret = tracer__ctl_no_args(&a);
	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	return ret ? ret : tracer__ctl_session(c, NULL);
}
