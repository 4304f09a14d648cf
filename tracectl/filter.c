/*
 * filter.c - `tracectl filter PATTERNS [--pid PID]`: which events the
 * traced processes record, changed at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

enum { KEY_PID = 1 };

/* Append arg to *text, a ',' between. Returns 0 or CTL_FAIL (reported). */
static int join(char **text, const char *arg)
{
	size_t len = *text ? strlen(*text) : 0;
	char *t = realloc(*text, len + strlen(arg) + 2);

	if (!t)
		return tracer__ctl_fail("out of memory");
	if (len)
		t[len++] = ',';
	strcpy(t + len, arg);
	*text = t;
	return 0;
}

static const struct tracer__ctl_opt pid_opts[] = {
	{ "pid", KEY_PID, true, 0 },
	{ NULL, 0, false, 0 },
};

/* filter's arguments: PATTERNS... and --pid. Returns 0 or the status. */
static int filter_args(struct tracer__ctl *c, int argc, char **argv,
		       char **text, uint32_t *pid)
{
	struct tracer__ctl_args a;
	int key, ret = 0;

	tracer__ctl_args_init(&a, c, pid_opts, argc, argv);
	a.dash_args = true;	/* "-libc:malloc" is an exclusion */
	while (!ret && (key = tracer__ctl_next(&a)) != CTL_END) {
		if (key == CTL_STOP)
			return a.status;
		if (key == CTL_ARG)
			ret = a.val[0] ? join(text, a.val) : 0;
		else
			ret = tracer__ctl_pid(c, a.val, pid);
	}
	if (!ret && !*text)
		return tracer__ctl_usage_error(c, "missing PATTERNS");
	return ret;
}

int tracer__ctl_filter(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__FilterRequest f = TRACER__FILTER_REQUEST__INIT;
	tracer_msg *r = NULL;
	char *text = NULL;
	uint32_t pid = 0;
	int ret = filter_args(c, argc, argv, &text, &pid);

	if (!ret)
		ret = tracer__ctl_patterns(text);
	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	if (!ret) {
		f.patterns = text;
		f.pid = pid;
		m.body_case = TRACER__MESSAGE__BODY_FILTER_REQUEST;
		m.filter_request = &f;
		r = tracer__ctl_done(c, &m);
		ret = r ? CTL_OK : CTL_FAIL;
	}
	if (r)
		printf("filter '%s' applied to %" PRIu32 " process(es)\n",
		       text, r->done->processes);
	tracer__wire_free(r);
	free(text);
	return ret;
}
