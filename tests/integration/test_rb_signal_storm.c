/*
 * test_rb_signal_storm.c - signal handlers recording into the buffer of the
 * thread they interrupt.
 *
 * The main thread records as fast as it can. Two POSIX timers aimed at it
 * (SIGEV_THREAD_ID) fire at 20 kHz and 7 kHz; their handlers record into
 * the same channel (and every 16th also flushes it), and the second signal
 * may interrupt the first handler, so records nest up to three deep. A
 * reader thread drains the channel meanwhile. Every record carries its
 * stream, a sequence number and a checksum; at the end every record read
 * must be intact and in order within its stream, and
 * recorded + lost == produced must hold exactly.
 *
 * The loop runs until enough interruptions have landed *between* a
 * reservation and its commit (counted by the handlers), so the test cannot
 * pass without exercising the case it is about.
 *
 * A fourth and a fifth storm (discard, flight), where the C library
 * registered a restartable sequence area for the thread (common/rseq.h),
 * write every record that fits through tracer__rb_write_words() with its
 * reservation as a restartable sequence, main loop and handlers alike:
 * each runs until the kernel has aborted 1500 sequences, each interrupted
 * by a signal (or a preemption) between its first load and its commit,
 * and the same checks must hold.
 *
 * A third storm stamps with the TSC clock (common/clock.h) and its
 * handler replaces the thread's copy of the clock every 16th record, with
 * a line 1 ms ahead or behind the other: the copy is read whole however a
 * handler interrupts the read, and no stamp of the channel ever goes back
 * (the reader's own order check within a packet, and one across packets).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock_history.h"
#include "clock_make.h"
#include "rb.h"
#include "rb_check.h"
#include "tap.h"

#define MIN_MAIN	1000000ULL
#define MIN_NESTED	300ULL
#define MAX_MAIN	400000000ULL
#define MIN_ABORTS	1500ULL

static struct tracer_rb_writer w;
static struct tracer_rb_reader r;
static struct chk_state st;
static char copy[1 << 16] __attribute__((aligned(64)));
static volatile sig_atomic_t in_window;	/* main: between reserve/commit */
static volatile sig_atomic_t in_handler1;
static uint64_t produced[3], nested, nested2;
/* The TSC storm: the thread's clock and the two lines it swaps. */
static struct tracer_clock_cell cell;
static struct tracer_clock lines[2];
static int swapping;
static int writer_done;
static int by_words;	/* the rseq storms: tracer__rb_write_words() */

/* Record seq of stream as the storm does: through reserve and commit, or
 * in the rseq storms through tracer__rb_write_words() when its payload
 * is at most 8 words (it takes no more). */
static void record(uint32_t stream, uint64_t seq)
{
	uint64_t words[(sizeof(struct chk_payload) + 8 * CHK_MAX_FILL) / 8];
	uint32_t size = chk_payload_size(stream, seq);

	if (!by_words || size / 8 > 8) {
		chk_record(&w, stream, seq);
		return;
	}
	chk_fill(words, stream, seq);
	tracer__rb_write_words(&w, 100 + stream, words, sizeof(words[0]),
			       size / 8);
}

static void on_signal(int sig)
{
	int saved = errno, stream = sig == SIGRTMIN ? 1 : 2;

	if (in_window)
		nested++;
	if (stream == 2 && in_handler1)
		nested2++;
	if (stream == 1)
		in_handler1 = 1;
	record((uint32_t)stream, produced[stream]++);
	if (produced[stream] % 16 == 0)
		tracer__rb_flush(&w);
	if (swapping && stream == 1 && produced[1] % 16 == 8)
		tracer__clock_cell_set(&cell, &lines[produced[1] / 16 & 1]);
	if (stream == 1)
		in_handler1 = 0;
	errno = saved;
}

static timer_t start_timer(int sig, long period_ns)
{
	timer_t t;
	int ret = chk_thread_timer(sig, period_ns, &t);

	if (ret)
		bail_out("timer: %s", strerror(-ret));
	return t;
}

static void install(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);	/* the other signal may nest */
	sigaction(sig, &sa, NULL);
}

static void *reader_main(void *arg)
{
	int n, last = 0;

	(void)arg;
	while (!last) {
		last = __atomic_load_n(&writer_done, __ATOMIC_ACQUIRE);
		n = chk_drain(&r, &st, copy, sizeof(copy));
		if (n < 0)
			bail_out("reader: %s", r.error);
		if (n == 0 && !last)
			sched_yield();
	}
	return NULL;
}

/* One main-thread record, flagging the reserve..commit window. */
static void main_record(void)
{
	struct tracer_rb_ctx ctx;
	uint64_t seq = produced[0]++;

	if (by_words) {
		record(0, seq);
		return;
	}
	if (tracer__rb_reserve(&w, &ctx, 100, chk_payload_size(0, seq)))
		return;
	in_window = 1;
	chk_fill(ctx.payload, 0, seq);
	in_window = 0;
	tracer__rb_commit(&w, &ctx);
}

/* The TSC clock of the third storm: a line calibrated over 20 ms, and
 * the same 1 ms behind (more than a signal's delivery and return). */
static void tsc_clock(void)
{
#if TRACER_CLOCK_HAVE_TSC
	if (chk_tsc_line(&lines[0], 20))
		bail_out("cannot calibrate the TSC");
	lines[1] = lines[0];
	lines[1].ns_base -= 1000000;
	tracer__clock_cell_set(&cell, &lines[0]);
	w.clock = &cell;
	swapping = 1;
#endif
}

