/*
 * report.h - `tracectl report DIR`: a summary of a trace directory, like
 * `strace -c`, `perf trace -s` or `uftrace report`, read as `view` reads
 * it (same DIR, filters and merge in time order) and in constant memory:
 * only per-key aggregates are kept (event and call names, functions,
 * mutexes, threads, processes), never the events.
 *
 * Sections:
 *
 *   events     per event name: count, errors
 *   calls      per call (a begin/end or entry/exit pair, named by its BASE
 *              as export.h pairs them; or a single event with a duration,
 *              a value after a word ending in "_ns", like
 *              pthread:mutex_wait's waited_ns): count, errors (of the end
 *              event), total, average, min, max and p99 duration
 *   functions  per function (func:entry/func:exit of
 *              -finstrument-functions, named by their symbol): calls,
 *              inclusive total (a recursive function's inner calls are
 *              not counted twice), exclusive total (without the time of
 *              the functions it called), average, min, max, p99
 *   mutexes    per mutex of each process (pthread:mutex_wait, named by its
 *              symbol): waits, total, average, max, p99 of the time waited
 *   threads, processes
 *              events, errors, lost events, calls, time in calls (the
 *              outermost calls only)
 *
 * An event is an error when its message has "errno NAME" (the C library
 * wrappers' failed calls), or when it is a pthread:* event with a non-zero
 * "result N". p99 comes from a log-linear histogram of 16 buckets per
 * power of two (REPORT_P99_ERROR): within 1/32 (3.125 %) of the exact
 * nearest-rank 99th percentile, and never outside [min, max].
 */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

/*
 * The `report` command: argv[0] is "report", then DIR, the options of
 * trace_args.h and --sort KEY, --top N, --json; or --help / -h.
 * Returns the process exit status: 0; 1 when anything could not be read
 * (what could be read is still summarised) or written; 2 for a usage
 * error.
 */
int tracer__ctl_report(int argc, char **argv);

#endif /* TRACER_REPORT_H */
