/*
 * spill.c - packets held back on disk while their files cannot be made
 * as fast as threads come.
 *
 * Every thread gets files of its own (sink.c: CHANNEL-TID), made at its
 * first packet. Some file systems make files slowly: this VM's ext4 takes
 * 0.2-0.7 ms a file in some hours, where a program that starts 19,000
 * threads a second needs 38,000 files a second. Made in the drain, the
 * files held the drain back, the rings filled and events were lost,
 * though there were few bytes to write (doc/thread-churn.md).
 *
 * So when making files took more than SHARE_PCT of tracerd's time over
 * the last WINDOW_NS, or the process's spill is already behind, the drain
 * sends a new owner's packets to the process's spill instead: one file
 * (unlinked: O_TMPFILE), only appended to, made of frames
 *
 *	+------+-----+----+-----+---------+
 *	| kind | len | id | arg | payload |   struct frame, then len bytes
 *	+------+-----+----+-----+---------+
 *	OPEN   0     id   channel << 32 | tid     a new owner's file to make
 *	DATA   n     id   records    whole packets, numbered as its file
 *	                             counts them (sink.c did)
 *	CLOSE  0     id   0          the owner is done
 *
 * and the splitter (tracerd_spill_work(), in the loop's idle time, a
 * slice of SLICE_NS at a time, so that requests, drains and growth are
 * served in between) reads them in order, makes the files and
 * appends the packets, so every file ends as a direct write would have
 * left it. An owner goes to the spill from its first packet to its last,
 * never half, so its packets stay in order. The drain keeps up with the
 * rings; files come at the file system's pace; tracerd's memory stays
 * flat (the backlog is in the page cache, SPILL_MAX at most a spill).
 *
 * A spill outlives its process directory (detached, then freed once
 * written out); a session's stop is answered once every spill is written
 * out (session.c). An empty spill is cut back to nothing.
 *
 * Single-threaded: tracerd's loop. The spill is tracerd's own file, but
 * its frames are checked as if it were not.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracerd.h"
#include "sink.h"
#include "spill.h"
#include "relay.h"

#define WINDOW_NS	(20 * 1000 * 1000ULL)	/* creation time measured over */
#define SHARE_PCT	25		/* of it making files: spill */
#define SLICE_NS	(2 * 1000 * 1000ULL)	/* splitter work per loop turn */
#define SPILL_MAX	(1ULL << 30)	/* bytes a spill may hold back */
#define READ_CHUNK	(256 * 1024)	/* the splitter's least read */
#define LOG_EVERY_MS	10000		/* "holding back" at most this often */

enum { SPILL_OPEN = 0x5350e001, SPILL_DATA, SPILL_CLOSE };

struct frame {
	uint32_t kind;
	uint32_t len;			/* payload bytes after the frame */
	uint64_t id;
	uint64_t arg;
};

/* An owner the splitter has a file for. */
struct spill_out {
	uint64_t id;
	int fd;				/* -1: its file could not be made */
	uint64_t size;			/* bytes written to it */
	struct tracerd_relay_stream *relay;	/* its file's, streamed */
};

struct tracerd_spill {
	struct tracerd *d;
	struct cds_list_head node;	/* d->spills */
	char *dir;
	pid_t pid;
	int fd;				/* -1 until the first frame */
	uint64_t wr, rd;		/* bytes appended, bytes split */
	uint64_t next_id;
	struct spill_out *out;
	size_t nout, out_cap;
	bool detached;
};

/* ------------------------------------------------------------------ */
/* When to spill                                                       */

bool tracerd_spill_wanted(struct tracerd *d, const struct tracerd_spill *s)
{
	if (s && s->wr > s->rd)
		return true;
	if (d->spill.always)
		return true;
	if (tracer__clock_now() - d->spill.win_start > WINDOW_NS)
		return false;
	return d->spill.win_ns * 100 > WINDOW_NS * SHARE_PCT;
}

void tracerd_spill_note_create(struct tracerd *d, uint64_t ns)
{
	uint64_t now = tracer__clock_now();

	if (now - d->spill.win_start > WINDOW_NS) {
		d->spill.win_start = now;
		d->spill.win_ns = 0;
	}
	d->spill.win_ns += ns;
}

