/*
 * view.h - `tracectl view DIR`: print the events of a session directory
 * (or of one process directory of it), all channel files of all processes
 * merged in timestamp order, one line per event:
 *
 *   SSSS.NNNNNNNNN NAME PID TID PROVIDER:EVENT: MESSAGE
 *
 * See doc/session-files.md for what is read.
 */
#ifndef TRACER_VIEW_H
#define TRACER_VIEW_H

#include <stdio.h>

/*
 * The `view` command: argv[0] is "view", then DIR and the options of
 * trace_args.h, or --help / -h.
 * Events go to stdout (fully buffered), problems to stderr, one line each,
 * "tracectl: " first.
 * Returns the process exit status: 0; 1 when anything could not be read
 * (what could be read is still printed); 2 for a usage error.
 */
int tracer__ctl_view(int argc, char **argv);

struct tracer_merge_opts;

/*
 * Print the items of dir that opts select (trace_merge.h) to out, problems
 * to opts->err.
 * Returns the exit status: 0, or 1 if anything was wrong.
 */
int tracer__view(const char *dir, const struct tracer_merge_opts *opts,
		 FILE *out);

/*
 * Print the events of dir (a session directory, or a process directory:
 * one holding process.meta) to out, problems to err.
 * Returns the exit status: 0, or 1 if anything was wrong.
 */
int tracer__view_dir(const char *dir, FILE *out, FILE *err);

#endif /* TRACER_VIEW_H */
