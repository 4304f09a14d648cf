/*
 * process.c - one traced process, as tracerd sees it.
 *
 * tracerd creates the process's shared memory (control page, pool
 * segments), attaches a reader to every channel of every buffer, and
 * drains complete sub-buffers into channel files: on its scan timer, and
 * when a writer that closed a sub-buffer finds the wake-up armed and
 * writes the process's eventfd (pool_layout.h).
 *
 * The process may have written anything into the pool: readers range-check
 * counters and parse packets from a private copy (rb_read.c); descriptor
 * fields are only counted or copied, never used as offsets; each packet
 * must carry its own buffer's index in stream_instance_id.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tracerd.h"
#include "pool_room.h"
#include "format.h"
#include "pattern.h"

#define TRACERD_INSTANCE_MASK	0xffffffff00000000ULL
#define MAX_CALLSITES	65536
#define MAX_STRING	4096
#define DRAIN_BUDGET	32	/* packets per channel per pass, then the
				   loop serves others (see yield_drain) */
#define SNAPSHOT_BUDGET	(1 << 20)	/* packets per channel, at most */
#define MAX_ARGS	8	/* TRACER_MAX_ARGS */
#define ROOM_AGAIN	(4 * TRACERD_BATCH_BYTES)	/* free bytes that end a
						   write-error episode */
#define DIR_RETRY_MS	1000	/* a process directory that could not be
				   written is tried again this often */
#define RENAME_EVENT	"tracer:thread_name"	/* tid %d name %s */

static const char *const channel_name[TRACER_POOL_CHANNELS] = {
	"default", "vital",
};

static char *dup_bounded(const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s ? s : "", n);
		d[n] = '\0';
	}
	return d;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ------------------------------------------------------------------ */
/* Channel files                                                       */

static void close_stream(struct tracerd_stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	st->instance = 0;
}

void tracerd_process_close_files(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	tracerd_files_forget(p);
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			close_stream(&p->buf[i].st[c]);
	tracerd_files_drop_ahead(p);
	if (p->meta && fclose(p->meta))
		tracerd_log("pid %d: cannot write process.meta: %s",
			    (int)p->pid, strerror(errno));
	p->meta = NULL;
	if (p->ctf && fclose(p->ctf))
		tracerd_log("pid %d: cannot write the CTF metadata: %s",
			    (int)p->pid, strerror(errno));
	p->ctf = NULL;
	free(p->dir);
	p->dir = NULL;
}

/* CHANNEL-TID, or CHANNEL-TID.N when the kernel reused the thread id.
 * Returns the fd or a negative errno. */
