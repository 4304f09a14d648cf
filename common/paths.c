/*
 * paths.c - default socket and output locations (see paths.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

static int put(char *buf, size_t size, int n)
{
	(void)buf;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * buf = a b c (NULLs are empty), or -ENAMETOOLONG. Not snprintf(): these
 * run in every traced program's constructor, and the first snprintf() of
 * a program that never formats costs it pages of the C library.
 */
static int join(char *buf, size_t size, const char *a, const char *b,
		const char *c)
{
	const char *part[3] = { a, b, c };
	size_t o = 0, n;
	int i;

	for (i = 0; i < 3; i++) {
		n = part[i] ? strlen(part[i]) : 0;
		if (n >= size - o)
			return -ENAMETOOLONG;
		memcpy(buf + o, part[i] ? part[i] : "", n);
		o += n;
	}
	buf[o] = '\0';
	return 0;
}

/* The per-user path, ignoring $TRACER_SOCKET. */
static int user_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char uid[16], *p = uid + sizeof(uid);
	unsigned v = (unsigned)getuid();

	if (v == 0)
		return join(buf, size, TRACER_SYSTEM_SOCKET, NULL, NULL);
	if (xdg && xdg[0] == '/')
		return join(buf, size, xdg, "/tracer/tracerd.sock", NULL);
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return join(buf, size, "/tmp/tracer-", p, "/tracerd.sock");
}

int tracer__socket_path(char *buf, size_t size)
{
	const char *env = getenv(TRACER_SOCKET_ENV);

	if (env && env[0])
		return join(buf, size, env, NULL, NULL);
	return user_path(buf, size);
}

int tracer__socket_candidates(char paths[2][TRACER_PATH_MAX])
{
	const char *env = getenv(TRACER_SOCKET_ENV);
	int ret;

	if ((env && env[0]) || getuid() == 0) {
		ret = tracer__socket_path(paths[0], TRACER_PATH_MAX);
		return ret ? ret : 1;
	}
	ret = user_path(paths[0], TRACER_PATH_MAX);
	if (ret)
		return ret;
	join(paths[1], TRACER_PATH_MAX, TRACER_SYSTEM_SOCKET, NULL, NULL);
	return 2;
}

int tracer__default_output(char *buf, size_t size)
{
	const char *home = getenv("HOME");

	if (getuid() == 0)
		return put(buf, size, snprintf(buf, size, "%s",
					       TRACER_SYSTEM_OUTPUT));
	if (!home || home[0] != '/')
		return -ENOENT;
	return put(buf, size, snprintf(buf, size, "%s/tracer-traces", home));
}
