/*
 * test_clock.c - the trace clock (common/clock.h, clock.c):
 *   - the TSC line's arithmetic: at, after and before its anchor, far
 *     from it, and the first calibration from two samples;
 *   - a new anchor continues the old line where it is taken, and brings
 *     an error back within a period; a TSC that strayed is refused;
 *   - ten simulated minutes of anchors against a CLOCK_MONOTONIC whose
 *     rate changes (NTP) under noisy samples stay within 1 us;
 *   - a thread's copy read while a signal handler of the thread replaces
 *     it never mixes the two (timer signals, thousands of replacements);
 *   - a writer never stamps a record earlier than the previous one when
 *     its clock steps back;
 *   - on this machine (when it has an invariant TSC): a line calibrated
 *     from two real samples agrees with clock_gettime() on every CPU.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_make.h"
#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define MULT_HALF	(1ULL << (TRACER_CLOCK_SHIFT - 1))	/* 0.5 ns/tick */

static void test_line(void)
{
	struct tracer_clock c = { .kind = TRACER_CLOCK_TSC, .tsc_base = 1000,
				  .ns_base = 5000000000ULL, .mult = MULT_HALF };

	is_u64(tracer__clock_from_tsc(&c, 1000), 5000000000ULL,
	       "at its anchor, the line gives the anchor's time");
	is_u64(tracer__clock_from_tsc(&c, 3000), 5000001000ULL,
	       "2000 ticks later at 0.5 ns a tick: 1000 ns later");
	is_u64(tracer__clock_from_tsc(&c, 0), 4999999500ULL,
	       "a TSC read before the anchor (another CPU): earlier, not a "
	       "wrapped huge time");
	is_u64(tracer__clock_from_tsc(&c, 1000 + (1ULL << 50)),
	       5000000000ULL + (1ULL << 49),
	       "2^50 ticks on (6 days at 2 GHz): exact, no overflow");
}

static void test_start(void)
{
	struct tracer_clock_sample a = { .tsc = 1000000, .ns = 7000000 };
	struct tracer_clock_sample b = { .tsc = 1000000 + 2000000000ULL,
					 .ns = 7000000 + 1000000000ULL };
	struct tracer_clock c;

	ok(tracer__clock_start(&c, &a, &b) == 0 &&
	   c.kind == TRACER_CLOCK_TSC && c.mult == MULT_HALF &&
	   c.tsc_hz == 2000000000ULL && c.tsc_base == b.tsc &&
	   c.ns_base == b.ns,
	   "calibration from two samples 1 s apart: 0.5 ns a tick, 2 GHz, "
	   "anchored at the second");
	ok(tracer__clock_start(&c, &b, &a) == -ERANGE,
	   "samples that go back are refused");
}

/* The truth of the simulations: ns = t * num / den + off. */
struct truth {
	uint64_t num, den, off;
};

static uint64_t truth_at(const struct truth *t, uint64_t tsc)
{
	return (uint64_t)((unsigned __int128)tsc * t->num / t->den) + t->off;
}

static void sample_at(const struct truth *t, uint64_t tsc, int64_t noise,
		      struct tracer_clock_sample *s)
{
	s->tsc = tsc;
	s->ns = (uint64_t)((int64_t)truth_at(t, tsc) + noise);
	s->width = 40;
}

static int64_t err_at(const struct tracer_clock *c, const struct truth *t,
		      uint64_t tsc)
{
	return (int64_t)(tracer__clock_from_tsc(c, tsc) - truth_at(t, tsc));
}

