/*
 * stress_rb.c - the long signal storm, run by `make check-stress`.
 *
 * WRITERS threads, each with its own channel and its own 20 kHz timer
 * signal whose handler records into that thread's channel, write
 * self-checking records until each has written RECORDS of its own and
 * seen MIN_NESTED interruptions inside a reserve..commit window. One
 * reader thread drains every channel meanwhile. Checked as in the
 * integration test: every record intact, recorded + lost == produced,
 * per channel, in both modes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define WRITERS		3
#define RECORDS		20000000ULL
#define MIN_NESTED	5000ULL

struct chan {
	char *region;
	uint64_t size;
	struct tracer_rb_writer w;
	struct tracer_rb_reader r;
	struct chk_state st;
	uint64_t produced[2];
	uint64_t nested;
	volatile sig_atomic_t in_window;
	int done;
};

static struct chan chans[WRITERS];
static __thread struct chan *self;
static char copy[1 << 16] __attribute__((aligned(64)));

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (self) {
		if (self->in_window)
			self->nested++;
		chk_record(&self->w, 1, self->produced[1]++);
		if (self->produced[1] % 32 == 0)
			tracer__rb_flush(&self->w);
	}
	errno = saved;
}

static timer_t start_timer(void)
{
	timer_t t;
	int ret = chk_thread_timer(SIGRTMIN, 50000, &t);

	if (ret)
		bail_out("timer: %s", strerror(-ret));
	return t;
}

static void *writer_main(void *arg)
{
	struct chan *c = arg;
	struct tracer_rb_ctx ctx;
	timer_t t;

	self = c;
	t = start_timer();
	while (c->produced[0] < RECORDS || c->nested < MIN_NESTED) {
		uint64_t seq = c->produced[0]++;

		if (tracer__rb_reserve(&c->w, &ctx, 100,
				       chk_payload_size(0, seq)))
			continue;
		c->in_window = 1;
		chk_fill(ctx.payload, 0, seq);
		c->in_window = 0;
		tracer__rb_commit(&c->w, &ctx);
	}
	timer_delete(t);
	self = NULL;
	tracer__rb_flush(&c->w);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader_main(void *arg)
{
	int i, finished = 0;

	(void)arg;
	while (finished < WRITERS) {
		int n = 0;

		finished = 0;
		for (i = 0; i < WRITERS; i++) {
			int last = __atomic_load_n(&chans[i].done,
						   __ATOMIC_ACQUIRE);
			int got = chk_drain(&chans[i].r, &chans[i].st, copy,
					    sizeof(copy));

			if (got < 0)
				bail_out("reader: %s", chans[i].r.error);
			n += got;
			finished += last;
		}
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

static void run(enum tracer_rb_mode mode, const char *name)
{
	struct tracer_rb_config cfg = { .subbuf_size = 16384,
		.subbuf_count = 16, .mode = mode,
		.start_count = UINT64_MAX - 1000 * 16384 + 1 };
	pthread_t wt[WRITERS], rt;
	int i;

	memset(chans, 0, sizeof(chans));
	for (i = 0; i < WRITERS; i++) {
		struct chan *c = &chans[i];

		c->region = chk_channel(&cfg, &c->size);
		if (!c->region ||
		    tracer__rb_writer_attach(&c->w, c->region, c->size,
					     (uint32_t)i, NULL) ||
		    tracer__rb_reader_attach(&c->r, c->region, c->size, NULL))
			bail_out("cannot create channel %d", i);
	}
	pthread_create(&rt, NULL, reader_main, NULL);
	for (i = 0; i < WRITERS; i++)
		pthread_create(&wt[i], NULL, writer_main, &chans[i]);
	for (i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	pthread_join(rt, NULL);
	for (i = 0; i < WRITERS; i++) {
		struct chan *c = &chans[i];
		uint64_t total = c->produced[0] + c->produced[1];

		ok(c->st.bad == 0 && c->nested >= MIN_NESTED,
		   "%s writer %d: %" PRIu64 " nested, all intact %s", name, i,
		   c->nested, c->st.first_error);
		is_u64(chk_total_seen(&c->st) + tracer__rb_lost(&c->r) +
		       c->st.overwritten, total,
		       "%s writer %d: recorded + lost == produced (%" PRIu64
		       ")", name, i, total);
		tracer__rb_reader_detach(&c->r);
		free(c->region);
	}
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	plan(4 * WRITERS);
	run(TRACER_RB_DISCARD, "discard");
	run(TRACER_RB_FLIGHT, "flight");
	return done();
}
