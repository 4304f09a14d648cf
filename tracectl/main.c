/*
 * main.c - tracectl, the command line of tracer.
 *
 *   tracectl [--socket PATH] COMMAND [OPTIONS]
 *
 * COMMAND is one of the table of commands.c: start, stop, filter,
 * switch, snapshot, trigger, status, list, record, view, export,
 * timeline, report. Every command takes
 * --help; mistakes are one line on stderr, git style: exit 2 for usage
 * mistakes, 1 for failures.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "control.h"

static void usage(FILE *f)
{
	const struct tracer__ctl_cmd *cmd;

	fputs("usage: tracectl [--socket PATH] COMMAND [OPTIONS]\n"
	      "       tracectl --help | --version\n"
	      "\n"
	      "Commands:\n", f);
	for (cmd = tracer__ctl_cmds; cmd->name; cmd++)
		fprintf(f, "  %-10s %s\n", cmd->name, cmd->summary);
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

/* The command called name, ready to run in c; NULL: none. */
static const struct tracer__ctl_cmd *command(const char *name,
					     struct tracer__ctl *c)
{
	const struct tracer__ctl_cmd *cmd = tracer__ctl_find(name);

	if (cmd) {
		c->cmd = cmd->name;
		c->usage = cmd->usage;
	}
	return cmd;
}

/* `tracectl help [COMMAND]`. */
static int help(int argc, char **argv, struct tracer__ctl *c)
{
	const struct tracer__ctl_cmd *cmd = argc > 1 ? command(argv[1], c)
						     : NULL;
	char *cmd_help[] = { argc > 1 ? argv[1] : NULL, (char *)"--help",
			     NULL };

	if (argc > 1 && !cmd)
		return syntax("unknown command", argv[1]);
	if (cmd && !cmd->usage)		/* it prints its own */
		return cmd->run(c, 2, cmd_help);
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
	if (!strcmp(argv[0], "help"))
		return help(argc, argv, &c);
	cmd = command(argv[0], &c);
	if (!cmd)
		return syntax("unknown command", argv[0]);
	return cmd->run(&c, argc, argv);
}