/* ------------------------------------------------------------------ */
/* The drain's side: appending                                         */

struct tracerd_spill *tracerd_spill_new(struct tracerd *d, const char *dir,
					pid_t pid)
{
	struct tracerd_spill *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dir = strdup(dir);
	if (!s->dir) {
		free(s);
		return NULL;
	}
	s->d = d;
	s->pid = pid;
	s->fd = -1;
	s->next_id = 1;
	cds_list_add_tail(&s->node, &d->spill.list);
	return s;
}

/* An unnamed file in dir (a named one unlinked at once where O_TMPFILE
 * is not supported). Returns the fd or a negative errno. */
static int make_file(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	snprintf(path, sizeof(path), "%s/.spill-%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/* The first frame after the spill was empty: say so, now and then. */
static void behind_now(struct tracerd_spill *s)
{
	struct tracerd *d = s->d;
	uint64_t now_ms = tracer__clock_now() / 1000000;

	d->spill.episodes++;
	if (d->spill.logged_ms && now_ms - d->spill.logged_ms < LOG_EVERY_MS)
		return;
	d->spill.logged_ms = now_ms;
	tracerd_log("pid %d: files are made more slowly than threads come; "
		    "holding packets back on disk to write them out after "
		    "(%" PRIu64 " time(s) so far)", (int)s->pid,
		    d->spill.episodes);
}

/* Write n bytes at off, all of them. Returns 0 or a negative errno. */
static int pwrite_all(int fd, const char *buf, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, buf, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		off += (uint64_t)w;
		n -= (size_t)w;
	}
	return 0;
}

/* Append one frame and its payload. Returns 0 or a negative errno (the
 * spill is cut back to what it was). */
static int put_frame(struct tracerd_spill *s, const struct frame *f,
		     const void *payload)
{
	struct iovec v[2] = {
		{ .iov_base = (void *)(uintptr_t)f, .iov_len = sizeof(*f) },
		{ .iov_base = (void *)(uintptr_t)payload, .iov_len = f->len },
	};
	size_t head = sizeof(*f), total = head + f->len, done;
	ssize_t n;
	int ret = 0;

	if (s->fd < 0 && (s->fd = make_file(s->dir)) < 0) {
		ret = s->fd;
		s->fd = -1;
		return ret;
	}
	if (s->wr - s->rd + total > SPILL_MAX)
		return -EFBIG;
	n = pwritev(s->fd, v, 2, (off_t)s->wr);
	if (n < 0 && errno != EINTR)
		ret = -errno;
	done = n < 0 ? 0 : (size_t)n;
	if (!ret && done < head)	/* a short write: the rest in turn */
		ret = pwrite_all(s->fd, (const char *)f + done, head - done,
				 s->wr + done);
	if (!ret && done < total)
		ret = pwrite_all(s->fd, (const char *)payload +
				 (done > head ? done - head : 0),
				 total - (done > head ? done : head),
				 s->wr + (done > head ? done : head));
	if (ret) {
		if (ftruncate(s->fd, (off_t)s->wr) < 0)
			(void)0;	/* the next frame writes over it */
		return ret;
	}
	if (s->wr == s->rd)
		behind_now(s);
	s->wr += total;
	tracerd_spill_kick(s->d);
	return 0;
}

int tracerd_spill_open(struct tracerd_spill *s, int c, uint32_t tid,
		       uint64_t *id)
{
	struct frame f = { .kind = SPILL_OPEN, .id = s->next_id,
			   .arg = (uint64_t)(uint32_t)c << 32 | tid };
	int ret = put_frame(s, &f, NULL);

	if (!ret)
		*id = s->next_id++;
	return ret;
}

int tracerd_spill_data(struct tracerd_spill *s, uint64_t id, const void *buf,
		       size_t n, uint64_t records)
{
	struct frame f = { .kind = SPILL_DATA, .id = id, .arg = records };

	if (n > UINT32_MAX)
		return -EFBIG;
	f.len = (uint32_t)n;
	return put_frame(s, &f, buf);
}

void tracerd_spill_close_owner(struct tracerd_spill *s, uint64_t id)
{
	struct frame f = { .kind = SPILL_CLOSE, .id = id };
	int ret = put_frame(s, &f, NULL);

	if (ret)	/* its file stays open until the spill is done */
		tracerd_log("pid %d: cannot write to the spill in '%s': %s",
			    (int)s->pid, s->dir, strerror(-ret));
}

int tracerd_spill_fd(const struct tracerd_spill *s)
{
	return s->fd;
}

/* ------------------------------------------------------------------ */
/* The splitter                                                        */

static struct spill_out *find_out(struct tracerd_spill *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nout; i++)
		if (s->out[i].id == id)
			return &s->out[i];
	return NULL;
}

