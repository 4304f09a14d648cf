/*
 * tracee.c - a traced program for the integration tests (links libtracer).
 *
 *   tracee threads N M        N threads record M numbered events each
 *   tracee churn TOTAL ALIVE [PAUSE [END]]
 *                             TOTAL short-lived threads, ALIVE at a time,
 *                             3 events each; after PAUSE threads print
 *                             "paused" and wait for a line on stdin; then
 *                             the image ends by END: exit (return from
 *                             main), or, after the main thread recorded
 *                             test:end, exec (execv /bin/true), _exit,
 *                             kill (SIGKILL to itself)
 *   tracee print N            print N lines, and record each
 *   tracee scribble           record, overwrite the process's own tracer
 *                             shared memory with garbage once tracerd has
 *                             answered, record again
 *   tracee scribble-early     the same at once, before tracerd has read
 *                             the pool the process made at its start
 *   tracee types              one event of every argument type, then
 *                             three of a call site described by hand
 *                             (three values) given to three entries
 *   tracee many N [END]       N call sites described by hand, the last
 *                             ones with ids past the compact header's:
 *                             an event on the first and the last three;
 *                             prints "ids FIRST LAST"; the image ends by
 *                             END, as churn's (exit, exec, _exit)
 *   tracee signals N [unregister]
 *                             the main thread records N events while a
 *                             20 kHz timer signal records into the same
 *                             buffer from its handler; prints how many
 *                             the handler recorded. unregister: after
 *                             its first event the thread takes its
 *                             restartable sequence area back from the
 *                             kernel (exit 4 where it has none), and the
 *                             timer runs at 100 kHz
 *   tracee hold N [M]         N threads alive at once record M events each
 *                             (10), then "holding" is printed and they wait
 *                             for a line on stdin before exiting
 *   tracee burst N            N threads started at once record 10
 *                             events each, wait until all have, and exit
 *                             (more threads than the pool's buffers: no
 *                             one waits for tracerd to grow it)
 *   tracee paced RATE         one thread records numbered events of 250
 *                             bytes at RATE a second (a burst each
 *                             millisecond), prints
 *                             "recording" after the first burst and
 *                             "recorded N" once stdin reaches its end
 *   tracee flat N             N threads record numbered events as fast as
 *                             they can while the process's control page
 *                             says a session is recording (they wait up to
 *                             10 s for it to say so); then one line per
 *                             thread "thread T calls C": C calls made while
 *                             it said so, of which C or C - 1 reached the
 *                             buffer (the last one may have found the
 *                             session stopped inside tracer_record)
 *
 * Every event carries enough to check the trace: thread index and sequence.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <tracer.h>
#include "pool_layout.h"
#include "rseq.h"

static long events;

static void *seq_thread(void *arg)
{
	int t = (int)(long)arg;
	long i;

	for (i = 0; i < events; i++)
		tracer_record("test:seq", "thread %d seq %ld", t, i);
	return NULL;
}

static int run_threads(int n, long m)
{
	pthread_t th[256];
	int i;

	if (n < 1 || n > 256)
		return 2;
	events = m;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, seq_thread, (void *)(long)i))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static void *churn_thread(void *arg)
{
	int t = (int)(long)arg, step;

	for (step = 0; step < 3; step++)
		tracer_record("test:churn", "thread %d step %d", t, step);
	return NULL;
}

static int run_churn(int total, int alive, int pause_at)
{
	pthread_t th[1024];
	int started = 0, done = 0;
	char line[16];

	if (alive < 1 || alive > 1024)
		return 2;
	while (done < total) {
		while (started < total && started - done < alive) {
			if (pthread_create(&th[started % alive], NULL,
					   churn_thread, (void *)(long)started))
				return 1;
			started++;
		}
		pthread_join(th[done % alive], NULL);
		done++;
		if (done == pause_at) {
			printf("paused\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				return 1;
		}
	}
	return 0;
}

/* The end of the image a churn asked for (exit: return from main); the
 * others told first by an event of the main thread (test:end). */