static int create_file(const char *dir, int c, uint32_t tid)
{
	char path[4096];
	int n, fd = -EEXIST;

	for (n = 0; n < 1000 && fd == -EEXIST; n++) {
		if (n == 0)
			snprintf(path, sizeof(path), "%s/%s-%" PRIu32, dir,
				 channel_name[c], tid);
		else
			snprintf(path, sizeof(path), "%s/%s-%" PRIu32 ".%d",
				 dir, channel_name[c], tid, n);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

/*
 * Start the file of the thread whose packet info is: pair is the buffer's
 * two streams (default, vital), pair[c] the one to use. Returns 0 or a
 * negative errno.
 */
static int open_stream(struct tracerd_process *p,
		       const struct tracerd_sink *sink,
		       struct tracerd_stream *pair, struct tracerd_buffer *b,
		       int c, const struct tracer_rb_packet_info *info)
{
	struct tracerd_stream *st = &pair[c];
	char name[17];

	close_stream(st);
	st->fd = tracerd_files_take_ahead(p, sink->dir, c, info->tid, false);
	if (st->fd < 0)
		st->fd = create_file(sink->dir, c, info->tid);
	if (st->fd < 0) {
		int err = st->fd;

		st->fd = -1;
		return err;
	}
	st->instance = info->stream_instance_id;
	st->tid = info->tid;
	st->dir = sink->dir;
	st->size = 0;
	st->seq = 0;
	st->discarded = 0;
	st->last_end = info->timestamp_begin;
	if (pair[!c].instance != st->instance) {
		memcpy(name, b->desc->thread_name, 16);
		name[16] = '\0';
		tracerd_note_thread(sink->meta, info->tid, name, 0);
	}
	return 0;
}

static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Write errors                                                        */

/*
 * A write or a file creation in dir failed with err (negative errno): the
 * output is full (ENOSPC, EDQUOT) or failing (EIO...). The first failure
 * of an episode is logged; until it ends the records that cannot be
 * written are counted as lost (count_unwritten) and every packet is
 * still tried.
 */
void tracerd_write_failed(struct tracerd *d, const char *dir, int err)
{
	if (d->write_error)
		return;
	d->write_error = -err;
	d->unwritten = 0;
	tracerd_log("cannot write to '%s': %s; events are counted as lost "
		    "until writing succeeds again", dir, strerror(-err));
}

/*
 * A write to fd in dir succeeded. The episode ends there if the file
 * system has room again: right after a failed write is cut back, a small
 * one may fit, and the next fail.
 */
static void write_done(struct tracerd *d, const char *dir, int fd)
{
	struct statvfs sv;

	if (!d->write_error || (fstatvfs(fd, &sv) == 0 &&
				(uint64_t)sv.f_bavail * sv.f_frsize < ROOM_AGAIN))
		return;
	tracerd_log("writing to '%s' again; %" PRIu64 " events could not be "
		    "written (counted as lost)", dir, d->unwritten);
	d->write_error = 0;
}

/* n records of instance (one owner of st) not written: lost. */
static void count_unwritten(struct tracerd_process *p,
			    struct tracerd_stream *st, uint64_t instance,
			    uint64_t n)
{
	p->d->unwritten = sat_add(p->d->unwritten, n);
	if (!st->counted)
		return;		/* a snapshot: the buffers still hold them */
	if (st->unwritten_instance != instance) {
		st->unwritten_instance = instance;
		st->unwritten = 0;
	}
	st->unwritten = sat_add(st->unwritten, n);
	p->unwritten = sat_add(p->unwritten, n);
}

/*
 * Append n bytes (whole packets) to st's file. On error the file is cut
 * back to its last whole packet, so that readers never see half of one.
 * Returns 0 or a negative errno.
 */
static int append(struct tracerd_process *p, struct tracerd_stream *st,
		  const void *buf, size_t n)
{
	int ret = write_all(st->fd, buf, n);

	if (!ret) {
		st->size += n;
		write_done(p->d, st->dir, st->fd);
		return 0;
	}
	if (ftruncate(st->fd, (off_t)st->size) < 0 ||
	    lseek(st->fd, (off_t)st->size, SEEK_SET) < 0)
		tracerd_log("pid %d: cannot cut a partly written packet off "
			    "a file in '%s': %s", (int)p->pid, st->dir,
			    strerror(errno));
	tracerd_write_failed(p->d, st->dir, ret);
	return ret;
}

/*
 * The batch could not be written (its file was cut back): its records are
 * lost. Its packets' numbers are given again, and the losses they told go
 * with the next packet written, with these records.
 */
static void batch_failed(struct tracerd_process *p, struct tracerd_stream *st)
{
	uint64_t told = st->discarded - p->batch_discarded;

	st->seq = p->batch_seq;
	st->discarded = p->batch_discarded;
	st->pending = sat_add(st->pending, sat_add(told, p->batch_records));
	count_unwritten(p, st, st->instance, p->batch_records);
	p->bytes_written -= p->batch_len;
	p->packets_written -= p->batch_packets;
}

/*
 * Packets are gathered in p->scratch, one stream at a time, and written
 * with one write(2) per batch (TRACERD_BATCH_BYTES): large, block-friendly
 * writes.
 * The batch is empty outside drain_channel() and flush_channel().
 */
static void flush_batch(struct tracerd_process *p)
{
	struct tracerd_stream *st = p->batch_stream;

	if (p->batch_len && st && st->fd >= 0 &&
	    append(p, st, p->scratch, p->batch_len))
		batch_failed(p, st);
	p->batch_len = 0;
	p->batch_stream = NULL;
}

/* Where the next packet goes: room for one sub-buffer of `need` bytes. */
static void *batch_room(struct tracerd_process *p, uint64_t need)
{
	if (p->scratch_size - p->batch_len < need)
		flush_batch(p);
	return (char *)p->scratch + p->batch_len;
}

/* The packet at the end of the batch goes to another stream: move it. */
static char *restart_batch(struct tracerd_process *p, char *pk,
			   uint64_t bytes)
{
	flush_batch(p);
	memmove(p->scratch, pk, bytes);
	return p->scratch;
}

/*
 * Records channel st lost since its last packet, as this packet tells.
 * Returned: those overwritten before we could read them (flight mode),
 * which came before its records; *after gets those dropped by the writer
 * (its cumulative count went up since we last looked), which came after
 * its records: the writer drops a record that does not fit in the open
 * sub-buffer when the next one is not free, and the count is taken when
 * the sub-buffer closes. A count that went backwards (corrupt shared
 * memory) counts nothing.
 */
static uint64_t packet_losses(struct tracerd_stream *st,
			      const struct tracer_rb_packet_info *info,
			      uint64_t *after)
{
	*after = 0;
	if (info->events_discarded > st->lost_seen) {
		*after = info->events_discarded - st->lost_seen;
		st->lost_seen = info->events_discarded;
	}
	return info->records_overwritten <= INT64_MAX ?
	       info->records_overwritten : 0;
}

/*
 * Write a packet without records to st's file (channel c), ending at ts:
 * the first packet of a file whose first records come after losses (its
 * events_discarded is 0, so that readers count the losses with the next
 * one), or the last one, telling losses after the last records. Returns 0
 * or a negative errno (nothing written).
 */
static int write_marker(struct tracerd_process *p, struct tracerd_stream *st,
			int c, uint64_t ts)
{
	struct tracer_rb_packet h = {
		.magic = TRACER_CTF_MAGIC, .stream_id = (uint32_t)c,
		.stream_instance_id = st->instance,
		.timestamp_begin = ts, .timestamp_end = ts,
		.content_size = TRACER_RB_PACKET_SIZE * 8,
		.packet_size = TRACER_RB_PACKET_SIZE * 8,
		.packet_seq_num = st->seq++,
		.events_discarded = st->discarded, .tid = st->tid,
	};
	int ret = append(p, st, &h, sizeof(h));

	if (ret) {
		st->seq--;
		return ret;
	}
	st->last_end = ts;
	p->bytes_written += sizeof(h);
	p->packets_written++;
	return 0;
}

/* A marker telling n more losses; returns 0 or a negative errno. */
static int write_marker_telling(struct tracerd_process *p,
				struct tracerd_stream *st, int c, uint64_t n)
{
	uint64_t before = st->discarded;
	int ret;

	st->discarded = sat_add(st->discarded, n);
	ret = write_marker(p, st, c, st->last_end);
	if (ret)
		st->discarded = before;
	return ret;
}

/*
 * Losses of channel c after the last packet of st's file (lost: the
 * writer's count now), told by a packet without records before the file
 * is left: a writer that dropped records and wrote nothing since.
 */
static void write_losses(struct tracerd_process *p, struct tracerd_stream *st,
			 int c, uint64_t lost)
{
	if (st->fd < 0)
		return;
	if (lost > st->lost_seen) {
		st->pending = sat_add(st->pending, lost - st->lost_seen);
		st->lost_seen = lost;
	}
	if (!st->pending)
		return;
	flush_batch(p);
	if (write_marker_telling(p, st, c, st->pending))
		return;		/* still pending: the next file tells them */
	st->pending = 0;
}

/* The header of packet h as its file numbers it (doc/session-files.md). */
static void stamp_packet(struct tracerd_stream *st, struct tracer_rb_packet *h,
			 uint64_t content_bytes)
{
	st->discarded = sat_add(st->discarded, st->pending);
	st->pending = 0;
	/* In the file a packet is as long as its content. */
	h->packet_size = content_bytes * 8;
	h->packet_seq_num = st->seq++;
	h->events_discarded = st->discarded;
	st->last_end = h->timestamp_end;
}

/*
 * Before the packet of info goes to st: a new file if it is another
 * owner's, and a first packet without records if losses come before its
 * records (readers count no losses in a file's first packet: they are told
 * in the second one). Returns 0 or a negative errno (the packet cannot be
 * written).
 */
static int ready_file(struct tracerd_process *p, const struct tracerd_sink *sink,
		      struct tracerd_stream *pair, struct tracerd_buffer *b,
		      int c, const struct tracer_rb_packet_info *info)
{
	struct tracerd_stream *st = &pair[c];
	int ret = 0;

	if (st->fd < 0 || st->instance != info->stream_instance_id) {
		/* The owner before: its file tells the losses after its last
		 * packet (write_losses() leaves them pending if it cannot). */
		if (st->fd >= 0 && st->pending)
			write_losses(p, st, c, st->lost_seen);
		ret = open_stream(p, sink, pair, b, c, info);
		if (ret)
			tracerd_write_failed(p->d, sink->dir, ret);
	}
	if (!ret && st->seq == 0 && st->pending)
		ret = write_marker(p, st, c, info->timestamp_begin);
	return ret;
}

/* The packet of info could not be written: its records are lost. */
static void packet_failed(struct tracerd_process *p, struct tracerd_stream *st,
			  const struct tracer_rb_packet_info *info)
{
	st->pending = sat_add(st->pending, info->records);
	count_unwritten(p, st, info->stream_instance_id, info->records);
}

/*
 * A packet of a process in a session whose directory could not be written
 * (output full): its records are lost; the first file of the channel
 * tells these losses, if the directory can be made later.
 */
static void no_directory(struct tracerd_process *p, struct tracerd_stream *st,
			 const struct tracer_rb_packet_info *info, uint64_t lost)
{
	st->pending = sat_add(st->pending, sat_add(lost, info->records));
	count_unwritten(p, st, info->stream_instance_id, info->records);
}

/* A packet starts the batch: what to go back to if it cannot be written. */
static void begin_batch(struct tracerd_process *p, struct tracerd_stream *st)
{
	p->batch_seq = st->seq;
	p->batch_discarded = st->discarded;
	p->batch_records = 0;
	p->batch_packets = 0;
}

/*
 * The renames a vital packet tells (tracer:thread_name, libtracer's
 * wrappers of pthread_setname_np() and prctl()): one `thread` line each in
 * the sink's process.meta, with the time of the rename. The packet was
 * checked by the reader; the payload is decoded with bounds.
 */
static void note_renames(const struct tracerd_process *p,
			 const struct tracerd_sink *sink, const void *pk,
			 const struct tracer_rb_packet_info *info)
{
	struct tracer_rb_record rec;
	struct tracer_value tid, name;
	uint64_t off = 0;
	size_t at;

	if (!p->rename_id || !sink->meta)
		return;
	while (tracer__rb_packet_next(pk, info->content_bytes, &off, &rec)) {
		at = 0;
		if (rec.id != p->rename_id ||
		    tracer__payload_next('i', rec.payload, rec.payload_size,
					 &at, &tid) ||
		    tracer__payload_next('s', rec.payload, rec.payload_size,
					 &at, &name) ||
		    tid.i <= 0 || tid.i > INT32_MAX)
			continue;
		tracerd_note_thread(sink->meta, (uint32_t)tid.i, name.s,
				    rec.timestamp ? rec.timestamp : 1);
	}
}

/* A checked packet at the end of the batch: append it to its file. */
static void emit_to(struct tracerd_process *p, const struct tracerd_sink *sink,
		    struct tracerd_stream *pair, struct tracerd_buffer *b,
		    int c, const struct tracer_rb_packet_info *info)
{
	char *pk = (char *)p->scratch + p->batch_len;
	struct tracerd_stream *st = &pair[c];
	bool same = st->fd >= 0 && st->instance == info->stream_instance_id;
	uint64_t after, before = packet_losses(st, info, &after);

	if (!sink->dir) {
		p->dropped_packets++;
		if (p->in_session)	/* its directory could not be made */
			no_directory(p, st, info, sat_add(before, after));
		return;
	}
	st->pending = sat_add(st->pending, before);
	if (info->records == 0 && !(same && st->pending)) {
		st->pending = sat_add(st->pending, after);
		return;		/* nothing to tell yet */
	}
	if (p->batch_stream != st || !same)
		pk = restart_batch(p, pk, info->content_bytes);
	if ((!same || st->seq == 0) && ready_file(p, sink, pair, b, c, info)) {
		packet_failed(p, st, info);
		st->pending = sat_add(st->pending, after);
		return;
	}
	if (p->batch_len == 0)
		begin_batch(p, st);
	stamp_packet(st, (struct tracer_rb_packet *)(void *)pk,
		     info->content_bytes);
	/* Told by the next packet, or a marker after this one. */
	st->pending = sat_add(st->pending, after);
	if (c == TRACER_CHANNEL_VITAL)
		note_renames(p, sink, pk, info);
	p->batch_stream = st;
	p->batch_len += info->content_bytes;
	p->batch_records += info->records;
	p->batch_packets++;
	p->bytes_written += info->content_bytes;
	p->packets_written++;
}

/* The session's files. */
static void emit_packet(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, const struct tracer_rb_packet_info *info)
{
	struct tracerd_sink sink = { .dir = p->dir, .meta = p->meta };

	emit_to(p, &sink, b->st, b, c, info);
}

/* Publish what we told, for a reader after us (the reader's line). */
static void tell_lost_told(struct tracer_rb_reader *r, uint64_t told)
{
	struct tracer_rb_header *h = (struct tracer_rb_header *)(uintptr_t)
				     r->hdr;

	if (TRACER_READ_ONCE(h->lost_told) != told)
		TRACER_WRITE_ONCE(h->lost_told, told);
}

/* ------------------------------------------------------------------ */
/* Draining                                                            */

static void channel_error(struct tracerd_process *p, struct tracerd_buffer *b,
			  int c, int err)
{
	tracerd_log("pid %d buffer %u %s channel: %s%s", (int)p->pid,
		    (unsigned)(b - p->buf), channel_name[c], b->rd[c].error,
		    err == -EIO ? " (no longer read)" : " (packet skipped)");
	if (err == -EIO)
		b->broken[c] = true;
}

/* Returns true when the budget ran out with packets left. */
static bool drain_channel(struct tracerd_process *p, struct tracerd_buffer *b,
			  int c)
{
	struct tracer_rb_packet_info info;
	int n, ret = 0;

	for (n = 0; n < DRAIN_BUDGET && !b->broken[c]; n++) {
		void *dst = batch_room(p, b->rd[c].geo.subbuf_size);

		ret = tracer__rb_read(&b->rd[c], dst, p->scratch_size -
				      p->batch_len, &info);
		if (ret == 0) {
			emit_packet(p, b, c, &info);
			tell_lost_told(&b->rd[c], b->st[c].lost_seen);
		} else if (ret == -EAGAIN)
			break;
		else if (ret == -EBADMSG || ret == -EIO)
			channel_error(p, b, c, ret);
		/* A packet may take long (a file to create): a thread that
		 * wants a larger pool is served before the next one (by
		 * drain(): growing moves p->buf, and b with it). */
		if (TRACER_READ_ONCE(tracerd_pool_line(p)->want_grow))
			break;
	}
	flush_batch(p);
	return n == DRAIN_BUDGET;
}


/* One pass over the buffers. */
static bool drain(struct tracerd_process *p)
{
	bool more = false;
	uint32_t i;
	int c;

	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			more |= drain_channel(p, &p->buf[i], c);
			if (TRACER_READ_ONCE(tracerd_pool_line(p)->want_grow)) {
				tracerd_pool_maybe_grow(p);
				more = true;
			}
		}
	return more;
}

/* ------------------------------------------------------------------ */
/* For salvage.c                                                       */

const char *tracerd_channel_name(int c)
{
	return c >= 0 && c < TRACER_POOL_CHANNELS ? channel_name[c] : "?";
}

void tracerd_drain_all(struct tracerd_process *p, struct tracerd_buffer *b,
		       int c)
{
	while (drain_channel(p, b, c))
		;
}

void *tracerd_batch_room(struct tracerd_process *p, uint64_t need)
{
	return batch_room(p, need);
}

uint64_t tracerd_batch_free(const struct tracerd_process *p)
{
	return p->scratch_size - p->batch_len;
}

void tracerd_emit_batch(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, const struct tracer_rb_packet_info *info)
{
	emit_packet(p, b, c, info);
	flush_batch(p);
}

void tracerd_emit_copy(struct tracerd_process *p, struct tracerd_buffer *b,
		       int c, const void *packet,
		       const struct tracer_rb_packet_info *info)
{
	memcpy(batch_room(p, info->content_bytes), packet,
	       info->content_bytes);
	tracerd_emit_batch(p, b, c, info);
}

void tracerd_flush_channel_losses(struct tracerd_process *p,
				  struct tracerd_buffer *b, int c)
{
	write_losses(p, &b->st[c], c, tracer__rb_lost(&b->rd[c]));
}

void tracerd_write_end(struct tracerd_process *p, const void *packet,
		       uint64_t len)
{
	int fd, ret;

	if (!p->dir)
		return;
	fd = tracerd_files_take_ahead(p, p->dir, TRACER_CHANNEL_VITAL,
				      (uint32_t)p->pid, true);
	if (fd < 0)
		fd = create_file(p->dir, TRACER_CHANNEL_VITAL,
				 (uint32_t)p->pid);
	if (fd < 0)
		return;
	ret = write_all(fd, packet, len);
	if (ret)
		tracerd_log("pid %d: cannot write its end: %s", (int)p->pid,
			    strerror(-ret));
	close(fd);
	p->bytes_written += len;
	p->packets_written++;
}

/*
 * Packets are left: come back through the loop (our own eventfd), so that
 * requests and other processes are served in between, not after a writer
 * that never stops.
 */
static void yield_drain(struct tracerd_process *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0)
		(void)0;	/* the scan timer comes back anyway */
}

