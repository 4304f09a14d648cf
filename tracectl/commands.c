/*
 * commands.c - tracectl's one table of commands (control.h): name,
 * summary for `tracectl --help`, the --help text of those that talk to
 * tracerd, and the function that runs each. The commands that read a
 * trace directory (view, export, timeline, report) print their own help
 * and take no --socket: they go through an adapter.
 */
#include <stddef.h>

#include "control.h"
#include "export.h"
#include "report.h"
#include "view.h"

/* The commands that read a trace directory: no daemon, no --socket,
 * not even before the command's name. Returns 0, or CTL_USAGE
 * (reported). */
static int no_socket(struct tracer__ctl *c)
{
	if (!c->socket[0])
		return 0;
	return tracer__ctl_syntax_error(c, "unknown option '--socket'");
}

static int view_cmd(struct tracer__ctl *c, int argc, char **argv)
{
	return no_socket(c) ? CTL_USAGE : tracer__ctl_view(argc, argv);
}

static int export_cmd(struct tracer__ctl *c, int argc, char **argv)
{
	return no_socket(c) ? CTL_USAGE : tracer__ctl_export(argc, argv);
}

static int timeline_cmd(struct tracer__ctl *c, int argc, char **argv)
{
	return no_socket(c) ? CTL_USAGE : tracer__ctl_timeline(argc, argv);
}

static int report_cmd(struct tracer__ctl *c, int argc, char **argv)
{
	return no_socket(c) ? CTL_USAGE : tracer__ctl_report(argc, argv);
}

#define SOCKET_HELP \
	"  --socket PATH         tracerd's socket (default: $TRACER_SOCKET,\n" \
	"                        else the per-user or system-wide socket)\n" \
	"  -h, --help            show this help\n"

static const char start_usage[] =
	"usage: tracectl start [--mode discard|flight] [--events PATTERNS]\n"
	"                      [--subbuf-size BYTES] [--subbuf-count N]\n"
	"                      [--live-interval MS] [-o DIR]\n"
	"                      [--relay net://HOST[:CTRL_PORT[:DATA_PORT]]]\n"
	"                      [--relay-only]\n"
	"\n"
	"Start recording a session; print its trace directory last.\n"
	"\n"
	"  --mode MODE           when a buffer is full: 'discard' new events\n"
	"                        (default) or overwrite the oldest: 'flight'\n"
	"  --events PATTERNS     events to record: globs separated by ',' or\n"
	"                        ' ', '-' in front excludes, the last match\n"
	"                        wins (default: every event)\n"
	"  --subbuf-size BYTES   default channel sub-buffer size: a power of\n"
	"                        two from 4K to 1G (K, M, G: powers of 1024)\n"
	"  --subbuf-count N      default channel sub-buffers: a power of two\n"
	"                        from 2 to 65536\n"
	"  --live-interval MS    how often partly filled buffers are written\n"
	"                        out, 1 to 3600000 ms (default 1000)\n"
	"  -o, --output DIR      the session directory itself: created if\n"
	"                        missing, else it must be empty (tracerd's\n"
	"                        own user only; default: a new\n"
	"                        session-DATE-TIME-ID in tracerd's output)\n"
	"  --relay URL           also stream every process's trace, as it is\n"
	"                        written, to lttng-relayd at URL (ports 5342\n"
	"                        and 5343 by default; live viewers attach at\n"
	"                        5344); 'none': not even tracerd's --relay\n"
	"  --relay-only          keep no local copy: when the relay session\n"
	"                        ends, the files the relay has whole are removed\n"
	SOCKET_HELP;

static const char stop_usage[] =
	"usage: tracectl stop\n"
	"\n"
	"Stop the session once everything recorded is on disk; print its\n"
	"trace directory last.\n"
	"\n" SOCKET_HELP;

static const char filter_usage[] =
	"usage: tracectl filter PATTERNS [--pid PID]\n"
	"\n"
	"Change which events are recorded, at once, in every traced process\n"
	"(and those to come) or only in process PID. PATTERNS: globs over\n"
	"event names separated by ',' or ' ' (several arguments are joined);\n"
	"'-' in front excludes; the last matching pattern wins. Example:\n"
	"  tracectl filter 'libc:*,-libc:malloc'\n"
	"A pattern of the library's providers (libc, pthread, proc, func,\n"
	"tracer) that matches none of its events gets a warning.\n"
	"\n"
	"  --pid PID             only this traced process\n"
	SOCKET_HELP;

static const char switch_usage[] =
	"usage: tracectl switch\n"
	"\n"
	"Close the sub-buffers being filled in every traced process so that\n"
	"what they hold is written out now (discard mode; in flight mode,\n"
	"use 'tracectl snapshot').\n"
	"\n" SOCKET_HELP;

static const char snapshot_usage[] =
	"usage: tracectl snapshot\n"
	"\n"
	"Write what the buffers hold now (flight mode) into a new directory;\n"
	"print it last.\n"
	"\n" SOCKET_HELP;

