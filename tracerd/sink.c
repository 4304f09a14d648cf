/*
 * sink.c - where a process's packets go: its channel files.
 *
 * The drain reads each ring of each buffer in order (rb_read.c: packets
 * checked in a private copy) and appends every packet to the file of its
 * owner: CHANNEL-TID in the process directory, a new file whenever the
 * owner changes (the next thread that took the buffer), so that every
 * thread has its own files while nobody waits for tracerd between two
 * owners (doc/thread-churn.md). When files are made more slowly than
 * threads come, a new owner's packets go to the process's spill instead
 * and its file is made later (spill.c): the drain numbers and stamps them
 * the same way. A run of complete sub-buffers is copied out of the pool
 * with one pread() and its packets are checked and renumbered there; the
 * others are copied one by one into tracerd's one scratch buffer. Each
 * packet is renumbered as its file counts (packet_seq_num,
 * events_discarded: doc/session-files.md), and a stream's packets are
 * written with one writev(2) per batch (the scratch buffer's size, at
 * least TRACERD_BATCH_BYTES, plus what was staged; TRACERD_BATCH_IOV
 * pieces at most).
 *
 * Losses are told where they happened: a ring's losses before a packet
 * are told by that packet (or a marker packet without records before it,
 * the first packet of a file telling none); an owner's last losses by a
 * marker after its last packet. A write error (output full, ...) counts
 * the records of the batch as unwritten, tells them once room is back,
 * and logs once per episode.
 *
 * Also here: the committed part of an open sub-buffer (a flush at stop
 * and switch; the live interval), the end of a process's files, what
 * salvage.c needs to write a dead thread's last packets, and a
 * snapshot's reading of a ring through a copy of its reader.
 *
 * Single-threaded: tracerd's loop. The process may have written anything
 * into its pool; nothing read from it is used as an offset unchecked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tracerd.h"
#include "sink.h"
#include "relay.h"
#include "spill.h"
#include "format.h"

#define DRAIN_BUDGET	32	/* packets per channel per pass, then the
				   loop serves others (see tracerd_sink_yield) */
#define DRAIN_PASS_BYTES (1u << 20)	/* sub-buffer bytes per pass over a
					   process, then the same */
#define STAGE_BYTES	(512u << 10)	/* a pass's sub-buffers of 16 KiB */
#define STAGE_LEAST	8	/* sub-buffers waiting that are worth a
				   pread() (stage_ahead()) */
#define SNAPSHOT_BUDGET	(1 << 20)	/* packets per channel, at most */
#define SNAPSHOT_TRIES	8	/* reads of the open sub-buffer, at most */
#define ROOM_AGAIN	(4 * TRACERD_BATCH_BYTES)	/* free bytes that end a
						   write-error episode */
#define RENAME_EVENT	"tracer:thread_name"	/* tid %d name %s */

