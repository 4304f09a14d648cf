/*
 * record.h - how `tracectl record` runs the program and waits for it
 * (record_run.c); record.c starts and stops the session around it.
 *
 * tracectl takes SIGINT, SIGTERM, SIGHUP and SIGCHLD with sigwaitinfo()
 * (blocked from tracer__run_signals() on) and ignores SIGQUIT and
 * SIGPIPE; every child it starts (the program, a private tracerd) gets
 * back the dispositions and mask tracectl itself was given.
 */
#ifndef TRACER_CTL_RECORD_H
#define TRACER_CTL_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

/* Exit statuses of a program that could not be run, as the shell's. */
#define RUN_NOT_FOUND	127
#define RUN_NOT_EXEC	126

struct tracer__run {
	char **argv;		/* the program and its arguments */
	const char *socket;	/* its TRACER_SOCKET */
	const char *lib;	/* the libtracer.so it preloads */
	bool follow;		/* wait for its descendants as well */
	pid_t tracerd;		/* a private tracerd (a child, not a
				   descendant of the program), 0: none */
	/* Results of tracer__run(). */
	int status;		/* the program's: 128+N if signal N killed
				   it, 126 or 127 if it could not run */
	int exec_errno;		/* why it could not run, 0: it ran */
	bool not_run;		/* it did not run (exec_errno, or a signal
				   came first: status 128+N) */
	int tracerd_wait;	/* the private tracerd's wait status if it
				   died meanwhile (tracerd is then 0) */
	bool tracerd_died;
};

/* Block and take over the signals (see above); those that come before the
 * program starts mean: do not run it. */
void tracer__run_signals(void);

/* In a child: the dispositions and mask tracectl was given. */
void tracer__run_child_signals(void);

/* Would execvp(file) find an executable? 0, or minus the errno it would
 * fail with (-ENOENT, -EACCES...). */
int tracer__run_check(const char *file);

/* 127 when err says "not found", 126 otherwise. */
int tracer__run_exec_status(int err);

/*
 * Run r->argv traced and wait until it exited and, with r->follow, until
 * every process it left running has exited too (tracectl is their child
 * subreaper). Fills the results. Returns 0, or CTL_FAIL (reported) if it
 * could not be started (fork).
 */
int tracer__run(struct tracer__run *r);

/*
 * A request to the private tracerd failed: has it died? Its socket closes
 * before tracectl can reap it, so this waits up to ms for its exit (a
 * pidfd). True, with tracerd_wait and tracerd_died set, once reaped.
 */
bool tracer__run_tracerd_gone(struct tracer__run *r, int ms);

#endif /* TRACER_CTL_RECORD_H */
