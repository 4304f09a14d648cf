/*
 * salvage.c - the end of a traced process or thread that did not say
 * goodbye: death by any signal, _exit, a thread ending through the raw exit
 * system call, an exec.
 *
 * tracerd watches each process through a pidfd, which becomes readable
 * when the whole thread group has exited (the socket hang-up alone cannot
 * tell a death from an exec, and comes a little earlier). Then:
 *
 *   1. every channel of every buffer is read to its end as a dead writer's
 *      (tracer__rb_salvage): complete sub-buffers, then the committed
 *      records of the open one; records torn mid-write are dropped;
 *   2. where records were torn, a `tracer:torn` event goes after the
 *      thread's last records, in its vital channel file;
 *   3. the death itself, `tracer:process_exit` (status) or
 *      `tracer:process_killed` (signal), timed when tracerd noticed it:
 *      the process's last event, after the main thread's last packet in
 *      its vital file, or in a vital-PID of its own (tell_end());
 *   4. only then is the memory unmapped.
 *
 * Step 1 goes a part per loop turn (tracerd_process_end_soon(): END_STEPS
 * steps, each a pass of the drain over one channel, at most DRAIN_BUDGET
 * packets, or one sub-buffer salvaged; the process waits in d->ending,
 * a uv_idle turns the wheel), so that a process that dies with every ring
 * full holds up neither requests nor the other processes' drains, which
 * run in between. Its state is p->end; nothing else reads the process
 * meanwhile (scan, check, live flush and filter waiters pass over a
 * process that is ending). What must see every ended process finishes
 * the queue first (tracerd_finish_ends(): before a stop, switch,
 * snapshot, new session, and at exit), and tracerd_process_end() on a
 * queued process finishes it at once.
 *
 * The exit status of a process that is not tracerd's child: while it is a
 * zombie, /proc/PID/stat's last field holds it; once its parent reaped it,
 * the pidfd still gives it (PIDFD_GET_INFO with PIDFD_INFO_EXIT, Linux
 * 6.15). One of the two holds at any moment; on older kernels a process
 * reaped very quickly ends with "exit status unknown".
 *
 * Threads: every few scans, each buffer held by a thread whose
 * /proc/PID/task/TID is gone (and whose exit path never released it) is
 * salvaged the same way, marked with `tracer:thread_vanished`, and handed
 * back to the pool: the repair in tracer__rb_salvage() leaves its channels
 * on a clean sub-buffer for the next owner. Small ones at once (up to
 * RECLAIM_BYTES a scan, or the first one up to RECLAIM_AT_ONCE), a
 * larger one in steps per loop turn like an end (p->reclaim,
 * d->reclaiming: after the ends queued), one a scan.
 * This runs only when the process and tracerd see the same thread ids
 * (same pid namespace).
 *
 * These events are call sites of tracerd's own, with ids no program can
 * use (TRACERD_EVENT_BASE and up), described in process.meta and the CTF
 * metadata like any other.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "format.h"
#include "tracerd.h"

#define VANISH_SCANS	8	/* look for vanished threads every N scans */
#define RECLAIM_BYTES	(1u << 20)	/* unread bytes of vanished threads'
					   buffers salvaged at once in one
					   scan, at most: a full 5 MiB one
					   took 7 ms here, four at once held
					   the loop 30-40 ms, and a program
					   writing 50 MB/s meanwhile lost
					   events in CI. A larger one is read
					   in steps (reclaim_soon()), and one
					   the drain is emptying waits for it */

enum {
	EV_EXIT = TRACERD_EVENT_BASE + 1,
	EV_KILLED,
	EV_GONE,
	EV_TORN,
	EV_VANISHED,
	EV_SALVAGE_ERROR,
};

static const struct {
	uint32_t id;
	const char *name, *types, *format;
} daemon_events[] = {
	{ EV_EXIT, "tracer:process_exit", "ii",
	  "pid %d exited with status %d" },
	{ EV_KILLED, "tracer:process_killed", "iiss",
	  "pid %d killed by signal %d (%s)%s" },
	{ EV_GONE, "tracer:process_gone", "is", "pid %d %s" },
	{ EV_TORN, "tracer:torn", "iisi",
	  "tid %d records %d channel %s bytes %d (its thread died while "
	  "writing them: dropped)" },
	{ EV_VANISHED, "tracer:thread_vanished", "is",
	  "thread %d (%s) ended without its exit path; its buffer was "
	  "salvaged and reused" },
	{ EV_SALVAGE_ERROR, "tracer:salvage_error", "s", "%s" },
};

int tracerd_salvage_events(struct tracerd_process *p)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < sizeof(daemon_events) / sizeof(daemon_events[0]) &&
		    !ret; i++)
		ret = tracerd_process_add_site(p, daemon_events[i].id,
					       daemon_events[i].name,
					       daemon_events[i].types,
					       daemon_events[i].format);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Packets of tracerd's own events                                     */

