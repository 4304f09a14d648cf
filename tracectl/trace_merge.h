/*
 * trace_merge.h - the events of a session, merged in time order: what
 * `tracectl view`, `tracectl export` and `tracectl timeline` read.
 *
 * A merge opens every channel file of every process directory of a session
 * directory (or of one process directory), and hands out their records one
 * at a time, smallest timestamp first (ties: pid, tid, file order, so every
 * run gives the same order), each with its message already formatted as
 * printf would have printed it. Only one packet per channel file is in
 * memory: a trace of any size is read in constant memory, and the first
 * items come at once.
 *
 * Besides events, the merge hands out "lost" items: where a channel file's
 * packet says records were lost before it (events_discarded grew, see
 * doc/session-files.md), an item at the time the packet begins saying how
 * many, and since when (the end of the previous packet of that file).
 *
 * Thread names follow the trace: a thread is named by its process.meta
 * `thread` line (its name when it took its buffer) until an event of the
 * library names it, tracer:thread_start (a session's first event of the
 * thread), tracer:thread_name (a rename, recorded by the thread that
 * renamed it, maybe another) or tracer:thread_exit (the name it ended
 * with); from then on that name is the thread's, in item.thread_name and
 * in the item.renames of the item handed out next. These events are
 * read even when the options leave them out (--events, --since); with
 * --tid, only the thread's own. Names stay valid as long as the merge.
 *
 * Problems (unreadable files, corrupt packets, unknown event ids, bad
 * payloads) are reported as they are met, one line each on the error stream
 * given at open ("tracectl: PATH: packet at offset N: ..."), and the merge
 * goes on with everything still readable; a damaged channel file is read
 * again from its next intact packet.
 */
#ifndef TRACER_TRACE_MERGE_H
#define TRACER_TRACE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_dir.h"

struct tracer__patterns;

/* What to merge. Zero-initialise, then set what is needed. */
struct tracer_merge_opts {
	uint32_t pid;			/* only this process (0: all) */
	uint32_t tid;			/* only this thread (0: all) */
	const struct tracer__patterns *events;	/* names (NULL: all) */
	uint64_t since;			/* first timestamp shown (0) */
	uint64_t until;			/* last timestamp shown (0: none) */
	bool since_relative;		/* since/until count from the first
					   timestamp of the whole trace,
					   whatever pid and tid select */
	bool until_relative;
	bool no_symbols;		/* --no-symbols: addresses bare */
	bool no_fd_names;		/* --no-fd-names: descriptors bare
					   (fdnames.h; the merge ignores it) */
	bool check;			/* say when the selection finds
					   nothing (see below) */
	FILE *err;			/* problems go here (stderr) */
	FILE *out;			/* flushed before a problem is
					   reported (stdout) */
};

enum tracer_item_kind {
	TRACER_ITEM_EVENT,
	TRACER_ITEM_LOST,
};

#define TRACER_NAME_SITES	8

/* A process of the merge: its directory and decoded process.meta. */
struct tracer_merge_proc {
	char *dir;
	struct tracer_meta meta;
	/* Its call sites that name a thread (tracer:thread_start,
	 * tracer:thread_name, tracer:thread_exit: "tid %d name %s..."). */
	uint32_t name_ids[TRACER_NAME_SITES];
	size_t nname_ids;
};

/* A thread renamed (tracer_item.renames). */
struct tracer_rename {
	const struct tracer_merge_proc *proc;
	uint32_t pid;
	uint32_t tid;
	const char *name;		/* its name from then on */
	uint64_t timestamp;		/* of the event that says so */
};

/* One item, valid until the next call of tracer__merge_next(). */
struct tracer_item {
	enum tracer_item_kind kind;
	uint64_t timestamp;		/* CLOCK_MONOTONIC ns */
	const struct tracer_merge_proc *proc;
	uint32_t pid;
	uint32_t tid;
	const char *thread_name;	/* its thread's name at this time, or
					   NULL (none known); see below */
	int vital;			/* channel: 0 default, 1 vital */
	/* TRACER_ITEM_EVENT */
	const struct tracer__site *cs;	/* NULL: unknown event id */
	const char *name;		/* event name, never NULL */
	const char *msg;		/* message, msg_len bytes (may hold */
	size_t msg_len;			/* NUL bytes), NUL-terminated */
	const void *payload;		/* the recorded values (format.h), */
	size_t payload_size;		/* checked when msg is not <bad
					   payload>; NULL/0 without cs */
	/* TRACER_ITEM_LOST */
	uint64_t lost;			/* records lost */
	uint64_t lost_since;		/* end of the packet before (0: the
					   file's first packet) */
	/* The threads renamed since the item before (this one included),
	 * in time order, whatever the options let through. */
	const struct tracer_rename *renames;
	size_t nrenames;
};