static int end_image(const char *how)
{
	static char true_[] = "true";
	char *argv[] = { true_, NULL };

	if (strcmp(how, "exit"))	/* main records nothing else */
		tracer_record("test:end", "how %s", how);
	fflush(stdout);
	if (!strcmp(how, "exec"))
		execv("/bin/true", argv);
	else if (!strcmp(how, "_exit"))
		_exit(0);
	else if (!strcmp(how, "kill"))
		raise(SIGKILL);
	else if (!strcmp(how, "exit"))
		return 0;
	return 2;
}

static volatile sig_atomic_t handler_events;

static void on_alarm(int sig)
{
	(void)sig;
	tracer_record("test:signal", "handler %d", (int)handler_events);
	handler_events++;
}

/*
 * Take the C library's restartable sequence area back from the kernel
 * (rseq(2) with RSEQ_FLAG_UNREGISTER, the area and signature glibc
 * registered). Returns 0, or -1 where there is none (not x86-64 glibc
 * 2.35, or nothing registered).
 */
static int unregister_rseq(void)
{
#if TRACER_HAVE_RSEQ
	/* 32: the size glibc registers its area with. */
	if (__rseq_size == 0)
		return -1;
	return syscall(SYS_rseq, tracer__rseq_area(), 32, RSEQ_FLAG_UNREGISTER,
		       RSEQ_SIG) ? -1 : 0;
#else
	return -1;
#endif
}

static int run_signals(long n, bool unregister)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	long i;

	/* Unregistered: 100 kHz, so that some land inside a reservation
	 * whatever the machine's speed. */
	if (unregister)
		it.it_interval.tv_usec = it.it_value.tv_usec = 10;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 1;
	for (i = 0; i < n; i++) {
		tracer_record("test:main", "main %ld", i);
		/* After the first event: the thread has its buffer. */
		if (i == 0 && unregister && unregister_rseq())
			return 4;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	/* A signal already pending must not run after we count. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	sigprocmask(SIG_BLOCK, &sa.sa_mask, NULL);
	printf("%d\n", (int)handler_events);
	return 0;
}

static pthread_barrier_t hold_barrier;
static long hold_events = 10;

static void *hold_thread(void *arg)
{
	int t = (int)(long)arg;
	long i;

	for (i = 0; i < hold_events; i++)
		tracer_record("test:hold", "thread %d event %ld", t, i);
	pthread_barrier_wait(&hold_barrier);	/* all recorded */
	pthread_barrier_wait(&hold_barrier);	/* released by main */
	return NULL;
}

static int run_hold(int n)
{
	pthread_t th[1024];
	char line[16];
	int i;

	if (n < 1 || n > 1024)
		return 2;
	pthread_barrier_init(&hold_barrier, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, hold_thread, (void *)(long)i))
			return 1;
	pthread_barrier_wait(&hold_barrier);
	printf("holding\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&hold_barrier);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static pthread_barrier_t burst_barrier;

static void *burst_thread(void *arg)
{
	int t = (int)(long)arg, i;

	for (i = 0; i < 10; i++)
		tracer_record("test:burst", "thread %d event %d", t, i);
	pthread_barrier_wait(&burst_barrier);	/* all alive, all recorded */
	return NULL;
}

static int run_burst(int n)
{
	pthread_t th[1024];
	int i;

	if (n < 1 || n > 1024)
		return 2;
	pthread_barrier_init(&burst_barrier, NULL, (unsigned)n);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, burst_thread, (void *)(long)i))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* The process's control page, as libtracer mapped it; NULL if none. */
static const struct tracer_control *find_control(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	const struct tracer_control *ctl = NULL;
	char line[512];
	unsigned long lo;

	if (!f)
		return NULL;
	while (!ctl && fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:tracer-control") &&
		    sscanf(line, "%lx-", &lo) == 1)
			ctl = (const struct tracer_control *)lo;
	fclose(f);
	return ctl;
}