union sarg {
	int64_t i;
	const char *s;
};

struct synth {
	uint64_t words[256];		/* the packet, 8-byte aligned */
	uint64_t len;			/* bytes used */
	uint32_t records;
	uint64_t clock;			/* the last record's time (begin) */
};

static struct tracer_rb_packet *synth_head(struct synth *s)
{
	return (struct tracer_rb_packet *)(void *)s->words;
}

static void synth_begin(struct synth *s, int c, uint64_t instance,
			uint32_t tid, uint64_t ts)
{
	struct tracer_rb_packet *h = synth_head(s);

	memset(s, 0, sizeof(*s));
	h->magic = TRACER_CTF_MAGIC;
	h->stream_id = (uint32_t)c;
	h->stream_instance_id = instance;
	h->timestamp_begin = ts;
	h->timestamp_end = ts;
	h->tid = tid;
	s->len = TRACER_RB_PACKET_SIZE;
	s->clock = ts;
}

/*
 * Append event id at ts with values of types (i: int64, s: string); its
 * header compact when the time allows (rb_layout.h), which it does for
 * records in time order.
 */
static void synth_add(struct synth *s, uint32_t id, const char *types,
		      const union sarg *v, uint64_t ts)
{
	char *base = (char *)s->words, *rec = base + s->len, *p;
	uint64_t room = sizeof(s->words) - s->len, n;
	uint32_t hsize = TRACER_RB_EXTENDED_SIZE;	/* room for either */

	p = rec + hsize;
	for (; *types; types++, v++) {
		n = *types == TRACER_ARG_STRING ? tracer__string_stored(v->s)
						: TRACER__PAYLOAD_WORD;
		if ((uint64_t)(p - rec) + n + 8 > room)
			return;		/* no room: left out */
		if (*types == TRACER_ARG_STRING) {
			p = tracer__store_string(p, v->s);
		} else {
			memcpy(p, &v->i, TRACER__PAYLOAD_WORD);
			p += n;
		}
	}
	n = tracer__rb_record_size(TRACER_RB_COMPACT_SIZE,
				   (uint32_t)(p - rec - hsize));
	if (ts >= s->clock && !((ts - s->clock) >> TRACER_RB_TIME_BITS) &&
	    tracer__rb_compact_fits(id, (uint32_t)n)) {
		hsize = TRACER_RB_COMPACT_SIZE;	/* the payload moves up */
		memmove(rec + hsize, rec + TRACER_RB_EXTENDED_SIZE,
			(size_t)(p - rec) - TRACER_RB_EXTENDED_SIZE);
		p -= TRACER_RB_EXTENDED_SIZE - hsize;
	}
	n = tracer__rb_record_size(0, (uint32_t)(p - rec));
	memset(p, 0, n - (uint64_t)(p - rec));
	tracer__rb_header_put(rec, hsize == TRACER_RB_COMPACT_SIZE, id,
			      (uint32_t)n, ts, 0);
	s->len += n;
	s->records++;
	s->clock = ts;
	synth_head(s)->timestamp_end = ts;
}

/* The packet's sizes, as its events left them. */
static void synth_close(struct synth *s)
{
	struct tracer_rb_packet *h = synth_head(s);

	h->content_size = s->len * 8;
	h->packet_size = s->len * 8;
}

static void synth_info(struct synth *s, struct tracer_rb_packet_info *info)
{
	struct tracer_rb_packet *h = synth_head(s);

	synth_close(s);
	memset(info, 0, sizeof(*info));
	info->timestamp_begin = h->timestamp_begin;
	info->timestamp_end = h->timestamp_end;
	info->content_bytes = s->len;
	info->records = s->records;
	info->stream_instance_id = h->stream_instance_id;
	info->tid = h->tid;
}

/* The instance id of b's current owner. */
static uint64_t owner_instance(const struct tracerd_process *p,
			       const struct tracerd_buffer *b)
{
	uint64_t word = __atomic_load_n(&b->desc->state, __ATOMIC_ACQUIRE);

	return (uint64_t)(b - p->pool.buf) << 32 |
	       (TRACER_BUF_GEN(word) & 0xffffffffu);
}

/* What salvage found damaged, logged (at most TRACERD_RATE_BURST lines of
 * the process's every 10 s: a process can damage its buffers endlessly). */
static void log_damage(struct tracerd_process *p, const char *what)
{
	tracerd_log_rated(&p->log_rate, "%s", what);
}

