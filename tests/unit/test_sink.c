/*
 * test_sink.c - a process's channel files as tracerd writes them
 * (tracerd/sink.c), driven directly: a ring written by a real writer is
 * drained into CHANNEL-TID with every record, its packets numbered as the
 * file counts them; the next owner of the buffer gets a file of its own;
 * a ring's losses are told in the file (events_discarded) and add up.
 * The same when files are made too slowly and owners are held back in
 * the spill (tracerd/spill.c): no file until the splitter runs, then the
 * same files. A thread's name from its start event. A pass of the drain
 * over many full rings writes a bounded part of them, and the next pass
 * goes on with the next buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracerd_stubs.h"
#include "tracerd/sink.h"
#include "tracerd/spill.h"
#include "tap.h"

static struct tracerd d;
static char dir1[] = "/tmp/test_sink.XXXXXX";
static char dir2[] = "/tmp/test_sink.XXXXXX";
static const char *dir = dir1;		/* the process directory in use */

static struct tracerd_process *new_process(void)
{
	struct tracerd_process *p = calloc(1, sizeof(*p));
	int fd;

	if (!p)
		bail_out("calloc");
	tracerd_config_defaults(&d.cfg);
	if (!d.spill.list.next)
		CDS_INIT_LIST_HEAD(&d.spill.list);
	d.session_id = 1;
	p->d = &d;
	p->pid = 100;
	p->in_session = true;
	fd = tracerd_pool_create(p);
	if (fd < 0)
		bail_out("no pool");
	close(fd);
	p->files.dir = strdup(dir);
	p->files.meta = tmpfile();
	return p;
}

/* A writer on buffer b's default ring, as thread tid, the buffer's
 * owner number gen (as libtracer's pool.c stamps its packets). */
static void writer(struct tracerd_process *p, struct tracer_rb_writer *w,
		   uint32_t b, uint32_t tid, uint32_t gen)
{
	struct tracer_rb_reader *r = &p->pool.buf[b].rd[TRACER_CHANNEL_DEFAULT];

	if (tracer__rb_writer_attach(w, (void *)(uintptr_t)r->hdr,
				     r->geo.region_size, tid, NULL))
		bail_out("writer attach");
	w->stream_instance_id = (uint64_t)b << 32 | gen;
}

/* n records of 2 u64 each; returns how many were accepted. */
static unsigned put(struct tracer_rb_writer *w, unsigned n)
{
	struct tracer_rb_ctx ctx;
	unsigned i, done = 0;

	for (i = 0; i < n; i++)
		if (tracer__rb_reserve(w, &ctx, 7, 16) == 0) {
			((uint64_t *)ctx.payload)[0] = i;
			((uint64_t *)ctx.payload)[1] = ~(uint64_t)i;
			tracer__rb_commit(w, &ctx);
			done++;
		}
	return done;
}

struct file_sum {
	uint64_t records, discarded, packets;
	uint32_t tid;			/* of the last packet */
	bool seq_in_order;
};

