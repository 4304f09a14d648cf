/*
 * rb_record.h - making and reading record headers (layout: rb_layout.h).
 *
 * The one place that knows how a record header is laid out: the writer
 * (rb_write.h, rb_write.c), the readers (rb_read.c, rb_salvage.c,
 * libtracer's stash, tracerd, tracectl) and tracerd's own packets all go
 * through these helpers.
 *
 * Reading is a walk: a record's time is rebuilt from the time before it
 * (rb_layout.h), so a reader carries the packet's clock from record to
 * record, starting at the packet's timestamp_begin:
 *
 *   clock = packet->timestamp_begin;
 *   for (off = TRACER_RB_PACKET_SIZE; off < content; off += rec.size)
 *           if (tracer__rb_record_get(base + off, content - off, &clock,
 *                                     &rec))
 *                   break;  (damaged: rec.size cannot be trusted)
 */
#ifndef TRACER_RB_RECORD_H
#define TRACER_RB_RECORD_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rb_layout.h"

/* One record of a packet, as a reader sees it. */
struct tracer_rb_record {
	uint32_t id;
	uint32_t size;			/* whole record, header included */
	uint64_t timestamp;		/* the full time, rebuilt */
	const void *payload;
	uint32_t payload_size;		/* size - header (includes padding) */
	uint32_t header_size;		/* 8 (compact) or 24 (extended) */
	uint32_t lap;			/* the lap field (rb_layout.h) */
};

/* Where the compact fields lie in the header word (rb_layout.h). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define TRACER__RB_ID_SHIFT	0
# define TRACER__RB_SIZE_SHIFT	12
# define TRACER__RB_TIME_SHIFT	32
# define TRACER__RB_LAP_SHIFT	24
#else
# define TRACER__RB_ID_SHIFT	52
# define TRACER__RB_SIZE_SHIFT	40
# define TRACER__RB_TIME_SHIFT	0
# define TRACER__RB_LAP_SHIFT	32
#endif

/* The first 32 bits of an extended header: the id field says 4095. */
static inline uint32_t tracer__rb_extended_tag(void)
{
	return TRACER_RB_ID_EXTENDED << (TRACER__RB_ID_SHIFT ? 20 : 0);
}

/* The compact header of a record of event id, size bytes, at time ts, in
 * lap `lap` of its ring (id < TRACER_RB_ID_EXTENDED, size <=
 * TRACER_RB_COMPACT_MAX, 8-aligned; only lap's low 8 bits are kept). */
static inline uint64_t tracer__rb_compact_word(uint32_t id, uint32_t size,
					       uint64_t ts, uint64_t lap)
{
	return (uint64_t)id << TRACER__RB_ID_SHIFT |
	       (uint64_t)(size / 8) << TRACER__RB_SIZE_SHIFT |
	       (lap & 0xff) << TRACER__RB_LAP_SHIFT |
	       (ts & TRACER_RB_TIME_MASK) << TRACER__RB_TIME_SHIFT;
}

/* The id and the record size a compact header word says. */
static inline uint32_t tracer__rb_compact_id(uint64_t w)
{
	return (uint32_t)(w >> TRACER__RB_ID_SHIFT) & 0xfff;
}

static inline uint32_t tracer__rb_compact_size(uint64_t w)
{
	return (uint32_t)((w >> TRACER__RB_SIZE_SHIFT) & 0xfff) * 8;
}

/* May a record of event id and size bytes have a compact header at all? */
static inline int tracer__rb_compact_fits(uint32_t id, uint32_t size)
{
	return id < TRACER_RB_ID_EXTENDED && size <= TRACER_RB_COMPACT_MAX;
}

/* Bytes of a record with header_size bytes of header and payload_size of
 * payload, padded to 8. */
static inline uint32_t tracer__rb_record_size(uint32_t header_size,
					      uint32_t payload_size)
{
	return (header_size + payload_size + TRACER_RB_ALIGN - 1) &
	       ~(TRACER_RB_ALIGN - 1);
}

/*
 * Write the header of a record at p (8-byte aligned), in lap `lap` of its
 * ring (0 outside a ring): compact when `compact`, else extended (its
 * size must count the 24 bytes). Returns where the payload goes.
 */
