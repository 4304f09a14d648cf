/*
 * rb.h - ring-buffer channel: memory backend, writer handle, reader.
 *
 * The shared-memory layout and the counter model are described in
 * rb_layout.h; the write fast path is in rb_write.h; the reader side in
 * rb_read.c; creating and attaching a region in rb_backend.c.
 *
 * Handles (struct tracer_rb_writer, struct tracer_rb_reader) live in the
 * private memory of their process. They cache the geometry validated once at
 * attach time, so neither side ever re-reads geometry from shared memory.
 *
 * All functions return 0 or a negative errno value.
 */
#ifndef TRACER_RB_H
#define TRACER_RB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "clock_history.h"
#include "compiler.h"
#include "rb_layout.h"
#include "rb_record.h"

/* Geometry of a channel, derived from its sub-buffer size and count. */
struct tracer_rb_geometry {
	uint64_t subbuf_size;		/* S = 2^m */
	uint64_t subbuf_count;		/* N = 2^k */
	uint32_t subbuf_order;		/* m */
	uint32_t count_order;		/* k */
	uint64_t commit_offset;
	uint64_t data_offset;
	uint64_t region_size;
	uint32_t max_payload;		/* largest payload a record can carry */
};

/* How to create a channel. */
struct tracer_rb_config {
	uint64_t subbuf_size;
	uint64_t subbuf_count;
	enum tracer_rb_mode mode;
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t start_count;		/* initial counters, multiple of S (tests) */
	bool zeroed;			/* region is all zero bytes (a new memfd):
					 * only non-zero fields are written, so
					 * pages that stay zero stay untouched */
};

/* Writer handle: one per thread and channel, private memory. */
struct tracer_rb_writer {
	struct tracer_rb_header *hdr;
	char *data;
	struct tracer_rb_commit *commit;
	uint64_t smask;			/* S - 1 */
	uint64_t cmask;			/* 2^(64-k) - 1 */
	uint64_t bufsize;		/* B = N * S */
	uint32_t subbuf_order;
	uint32_t count_order;
	uint32_t lap_shift;		/* m + k: position >> it is the lap */
	uint32_t max_payload;
	uint32_t mode;
	uint32_t stream_id;
	uint32_t tid;
	/* What its stamps count (enum tracer_rb_unit): TSC ticks read
	 * straight from the CPU, or ns by its clock cell. Changed only by
	 * tracer__rb_set_unit(). */
	uint32_t unit;
	uint64_t stream_instance_id;
	/*
	 * Called (when set) after the writer closed a sub-buffer, in the
	 * writer's context (possibly a signal handler): must be
	 * async-signal-safe and must not record.
	 */
	void (*on_close)(struct tracer_rb_writer *w);
	void *owner;			/* for on_close */
	/*
	 * The clock the writer stamps records with (clock.h): its thread's
	 * copy; tracer__clock_monotonic after attach.
	 */
	const struct tracer_clock_cell *clock;
	uint64_t last_ts;		/* no record is stamped earlier */
	/* The time of a committed record, no later than the last record
	 * reserved (0: none yet): how far a compact time may reach
	 * (rb_write.h). */
	uint64_t ref_ts;
	uint64_t bufmask;		/* B - 1: position to data offset */
	uint64_t slot_mask;		/* N - 1: sub-buffer to commit slot */
	/*
	 * Where the writing thread's rseq_cs field is (rseq.h), or 0: then
	 * tracer__rb_write_words() reserves by a restartable sequence rather
	 * than by compare-and-swap. Only the thread itself may set it (the
	 * answer of tracer__rseq_slot() is its own); 0 after attach.
	 */
	int64_t rseq_slot;
	uint64_t rseq_aborts;		/* sequences the kernel aborted */
};

/* Reservation context, on the writer's stack between reserve and commit. */
struct tracer_rb_ctx {
	void *payload;			/* where the caller writes its payload */
	uint64_t timestamp;		/* taken inside the reservation */
	uint64_t commit_pos;		/* first byte this record commits */
	uint32_t commit_len;		/* bytes to commit (packet header too) */
	uint32_t flags;			/* TRACER_RB_CTX_* */
};