static void test_steer(void)
{
	/* 2 GHz truth; the line 20 ppm fast and 3 us ahead at the anchor. */
	struct truth t = { .num = 1, .den = 2, .off = 1000000000000ULL };
	const uint64_t sec = 2000000000ULL;
	struct tracer_clock_sample prev, s;
	struct tracer_clock c, old;
	int64_t err, e1;

	sample_at(&t, 10 * sec, 0, &prev);
	c = (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
		.tsc_base = prev.tsc, .ns_base = prev.ns + 3000,
		.mult = MULT_HALF + MULT_HALF / 50000 };
	sample_at(&t, 11 * sec, 0, &s);
	old = c;
	ok(tracer__clock_steer(&c, &prev, &s, &err) == 0,
	   "a new anchor one second later");
	is_u64(tracer__clock_from_tsc(&c, s.tsc),
	       tracer__clock_from_tsc(&old, s.tsc),
	       "the new line starts where the old one is at the anchor "
	       "(no step)");
	ok(err > 3000 && err < 30000,
	   "the error it measured: the 3 us plus 1 s at 20 ppm (%lld ns)",
	   (long long)err);
	e1 = err_at(&c, &t, 12 * sec);
	ok(e1 >= -2 && e1 <= 2,
	   "one period later the error is gone (%lld ns)", (long long)e1);

	old = c;
	t.off += 60000000;	/* CLOCK_MONOTONIC 60 ms away: a stray TSC */
	sample_at(&t, 12 * sec, 0, &prev);
	sample_at(&t, 13 * sec, 0, &s);
	ok(tracer__clock_steer(&c, &prev, &s, &err) == -ERANGE &&
	   memcmp(&c, &old, sizeof(c)) == 0,
	   "a TSC 60 ms off CLOCK_MONOTONIC is refused, the line unchanged");
}

/*
 * Ten minutes of anchors, one a second: CLOCK_MONOTONIC's rate moves as
 * NTP steers it in its steady state (steps of 0.3 ppm every minute),
 * samples are off by up to +-40 ns. (A change of rate by r ppm shows as
 * up to r us until the next anchor: doc/clock.md.)
 */
static void test_ten_minutes(void)
{
	struct truth t = { .num = 100000000, .den = 209601200, .off = 5000 };
	const uint64_t sec = 2096012000ULL;
	struct tracer_clock_sample prev, s;
	struct tracer_clock c;
	uint64_t tsc = sec, x = 12345;
	int64_t worst = 0, err;
	int i, bad = 0;

	sample_at(&t, tsc, 0, &prev);
	sample_at(&t, tsc + sec / 10, 25, &s);
	bad |= tracer__clock_start(&c, &prev, &s);
	prev = s;
	tsc = s.tsc;
	for (i = 0; i < 600; i++) {
		int64_t noise, e;
		uint64_t probe;

		x = chk_mix(x + (uint64_t)i);
		noise = (int64_t)(x % 81) - 40;
		if (i % 60 == 30) {	/* a slew: the rate changes */
			uint64_t at = truth_at(&t, tsc);

			t.num = t.num + (i % 120 == 30 ? 30 : -25);
			t.off = at - truth_at(&(struct truth){ t.num, t.den, 0 },
					      tsc);
		}
		tsc += sec;
		for (probe = tsc - sec; probe < tsc; probe += sec / 8) {
			e = err_at(&c, &t, probe);
			if (e < 0)
				e = -e;
			if (e > worst)
				worst = e;
		}
		sample_at(&t, tsc, noise, &s);
		bad |= tracer__clock_steer(&c, &prev, &s, &err);
		prev = s;
	}
	ok(bad == 0 && worst < 1000,
	   "10 simulated minutes with rate changes and noisy samples: within "
	   "1 us of CLOCK_MONOTONIC (worst %lld ns)", (long long)worst);
}

#if TRACER_CLOCK_HAVE_TSC
static struct tracer_clock_cell cell;
static struct tracer_clock lines[2];
static volatile sig_atomic_t swaps;

static void on_timer(int sig)
{
	(void)sig;
	tracer__clock_cell_set(&cell, &lines[++swaps & 1]);
}

/* Is v on line l between TSC reads t0 and t1? */
static bool on_line(const struct tracer_clock *l, uint64_t t0, uint64_t t1,
		    uint64_t v)
{
	return v >= tracer__clock_from_tsc(l, t0) &&
	       v <= tracer__clock_from_tsc(l, t1);
}

