/*
 * trace_args.c - the command line of the commands that read a trace
 * (trace_args.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "trace_args.h"

int tracer__trace_usage(const struct tracer_trace_args *a, const char *fmt,
			...)
{
	va_list ap;

	fprintf(stderr, "tracectl: %s: ", a->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'tracectl %s --help')\n", a->cmd);
	return 2;
}

void tracer__trace_args_init(struct tracer_trace_args *a, const char *cmd)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->opts.err = stderr;
	a->opts.check = true;
}

bool tracer__trace_is_opt(const char *arg, const char *name)
{
	size_t len = strlen(name);

	return arg[0] == '-' && arg[1] == '-' && !strncmp(arg + 2, name, len) &&
	       (arg[2 + len] == '\0' || arg[2 + len] == '=');
}

const char *tracer__trace_value(struct tracer_trace_args *a, int argc,
				char **argv, int *i, const char *name)
{
	const char *eq = strchr(argv[*i], '=');

	(*i)++;
	if (eq)
		return eq + 1;
	if (*i < argc)
		return argv[(*i)++];
	tracer__trace_usage(a, "option '--%s' needs a value", name);
	return NULL;
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
		return tracer__trace_usage(a, "--%s: '%s' is not a %s id "
					   "(1 to %d)", opt, val,
					   strcmp(opt, "pid") ? "thread" :
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
		return tracer__trace_usage(a, "--%s: '%s' is too large", opt,
					   val);
	if (ret)
		return tracer__trace_usage(a, "--%s: '%s' is not a time "
					   "(SECONDS[.FRACTION] as view "
					   "prints them, or +SECONDS from the "
					   "first event; units s, ms, us, ns)",
					   opt, val);
	return 0;
}

static int events_value(struct tracer_trace_args *a, const char *val)
{
	char err[512];

	tracer__patterns_free(&a->events);
	if (tracer__patterns_parse(val, &a->events, err, sizeof(err)))
		return tracer__trace_usage(a, "--events: %s", err);
	a->opts.events = &a->events;
	return 0;
}

/* The option at argv[*i], one of ours. Returns 1 or 2. */
static int filter_opt(struct tracer_trace_args *a, int argc, char **argv,
		      int *i, const char *name)
{
	struct tracer_merge_opts *o = &a->opts;
	const char *val = tracer__trace_value(a, argc, argv, i, name);
	int ret;

	if (!val)
		return 2;
	if (!strcmp(name, "pid"))
		ret = id_value(a, name, val, &o->pid);
	else if (!strcmp(name, "tid"))
		ret = id_value(a, name, val, &o->tid);
	else if (!strcmp(name, "events"))
		ret = events_value(a, val);
	else if (!strcmp(name, "since"))
		ret = time_value(a, name, val, &o->since, &o->since_relative);
	else
		ret = time_value(a, name, val, &o->until, &o->until_relative);
	return ret ? ret : 1;
}

int tracer__trace_arg(struct tracer_trace_args *a, int argc, char **argv,
		      int *i)
{
	static const char *const names[] = {
		"pid", "tid", "events", "since", "until",
	};
	const char *arg = argv[*i];
	size_t k;

	if (!a->only_args && !strcmp(arg, "--")) {
		a->only_args = true;
		(*i)++;
		return 1;
	}
	if (a->only_args || arg[0] != '-' || !arg[1]) {
		if (a->dir)
			return tracer__trace_usage(a, "unexpected argument "
						   "'%s'", arg);
		a->dir = arg;
		(*i)++;
		return 1;
	}
	if (!strcmp(arg, "--no-symbols")) {
		a->opts.no_symbols = true;
		(*i)++;
		return 1;
	}
	if (!strcmp(arg, "--no-fd-names")) {
		a->opts.no_fd_names = true;
		(*i)++;
		return 1;
	}
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (tracer__trace_is_opt(arg, names[k]))
			return filter_opt(a, argc, argv, i, names[k]);
	return 0;
}

int tracer__trace_args_done(struct tracer_trace_args *a)
{
	if (!a->dir)
		return tracer__trace_usage(a, "missing DIR");
	/* Both times of the same form: compared now (trace_merge.h: else
	 * once the first event of the trace is known). */
	if (a->opts.since_relative == a->opts.until_relative &&
	    (a->opts.until || a->opts.until_relative) &&
	    a->opts.until < a->opts.since)
		return tracer__trace_usage(a, "--until is before --since");
	return 0;
}

void tracer__trace_args_free(struct tracer_trace_args *a)
{
	tracer__patterns_free(&a->events);
}

/* Is arg --help or -h (before any "--")? */
static bool is_help(const struct tracer_trace_args *a, const char *arg)
{
	return !a->only_args && (!strcmp(arg, "--help") || !strcmp(arg, "-h"));
}

int tracer__trace_parse(struct tracer_trace_args *a, int argc, char **argv,
			tracer_trace_own_fn own, void *ctx, const char *usage,
			const char *help)
{
	int i = 1, ret;

	while (i < argc) {
		const char *arg = argv[i];

		if (is_help(a, arg)) {
			printf("%s%s", usage, help);
			return 0;
		}
		ret = own ? own(a, ctx, argc, argv, &i) : 0;
		if (ret == 0)
			ret = tracer__trace_arg(a, argc, argv, &i);
		if (ret == 0)
			return tracer__trace_usage(a, "unknown option '%s'",
						   arg);
		if (ret != 1)
			return ret;
	}
	ret = tracer__trace_args_done(a);
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