/* The committed part of the open sub-buffer. Returns 1 if busy. */
static unsigned flush_channel(struct tracerd_process *p,
			      struct tracerd_buffer *b, int c)
{
	struct tracer_rb_packet_info info;
	int tries, ret;

	for (tries = 0; tries < 8 && !b->broken[c]; tries++) {
		int rounds;

		for (rounds = 0; rounds < 128 && drain_channel(p, b, c);
		     rounds++)
			;
		ret = tracer__rb_read_partial(&b->rd[c], p->scratch,
					      p->scratch_size, &info);
		if (ret == 0) {
			emit_packet(p, b, c, &info);
			flush_batch(p);
		}
		else if (ret == -ENODATA)
			break;
		else if (ret == -EBUSY)
			return 1;
		else if (ret == -EBADMSG || ret == -EIO)
			channel_error(p, b, c, ret);
	}
	write_losses(p, &b->st[c], c, tracer__rb_lost(&b->rd[c]));
	return 0;
}

unsigned tracerd_process_flush(struct tracerd_process *p)
{
	unsigned busy = 0;
	uint32_t i;
	int c;

	if (p->files_job)
		return 1;	/* nowhere to write yet */
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			busy += flush_channel(p, &p->buf[i], c);
	return busy;
}

/*
 * Close the files of buffers back in the pool whose last owner is all
 * written out (nothing between the read and write counts): open files then
 * track the threads alive, not every buffer the pool ever had.
 */
