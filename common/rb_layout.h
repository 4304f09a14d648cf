/*
 * rb_layout.h - shared-memory layout of one ring-buffer channel.
 *
 * A channel lives in a memory region that a traced process (the writer) and
 * tracerd (the reader) both map. Everything in it is addressed by offsets
 * from the start of the region, never by pointers, and every structure
 * starts with what a reader needs to check it: magic, version, sizes.
 * Fields are only ever added at the end of a structure, or the version
 * changes (3 moved fields inside the packet header); `header_size`,
 * `packet_header_size` and `event_header_size` say how large the writer's
 * structures are.
 *
 * Region
 * ------
 *
 *   0                  192          192+64*N        data_offset (page aligned)
 *   +------------------+------------+---------------+--------------------------+
 *   | channel header   | commit[0]  | ... commit[N-1]| sub-buffer 0 | ... | N-1 |
 *   | (3 cache lines)  | (1 line)   |               |  S bytes each            |
 *   +------------------+------------+---------------+--------------------------+
 *
 * Sub-buffer = one CTF 1.8 packet, written to disk unchanged:
 *
 *   +----------------------------+--------+--------+-----+---------+
 *   | packet header + context    | event  | event  | ... | padding |
 *   | (struct tracer_rb_packet)  |        |        |     |         |
 *   +----------------------------+--------+--------+-----+---------+
 *   |<------------ content_size / 8 bytes ---------->|            |
 *   |<------------------- packet_size / 8 = S bytes --------------->|
 *
 *   event = record header (8 bytes, or 24: below) + payload, padded to
 *           8 bytes; its size covers header, payload and padding.
 *
 * Counters (all uint64_t, free-running modulo 2^64, never reset)
 * --------
 *   write_count   bytes reserved since the channel was created (plus the
 *                 start offset). Written only by the writer thread and its
 *                 signal handlers (single-instruction local CAS).
 *   read_count    position of the next sub-buffer the reader will take;
 *                 always a multiple of S. Written only by the reader.
 *   commit[i].count    bytes committed in sub-buffer slot i, over all laps.
 *   commit[i].records  records committed in slot i, over all laps.
 *                 Both written only by the writer (single-instruction local
 *                 add/inc), read by the reader.
 *   lost          records discarded by the writer (buffer full, or a nested
 *                 writer lapped the whole buffer). Written only by the writer.
 *
 * With S = 2^m bytes per sub-buffer, N = 2^k sub-buffers, B = N * S, a
 * position p (a value of write_count) falls in slot (p >> m) & (N - 1), and
 * the sub-buffer that starts at p (p multiple of S) is lap
 * L = p / B of that slot. Define base(p) = (p >> k) & ~(S - 1) = L * S
 * (modulo 2^(64-k)). Every lap adds exactly S bytes to the slot's commit
 * count (header + records + closing padding), so, comparing modulo
 * 2^(64-k) (CMASK):
 *
 *   (commit[i].count - base(p)) & CMASK == 0   slot free for lap L: every
 *                                              byte of lap L-1 is committed
 *   (commit[i].count - base(p)) & CMASK == S   lap L complete: readable
 *   in between                                 lap L being written
 *
 * Invariants: read_count <= write_count; in discard mode
 * write_count - read_count <= B (the writer never enters a sub-buffer the
 * reader has not released). The reader trusts none of this: a writer may
 * have crashed or scribbled anything, so every value is checked before use.
 */
#ifndef TRACER_RB_LAYOUT_H
#define TRACER_RB_LAYOUT_H

#include <stdint.h>

#define TRACER_RB_MAGIC		0x54524231u	/* "TRB1" */
#define TRACER_RB_VERSION	3u	/* 2: compact record headers; 3: the
					   packet's bookkeeping out of sight */
#define TRACER_CTF_MAGIC	0xC1FC1FC1u	/* CTF 1.8 packet magic */

enum tracer_rb_mode {
	TRACER_RB_DISCARD = 0,	/* never overwrite unread data; count losses */
	TRACER_RB_FLIGHT = 1,	/* overwrite the oldest sub-buffer */
};

/*
 * What a packet's times count (its `unit`). A writer stamps TSC ticks
 * only where tracerd said it converts them (clock.h, "Ticks"); the reader
 * turns such a packet into nanoseconds as it takes it (rb_read.c), so
 * that files, and everything that reads them, see nanoseconds only.
 */
enum tracer_rb_unit {
	TRACER_RB_UNIT_NS = 0,		/* CLOCK_MONOTONIC nanoseconds */
	TRACER_RB_UNIT_TSC = 1,		/* the TSC's ticks */
};