#define TRACER_RB_CTX_CLOSE	1u	/* record ends exactly at a boundary */

/* Bytes of the record reserved in ctx, its header included (not the
 * packet header of a sub-buffer it opens). */
static inline uint32_t tracer__rb_ctx_size(const struct tracer_rb_ctx *ctx,
					   uint64_t smask)
{
	return ctx->commit_len - ((ctx->commit_pos & smask) == 0 ?
				  TRACER_RB_PACKET_SIZE : 0);
}

/* A sub-buffer taken by the reader (tracer__rb_get_subbuf()). */
struct tracer_rb_subbuf {
	const void *data;		/* inside the shared region: copy it */
	uint64_t size;			/* S */
	uint64_t pos;			/* its position (a write_count value) */
};

/* What the reader learned from one packet (tracer__rb_packet_parse()). */
struct tracer_rb_packet_info {
	uint64_t seq;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_bytes;
	uint64_t records;		/* records in this packet */
	uint64_t records_overwritten;	/* flight: records lost before it */
	uint64_t events_discarded;	/* cumulative, as written by the writer */
	uint64_t stream_instance_id;
	uint32_t tid;
	bool from_ticks;		/* converted from TSC ticks */
};

/* A walk through the records of a packet copy (tracer__rb_packet_next()):
 * start it at { 0 }. */
struct tracer_rb_cursor {
	uint64_t off;			/* the next record's; 0: the first */
	uint64_t clock;			/* the time before it */
};

struct tracer_rb_reader {
	const struct tracer_rb_header *hdr;
	uint64_t *read_count_shared;	/* where the position is published */
	const char *data;
	const struct tracer_rb_commit *commit;
	struct tracer_rb_geometry geo;
	uint64_t smask;
	uint64_t cmask;
	uint32_t mode;
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t read_count;		/* private copy: the truth */
	uint64_t packets_overwritten;	/* flight: packets skipped */
	uint64_t records_overwritten;	/* flight: records in them */
	uint64_t *slot_records;		/* per slot: records accounted for */
	/*
	 * Packets must carry stream_instance_id under this mask (default: all
	 * bits; tracerd checks only the buffer part, the owner part changes).
	 */
	uint64_t instance_mask;
	/* Open sub-buffer already read in part (tracer__rb_read_partial()). */
	uint64_t partial_pos;		/* its position */
	uint64_t partial_len;		/* bytes consumed, 0: none */
	uint64_t partial_records;	/* records consumed */
	char error[160];		/* last corruption report */
	/* Flight: records overwritten in every slot before the oldest packet
	 * kept, found when the reader skipped them; told by the next packet
	 * read (tracer_rb_packet_info.records_overwritten). */
	uint64_t skipped_records;
	/* Sub-buffers the caller copied out ahead (tracer__rb_stage()):
	 * stage_len bytes from ring position stage_pos; 0: none. */
	char *stage;
	uint64_t stage_pos;
	uint64_t stage_len;
	/* A private copy of tracerd's reader (a snapshot, a trigger's
	 * scan; read_count_shared points to its own word): it writes
	 * nothing into the shared header. */
	bool quiet;
	/* The lines that turn a packet in TSC ticks into ns as it is
	 * taken (clock_history.h); NULL: such a packet is refused. */
	struct tracer_clock_history *history;
	/* The end of the last packet taken of stream (owner)
	 * converted_instance: no time converted from ticks after it in
	 * that stream is earlier, nor one in ns once the stream had ticks
	 * (converted_ticks). */
	uint64_t converted_last;
	uint64_t converted_instance;
	bool converted_ticks;
};

/* Complete sub-buffers waiting at the read position (tracer__rb_ready()). */
struct tracer_rb_span {
	uint64_t pos;			/* ring position of the first */
	uint64_t offset;		/* its offset in the data area */
	uint64_t len;			/* bytes: a whole number of them */
};

/*
 * Compute the geometry for S = subbuf_size, N = subbuf_count.
 * On error *why (if not NULL) points to a static one-line explanation.
 * Returns 0, or -EINVAL (not a power of two, or too small to hold the
 * headers and one record, or too large).
 */
