/*
 * tracerd_stubs.h - what tracerd's output layer (tracerd/libtracerd-out.la)
 * needs of the rest of tracerd, for its unit tests: tracerd_log() writes a
 * TAP comment, tracerd_send() keeps what was sent.
 */
#ifndef TRACERD_STUBS_H
#define TRACERD_STUBS_H

#include "tracerd/tracerd.h"

struct stub_sent {
	unsigned messages;		/* tracerd_send() calls */
	int body_case;			/* of the last one */
	int fds[4], nfds;		/* its descriptors, kept open */
};

extern struct stub_sent stub_sent;

/* Close the descriptors stub_sent keeps and forget them. */
void stub_sent_clear(void);
/* Free a process made by a test: its files, readers, segments, memory. */
void stub_free_process(struct tracerd_process *p);

#endif
