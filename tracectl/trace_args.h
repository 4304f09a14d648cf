/*
 * trace_args.h - the command line shared by the commands that read a trace
 * (`tracectl view`, `export`, `timeline`):
 *
 *   DIR [--pid PID] [--tid TID] [--events PATTERNS] [--since TIME]
 *       [--until TIME] [--no-symbols] [--no-fd-names]
 *
 * Options take their value as the next argument or after `=`. Mistakes are
 * one line on stderr, "tracectl: CMD: ... (see 'tracectl CMD --help')",
 * and exit status 2 (--until before --since too, when both are TIME or
 * both +TIME). The options also set opts.check: +TIME counts from the
 * first event of the whole trace, whatever --pid and --tid select, and
 * a selection that matches nothing is said, exit status 1 (trace_merge.h).
 */
#ifndef TRACER_TRACE_ARGS_H
#define TRACER_TRACE_ARGS_H

#include <stdbool.h>

#include "pattern.h"
#include "trace_merge.h"

struct tracer_trace_args {
	const char *cmd;		/* "view", ... */
	const char *dir;		/* DIR, or NULL until seen */
	struct tracer_merge_opts opts;
	struct tracer__patterns events;	/* --events, parsed */
	bool only_args;			/* after "--" */
};

/* Start parsing for the command cmd. */
void tracer__trace_args_init(struct tracer_trace_args *a, const char *cmd);

/*
 * Take argv[*i] (and its value) if it is DIR or one of the options above,
 * moving *i past what was taken.
 * Returns 1 (taken), 0 (not one of these: the caller's own option, or an
 * unknown one), or 2 (a mistake, reported: the exit status).
 */
int tracer__trace_arg(struct tracer_trace_args *a, int argc, char **argv,
		      int *i);

/*
 * The value of the option `--name` at argv[*i] ("--name=V" or "--name V"),
 * moving *i past it; NULL (reported) when it is missing.
 */
const char *tracer__trace_value(struct tracer_trace_args *a, int argc,
				char **argv, int *i, const char *name);

/* Is argv[*i] the option --name (with or without "=value")? */
bool tracer__trace_is_opt(const char *arg, const char *name);

/* Once every argument is taken: DIR must have been given.
 * Returns 0 or 2 (reported). */
int tracer__trace_args_done(struct tracer_trace_args *a);

/* Report a usage mistake of a.cmd; returns 2. */
int tracer__trace_usage(const struct tracer_trace_args *a, const char *fmt,
			...) __attribute__((format(printf, 2, 3)));

void tracer__trace_args_free(struct tracer_trace_args *a);

/*
 * A command's own option at argv[*i] (ctx: its own arguments): as
 * tracer__trace_arg() returns.
 */
typedef int (*tracer_trace_own_fn)(struct tracer_trace_args *a, void *ctx,
				   int argc, char **argv, int *i);

/*
 * Parse the arguments of a reading command: --help (usage and help
 * printed), the command's own options (own, NULL for none), then the
 * common ones (tracer__trace_arg()), until all are taken; DIR required.
 * Returns -1 to go on, 0 (help printed) or 2 (a mistake, reported).
 */
int tracer__trace_parse(struct tracer_trace_args *a, int argc, char **argv,
			tracer_trace_own_fn own, void *ctx, const char *usage,
			const char *help);

/* Allow as many open channel files as the hard limit does. */
void tracer__raise_file_limit(void);

#endif /* TRACER_TRACE_ARGS_H */
