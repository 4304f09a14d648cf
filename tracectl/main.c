/*
 * main.c - tracectl, the command line of tracer.
 *
 *   tracectl [--socket PATH] COMMAND [OPTIONS]
 *
 * COMMAND is one of control.c's table (start, stop, filter, switch,
 * snapshot, status, list, record), view (view.c), export (export.c) or
 * timeline (timeline.c). Every command takes
 * --help; mistakes are one line on stderr, git style: exit 2 for usage
 * mistakes, 1 for failures.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "control.h"
#include "export.h"
#include "report.h"
#include "view.h"

static void usage(FILE *f)
{
	const struct tracer__ctl_cmd *cmd;

	fputs("usage: tracectl [--socket PATH] COMMAND [OPTIONS]\n"
	      "       tracectl --help | --version\n"
	      "\n"
	      "Commands:\n", f);
	for (cmd = tracer__ctl_cmds; cmd->name; cmd++)
		fprintf(f, "  %-10s %s\n", cmd->name, cmd->summary);
	fprintf(f, "  %-10s %s\n", "view", "print the events of a trace "
		"directory");
	fprintf(f, "  %-10s %s\n", "export", "write a trace directory as a "
		"Chrome trace (JSON, for Perfetto)");
	fprintf(f, "  %-10s %s\n", "timeline", "write a trace directory as "
		"an HTML timeline");
	fprintf(f, "  %-10s %s\n", "report", "summarise a trace directory "
		"(counts, durations, errors)");
	fputs("\n'tracectl COMMAND --help' describes a command's options.\n"
	      "--socket PATH: tracerd's socket (default: $TRACER_SOCKET, else\n"
	      "the per-user or system-wide socket).\n", f);
}

static int syntax(const char *what, const char *arg)
{
	fprintf(stderr, "tracectl: %s '%s' (see 'tracectl --help')\n", what,
		arg);
	return CTL_USAGE;
}

/* The commands that read a trace directory: no daemon, no --socket. */
typedef int trace_cmd_fn(int argc, char **argv);

static trace_cmd_fn *trace_cmd(const char *name)
{
	if (!strcmp(name, "view"))
		return tracer__ctl_view;
	if (!strcmp(name, "export"))
		return tracer__ctl_export;
	if (!strcmp(name, "timeline"))
		return tracer__ctl_timeline;
	if (!strcmp(name, "report"))
		return tracer__ctl_report;
	return NULL;
}

/* `tracectl help [COMMAND]`. */
static int help(int argc, char **argv)
{
	const struct tracer__ctl_cmd *cmd = argc > 1 ?
		tracer__ctl_find(argv[1]) : NULL;
	trace_cmd_fn *run = argc > 1 ? trace_cmd(argv[1]) : NULL;
	char *cmd_help[] = { argc > 1 ? argv[1] : NULL, (char *)"--help",
			     NULL };

	if (run)
		return run(2, cmd_help);
	if (argc > 1 && !cmd)
		return syntax("unknown command", argv[1]);
	if (cmd)
		fputs(cmd->usage, stdout);
	else
		usage(stdout);
	return CTL_OK;
}

/* Options before the command. Returns -1 to go on, or the exit status. */
static int global_options(int argc, char **argv, struct tracer__ctl *c)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char opt[3] = "-?";
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (ch == 's' && strlen(optarg) < sizeof(c->socket) &&
		    optarg[0]) {
			strcpy(c->socket, optarg);
			continue;
		}
		if (ch == 's')
			return syntax("invalid --socket", optarg);
		if (ch == 'h') {
			usage(stdout);
			return CTL_OK;
		}
		if (ch == 'V') {
			printf("tracectl %s\n", PACKAGE_VERSION);
			return CTL_OK;
		}
		opt[1] = (char)optopt;
		return syntax(ch == ':' ? "missing value for option" :
			      "unknown option", ch == '?' && optopt ? opt :
			      argv[optind - 1]);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct tracer__ctl c = { .cmd = NULL };
	const struct tracer__ctl_cmd *cmd;
	int ret = global_options(argc, argv, &c);

	if (ret >= 0)
		return ret;
	if (optind >= argc) {
		fputs("tracectl: no command given (see 'tracectl --help')\n",
		      stderr);
		return CTL_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (trace_cmd(argv[0]))
		return trace_cmd(argv[0])(argc, argv);
	if (!strcmp(argv[0], "help"))
		return help(argc, argv);
	cmd = tracer__ctl_find(argv[0]);
	if (!cmd)
		return syntax("unknown command", argv[0]);
	c.cmd = cmd->name;
	c.usage = cmd->usage;
	return cmd->run(&c, argc, argv);
}