static const struct tracer_control *flat_ctl;
static unsigned long flat_calls[64];

static void *flat_thread(void *arg)
{
	int t = (int)(long)arg;
	unsigned long n = 0;

	while (__atomic_load_n(&flat_ctl->epoch, __ATOMIC_ACQUIRE) != 0) {
		tracer_record("test:flat", "thread %d seq %lu", t, n);
		n++;
	}
	flat_calls[t] = n;
	return NULL;
}

/* Wait (10 s at most) until the control page says recording. */
static int wait_recording(void)
{
	int i;

	for (i = 0; i < 10000; i++) {
		flat_ctl = find_control();
		if (flat_ctl && __atomic_load_n(&flat_ctl->epoch,
						 __ATOMIC_ACQUIRE) != 0)
			return 0;
		usleep(1000);
	}
	return -1;
}

static int run_flat(int n)
{
	pthread_t th[64];
	int i;

	if (n < 1 || n > 64)
		return 2;
	if (wait_recording()) {
		fprintf(stderr, "tracee: no session recording\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, flat_thread, (void *)(long)i))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		printf("thread %d calls %lu\n", i, flat_calls[i]);
	return 0;
}

static int run_print(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		printf("line %d of %d\n", i, n);
		tracer_record("test:print", "line %d of %d", i, n);
	}
	return 0;
}

/* Overwrite every tracer shared-memory mapping with a pattern. */
static int scribble(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (!strstr(line, "memfd:tracer-pool") ||
		    sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[1] != 'w')
			continue;
		for (unsigned long p = lo; p < hi; p += 8)
			*(volatile unsigned long *)p =
				0xdeadbeef00000000UL ^ (p * 2654435761UL);
		n++;
	}
	fclose(f);
	return n > 0 ? 0 : 1;
}

/* Does the process map a control page of its own (tracerd's reply read:
 * its pool is in tracerd's hands)? */
static bool has_control_page(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "memfd:tracer-control") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* early: scribble at once, over the segment the process made at its start
 * (tracerd has not taken it yet); otherwise once tracerd answered. */
static int run_scribble(bool early)
{
	int i, ret;

	for (i = 0; !early && i < 1000; i++)
		tracer_record("test:before", "event %d", i);
	for (i = 0; !early && i < 10000 && !has_control_page(); i++) {
		tracer_record("test:wait", "event %d", i);
		usleep(1000);
	}
	ret = scribble();
	for (i = 0; i < 100000; i++)
		tracer_record("test:after", "event %d", i);
	printf(ret ? "nothing to scribble on\n" : "scribbled\n");
	return ret;
}

static volatile int paced_stop;

static void *paced_stdin(void *arg)
{
	char buf[256];

	(void)arg;
	while (read(0, buf, sizeof(buf)) > 0)
		;
	paced_stop = 1;
	return NULL;
}

