/*
 * spill.h - packets held back on disk while their files cannot be made
 * as fast as threads come (spill.c), for sink.c and session.c.
 * Single-threaded: the loop.
 */
#ifndef TRACERD_SPILL_H
#define TRACERD_SPILL_H

#include "tracerd.h"

/*
 * Should a new owner's packets go to the spill rather than to a file made
 * now? Yes when s (may be NULL) is behind, or when making files took more
 * than a share of tracerd's recent time (tracerd_spill_note_create()).
 */
bool tracerd_spill_wanted(struct tracerd *d, const struct tracerd_spill *s);
/* A file creation took ns nanoseconds. */
void tracerd_spill_note_create(struct tracerd *d, uint64_t ns);

/* The spill of process directory dir (its file is made at first use);
 * NULL: out of memory. */
struct tracerd_spill *tracerd_spill_new(struct tracerd *d, const char *dir,
					pid_t pid);
/*
 * A new owner (thread tid, channel c): *id names it in the spill.
 * Returns 0 or a negative errno (nothing written).
 */
int tracerd_spill_open(struct tracerd_spill *s, int c, uint32_t tid,
		       uint64_t *id);
/*
 * Whole packets of owner id, n bytes holding `records` records. Returns 0
 * or a negative errno (nothing written: the spill is cut back).
 */
int tracerd_spill_data(struct tracerd_spill *s, uint64_t id, const void *buf,
		       size_t n, uint64_t records);
/* Owner id is done: its file is closed once written out. */
void tracerd_spill_close_owner(struct tracerd_spill *s, uint64_t id);
/* The spill's descriptor (for fstatvfs), -1 before its first frame. */
int tracerd_spill_fd(const struct tracerd_spill *s);
/* Its process directory is done: s is freed once written out. */
void tracerd_spill_detach(struct tracerd_spill *s);

/*
 * Write spilled packets into their files for a slice of time. Returns
 * true while some spill is behind (call again from the loop).
 */
bool tracerd_spill_work(struct tracerd *d);
/* Is any spill behind? */
bool tracerd_spill_pending(const struct tracerd *d);
/* Bytes held back in every spill, not yet written to their files. */
uint64_t tracerd_spill_backlog(const struct tracerd *d);
/* Free every spill (tracerd exits). */
void tracerd_spill_free_all(struct tracerd *d);

/* session.c (a no-op in the unit tests): make the loop call
 * tracerd_spill_work() until nothing is behind. */
void tracerd_spill_kick(struct tracerd *d);

#endif
