/*
 * relay.h - streaming a session's traces to lttng-relayd (relay.c), for
 * the rest of tracerd. Single-threaded: the loop.
 */
#ifndef TRACERD_RELAY_H
#define TRACERD_RELAY_H

#include <stddef.h>
#include <stdint.h>

struct tracerd;
struct tracerd_relay_stream;
struct Tracer__RelayStatus;

/*
 * Is url a relay tracerd can stream to ("net://HOST[:CTRL[:DATA]]")?
 * Returns 0, or -EINVAL with why filled.
 */
int tracerd_relay_check_url(const char *url, char *why, size_t n);

/* The session started with d->sess.relay set: connect and stream. */
void tracerd_relay_start(struct tracerd *d);
/* A process directory of the session was made, its CTF metadata in it. */
void tracerd_relay_add_trace(struct tracerd *d, const char *dir);
/*
 * A channel file `name` was made in dir (a process directory of the
 * session): its packets are streamed as they are appended. Returns the
 * handle tracerd_relay_grew() and tracerd_relay_closed() take, or NULL
 * (no relay, or not one of its traces).
 */
struct tracerd_relay_stream *tracerd_relay_file(struct tracerd *d,
						const char *dir,
						const char *name);
/* Whole packets were appended to the file: it is size bytes long, the
 * packets hold `records` records. */
void tracerd_relay_grew(struct tracerd_relay_stream *s, uint64_t size,
			uint64_t records);
/* Nothing more will be appended (the file is closed). */
void tracerd_relay_closed(struct tracerd_relay_stream *s);
/* The process of directory dir is gone: its trace ends. */
void tracerd_relay_trace_closed(struct tracerd *d, const char *dir);
/* The live interval: beacons for idle streams, losses while down. */
void tracerd_relay_tick(struct tracerd *d);
/*
 * The session stopped, its files complete: the relay sends what is left,
 * closes its streams and its relay session in the background (bounded),
 * then lets go.
 */
void tracerd_relay_stop(struct tracerd *d);
/* The current relay's figures for `tracectl status` (NULL: none). */
struct Tracer__RelayStatus *tracerd_relay_status(struct tracerd *d);
void tracerd_relay_status_free(struct Tracer__RelayStatus *s);
/*
 * Send the session directory, or a snapshot of it, dir (complete: flight
 * mode) to d->sess.relay as a relay session of its own, `name`, in the
 * background (like a stopped relay). Nothing without a relay.
 */
void tracerd_relay_send_dir(struct tracerd *d, const char *dir,
			    const char *name);
/* tracerd exits: every relay closed now. */
void tracerd_relay_quit(struct tracerd *d);

#endif