int tracer__rb_geometry(struct tracer_rb_geometry *geo, uint64_t subbuf_size,
			uint64_t subbuf_count, const char **why);

/*
 * Initialise a channel in region[0..size). The region must be 64-byte
 * aligned and at least geo.region_size bytes.
 * Returns 0, -EINVAL (bad geometry/mode/start_count/alignment; *why set),
 * -ENOSPC (region too small).
 */
int tracer__rb_init(void *region, uint64_t size,
		    const struct tracer_rb_config *cfg, const char **why);

/*
 * Attach a writer to an initialised region; tid is stamped in packets.
 * Returns 0, -EINVAL (bad magic or inconsistent header), -EPROTO (version),
 * -ENOSPC (region smaller than the header says).
 */
int tracer__rb_writer_attach(struct tracer_rb_writer *w, void *region,
			     uint64_t size, uint32_t tid, const char **why);

/* Out-of-line parts of the write path (rb_write.c); see rb_write.h. */
int tracer__rb_reserve_slow(struct tracer_rb_writer *w,
			    struct tracer_rb_ctx *ctx, uint32_t id,
			    uint32_t payload_size);
void tracer__rb_close_exact(struct tracer_rb_writer *w,
			    const struct tracer_rb_ctx *ctx);
void tracer__rb_write_words_slow(struct tracer_rb_writer *w, uint32_t id,
				 const void *src, size_t stride, uint32_t n);

/*
 * Reserve as tracer__rb_reserve() does, but stamp the record (and the
 * sub-buffer it opens) with the time `ts` instead of reading the clock: a
 * record made earlier and kept elsewhere, written now (libtracer's stash).
 * ts must not be older than the channel's last record of the same owner;
 * no handler may write into w meanwhile (the caller keeps them out).
 * Same returns as tracer__rb_reserve().
 */
int tracer__rb_reserve_at(struct tracer_rb_writer *w,
			  struct tracer_rb_ctx *ctx, uint32_t id,
			  uint32_t payload_size, uint64_t ts);

/*
 * Stamp w's records in `unit` (enum tracer_rb_unit) from now on: the open
 * sub-buffer, if any, is closed first (a packet has one unit), and the
 * channel's last stamps are forgotten. Called by the writer thread where
 * none of its records is being written, nor can be until it returns (not
 * in a handler that may have interrupted one; none of its handlers
 * records meanwhile).
 */
void tracer__rb_set_unit(struct tracer_rb_writer *w, uint32_t unit);

/*
 * Close the current sub-buffer so its records become readable (a switch).
 * Called by the writer thread or one of its signal handlers.
 * Returns 0 (closed, or nothing was open).
 */
int tracer__rb_flush(struct tracer_rb_writer *w);

/*
 * Bytes the writer has reserved that the reader has not taken yet: the
 * complete sub-buffers waiting for it and the open one. At most the ring's
 * size (a flight-mode writer runs ahead of a reader). Called by the writer
 * thread or one of its signal handlers; never fails.
 */
uint64_t tracer__rb_backlog(const struct tracer_rb_writer *w);

/*
 * Attach a reader. Allocates per-slot bookkeeping.
 * Returns 0, -EINVAL/-EPROTO/-ENOSPC as for the writer, -ENOMEM.
 */
int tracer__rb_reader_attach(struct tracer_rb_reader *r, void *region,
			     uint64_t size, const char **why);
/*
 * The same for a channel that tracer__rb_init() made and no writer has
 * used yet: nothing was accounted for before, so the commit array is not
 * read (in a zeroed region, its pages are not touched). Same returns.
 */
int tracer__rb_reader_attach_new(struct tracer_rb_reader *r, void *region,
				 uint64_t size, const char **why);
void tracer__rb_reader_detach(struct tracer_rb_reader *r);
/*
 * Copy the records out through view: the same channel region mapped a
 * second time, read-only (attach first). The header, commit counts and
 * read count stay where attach found them. A reader whose writable
 * mapping has never touched a page pays a page fault per fault-around
 * window to copy it; on some hypervisors (a guest under shadow paging)
 * that fault costs three to four times more in a writable shared mapping
 * than in a read-only one: 0.5-0.65 against 2.2 GB/s to copy a ring
 * another process wrote, measured on a 2-CPU VM, with no difference
 * once the pages are mapped.
 */