static const char *const channel_name[TRACER_POOL_CHANNELS] = {
	"default", "vital",
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ------------------------------------------------------------------ */
/* Channel files                                                       */

void tracerd_sink_close_stream(struct tracerd_stream *st)
{
	if (st->spill)
		tracerd_spill_close_owner(st->spill, st->spill_id);
	else if (st->fd >= 0)
		close(st->fd);
	if (st->relay)
		tracerd_relay_closed(st->relay);
	st->relay = NULL;
	st->spill = NULL;
	st->fd = -1;
	st->instance = 0;
}

void tracerd_process_close_files(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	if (p->files.dir)
		tracerd_relay_trace_closed(p->d, p->files.dir);
	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			tracerd_sink_close_stream(&p->pool.buf[i].st[c]);
	if (p->files.meta && fclose(p->files.meta))
		tracerd_log("pid %d: cannot write process.meta: %s",
			    (int)p->pid, strerror(errno));
	p->files.meta = NULL;
	if (p->files.ctf && fclose(p->files.ctf))
		tracerd_log("pid %d: cannot write the CTF metadata: %s",
			    (int)p->pid, strerror(errno));
	p->files.ctf = NULL;
	if (p->files.spill)	/* written out after us (spill.c) */
		tracerd_spill_detach(p->files.spill);
	p->files.spill = NULL;
	free(p->files.dir);
	p->files.dir = NULL;
}

int tracerd_sink_create_file(struct tracerd *d, const char *dir, int c,
			     uint32_t tid, struct tracerd_relay_stream **rs)
{
	char path[4096], *name = path;
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
	if (fd >= 0 && d->relay) {	/* streamed as it is written */
		name = strrchr(path, '/');
		*name++ = '\0';
		if (rs)
			*rs = tracerd_relay_file(d, path, name);
		else
			tracerd_relay_file(d, path, name);
	}
	return fd;
}

/*
 * Where st's new owner goes: a file made now, or the spill when files are
 * made too slowly (spill.c). Not in flight mode: nothing is written while
 * its session runs (no ring waits for us), and a snapshot links the files
 * of processes that ended (ended.c), which must be there. Returns 0 or a
 * negative errno.
 */
static int place_stream(struct tracerd_process *p,
			const struct tracerd_sink *sink,
			struct tracerd_stream *st, int c, uint32_t tid)
{
	struct tracerd_spill **sp = sink->spill;
	uint64_t t0;
	int ret;

	if (sp && p->d->sess.mode != TRACER_MODE_FLIGHT &&
	    tracerd_spill_wanted(p->d, *sp)) {
		if (!*sp)
			*sp = tracerd_spill_new(p->d, sink->dir, p->pid);
		if (!*sp)
			return -ENOMEM;
		st->spill = *sp;
		ret = tracerd_spill_open(*sp, c, tid, &st->spill_id);
		/* The spill's file exists once a frame went in. */
		st->fd = ret ? -1 : tracerd_spill_fd(*sp);
		return ret;
	}
	t0 = tracer__clock_now();
	st->fd = tracerd_sink_create_file(p->d, sink->dir, c, tid,
					  &st->relay);
	tracerd_spill_note_create(p->d, tracer__clock_now() - t0);
	return st->fd < 0 ? st->fd : 0;
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
	int ret;

	tracerd_sink_close_stream(st);
	ret = place_stream(p, sink, st, c, info->tid);
	if (ret) {
		st->spill = NULL;
		st->fd = -1;
		return ret;
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

/* writev() all of iov[0..n) (changed on the way); 0 or a negative errno. */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int tracerd_write_all(int fd, const char *buf, size_t n)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf,
			     .iov_len = n };

	return writev_all(fd, &iov, 1);
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
 * Append n bytes (whole packets, `records` records) in iov[0..niov) to
 * st's file, or to the spill for it (one piece: emit_to() keeps a spill's
 * packets in scratch). On error the file is cut back to its last whole
 * packet (the spill cuts itself back), so that readers never see half of
 * one. Returns 0 or a negative errno.
 */
static int append_iov(struct tracerd_process *p, struct tracerd_stream *st,
		      struct iovec *iov, int niov, size_t n, uint64_t records)
{
	int ret = st->spill ? (niov == 1 ?
			       tracerd_spill_data(st->spill, st->spill_id,
						  iov->iov_base, n, records) :
			       -EINVAL)
			    : writev_all(st->fd, iov, niov);

	if (!ret) {
		st->size += n;
		write_done(p->d, st->dir, st->fd);
		if (st->relay)
			tracerd_relay_grew(st->relay, st->size, records);
		return 0;
	}
	if (!st->spill && (ftruncate(st->fd, (off_t)st->size) < 0 ||
			   lseek(st->fd, (off_t)st->size, SEEK_SET) < 0))
		tracerd_log("pid %d: cannot cut a partly written packet off "
			    "a file in '%s': %s", (int)p->pid, st->dir,
			    strerror(errno));
	tracerd_write_failed(p->d, st->dir, ret);
	return ret;
}

/* append_iov() of the n bytes at buf. */
static int append(struct tracerd_process *p, struct tracerd_stream *st,
		  const void *buf, size_t n, uint64_t records)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = n };

	return append_iov(p, st, &iov, 1, n, records);
}