static const char trigger_usage[] =
	"usage: tracectl trigger add --on PATTERNS [--pid PID] [--interval T]\n"
	"                            --snapshot\n"
	"       tracectl trigger list [--json]\n"
	"       tracectl trigger remove ID|--all\n"
	"\n"
	"Have tracerd take a snapshot of the flight-recorder session when a\n"
	"traced process records an event PATTERNS select (the program's own\n"
	"'app:error', or 'tracer:process_killed': a traced program killed by a\n"
	"signal), at most one per interval; it names its trigger in the file\n"
	"'trigger' of the snapshot directory. Triggers stay with tracerd until\n"
	"removed, and act in flight-mode sessions (tracectl start --mode\n"
	"flight). tracerd looks at what was recorded every 100 ms: an event\n"
	"the ring overwrote before that is missed (tracer_record_vital()\n"
	"keeps it far longer).\n"
	"\n"
	"  --on PATTERNS         event-name globs as for 'filter' ('-' in front\n"
	"                        excludes)\n"
	"  --pid PID             only events of this traced process\n"
	"  --interval T          at least T between two snapshots of this\n"
	"                        trigger: 1ms to 24h, as 10s, 500ms, 2 (seconds),\n"
	"                        5m, 1h (default 10s); matches in between are\n"
	"                        counted\n"
	"  --snapshot            the action: take a snapshot (required)\n"
	"  --json                list: a JSON array, one object per trigger\n"
	"  --all                 remove: every trigger\n"
	SOCKET_HELP;

static const char status_usage[] =
	"usage: tracectl status [--json]\n"
	"\n"
	"Show tracerd, the session, and every traced process and thread.\n"
	"\n"
	"  --json                one JSON object with every field\n"
	SOCKET_HELP;

static const char list_usage[] =
	"usage: tracectl list [--pid PID] [--json]\n"
	"\n"
	"List the events the traced processes registered: name, how many\n"
	"processes have it, whether it is recorded (yes, no, partly), format.\n"
	"\n"
	"  --pid PID             only this traced process\n"
	"  --json                a JSON array, one object per call site\n"
	SOCKET_HELP;

static const char record_usage[] =
	"usage: tracectl record [START OPTIONS] [--no-follow] [--] PROGRAM\n"
	"                       [ARGS...]\n"
	"\n"
	"Start a session, run PROGRAM traced (LD_PRELOAD=libtracer.so), wait\n"
	"until it and every process it left running have exited, then stop\n"
	"the session. Starts a private tracerd when none answers on the\n"
	"socket. Standard output is PROGRAM's: record's own lines go to\n"
	"stderr, the trace directory in the line\n"
	"  tracectl: session N stopped; trace directory: DIR\n"
	"Exits with PROGRAM's status (128+N if killed by signal N; 127: not\n"
	"found, 126: not executable, and then nothing is started). SIGTERM\n"
	"and SIGHUP are passed on to PROGRAM.\n"
	"START OPTIONS are those of 'tracectl start': --mode, --events,\n"
	"--subbuf-size, --subbuf-count, --live-interval, -o/--output DIR,\n"
	"--relay URL, --relay-only.\n"
	"\n"
	"  --no-follow           stop when PROGRAM exits, without waiting for\n"
	"                        the processes it left running\n"
	"\n"
	"Environment: TRACER_TRACERD (the tracerd to run), TRACER_LIB (the\n"
	"libtracer.so to preload).\n"
	"\n" SOCKET_HELP;

const struct tracer__ctl_cmd tracer__ctl_cmds[] = {
	{ "start", "start recording a session", start_usage, tracer__ctl_start },
	{ "stop", "stop it, once all is on disk", stop_usage, tracer__ctl_stop },
	{ "filter", "change which events are recorded", filter_usage,
	  tracer__ctl_filter },
	{ "switch", "write out the buffers being filled", switch_usage,
	  tracer__ctl_switch },
	{ "snapshot", "write the flight-mode buffers out now",
	  snapshot_usage, tracer__ctl_snapshot },
	{ "trigger", "snapshots taken when an event is recorded",
	  trigger_usage, tracer__ctl_trigger },
	{ "status", "the daemon, session, processes and threads",
	  status_usage, tracer__ctl_status },
	{ "list", "the events traced processes registered", list_usage,
	  tracer__ctl_list },
	{ "record", "run a program traced, start to stop", record_usage,
	  tracer__ctl_record },
	{ "view", "print the events of a trace directory", NULL, view_cmd },
	{ "export", "write a trace directory as a Chrome trace (JSON, for "
	  "Perfetto)", NULL, export_cmd },
	{ "timeline", "write a trace directory as an HTML timeline", NULL,
	  timeline_cmd },
	{ "report", "summarise a trace directory (counts, durations, errors)",
	  NULL, report_cmd },
	{ NULL, NULL, NULL, NULL },
};

const struct tracer__ctl_cmd *tracer__ctl_find(const char *name)
{
	const struct tracer__ctl_cmd *cmd;

	for (cmd = tracer__ctl_cmds; cmd->name; cmd++)
		if (!strcmp(cmd->name, name))
			return cmd;
	return NULL;
}