static void test_cell_under_signals(void)
{
	struct sigaction sa = { .sa_handler = on_timer };
	uint64_t reads = 0, mixed = 0, fast = 0;
	timer_t timer;

	/* Two lines 1000 s apart with other anchors, both close enough for
	 * the event path's one multiplication: a mix is on neither. */
	lines[0] = (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
		.tsc_base = tracer__rdtsc(), .ns_base = 1ULL << 40,
		.mult = MULT_HALF };
	lines[1] = (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
		.tsc_base = lines[0].tsc_base - (1ULL << 30),
		.ns_base = (1ULL << 40) + 1000000000000ULL - (1ULL << 29),
		.mult = MULT_HALF };
	tracer__clock_cell_set(&cell, &lines[0]);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	if (chk_thread_timer(SIGRTMIN, 20000, &timer))
		bail_out("cannot make a timer");
	while (swaps < 5000) {
		uint64_t t0 = tracer__rdtsc(), t1, v;
		bool got = true;

		/* Every other read the way the event path reads: one try. */
		if (reads & 1)
			fast += got = tracer__clock_cell_try_tsc(&cell, &v);
		else
			v = tracer__clock_cell_read(&cell);
		t1 = tracer__rdtsc();

		reads++;
		if (got && !on_line(&lines[0], t0, t1, v) &&
		    !on_line(&lines[1], t0, t1, v))
			mixed++;
	}
	timer_delete(timer);
	signal(SIGRTMIN, SIG_IGN);
	ok(mixed == 0 && fast > reads / 4, "%llu reads (%llu by the event "
	   "path's one try) while a handler replaced the copy %d times: "
	   "every one on one line or the other (%llu mixed)",
	   (unsigned long long)reads, (unsigned long long)fast, (int)swaps,
	   (unsigned long long)mixed);
}

/*
 * The event path's conversion (one 64-bit multiplication) gives the value
 * of the 128-bit one whenever the product fits, and says so otherwise:
 * random tick counts and rates, then the edge at 2 GHz. A cell anchored
 * in the future, or too long ago, sends the event path to the general
 * read; one anchored 2 s ago does not, and is on the line.
 */
static void test_ticks_ns64(void)
{
	uint64_t d, m, n, t0, t1, v;
	int i, wrong = 0, fits = 0;

	for (i = 0; i < 200000; i++) {
		unsigned __int128 p;
		bool ret;

		m = (chk_rnd() >> 28) | 1;		/* up to 2^36 */
		d = chk_rnd() >> (chk_rnd() % 64);
		p = (unsigned __int128)d * m;
		ret = tracer__clock_ticks_ns64(d, m, &n);
		fits += ret;
		wrong += ret != (p >> 64 == 0) ||
			 (ret && n != tracer__clock_ticks_ns(d, m));
	}
	ok(wrong == 0 && fits > 1000 && fits < 199000, "200,000 tick counts "
	   "and rates: one 64-bit product whenever it fits (%d times), the "
	   "128-bit value exactly (%d wrong)", fits, wrong);
	m = 1ULL << 31;					/* 0.5 ns a tick */
	ok(tracer__clock_ticks_ns64((1ULL << 33) - 1, m, &n) &&
	   n == (1ULL << 32) - 1 && !tracer__clock_ticks_ns64(1ULL << 33, m,
							       &n),
	   "at 2 GHz: 2^33 - 1 ticks (4.3 s) in 64 bits, 2^33 not");
	cell = (struct tracer_clock_cell){ .clock = { .kind = TRACER_CLOCK_TSC,
		.tsc_base = tracer__rdtsc() + (1ULL << 30), .ns_base = 1ULL << 50,
		.mult = MULT_HALF } };
	ok(!tracer__clock_cell_try_tsc(&cell, &v),
	   "an anchor ahead of this CPU's TSC: the general read");
	cell.clock.tsc_base = tracer__rdtsc() - (1ULL << 34);
	ok(!tracer__clock_cell_try_tsc(&cell, &v),
	   "an anchor 2^34 ticks ago at 0.5 ns a tick: the general read");
	cell.clock.tsc_base = tracer__rdtsc() - (1ULL << 32);
	t0 = tracer__rdtsc();
	i = tracer__clock_cell_try_tsc(&cell, &v);
	t1 = tracer__rdtsc();
	ok(i && on_line(&cell.clock, t0, t1, v),
	   "an anchor 2^32 ticks ago: one multiplication, on the line");
}

