/*
 * test_paths.c - where the tools look for tracerd (common/paths.h):
 * $TRACER_SOCKET first, then the user's own socket ($XDG_RUNTIME_DIR, or
 * /tmp/tracer-UID) and the system one; a path longer than a socket's
 * address allows is refused, never cut.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths.h"
#include "tap.h"

static void candidates(const char *first, const char *second,
		       const char *name)
{
	char p[2][TRACER_PATH_MAX];
	int n = tracer__socket_candidates(p);
	int want = second ? 2 : 1;

	if (!ok(n == want && !strcmp(p[0], first) &&
		(!second || !strcmp(p[1], second)), "%s", name))
		diag("  got %d '%s' '%s'", n, n > 0 ? p[0] : "",
		     n > 1 ? p[1] : "");
}

static void from_env(void)
{
	char buf[TRACER_PATH_MAX], longer[TRACER_PATH_MAX + 8];

	setenv("TRACER_SOCKET", "/x/y.sock", 1);
	ok(tracer__socket_path(buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "/x/y.sock"), "$TRACER_SOCKET is the socket");
	candidates("/x/y.sock", NULL, "$TRACER_SOCKET: the only candidate");
	ok(tracer__socket_path(buf, 9) == -ENAMETOOLONG,
	   "a buffer one byte short: -ENAMETOOLONG");
	ok(tracer__socket_path(buf, 10) == 0 && !strcmp(buf, "/x/y.sock"),
	   "a buffer just long enough");
	memset(longer, 'a', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	setenv("TRACER_SOCKET", longer, 1);
	ok(tracer__socket_path(buf, sizeof(buf)) == -ENAMETOOLONG,
	   "a path longer than a socket address: refused, not cut");
	unsetenv("TRACER_SOCKET");
}

/* A user's own socket, then the system's (4 tests). */
static void per_user(void)
{
	char buf[TRACER_PATH_MAX], want[64];

	setenv("XDG_RUNTIME_DIR", "/run/user/77", 1);
	ok(tracer__socket_path(buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "/run/user/77/tracer/tracerd.sock"),
	   "a user: $XDG_RUNTIME_DIR/tracer/tracerd.sock");
	candidates("/run/user/77/tracer/tracerd.sock", TRACER_SYSTEM_SOCKET,
		   "a user: the own socket, then the system's");
	unsetenv("XDG_RUNTIME_DIR");
	snprintf(want, sizeof(want), "/tmp/tracer-%u/tracerd.sock",
		 (unsigned)getuid());
	ok(tracer__socket_path(buf, sizeof(buf)) == 0 && !strcmp(buf, want),
	   "no $XDG_RUNTIME_DIR: /tmp/tracer-UID/tracerd.sock");
	setenv("XDG_RUNTIME_DIR", "relative", 1);
	ok(tracer__socket_path(buf, sizeof(buf)) == 0 && !strcmp(buf, want),
	   "a relative $XDG_RUNTIME_DIR is not used");
}

/* Root: the system socket only; then a user's paths, in a child that
 * became nobody (65534). */
static void as_root(void)
{
	char buf[TRACER_PATH_MAX];
	int st = -1;
	pid_t pid;

	ok(tracer__socket_path(buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, TRACER_SYSTEM_SOCKET), "root: the system socket");
	candidates(TRACER_SYSTEM_SOCKET, NULL, "root: the only candidate");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			bail_out("cannot become nobody");
		per_user();
		_exit(done());
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		bail_out("cannot run a child as nobody");
	tap_count += 4;
	tap_failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(void)
{
	plan(getuid() == 0 ? 11 : 9);
	from_env();
	if (getuid() == 0)
		as_root();
	else
		per_user();
	return done();
}
