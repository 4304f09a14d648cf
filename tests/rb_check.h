/*
 * rb_check.h - self-checking records for the ring-buffer tests.
 *
 * Every test record carries its stream (who wrote it), a per-stream
 * sequence number, a variable number of filler words derived from both,
 * and a checksum over all of it. The checker verifies each record read
 * back, that every stream's sequence numbers only go up (no duplicate, no
 * reordering within a stream), and counts what it saw, so that a test can
 * assert recorded + lost == produced exactly.
 */
#ifndef TRACER_TESTS_RB_CHECK_H
#define TRACER_TESTS_RB_CHECK_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock_make.h"
#include "rb.h"

#define CHK_STREAMS	4
#define CHK_MAX_FILL	13

struct chk_payload {
	uint64_t seq;
	uint32_t stream;
	uint32_t nfill;
	uint64_t sum;
	uint64_t fill[];
};

struct chk_state {
	uint64_t next_seq[CHK_STREAMS];	/* lowest seq still acceptable */
	uint64_t seen[CHK_STREAMS];
	uint64_t bad;			/* corrupt or out-of-order records */
	uint64_t packets;
	uint64_t last_ts;		/* with check_time: the last stamp */
	int check_time;			/* stamps must never go back */
	uint64_t overwritten;		/* records_overwritten, summed */
	char first_error[200];
};

static inline uint64_t chk_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static inline uint32_t chk_nfill(uint32_t stream, uint64_t seq)
{
	return (uint32_t)(chk_mix(seq * 31 + stream) % (CHK_MAX_FILL + 1));
}

static inline uint32_t chk_size(uint32_t nfill)
{
	return (uint32_t)(sizeof(struct chk_payload) + nfill * 8);
}

/* Size of the payload of record `seq` of `stream`. */
static inline uint32_t chk_payload_size(uint32_t stream, uint64_t seq)
{
	return chk_size(chk_nfill(stream, seq));
}

/* Fill a reserved payload of chk_payload_size(stream, seq) bytes. */
static inline void chk_fill(void *payload, uint32_t stream, uint64_t seq)
{
	struct chk_payload *p = payload;
	uint32_t i, n = chk_nfill(stream, seq);
	uint64_t sum = chk_mix(seq ^ ((uint64_t)stream << 56));

	p->seq = seq;
	p->stream = stream;
	p->nfill = n;
	for (i = 0; i < n; i++) {
		p->fill[i] = chk_mix(sum + i);
		sum += p->fill[i];
	}
	p->sum = sum;
}

/* Record one self-checking event; returns tracer__rb_reserve()'s result. */
static inline int chk_record(struct tracer_rb_writer *w, uint32_t stream,
			     uint64_t seq)
{
	struct tracer_rb_ctx ctx;
	int ret;

	ret = tracer__rb_reserve(w, &ctx, 100 + stream,
				 chk_payload_size(stream, seq));
	if (ret)
		return ret;
	chk_fill(ctx.payload, stream, seq);
	tracer__rb_commit(w, &ctx);
	return 0;
}

static inline void chk_fail(struct chk_state *st, const char *what,
			    uint64_t a, uint64_t b)
{
	if (!st->bad)
		snprintf(st->first_error, sizeof(st->first_error),
			 "%s (%llu, %llu)", what, (unsigned long long)a,
			 (unsigned long long)b);
	st->bad++;
}

static inline bool chk_payload_ok(const struct tracer_rb_record *rec,
				  const struct chk_payload *p)
{
	uint64_t sum = chk_mix(p->seq ^ ((uint64_t)p->stream << 56));
	uint32_t i;

	if (rec->payload_size < sizeof(*p) || p->nfill > CHK_MAX_FILL ||
	    rec->payload_size < chk_size(p->nfill) ||
	    p->nfill != chk_nfill(p->stream, p->seq) ||
	    rec->id != 100 + p->stream)
		return false;
	for (i = 0; i < p->nfill; i++) {
		if (p->fill[i] != chk_mix(sum + i))
			return false;
		sum += p->fill[i];
	}
	return sum == p->sum;
}