/* Events about the owner of b, into its vital channel file. */
static void emit_owner(struct tracerd_process *p, struct tracerd_buffer *b,
		       struct synth *s)
{
	struct tracer_rb_packet_info info;
	struct tracerd_stream *st = &b->st[TRACER_CHANNEL_VITAL];

	synth_info(s, &info);
	info.events_discarded = st->lost_seen;	/* tells no loss */
	tracerd_emit_copy(p, b, TRACER_CHANNEL_VITAL, s->words, &info);
}

/* ------------------------------------------------------------------ */
/* Reading a dead writer's channels                                    */

/* Is rec a record of a call site of p, with a payload of its types? */
static bool record_check(void *arg, const struct tracer_rb_record *rec)
{
	const struct tracerd_process *p = arg;
	const struct tracer__site *cs = tracerd_process_site(p, rec->id);
	size_t off = 0;
	struct tracer__value v;
	const char *t;

	if (!cs)
		return false;
	for (t = cs->types; *t; t++)
		if (tracer__payload_next(*t, rec->payload, rec->payload_size,
					 &off, &v))
			return false;
	return tracer__rb_record_size(rec->header_size, (uint32_t)off) ==
	       rec->size;
}

static void add_up(struct tracerd_salvage_sum *sum,
		   const struct tracer_rb_salvage *s,
		   const struct tracer_rb_packet_info *info)
{
	sum->torn += s->torn;
	sum->torn_bytes += s->torn_bytes;
	if (info->content_bytes && info->timestamp_end > sum->last_ts)
		sum->last_ts = info->timestamp_end;
}

/*
 * One step of reading channel c of b to its end, the writer gone: a pass
 * of the drain over its complete sub-buffers (at most DRAIN_BUDGET
 * packets), and once none is left, the salvage of the next sub-buffer
 * (tracer__rb_salvage: the committed records of one that never closed).
 * Returns true when the channel is done.
 */
static bool salvage_step(struct tracerd_process *p, struct tracerd_buffer *b,
			 int c, struct tracerd_end_job *j)
{
	struct tracer_rb_reader *r = &b->rd[c];
	struct tracerd_salvage_sum *sum = &j->sum[c];
	struct tracer_rb_packet_info info;
	struct tracer_rb_salvage s;
	int ret;

	if (b->broken[c] || j->guard >= r->geo.subbuf_count + 4)
		return true;
	if (!j->salvaging && tracerd_drain_some(p, b, c))
		return false;		/* more of them: the next step */
	j->salvaging = false;		/* after this one, drain again */
	j->guard++;
	ret = tracer__rb_salvage(r, tracerd_batch_room(p, r->geo.subbuf_size),
				 tracerd_batch_free(p), record_check, p,
				 j->now, &info, &s);
	if (ret == -ENODATA || ret == -ENOBUFS)
		return true;
	if (ret == -EAGAIN)
		return false;
	if (ret == -EIO || ret == -EBADMSG || s.unreadable)
		snprintf(sum->error, sizeof(sum->error), "pid %d buffer %u %s "
			 "channel: %s", (int)p->pid,
			 (unsigned)(b - p->pool.buf), tracerd_channel_name(c),
			 r->error);
	if (ret == -EIO)
		return true;
	b->st[c].pending += s.lost;
	if (ret == 0 && info.content_bytes)
		tracerd_emit_batch(p, b, c, &info);
	add_up(sum, &s, &info);
	return false;
}

/*
 * A time after every record of b's current owner in its files (and after
 * ts): tracerd's own events about it come last in its streams.
 */
static uint64_t after_owner(const struct tracerd_process *p,
			    const struct tracerd_buffer *b, uint64_t ts)
{
	uint64_t inst = owner_instance(p, b);
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (b->st[c].instance == inst && b->st[c].last_end > ts)
			ts = b->st[c].last_end;
	return ts ? ts : tracerd_now(p->d);
}

/* Say in the trace what could not be kept of b's channel c. */
static void tell_salvage(struct tracerd_process *p, struct tracerd_buffer *b,
			 int c, const struct tracerd_salvage_sum *sum)
{
	uint32_t tid = b->desc->owner_tid;
	struct synth s;
	union sarg v[4];

	if (!sum->torn && !sum->error[0])
		return;
	synth_begin(&s, TRACER_CHANNEL_VITAL, owner_instance(p, b), tid,
		    after_owner(p, b, sum->last_ts));
	if (sum->torn) {
		v[0].i = tid;
		v[1].i = sum->torn;
		v[2].s = tracerd_channel_name(c);
		v[3].i = (int64_t)sum->torn_bytes;
		synth_add(&s, EV_TORN, "iisi", v,
			  synth_head(&s)->timestamp_end);
	}
	if (sum->error[0]) {
		v[0].s = sum->error;
		synth_add(&s, EV_SALVAGE_ERROR, "s", v,
			  synth_head(&s)->timestamp_end);
		log_damage(p, sum->error);
	}
	emit_owner(p, b, &s);
}