/* Smallest and largest geometries accepted. */
#define TRACER_RB_MIN_SUBBUF_ORDER	7	/* 128 bytes: headers + a record */
#define TRACER_RB_MAX_SUBBUF_ORDER	30	/* 1 GiB */
#define TRACER_RB_MIN_COUNT_ORDER	1	/* at least 2 sub-buffers */
#define TRACER_RB_MAX_COUNT_ORDER	16
#define TRACER_RB_MAX_TOTAL_ORDER	40	/* 1 TiB per channel */

/*
 * Channel header, at offset 0 of the region. Line 0 is written once by the
 * creator before the magic is published; line 1 by the writer; line 2 by the
 * reader, so writer and reader never write the same cache line.
 */
struct tracer_rb_header {
	/* line 0: identity and geometry, immutable once published */
	uint32_t magic;			/* TRACER_RB_MAGIC, stored last */
	uint32_t version;		/* TRACER_RB_VERSION */
	uint32_t header_size;		/* sizeof(struct tracer_rb_header) */
	uint32_t packet_header_size;	/* sizeof(struct tracer_rb_packet) */
	uint32_t event_header_size;	/* TRACER_RB_COMPACT_SIZE */
	uint8_t subbuf_order;		/* m: S = 2^m */
	uint8_t count_order;		/* k: N = 2^k */
	uint8_t mode;			/* enum tracer_rb_mode */
	uint8_t reserved0;
	uint32_t stream_id;		/* CTF stream class (channel kind) */
	uint32_t reserved1;
	uint64_t stream_instance_id;	/* CTF stream instance (buffer id) */
	uint64_t region_size;		/* bytes of the whole region */
	uint64_t commit_offset;		/* offset of commit[0] */
	uint64_t data_offset;		/* offset of sub-buffer 0 */

	/* line 1: written by the writer only */
	uint64_t write_count __attribute__((aligned(64)));
	uint64_t lost;

	/* line 2: written by the reader only */
	uint64_t read_count __attribute__((aligned(64)));
	/*
	 * What the reader took of the open sub-buffer at partial_pos (a
	 * partial read), so that a reader attaching later (a new tracerd)
	 * does not take those records again. Stale once read_count moves.
	 */
	uint64_t partial_pos;
	uint64_t partial_len;		/* bytes, 0: none */
	uint64_t partial_records;
	/*
	 * The writer's `lost` as the packets the reader wrote out told it
	 * (their events_discarded): a reader taking over tells the losses
	 * since, those of a time when no reader ran. 0 in a ring made
	 * before it existed.
	 */
	uint64_t lost_told;
} __attribute__((aligned(64)));

/* Per-slot commit counters, one cache line each. */
struct tracer_rb_commit {
	uint64_t count;
	uint64_t records;
} __attribute__((aligned(64)));

/*
 * Sub-buffer header: the CTF packet header (magic .. stream_instance_id),
 * then the CTF packet context (tid .. events_discarded). Native byte
 * order, described by the metadata. The ring's own bookkeeping (reserved,
 * slot_records) lies between tid and timestamp_begin, in the gap that
 * timestamp_begin's declared 16-byte alignment skips (the context starts
 * at 16, so aligning it there moves nothing else): CTF readers never
 * see it (babeltrace2 shows every packet-context field with every event,
 * and warns about every packet-header field without a CTF meaning).
 *
 *   begin fields  written by the record that opens the sub-buffer
 *   end fields    written by whoever closes it (the record that crosses out
 *                 of it or fills it exactly, or a flush), before the final
 *                 commit that makes the sub-buffer readable.
 *
 * Layout 3 (TRACER_RB_VERSION 3, session format 3). Layout 2 had the same
 * fields in another order (struct tracer_rb_packet_v2), which tracectl
 * still reads.
 */
struct tracer_rb_packet {
	/* packet header */
	uint32_t magic;			/* begin: TRACER_CTF_MAGIC */
	uint32_t stream_id;		/* begin */
	uint64_t stream_instance_id;	/* begin */
	/* packet context */
	uint32_t tid;			/* begin: writer thread id */
	uint32_t unit;			/* begin: enum tracer_rb_unit (0 in
					   files); not in the metadata */
	uint64_t slot_records;		/* begin: commit[i].records at opening;
					   not in the metadata */
	uint64_t timestamp_begin;	/* begin: time of the first record */
	uint64_t timestamp_end;		/* end: time of closing, >= all records */
	uint64_t content_size;		/* end: bits of header + records */
	uint64_t packet_size;		/* begin: bits, always 8 * S */
	uint64_t packet_seq_num;	/* begin: position / S (wraps with it) */
	uint64_t events_discarded;	/* end: channel's `lost` when closed */
};

/* The packet header of layout 2 (session format 2): read, never written. */
struct tracer_rb_packet_v2 {
	uint32_t magic;
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	uint64_t events_discarded;
	uint64_t slot_records;
	uint32_t tid;
	uint32_t reserved;
};