/*
 * The batch could not be written (its file was cut back): its records are
 * lost. Its packets' numbers are given again, and the losses they told go
 * with the next packet written, with these records.
 */
static void batch_failed(struct tracerd_process *p, struct tracerd_stream *st)
{
	uint64_t told = st->discarded - p->batch.discarded;

	st->seq = p->batch.seq;
	st->discarded = p->batch.discarded;
	st->pending = sat_add(st->pending, sat_add(told, p->batch.records));
	count_unwritten(p, st, st->instance, p->batch.records);
	p->bytes_written -= p->batch.len;
	p->packets_written -= p->batch.packets;
}

/*
 * Packets are gathered one stream at a time, and written with one
 * writev(2) per batch: large, block-friendly writes. They are in the
 * daemon's scratch buffer (TRACERD_BATCH_BYTES at least) or in the staged
 * copy (stage_ahead()), both reused by whatever reads next (a drain, a
 * flush, a snapshot, a salvage): the batch is empty outside
 * drain_channel() and flush_channel(), so one scratch buffer serves every
 * process.
 */
static void flush_batch(struct tracerd_process *p)
{
	struct tracerd_batch *bt = &p->batch;
	struct tracerd_stream *st = bt->stream;

	if (bt->len && st && st->fd >= 0 &&
	    append_iov(p, st, bt->iov, bt->niov, bt->len, bt->records))
		batch_failed(p, st);
	bt->len = bt->used = 0;
	bt->niov = 0;
	bt->stream = NULL;
}

static bool in_scratch(const struct tracerd_process *p, const char *pk)
{
	const char *buf = p->d->scratch.buf;

	return pk >= buf && pk < buf + p->d->scratch.size;
}

/* Where the next packet goes: room for one sub-buffer of `need` bytes, and
 * for one more piece. */
static void *batch_room(struct tracerd_process *p, uint64_t need)
{
	if (p->d->scratch.size - p->batch.used < need ||
	    p->batch.niov == TRACERD_BATCH_IOV)
		flush_batch(p);
	return (char *)p->d->scratch.buf + p->batch.used;
}

/* Packet pk (n bytes, at batch_room() or staged) joins the batch. */
static void batch_add(struct tracerd_process *p, char *pk, uint64_t n)
{
	struct tracerd_batch *bt = &p->batch;
	struct iovec *last = bt->niov ? &bt->iov[bt->niov - 1] : NULL;

	if (last && (char *)last->iov_base + last->iov_len == pk)
		last->iov_len += n;
	else
		bt->iov[bt->niov++] = (struct iovec){ .iov_base = pk,
						      .iov_len = n };
	if (in_scratch(p, pk))
		bt->used = (uint64_t)(pk - (char *)p->d->scratch.buf) + n;
	bt->len += n;
}

/* The packet pk goes to another stream than the batch: write the batch,
 * and move pk to the start of scratch if it is there. */
static char *restart_batch(struct tracerd_process *p, char *pk,
			   uint64_t bytes)
{
	flush_batch(p);
	if (!in_scratch(p, pk))
		return pk;
	memmove(p->d->scratch.buf, pk, bytes);
	return p->d->scratch.buf;
}

/* A staged packet pk for a spill (one piece per write): into scratch. */
static char *to_scratch(struct tracerd_process *p, char *pk, uint64_t bytes)
{
	char *dst;

	if (in_scratch(p, pk))
		return pk;
	dst = batch_room(p, bytes);
	memcpy(dst, pk, bytes);
	return dst;
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
	int ret = append(p, st, &h, sizeof(h), 0);

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
	p->batch.seq = st->seq;
	p->batch.discarded = st->discarded;
	p->batch.records = 0;
	p->batch.packets = 0;
}

/*
 * The names a vital packet tells: the renames (tracer:thread_name,
 * libtracer's wrappers of pthread_setname_np() and prctl()), one `thread`
 * line each in the sink's process.meta with the time of the rename; and
 * a thread's name at its start (tracer:thread_start), a line without a
 * time after the one open_stream() wrote from the buffer's descriptor,
 * which may name the buffer's next owner by then (a thread that ended
 * and whose buffer was taken again before tracerd read it, or a stash
 * written out in another thread's name: libtracer/stash.c). The packet
 * was checked by the reader; the payload is decoded with bounds.
 */
