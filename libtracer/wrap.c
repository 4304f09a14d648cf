/*
 * wrap.c - what the C library wrappers share (wrap.h): the recursion
 * guard, the lookup of the next definitions, and the text of errno
 * values and socket addresses.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "wrap.h"

__thread unsigned tracer__wrap_guard
	__attribute__((tls_model("initial-exec")));
__thread unsigned tracer__wrap_alloc
	__attribute__((tls_model("initial-exec")));

/* Write s without stdio (which may be what is being resolved). */
static void say(const char *s)
{
	ssize_t r = syscall(SYS_write, 2, s, strlen(s));

	(void)r;
}

void *tracer__wrap_next(const char *name)
{
	void *fn = tracer__next(name);

	if (!fn) {
		say("libtracer: no definition of ");
		say(name);
		say(" after libtracer's (is the C library loaded?)\n");
		abort();
	}
	return fn;
}

static const char *unix_text(const struct sockaddr_un *un, unsigned len,
			     char *buf, size_t size)
{
	size_t plen = len > offsetof(struct sockaddr_un, sun_path) ?
		      len - offsetof(struct sockaddr_un, sun_path) : 0;
	size_t i, o = 5;

	memcpy(buf, "unix:", 5);
	if (plen > sizeof(un->sun_path))
		plen = sizeof(un->sun_path);
	for (i = 0; i < plen && o + 2 < size; i++) {
		char c = un->sun_path[i];

		if (c == '\0' && i > 0)
			break;
		buf[o++] = c == '\0' ? '@' : c;	/* abstract: @name */
	}
	buf[o] = '\0';
	return buf;
}

const char *tracer__wrap_sockaddr(const void *sa, unsigned len, char *buf,
				  size_t size)
{
	const struct sockaddr *s = sa;
	char ip[INET6_ADDRSTRLEN];

	if (!sa || len < sizeof(sa_family_t))
		return "-";
	switch (s->sa_family) {
	case AF_UNIX:
		return unix_text(sa, len, buf, size);
	case AF_INET: {
		const struct sockaddr_in *in = sa;

		if (len < sizeof(*in) ||
		    !inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)))
			return "inet:?";
		snprintf(buf, size, "%s:%u", ip, ntohs(in->sin_port));
		return buf;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = sa;

		if (len < sizeof(*in6) ||
		    !inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip)))
			return "inet6:?";
		snprintf(buf, size, "[%s]:%u", ip, ntohs(in6->sin6_port));
		return buf;
	}
	default:
		snprintf(buf, size, "family %u", (unsigned)s->sa_family);
		return buf;
	}
}