static void close_idle_streams(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->nbuf; i++) {
		struct tracerd_buffer *b = &p->buf[i];
		bool idle = TRACER_BUF_STATE(__atomic_load_n(&b->desc->state,
					__ATOMIC_ACQUIRE)) != TRACER_BUF_IN_USE;

		for (c = 0; c < TRACER_POOL_CHANNELS && idle; c++)
			idle = b->st[c].fd < 0 ||
			       TRACER_READ_ONCE(b->rd[c].hdr->write_count) ==
			       b->rd[c].read_count;
		for (c = 0; c < TRACER_POOL_CHANNELS && idle; c++) {
			write_losses(p, &b->st[c], c,
				     tracer__rb_lost(&b->rd[c]));
			close_stream(&b->st[c]);
		}
	}
}

/* A flight-recorder session keeps everything in the buffers. */
static bool flight_recording(const struct tracerd *d)
{
	return d->session_id && !d->stopping &&
	       d->sess.mode == TRACER_MODE_FLIGHT;
}

/*
 * A process of the session whose directory could not be written (output
 * full): try again now and then; tracerd_session_add_process() starts its
 * files afresh.
 */
static void retry_directory(struct tracerd_process *p)
{
	uint64_t now;

	if (!p->in_session || p->dir || !p->d->session_id || p->d->stopping)
		return;
	now = tracerd_now_ms();
	if (now < p->dir_retry_ms)
		return;
	p->dir_retry_ms = now + DIR_RETRY_MS;
	tracerd_session_add_process(p);
}

void tracerd_process_scan(struct tracerd_process *p)
{
	bool more;

	if (p->adopting || p->recovering)
		return;		/* no pool yet, or kept for the next session */
	/*
	 * Call sites come before their events on the socket: read it first,
	 * so that no packet reaches a file before the metadata describes its
	 * events (a tracerd killed in between leaves a readable trace).
	 */
	if (p->client)
		tracerd_client_read_all(p->client);
	retry_directory(p);
	/* Growth first: a drain may take long (files to create), and the
	 * threads need room meanwhile. */
	tracerd_pool_maybe_grow(p);
	if (flight_recording(p->d) || p->files_job)
		return;		/* files_job: drained once its files are in */
	more = drain(p);

	close_idle_streams(p);
	tracerd_pool_maybe_grow(p);
	/* Arm the wake-up, then look again: no close goes unnoticed. */
	__atomic_store_n(&tracerd_pool_line(p)->wake_armed, 1, __ATOMIC_SEQ_CST);
	more |= drain(p);
	if (more)
		yield_drain(p);
	if (p->meta)
		fflush(p->meta);
}