struct tracer_merge;

/*
 * With opts.check, a pattern of opts.events that matches the name of no
 * event of the trace (of any process, whatever pid selects) is reported as
 * a warning ("tracectl: warning: --events: 'libc:opne' matches no event
 * in 'DIR' (did you mean 'libc:open'?)"), and a selection (pid, tid,
 * events, since, until) that lets no item through as a problem, once the
 * end is reached ("tracectl: no events of thread 99 in 'DIR'"). Both
 * ways, --until before --since (once made absolute) is a problem, and
 * nothing is read.
 */

/*
 * Open the session directory dir (or process directory: one holding
 * process.meta) for merging. Problems with single files are reported on
 * opts->err and leave them out.
 * Returns 0 (*m set), -ENOENT (nothing to merge: dir unreadable, or no
 * process directory in it; reported), -ENOMEM.
 */
int tracer__merge_open(struct tracer_merge **m, const char *dir,
		       const struct tracer_merge_opts *opts);

/*
 * The next item in time order that passes the options.
 * Returns 1 (*it filled), 0 at the end.
 */
int tracer__merge_next(struct tracer_merge *m, struct tracer_item *it);

/*
 * The renames no item took: after tracer__merge_next() returned 0, those
 * after the last item handed out (the last events read named threads).
 * Returns how many; *r the first.
 */
size_t tracer__merge_renames_left(const struct tracer_merge *m,
				  const struct tracer_rename **r);

/* The processes of the merge (to list threads, names, clock offsets). */
size_t tracer__merge_nprocs(const struct tracer_merge *m);
const struct tracer_merge_proc *tracer__merge_proc(
	const struct tracer_merge *m, size_t i);

/*
 * A note printed after each %p value of the messages from now on (NULL:
 * none): fn writes at most size - 1 bytes and a NUL into buf, returns the
 * bytes written (0: no note). p is the event's process, ts its time.
 * (symbols.h names addresses this way.)
 */
typedef size_t (*tracer_merge_note_fn)(void *ctx,
				       const struct tracer_merge_proc *p,
				       uint64_t ts, uint64_t addr, char *buf,
				       size_t size);
void tracer__merge_set_note(struct tracer_merge *m, tracer_merge_note_fn fn,
			    void *ctx);

/*
 * A watcher of every event record the merge reads, in time order, before
 * the options' --events decide whether it is handed out (NULL: none): fn
 * is called with the record's process (pid), time, call site (never
 * NULL: records of unknown event ids are not watched) and recorded
 * values (not checked). Records passed over before --since, and those
 * of the processes and threads --pid and --tid leave out, are not read,
 * so not watched. (fdnames.h follows the descriptors this way.)
 */
typedef void (*tracer_merge_watch_fn)(void *ctx,
				      const struct tracer_merge_proc *p,
				      uint32_t pid, uint64_t ts,
				      const struct tracer__site *cs,
				      const void *payload, size_t size);
void tracer__merge_set_watch(struct tracer_merge *m, tracer_merge_watch_fn fn,
			     void *ctx);

/* Was any problem reported? (The exit status of a command is then 1.) */
bool tracer__merge_failed(const struct tracer_merge *m);

/* Report a problem of the caller's own the same way: marks the merge as
 * failed. */
void tracer__merge_error(struct tracer_merge *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void tracer__merge_close(struct tracer_merge *m);

/*
 * Parse a --since/--until TIME: SECONDS[.FRACTION] as `tracectl view`
 * prints them (CLOCK_MONOTONIC), or +SECONDS[.FRACTION] counted from the
 * first event of the trace; an optional unit suffix s, ms, us or ns
 * replaces seconds (`+250ms`). *relative says whether it had the `+`.
 * Returns 0, -EINVAL (not a time), -ERANGE (too large).
 */
int tracer__parse_time(const char *s, uint64_t *ns, bool *relative);

#endif /* TRACER_TRACE_MERGE_H */
