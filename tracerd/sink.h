/*
 * sink.h - tracerd's channel files (sink.c), for the rest of tracerd.
 * Single-threaded: the loop.
 */
#ifndef TRACERD_SINK_H
#define TRACERD_SINK_H

#include "tracerd.h"

/*
 * One pass of the drain over p's buffers: every complete sub-buffer into
 * its owner's file, DRAIN_BUDGET packets per channel and DRAIN_PASS_BYTES
 * in all at most, from the buffer after the last one the pass before
 * read. Returns true if packets are left (come back:
 * tracerd_sink_yield()).
 */
bool tracerd_sink_drain(struct tracerd_process *p);
/*
 * Make CHANNEL-TID in dir, or CHANNEL-TID.N when the kernel reused the
 * thread id (c: the channel). With a relay, the file is streamed from
 * now on; *rs (rs not NULL) gets its relay handle, for
 * tracerd_relay_grew(). Returns the fd or a negative errno.
 */
int tracerd_sink_create_file(struct tracerd *d, const char *dir, int c,
			     uint32_t tid, struct tracerd_relay_stream **rs);
/* Write all n bytes of buf to fd. Returns 0 or a negative errno. */
int tracerd_write_all(int fd, const char *buf, size_t n);
/* Come back to p through the loop (its own eventfd). */
void tracerd_sink_yield(struct tracerd_process *p);
/* Close the files of buffers back in the pool whose owner is written out. */
void tracerd_sink_close_idle(struct tracerd_process *p);
/* Close st's file, if open. */
void tracerd_sink_close_stream(struct tracerd_stream *st);
/*
 * Write everything channel c of b holds into sink's files through pair,
 * reading through a copy of its reader (nothing is consumed). Returns 0
 * or -ENOMEM.
 */
int tracerd_sink_snapshot_channel(struct tracerd_process *p,
				  const struct tracerd_sink *sink,
				  struct tracerd_stream *pair,
				  struct tracerd_buffer *b, int c);

#endif