static void on_wake(uv_poll_t *h, int status, int events)
{
	struct tracerd_process *p = h->data;
	uint64_t v;

	(void)events;
	if (status == 0 && read(p->wake_fd, &v, sizeof(v)) < 0)
		(void)0;
	tracerd_process_scan(p);
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */

static int make_control(struct tracerd_process *p)
{
	void *map;
	int fd = tracerd_make_memfd("tracer-control", TRACER_CONTROL_SIZE, &map);

	if (fd < 0)
		return fd;
	p->control = map;
	p->control->version = TRACER_POOL_VERSION;
	p->control->size = sizeof(struct tracer_control);
	p->control->tracerd_pid = (uint32_t)getpid();
	__atomic_store_n(&p->control->magic, TRACER_CONTROL_MAGIC,
			 __ATOMIC_RELEASE);
#ifdef F_SEAL_FUTURE_WRITE
	/* From now on the process can only map it read-only. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
#endif
	return fd;
}

static int copy_identity(struct tracerd_process *p, const Tracer__Register *r)
{
	size_t i, n = r->n_argv < 256 ? r->n_argv : 256;

	p->ppid = (pid_t)r->ppid;
	p->name = dup_bounded(r->name, 64);
	p->argv = calloc(n + 1, sizeof(char *));
	if (!p->name || !p->argv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		p->argv[i] = dup_bounded(r->argv[i], MAX_STRING);
		if (!p->argv[i])
			return -ENOMEM;
		p->argc++;
	}
	p->start_time_ns = r->start_time_ns;
	p->clock_offset_ns = r->start_time_ns - r->monotonic_ns;
	p->signal = r->signal;
	return 0;
}

static void close_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* A name only the process learns (over its socket), for resume. */
static uint64_t new_token(void)
{
	uint64_t t = 0;

	while (t == 0)
		if (getrandom(&t, sizeof(t), 0) != (ssize_t)sizeof(t))
			t = (uint64_t)tracerd_now_ms() * 0x9e3779b97f4a7c15ULL;
	return t;
}

static int send_registered(struct tracerd_process *p, int ctl_fd, int seg_fd)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Registered r = TRACER__REGISTERED__INIT;
	Tracer__Filter f = TRACER__FILTER__INIT;
	int fds[3] = { ctl_fd, dup(p->wake_fd), seg_fd };
	int n = seg_fd < 0 ? 2 : 3;	/* adopted: no new segment */

	if (fds[1] < 0) {
		close(ctl_fd);
		if (seg_fd >= 0)
			close(seg_fd);
		return -errno;
	}
	r.control_size = TRACER_CONTROL_SIZE;
	r.segment_size = seg_fd < 0 ? 0 : p->seg[0].size;
	p->filter = strdup(tracerd_session_filter_text(p->d));
	if (!p->filter) {
		close_fds(fds, n);
		return -ENOMEM;
	}
	f.generation = p->filter_sent = 1;
	f.patterns = p->filter;
	r.filter = &f;
	r.resume_token = p->resume_token = new_token();
	m.body_case = TRACER__MESSAGE__BODY_REGISTERED;
	m.registered = &r;
	return tracerd_send(p->client, &m, fds, n);
}

int tracerd_process_make_pool(struct tracerd_process *p, int *ctl_fd,
			      int *seg_fd)
{
	*seg_fd = -1;
	*ctl_fd = make_control(p);
	if (*ctl_fd < 0)
		return *ctl_fd;
	*seg_fd = tracerd_pool_create(p);
	return *seg_fd < 0 ? *seg_fd : 0;
}

/*
 * Identity, tracerd's own events, control page, wake-up eventfd and, unless
 * the process brings its pool (seg_fd NULL: adopt.c), a pool: one made
 * ahead (stock.c), or a new one.
 */
static int setup(struct tracerd_process *p, const Tracer__Register *r,
		 int *ctl_fd, int *seg_fd)
{
	int ret = copy_identity(p, r);

	if (!ret)
		ret = tracerd_salvage_events(p);
	if (ret)
		return ret;
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wake_fd < 0)
		return -errno;
	/* Outside a session, a lazy process gets its pool when one starts. */
	if (seg_fd && r->lazy_listener && !p->d->session_id &&
	    !p->d->starting) {
		*seg_fd = -1;
		seg_fd = NULL;
	}
	if (!seg_fd) {
		*ctl_fd = make_control(p);
		if (*ctl_fd < 0)
			return *ctl_fd;
		p->scratch_size = TRACERD_BATCH_BYTES;
		p->scratch = aligned_alloc(64, p->scratch_size);
		return p->scratch ? 0 : -ENOMEM;
	}
	if (tracerd_stock_take(p, ctl_fd, seg_fd) == 0)
		return 0;
	return tracerd_process_make_pool(p, ctl_fd, seg_fd);
}

/* The pool is complete: watch the process, give it the session, reply. */
int tracerd_process_go_live(struct tracerd_process *p, int ctl_fd,
			    int seg_fd)
{
	int ret;

	uv_poll_init(p->d->loop, &p->wake_poll, p->wake_fd);
	p->wake_poll.data = p;
	uv_poll_start(&p->wake_poll, UV_READABLE, on_wake);
	ret = tracerd_watch_pid(p);
	if (ret)
		tracerd_log("pid %d: no pidfd (%s): its end is noticed when it "
			    "hangs up, and not told apart from an exec",
			    (int)p->pid, strerror(-ret));
	tracerd_log("registered pid %d (%s)", (int)p->pid, p->name);
	if (p->d->session_id && !p->d->stopping) {
		tracerd_process_set_mode(p, p->d->sess.mode);
		tracerd_control_publish(p, p->d->session_id, p->d->sess.mode,
					false);
		p->in_session = true;
	}
	tracerd_pool_line(p)->wake_armed = 1;
	ret = send_registered(p, ctl_fd, seg_fd);
	/* The session's files after the reply, which the process waits
	 * for; made on the thread pool (files.c), and nothing is drained
	 * before they exist. */
	if (!ret && p->in_session)
		tracerd_session_add_process(p);
	return ret;
}