/* Events at rate a second, a burst a millisecond, until stdin ends. */
static int run_paced(long rate)
{
	struct timespec next;
	pthread_t th;
	long seq = 0, burst = rate / 1000 > 0 ? rate / 1000 : 1, i;
	char pad[201];

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	if (pthread_create(&th, NULL, paced_stdin, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!paced_stop) {
		for (i = 0; i < burst; i++, seq++)
			tracer_record("test:paced", "seq %ld %s", seq, pad);
		if (seq == burst) {
			printf("recording\n");
			fflush(stdout);
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
	}
	pthread_join(th, NULL);
	printf("recorded %ld\n", seq);
	return 0;
}

/*
 * A descriptor not made by the macros: three values, handed to the entry
 * for one value, to the one for three and to tracer_record_emit(); each
 * must write the three values the descriptor declares.
 */
static struct tracer_callsite by_hand = {
	.abi = TRACER_CALLSITE_ABI, .nargs = 3, .name = "test:hand",
	.format = "%ld %ld %ld", .file = __FILE__, .types = "iii",
};

static void record_by_hand(void)
{
	const union tracer_arg v[3] = { { .i = 1 }, { .i = 2 }, { .i = 3 } };

	tracer_register_callsites(&by_hand, &by_hand + 1);
	tracer_record_emit1(&by_hand, v);
	tracer_record_emit3(&by_hand, v);
	tracer_record_emit(&by_hand, v);
	tracer_unregister_callsites(&by_hand, &by_hand + 1);
}

/*
 * n call sites described by hand, registered at once, so that the last
 * ones get ids past the compact header's (4094): one event of two values
 * on the first and on each of the last three, through the entry the
 * macros call. Prints "ids FIRST LAST".
 */
#define MANY_NAME	24
static int run_many(int n)
{
	struct tracer_callsite *cs = calloc((size_t)n, sizeof(*cs));
	char (*names)[MANY_NAME] = calloc((size_t)n, MANY_NAME);
	int i, k[4] = { 0, n - 3, n - 2, n - 1 };

	if (n < 4 || !cs || !names)
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(names[i], MANY_NAME, "test:many%d", i);
		cs[i] = (struct tracer_callsite){
			.abi = TRACER_CALLSITE_ABI, .nargs = 2,
			.name = names[i], .format = "%ld %ld",
			.file = __FILE__, .types = "ii" };
	}
	tracer_register_callsites(cs, cs + n);
	for (i = 0; i < 4; i++) {
		const union tracer_arg v[2] = { { .i = k[i] }, { .i = -k[i] } };

		tracer_record_emit2(&cs[k[i]], v);
	}
	printf("ids %u %u\n", cs[0].id, cs[n - 1].id);
	tracer_unregister_callsites(cs, cs + n);
	free(names);
	free(cs);
	return 0;
}

static int run_types(void)
{
	long double ld = 2.5L;
	const char *null = NULL;
	char big[2000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tracer_record("test:types", "%hhd %hu %d %ld %lld %u %lx %c",
		      (signed char)-5, (unsigned short)65535, -42, -1L, 1LL << 40,
		      4000000000u, 0xabcUL, 'Z');
	tracer_record("test:types", "%.3f %e %Lg %p %s|%s", 3.14159, 1e-300,
		      ld, (void *)0x1234, "str", null);
	tracer_record("test:types", "%5.2s|%-6d|%+d|%%|%zu", "abcdef", 7, 8,
		      sizeof(big));
	tracer_record("test:long", "%s", big);
	tracer_record("test:none", "no arguments");
	record_by_hand();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return run_threads(atoi(argv[2]), atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "churn"))
		return run_churn(atoi(argv[2]), atoi(argv[3]),
				 argc > 4 ? atoi(argv[4]) : -1) ?:
		       end_image(argc > 5 ? argv[5] : "exit");
	if (argc >= 3 && !strcmp(argv[1], "print"))
		return run_print(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "scribble"))
		return run_scribble(false);
	if (argc >= 2 && !strcmp(argv[1], "scribble-early"))
		return run_scribble(true);
	if (argc >= 3 && !strcmp(argv[1], "signals"))
		return run_signals(atol(argv[2]),
				   argc > 3 && !strcmp(argv[3], "unregister"));
	if (argc >= 3 && !strcmp(argv[1], "hold")) {
		if (argc > 3)
			hold_events = atol(argv[3]);
		return run_hold(atoi(argv[2]));
	}
	if (argc >= 3 && !strcmp(argv[1], "burst"))
		return run_burst(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "flat"))
		return run_flat(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "paced"))
		return run_paced(atol(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "types"))
		return run_types();
	if (argc >= 3 && !strcmp(argv[1], "many"))
		return run_many(atoi(argv[2])) ?:
		       end_image(argc > 3 ? argv[3] : "exit");
	fprintf(stderr, "usage: tracee threads N M"
		" | churn TOTAL ALIVE [PAUSE [END]] | print N | scribble"
		" | types | hold N [M] | burst N | signals N [unregister] | flat N"
		" | paced RATE | many N [END]\n");
	return 2;
}
