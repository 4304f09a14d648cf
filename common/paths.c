/*
 * paths.c - default socket and output locations (see paths.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"

static int put(char *buf, size_t size, int n)
{
	(void)buf;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The per-user path, ignoring $TRACER_SOCKET. */
static int user_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (getuid() == 0)
		return put(buf, size, snprintf(buf, size, "%s",
					       TRACER_SYSTEM_SOCKET));
	if (xdg && xdg[0] == '/')
		return put(buf, size, snprintf(buf, size,
					       "%s/tracer/tracerd.sock", xdg));
	return put(buf, size, snprintf(buf, size, "/tmp/tracer-%u/tracerd.sock",
				       (unsigned)getuid()));
}

int tracer__socket_path(char *buf, size_t size)
{
	const char *env = getenv(TRACER_SOCKET_ENV);

	if (env && env[0])
		return put(buf, size, snprintf(buf, size, "%s", env));
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
	snprintf(paths[1], TRACER_PATH_MAX, "%s", TRACER_SYSTEM_SOCKET);
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