static inline void *tracer__rb_header_put(void *p, int compact, uint32_t id,
					  uint32_t size, uint64_t ts,
					  uint64_t lap)
{
	struct tracer_rb_event_ext *x = p;

	if (compact) {
		uint64_t w = tracer__rb_compact_word(id, size, ts, lap);

		memcpy(p, &w, sizeof(w));
		return (char *)p + TRACER_RB_COMPACT_SIZE;
	}
	x->tag = tracer__rb_extended_tag();
	x->size = size;
	x->id = id;
	x->lap = (uint32_t)(lap & 0xff);
	x->timestamp = ts;
	return x + 1;
}

/* tracer__rb_record_get() of a compact header w: its size and time. */
static inline int tracer__rb_get_compact(uint64_t w, uint64_t room,
					 uint64_t clock,
					 struct tracer_rb_record *rec)
{
	uint32_t size = (uint32_t)((w >> TRACER__RB_SIZE_SHIFT) & 0xfff) * 8;
	uint64_t low = (w >> TRACER__RB_TIME_SHIFT) & TRACER_RB_TIME_MASK;

	if (size < TRACER_RB_COMPACT_SIZE || size > room)
		return -EBADMSG;
	rec->id = (uint32_t)(w >> TRACER__RB_ID_SHIFT) & 0xfff;
	rec->size = size;
	rec->lap = (uint32_t)(w >> TRACER__RB_LAP_SHIFT) & 0xff;
	rec->timestamp = clock + ((low - clock) & TRACER_RB_TIME_MASK);
	rec->header_size = TRACER_RB_COMPACT_SIZE;
	return 0;
}

/* tracer__rb_record_get() of an extended header at p. */
static inline int tracer__rb_get_extended(const void *p, uint64_t room,
					  struct tracer_rb_record *rec)
{
	struct tracer_rb_event_ext x;

	if (room < TRACER_RB_EXTENDED_SIZE)
		return -EBADMSG;
	memcpy(&x, p, sizeof(x));
	if (x.tag != tracer__rb_extended_tag() || x.lap > 0xff ||
	    x.size < TRACER_RB_EXTENDED_SIZE || x.size % TRACER_RB_ALIGN ||
	    x.size > room)
		return -EBADMSG;
	rec->id = x.id;
	rec->size = x.size;
	rec->lap = x.lap;
	rec->timestamp = x.timestamp;
	rec->header_size = TRACER_RB_EXTENDED_SIZE;
	return 0;
}

/*
 * Read the header of the record at p, room bytes of packet content left
 * from p, the time before it in *clock (the previous record's, or the
 * packet's timestamp_begin). Fills rec and moves *clock to the record's
 * time. Returns 0, or -EBADMSG: not a record (sizes beyond room or not
 * 8-aligned, a header with bits set that no writer sets); *clock is then
 * unchanged and rec undefined. An extended time may be earlier than
 * *clock: the caller checks the order it needs.
 */
static inline int tracer__rb_record_get(const void *p, uint64_t room,
					uint64_t *clock,
					struct tracer_rb_record *rec)
{
	uint64_t w;
	int ret;

	if (room < TRACER_RB_COMPACT_SIZE)
		return -EBADMSG;
	memcpy(&w, p, sizeof(w));
	if (((w >> TRACER__RB_ID_SHIFT) & 0xfff) != TRACER_RB_ID_EXTENDED)
		ret = tracer__rb_get_compact(w, room, *clock, rec);
	else
		ret = tracer__rb_get_extended(p, room, rec);
	if (ret)
		return ret;
	rec->payload = (const char *)p + rec->header_size;
	rec->payload_size = rec->size - rec->header_size;
	*clock = rec->timestamp;
	return 0;
}

/* The size the header at p (room >= 8 bytes) claims, for error messages:
 * the compact size field, or an extended header's (0 if cut short). */
static inline uint64_t tracer__rb_header_claims(const void *p, uint64_t room)
{
	struct tracer_rb_event_ext x;
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	if (((w >> TRACER__RB_ID_SHIFT) & 0xfff) != TRACER_RB_ID_EXTENDED)
		return ((w >> TRACER__RB_SIZE_SHIFT) & 0xfff) * 8;
	if (room < sizeof(x))
		return 0;
	memcpy(&x, p, sizeof(x));
	return x.size;
}

#endif /* TRACER_RB_RECORD_H */
