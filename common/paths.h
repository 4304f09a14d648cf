/*
 * paths.h - where tracerd listens and writes, as all three programs see it.
 *
 * Socket: --socket, else $TRACER_SOCKET, else
 *   root:   /run/tracer/tracerd.sock                 (system-wide daemon)
 *   others: $XDG_RUNTIME_DIR/tracer/tracerd.sock     (per-user daemon)
 *           or /tmp/tracer-UID/tracerd.sock without XDG_RUNTIME_DIR
 * A traced process of a normal user tries its own daemon first, then the
 * system-wide one.
 *
 * Output: --output, else $HOME/tracer-traces, or /var/lib/tracer/traces
 * for root.
 */
#ifndef TRACER_PATHS_H
#define TRACER_PATHS_H

#include <stddef.h>

#define TRACER_SOCKET_ENV	"TRACER_SOCKET"
#define TRACER_SYSTEM_SOCKET	"/run/tracer/tracerd.sock"
#define TRACER_SYSTEM_OUTPUT	"/var/lib/tracer/traces"
#define TRACER_PATH_MAX		108	/* sizeof(sun_path) */

/*
 * In a process directory of a session: tracer's own description of the
 * process (doc/session-files.md), in a subdirectory, so that the process
 * directory itself is a plain CTF trace (metadata and channel files only:
 * CTF readers take every other file there for a stream).
 */
#define TRACER_META_DIR		"tracer"
#define TRACER_META_FILE	TRACER_META_DIR "/process.meta"

/*
 * The socket path to use (or to listen on) for this user.
 * Returns 0, -ENAMETOOLONG (longer than a Unix socket path can be).
 */
int tracer__socket_path(char *buf, size_t size);

/*
 * The paths a traced process tries, in order: up to two.
 * Returns the number of paths (1 or 2), or -ENAMETOOLONG.
 */
int tracer__socket_candidates(char paths[2][TRACER_PATH_MAX]);

/*
 * The default output directory.
 * Returns 0, -ENAMETOOLONG, -ENOENT (no $HOME for a normal user).
 */
int tracer__default_output(char *buf, size_t size);

#endif /* TRACER_PATHS_H */
