/*
 * trace_args.c - the command line of the commands that read a trace
 * (trace_args.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "trace_args.h"

/* Keys of the common options. */
enum {
	KEY_PID = TRACE_KEY_FIRST, KEY_TID, KEY_EVENTS, KEY_SINCE, KEY_UNTIL,
	KEY_NO_SYMBOLS, KEY_NO_FD_NAMES,
};

static const struct tracer__ctl_opt trace_opts[] = {
	{ "pid", KEY_PID, true, 0 },
	{ "tid", KEY_TID, true, 0 },
	{ "events", KEY_EVENTS, true, 0 },
	{ "since", KEY_SINCE, true, 0 },
	{ "until", KEY_UNTIL, true, 0 },
	{ "no-symbols", KEY_NO_SYMBOLS, false, 0 },
	{ "no-fd-names", KEY_NO_FD_NAMES, false, 0 },
	{ NULL, 0, false, 0 },
};

/* A usage mistake of the command. Returns 2. */
#define usage_error(a, ...) tracer__ctl_syntax_error(&(a)->ctl, __VA_ARGS__)

void tracer__trace_args_init(struct tracer_trace_args *a, const char *cmd)
{
	memset(a, 0, sizeof(*a));
	a->ctl.cmd = cmd;
	a->ctl.no_socket = true;
	a->opts.err = stderr;
	a->opts.check = true;
}

/* --pid / --tid: a thread or process id. Returns 0 or 2. */
static int id_value(struct tracer_trace_args *a, const char *opt,
		    const char *val, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (val[0] < '0' || val[0] > '9' || *end || errno || v < 1 ||
	    v > INT32_MAX)
		return usage_error(a, "--%s: '%s' is not a %s id (1 to %d)",
				   opt, val, strcmp(opt, "pid") ? "thread" :
				   "process", INT32_MAX);
	*out = (uint32_t)v;
	return 0;
}

/* --since / --until. Returns 0 or 2. */
static int time_value(struct tracer_trace_args *a, const char *opt,
		      const char *val, uint64_t *ns, bool *relative)
{
	int ret = tracer__parse_time(val, ns, relative);

	if (ret == -ERANGE)
		return usage_error(a, "--%s: '%s' is too large", opt, val);
	if (ret)
		return usage_error(a, "--%s: '%s' is not a time "
				   "(SECONDS[.FRACTION] as view prints them, "
				   "or +SECONDS from the first event; units s, "
				   "ms, us, ns)", opt, val);
	return 0;
}

static int events_value(struct tracer_trace_args *a, const char *val)
{
	char err[512];

	tracer__patterns_free(&a->events);
	if (tracer__patterns_parse(val, &a->events, err, sizeof(err)))
		return usage_error(a, "--events: %s", err);
	a->opts.events = &a->events;
	return 0;
}

/* A common option (key, val). Returns 0 or 2. */
static int trace_opt(struct tracer_trace_args *a, int key, const char *val)
{
	struct tracer_merge_opts *o = &a->opts;

	switch (key) {
	case KEY_PID:
		return id_value(a, "pid", val, &o->pid);
	case KEY_TID:
		return id_value(a, "tid", val, &o->tid);
	case KEY_EVENTS:
		return events_value(a, val);
	case KEY_SINCE:
		return time_value(a, "since", val, &o->since,
				  &o->since_relative);
	case KEY_UNTIL:
		return time_value(a, "until", val, &o->until,
				  &o->until_relative);
	case KEY_NO_SYMBOLS:
		o->no_symbols = true;
		return 0;
	default:
		o->no_fd_names = true;
		return 0;
	}
}

/* DIR. Returns 0 or 2. */
static int dir_arg(struct tracer_trace_args *a, const char *arg)
{
	if (a->dir)
		return usage_error(a, "unexpected argument '%s'", arg);
	a->dir = arg;
	return 0;
}

/* Once every argument is taken: DIR must have been given, and --until
 * not before --since. Returns 0 or 2 (reported). */
static int args_done(struct tracer_trace_args *a)
{
	if (!a->dir)
		return usage_error(a, "missing DIR");
	/* Both times of the same form: compared now (trace_merge.h: else
	 * once the first event of the trace is known). */
	if (a->opts.since_relative == a->opts.until_relative &&
	    (a->opts.until || a->opts.until_relative) &&
	    a->opts.until < a->opts.since)
		return usage_error(a, "--until is before --since");
	return 0;
}

void tracer__trace_args_free(struct tracer_trace_args *a)
{
	tracer__patterns_free(&a->events);
}

int tracer__trace_parse(struct tracer_trace_args *a, int argc, char **argv,
			const struct tracer__ctl_opt *own_opts,
			tracer_trace_own_fn own, void *ctx, const char *usage,
			const char *help)
{
	struct tracer__ctl_args p;
	int key, ret = 0;

	a->ctl.usage = usage;
	a->ctl.help = help;
	tracer__ctl_args_init(&p, &a->ctl, own_opts ? own_opts : trace_opts,
			      argc, argv);
	p.more_opts = own_opts ? trace_opts : NULL;
	while (!ret && (key = tracer__ctl_next(&p)) != CTL_END) {
		if (key == CTL_STOP)
			return p.status == CTL_HELP ? CTL_OK : p.status;
		if (key == CTL_ARG)
			ret = dir_arg(a, p.val);
		else if (key >= TRACE_KEY_FIRST)
			ret = trace_opt(a, key, p.val);
		else
			ret = own(a, ctx, key, p.val);
	}
	if (!ret)
		ret = args_done(a);
	return ret ? ret : -1;
}

void tracer__raise_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