static void note_renames(const struct tracerd_process *p,
			 const struct tracerd_sink *sink, const void *pk,
			 const struct tracer_rb_packet_info *info)
{
	struct tracer_rb_record rec;
	struct tracer__value tid, name;
	struct tracer_rb_cursor cur = { 0 };
	size_t at;

	if ((!p->rename_id && !p->start_id) || !sink->meta)
		return;
	while (tracer__rb_packet_next(pk, info->content_bytes, &cur, &rec)) {
		at = 0;
		if (!rec.id || (rec.id != p->rename_id && rec.id != p->start_id) ||
		    tracer__payload_next(TRACER_ARG_SIGNED, rec.payload,
					 rec.payload_size,
					 &at, &tid) ||
		    tracer__payload_next(TRACER_ARG_STRING, rec.payload,
					 rec.payload_size,
					 &at, &name) ||
		    tid.i <= 0 || tid.i > INT32_MAX)
			continue;
		tracerd_note_thread(sink->meta, (uint32_t)tid.i, name.s,
				    rec.id == p->start_id ? 0 :
				    rec.timestamp ? rec.timestamp : 1);
	}
}

/* A checked packet pk (at batch_room(), or staged): append it to its
 * file. Returns true when it goes there. */
static bool emit_to(struct tracerd_process *p, const struct tracerd_sink *sink,
		    struct tracerd_stream *pair, struct tracerd_buffer *b,
		    int c, const struct tracer_rb_packet_info *info, char *pk)
{
	struct tracerd_stream *st = &pair[c];
	bool same = st->fd >= 0 && st->instance == info->stream_instance_id;
	uint64_t after, before = packet_losses(st, info, &after);

	if (!sink->dir) {
		p->dropped_packets++;
		if (p->in_session)	/* its directory could not be made */
			no_directory(p, st, info, sat_add(before, after));
		return false;
	}
	st->pending = sat_add(st->pending, before);
	if (info->records == 0 && !(same && st->pending)) {
		st->pending = sat_add(st->pending, after);
		return false;	/* nothing to tell yet */
	}
	if (p->batch.stream != st || !same)
		pk = restart_batch(p, pk, info->content_bytes);
	if ((!same || st->seq == 0) && ready_file(p, sink, pair, b, c, info)) {
		packet_failed(p, st, info);
		st->pending = sat_add(st->pending, after);
		return false;
	}
	if (st->spill)
		pk = to_scratch(p, pk, info->content_bytes);
	if (p->batch.len == 0)
		begin_batch(p, st);
	stamp_packet(st, (struct tracer_rb_packet *)(void *)pk,
		     info->content_bytes);
	/* Told by the next packet, or a marker after this one. */
	st->pending = sat_add(st->pending, after);
	if (c == TRACER_CHANNEL_VITAL)
		note_renames(p, sink, pk, info);
	p->batch.stream = st;
	batch_add(p, pk, info->content_bytes);
	p->batch.records += info->records;
	p->batch.packets++;
	p->bytes_written += info->content_bytes;
	p->packets_written++;
	return true;
}

/* The session's files; status counts the packets there that tracerd
 * converted from ticks (tick_packets). */
