/*
 * args.h - tracectl's one option parser and its error lines, for every
 * command (control.h, trace_args.h) and for the options before the
 * command (main.c).
 *
 * An option is --NAME, --NAME VALUE, --NAME=VALUE, or -L / -L VALUE /
 * -LVALUE when it has a letter; "--" ends the options. Each command
 * lists its options in a table; --help and -h are always taken, and
 * --socket where the command talks to tracerd.
 *
 * Exit statuses: 0 success, 1 runtime failure, 2 usage mistake. Every
 * mistake is one line on stderr, "tracectl: " first.
 */
#ifndef TRACER_CTL_ARGS_H
#define TRACER_CTL_ARGS_H

#include <stdbool.h>

#include "paths.h"

#define CTL_OK		0
#define CTL_FAIL	1
#define CTL_USAGE	2
#define CTL_HELP	(-3)	/* --help shown: nothing more to do, exit
				   status 0 (main.c, tracer__trace_parse) */

/* One command being run. */
struct tracer__ctl {
	const char *cmd;		/* "start", "view"...; NULL: tracectl's
					   own options, before a command */
	const char *usage;		/* its --help text */
	const char *help;		/* more of it, printed after; or NULL */
	bool no_socket;			/* refuse --socket (reads files) */
	char socket[TRACER_PATH_MAX];	/* --socket, "" for the default */
};

/* An option of a command: --NAME, --NAME VALUE or --NAME=VALUE. */
struct tracer__ctl_opt {
	const char *name;		/* without "--"; NULL ends a table */
	int key;			/* > 0 */
	bool arg;			/* takes a value */
	char letter;			/* -LETTER as well; 0: none */
};

/* tracer__ctl_next() results besides an option's key. */
#define CTL_ARG		0		/* a positional argument in val */
#define CTL_END		(-1)		/* no more arguments */
#define CTL_STOP	(-2)		/* help shown (status CTL_HELP) or a
					   mistake (status 2), reported */

struct tracer__ctl_args {
	struct tracer__ctl *ctl;
	const struct tracer__ctl_opt *opts;
	const struct tracer__ctl_opt *more_opts;	/* after opts; or NULL */
	int argc;			/* argv[0] is the command */
	char **argv;
	int i;				/* next element */
	bool only_args;			/* after "--" */
	bool dash_args;			/* "-x" is an argument, not an option */
	const char *val;		/* the option's value, or the argument */
	int status;			/* exit status after CTL_STOP */
};

/*
 * Start parsing argv (argv[0] is the command) with the options opts.
 * --help/-h are always accepted and handled by tracer__ctl_next(), which
 * prints c->usage and c->help to stdout and stops with status CTL_HELP;
 * so is --socket PATH (into c->socket) unless c->no_socket.
 */
void tracer__ctl_args_init(struct tracer__ctl_args *a, struct tracer__ctl *c,
			   const struct tracer__ctl_opt *opts, int argc,
			   char **argv);

/* The next option's key, CTL_ARG, CTL_END or CTL_STOP (see above). */
int tracer__ctl_next(struct tracer__ctl_args *a);

/*
 * Only options: a positional argument is a syntax error. Returns 0 to go
 * on, or the status: CTL_HELP (help shown) or 2 (a mistake, reported).
 */
int tracer__ctl_no_args(struct tracer__ctl_args *a);

/* "tracectl: CMD: MESSAGE" on stderr. Returns CTL_USAGE. */
int tracer__ctl_usage_error(const struct tracer__ctl *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* As above, then " (see 'tracectl CMD --help')". Returns CTL_USAGE. */
int tracer__ctl_syntax_error(const struct tracer__ctl *c, const char *fmt,
			     ...) __attribute__((format(printf, 2, 3)));

/* "tracectl: MESSAGE" on stderr. Returns CTL_FAIL. */
int tracer__ctl_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* "tracectl: warning: WARNING" on stderr when warning is not empty. */
void tracer__ctl_warn(const char *warning);

#endif /* TRACER_CTL_ARGS_H */