/* The line's time minus clock_gettime()'s, the smallest in 10 tries: a
 * thread preempted between the two reads sees a gap that is the
 * scheduler's, not the line's. */
static int64_t line_gap(const struct tracer_clock *c)
{
	int64_t d, best = INT64_MAX;
	int i;

	for (i = 0; i < 10; i++) {
		d = (int64_t)(tracer__clock_read(c) - tracer__clock_now());
		if (llabs(d) < llabs(best))
			best = d;
	}
	return best;
}

static void test_this_machine(void)
{
	struct tracer_clock c;
	char why[160];
	int64_t d;
	int ret;

	if (tracer__clock_tsc_usable(true, why, sizeof(why))) {
		ok(1, "# SKIP no invariant TSC here: %s", why);
		ok(1, "# SKIP no invariant TSC here");
		return;
	}
	ret = chk_tsc_line(&c, 50);
	ok(ret == 0 && c.tsc_hz > 100000000,
	   "calibrated over 50 ms: %llu Hz", (unsigned long long)c.tsc_hz);
	d = line_gap(&c);
	ok(tracer__clock_cpus_agree(&c, TRACER_CLOCK_CPU_TOLERANCE_NS, why,
				    sizeof(why)) == 0 &&
	   d > -20000 && d < 20000,
	   "the line agrees with clock_gettime() on every CPU (%lld ns here)",
	   (long long)d);
}
#endif

static void test_writer_never_earlier(void)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
		.subbuf_count = 4, .mode = TRACER_RB_DISCARD };
	struct tracer_clock_cell cc = { 0 };
	struct tracer_clock back = { .kind = TRACER_CLOCK_MONOTONIC };
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	uint64_t size, first, ahead;
	char *region = chk_channel(&cfg, &size);
	int i, bad = 0;

	if (!region || tracer__rb_writer_attach(&w, region, size, 1, NULL))
		bail_out("cannot create a channel");
	/* A clock 10 s ahead of CLOCK_MONOTONIC, then CLOCK_MONOTONIC. */
	ahead = tracer__clock_now() + 10000000000ULL;
	cc.clock = (struct tracer_clock){ .kind = TRACER_CLOCK_TSC,
		.tsc_base = tracer__rdtsc(), .ns_base = ahead,
		.mult = 1ULL << TRACER_CLOCK_SHIFT };
	if (!TRACER_CLOCK_HAVE_TSC)
		cc.clock.kind = TRACER_CLOCK_MONOTONIC;
	w.clock = &cc;
	bad |= tracer__rb_reserve(&w, &ctx, 1, 8);
	tracer__rb_commit(&w, &ctx);
	first = ctx.timestamp;
	tracer__clock_cell_set(&cc, &back);
	for (i = 0; i < 100 && !bad; i++) {
		bad |= tracer__rb_reserve(&w, &ctx, 1, 8);
		tracer__rb_commit(&w, &ctx);
		bad |= ctx.timestamp < first;
	}
	ok(!bad, "the clock stepped back: the next records are stamped no "
	   "earlier than the last one");
	free(region);
}

int main(void)
{
	if (!TRACER_CLOCK_HAVE_TSC) {
		printf("1..0 # SKIP no TSC clock on this architecture\n");
		return 0;
	}
	plan(21);
	test_line();
	test_start();
	test_steer();
	test_ten_minutes();
#if TRACER_CLOCK_HAVE_TSC
	test_cell_under_signals();
	test_ticks_ns64();
	test_this_machine();
#endif
	test_writer_never_earlier();
	return done();
}