static void emit_packet(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, const struct tracer_rb_packet_info *info,
			char *pk)
{
	struct tracerd_sink sink = { .dir = p->files.dir,
				     .meta = p->files.meta,
				     .spill = &p->files.spill };

	if (emit_to(p, &sink, b->st, b, c, info, pk) && info->from_ticks)
		p->d->clock.tick_packets++;
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

/* A damaged packet or ring, logged (at most TRACERD_RATE_BURST lines of
 * the process's every 10 s: a process can damage its rings endlessly). */
static void channel_error(struct tracerd_process *p, struct tracerd_buffer *b,
			  int c, int err)
{
	tracerd_log_rated(&p->log_rate, "pid %d buffer %u %s channel: %s%s",
			  (int)p->pid, (unsigned)(b - p->pool.buf),
			  channel_name[c], b->rd[c].error, err == -EIO ?
			  " (no longer read)" : " (packet skipped)");
	if (err == -EIO)
		b->broken[c] = true;
}

/*
 * Packets found waiting at once that say the drain is behind: 1/8 of the
 * ring (the writer wakes tracerd at 1/64), 2 at least, and DRAIN_BUDGET
 * at most (what a pass reads).
 */
static int behind_mark(const struct tracer_rb_reader *r)
{
	uint64_t m = r->geo.subbuf_count / 8;

	return m < 2 ? 2 : m > DRAIN_BUDGET ? DRAIN_BUDGET : (int)m;
}

/*
 * When at least STAGE_LEAST complete sub-buffers wait, copy them out of
 * the pool's memfd with one pread() ahead of the reads (rb.h,
 * tracer__rb_stage()). The kernel copies from pages it has mapped
 * already; a copy through tracerd's own mapping first maps every page it
 * has not touched yet, which on this 2-CPU VM held the copy of a ring
 * nobody had read (a backlog: tracerd stopped, or a new thread's first
 * lap) to 0.5-2.2 GB/s against 5-7 GB/s for pread(). Fewer sub-buffers,
 * usually those of a ring the drain keeps up with and has read before,
 * are copied from the mapping: a system call for each would cost more.
 */
static void stage_ahead(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, uint64_t bytes)
{
	struct tracer_rb_reader *r = &b->rd[c];
	struct tracerd_scratch *s = &p->d->scratch;
	struct tracer_rb_span span;
	uint64_t S = r->geo.subbuf_size, max = STAGE_BYTES / S;
	ssize_t got;

	if (bytes / S < max)
		max = bytes / S;
	if (max > DRAIN_BUDGET)
		max = DRAIN_BUDGET;
	if (b->seg_fd < 0 || max < STAGE_LEAST)
		return;
	if (tracer__rb_ready(r, (uint32_t)max, &span) < STAGE_LEAST)
		return;
	if (!s->stage && !(s->stage = aligned_alloc(64, STAGE_BYTES)))
		return;
	got = pread(b->seg_fd, s->stage, span.len,
		    (off_t)(b->data_at[c] + span.offset));
	if (got == (ssize_t)span.len)
		tracer__rb_stage(r, s->stage, &span);
}

/*
 * At most DRAIN_BUDGET packets of channel c of b, and at most *bytes of
 * sub-buffers (each packet counts its whole sub-buffer, which is copied;
 * the first one is read whatever *bytes says). Returns true when a budget
 * ran out with packets left.
 */
static bool drain_channel(struct tracerd_process *p, struct tracerd_buffer *b,
			  int c, uint64_t *bytes)
{
	struct tracer_rb_packet_info info;
	uint64_t sub = b->rd[c].geo.subbuf_size;
	int n, ret = 0;

	stage_ahead(p, b, c, *bytes);
	for (n = 0; n < DRAIN_BUDGET && !b->broken[c]; n++) {
		void *dst, *pk;

		if (n && *bytes < sub)
			break;
		dst = batch_room(p, sub);
		ret = tracer__rb_read_ref(&b->rd[c], dst, p->d->scratch.size -
					  p->batch.used, &info, &pk);
		if (ret == -EAGAIN)
			break;
		*bytes -= *bytes < sub ? *bytes : sub;
		if (ret == 0) {
			emit_packet(p, b, c, &info, pk);
			tell_lost_told(&b->rd[c], b->st[c].lost_seen);
		} else if (ret == -EBADMSG || ret == -EIO)
			channel_error(p, b, c, ret);
		/* A packet may take long (a file to create): a thread that
		 * wants a larger pool is served before the next one (by
		 * drain(): growing moves p->pool.buf, and b with it). */
		if (TRACER_READ_ONCE(tracerd_pool_line(p)->want_grow))
			break;
	}
	tracer__rb_unstage(&b->rd[c]);
	flush_batch(p);
	if (n >= behind_mark(&b->rd[c]))
		p->d->drain_behind++;	/* priority.c */
	return ret != -EAGAIN && !b->broken[c] &&
	       (n == DRAIN_BUDGET || *bytes < sub);
}

/*
 * One pass over the buffers, DRAIN_PASS_BYTES at most: a process with many
 * full rings (48 of them: 24 MiB a pass before) would hold the loop while
 * other processes' rings fill. The next pass starts at the buffer after
 * the last one this pass read, so that each is served in turn.
 */
bool tracerd_sink_drain(struct tracerd_process *p)
{
	uint64_t bytes = DRAIN_PASS_BYTES;
	uint32_t i, k, n = p->pool.nbuf;
	bool more = false;
	int c;

	for (k = 0; k < n && bytes; k++) {
		i = (p->drain_next + k) % n;
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			more |= drain_channel(p, &p->pool.buf[i], c, &bytes);
			if (TRACER_READ_ONCE(tracerd_pool_line(p)->want_grow)) {
				tracerd_pool_maybe_grow(p);
				more = true;
				n = p->pool.nbuf;
			}
		}
	}
	if (k < p->pool.nbuf) {
		more = true;	/* buffers not looked at */
		p->drain_next = (p->drain_next + k) % p->pool.nbuf;
	}
	return more;
}

