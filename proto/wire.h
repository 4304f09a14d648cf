/*
 * wire.h - frames on tracerd's Unix socket.
 *
 * A frame is a 12-byte header followed by one protobuf-encoded
 * Tracer__Message (proto/tracer.proto):
 *
 *   offset 0  u32  magic    TRACER_WIRE_MAGIC ("TRCW")
 *          4  u16  version  TRACER_WIRE_VERSION
 *          6  u16  flags    0
 *          8  u32  length   bytes of the message that follows,
 *                           at most TRACER_WIRE_MAX
 *
 * Both ends are on the same host, so the header is in native byte order.
 * File descriptors travel as SCM_RIGHTS with the frame that lists them.
 * A peer that sends a bad magic, another version, an oversize length or a
 * message that does not decode is told why (an Error message) and
 * disconnected.
 *
 * All functions return 0 or a negative errno value; on error *why, when
 * the caller passed it, points to a static one-line explanation.
 */
#ifndef TRACER_WIRE_H
#define TRACER_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/tracer.pb-c.h"

#define TRACER_WIRE_MAGIC	0x57435254u	/* "TRCW" */
#define TRACER_WIRE_VERSION	1u
#define TRACER_WIRE_HEADER	12u
#define TRACER_WIRE_MAX		(1u << 20)	/* 1 MiB per message */
#define TRACER_WIRE_MAX_FDS	4

typedef Tracer__Message tracer_msg;

/*
 * Check a frame header; *len gets the message length.
 * Returns 0, -EBADMSG (bad magic or flags), -EPROTONOSUPPORT (another
 * protocol version), -EMSGSIZE (length above TRACER_WIRE_MAX).
 */
int tracer__wire_check_header(const void *hdr, uint32_t *len,
			      const char **why);

/*
 * Encode msg as a whole frame into a malloc'ed buffer (*frame, *size).
 * Returns 0, -EMSGSIZE (message too large), -ENOMEM.
 */
int tracer__wire_pack(const tracer_msg *msg, void **frame, size_t *size);

/* One call site as a CallSite message lists it (strings may be NULL). */
struct tracer_wire_site {
	uint32_t id;
	uint32_t line;
	int vital;
	const char *types, *file, *name, *format;
};

/*
 * Encode Message{call_sites: CallSites{sites[0..n)}} as a whole frame,
 * byte for byte as tracer__wire_pack() would, without building protobuf-c
 * structures (every program sends it at its start).
 * Returns 0, -EMSGSIZE (message too large), -ENOMEM.
 */
int tracer__wire_pack_sites(const struct tracer_wire_site *sites, size_t n,
			    void **frame, size_t *size);

/*
 * Decode a message body of len bytes. Free *msg with tracer__wire_free().
 * Returns 0, -EBADMSG (does not decode).
 */
int tracer__wire_unpack(const void *body, size_t len, tracer_msg **msg,
			const char **why);

void tracer__wire_free(tracer_msg *msg);

/*
 * Blocking helpers for clients (libtracer, tracectl), with a deadline:
 * timeout_ms < 0 waits forever. fd may be blocking or not.
 *
 * tracer__wire_send() sends msg and the nfds descriptors fds.
 * Returns 0, -ETIMEDOUT, -EMSGSIZE, -ENOMEM, or the errno of sendmsg
 * (-EPIPE, -ECONNRESET...).
 *
 * tracer__wire_recv() receives one frame; descriptors that came with it are
 * stored in fds (at most TRACER_WIRE_MAX_FDS; *nfds gets their number; pass
 * fds = NULL to close any). Returns 0, -ETIMEDOUT, -ECONNRESET (peer closed),
 * -EBADMSG, -EPROTONOSUPPORT, -EMSGSIZE, -ENOMEM, or the errno of recvmsg.
 */
int tracer__wire_send(int fd, const tracer_msg *msg, const int *fds, int nfds,
		      int timeout_ms);
int tracer__wire_recv(int fd, tracer_msg **msg, int *fds, int *nfds,
		      int timeout_ms, const char **why);

/*
 * Connect a stream socket to the Unix socket at path; flags are extra
 * socket() type flags (SOCK_NONBLOCK...), SOCK_CLOEXEC is always added.
 * Returns the fd, or -ENAMETOOLONG or the errno of socket/connect.
 */
int tracer__wire_connect(const char *path, int flags);

/*
 * One non-blocking sendmsg of buf[0..len) with the nfds descriptors fds
 * (SCM_RIGHTS, none when nfds is 0). Returns the bytes sent or -errno.
 */
ssize_t tracer__wire_sendmsg(int fd, const void *buf, size_t len,
			     const int *fds, int nfds);

/* Fill a frame header for a message of len bytes. */
void tracer__wire_header(void *hdr, uint32_t len);

#endif /* TRACER_WIRE_H */
