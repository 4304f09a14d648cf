/*
 * control.c - what tracectl's subcommands share (control.h): options,
 * error lines, numbers, the request/reply exchange with tracerd. The
 * subcommands are in files of their own (start.c, filter.c,
 * snapshot.c, trigger.c, status.c, list.c, record.c, view.c, ...), their
 * --help texts with the command table (commands.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "relay_proto.h"
#include "control.h"
#include "pattern.h"
#include "rb.h"

#define REPLY_TIMEOUT_MS 60000

/* Keys of the options every subcommand takes. */
#define KEY_SOCKET	0x1000
#define KEY_HELP	0x1001

static const struct tracer__ctl_opt common_opts[] = {
	{ "socket", KEY_SOCKET, true, 0 },
	{ "help", KEY_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

/* ---- Error lines -------------------------------------------------------- */

static void vline(const struct tracer__ctl *c, const char *see,
		  const char *fmt, va_list ap)
{
	fputs("tracectl: ", stderr);
	if (c)
		fprintf(stderr, "%s: ", c->cmd);
	vfprintf(stderr, fmt, ap);
	if (see)
		fprintf(stderr, " (see 'tracectl %s --help')", see);
	fputc('\n', stderr);
}

int tracer__ctl_usage_error(const struct tracer__ctl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(c, NULL, fmt, ap);
	va_end(ap);
	return CTL_USAGE;
}

int tracer__ctl_syntax_error(const struct tracer__ctl *c, const char *fmt,
			     ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(c, c->cmd, fmt, ap);
	va_end(ap);
	return CTL_USAGE;
}

int tracer__ctl_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(NULL, NULL, fmt, ap);
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

static int stop(struct tracer__ctl_args *a, int status)
{
	a->status = status;
	return CTL_STOP;
}

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

/* --socket, and --help (exits). Returns 0 to go on, or CTL_STOP. */
static int common_opt(struct tracer__ctl_args *a, int key)
{
	struct tracer__ctl *c = a->ctl;

	if (key == KEY_HELP) {	/* done: nothing else to do or check */
		fputs(c->usage, stdout);
		exit(CTL_OK);
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

/* ---- Numbers ------------------------------------------------------------ */

/* Leading decimal digits of s into *v. Returns NULL or why not. */
static const char *digits(const char *s, uint64_t *v, char **end)
{
	if (s[0] == '-' && s[1] >= '0' && s[1] <= '9')
		return "is negative";
	if (s[0] < '0' || s[0] > '9')
		return "is not a number";
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno == ERANGE ? "is too large" : NULL;
}

static int unit_shift(char ch)
{
	switch (ch) {
	case 'k': case 'K': return 10;
	case 'm': case 'M': return 20;
	case 'g': case 'G': return 30;
	default: return 0;
	}
}

/* An optional K, M or G suffix (then "iB" or "B") at s. */
static const char *suffix(const char *s, uint64_t *v)
{
	int shift = unit_shift(*s);

	if (shift) {
		s++;
		if (s[0] == 'i' && s[1] == 'B')
			s += 2;
		else if (s[0] == 'B')
			s++;
	}
	if (*s)
		return "is not a size (bytes, or a number with K, M or G)";
	if (*v > (UINT64_MAX >> shift))
		return "is too large";
	*v <<= shift;
	return NULL;
}

const char *tracer__ctl_show_number(char *buf, size_t size, uint64_t v,
				    unsigned flags)
{
	static const char units[] = "GMK";
	int i;

	for (i = 0; i < 3 && (flags & CTL_NUM_SIZE); i++) {
		int shift = 10 * (3 - i);

		if (v >= (1ULL << shift) && !(v & ((1ULL << shift) - 1))) {
			snprintf(buf, size, "%" PRIu64 "%c", v >> shift,
				 units[i]);
			return buf;
		}
	}
	snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

int tracer__ctl_number(const struct tracer__ctl *c, const char *opt,
		       const char *val, uint64_t min, uint64_t max,
		       unsigned flags, uint64_t *out)
{
	char *end, lo[32], hi[32];
	const char *why = digits(val, out, &end);

	if (!why && (flags & CTL_NUM_SIZE))
		why = suffix(end, out);
	else if (!why && *end)
		why = "is not a number";
	if (!why && (flags & CTL_NUM_POW2) && (*out & (*out - 1)))
		why = "is not a power of two";
	if (!why && (*out < min || *out > max))
		return tracer__ctl_usage_error(c,
			"%s: '%s' is out of range (%s to %s)", opt, val,
			tracer__ctl_show_number(lo, sizeof(lo), min, flags),
			tracer__ctl_show_number(hi, sizeof(hi), max, flags));
	if (why)
		return tracer__ctl_usage_error(c, "%s: '%s' %s", opt, val, why);
	return 0;
}

int tracer__ctl_pid(const struct tracer__ctl *c, const char *val,
		    uint32_t *pid)
{
	uint64_t v = 0;
	int ret = tracer__ctl_number(c, "--pid", val, 1, INT32_MAX, 0, &v);

	*pid = (uint32_t)v;
	return ret;
}

/* tracer__ctl_patterns() is in record.c, which finds libtracer.so. */

/* ---- Talking to tracerd ------------------------------------------------- */

int tracer__ctl_resolve_socket(struct tracer__ctl *c)
{
	const char *env = getenv(TRACER_SOCKET_ENV);

	if (c->socket[0] || !tracer__socket_path(c->socket, sizeof(c->socket)))
		return 0;
	return tracer__ctl_fail("socket path '%s' is longer than %zu bytes",
				env ? env : "", sizeof(c->socket) - 1);
}

/*
 * *reply is a Progress (tracerd still works on the request: a stop writing
 * out packets held back): say so once, on stderr, and wait for the next
 * message, each one giving tracerd REPLY_TIMEOUT_MS again. Returns
 * tracer__wire_recv()'s result.
 */
static int progress(int fd, tracer_msg **reply, const char **why)
{
	static bool said;
	uint64_t left = (*reply)->progress->bytes_left;

	tracer__wire_free(*reply);
	*reply = NULL;
	if (!said)
		fprintf(stderr, "tracectl: tracerd is writing out %llu KiB of "
			"packets held back while files were slow to make\n",
			(unsigned long long)(left + 1023) / 1024);
	said = true;
	return tracer__wire_recv(fd, reply, NULL, NULL, REPLY_TIMEOUT_MS, why);
}

/* Send msg, wait for the reply. Returns the reply, or NULL with err
 * (n bytes) saying why. */
static tracer_msg *exchange(const char *path, tracer_msg *msg, char *err,
			    size_t n)
{
	const char *why = NULL;
	tracer_msg *reply = NULL;
	int fd = tracer__wire_connect(path, 0), ret, sent;

	if (fd < 0) {
		snprintf(err, n, "cannot reach tracerd at '%s': %s", path,
			 strerror(-fd));
		return NULL;
	}
	sent = tracer__wire_send(fd, msg, NULL, 0, REPLY_TIMEOUT_MS);
	/* Even if sending failed, a refusal may be waiting to be read. */
	ret = tracer__wire_recv(fd, &reply, NULL, NULL,
				sent ? 1000 : REPLY_TIMEOUT_MS, &why);
	while (!ret && reply->body_case == TRACER__MESSAGE__BODY_PROGRESS)
		ret = progress(fd, &reply, &why);
	if (ret && sent) {
		ret = sent;
		why = NULL;
	}
	close(fd);
	if (ret) {
		snprintf(err, n, "no answer from tracerd at '%s': %s", path,
			 why ? why : strerror(-ret));
		return NULL;
	}
	return reply;
}

tracer_msg *tracer__ctl_request(const struct tracer__ctl *c, tracer_msg *msg,
				int want, char *why, size_t n)
{
	tracer_msg *r = exchange(c->socket, msg, why, n);

	if (!r || (int)r->body_case == want)
		return r;
	if (r->body_case == TRACER__MESSAGE__BODY_ERROR &&
	    r->error->message[0])
		snprintf(why, n, "%s", r->error->message);
	else if (r->body_case == TRACER__MESSAGE__BODY_ERROR)
		snprintf(why, n, "tracerd refused: %s",
			 strerror(-r->error->code));
	else
		snprintf(why, n, "unexpected reply from tracerd at '%s'",
			 c->socket);
	tracer__wire_free(r);
	return NULL;
}

tracer_msg *tracer__ctl_call(const struct tracer__ctl *c, tracer_msg *msg,
			     int want)
{
	char why[TRACER_PATH_MAX + 4096];
	tracer_msg *r = tracer__ctl_request(c, msg, want, why, sizeof(why));

	if (!r)
		tracer__ctl_fail("%s", why);
	return r;
}

/* Send a request answered by Done. Returns the reply or NULL (reported). */
tracer_msg *tracer__ctl_done(const struct tracer__ctl *c, tracer_msg *m)
{
	tracer_msg *r = tracer__ctl_call(c, m, TRACER__MESSAGE__BODY_DONE);

	if (r)
		tracer__ctl_warn(r->done->warning);
	return r;
}