/*
 * Record (CTF event) header
 * -------------------------
 * Compact, 8 bytes: one 64-bit word in native byte order. CTF packs bit
 * fields in declaration order from the least significant bit of a
 * little-endian word (from the most significant of a big-endian one):
 *
 *   63                  32 31      24 23          12 11           0
 *   +---------------------+----------+--------------+--------------+
 *   | time, low 32 bits   | lap      | size / 8     | id < 4095    |
 *   +---------------------+----------+--------------+--------------+
 *
 * Extended, 24 bytes, when the id is 4095 or more, the record longer than
 * 4095 * 8 bytes, or the time too far from the previous record's:
 *
 *   +---------------------------+---------------------------------+
 *   | size in bytes (uint32)    | 4095 (and 20 bits of 0)         |  word 0
 *   +---------------------------+---------------------------------+
 *   | lap (uint32, 0-255)       | id (uint32)                     |  word 1
 *   | time (uint64, all of it)                                    |  word 2
 *
 * lap: the low 8 bits of the record's position / (S * N), the lap of
 * the ring it was written in. A reader looking at a sub-buffer whose
 * writer died while reserving (salvage) tells a record of this lap from
 * the bytes an earlier lap left at the same place, which a compact time
 * alone could not: rebuilt from the time before it, any low 32 bits
 * look like a time in the next 4.29 s.
 *
 * The CTF metadata names only the id and the times: the size and lap
 * fields lie in the alignment gaps a CTF reader skips (the compact time is 32-bit
 * aligned, the extended id 64-bit aligned), so babeltrace2 reads the
 * header without a field it would warn about, and our own readers find
 * the size where the writer put it.
 *
 * A compact time is rebuilt from the time before it in the packet: the
 * previous record's, or the packet's timestamp_begin for the first one.
 * It is the first time at or after that one with those low 32 bits,
 *
 *   time = prev + ((low - prev) mod 2^32)
 *
 * which is what a CTF reader does with a clock field narrower than 64
 * bits. So a writer may make a record compact only when its time is less
 * than 2^32 ns (4.29 s) after the previous record's; rb_write.h says how
 * it knows without looking. LTTng-UST's compact header reaches 2^27 ns.
 */
#define TRACER_RB_COMPACT_SIZE	8u	/* a compact record header */
#define TRACER_RB_EXTENDED_SIZE	24u	/* an extended one */
#define TRACER_RB_ID_EXTENDED	4095u	/* id field of an extended header */
#define TRACER_RB_TIME_BITS	32	/* time bits of a compact header */
#define TRACER_RB_TIME_MASK	((1ULL << TRACER_RB_TIME_BITS) - 1)
#define TRACER_RB_COMPACT_MAX	(4095u * 8)	/* longest compact record */

/* The extended header as a struct. */
struct tracer_rb_event_ext {
	uint32_t tag;			/* tracer__rb_extended_tag() */
	uint32_t size;			/* header + payload + padding, bytes */
	uint32_t id;			/* event class id */
	uint32_t lap;			/* low 8 bits of the ring's lap */
	uint64_t timestamp;		/* in the packet's unit */
};

#define TRACER_RB_HEADER_SIZE	((uint32_t)sizeof(struct tracer_rb_header))
#define TRACER_RB_PACKET_SIZE	((uint32_t)sizeof(struct tracer_rb_packet))
#define TRACER_RB_ALIGN		8u

/*
 * base(p) above: the commit count that slot (p >> m) & (N - 1) holds when
 * the lap whose sub-buffer starts at position p begins (lap * S, modulo
 * 2^(64-k)). Compare commit counts with it under the mask 2^(64-k) - 1.
 */
static inline uint64_t tracer__rb_lap_base(uint64_t pos, uint32_t m,
					   uint32_t k)
{
	return (pos >> k) & ~((1ULL << m) - 1);
}

_Static_assert(sizeof(struct tracer_rb_header) == 192, "header is 3 lines");
_Static_assert(sizeof(struct tracer_rb_commit) == 64, "commit is 1 line");
_Static_assert(sizeof(struct tracer_rb_packet) == 80, "packet header size");
_Static_assert(__builtin_offsetof(struct tracer_rb_packet, timestamp_begin) ==
	       32, "timestamp_begin where its 16-byte alignment puts it");
_Static_assert(sizeof(struct tracer_rb_packet_v2) == 80,
	       "layout 2 packet header size");
_Static_assert(sizeof(struct tracer_rb_event_ext) == TRACER_RB_EXTENDED_SIZE,
	       "extended event header size");

#endif /* TRACER_RB_LAYOUT_H */