int tracerd_process_register(struct tracerd_client *c,
			     const Tracer__Register *r)
{
	struct tracerd_process *p = calloc(1, sizeof(*p));
	bool adopt = r->adopt_segments > 0;
	int ctl_fd = -1, seg_fd = -1, ret;

	if (!p)
		return -ENOMEM;
	p->d = c->d;
	p->pid = c->pid;	/* from the socket, not from the message */
	p->same_pidns = r->pid == (uint32_t)c->pid;
	p->wake_fd = -1;
	p->pidfd = -1;
	p->control_fd = -1;
	tracerd_process_replaced(c->d, c->pid);
	ret = setup(p, r, &ctl_fd, adopt ? NULL : &seg_fd);
	if (ret) {
		tracerd_log("pid %d: cannot set up tracing: %s", (int)c->pid,
			    strerror(-ret));
		tracerd_send_error(c, ret,
				   "tracerd cannot set up this process");
		if (ctl_fd >= 0)
			close(ctl_fd);
		tracerd_process_free(p);
		return ret;
	}
	p->client = c;
	c->proc = p;
	p->lazy = r->lazy_listener && !adopt;
	cds_list_add_tail(&p->node, &p->d->processes);
	if (adopt) {
		p->control_fd = ctl_fd;	/* sent once the pool is in */
		return tracerd_process_adopt(p, r);
	}
	return tracerd_process_go_live(p, ctl_fd, seg_fd);
}

static struct tracerd_process *find_resumable(struct tracerd *d, pid_t pid,
					      uint64_t token)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->pid == pid && p->resume_token == token &&
		    !p->ending && !p->adopting)
			return p;
	return NULL;
}

/* The reply to a resuming Register: a new eventfd, the filter in force. */
static int send_resumed(struct tracerd_process *p)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Registered r = TRACER__REGISTERED__INIT;
	Tracer__Filter f = TRACER__FILTER__INIT;
	int fd = dup(p->wake_fd);

	if (fd < 0)
		return -errno;
	r.control_size = TRACER_CONTROL_SIZE;
	r.resume_token = p->resume_token;
	r.resumed = true;
	f.generation = ++p->filter_sent;
	f.patterns = p->filter ? p->filter : (char *)"";
	r.filter = p->filter ? &f : NULL;
	m.body_case = TRACER__MESSAGE__BODY_REGISTERED;
	m.registered = &r;
	return tracerd_send(p->client, &m, &fd, 1);
}

int tracerd_process_resume(struct tracerd_client *c,
			   const Tracer__Register *r)
{
	struct tracerd_process *p = find_resumable(c->d, c->pid,
						   r->resume_token);
	struct tracerd_client *old;

	if (!p) {
		tracerd_send_error(c, -ESRCH, "no such traced process here: "
				   "register with the pool (adopt)");
		return -ESRCH;
	}
	old = p->client;
	if (old) {		/* its end of the broken connection */
		old->proc = NULL;
		p->client = NULL;
		tracerd_client_close(old);
	}
	p->client = c;
	c->proc = p;
	p->hangup_ms = 0;
	p->resumed = true;
	tracerd_log("pid %d (%s) connected again; tracing goes on",
		    (int)p->pid, p->name);
	return send_resumed(p);
}

int tracerd_process_untraced(struct tracerd_process *p)
{
	uint32_t e;

	if (!p->nseg)
		return 0;
	e = __atomic_load_n(&tracerd_pool_line(p)->untraced_errno, __ATOMIC_ACQUIRE);
	return e > 0 && e < 4096 ? (int)e : e ? EIO : 0;
}

static bool valid_types(const char *t)
{
	size_t n = strlen(t), i;

	if (n > MAX_ARGS)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("iudDps", t[i]))
			return false;
	return true;
}

static bool known_id(const struct tracerd_process *p, uint32_t id)
{
	return tracerd_process_site(p, id) != NULL;
}

static int store_callsite(struct tracerd_process *p,
			  const Tracer__CallSite *s);

static int add_callsite(struct tracerd_process *p, const Tracer__CallSite *s)
{
	if (p->resumed && s->id != 0 && known_id(p, s->id))
		return 0;	/* sent again after a broken connection */
	if (s->id == 0 || s->id > (1u << 30) || !valid_types(s->types) ||
	    known_id(p, s->id) || p->ncs >= MAX_CALLSITES)
		return -EINVAL;
	return store_callsite(p, s);
}

int tracerd_process_add_site(struct tracerd_process *p, uint32_t id,
			     const char *name, const char *types,
			     const char *format)
{
	Tracer__CallSite s = TRACER__CALL_SITE__INIT;

	s.id = id;
	s.vital = true;
	s.name = (char *)(uintptr_t)name;
	s.types = (char *)(uintptr_t)types;
	s.format = (char *)(uintptr_t)format;
	s.file = (char *)"tracerd";
	return store_callsite(p, &s);
}

const struct tracerd_callsite *tracerd_process_site(
	const struct tracerd_process *p, uint32_t id)
{
	size_t i;

	for (i = 0; i < p->ncs; i++)
		if (p->cs[i].id == id)
			return &p->cs[i];
	return NULL;
}

