/*
 * stash.c - the events of a thread that found no free buffer, kept until
 * one comes back.
 *
 * A burst of new threads can outrun the pool: every buffer is owned and
 * tracerd has not grown the pool yet (it needs the CPU the burst takes).
 * Instead of dropping such a thread's events, the thread records them
 * into a stash: a small channel of its own (two 2 KiB sub-buffers per
 * channel kind, in a region mapped at the first need), written by the
 * same reserve/commit code as a buffer's. Its t->ch[] are the stash's
 * writers meanwhile, so nothing on the event path changes.
 *
 *   thread, no buffer     --> stash slot OWNED (its events, stamped then)
 *   a later event / exit  --> a buffer free: the records are written into
 *                             it with their own times, slot FREE
 *   exit, still none      --> slot ORPHAN (its thread_exit inside)
 *   any thread's exit, a  --> takes a free buffer in the orphan's name,
 *   first buffer taken        writes its records, closes and releases it
 *                             (FLUSHING, then FREE)
 *
 * Who writes what. A slot's state word moves by compare-and-swap
 * (bus-locked, but only on these rare paths): FREE -> OWNED by the thread
 * that takes it; OWNED -> FREE (replayed, dropped) or -> ORPHAN by that
 * thread; ORPHAN -> FLUSHING by the one thread that wins the CAS, then
 * FREE or back to ORPHAN. Whoever holds a slot (OWNED: its thread and
 * that thread's signal handlers; FLUSHING: the flusher) is its only
 * writer; the release store of FREE or ORPHAN orders its records and
 * fields before the next holder's acquire CAS.
 *
 * A stash is replayed only by its thread outside any handler, and only
 * when every record reserved in it is committed (a handler of the program
 * not installed through us may have interrupted a record): the replay
 * writes into the new buffer with the thread's slow path `busy`, so no
 * handler writes there meanwhile (tracer.c). Replayed records keep their
 * times; the buffer's new owner has no record before them.
 *
 * Bounds: 256 slots (a thread that finds none drops its events, counted
 * as before); about 1.9 KiB of records per channel kind and thread (what
 * does not fit is counted in the stash's `lost`, carried into the
 * buffer's count when replayed). Events of a session that ended before
 * the replay are dropped and counted as lost to the pool.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define STASH_SLOTS	TRACER_STASH_SLOTS
#define STASH_SUBBUF	2048u
#define STASH_COUNT	2u
#define CHANNEL_BYTES	8192u	/* tracer__rb_geometry(2048, 2).region_size */
#define SLOT_BYTES	(CHANNEL_BYTES * TRACER_POOL_CHANNELS)

enum { SLOT_FREE, SLOT_OWNED, SLOT_ORPHAN, SLOT_FLUSHING };

struct slot {
	uint32_t state;			/* SLOT_*, changed by CAS */
	uint32_t tid;
	char name[16];
	uint64_t session;
	bool counted;			/* in the pool line's `stashed` */
	struct tracer_rb_writer w[TRACER_POOL_CHANNELS];
};

static char *region;		/* mapped at the first need, for good */
static struct slot slots[STASH_SLOTS] TRACER_COLD_BSS;
static uint32_t orphans;	/* slots in SLOT_ORPHAN (a hint) */