static void drop_out(struct tracerd_spill *s, struct spill_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->relay)
		tracerd_relay_closed(o->relay);
	*o = s->out[--s->nout];
}

/* The records of a frame that cannot be written: lost, and told. */
static void lost(struct tracerd_spill *s, uint64_t records, int err)
{
	struct tracerd *d = s->d;

	d->unwritten = d->unwritten > UINT64_MAX - records ? UINT64_MAX :
		       d->unwritten + records;
	tracerd_write_failed(d, s->dir, err);
}

static void split_open(struct tracerd_spill *s, const struct frame *f)
{
	struct spill_out *o;

	if (s->nout == s->out_cap) {
		size_t cap = s->out_cap ? 2 * s->out_cap : 16;
		void *n = realloc(s->out, cap * sizeof(*s->out));

		if (!n) {
			tracerd_write_failed(s->d, s->dir, -ENOMEM);
			return;	/* its packets are counted as lost */
		}
		s->out = n;
		s->out_cap = cap;
	}
	o = &s->out[s->nout++];
	o->id = f->id;
	o->size = 0;
	o->relay = NULL;
	o->fd = tracerd_sink_create_file(s->d, s->dir, (int)(f->arg >> 32),
					 (uint32_t)f->arg, &o->relay);
	if (o->fd < 0) {
		tracerd_write_failed(s->d, s->dir, o->fd);
		o->fd = -1;
	}
}

static void split_data(struct tracerd_spill *s, const struct frame *f,
		       const char *payload)
{
	struct spill_out *o = find_out(s, f->id);
	int ret;

	if (!o || o->fd < 0) {
		lost(s, f->arg, -ENOENT);
		return;
	}
	ret = tracerd_write_all(o->fd, payload, f->len);
	if (!ret) {
		o->size += f->len;
		if (o->relay)
			tracerd_relay_grew(o->relay, o->size, f->arg);
		return;
	}
	if (ftruncate(o->fd, (off_t)o->size) < 0 ||
	    lseek(o->fd, (off_t)o->size, SEEK_SET) < 0)
		(void)0;	/* readers stop at the cut packet */
	lost(s, f->arg, ret);
}

static void split_frame(struct tracerd_spill *s, const struct frame *f,
			const char *payload)
{
	struct spill_out *o;

	switch (f->kind) {
	case SPILL_OPEN:
		split_open(s, f);
		break;
	case SPILL_DATA:
		split_data(s, f, payload);
		break;
	case SPILL_CLOSE:
		o = find_out(s, f->id);
		if (o)
			drop_out(s, o);
		break;
	}
}

/* The read buffer holds at least n bytes. Returns 0 or -ENOMEM. */
static int buf_room(struct tracerd *d, size_t n)
{
	void *b;

	if (d->spill.buf_size >= n)
		return 0;
	b = realloc(d->spill.buf, n);
	if (!b)
		return -ENOMEM;
	d->spill.buf = b;
	d->spill.buf_size = n;
	return 0;
}

/* The rest of s cannot be read: give it up (its records are lost, and
 * counted nowhere: their counts are in what could not be read). Returns
 * false. */
static bool give_up(struct tracerd_spill *s, const char *why)
{
	tracerd_log("pid %d: cannot read back the spill of '%s': %s; "
		    "%" PRIu64 " bytes of packets lost", (int)s->pid, s->dir,
		    why, s->wr - s->rd);
	s->rd = s->wr;
	return false;
}

