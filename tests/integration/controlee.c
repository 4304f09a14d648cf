/*
 * controlee.c - a traced program driven through its standard input, for
 * the control tests (start/stop windows, filters, switch, snapshot, the
 * update signal). It answers each command line with one line.
 *
 *   controlee stream N [PACE]
 *                          N threads record without pause (or one event
 *                          every PACE nanoseconds at most, busy-waiting
 *                          on the clock), alternating "test:a" and "test:b"
 *                          events that carry the thread index, a
 *                          per-thread sequence number and a check value
 *                          (seq * 7 + 3)
 *   controlee burst        records only when told
 *   controlee handler MODE installs its own handler for SIGRTMIN+3 with
 *                          sigaction (MODE "sigaction") or signal()
 *                          ("signal"), counts the signals it gets
 *   controlee block        blocks SIGRTMIN+3 in every thread, then as burst
 *   controlee sigsys [write|prctl]
 *                          (x86-64) a seccomp filter on the main thread
 *                          turns every write(2) of exactly 8 bytes (or
 *                          every prctl(PR_GET_NAME)) into SIGSYS, whose
 *                          handler records "test:sys", counts, and makes
 *                          the call itself (the write with writev, the
 *                          name "controlee"); then as burst. libtracer's
 *                          own calls of that kind (the wake-up of tracerd
 *                          when a vital sub-buffer closes; the thread's
 *                          name at its first event in a session) thus run
 *                          a handler that records in the middle of the
 *                          thread's update ("unsupported" instead of
 *                          "ready" elsewhere)
 *
 * Commands:
 *   c        print the counters: per-thread sequence numbers (stream), or
 *            the signals the program's handler got (handler)
 *   r N      the main thread records N events "test:burst" (seq, check)
 *   v        the main thread records one vital event "test:vital"
 *   e        the main thread records one event "test:error" (default
 *            channel)
 *   w N      a new thread records N events "test:worker" and exits
 *   p        print the signal mask bit and pending state of SIGRTMIN+3
 *   j        raise SIGUSR2, whose handler leaves by siglongjmp() (a
 *            program's way back from an error: shells, test frameworks)
 *   J        the same with the handler on an alternate signal stack
 *   q        stop and exit 0
 * Every command prints one line ("ok ..." or the counters).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#ifdef __x86_64__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#endif

#include <tracer.h>

#define MAX_THREADS 8

static int nthreads;
static long pace_ns;
static unsigned long seqs[MAX_THREADS];	/* events each thread completed */
static int stop_flag;
static unsigned long burst_seq;
static volatile sig_atomic_t handled;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *stream_thread(void *arg)
{
	int t = (int)(long)arg;
	unsigned long s = 0;
	long next = now_ns();

	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		if (pace_ns) {
			long now;

			while ((now = now_ns()) < next)
				;
			/*
			 * No catching up: after the thread was descheduled it
			 * goes on at its pace, not in a burst at full speed.
			 */
			next = (now - next > pace_ns ? now : next) + pace_ns;
		}
		if (s & 1)
			tracer_record("test:b", "thread %d seq %lu check %lu", t,
				      s, s * 7 + 3);
		else
			tracer_record("test:a", "thread %d seq %lu check %lu", t,
				      s, s * 7 + 3);
		/* Counted once recorded: the test reads it after a command. */
		__atomic_store_n(&seqs[t], ++s, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *worker(void *arg)
{
	long i, n = (long)arg;

	for (i = 0; i < n; i++)
		tracer_record("test:worker", "seq %ld", i);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

static sigjmp_buf jump_back;

static void on_jump(int sig)
{
	(void)sig;
	siglongjmp(jump_back, 1);
}

/* A handler that never returns: it jumps back here. alt: it runs on an
 * alternate signal stack, alt[0 .. size), in a frame older than this one
 * (above the jump's target: only its being another stack tells that the
 * jump leaves the handler). */
static void jump_out(char *alt, size_t size)
{
	stack_t ss = { .ss_sp = alt, .ss_size = size };
	struct sigaction sa = { .sa_handler = on_jump,
				.sa_flags = alt ? SA_ONSTACK : 0 };

	sigemptyset(&sa.sa_mask);
	if (alt && sigaltstack(&ss, NULL)) {
		printf("sigaltstack: %s\n", strerror(errno));
		return;
	}
	if (sigaction(SIGUSR2, &sa, NULL)) {
		printf("sigaction: %s\n", strerror(errno));
		return;
	}
	if (sigsetjmp(jump_back, 1) == 0) {
		raise(SIGUSR2);
		printf("the handler returned\n");
		return;
	}
	printf("ok jumped\n");
}

static void print_counters(void)
{
	int t;

	if (nthreads == 0) {
		printf("%d\n", (int)handled);
		return;
	}
	for (t = 0; t < nthreads; t++)
		printf("%s%lu", t ? " " : "",
		       __atomic_load_n(&seqs[t], __ATOMIC_ACQUIRE));
	putchar('\n');
}

static void record_burst(long n)
{
	long i;

	for (i = 0; i < n; i++, burst_seq++)
		tracer_record("test:burst", "seq %lu check %lu", burst_seq,
			      burst_seq * 7 + 3);
	printf("ok %lu\n", burst_seq);
}

static void run_worker(long n)
{
	pthread_t th;

	if (pthread_create(&th, NULL, worker, (void *)n) == 0)
		pthread_join(th, NULL);
	printf("ok worker\n");
}

/* Blocked in this thread? Pending for the process or this thread? */
static void print_sigstate(void)
{
	sigset_t mask, pend;

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	sigpending(&pend);
	printf("blocked %d pending %d\n", sigismember(&mask, SIGRTMIN + 3),
	       sigismember(&pend, SIGRTMIN + 3));
}

static int serve(void)
{
	char alt[64 * 1024];	/* 'J': an alternate stack above jump_out() */
	char line[128];

	for (;;) {
		if (!fgets(line, sizeof(line), stdin)) {
			/* The program's handler has no SA_RESTART. */
			if (errno != EINTR || feof(stdin))
				return 0;
			clearerr(stdin);
			continue;
		}
		switch (line[0]) {
		case 'c': print_counters(); break;
		case 'r': record_burst(atol(line + 1)); break;
		case 'v':
			tracer_record_vital("test:vital", "vital %lu",
					    burst_seq);
			printf("ok vital\n");
			break;
		case 'e':
			tracer_record("test:error", "error %lu", burst_seq);
			printf("ok error\n");
			break;
		case 'w': run_worker(atol(line + 1)); break;
		case 'p': print_sigstate(); break;
		case 'j': jump_out(NULL, 0); break;
		case 'J': jump_out(alt, sizeof(alt)); break;
		case 'q': return 0;
		default: printf("unknown command\n"); break;
		}
		fflush(stdout);
	}
}

static int run_stream(int n)
{
	pthread_t th[MAX_THREADS];
	int t, ret;

	if (n < 1 || n > MAX_THREADS)
		return 2;
	nthreads = n;
	for (t = 0; t < n; t++)
		pthread_create(&th[t], NULL, stream_thread, (void *)(long)t);
	printf("ready\n");
	fflush(stdout);
	ret = serve();
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	return ret;
}

static int install(const char *how)
{
	struct sigaction sa;

	if (!strcmp(how, "signal"))
		return signal(SIGRTMIN + 3, on_signal) == SIG_ERR;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGRTMIN + 3, &sa, NULL);
}

#ifdef __x86_64__
/* The trapped call: recorded, counted, and made (a write with writev(2):
 * the wake-up reaches tracerd, which then arms the next one). */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	greg_t *r = ((ucontext_t *)uc)->uc_mcontext.gregs;
	struct iovec v = { (void *)r[REG_RSI], (size_t)r[REG_RDX] };
	int saved = errno;
	long ret = 0;

	(void)sig;
	tracer_record("test:sys", "syscall %d arg %lld", si->si_syscall,
		      (long long)r[REG_RDI]);
	if (si->si_syscall == SYS_write)
		ret = syscall(SYS_writev, (int)r[REG_RDI], &v, 1);
	else	/* prctl(PR_GET_NAME, name) */
		memcpy((char *)r[REG_RSI], "controlee", 10);
	r[REG_RAX] = ret < 0 ? -errno : ret;
	handled++;
	errno = saved;
}

#define ARG_LO(n)	(offsetof(struct seccomp_data, args) + 8 * (n))

/* write(fd, buf, 8), or prctl(PR_GET_NAME, ...), on this thread: SIGSYS.
 * Returns 0 or -1. */
static int trap_calls(const char *what)
{
	int prctl_name = !strcmp(what, "prctl");
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 prctl_name ? SYS_prctl : SYS_write, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(prctl_name ? 0 : 2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 prctl_name ? PR_GET_NAME : 8, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 ARG_LO(prctl_name ? 0 : 2) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (!prctl_name && strcmp(what, "write"))
		return -1;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
#else
static int trap_calls(const char *what)
{
	(void)what;
	return -1;
}
#endif

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	sigset_t set;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "stream") && (argc == 3 || argc == 4)) {
		pace_ns = argc == 4 ? atol(argv[3]) : 0;
		return run_stream(atoi(argv[2]));
	}
	if (!strcmp(mode, "handler") && argc == 3 && install(argv[2]))
		return 1;
	if (!strcmp(mode, "sigsys") &&
	    trap_calls(argc > 2 ? argv[2] : "write")) {
		printf("unsupported\n");
		return 0;
	}
	if (!strcmp(mode, "block")) {
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN + 3);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	if (!strcmp(mode, "burst") || !strcmp(mode, "block") ||
	    !strcmp(mode, "handler") || !strcmp(mode, "sigsys")) {
		printf("ready\n");
		fflush(stdout);
		return serve();
	}
	fprintf(stderr, "usage: controlee stream N | burst | block | "
		"handler sigaction|signal | sigsys [write|prctl]\n");
	return 2;
}
