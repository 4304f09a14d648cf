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

/* `tracectl help [COMMAND]`. Returns the exit status (CTL_HELP for a
 * command's own help). */
static int help(int argc, char **argv, struct tracer__ctl *c)
{
	const struct tracer__ctl_cmd *cmd = argc > 1 ? command(argv[1], c)
						     : NULL;
	char *cmd_help[] = { argc > 1 ? argv[1] : NULL, (char *)"--help",
			     NULL };

	if (argc > 1 && !cmd)
		return tracer__ctl_syntax_error(c, "unknown command '%s'",
						argv[1]);
	if (cmd && !cmd->usage)		/* it prints its own */
		return cmd->run(c, 2, cmd_help);
	if (cmd)
		fputs(cmd->usage, stdout);
	else
		usage(stdout);
	return CTL_OK;
}

#define KEY_VERSION	1

static const struct tracer__ctl_opt global_opts[] = {
	{ "version", KEY_VERSION, false, 0 },
	{ NULL, 0, false, 0 },
};

/* Options before the command (--socket, --help, --version): *first gets
 * the command's index in argv. Returns -1 to go on, or the exit status. */
static int global_options(int argc, char **argv, struct tracer__ctl *c,
			  int *first)
{
	struct tracer__ctl_args a;
	int key;

	c->usage = "";		/* --help: usage(), below */
	tracer__ctl_args_init(&a, c, global_opts, argc, argv);
	key = tracer__ctl_next(&a);
	if (key == KEY_VERSION) {
		printf("tracectl %s\n", PACKAGE_VERSION);
		return CTL_OK;
	}
	if (key == CTL_STOP && a.status == CTL_HELP) {
		usage(stdout);
		return CTL_OK;
	}
	if (key == CTL_STOP)
		return a.status;
	if (key == CTL_END)
		return tracer__ctl_syntax_error(c, "no command given");
	*first = a.i - 1;
	c->usage = NULL;
	return -1;
}

int main(int argc, char **argv)
{
	struct tracer__ctl c = { .cmd = NULL };
	const struct tracer__ctl_cmd *cmd;
	int first = 0, ret = global_options(argc, argv, &c, &first);

	if (ret >= 0)
		return ret;
	argc -= first;
	argv += first;
	if (!strcmp(argv[0], "help"))
		ret = help(argc, argv, &c);
	else if ((cmd = command(argv[0], &c)))
		ret = cmd->run(&c, argc, argv);
	else
		ret = tracer__ctl_syntax_error(&c, "unknown command '%s'",
					       argv[0]);
	return ret == CTL_HELP ? CTL_OK : ret;
}
