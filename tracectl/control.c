/*
 * control.c - what tracectl's subcommands share (control.h): numbers,
 * the request/reply exchange with tracerd (options and error lines are
 * args.c's). The
 * subcommands are in files of their own (start.c, filter.c,
 * snapshot.c, trigger.c, status.c, list.c, record.c, view.c, ...), their
 * --help texts with the command table (commands.c).
 */
#include <errno.h>
#include <inttypes.h>
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