void tracer__rb_reader_view(struct tracer_rb_reader *r, const void *view);

/*
 * Take the oldest complete sub-buffer; the caller copies sb->data
 * (sb->size bytes) then calls tracer__rb_put_subbuf().
 * Returns 0, -EAGAIN (none complete yet), -EIO (counters inconsistent: the
 * region is corrupt; r->error says how).
 */
int tracer__rb_get_subbuf(struct tracer_rb_reader *r,
			  struct tracer_rb_subbuf *sb);

/*
 * Release the sub-buffer taken by tracer__rb_get_subbuf().
 * Returns 0 (the copy made in between is good), or -ESTALE (flight mode:
 * the writer overwrote it meanwhile; discard the copy, it was counted as
 * overwritten).
 */
int tracer__rb_put_subbuf(struct tracer_rb_reader *r,
			  struct tracer_rb_subbuf *sb);

/*
 * Check a private copy of the packet at position pos and account for its
 * records (flight-mode overwrite counts); a packet stamped in TSC ticks is
 * turned into nanoseconds in place first, through r->history. Never
 * trusts the copy, which must be 8-byte aligned.
 * Returns 0, -EBADMSG (corrupt packet, or in ticks with no history;
 * r->error names field and offset), or -EINVAL (copy not 8-byte aligned).
 */
int tracer__rb_packet_parse(struct tracer_rb_reader *r, const void *copy,
			    uint64_t pos, struct tracer_rb_packet_info *info);

/*
 * Iterate over the records of a packet checked by tracer__rb_packet_parse()
 * (its first content_bytes): *cur starts at { 0 }. Returns 1 with *rec
 * filled, 0 at the end (or at a record that cannot be one: the packet
 * was not checked).
 */
int tracer__rb_packet_next(const void *copy, uint64_t content_bytes,
			   struct tracer_rb_cursor *cur,
			   struct tracer_rb_record *rec);

/*
 * The complete sub-buffers at the read position, consecutive in the data
 * area (not across its end), at most max of them: a caller may copy them
 * out in one go (tracerd: one pread() of the pool's memfd) and hand the
 * copy to tracer__rb_stage(). Their commit counts are loaded with acquire
 * semantics: a copy made after this call holds their committed records.
 * Only looks; the read position does not move. Returns how many (0: none
 * complete, or the counters need tracer__rb_read()'s care: a wrapped
 * flight ring, a partial read in the first, nonsense).
 */
uint32_t tracer__rb_ready(const struct tracer_rb_reader *r, uint32_t max,
			  struct tracer_rb_span *span);
/*
 * The next tracer__rb_read() calls copy their sub-buffers from copy, the
 * bytes of span taken after tracer__rb_ready() returned it, instead of the
 * ring, while their positions fall in it (tracer__rb_read_ref() checks
 * them there). The copy must stay until
 * tracer__rb_unstage(). The checks stay the same: a flight ring's writer
 * that passed a sub-buffer before the copy was made is found as before
 * (-ESTALE), the records are parsed from the copy.
 */
void tracer__rb_stage(struct tracer_rb_reader *r, void *copy,
		      const struct tracer_rb_span *span);
void tracer__rb_unstage(struct tracer_rb_reader *r);

/*
 * Convenience: get, copy into dst (at least S bytes, 8-byte aligned), put,
 * parse.
 * Returns 0, -EAGAIN, -ESTALE (overwritten while copying: call again),
 * -EBADMSG (packet skipped as corrupt), -EIO, -ENOBUFS (dst too small),
 * -EINVAL (dst misaligned).
 */
int tracer__rb_read(struct tracer_rb_reader *r, void *dst, uint64_t dst_size,
		    struct tracer_rb_packet_info *info);