/* Both channels of b are read: say what could not be kept, go on to the
 * next buffer. */
static void buffer_done(struct tracerd_process *p, struct tracerd_buffer *b,
			struct tracerd_end_job *j)
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		tell_salvage(p, b, c, &j->sum[c]);
		j->torn += j->sum[c].torn;
	}
	memset(j->sum, 0, sizeof(j->sum));
	j->buf++;
	j->chan = 0;
	j->guard = 0;
	j->now = tracerd_now(p->d);
}

/*
 * Steps of j on b's channels, from j->chan on, taken from *steps; true
 * when both channels are read (buffer_done() comes next).
 */
static bool channel_steps(struct tracerd_process *p, struct tracerd_buffer *b,
			  struct tracerd_end_job *j, uint32_t *steps)
{
	while (j->chan < TRACER_POOL_CHANNELS) {
		if (*steps == 0)
			return false;
		(*steps)--;
		if (salvage_step(p, b, j->chan, j)) {
			tracerd_flush_channel_losses(p, b, j->chan);
			j->chan++;
			j->guard = 0;
			j->salvaging = false;
		}
	}
	return true;
}

/*
 * At most `steps` steps of the salvage of every buffer of p, whose
 * writers are gone (see the top); returns true when all are done.
 */
static bool salvage_steps(struct tracerd_process *p, uint32_t steps)
{
	struct tracerd_end_job *j = &p->end;

	while (j->buf < p->pool.nbuf) {
		if (!channel_steps(p, &p->pool.buf[j->buf], j, &steps))
			return false;
		buffer_done(p, &p->pool.buf[j->buf], j);
	}
	return true;
}

/* Both channels of b at once (a vanished thread's buffer); returns the
 * records torn. */
static uint32_t salvage_buffer(struct tracerd_process *p,
			       struct tracerd_buffer *b)
{
	struct tracerd_end_job j = { .now = tracerd_now(p->d) };
	uint32_t steps = UINT32_MAX;

	while (!channel_steps(p, b, &j, &steps))
		steps = UINT32_MAX;
	buffer_done(p, b, &j);
	return j.torn;
}

/* ------------------------------------------------------------------ */
/* The end of a process                                                */

struct pidfd_info_v0 {			/* struct pidfd_info, Linux 6.13+ */
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid,
		 fsgid;
	int32_t exit_code;
};

#define PIDFD_GET_INFO_V0	_IOWR(0xFF, 11, struct pidfd_info_v0)
#define PIDFD_INFO_EXIT_BIT	(1ULL << 3)

/* The wait status from the pidfd, once the process has been reaped. */
static bool status_from_pidfd(int pidfd, int *status)
{
	struct pidfd_info_v0 info;

	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_INFO_EXIT_BIT;
	if (ioctl(pidfd, PIDFD_GET_INFO_V0, &info) < 0 ||
	    !(info.mask & PIDFD_INFO_EXIT_BIT))
		return false;
	*status = info.exit_code;
	return true;
}

/* The wait status from /proc while the process is a zombie. */
static bool status_from_proc(pid_t pid, int *status)
{
	char path[64], buf[2048], *close_paren, *last;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] != ' ' || close_paren[2] != 'Z')
		return false;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	last = strrchr(close_paren, ' ');
	if (!last)
		return false;
	*status = atoi(last + 1);
	return true;
}

static bool exit_status(const struct tracerd_process *p, int *status)
{
	return status_from_pidfd(p->pidfd, status) ||
	       status_from_proc(p->pid, status) ||
	       status_from_pidfd(p->pidfd, status);
}

/* Why a process that lives on is not traced any more. */
static const char *untraced_why(struct tracerd_process *p, char *buf,
				size_t size)
{
	snprintf(buf, size, "is not traced from here: it lost its "
		 "connection to tracerd and cannot make a new one (%s)",
		 strerror(tracerd_process_untraced(p)));
	tracerd_log("pid %d %s", (int)p->pid, buf);
	return buf;
}

/*
 * The buffer whose vital file is the main thread's (tid == pid) and still
 * open: the process's end goes there, after its last packet, and costs no
 * file of its own (a file creation is most of what a short process costs
 * tracerd on a slow file system). NULL: none (flight mode, another pid
 * namespace, a main thread that ended first and whose buffer moved on).
 */
static struct tracerd_buffer *main_vital(struct tracerd_process *p)
{
	struct tracerd_buffer *best = NULL;
	uint32_t i;