static int store_callsite(struct tracerd_process *p,
			  const Tracer__CallSite *s)
{
	struct tracerd_callsite *cs;

	if (p->ncs == p->cs_cap) {
		size_t cap = p->cs_cap ? p->cs_cap * 2 : 64;
		struct tracerd_callsite *n = realloc(p->cs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->cs = n;
		p->cs_cap = cap;
	}
	cs = &p->cs[p->ncs];
	cs->id = s->id;
	cs->vital = s->vital;
	cs->line = s->line;
	cs->types = dup_bounded(s->types, MAX_ARGS);
	cs->file = dup_bounded(s->file, MAX_STRING);
	cs->name = dup_bounded(s->name, MAX_STRING);
	cs->format = dup_bounded(s->format, MAX_STRING);
	if (!cs->types || !cs->file || !cs->name || !cs->format)
		return -ENOMEM;
	if (cs->vital && !strcmp(cs->name, RENAME_EVENT) &&
	    !strcmp(cs->types, "is"))
		p->rename_id = cs->id;
	p->ncs++;
	return 0;
}

int tracerd_process_callsites(struct tracerd_process *p,
			      const Tracer__CallSites *m)
{
	size_t from = p->ncs, i;
	int ret = 0;

	for (i = 0; i < m->n_sites && !ret; i++)
		ret = add_callsite(p, m->sites[i]);
	if (p->dir && p->ncs > from)
		tracerd_session_append_callsites(p, from);
	return ret;
}

/* ------------------------------------------------------------------ */
/* End of a process                                                    */

void tracerd_files_done(struct tracerd_process *p, int ret)
{
	if (p->end_waits) {
		p->end_waits = false;
		tracerd_process_end(p, p->end_how);
	} else if (ret == 0) {
		tracerd_process_scan(p);
	}
}

/*
 * The client hung up. The pidfd tells a death; a process still alive may
 * be running exec (its new image registers with the same pid) or be
 * connecting again (tracerd_process_resume()); its buffers are drained
 * meanwhile, and tracerd_process_check() ends it if it says it cannot.
 */
void tracerd_process_gone(struct tracerd_process *p)
{
	if (p->ending)
		return;		/* tracerd_process_end() is at work */
	if (p->pidfd < 0 || p->d->quitting || p->adopting) {
		tracerd_process_end(p, TRACERD_END_HANGUP);
		return;
	}
	/* Never freed here: the pidfd or tracerd_process_check() ends it. */
	p->hangup_ms = tracerd_now_ms();
}

void tracerd_process_remove(struct tracerd_process *p)
{
	struct tracerd_client *c = p->client;

	if (c) {		/* died before its hang-up was seen */
		c->proc = NULL;
		p->client = NULL;
		tracerd_client_close(c);
	}
	tracerd_log("pid %d (%s) is gone: %" PRIu64 " bytes written, %" PRIu64
		    " packets outside any session dropped", (int)p->pid,
		    p->name, p->bytes_written, p->dropped_packets);
	cds_list_del(&p->node);
	tracerd_process_free(p);
}

static void free_later(uv_handle_t *h)
{
	struct tracerd_process *p = h->data;

	if (--p->handles == 0)
		free(p);
}

static void close_handle(struct tracerd_process *p, uv_poll_t *h, int fd)
{
	if (uv_is_active((uv_handle_t *)h))
		uv_poll_stop(h);
	close(fd);
	h->data = p;
	p->handles++;
	uv_close((uv_handle_t *)h, free_later);
}

void tracerd_process_free(struct tracerd_process *p)
{
	uint32_t i;
	size_t k;
	int c;

	tracerd_process_close_files(p);
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			tracer__rb_reader_detach(&p->buf[i].rd[c]);
	for (i = 0; i < p->nseg; i++)
		munmap(p->seg[i].base, p->seg[i].size);
	if (p->control)
		munmap(p->control, TRACER_CONTROL_SIZE);
	if (p->control_fd >= 0)
		close(p->control_fd);
	for (k = 0; k < p->ncs; k++) {
		free(p->cs[k].types);
		free(p->cs[k].file);
		free(p->cs[k].name);
		free(p->cs[k].format);
	}
	for (k = 0; p->argv && k < p->argc; k++)
		free(p->argv[k]);
	free(p->argv);
	free(p->cs);
	free(p->buf);
	free(p->name);
	free(p->filter);
	free(p->scratch);
	if (p->wake_fd >= 0 && p->wake_poll.loop)
		close_handle(p, &p->wake_poll, p->wake_fd);
	else if (p->wake_fd >= 0)
		close(p->wake_fd);
	if (p->pidfd >= 0)
		close_handle(p, &p->pid_poll, p->pidfd);
	if (p->handles == 0)
		free(p);
}

/* Records committed in channel c of b over all owners. */
static uint64_t records_committed(const struct tracerd_buffer *b, int c)
{
	return tracer__rb_records_committed(b->rd[c].commit,
					    b->rd[c].geo.subbuf_count);
}

/*
 * Flight: records of channel c of b the writer overwrote before they
 * were read (at most made, the records committed): lost, not written,
 * for status as for the trace, which tells them when it reads the ring.
 */
static uint64_t overwritten(const struct tracerd_buffer *b, int c,
			    uint64_t made)
{
	uint64_t n = tracer__rb_overwritten(&b->rd[c]);

	return n < made ? n : made;
}

static void totals(const struct tracerd_process *p, uint64_t *records,
		   uint64_t *lost)
{
	uint32_t i;
	int c;

	*records = 0;
	*lost = TRACER_READ_ONCE(tracerd_pool_line((struct tracerd_process *)p)->
				 lost_no_buffer);
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			uint64_t made = records_committed(&p->buf[i], c),
				 over = overwritten(&p->buf[i], c, made);

			*records += made - over;
			*lost += TRACER_READ_ONCE(p->buf[i].rd[c].hdr->lost) +
				 over;
		}
	/* Records tracerd could not write are lost, not written. */
	*records -= p->unwritten;
	*lost += p->unwritten;
}

void tracerd_process_baseline(struct tracerd_process *p, bool recovered)
{
	uint32_t i;
	int c;

	totals(p, &p->base_records, &p->base_lost);
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			struct tracer_rb_reader *r = &p->buf[i].rd[c];

			/* A pool kept for this session (its tracerd died)
			 * brings the losses of that time with it. */
			p->buf[i].st[c].lost_seen = recovered ? tracerd_lost_told(r) :
						    tracer__rb_lost(r);
			p->buf[i].st[c].pending = 0;
		}
}

/* Default channel: share not yet read (discard) or filled (flight). */
static uint32_t use_permille(const struct tracerd_buffer *b)
{
	const struct tracer_rb_reader *r = &b->rd[TRACER_CHANNEL_DEFAULT];
	uint64_t B = r->geo.subbuf_size * r->geo.subbuf_count;
	uint64_t wc = TRACER_READ_ONCE(r->hdr->write_count);
	uint64_t used = wc - r->read_count;	/* flight: since the start */

	if (used > B)
		used = B;
	return (uint32_t)(used * 1000 / B);
}

static char no_name[1];

/* Records of channel c of b's current owner tracerd could not write. */
static uint64_t owner_unwritten(const struct tracerd_buffer *b, int c)
{
	uint64_t gen = TRACER_BUF_GEN(TRACER_READ_ONCE(b->desc->state));
	const struct tracerd_stream *st = &b->st[c];

	if (!st->unwritten_instance ||
	    (st->unwritten_instance & 0xffffffffu) != (gen & 0xffffffffu))
		return 0;
	return st->unwritten;
}

/*
 * Thread tid's name now, from /proc/PID/task/TID/comm: a rename since it
 * took its buffer is in there, however it was made. Only for a process
 * whose thread ids are ours. Returns false when it cannot be read (the
 * thread is gone, or another pid namespace).
 */
static bool comm_now(const struct tracerd_process *p, uint32_t tid,
		     char name[17])
{
	char path[64];
	ssize_t n;
	int fd;

	if (!p->same_pidns || tid == 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32 "/comm",
		 (int)p->pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, name, 16);
	close(fd);
	if (n <= 0)
		return false;
	/* The kernel ends it with a newline (a name may hold more). */
	name[name[n - 1] == '\n' ? n - 1 : n] = '\0';
	return true;
}

