/*
 * trace_args.h - the command line shared by the commands that read a trace
 * (`tracectl view`, `export`, `timeline`, `report`), each with options of
 * its own besides:
 *
 *   DIR [--pid PID] [--tid TID] [--events PATTERNS] [--since TIME]
 *       [--until TIME] [--no-symbols] [--no-fd-names]
 *
 * Options take their value as the next argument or after `=` (the one
 * parser of args.h). Mistakes are one line on stderr,
 * "tracectl: CMD: ... (see 'tracectl CMD --help')", and exit status 2
 * (--until before --since too, when both are TIME or both +TIME). The
 * options also set opts.check: +TIME counts from the first event of the
 * whole trace, whatever --pid and --tid select, and a selection that
 * matches nothing is said, exit status 1 (trace_merge.h).
 */
#ifndef TRACER_TRACE_ARGS_H
#define TRACER_TRACE_ARGS_H

#include <stdbool.h>

#include "args.h"
#include "pattern.h"
#include "trace_merge.h"

/* Keys of the options above (own options of a command: below 0x100). */
#define TRACE_KEY_FIRST	0x100

struct tracer_trace_args {
	struct tracer__ctl ctl;		/* ctl.cmd: "view", ... */
	const char *dir;		/* DIR, or NULL until seen */
	struct tracer_merge_opts opts;
	struct tracer__patterns events;	/* --events, parsed */
};

/* Start parsing for the command cmd. */
void tracer__trace_args_init(struct tracer_trace_args *a, const char *cmd);

/*
 * A command's own option (key, from its table; val, its value or NULL),
 * ctx its own arguments. Returns 0, or 2 (a mistake, reported with
 * tracer__ctl_syntax_error(&a->ctl, ...)).
 */
typedef int (*tracer_trace_own_fn)(struct tracer_trace_args *a, void *ctx,
				   int key, const char *val);

/*
 * Parse the arguments of a reading command with the one option parser
 * (args.h): --help (usage and help printed), the command's own options
 * (own_opts, keys below TRACE_KEY_FIRST, handled by own; NULL for none),
 * then the common ones above; DIR required.
 * Returns -1 to go on, 0 (help printed) or 2 (a mistake, reported).
 */
int tracer__trace_parse(struct tracer_trace_args *a, int argc, char **argv,
			const struct tracer__ctl_opt *own_opts,
			tracer_trace_own_fn own, void *ctx, const char *usage,
			const char *help);

void tracer__trace_args_free(struct tracer_trace_args *a);

/* Allow as many open channel files as the hard limit does. */
void tracer__raise_file_limit(void);

#endif /* TRACER_TRACE_ARGS_H */