	for (i = 0; i < p->pool.nbuf; i++) {
		const struct tracerd_stream *st =
			&p->pool.buf[i].st[TRACER_CHANNEL_VITAL];

		if (st->fd >= 0 && st->tid == (uint32_t)p->pid &&
		    (!best || st->last_end >
			      best->st[TRACER_CHANNEL_VITAL].last_end))
			best = &p->pool.buf[i];
	}
	return best;
}

/* The end packet s into the main thread's vital file (main_vital()). */
static void end_in_main(struct tracerd_process *p, struct tracerd_buffer *b,
			struct synth *s)
{
	struct tracer_rb_packet_info info;

	synth_info(s, &info);
	info.events_discarded = b->st[TRACER_CHANNEL_VITAL].lost_seen;
	tracerd_emit_copy(p, b, TRACER_CHANNEL_VITAL, s->words, &info);
}

/* The death (or exec) as the process's last event: in the main thread's
 * vital file, else in a vital-PID of its own. */
static void tell_end(struct tracerd_process *p, enum tracerd_end how)
{
	struct tracerd_buffer *b = main_vital(p);
	uint64_t now = tracerd_now(p->d);
	struct synth s;
	union sarg v[4];
	char sig[24], why[160];
	const char *ev;
	int status;
	bool known = how == TRACERD_END_DIED && exit_status(p, &status);

	if (b && b->st[TRACER_CHANNEL_VITAL].last_end > now)
		now = b->st[TRACER_CHANNEL_VITAL].last_end;
	synth_begin(&s, TRACER_CHANNEL_VITAL,
		    b ? b->st[TRACER_CHANNEL_VITAL].instance
		      : TRACERD_END_INSTANCE, (uint32_t)p->pid, now);
	v[0].i = p->pid;
	if (known && WIFSIGNALED(status)) {
		v[1].i = WTERMSIG(status);
		snprintf(sig, sizeof(sig), "SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "?");
		v[2].s = sig;
		v[3].s = WCOREDUMP(status) ? ", core dumped" : "";
		synth_add(&s, EV_KILLED, "iiss", v, now);
		ev = "tracer:process_killed";
		tracerd_log("pid %d was killed by signal %d (%s)%s",
			    (int)p->pid, WTERMSIG(status), sig, v[3].s);
	} else if (known) {
		v[1].i = WEXITSTATUS(status);
		synth_add(&s, EV_EXIT, "ii", v, now);
		ev = "tracer:process_exit";
		tracerd_log("pid %d exited with status %d", (int)p->pid,
			    WEXITSTATUS(status));
	} else {
		v[1].s = how == TRACERD_END_DIED ? "ended; exit status unknown"
		       : how == TRACERD_END_EXEC ? "replaced its program (exec)"
		       : how == TRACERD_END_UNTRACED ? untraced_why(p, why,
								   sizeof(why))
		       : "closed its connection to tracerd";
		synth_add(&s, EV_GONE, "is", v, now);
		ev = "tracer:process_gone";
	}
	tracerd_triggers_own(p, ev);
	if (b) {
		end_in_main(p, b, &s);
		return;
	}
	synth_close(&s);
	tracerd_write_end(p, s.words, s.len);
}

#define END_STEPS	2	/* steps of an end per loop turn (1 MiB, a
				   drain pass's worth: 2 MiB lost events of
				   a program recording meanwhile under
				   AddressSanitizer on a loaded CI machine) */
#define RECLAIM_AT_ONCE	(8u << 20)	/* a vanished thread's buffer with
					   up to this unread is read at once,
					   the first of a scan (the default's
					   5 MiB: 7 ms here); a larger one in
					   steps. Read in steps, 48 of 5 MiB
					   one a scan, a program recording
					   50 MB/s meanwhile lost events (the
					   drain then writes out the repaired
					   rings too, at its full speed) */
#define RECLAIM_STEPS	1	/* of a vanished thread's buffer (512 KiB):
				   nobody waits for it */

/* The end of p begins: nothing else of it runs from now on. */
static void begin_end(struct tracerd_process *p, enum tracerd_end how)
{
	tracerd_end_forget(p);	/* a reclaim under way: the end reads all */
	p->ending = true;
	p->end.how = how;
	p->end.now = tracerd_now(p->d);
	/* Call sites it sent before dying describe records we are to read. */
	if (p->client)
		tracerd_client_read_all(p->client);
	tracerd_triggers_scan_ending(p);	/* before the end reads them */
}

/* Its buffers are read: its end in the trace, then p is freed. */
static void finish_end(struct tracerd_process *p)
{
	enum tracerd_end how = p->end.how;

	if (p->end.torn)
		tracerd_log("pid %d: %u record(s) torn mid-write dropped",
			    (int)p->pid, p->end.torn);
	tell_end(p, how);
	/* A flight recorder's last events, for the next snapshot. */
	if (p->in_session && p->d->session_id && !p->d->stopping &&
	    p->d->sess.mode == TRACER_MODE_FLIGHT)
		tracerd_ended_add(p->d, p->files.dir);
	tracerd_process_remove(p);
}