/* ------------------------------------------------------------------ */
/* For salvage.c                                                       */

const char *tracerd_channel_name(int c)
{
	return c >= 0 && c < TRACER_POOL_CHANNELS ? channel_name[c] : "?";
}

bool tracerd_drain_some(struct tracerd_process *p, struct tracerd_buffer *b,
			int c)
{
	uint64_t bytes = DRAIN_PASS_BYTES;

	return drain_channel(p, b, c, &bytes);
}

void *tracerd_batch_room(struct tracerd_process *p, uint64_t need)
{
	return batch_room(p, need);
}

uint64_t tracerd_batch_free(const struct tracerd_process *p)
{
	return p->d->scratch.size - p->batch.used;
}

void tracerd_emit_batch(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, const struct tracer_rb_packet_info *info)
{
	emit_packet(p, b, c, info,
		    (char *)p->d->scratch.buf + p->batch.used);
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
	struct tracerd_relay_stream *rs = NULL;
	int fd, ret;

	if (!p->files.dir)
		return;
	fd = tracerd_sink_create_file(p->d, p->files.dir,
				      TRACER_CHANNEL_VITAL, (uint32_t)p->pid,
				      &rs);
	if (fd < 0)
		return;
	ret = tracerd_write_all(fd, packet, len);
	if (ret)
		tracerd_log("pid %d: cannot write its end: %s", (int)p->pid,
			    strerror(-ret));
	close(fd);
	if (rs && !ret)
		tracerd_relay_grew(rs, len, 0);
	if (rs)
		tracerd_relay_closed(rs);
	p->bytes_written += len;
	p->packets_written++;
}

/*
 * Packets are left: come back through the loop (our own eventfd), so that
 * requests and other processes are served in between, not after a writer
 * that never stops.
 */
void tracerd_sink_yield(struct tracerd_process *p)
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
		uint64_t bytes = UINT64_MAX;	/* the end: all of it */
		int rounds;

		for (rounds = 0; rounds < 128 && drain_channel(p, b, c, &bytes);
		     rounds++)
			;
		ret = tracer__rb_read_partial(&b->rd[c], p->d->scratch.buf,
					      p->d->scratch.size, &info);
		if (ret == 0) {
			emit_packet(p, b, c, &info, p->d->scratch.buf);
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

	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			busy += flush_channel(p, &p->pool.buf[i], c);
	return busy;
}

/*
 * Close the files of buffers back in the pool whose last owner is all
 * written out (nothing between the read and write counts): open files then
 * track the threads alive, not every buffer the pool ever had. The main
 * thread's vital file stays open until its buffer moves on: the process's
 * end is told there (salvage.c: main_vital()), also when its main thread
 * handed its buffer back before tracerd heard of the end.
 */