/* Is frame f, with `left` bytes from it to the spill's end, one we wrote? */
static bool frame_ok(const struct frame *f, uint64_t left)
{
	return f->kind >= SPILL_OPEN && f->kind <= SPILL_CLOSE &&
	       f->len <= left - sizeof(*f);
}

/*
 * Split what one read of s gives, frame by frame, until the slice that
 * began at t0 is over. Returns false when s cannot be read.
 */
static bool split_chunk(struct tracerd_spill *s, uint64_t t0)
{
	struct tracerd *d = s->d;
	uint64_t left = s->wr - s->rd;
	size_t at = 0, want;
	ssize_t n;

	if (buf_room(d, READ_CHUNK))
		return give_up(s, strerror(ENOMEM));
	want = left < d->spill.buf_size ? (size_t)left : d->spill.buf_size;
	n = pread(s->fd, d->spill.buf, want, (off_t)s->rd);
	if (n < (ssize_t)sizeof(struct frame))
		return give_up(s, n < 0 ? strerror(errno) : "cut short");
	while (at + sizeof(struct frame) <= (size_t)n) {
		struct frame f;

		memcpy(&f, (char *)d->spill.buf + at, sizeof(f));
		if (!frame_ok(&f, left - at))
			return give_up(s, "a frame is damaged");
		if (at + sizeof(f) + f.len > (size_t)n) {
			if (at == 0 && buf_room(d, sizeof(f) + f.len))
				return give_up(s, strerror(ENOMEM));
			break;	/* read again, from this frame */
		}
		split_frame(s, &f, (char *)d->spill.buf + at + sizeof(f));
		at += sizeof(f) + f.len;
		if (tracer__clock_now() - t0 >= SLICE_NS)
			break;
	}
	s->rd += at;
	return true;
}

static void free_spill(struct tracerd_spill *s)
{
	while (s->nout > 0)
		drop_out(s, &s->out[0]);
	if (s->fd >= 0)
		close(s->fd);
	cds_list_del(&s->node);
	free(s->out);
	free(s->dir);
	free(s);
}

/* Everything of s is in its files: free it, or start it over. */
static void caught_up(struct tracerd_spill *s)
{
	if (s->detached) {
		free_spill(s);
		return;
	}
	if (s->wr && s->fd >= 0 && ftruncate(s->fd, 0) == 0)
		s->wr = s->rd = 0;
}

void tracerd_spill_detach(struct tracerd_spill *s)
{
	s->detached = true;
	if (s->wr == s->rd)
		free_spill(s);
}

/* The first spill that is behind, NULL: none. */
static struct tracerd_spill *behind(const struct tracerd *d)
{
	struct tracerd_spill *s;

	cds_list_for_each_entry(s, &d->spill.list, node)
		if (s->wr > s->rd)
			return s;
	return NULL;
}

bool tracerd_spill_work(struct tracerd *d)
{
	uint64_t t0 = tracer__clock_now();
	struct tracerd_spill *s;

	while ((s = behind(d)) && tracer__clock_now() - t0 < SLICE_NS) {
		while (s->rd < s->wr && tracer__clock_now() - t0 < SLICE_NS &&
		       split_chunk(s, t0))
			;
		if (s->rd == s->wr)
			caught_up(s);
		else {		/* the others' turn next time */
			cds_list_del(&s->node);
			cds_list_add_tail(&s->node, &d->spill.list);
		}
	}
	return tracerd_spill_pending(d);
}

bool tracerd_spill_pending(const struct tracerd *d)
{
	return behind(d) != NULL;
}

uint64_t tracerd_spill_backlog(const struct tracerd *d)
{
	const struct tracerd_spill *s;
	uint64_t n = 0;

	cds_list_for_each_entry(s, &d->spill.list, node)
		n += s->wr - s->rd;
	return n;
}

void tracerd_spill_free_all(struct tracerd *d)
{
	struct tracerd_spill *s, *tmp;

	cds_list_for_each_entry_safe(s, tmp, &d->spill.list, node)
		free_spill(s);
	free(d->spill.buf);
	d->spill.buf = NULL;
	d->spill.buf_size = 0;
}