static void thread_status(const struct tracerd_process *p, uint32_t i,
			  Tracer__ThreadStatus *t)
{
	const struct tracerd_buffer *b = &p->buf[i];
	char *name = malloc(17);
	int c;

	tracer__thread_status__init(t);
	t->tid = TRACER_READ_ONCE(b->desc->owner_tid);
	if (name && !comm_now(p, t->tid, name)) {
		memcpy(name, b->desc->thread_name, 16);
		name[16] = '\0';
	}
	t->name = name ? name : no_name;
	t->buffer = i;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		uint64_t unwritten = owner_unwritten(b, c),
			 made = records_committed(b, c) -
				TRACER_READ_ONCE(b->desc->records_base[c]),
			 over = overwritten(b, c, made - unwritten);

		t->events_written += made - unwritten - over;
		t->events_lost += TRACER_READ_ONCE(b->rd[c].hdr->lost) -
				  TRACER_READ_ONCE(b->desc->lost_base[c]) +
				  unwritten + over;
	}
	t->use_permille = use_permille(b);
}

static bool in_use(const struct tracerd_buffer *b)
{
	return TRACER_BUF_STATE(TRACER_READ_ONCE(b->desc->state)) ==
	       TRACER_BUF_IN_USE;
}

static void threads_status(struct tracerd_process *p,
			   Tracer__ProcessStatus *st)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->nbuf; i++)
		n += in_use(&p->buf[i]);
	st->threads = calloc(n ? n : 1, sizeof(*st->threads));
	if (!st->threads)
		return;
	for (i = 0; i < p->nbuf && st->n_threads < n; i++) {
		Tracer__ThreadStatus *t;

		if (!in_use(&p->buf[i]) || !(t = malloc(sizeof(*t))))
			continue;
		thread_status(p, i, t);
		st->threads[st->n_threads++] = t;
	}
}

void tracerd_process_status(struct tracerd_process *p,
			    Tracer__ProcessStatus *st)
{
	uint64_t records, lost;
	uint32_t i;

	st->pid = (uint32_t)p->pid;
	st->name = p->name;
	st->buffers = p->nbuf;
	st->pool_bytes = p->pool_bytes;
	st->pool_cap = p->d->cfg.max_memory;
	st->segments = p->nseg;
	st->bytes_written = p->bytes_written;
	st->packets_written = p->packets_written;
	st->filter = p->filter ? p->filter : (char *)TRACER_DEFAULT_EVENTS;
	st->filter_sent = p->filter_sent;
	st->filter_applied = p->filter_acked;
	st->subbuf_size = p->subbuf_size[TRACER_CHANNEL_DEFAULT];
	st->subbuf_count = (uint32_t)p->subbuf_count[TRACER_CHANNEL_DEFAULT];
	totals(p, &records, &lost);
	st->events_lost = lost;
	if (p->in_session) {
		st->events_written = records - p->base_records;
		st->events_lost_session = lost - p->base_lost;
	}
	for (i = 0; i < p->nbuf; i++)
		st->buffers_in_use += in_use(&p->buf[i]);
	threads_status(p, st);
}

void tracerd_process_status_free(Tracer__ProcessStatus *st)
{
	size_t i;

	for (i = 0; i < st->n_threads; i++) {
		if (st->threads[i]->name != no_name)
			free(st->threads[i]->name);
		free(st->threads[i]);
	}
	free(st->threads);
	st->threads = NULL;
	st->n_threads = 0;
}

/*
 * The pid's latest registration: after an exec, the new image may
 * register before tracerd reads the old image's hang-up, and the old one
 * is then on its way out.
 */
struct tracerd_process *tracerd_process_find(struct tracerd *d, pid_t pid)
{
	struct tracerd_process *p, *found = NULL;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->pid == pid)
			found = p;
	return found;
}

void tracerd_process_set_mode(struct tracerd_process *p, uint32_t mode)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			p->buf[i].rd[c].mode = mode == TRACER_MODE_FLIGHT ?
				TRACER_RB_FLIGHT : TRACER_RB_DISCARD;
}

/* One look at the open sub-buffer of a channel that drained nothing. */
static void live_channel(struct tracerd_process *p, struct tracerd_buffer *b,
			 int c)
{
	struct tracer_rb_packet_info info;

	if (b->broken[c] || b->rd[c].read_count != b->live_mark[c]) {
		b->live_mark[c] = b->rd[c].read_count;
		return;
	}
	if (tracer__rb_read_partial(&b->rd[c], p->scratch, p->scratch_size,
				    &info) == 0) {
		emit_packet(p, b, c, &info);
		flush_batch(p);
	}
	b->live_mark[c] = b->rd[c].read_count;
}

void tracerd_process_live(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	if (!p->dir || flight_recording(p->d))
		return;
	for (i = 0; i < p->nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			live_channel(p, &p->buf[i], c);
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */

/* Everything channel c of b holds, read through a copy of its reader. */
static int snapshot_channel(struct tracerd_process *p,
			    const struct tracerd_sink *sink,
			    struct tracerd_stream *pair,
			    struct tracerd_buffer *b, int c)
{
	struct tracer_rb_reader r = b->rd[c];
	struct tracer_rb_packet_info info;
	uint64_t shadow = r.read_count, n = r.geo.subbuf_count;
	int ret, k;

	r.read_count_shared = &shadow;	/* the writer never sees it */
	r.slot_records = malloc(n * sizeof(uint64_t));
	if (!r.slot_records)
		return -ENOMEM;
	memcpy(r.slot_records, b->rd[c].slot_records, n * sizeof(uint64_t));
	for (k = 0; k < SNAPSHOT_BUDGET; k++) {
		void *dst = batch_room(p, r.geo.subbuf_size);

		ret = tracer__rb_read(&r, dst, p->scratch_size - p->batch_len,
				      &info);
		if (ret == 0)
			emit_to(p, sink, pair, b, c, &info);
		else if (ret != -ESTALE && ret != -EBADMSG)
			break;
	}
	flush_batch(p);
	if (tracer__rb_read_partial(&r, p->scratch, p->scratch_size,
				    &info) == 0) {
		emit_to(p, sink, pair, b, c, &info);
		flush_batch(p);
	}
	write_losses(p, &pair[c], c, tracer__rb_lost(&r));
	free(r.slot_records);
	return 0;
}

int tracerd_process_snapshot(struct tracerd_process *p,
			     const struct tracerd_sink *sink)
{
	struct tracerd_stream pair[TRACER_POOL_CHANNELS];
	uint32_t i;
	int c, ret = 0;

	for (i = 0; i < p->nbuf && !ret; i++) {
		/* Writer losses count from where the session's files
		   are (its start, in flight mode). */
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			pair[c] = (struct tracerd_stream){
				.fd = -1,
				.lost_seen = p->buf[i].st[c].lost_seen,
			};
		for (c = 0; c < TRACER_POOL_CHANNELS && !ret; c++)
			if (!p->buf[i].broken[c])
				ret = snapshot_channel(p, sink, pair,
						       &p->buf[i], c);
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			close_stream(&pair[c]);
	}
	return ret;
}