void tracerd_sink_close_idle(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->pool.nbuf; i++) {
		struct tracerd_buffer *b = &p->pool.buf[i];
		bool idle = TRACER_BUF_STATE(__atomic_load_n(&b->desc->state,
					__ATOMIC_ACQUIRE)) != TRACER_BUF_IN_USE;

		for (c = 0; c < TRACER_POOL_CHANNELS && idle; c++)
			idle = b->st[c].fd < 0 ||
			       TRACER_READ_ONCE(b->rd[c].hdr->write_count) ==
			       b->rd[c].read_count;
		for (c = 0; c < TRACER_POOL_CHANNELS && idle; c++) {
			write_losses(p, &b->st[c], c,
				     tracer__rb_lost(&b->rd[c]));
			if (c != TRACER_CHANNEL_VITAL ||
			    b->st[c].tid != (uint32_t)p->pid)
				tracerd_sink_close_stream(&b->st[c]);
		}
	}
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
	if (tracer__rb_read_partial(&b->rd[c], p->d->scratch.buf,
				    p->d->scratch.size,
				    &info) == 0) {
		emit_packet(p, b, c, &info, p->d->scratch.buf);
		flush_batch(p);
	}
	b->live_mark[c] = b->rd[c].read_count;
}

void tracerd_process_live(struct tracerd_process *p)
{
	uint32_t i;
	int c;

	if (!p->files.dir || tracerd_flight_recording(p->d) || p->ending)
		return;		/* (an end in steps reads it all) */
	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			live_channel(p, &p->pool.buf[i], c);
}

/* The complete sub-buffers of a snapshot's reader r (channel c of b). */
static void snapshot_complete(struct tracerd_process *p,
			      const struct tracerd_sink *sink,
			      struct tracerd_stream *pair,
			      struct tracerd_buffer *b, int c,
			      struct tracer_rb_reader *r)
{
	struct tracer_rb_packet_info info;
	int k, ret;

	for (k = 0; k < SNAPSHOT_BUDGET; k++) {
		void *dst = batch_room(p, r->geo.subbuf_size);

		ret = tracer__rb_read(r, dst,
				      p->d->scratch.size - p->batch.used,
				      &info);
		if (ret == 0)
			emit_to(p, sink, pair, b, c, &info, dst);
		else if (ret != -ESTALE && ret != -EBADMSG)
			break;
	}
	flush_batch(p);
}

/* Everything channel c of b holds, read through a copy of its reader. */
int tracerd_sink_snapshot_channel(struct tracerd_process *p,
				  const struct tracerd_sink *sink,
				  struct tracerd_stream *pair,
				  struct tracerd_buffer *b, int c)
{
	struct tracer_rb_reader r = b->rd[c];
	struct tracer_rb_packet_info info;
	uint64_t shadow = r.read_count, n = r.geo.subbuf_count;
	int ret, tries;

	r.read_count_shared = &shadow;	/* the writer never sees it */
	r.quiet = true;
	r.slot_records = malloc(n * sizeof(uint64_t));
	if (!r.slot_records)
		return -ENOMEM;
	memcpy(r.slot_records, b->rd[c].slot_records, n * sizeof(uint64_t));
	/* The writer runs on: it may close the open sub-buffer between the
	 * complete ones and the partial read (-EAGAIN: read the complete
	 * ones again), or be in the middle of a record (-EBUSY). */
	for (tries = 0; tries < SNAPSHOT_TRIES; tries++) {
		snapshot_complete(p, sink, pair, b, c, &r);
		ret = tracer__rb_read_partial(&r, p->d->scratch.buf,
					      p->d->scratch.size, &info);
		if (ret == 0) {
			emit_to(p, sink, pair, b, c, &info, p->d->scratch.buf);
			flush_batch(p);
		}
		if (ret != -EAGAIN && ret != -ESTALE && ret != -EBUSY)
			break;
	}
	write_losses(p, &pair[c], c, tracer__rb_lost(&r));
	free(r.slot_records);
	return 0;
}