/*
 * The rseq storms' writer stamps in TSC ticks, read by a line
 * calibrated over 20 ms (tracerd's job in the product), and reserves by
 * restartable sequences.
 */
static void rseq_writer(void)
{
#if TRACER_CLOCK_HAVE_TSC
	static struct tracer_clock_history hist;
	static struct tracer_clock line;

	if (!hist.n) {
		if (chk_tsc_line(&line, 20) ||
		    tracer__clock_history_add(&hist, &line))
			bail_out("cannot calibrate the TSC");
	}
	r.history = &hist;
	tracer__rb_set_unit(&w, TRACER_RB_UNIT_TSC);
	w.rseq_slot = tracer__rseq_slot();
#endif
}

/* How a storm stamps and reserves. */
enum storm_kind { BY_NS, BY_TSC_CELL, BY_RSEQ };

/* Enough of the storm landed where it is meant to: handler records
 * between a reservation and its commit, or sequences the kernel aborted
 * (the rseq storms, whose reservation is a single step to a handler). */
static bool enough(void)
{
	if (by_words)
		return w.rseq_aborts >= MIN_ABORTS;
	return nested >= MIN_NESTED;
}

static void storm(enum tracer_rb_mode mode, const char *name,
		  enum storm_kind kind)
{
	struct tracer_rb_config cfg = { .subbuf_size = 4096,
		.subbuf_count = 16, .mode = mode,
		.start_count = UINT64_MAX - 64 * 4096 + 1 };
	uint64_t size, total;
	char *region = chk_channel(&cfg, &size);
	pthread_t rt;
	timer_t t1, t2;

	memset(&st, 0, sizeof(st));
	memset(produced, 0, sizeof(produced));
	nested = nested2 = 0;
	writer_done = 0;
	if (!region || tracer__rb_writer_attach(&w, region, size, 1, NULL) ||
	    tracer__rb_reader_attach(&r, region, size, NULL))
		bail_out("cannot create a channel");
	swapping = 0;
	by_words = kind == BY_RSEQ;
	st.check_time = 1;
	if (kind == BY_TSC_CELL)
		tsc_clock();
	if (by_words)
		rseq_writer();
	pthread_create(&rt, NULL, reader_main, NULL);
	t1 = start_timer(SIGRTMIN, 50000);
	t2 = start_timer(SIGRTMIN + 1, 143000);
	while ((produced[0] < MIN_MAIN || !enough()) &&
	       produced[0] < MAX_MAIN)
		main_record();
	timer_delete(t1);
	timer_delete(t2);
	/*
	 * The last records of each stream, so that the reader's final pass
	 * finds both even when it got no turn during the storm (a loaded
	 * machine; in flight mode the ring then holds only the newest
	 * 64 KiB, a few microseconds of the main loop).
	 */
	on_signal(SIGRTMIN);
	main_record();
	tracer__rb_flush(&w);
	__atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
	pthread_join(rt, NULL);
	total = produced[0] + produced[1] + produced[2];
	diag("%s: main %" PRIu64 ", handlers %" PRIu64 " + %" PRIu64
	     ", nested in window %" PRIu64 ", handler in handler %" PRIu64,
	     name, produced[0], produced[1], produced[2], nested, nested2);
	if (by_words)
		ok(w.rseq_aborts >= MIN_ABORTS, "%s: the kernel aborted %"
		   PRIu64 " reservations (a signal or a preemption inside)",
		   name, w.rseq_aborts);
	else
		ok(nested >= MIN_NESTED, "%s: %" PRIu64 " handler records "
		   "landed between a reservation and its commit", name,
		   nested);
	ok(st.bad == 0, "%s: every record intact, in order per stream, no "
	   "stamp earlier than the one before %s", name, st.first_error);
	is_u64(chk_total_seen(&st) + tracer__rb_lost(&r) + st.overwritten,
	       total, "%s: recorded + lost == produced (%" PRIu64 " records)",
	       name, total);
	ok(st.seen[1] > 0 && st.seen[0] > 0, "%s: records of the main loop "
	   "and of the handlers were read back", name);
	tracer__rb_reader_detach(&r);
	free(region);
}

int main(void)
{
	int i;

	plan(20);
	install(SIGRTMIN);
	install(SIGRTMIN + 1);
	storm(TRACER_RB_DISCARD, "discard", BY_NS);
	storm(TRACER_RB_FLIGHT, "flight", BY_NS);
	if (TRACER_CLOCK_HAVE_TSC)
		storm(TRACER_RB_DISCARD, "discard, TSC clock swapped by the "
		      "handler", BY_TSC_CELL);
	else
		for (i = 0; i < 4; i++)
			ok(1, "# SKIP no TSC clock on this machine");
	if (TRACER_CLOCK_HAVE_TSC && tracer__rseq_slot()) {
		storm(TRACER_RB_DISCARD, "discard, reserved by restartable "
		      "sequences", BY_RSEQ);
		storm(TRACER_RB_FLIGHT, "flight, reserved by restartable "
		      "sequences", BY_RSEQ);
	} else
		for (i = 0; i < 8; i++)
			ok(1, "# SKIP no restartable sequence area for this "
			   "thread (not x86-64, or none registered)");
	return done();
}
