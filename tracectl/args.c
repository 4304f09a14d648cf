/*
 * args.c - tracectl's one option parser and its error lines (args.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

/* Keys of the options every command takes. */
#define KEY_SOCKET	0x1000
#define KEY_HELP	0x1001

static const struct tracer__ctl_opt common_opts[] = {
	{ "socket", KEY_SOCKET, true, 0 },
	{ "help", KEY_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

/* ---- Error lines -------------------------------------------------------- */

/* "tracectl: [CMD: ]MESSAGE[ (see 'tracectl [CMD ]--help')]". */
static void vline(const struct tracer__ctl *c, bool see, const char *fmt,
		  va_list ap)
{
	const char *cmd = c ? c->cmd : NULL;

	fputs("tracectl: ", stderr);
	if (cmd)
		fprintf(stderr, "%s: ", cmd);
	vfprintf(stderr, fmt, ap);
	if (see)
		fprintf(stderr, " (see 'tracectl %s%s--help')", cmd ? cmd : "",
			cmd ? " " : "");
	fputc('\n', stderr);
}

int tracer__ctl_usage_error(const struct tracer__ctl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(c, false, fmt, ap);
	va_end(ap);
	return CTL_USAGE;
}

int tracer__ctl_syntax_error(const struct tracer__ctl *c, const char *fmt,
			     ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(c, true, fmt, ap);
	va_end(ap);
	return CTL_USAGE;
}

int tracer__ctl_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, false, fmt, ap);
	va_end(ap);
	return CTL_FAIL;
}

void tracer__ctl_warn(const char *warning)
{
	if (warning && warning[0])
		fprintf(stderr, "tracectl: warning: %s\n", warning);
}

/* ---- Options ------------------------------------------------------------ */

void tracer__ctl_args_init(struct tracer__ctl_args *a, struct tracer__ctl *c,
			   const struct tracer__ctl_opt *opts, int argc,
			   char **argv)
{
	memset(a, 0, sizeof(*a));
	a->ctl = c;
	a->opts = opts;
	a->argc = argc;
	a->argv = argv;
	a->i = 1;
}

/* Stop parsing with the exit status status. Returns CTL_STOP. */
static int stop(struct tracer__ctl_args *a, int status)
{
	a->status = status;
	return CTL_STOP;
}

/* The option of table t named name (len bytes), or NULL. */
static const struct tracer__ctl_opt *lookup(const struct tracer__ctl_opt *t,
					    const char *name, size_t len)
{
	for (; t && t->name; t++)
		if (strlen(t->name) == len && !strncmp(t->name, name, len))
			return t;
	return NULL;
}

/* The subcommand's option named name (len bytes), or NULL. */
static const struct tracer__ctl_opt *find_opt(const struct tracer__ctl_args *a,
					      const char *name, size_t len)
{
	const struct tracer__ctl_opt *o = lookup(a->opts, name, len);

	return o ? o : lookup(a->more_opts, name, len);
}

/* The subcommand's option whose letter is ch, or NULL. */
static const struct tracer__ctl_opt *
find_letter(const struct tracer__ctl_args *a, char ch)
{
	const struct tracer__ctl_opt *t[2] = { a->opts, a->more_opts }, *o;
	int i;

	for (i = 0; i < 2; i++)
		for (o = t[i]; o && o->name; o++)
			if (o->letter && o->letter == ch)
				return o;
	return NULL;
}

/* "--name", "--name=value" or "--name value". */
static int long_opt(struct tracer__ctl_args *a, const char *arg)
{
	const char *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct tracer__ctl_opt *o = find_opt(a, name, len);

	if (!o)
		o = lookup(common_opts, name, len);
	if (o && o->key == KEY_SOCKET && a->ctl->no_socket)
		o = NULL;
	if (!o)
		return stop(a, tracer__ctl_syntax_error(a->ctl,
			"unknown option '%.*s'", (int)len + 2, arg));
	if (!o->arg && eq)
		return stop(a, tracer__ctl_syntax_error(a->ctl,
			"option '--%s' takes no value", o->name));
	a->val = eq ? eq + 1 : NULL;
	if (o->arg && !eq) {
		if (a->i >= a->argc)
			return stop(a, tracer__ctl_syntax_error(a->ctl,
				"option '--%s' needs a value", o->name));
		a->val = a->argv[a->i++];
	}
	return o->key;
}

/* --socket, and --help (which stops: nothing else to do or check).
 * Returns 0 to go on, or CTL_STOP. */
static int common_opt(struct tracer__ctl_args *a, int key)
{
	struct tracer__ctl *c = a->ctl;

	if (key == KEY_HELP) {
		fputs(c->usage, stdout);
		if (c->help)
			fputs(c->help, stdout);
		return stop(a, CTL_HELP);
	}
	if (!a->val[0])
		return stop(a, tracer__ctl_usage_error(c,
			"--socket needs a non-empty PATH"));
	if (strlen(a->val) >= sizeof(c->socket))
		return stop(a, tracer__ctl_usage_error(c,
			"--socket: '%s' is longer than %zu bytes", a->val,
			sizeof(c->socket) - 1));
	strcpy(c->socket, a->val);
	return 0;
}

/* "-x", "-xVALUE" or "-x VALUE"; NULL if x is no option's letter. */
static const struct tracer__ctl_opt *short_opt(struct tracer__ctl_args *a,
					       const char *arg)
{
	const struct tracer__ctl_opt *o = find_letter(a, arg[1]);

	if (!o || (!o->arg && arg[2]))
		return NULL;
	a->val = NULL;
	if (o->arg && arg[2])
		a->val = arg + 2;
	else if (o->arg && a->i < a->argc)
		a->val = a->argv[a->i++];
	return o;
}

/* The option arg ("-..."): its key, KEY_HELP, CTL_ARG (dash_args) or
 * CTL_STOP (reported). */
static int option(struct tracer__ctl_args *a, const char *arg)
{
	const struct tracer__ctl_opt *o;

	if (!strcmp(arg, "-h"))
		return KEY_HELP;
	if (arg[1] == '-')
		return long_opt(a, arg);
	o = short_opt(a, arg);
	if (o && o->arg && !a->val)
		return stop(a, tracer__ctl_syntax_error(a->ctl,
			"option '-%c' needs a value", o->letter));
	if (o)
		return o->key;
	if (a->dash_args) {
		a->val = arg;
		return CTL_ARG;
	}
	return stop(a, tracer__ctl_syntax_error(a->ctl,
		"unknown option '%s'", arg));
}

int tracer__ctl_next(struct tracer__ctl_args *a)
{
	for (;;) {
		const char *arg;
		int key;

		if (a->i >= a->argc)
			return CTL_END;
		arg = a->argv[a->i++];
		if (a->only_args || arg[0] != '-' || !arg[1]) {
			a->val = arg;
			return CTL_ARG;
		}
		if (!strcmp(arg, "--")) {
			a->only_args = true;
			continue;
		}
		key = option(a, arg);
		if (key != KEY_HELP && key != KEY_SOCKET)
			return key;
		if (common_opt(a, key))
			return CTL_STOP;
	}
}

int tracer__ctl_no_args(struct tracer__ctl_args *a)
{
	int key = tracer__ctl_next(a);

	if (key == CTL_ARG)
		return tracer__ctl_syntax_error(a->ctl,
			"unexpected argument '%s'", a->val);
	if (key == CTL_STOP)
		return a->status;
	return 0;	/* CTL_END: an option key cannot come without opts */
}