/* The slots' channels, mapped once (mmap is async-signal-safe). */
static char *stash_region(void)
{
	char *r = __atomic_load_n(&region, __ATOMIC_ACQUIRE), *none = NULL;

	if (r)
		return r;
	r = mmap(NULL, (size_t)SLOT_BYTES * STASH_SLOTS,
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	/* Release: the mapping before its address (it is zeroed anyway). */
	if (!__atomic_compare_exchange_n(&region, &none, r, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(r, (size_t)SLOT_BYTES * STASH_SLOTS);
		r = none;
	}
	return r;
}

/* Empty channels in slot i, written by tid. */
static int slot_init(struct slot *s, char *base, uint32_t tid)
{
	struct tracer_rb_config cfg = {
		.subbuf_size = STASH_SUBBUF, .subbuf_count = STASH_COUNT,
		.mode = TRACER_RB_DISCARD,
	};
	int c, ret;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		char *ch = base + (size_t)c * CHANNEL_BYTES;

		cfg.stream_id = (uint32_t)c;
		ret = tracer__rb_init(ch, CHANNEL_BYTES, &cfg, NULL);
		if (!ret)
			ret = tracer__rb_writer_attach(&s->w[c], ch,
						       CHANNEL_BYTES, tid, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static void slot_put(struct slot *s, uint32_t state)
{
	__atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
}

/* The slot's records are written out or dropped: free for another. */
static void slot_free(struct slot *s)
{
	if (s->counted)
		tracer__pool_add_stashed(-1);
	s->counted = false;
	slot_put(s, SLOT_FREE);
}

int tracer__stash_open(struct tracer__thread *t, uint64_t session)
{
	char *r = stash_region();
	uint32_t i, want;
	int c;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < STASH_SLOTS; i++) {
		want = SLOT_FREE;
		if (__atomic_load_n(&slots[i].state, __ATOMIC_RELAXED) ==
		    SLOT_FREE &&
		    __atomic_compare_exchange_n(&slots[i].state, &want,
						SLOT_OWNED, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
	}
	if (i == STASH_SLOTS)
		return -ENOBUFS;
	if (!t->tid) {
		t->tid = (uint32_t)syscall(SYS_gettid);
		prctl(PR_GET_NAME, t->name, 0, 0, 0);
		t->name[15] = '\0';
	}
	if (slot_init(&slots[i], r + (size_t)i * SLOT_BYTES, t->tid)) {
		slot_put(&slots[i], SLOT_FREE);
		return -EINVAL;
	}
	slots[i].tid = t->tid;
	memcpy(slots[i].name, t->name, sizeof(slots[i].name));
	slots[i].session = session;
	/* Until it is written out, status counts the thread (or its
	 * events, once it ended) here. */
	slots[i].counted = tracer__pool_add_stashed(1);
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		t->ch[c] = slots[i].w[c];
		t->lost_base[c] = 0;
	}
	t->stash = (uint16_t)(i + 1);
	return 0;
}

static struct slot *slot_of(const struct tracer__thread *t)
{
	return t->stash ? &slots[t->stash - 1] : NULL;
}

bool tracer__stash_quiet(const struct tracer__thread *t)
{
	const struct slot *s = slot_of(t);
	int c;

	for (c = 0; s && c < TRACER_POOL_CHANNELS; c++)
		if (tracer__writer_torn(&s->w[c]))
			return false;
	return true;
}

bool tracer__stash_filling(const struct tracer__thread *t)
{
	const struct slot *s = slot_of(t);
	int c;

	for (c = 0; s && c < TRACER_POOL_CHANNELS; c++)
		if (TRACER_READ_ONCE(s->w[c].hdr->write_count) >
		    s->w[c].bufsize / 2)
			return true;
	return false;
}

/* Records committed in a stash channel (it never laps). */
static uint64_t stashed_records(const struct tracer_rb_writer *w)
{
	return w->commit[0].records + w->commit[1].records;
}

/*
 * Write the records of stash channel `from` into `to`, each at its own
 * time, in order; the stash's losses become `to`'s. The stash never laps
 * (discard mode, no reader): its sub-buffers are at 0 and S. A stash
 * packet in another unit than `to`'s (the clock changed between the stash
 * and the buffer) goes into packets of its own unit: times are never
 * converted here.
 */
static void replay_channel(const struct tracer_rb_writer *from,
			   struct tracer_rb_writer *to)
{
	uint64_t wc = from->hdr->write_count, sub, end, S = from->smask + 1;
	uint32_t unit = to->unit;
	struct tracer_rb_cursor cur;
	struct tracer_rb_record rec;
	struct tracer_rb_ctx ctx;

	/* A sub-buffer left open in `to` would be closed at an older time
	 * than its records: close it now (owners close theirs at exit). */
	tracer__rb_flush(to);
	for (sub = 0; sub < wc && sub < from->bufsize; sub += S) {
		const struct tracer_rb_packet *pkt = (const void *)
			(from->data + sub);

		/* Closed: its content size; open: up to the write count. */
		end = wc - sub >= S ? pkt->content_size / 8 : wc - sub;
		tracer__rb_set_unit(to, pkt->unit);
		cur = (struct tracer_rb_cursor){ 0 };
		while (tracer__rb_packet_next(pkt, end, &cur, &rec)) {
			if (tracer__rb_reserve_at(to, &ctx, rec.id,
						  rec.payload_size,
						  rec.timestamp))
				continue;	/* counted by `to` */
			memcpy(ctx.payload, rec.payload, rec.payload_size);
			tracer__rb_commit(to, &ctx);
		}
	}
	tracer__rb_set_unit(to, unit);
	if (from->hdr->lost)
		tracer__local_add64(&to->hdr->lost, from->hdr->lost);
}

void tracer__stash_replay(struct tracer__thread *t)
{
	struct slot *s = slot_of(t);
	int c;

	if (!s)
		return;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		replay_channel(&s->w[c], &t->ch[c]);
	t->stash = 0;
	slot_free(s);
}

/* The slot's records are not going anywhere: lost to the pool. */
static void drop(struct slot *s)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		n += stashed_records(&s->w[c]);
	if (n)
		tracer__pool_add_lost(n);
	slot_free(s);
}

void tracer__stash_drop(struct tracer__thread *t)
{
	struct slot *s = slot_of(t);

	t->stash = 0;
	if (s)
		drop(s);
}

void tracer__stash_orphan(struct tracer__thread *t)
{
	struct slot *s = slot_of(t);

	t->stash = 0;
	if (!s)
		return;
	__atomic_fetch_add(&orphans, 1, __ATOMIC_RELAXED);
	slot_put(s, SLOT_ORPHAN);
	/* The orphan before the thread's own look for a free buffer
	 * (tracer__stash_flush_orphans()): pairs with the fence there. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Orphan s into a buffer taken now in its thread's name (the packets
 * carry its tid; the descriptor names `self`, a live thread, so that
 * tracerd does not salvage the buffer meanwhile), closed and released.
 * Only a buffer with room in its rings, unless forced: records that do
 * not fit are lost, and a loss with no packet of the orphan's own to tell
 * it would be told in the next owner's file.
 * Returns 0 or -ENOBUFS (no such buffer free).
 */
static int flush_one(struct slot *s, const struct tracer_control_state *st,
		     uint32_t self, bool force)
{
	struct tracer__buffer b;
	struct tracer_rb_writer w[TRACER_POOL_CHANNELS];
	uint64_t lost_base[TRACER_POOL_CHANNELS];
	int c;

	if (tracer__pool_acquire(&b, self, s->name, !force))
		return -ENOBUFS;
	if (tracer__pool_attach_all(&b, w, lost_base, s->tid)) {
		tracer__pool_release(&b, false);
		return -ENOBUFS;
	}
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		w[c].mode = tracer__channel_mode(st->mode);
		replay_channel(&s->w[c], &w[c]);
		tracer__rb_flush(&w[c]);
	}
	tracer__pool_release(&b, true);
	return 0;
}

void tracer__stash_flush_orphans(const struct tracer_control_state *st,
				 uint32_t self, bool force)
{
	uint32_t i, want;

	/*
	 * A buffer given back (or taken) before the look at the slots: a
	 * thread orphaning its stash at the same time either is seen here or
	 * sees that buffer free when it looks itself (the fence in
	 * tracer__stash_orphan()).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&orphans, __ATOMIC_RELAXED))
		return;
	for (i = 0; i < STASH_SLOTS; i++) {
		struct slot *s = &slots[i];

		want = SLOT_ORPHAN;
		if (!__atomic_compare_exchange_n(&s->state, &want,
						 SLOT_FLUSHING, false,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (s->session == st->session &&
		    flush_one(s, st, self, force)) {
			slot_put(s, SLOT_ORPHAN);	/* later */
			return;
		}
		__atomic_fetch_sub(&orphans, 1, __ATOMIC_RELAXED);
		if (s->session == st->session)
			slot_free(s);
		else
			drop(s);
	}
}

bool tracer__stash_has_orphans(void)
{
	return __atomic_load_n(&orphans, __ATOMIC_RELAXED) != 0;
}

/* In a child of fork(): the parent's stashes are the parent's. */
void tracer__stash_fork_child(void)
{
	uint32_t i;

	if (!region)
		return;
	for (i = 0; i < STASH_SLOTS; i++) {
		slots[i].state = SLOT_FREE;
		slots[i].counted = false;	/* in the parent's pool */
	}
	orphans = 0;
}