static inline void chk_one(struct chk_state *st,
			   const struct tracer_rb_record *rec)
{
	const struct chk_payload *p = rec->payload;

	if (!chk_payload_ok(rec, p) || p->stream >= CHK_STREAMS) {
		chk_fail(st, "corrupt record", rec->id, rec->size);
		return;
	}
	if (p->seq < st->next_seq[p->stream])
		chk_fail(st, "sequence went back", p->stream, p->seq);
	if (st->check_time && rec->timestamp < st->last_ts)
		chk_fail(st, "time went back", rec->timestamp, st->last_ts);
	st->last_ts = rec->timestamp;
	st->next_seq[p->stream] = p->seq + 1;
	st->seen[p->stream]++;
}

/* Check every record of a packet copy that tracer__rb_read() returned. */
static inline void chk_packet(struct chk_state *st, const void *copy,
			      const struct tracer_rb_packet_info *info)
{
	struct tracer_rb_record rec;
	struct tracer_rb_cursor cur = { 0 };
	uint64_t n = 0;

	st->packets++;
	st->overwritten += info->records_overwritten;
	while (tracer__rb_packet_next(copy, info->content_bytes, &cur, &rec)) {
		chk_one(st, &rec);
		n++;
	}
	if (n != info->records)
		chk_fail(st, "record count differs from parse", n,
			 info->records);
}

/*
 * Read and check every complete packet of r into buf; with in_place, as
 * tracerd reads: staged packets checked where they are
 * (tracer__rb_read_ref()), counted in *in_place. Returns the number read,
 * or a negative errno for a hard error (corruption); -ESTALE copies are
 * retried.
 */
static inline int chk_drain_ref(struct tracer_rb_reader *r,
				struct chk_state *st, void *buf, uint64_t size,
				uint64_t *in_place)
{
	struct tracer_rb_packet_info info;
	void *pk = buf;
	int ret, n = 0;

	for (;;) {
		ret = in_place ? tracer__rb_read_ref(r, buf, size, &info, &pk)
			       : tracer__rb_read(r, buf, size, &info);
		if (ret == -ESTALE)
			continue;
		if (ret == -EAGAIN)
			return n;
		if (ret)
			return ret;
		if (in_place)
			*in_place += pk != buf;
		chk_packet(st, pk, &info);
		n++;
	}
}

static inline int chk_drain(struct tracer_rb_reader *r, struct chk_state *st,
			    void *buf, uint64_t size)
{
	return chk_drain_ref(r, st, buf, size, NULL);
}

static inline uint64_t chk_total_seen(const struct chk_state *st)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < CHK_STREAMS; i++)
		t += st->seen[i];
	return t;
}

/* A channel in private, 64-byte aligned memory; bails out on failure. */
static inline void *chk_channel(const struct tracer_rb_config *cfg,
				uint64_t *size)
{
	struct tracer_rb_geometry geo;
	const char *why = NULL;
	void *region;

	if (tracer__rb_geometry(&geo, cfg->subbuf_size, cfg->subbuf_count,
				&why))
		return NULL;
	/* aligned_alloc wants a size that is a multiple of the alignment */
	region = aligned_alloc(4096, TRACER_ALIGN_UP(geo.region_size, 4096));
	if (!region || tracer__rb_init(region, geo.region_size, cfg, &why)) {
		free(region);
		return NULL;
	}
	*size = geo.region_size;
	return region;
}

/* xorshift64: the same numbers in every run (a sequence per test). */
static inline uint64_t chk_rnd(void)
{
	static uint64_t s = 88172645463325252ULL;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/*
 * A TSC line calibrated here, from two samples ms milliseconds apart (a
 * busy wait: measuring, not waiting for anything). Returns 0 or -ERANGE.
 */
static inline int chk_tsc_line(struct tracer_clock *c, uint64_t ms)
{
	struct tracer_clock_sample a, b;
	uint64_t until;

	tracer__clock_sample(&a);
	until = tracer__clock_now() + ms * 1000000;
	while (tracer__clock_now() < until)
		;
	tracer__clock_sample(&b);
	return tracer__clock_start(c, &a, &b);
}

/*
 * A periodic CLOCK_MONOTONIC timer that sends sig to the calling thread
 * (not to the process, so it never lands on a reader thread).
 * Returns 0 or -errno.
 */
static inline int chk_thread_timer(int sig, long period_ns, timer_t *t)
{
	struct sigevent sev;
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, t))
		return -errno;
	if (timer_settime(*t, 0, &its, NULL)) {
		int err = -errno;

		timer_delete(*t);
		return err;
	}
	return 0;
}

#endif /* TRACER_TESTS_RB_CHECK_H */
