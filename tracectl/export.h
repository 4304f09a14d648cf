/*
 * export.h - `tracectl export` (the Chrome Trace Event Format) and
 * `tracectl timeline` (a self-contained HTML page), and what they share
 * besides the slicer (slicer.h): the output file, numbers.
 */
#ifndef TRACER_EXPORT_H
#define TRACER_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "symbols.h"
#include "trace_merge.h"
#include "slicer.h"

/*
 * The `export` and `timeline` commands: argv[0] is the command name, then
 * DIR, the options of trace_args.h and their own, or --help / -h.
 * Returns the process exit status: 0; 1 when anything could not be read
 * or the output could not be written; 2 for a usage error.
 */
int tracer__ctl_export(int argc, char **argv);
int tracer__ctl_timeline(int argc, char **argv);

/*
 * Export the items of dir that opts select as Chrome trace JSON to the
 * file out_path (NULL or "-": standard output), problems to opts->err.
 * Returns the exit status: 0, or 1.
 */
int tracer__export(const char *dir, const struct tracer_merge_opts *opts,
		   const char *out_path);

/*
 * Write the timeline page of the items of dir that opts select to the
 * file out_path (NULL or "-": standard output), at most max_items of them
 * (0: no limit).
 * Returns the exit status: 0, or 1.
 */
int tracer__timeline(const char *dir, const struct tracer_merge_opts *opts,
		     const char *out_path, uint64_t max_items);

/* ----------------------------------------------------------------------
 * The command lines.
 */

struct tracer_trace_args;

/* -o FILE, --output FILE or --output=FILE, shared by export and timeline:
 * its entry in a command's option table, and its value (val) checked into
 * *path. Returns 0 or 2 (a mistake, reported). */
#define TRACE_KEY_OUTPUT	0xff
#define TRACE_OUTPUT_OPT	{ "output", TRACE_KEY_OUTPUT, true, 'o' }
int tracer__output_arg(struct tracer_trace_args *a, const char *val,
		       const char **path);

/* ----------------------------------------------------------------------
 * Writing.
 */

/* Write v in decimal. */
void tracer__put_u64(FILE *f, uint64_t v);

/* The output file. */
struct tracer_out {
	FILE *f;
	const char *name;		/* for messages */
	int err;			/* errno of the first failed write */
};

/*
 * Open the output: path, or standard output for NULL or "-" (named
 * "standard output" in messages). Returns false after reporting why
 * through the merge.
 */
bool tracer__out_open(struct tracer_out *o, const char *path,
		      struct tracer_merge *m);

/* Has a write failed? (Cheap: call it after every item.) */
bool tracer__out_failed(struct tracer_out *o);

/*
 * Flush and close the output; a write error is reported through the merge
 * ("cannot write 'NAME': ..."). Returns false then.
 */
bool tracer__out_close(struct tracer_out *o, struct tracer_merge *m);

#endif /* TRACER_EXPORT_H */