/* dir/NAME in *buf (malloc'd, *size bytes); 0 or -errno (no file). */
static int read_file(const char *name, char **buf, uint64_t *size)
{
	char path[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf || read(fd, *buf, (size_t)st.st_size) != st.st_size)
		bail_out("read %s", path);
	close(fd);
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Walk the packets of dir/NAME: records, the last events_discarded. */
/* The records of the packet h (room bytes of file from it). */
static uint64_t records_of(const struct tracer_rb_packet *h, uint64_t room)
{
	uint64_t at = sizeof(*h), end = h->content_size / 8, n = 0;
	uint64_t clock = h->timestamp_begin;
	struct tracer_rb_record rec;

	if (end > room)
		return 0;
	for (; at < end && !tracer__rb_record_get((const char *)h + at,
						  end - at, &clock, &rec);
	     at += rec.size)
		n++;
	return n;
}

static int sum_file(const char *name, struct file_sum *s)
{
	uint64_t off = 0, size;
	char *buf;
	int ret;

	memset(s, 0, sizeof(*s));
	s->seq_in_order = true;
	ret = read_file(name, &buf, &size);
	if (ret)
		return ret;
	while (off + sizeof(struct tracer_rb_packet) <= size) {
		const struct tracer_rb_packet *h = (const void *)(buf + off);

		if (h->packet_seq_num != s->packets)
			s->seq_in_order = false;
		s->records += records_of(h, size - off);
		s->discarded = h->events_discarded;
		s->tid = h->tid;
		s->packets++;
		off += h->packet_size / 8;
	}
	free(buf);
	return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
		      struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(path);
}

static void drain_all(struct tracerd_process *p)
{
	int i;

	for (i = 0; i < 100 && tracerd_sink_drain(p); i++)
		;
	tracerd_process_flush(p);
}

/* What the drain held back in the spill, written out as tracerd's loop
 * does when idle: files made slowly (a loaded machine) send owners there
 * even when the test did not ask for it. */
static void spill_out(void)
{
	while (tracerd_spill_work(&d))
		;
}

/*
 * Thread tid, owner number gen of buffer b, writes n records and closes its
 * sub-buffer; tracerd drains. Returns the records the ring took.
 */
static unsigned owner_writes(struct tracerd_process *p, uint32_t b,
			     uint32_t tid, uint32_t gen, unsigned n)
{
	struct tracer_rb_writer w;
	unsigned took;

	writer(p, &w, b, tid, gen);
	took = put(&w, n);
	tracer__rb_flush(&w);
	drain_all(p);
	return took;
}

/* sum_file() of default-TID. */
static int sum_tid(uint32_t tid, struct file_sum *s)
{
	char name[64];

	snprintf(name, sizeof(name), "default-%u", tid);
	return sum_file(name, s);
}

/* The owners' files as the direct run (the first) wrote them. */
struct run {
	unsigned n101, n102, n103;
	struct file_sum a, b, c;
	int ra, rb, rc;
	uint64_t packets;
};

/* Three owners of the same process, in turn, as the tests below check. */
static void three_owners(struct tracerd_process *p, struct run *r,
			 bool split)
{
	r->n101 = owner_writes(p, 0, 101, 1, 2000);
	r->n102 = owner_writes(p, 0, 102, 2, 10);
	r->n103 = owner_writes(p, 1, 103, 1, 200000);
	r->packets = p->packets_written;
	if (split) {
		ok(sum_tid(101, &r->a) == -ENOENT && sum_tid(103, &r->c) ==
		   -ENOENT && tracerd_spill_pending(&d),
		   "held back: no file made while the spill is behind");
		spill_out();
		ok(!tracerd_spill_pending(&d) && tracerd_spill_backlog(&d) == 0,
		   "the splitter writes the spill out");
	}
	/* Made directly, the files may still have been slow to come (a
	 * loaded machine): what was held back is written out first. */
	spill_out();
	r->ra = sum_tid(101, &r->a);
	r->rb = sum_tid(102, &r->b);
	r->rc = sum_tid(103, &r->c);
}

static void check_run(const struct run *r)
{
	ok(r->ra == 0 && r->a.packets > 1 && r->a.seq_in_order,
	   "thread 101's packets in default-101, numbered 0..%llu",
	   (unsigned long long)r->a.packets - 1);
	ok(r->n101 == 2000 && r->a.records == 2000 && r->a.discarded == 0 &&
	   r->a.tid == 101, "its 2000 records, nothing lost (%llu in the file)",
	   (unsigned long long)r->a.records);
	ok(r->rb == 0 && r->b.packets == 1 && r->b.seq_in_order,
	   "the next owner of the buffer has a file of its own (default-102)");
	ok(r->n102 == 10 && r->b.records == 10 && r->b.tid == 102,
	   "its 10 records (%llu)", (unsigned long long)r->b.records);
	/* 103 writes more than its ring holds, without a drain between. */
	ok(r->rc == 0 && r->c.seq_in_order,
	   "a ring that filled: its packets in order");
	ok(r->c.discarded == 200000 - r->n103 && r->c.discarded > 0 &&
	   r->c.records == r->n103,
	   "the file holds what was kept and tells the rest: %llu discarded "
	   "= 200000 - %u kept",
	   (unsigned long long)r->c.discarded, r->n103);
	ok(r->packets >= r->a.packets + r->b.packets + r->c.packets,
	   "the process counts what was written (%llu packets)",
	   (unsigned long long)r->packets);
}

/*
 * A thread's name comes from its tracer:thread_start event too: by the
 * time tracerd reads an owner's packets, the buffer's descriptor may name
 * its next owner (a thread that ended and whose buffer was taken again,
 * a stash written out in an ended thread's name). process.meta's line
 * from the event comes after the descriptor's, and the last line without
 * a time is the one a reader takes.
 */
static void test_start_name(void)
{
	struct tracerd_process *p = new_process();
	struct tracer_rb_reader *r = &p->pool.buf[0].rd[TRACER_CHANNEL_VITAL];
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	char line[128], last[128] = "", first[128] = "";
	uint64_t *pl;

	p->start_id = 5;
	if (tracer__rb_writer_attach(&w, (void *)(uintptr_t)r->hdr,
				     r->geo.region_size, 4242, NULL))
		bail_out("writer attach");
	w.stream_instance_id = 1;	/* buffer 0, its first owner */
	memcpy(p->pool.buf[0].desc->thread_name, "next-owner", 11);
	if (tracer__rb_reserve(&w, &ctx, 5, 16))
		bail_out("reserve");
	pl = ctx.payload;
	pl[0] = 4242;				/* tid %d */
	memcpy(&pl[1], "mine\0\0\0", 8);	/* name %s */
	tracer__rb_commit(&w, &ctx);
	tracer__rb_flush(&w);
	tracerd_sink_drain(p);
	fflush(p->files.meta);
	rewind(p->files.meta);
	while (fgets(line, sizeof(line), p->files.meta))
		if (!strncmp(line, "thread 4242 ", 12)) {
			if (!first[0])
				strcpy(first, line);
			strcpy(last, line);
		}
	ok(!strcmp(first, "thread 4242 next-owner\n") &&
	   !strcmp(last, "thread 4242 mine\n"), "the name its thread_start "
	   "gives comes after the descriptor's (%.*s)",
	   (int)strcspn(last, "\n"), last);
	stub_free_process(p);
}

/*
 * Four threads' rings hold 1.25 MiB each: a pass writes at most its
 * budget (1 MiB and a sub-buffer), so that tracerd's loop serves other
 * processes in between, and the next pass begins where it stopped, so
 * that every ring is served in turn. Then every record is there.
 */
static void test_pass_budget(void)
{
	struct tracerd_process *p = new_process();
	struct tracer_rb_writer w[4];
	uint64_t sub = p->pool.buf[0].rd[TRACER_CHANNEL_DEFAULT].geo.subbuf_size;
	uint64_t before, first;
	unsigned took[4], i, whole = 0;
	struct file_sum s[4];
	bool more;

	for (i = 0; i < 4; i++) {
		writer(p, &w[i], i, 201 + i, 1);
		took[i] = put(&w[i], 40000);
		tracer__rb_flush(&w[i]);
	}
	before = p->bytes_written;
	more = tracerd_sink_drain(p);
	first = p->bytes_written - before;
	spill_out();
	ok(more && first > 0 && first <= (1u << 20) + sub,
	   "one pass over 5 MiB of full rings writes %llu KiB, and says more "
	   "is left", (unsigned long long)first >> 10);
	ok(sum_tid(203, &s[2]) == -ENOENT && sum_tid(204, &s[3]) == -ENOENT,
	   "the first pass stopped before the third ring");
	tracerd_sink_drain(p);
	spill_out();
	i = sum_tid(203, &s[2]) == 0;
	ok(i && s[2].packets > 0, "the next pass goes on with it (%llu "
	   "packets)", (unsigned long long)s[2].packets);
	drain_all(p);
	spill_out();
	for (i = 0; i < 4; i++)
		whole += sum_tid(201 + i, &s[i]) == 0 &&
			 s[i].records == took[i] && s[i].seq_in_order;
	ok(whole == 4, "then every record of the 4 rings is in its file "
	   "(%u of 4 whole)", whole);
	stub_free_process(p);
}

/* n records of 40 bytes of payload (48 in all: sub-buffers end with a
 * gap), numbered from *next on. Returns how many were accepted. */
static unsigned put_odd(struct tracer_rb_writer *w, unsigned n,
			uint64_t *next)
{
	struct tracer_rb_ctx ctx;
	unsigned i, done = 0;

	for (i = 0; i < n; i++)
		if (tracer__rb_reserve(w, &ctx, 7, 40) == 0) {
			memset(ctx.payload, 0x5a, 40);
			((uint64_t *)ctx.payload)[0] = (*next)++;
			tracer__rb_commit(w, &ctx);
			done++;
		}
	return done;
}

struct walk {
	uint64_t records, packets;
	bool whole;	/* numbered 0, 1, ..., every packet as long as its
			   content, every payload 40 bytes */
};

/* Walk default-TID record by record. */
static int walk_tid(uint32_t tid, struct walk *wk)
{
	char name[64], *buf;
	uint64_t off = 0, size;
	int ret;

	memset(wk, 0, sizeof(*wk));
	wk->whole = true;
	snprintf(name, sizeof(name), "default-%u", tid);
	ret = read_file(name, &buf, &size);
	if (ret)
		return ret;
	while (off + sizeof(struct tracer_rb_packet) <= size) {
		const struct tracer_rb_packet *h = (const void *)(buf + off);
		uint64_t at = sizeof(*h), end = h->content_size / 8;
		uint64_t clock = h->timestamp_begin;
		struct tracer_rb_record rec;

		if (h->packet_size != h->content_size || h->magic !=
		    TRACER_CTF_MAGIC || off + end > size) {
			wk->whole = false;
			break;
		}
		for (; at < end; at += rec.size) {
			if (tracer__rb_record_get(buf + off + at, end - at,
						  &clock, &rec))
				break;
			if (rec.payload_size != 40 ||
			    *(const uint64_t *)rec.payload != wk->records)
				wk->whole = false;
			wk->records++;
		}
		wk->whole &= at == end;
		wk->packets++;
		off += end;
	}
	wk->whole &= off == size;
	free(buf);
	return 0;
}

/*
 * A backlog (tracerd stopped, or behind): two owners in turn fill 40
 * sub-buffers of a ring with records that leave a gap at the end of each.
 * The drain copies runs of them out with one pread() and writes the
 * packets from there, each as long as its content, a file for each owner;
 * through the spill, as a spill takes them, one at a time.
 */
static void test_staged_runs(bool spill)
{
	struct tracerd_process *p;
	struct tracer_rb_writer w;
	uint64_t next[2] = { 0, 0 }, n;
	unsigned took[2];
	struct walk wk[2];
	int ret[2];

	free(d.scratch.stage);
	d.scratch.stage = NULL;
	d.spill.always = spill;
	p = new_process();
	n = p->pool.buf[0].rd[TRACER_CHANNEL_DEFAULT].geo.subbuf_size / 48;
	writer(p, &w, 0, 401, 1);
	took[0] = put_odd(&w, (unsigned)(20 * n), &next[0]);
	tracer__rb_flush(&w);
	writer(p, &w, 0, 402, 2);
	took[1] = put_odd(&w, (unsigned)(20 * n), &next[1]);
	tracer__rb_flush(&w);
	drain_all(p);
	spill_out();
	ok(d.scratch.stage != NULL, "%s: the drain read the backlog in runs",
	   spill ? "spill" : "direct");
	ret[0] = walk_tid(401, &wk[0]);
	ret[1] = walk_tid(402, &wk[1]);
	ok(!ret[0] && wk[0].whole && wk[0].records == took[0] &&
	   wk[0].packets >= 20, "%s: the first owner's %u records in order, "
	   "in %llu packets as long as their content", spill ? "spill" :
	   "direct", took[0], (unsigned long long)wk[0].packets);
	ok(!ret[1] && wk[1].whole && wk[1].records == took[1] &&
	   wk[1].packets >= 20, "%s: the next owner's %u in a file of its own",
	   spill ? "spill" : "direct", took[1]);
	stub_free_process(p);
	spill_out();
	tracerd_spill_free_all(&d);
	d.spill.always = false;
}

int main(void)
{
	struct tracerd_process *p;
	struct run direct, held;

	plan(29);
	if (!mkdtemp(dir1) || !mkdtemp(dir2))
		bail_out("mkdtemp");

	diag("files made as owners come");
	p = new_process();
	three_owners(p, &direct, false);
	check_run(&direct);
	stub_free_process(p);

	diag("files too slow to make: every owner held back in the spill");
	d.spill.always = true;
	dir = dir2;
	p = new_process();
	three_owners(p, &held, true);
	check_run(&held);
	ok(held.a.packets == direct.a.packets &&
	   held.c.packets == direct.c.packets &&
	   held.c.discarded == direct.c.discarded,
	   "the same files as made directly (%llu and %llu packets)",
	   (unsigned long long)held.a.packets,
	   (unsigned long long)held.c.packets);
	stub_free_process(p);	/* the owners' ends go to the spill */
	spill_out();
	ok(tracerd_spill_backlog(&d) == 0 && d.spill.list.next ==
	   &d.spill.list, "the spill outlives its process directory until "
	   "written out, then is freed");
	tracerd_spill_free_all(&d);

	diag("a thread's name, from its start event");
	d.spill.always = false;
	dir = dir1;
	test_start_name();

	diag("a pass of the drain over many full rings");
	test_pass_budget();

	diag("a backlog read in runs");
	test_staged_runs(false);
	dir = dir2;
	test_staged_runs(true);

	nftw(dir1, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	nftw(dir2, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	return done();
}
