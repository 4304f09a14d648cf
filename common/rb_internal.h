/*
 * rb_internal.h - declarations shared by the ring-buffer source files only.
 */
#ifndef TRACER_RB_INTERNAL_H
#define TRACER_RB_INTERNAL_H

#include "rb.h"

/*
 * Check the channel header of region[0..size) and copy its immutable line
 * into *copy; fill *geo from it.
 * Returns 0, -EINVAL (bad magic, sizes, mode, geometry or offsets), -EPROTO
 * (layout version), -ENOSPC (region smaller than the header says).
 */
int tracer__rb_check_header(const void *region, uint64_t size,
			    struct tracer_rb_header *copy,
			    struct tracer_rb_geometry *geo, const char **why);

/* Bytes of the whole ring: N * S. */
static inline uint64_t tracer__rb_bufsize(const struct tracer_rb_reader *r)
{
	return r->geo.subbuf_size * r->geo.subbuf_count;
}

/* Slot index of position pos. */
static inline uint64_t tracer__rb_slot_of(const struct tracer_rb_reader *r,
					  uint64_t pos)
{
	return (pos >> r->geo.subbuf_order) & (r->geo.subbuf_count - 1);
}

/* Commit count of the slot at rc, relative to the lap that starts at rc. */
static inline uint64_t tracer__rb_committed(const struct tracer_rb_reader *r,
					    uint64_t rc)
{
	uint64_t c = tracer__load_acquire(
		&r->commit[tracer__rb_slot_of(r, rc)].count);

	return (c - tracer__rb_lap_base(rc, r->geo.subbuf_order,
					r->geo.count_order)) & r->cmask;
}

/* Set the read position and publish it (release: after the copy). */
void tracer__rb_publish(struct tracer_rb_reader *r, uint64_t pos);

/* Put a corruption report in r->error; returns err. */
int tracer__rb_report(struct tracer_rb_reader *r, int err, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

/*
 * Check the packet header of the copy p of the sub-buffer at pos.
 * Returns 0 or -EBADMSG (r->error says which field).
 */
int tracer__rb_check_packet_header(struct tracer_rb_reader *r,
				   const struct tracer_rb_packet *p,
				   uint64_t pos);

/*
 * The time a packet that starts at the record at offset `at` of p (its
 * content ending at `end`) begins with: that record's, rebuilt walking
 * from p's start (a compact time needs the one before it); the time
 * before `at` when no record starts there. For readers that drop the
 * records before `at` (a partial read took them).
 */
uint64_t tracer__rb_time_at(const struct tracer_rb_packet *p, uint64_t at,
			    uint64_t end);

#endif /* TRACER_RB_INTERNAL_H */