/* No end or reclaim left to go on with in the loop's turns. */
static void turns_maybe_done(struct tracerd *d)
{
	if (cds_list_empty(&d->ending) && cds_list_empty(&d->reclaiming))
		uv_idle_stop(&d->end_idle);
}

/* Out of the queues of work in steps (also when p is freed): its end,
 * and a reclaim under way (its end reads that buffer too). */
void tracerd_end_forget(struct tracerd_process *p)
{
	if (p->reclaim.queued) {
		cds_list_del(&p->reclaim.node);
		p->reclaim.queued = false;
	}
	if (p->end.queued) {
		cds_list_del(&p->end.node);
		p->end.queued = false;
	}
	turns_maybe_done(p->d);
}

static void give_back(struct tracerd_process *p, struct tracerd_buffer *b,
		      uint64_t word);

/* At most `steps` steps of p's reclaim; true once its buffer is back. */
static bool reclaim_steps(struct tracerd_process *p, uint32_t steps)
{
	struct tracerd_reclaim *rc = &p->reclaim;
	struct tracerd_buffer *b = &p->pool.buf[rc->job.buf];

	if (!channel_steps(p, b, &rc->job, &steps))
		return false;
	buffer_done(p, b, &rc->job);
	cds_list_del(&rc->node);
	rc->queued = false;
	turns_maybe_done(p->d);
	give_back(p, b, rc->word);
	/* The next scan looks on: one large one a scan at most, so that
	 * the loop has room between them (back to back, a program recording
	 * 50 MB/s meanwhile lost events under AddressSanitizer in CI). */
	p->vanish_scan = VANISH_SCANS;
	return true;
}

void tracerd_process_end(struct tracerd_process *p, enum tracerd_end how)
{
	if (p->ending && !p->end.queued)
		return;		/* at work further up the stack */
	if (!p->ending)
		begin_end(p, how);
	tracerd_end_forget(p);
	how = p->end.how;	/* as it began */
	if (how == TRACERD_END_DIED || how == TRACERD_END_EXEC) {
		while (!salvage_steps(p, UINT32_MAX))
			;
	} else if (tracerd_process_flush(p)) {
		tracerd_log("pid %d: records being written when it hung up "
			    "are lost", (int)p->pid);
	}
	finish_end(p);
}

/* A loop turn: END_STEPS steps of the first end queued, or of the first
 * reclaim when no end is. */
static void on_end_turn(uv_idle_t *h)
{
	struct tracerd *d = h->data;
	struct tracerd_process *p;

	if (cds_list_empty(&d->ending)) {
		if (cds_list_empty(&d->reclaiming)) {
			uv_idle_stop(h);
			return;
		}
		p = cds_list_first_entry(&d->reclaiming,
					 struct tracerd_process, reclaim.node);
		if (!reclaim_steps(p, RECLAIM_STEPS))
			tracerd_priority_note(d);
		return;
	}
	p = cds_list_first_entry(&d->ending, struct tracerd_process,
				 end.node);
	if (!salvage_steps(p, END_STEPS)) {
		tracerd_priority_note(d);
		return;
	}
	tracerd_end_forget(p);
	finish_end(p);
}

void tracerd_process_end_soon(struct tracerd_process *p,
			      enum tracerd_end how)
{
	struct tracerd *d = p->d;

	if (p->ending)
		return;
	/* A stop or the exit writes everything now: no end is left behind
	 * them. */
	if (d->stopping || d->quitting ||
	    (how != TRACERD_END_DIED && how != TRACERD_END_EXEC)) {
		tracerd_process_end(p, how);
		return;
	}
	begin_end(p, how);
	p->end.queued = true;
	cds_list_add_tail(&p->end.node, &d->ending);
	uv_idle_start(&d->end_idle, on_end_turn);
}

void tracerd_finish_ends(struct tracerd *d)
{
	struct tracerd_process *p;

	while (!cds_list_empty(&d->reclaiming)) {
		p = cds_list_first_entry(&d->reclaiming,
					 struct tracerd_process, reclaim.node);
		while (!reclaim_steps(p, UINT32_MAX))
			;
	}
	while (!cds_list_empty(&d->ending)) {
		p = cds_list_first_entry(&d->ending, struct tracerd_process,
					 end.node);
		tracerd_process_end(p, p->end.how);
	}
}

void tracerd_ends_init(struct tracerd *d)
{
	CDS_INIT_LIST_HEAD(&d->ending);
	CDS_INIT_LIST_HEAD(&d->reclaiming);
	uv_idle_init(d->loop, &d->end_idle);
	d->end_idle.data = d;
}