/*
 * As tracer__rb_read(), but a sub-buffer that falls in the staged copy
 * (tracer__rb_stage()) is checked where it is instead of being copied to
 * dst: *packet points to the packet there, or to dst for the others. The
 * staged copy is the caller's, so the packet there is as private as one in
 * dst and may be changed (its header renumbered); it lasts until the copy
 * is reused. Same returns.
 */
int tracer__rb_read_ref(struct tracer_rb_reader *r, void *dst,
			uint64_t dst_size, struct tracer_rb_packet_info *info,
			void **packet);

/*
 * Read the committed records of the open sub-buffer that no earlier call
 * returned, as a packet in dst (at least S bytes, 8-byte aligned), without
 * the writer's help: when the writer later closes that sub-buffer,
 * tracer__rb_read() returns only the records after them. Used to stop a
 * session and to salvage the buffers of a process that is gone.
 * Returns 0, -ENODATA (nothing new), -EAGAIN (complete sub-buffers come
 * first: call tracer__rb_read()), -EBUSY (a record is being written: retry
 * later), -ESTALE (flight mode: overwritten while copying), -EBADMSG,
 * -EIO, -ENOBUFS, -EINVAL as tracer__rb_read().
 */
int tracer__rb_read_partial(struct tracer_rb_reader *r, void *dst,
			    uint64_t dst_size,
			    struct tracer_rb_packet_info *info);

/*
 * Records committed in a channel since it was created, over all its
 * writers: the sum of the per-slot record counters (n slots). Only a
 * count for reports: it may be read while writers commit.
 */
static inline uint64_t tracer__rb_records_committed(
	const struct tracer_rb_commit *commit, uint64_t n)
{
	uint64_t sum = 0, i;

	for (i = 0; i < n; i++)
		sum += __atomic_load_n(&commit[i].records, __ATOMIC_RELAXED);
	return sum;
}

/* Records discarded by the writer so far (as it reports them). */
uint64_t tracer__rb_lost(const struct tracer_rb_reader *r);

/*
 * Flight: records the writer overwrote that this reader had not read nor
 * told yet, as a reader moving to the oldest sub-buffer now would find
 * them (and the next packet read would tell them); 0 in discard mode.
 * Reads the ring, changes nothing: for reports, while the writer writes.
 */
uint64_t tracer__rb_overwritten(const struct tracer_rb_reader *r);

/* What tracer__rb_salvage() could not keep of a dead writer's sub-buffer. */
struct tracer_rb_salvage {
	uint32_t torn;			/* records dropped: being written */
	uint64_t torn_bytes;		/* their bytes */
	uint64_t torn_offset;		/* offset of the first, in the packet */
	uint64_t unreadable;		/* bytes after a record that made no
					   sense (r->error says where) */
	uint64_t unreadable_offset;
	uint64_t lost;			/* committed records not recovered */
};

/*
 * Could rec be a record the writer wrote? Its header is sane and within
 * the copy; the check looks at the id and the payload.
 */
typedef bool (*tracer_rb_record_check)(void *arg,
				       const struct tracer_rb_record *rec);

/*
 * The writer of r is gone for good (its thread or process died): copy the
 * incomplete sub-buffer at the read position into dst, keep the records
 * that were committed and drop those being written (rb_salvage.c), then
 * repair the channel as if the writer had closed the sub-buffer, so that
 * a later owner writes on a clean one. `now` (CLOCK_MONOTONIC ns) bounds
 * record times.
 * Returns 0 (info describes the packet in dst; info->content_bytes is 0
 * when nothing was kept; s says what was dropped), -ENODATA (nothing left
 * to read), -EAGAIN (the sub-buffer is complete or was overwritten: read
 * it with tracer__rb_read()), -ENOBUFS (dst smaller than a sub-buffer or
 * misaligned), -EBADMSG (the sub-buffer made no sense and was skipped; the
 * reader moved past it; r->error says why), -EIO (counters impossible;
 * r->error says why).
 */
int tracer__rb_salvage(struct tracer_rb_reader *r, void *dst,
		       uint64_t dst_size, tracer_rb_record_check check,
		       void *arg, uint64_t now,
		       struct tracer_rb_packet_info *info,
		       struct tracer_rb_salvage *s);

#include "rb_write.h"

#endif /* TRACER_RB_H */
