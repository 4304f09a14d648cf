/*
 * control.h - tracectl's subcommands that talk to tracerd (start, stop,
 * filter, switch, snapshot, trigger, status, list, record) and what they
 * share: number and size arguments, one request/reply exchange with
 * tracerd. Options and error lines are the one parser's (args.h).
 *
 * Exit statuses: 0 success, 1 runtime failure, 2 usage mistake. Every
 * mistake is one line on stderr, "tracectl: " first.
 */
#ifndef TRACER_CTL_CONTROL_H
#define TRACER_CTL_CONTROL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "args.h"
#include "paths.h"
#include "proto/wire.h"

/* A subcommand's entry in the one table (commands.c; main.c dispatches
 * through it). */
struct tracer__ctl_cmd {
	const char *name;
	const char *summary;		/* for `tracectl --help` */
	const char *usage;		/* NULL: `run` prints its own help */
	int (*run)(struct tracer__ctl *c, int argc, char **argv);
};

/* The subcommands of control.c. */
int tracer__ctl_start(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_stop(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_filter(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_switch(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_snapshot(struct tracer__ctl *c, int argc, char **argv);

/* `tracectl trigger add|list|remove` (trigger.c). */
int tracer__ctl_trigger(struct tracer__ctl *c, int argc, char **argv);

/* The subcommands, NULL-terminated; NULL if name is not one. */
extern const struct tracer__ctl_cmd tracer__ctl_cmds[];
const struct tracer__ctl_cmd *tracer__ctl_find(const char *name);

/* ---- Numbers --------------------------------------------------------- */

/* tracer__ctl_number() flags. */
#define CTL_NUM_SIZE	1u		/* a size: K, M or G suffix allowed */
#define CTL_NUM_POW2	2u		/* a power of two */

/*
 * A decimal number in [min, max] (sizes in bytes, or with a K, M or G
 * suffix: powers of 1024). On error, report "tracectl: CMD: OPT: 'VAL'
 * is ..." and return CTL_USAGE; else 0.
 */
int tracer__ctl_number(const struct tracer__ctl *c, const char *opt,
		       const char *val, uint64_t min, uint64_t max,
		       unsigned flags, uint64_t *out);

/* v as the user would write it: "4K", "1G" (flags CTL_NUM_SIZE), "3000".
 * Returns buf. */
const char *tracer__ctl_show_number(char *buf, size_t size, uint64_t v,
				    unsigned flags);

/* --pid: 1 to INT32_MAX. Returns 0 or CTL_USAGE (reported). */
int tracer__ctl_pid(const struct tracer__ctl *c, const char *val,
		    uint32_t *pid);

/* Check event-name patterns locally, and warn about those that can only
 * be misspellings (record.c). Returns 0 or CTL_FAIL (reported). */
int tracer__ctl_patterns(const char *text);

/* ---- Talking to tracerd ----------------------------------------------- */

/* Fill c->socket from $TRACER_SOCKET or the default if --socket was not
 * given. Returns 0 or CTL_FAIL (reported). */
int tracer__ctl_resolve_socket(struct tracer__ctl *c);

/*
 * Send msg to tracerd at c->socket and wait for the reply, which must be
 * of type want (an Error reply is printed). Returns the reply (free it with
 * tracer__wire_free()) or NULL (reported).
 */
tracer_msg *tracer__ctl_call(const struct tracer__ctl *c, tracer_msg *msg,
			     int want);

/* tracer__ctl_call() for a request tracerd answers with Done, its
 * warning (if any) said. Returns the reply or NULL (reported). */
tracer_msg *tracer__ctl_done(const struct tracer__ctl *c, tracer_msg *msg);

/* tracer__ctl_call() that reports nothing: NULL with why (n bytes) filled,
 * one line without "tracectl: ". */
tracer_msg *tracer__ctl_request(const struct tracer__ctl *c, tracer_msg *msg,
				int want, char *why, size_t n);

/* ---- Processes that wait for a session (waiting.c) ------------------- */

struct tracer_elf_sites;

/* A preloaded process that did not connect: no session recorded. */
struct tracer__waiting {
	uint32_t pid;
	char name[17];		/* its main thread's, "-" when gone */
};

/*
 * The processes we may look at (ours, or all as root) that map the state
 * page of the tracerd at socket, except getpid() and the nskip pids of
 * skip (those tracerd knows), sorted by pid. Returns how many (*out gets
 * them, to free()), or a negative errno (-ENOMEM, no /proc).
 */
ssize_t tracer__ctl_waiting(const char *socket, const uint32_t *skip,
			    size_t nskip, struct tracer__waiting **out);

/* Does process pid map the state page of the tracerd at socket? */
bool tracer__ctl_maps_state(const char *socket, uint32_t pid);

/* The events of waiting processes, read from the files they map. */
struct tracer__waiting_events {
	Tracer__EventInfo *info;	/* n of cap: what tracerd would list */
	size_t n, cap;
	struct tracer_elf_sites *files;	/* hold the strings info points to */
	size_t nfiles;
};

/*
 * Append to w the call sites of process pid: those of every ELF file it
 * maps ("tracer_callsites", elfsites.c), enabled as the default filter
 * that a waiting process applies says. Files we cannot read add none.
 * Returns 0, or a negative errno: -ENOMEM, or that of opening
 * /proc/PID/maps (-ENOENT: gone; -EACCES: not ours).
 */
int tracer__ctl_waiting_events(uint32_t pid,
			       struct tracer__waiting_events *w);
void tracer__ctl_waiting_events_free(struct tracer__waiting_events *w);

/* ---- Sessions (start and record) ------------------------------------- */

struct tracer__ctl_start {
	const char *mode;		/* NULL: tracerd's default */
	const char *events;		/* NULL: every event */
	uint64_t subbuf_size;		/* 0: tracerd's setting */
	uint64_t subbuf_count;
	uint64_t live_ms;		/* 0: default */
	char directory[PATH_MAX];	/* --output, absolute; "": tracerd's */
	const char *relay;		/* --relay net://...; NULL: tracerd's */
	bool relay_only;		/* --relay-only */
};

/* The options of `start` (and of `record`). */
extern const struct tracer__ctl_opt tracer__ctl_start_opts[];

/* Apply one option of tracer__ctl_start_opts. Returns 0 or the status. */
int tracer__ctl_start_opt(const struct tracer__ctl *c,
			  struct tracer__ctl_start *s, int key,
			  const char *val);

/* Checks between options, once all are parsed. Returns 0 or CTL_USAGE. */
int tracer__ctl_start_check(const struct tracer__ctl *c,
			    const struct tracer__ctl_start *s);

/*
 * Start (s != NULL) or stop (s == NULL) the session and print
 * "session ID started (MODE); trace directory:" / "session ID stopped;
 * trace directory:", then the directory. Returns the exit status.
 */
int tracer__ctl_session(const struct tracer__ctl *c,
			const struct tracer__ctl_start *s);

/* The same request, printing nothing: the Session reply (free it with
 * tracer__wire_free()), or NULL with why (n bytes) filled. */
tracer_msg *tracer__ctl_session_request(const struct tracer__ctl *c,
					const struct tracer__ctl_start *s,
					char *why, size_t n);

/* ---- The subcommands --------------------------------------------------- */

int tracer__ctl_status(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_list(struct tracer__ctl *c, int argc, char **argv);
int tracer__ctl_record(struct tracer__ctl *c, int argc, char **argv);

#endif /* TRACER_CTL_CONTROL_H */