/* ------------------------------------------------------------------ */
/* Watching: pidfd and threads                                         */

/* p (serial) is still registered? */
static struct tracerd_process *find_serial(struct tracerd *d, uint64_t serial)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->serial == serial)
			return p;
	return NULL;
}

/*
 * p's pid has ended. Its next image may have connected meanwhile, its
 * Register not read yet: then p exec()ed (tracerd_process_replaced()
 * ends it so), and the death is the next image's, told by that one's
 * pidfd. Otherwise p died. May free p.
 */
static void pid_ended(struct tracerd_process *p)
{
	struct tracerd *d = p->d;
	uint64_t serial = p->serial;

	tracerd_server_take_in_pid(d, p->pid);
	p = find_serial(d, serial);
	if (p && !p->ending)
		tracerd_process_end_soon(p, TRACERD_END_DIED);
}

static void on_pidfd(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	uv_poll_stop(h);
	pid_ended(h->data);
}

/* The pid a pidfd names (/proc/self/fdinfo), -1 once it is reaped, or
 * 0 when fd is no pidfd. */
static long pidfd_pid(int fd)
{
	char path[64], line[128];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

int tracerd_give_pidfd(struct tracerd_process *p, int fd)
{
	long pid = fd >= 0 ? pidfd_pid(fd) : 0;

	/* Another live process's: refused (a reaped one's cannot be told
	 * apart, and would only end this process's own trace early). */
	if (pid != p->pid && pid != -1) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = fd;
	return 0;
}

int tracerd_watch_pid(struct tracerd_process *p)
{
	if (p->pidfd < 0)
		p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (p->pidfd < 0)
		return -errno;
	uv_poll_init(p->d->loop, &p->pid_poll, p->pidfd);
	p->pid_poll.data = p;
	uv_poll_start(&p->pid_poll, UV_READABLE, on_pidfd);
	return 0;
}

bool tracerd_pid_exited(const struct tracerd_process *p)
{
	struct pollfd pf = { .fd = p->pidfd, .events = POLLIN };

	return p->pidfd >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

/* Is thread tid of p gone? (ENOENT only: any other error says alive.) */
static bool thread_gone(const struct tracerd_process *p, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32, (int)p->pid,
		 tid);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

/* b, whose owner vanished, is read: say so, give it back to the pool. */
static void give_back(struct tracerd_process *p, struct tracerd_buffer *b,
		      uint64_t word)
{
	char name[17];
	union sarg v[2];
	struct synth s;
	uint32_t tid = b->desc->owner_tid;
	uint64_t now = after_owner(p, b, tracerd_now(p->d));

	memcpy(name, b->desc->thread_name, 16);
	name[16] = '\0';
	synth_begin(&s, TRACER_CHANNEL_VITAL, owner_instance(p, b), tid, now);
	v[0].i = tid;
	v[1].s = name;
	synth_add(&s, EV_VANISHED, "is", v, now);
	emit_owner(p, b, &s);
	tracerd_log_rated(&p->log_rate, "pid %d: thread %" PRIu32 " (%s) "
			  "ended without its exit path; buffer %u salvaged "
			  "and reused", (int)p->pid, tid, name,
			  (unsigned)(b - p->pool.buf));
	tracerd_buffer_release(p, b, word);
}

/* Bytes of b no reader has read yet, and the sum of its read counts. */
static uint64_t unread_bytes(const struct tracerd_buffer *b, uint64_t *reads)
{
	uint64_t n = 0, u, size;
	int c;

	*reads = 0;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		const struct tracer_rb_reader *r = &b->rd[c];

		size = r->geo.subbuf_size * r->geo.subbuf_count;
		u = TRACER_READ_ONCE(r->hdr->write_count) - r->read_count;
		n += u < size ? u : size;
		*reads += r->read_count;
	}
	return n;
}

/* Salvage b, whose owner vanished, at once; give it back to the pool. */
static void reclaim(struct tracerd_process *p, struct tracerd_buffer *b,
		    uint64_t word)
{
	salvage_buffer(p, b);
	give_back(p, b, word);
}

/* Read b, whose owner vanished, a few steps per loop turn (on_end_turn());
 * then give it back. */
static void reclaim_soon(struct tracerd_process *p, struct tracerd_buffer *b,
			 uint64_t word)
{
	struct tracerd_reclaim *rc = &p->reclaim;

	memset(&rc->job, 0, sizeof(rc->job));
	rc->job.buf = (uint32_t)(b - p->pool.buf);
	rc->job.now = tracerd_now(p->d);
	rc->word = word;
	rc->queued = true;
	cds_list_add_tail(&rc->node, &p->d->reclaiming);
	uv_idle_start(&p->d->end_idle, on_end_turn);
}

enum reclaim_look { KEPT, RECLAIMED, LATER };

/*
 * A buffer is reclaimed when two looks, VANISH_SCANS scans apart, saw the
 * same owner (state word and tid) and its thread gone: a thread that has
 * just taken a buffer shows its predecessor's tid for an instant, never
 * for a whole period. Its unread bytes count against *budget: one with
 * more than the budget waits while the drain empties it (its read counts
 * moved since the last look), or for the next scan when this one has
 * reclaimed others already (first: none yet: then it is read at once,
 * or in steps past RECLAIM_AT_ONCE, reclaim_soon(), the scans after
 * waiting for it). LATER: no more in this scan.
 */
static enum reclaim_look check_owner(struct tracerd_process *p,
				     struct tracerd_buffer *b,
				     uint64_t *budget, bool first)
{
	uint64_t word = __atomic_load_n(&b->desc->state, __ATOMIC_ACQUIRE);
	uint32_t tid = TRACER_READ_ONCE(b->desc->owner_tid);
	bool seen = b->gone_word == word && b->gone_tid == tid;
	uint64_t reads, cost = unread_bytes(b, &reads);
	bool draining = reads != b->gone_read;

	b->gone_word = 0;
	if (TRACER_BUF_STATE(word) != TRACER_BUF_IN_USE || tid == 0 ||
	    !thread_gone(p, tid))
		return KEPT;
	b->gone_word = word;	/* seen: the next look may reclaim it */
	b->gone_tid = tid;
	b->gone_read = reads;
	if (!seen || tracerd_pid_exited(p))
		return KEPT;
	if (cost > *budget && (draining || !first))
		return draining ? KEPT : LATER;
	b->gone_word = 0;
	if (cost > RECLAIM_AT_ONCE) {	/* the first, a large one: in steps */
		reclaim_soon(p, b, word);
		return LATER;
	}
	*budget -= cost < *budget ? cost : *budget;
	reclaim(p, b, word);
	return RECLAIMED;
}

/*
 * Every VANISH_SCANS scans, the buffers whose owner vanished. A reclaim
 * reads what is left of a buffer: after RECLAIM_BYTES of them the rest
 * waits for the next scan; the first may be larger, up to RECLAIM_AT_ONCE,
 * and one past that is read a few steps per loop turn (a process whose
 * buffers all name threads long gone holds up the loop no more than one
 * buffer of RECLAIM_AT_ONCE per scan, and RECLAIM_STEPS per turn).
 */
static void reap_threads(struct tracerd_process *p)
{
	uint32_t i, n = 0, nbuf = p->pool.nbuf;
	uint64_t budget = RECLAIM_BYTES;
	enum reclaim_look look = KEPT;

	/* (A flight recorder keeps a vanished thread's last events in its
	 * buffer for the snapshots, as tracerd(8) says.) */
	if (!p->same_pidns || !p->client || p->reclaim.queued ||
	    tracerd_flight_recording(p->d) || ++p->vanish_scan < VANISH_SCANS)
		return;
	p->vanish_scan = 0;
	if (p->vanish_from >= nbuf)
		p->vanish_from = 0;
	for (i = 0; i < nbuf; i++) {
		look = check_owner(p, &p->pool.buf[(p->vanish_from + i) % nbuf],
				   &budget, n == 0);
		if (look == LATER)
			break;
		n += look == RECLAIMED;
	}
	if (look != LATER && i == nbuf)
		return;
	p->vanish_from = (p->vanish_from + i) % nbuf;
	p->vanish_scan = VANISH_SCANS;	/* on at the next scan */
}

void tracerd_process_replaced(struct tracerd *d, pid_t pid)
{
	struct tracerd_process *p, *tmp;

	cds_list_for_each_entry_safe(p, tmp, &d->processes, node) {
		if (p->pid != pid)
			continue;
		/* exec closed its socket; we may not have seen it yet. What
		 * it sent first (its pool, its call sites: a process that
		 * did not wait for our reply) is read before its buffers, and
		 * the connection closed after (tracerd_process_remove()). */
		tracerd_process_end(p, TRACERD_END_EXEC);
	}
}

void tracerd_process_check(struct tracerd_process *p)
{
	if (p->ending)
		return;		/* its end is under way, in steps */
	if (p->client) {
		reap_threads(p);
		return;
	}
	/*
	 * Alive without a connection: it is connecting again (resume), or
	 * ran exec (its new image registers: tracerd_process_replaced()),
	 * or says in its pool line that it cannot; else it stays, drained,
	 * until its pidfd tells its death.
	 */
	if (tracerd_pid_exited(p))
		pid_ended(p);
	else if (tracerd_process_untraced(p))
		tracerd_process_end(p, TRACERD_END_UNTRACED);
}
