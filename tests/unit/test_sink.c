/*
 * test_sink.c - a process's channel files as tracerd writes them
 * (tracerd/sink.c), driven directly: a ring written by a real writer is
 * drained into CHANNEL-TID with every record, its packets numbered as the
 * file counts them; the next owner of the buffer gets a file of its own;
 * a ring's losses are told in the file (events_discarded) and add up.
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
#include "tap.h"

static struct tracerd d;
static char dir[] = "/tmp/test_sink.XXXXXX";

static struct tracerd_process *new_process(void)
{
	struct tracerd_process *p = calloc(1, sizeof(*p));
	int fd;

	if (!p)
		bail_out("calloc");
	tracerd_config_defaults(&d.cfg);
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

/* Walk the packets of dir/NAME: records, the last events_discarded. */
static int sum_file(const char *name, struct file_sum *s)
{
	char path[512], *buf;
	struct stat st;
	uint64_t off = 0;
	int fd;

	memset(s, 0, sizeof(*s));
	s->seq_in_order = true;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		bail_out("read %s", path);
	close(fd);
	while (off + sizeof(struct tracer_rb_packet) <= (uint64_t)st.st_size) {
		const struct tracer_rb_packet *h = (const void *)(buf + off);

		if (h->packet_seq_num != s->packets)
			s->seq_in_order = false;
		/* Every record here: a 16-byte header, 16 bytes of payload. */
		s->records += (h->content_size / 8 - sizeof(*h)) / 32;
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

/*
 * Thread tid, owner number gen of buffer b, writes n records and closes its
 * sub-buffer; tracerd drains; *s sums the file default-TID. Returns the
 * records the ring took; *ret is sum_file()'s return.
 */
static unsigned owner_writes(struct tracerd_process *p, uint32_t b,
			     uint32_t tid, uint32_t gen, unsigned n,
			     struct file_sum *s, int *ret)
{
	struct tracer_rb_writer w;
	char name[64];
	unsigned took;

	writer(p, &w, b, tid, gen);
	took = put(&w, n);
	tracer__rb_flush(&w);
	drain_all(p);
	snprintf(name, sizeof(name), "default-%u", tid);
	*ret = sum_file(name, s);
	return took;
}

int main(void)
{
	struct tracerd_process *p;
	struct file_sum a, b;
	unsigned n1, n2;
	int ret;

	plan(7);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	p = new_process();

	/* Thread 101 writes 2000 records, then 102 takes the buffer. */
	n1 = owner_writes(p, 0, 101, 1, 2000, &a, &ret);
	ok(ret == 0 && a.packets > 1 && a.seq_in_order,
	   "thread 101's packets in default-101, numbered 0..%llu",
	   (unsigned long long)a.packets - 1);
	ok(n1 == 2000 && a.records == 2000 && a.discarded == 0 &&
	   a.tid == 101, "its 2000 records, nothing lost (%llu in the file)",
	   (unsigned long long)a.records);

	n2 = owner_writes(p, 0, 102, 2, 10, &b, &ret);
	ok(ret == 0 && b.packets == 1 && b.seq_in_order,
	   "the next owner of the buffer has a file of its own (default-102)");
	ok(n2 == 10 && b.records == 10 && b.tid == 102, "its 10 records (%llu)",
	   (unsigned long long)b.records);

	/* 103 writes more than its ring holds, without a drain between. */
	n1 = owner_writes(p, 1, 103, 1, 200000, &a, &ret);
	ok(ret == 0 && a.seq_in_order,
	   "a ring that filled: its packets in order");
	ok(a.discarded == 200000 - n1 && a.discarded > 0 && a.records == n1,
	   "the file holds what was kept and tells the rest: %llu discarded "
	   "= 200000 - %u kept",
	   (unsigned long long)a.discarded, n1);
	ok(p->bytes_written > 0 && p->packets_written >= a.packets + 1,
	   "the process counts what was written (%llu packets)",
	   (unsigned long long)p->packets_written);
	stub_free_process(p);
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	return done();
}
