/*
 * tracer.c - the event write path of libtracer, and per-thread state.
 *
 * Write path (tracer_record_emit)
 * ----------
 *   1. one plain load of the control page's `session`, compared with the
 *      session this thread is ready for (thread-local, initial-exec TLS);
 *   2. reserve in the thread's own channel (rb_write.h: a CPU-local CAS),
 *      store the values, commit (CPU-local adds).
 * No lock, no system call, no allocation, no shared cache line: the
 * control page is only read, the channel is the thread's own.
 *
 * A thread whose session does not match takes the slow path
 * (thread_prepare): take a buffer from the pool on the first event, record
 * the process and thread start events for the new session. The slow path
 * may run in a signal handler (the thread's first event can be one); a
 * handler that interrupts it finds `busy` set and drops its event.
 *
 * Thread exit (pthread key destructor) and process exit (library
 * destructor) record the thread's exit, switch its channels so tracerd
 * can take the last sub-buffers, and hand the buffer back to the pool.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

const struct tracer_control tracer__idle_control = {
	.magic = TRACER_CONTROL_MAGIC,
	.version = TRACER_POOL_VERSION,
	.size = sizeof(struct tracer_control),
	.session = 0,
};

const struct tracer_control *tracer__control = &tracer__idle_control;

static __thread struct tracer__thread tls
	__attribute__((tls_model("initial-exec"))) = {
	.session = UINT64_MAX,
};

static pthread_key_t exit_key;
static uint64_t process_start_session;

const char *tracer_version(void)
{
	return PACKAGE_VERSION;
}

/* Bytes of payload for cs's arguments (strings bounded). */
static uint32_t payload_size(const struct tracer_callsite *cs,
			     const union tracer_arg *args)
{
	uint32_t size = 0, i;

	for (i = 0; i < cs->nargs; i++) {
		switch (cs->types[i]) {
		case TRACER_ARG_STRING:
			size += args[i].s ? (uint32_t)strnlen(args[i].s,
				TRACER_STRING_MAX - 1) + 1 : sizeof("(null)");
			break;
		case TRACER_ARG_LDOUBLE:
			size += 16;
			break;
		default:
			size += 8;
		}
	}
	return size;
}

/* Store the values packed (doc/session-files.md); returns the end. */
static char *store_args(char *p, const struct tracer_callsite *cs,
			const union tracer_arg *args)
{
	uint32_t i;

	for (i = 0; i < cs->nargs; i++) {
		if (cs->types[i] == TRACER_ARG_STRING) {
			const char *s = args[i].s ? args[i].s : "(null)";
			size_t n = strnlen(s, TRACER_STRING_MAX - 1);

			memcpy(p, s, n);
			p[n] = '\0';
			p += n + 1;
		} else if (cs->types[i] == TRACER_ARG_LDOUBLE) {
			memset(p, 0, 16);
			memcpy(p, args[i].ld, sizeof(args[i].ld));
			p += 16;
		} else {
			memcpy(p, &args[i].u, 8);
			p += 8;
		}
	}
	return p;
}

static void write_event(struct tracer_rb_writer *w,
			const struct tracer_callsite *cs,
			const union tracer_arg *args)
{
	struct tracer_rb_ctx ctx;
	uint32_t size = payload_size(cs, args);
	char *end;

	if (tracer__rb_reserve(w, &ctx, cs->id, size)) {
		/* -ENOBUFS was counted by the channel; count -EMSGSIZE too. */
		if (size > w->max_payload)
			tracer__local_inc64(&w->hdr->lost);
		return;
	}
	end = store_args(ctx.payload, cs, args);
	/* Zero the alignment padding: the file must not leak memory. */
	memset(end, 0, (size_t)(-(uintptr_t)end & (TRACER_RB_ALIGN - 1)));
	tracer__rb_commit(w, &ctx);
}

/* Every argument 8 bytes (TRACER__CS_FIXED): no type dispatch. */
static void write_fixed(struct tracer_rb_writer *w,
			const struct tracer_callsite *cs,
			const union tracer_arg *args)
{
	struct tracer_rb_ctx ctx;
	uint32_t i, n = cs->nargs;
	uint64_t *p;

	if (tracer__rb_reserve(w, &ctx, cs->id, n * 8))
		return;		/* counted as lost by the channel */
	p = ctx.payload;	/* 8-byte aligned: records are */
	for (i = 0; i < n; i++)
		p[i] = args[i].u;
	tracer__rb_commit(w, &ctx);
}

static bool take_buffer(struct tracer__thread *t)
{
	int c;

	if (t->pool_epoch == (tracer__pool_epoch() | 1))
		return false;	/* still nothing free since last time */
	t->tid = (uint32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	t->name[15] = '\0';
	if (tracer__pool_acquire(&t->buf, t->tid, t->name)) {
		t->pool_epoch = tracer__pool_epoch() | 1;
		return false;
	}
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		if (tracer__pool_attach(&t->buf, c, &t->ch[c], t->tid)) {
			tracer__pool_release(&t->buf);
			t->state = TRACER__THREAD_EXITED;
			return false;
		}
		/* The channel's count runs on across owners: ours from here. */
		t->lost_base[c] = TRACER_READ_ONCE(t->ch[c].hdr->lost);
	}
	pthread_setspecific(exit_key, t);
	t->state = TRACER__THREAD_READY;
	return true;
}

/*
 * The session is s (not 0), not the one t is ready for. Returns true to
 * record. Out of line and cold: the event path stays small.
 */
static bool __attribute__((noinline, cold))
thread_prepare(struct tracer__thread *t, uint64_t s)
{
	int saved = errno;
	bool ok = false;

	if (t->busy || t->state == TRACER__THREAD_EXITED)
		goto out;
	t->busy = 1;
	if (t->state == TRACER__THREAD_NEW && !take_buffer(t)) {
		t->lost_no_buffer++;
		tracer__pool_add_lost(1);
		t->busy = 0;
		goto out;
	}
	t->session = s;
	/* The library's own events: the thread is ready for session s. */
	if (__atomic_exchange_n(&process_start_session, s,
				__ATOMIC_RELAXED) != s)
		tracer_record_vital("tracer:process_start", "pid %d name %s",
				    (int)getpid(), t->name);
	tracer_record_vital("tracer:thread_start", "tid %d name %s",
			    (int)t->tid, t->name);
	if (t->lost_no_buffer)
		tracer_record_vital("tracer:lost", "%llu events dropped before "
				    "this thread had a buffer",
				    (unsigned long long)t->lost_no_buffer);
	t->busy = 0;
	ok = true;
out:
	errno = saved;
	return ok;
}

void tracer_record_emit(const struct tracer_callsite *cs,
			const union tracer_arg *args)
{
	struct tracer__thread *t = &tls;
	uint64_t s = TRACER_READ_ONCE(tracer__control->session);
	struct tracer_rb_writer *w;

	if (tracer_unlikely(s != t->session) &&
	    (s == 0 || !thread_prepare(t, s)))
		return;
	if (tracer_unlikely(cs->id == 0 || cs->nargs > TRACER_MAX_ARGS))
		return;
	w = &t->ch[cs->vital ? TRACER_CHANNEL_VITAL : TRACER_CHANNEL_DEFAULT];
	if (tracer_likely(cs->enabled & TRACER__CS_FIXED))
		write_fixed(w, cs, args);
	else
		write_event(w, cs, args);
}

void tracer__thread_exit(void)
{
	struct tracer__thread *t = &tls;
	int saved = errno, c;

	if (t->state != TRACER__THREAD_READY || t->busy)
		return;
	t->busy = 1;
	if (t->session != 0 &&
	    TRACER_READ_ONCE(tracer__control->session) == t->session) {
		uint64_t lost = 0;

		prctl(PR_GET_NAME, t->name, 0, 0, 0);	/* it may have changed */
		t->name[15] = '\0';
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			lost += TRACER_READ_ONCE(t->ch[c].hdr->lost) -
				t->lost_base[c];
		tracer_record_vital("tracer:thread_exit",
				    "tid %d name %s lost %llu", (int)t->tid,
				    t->name, (unsigned long long)lost);
	}
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		tracer__rb_flush(&t->ch[c]);
	t->state = TRACER__THREAD_EXITED;
	t->session = UINT64_MAX;
	tracer__pool_release(&t->buf);
	errno = saved;
}

static void exit_key_destructor(void *arg)
{
	(void)arg;
	tracer__thread_exit();
}

/* In a child of fork(): never write into the parent's buffers. */
static void atfork_child(void)
{
	tracer__control = &tracer__idle_control;
	tls.state = TRACER__THREAD_EXITED;
	tls.session = UINT64_MAX;
}

static int register_timeout_ms(void)
{
	const char *env = getenv("TRACER_REGISTER_TIMEOUT_MS");
	char *end;
	long v;

	if (!env || !*env)
		return 100;
	v = strtol(env, &end, 10);
	return *end || v < 0 || v > 60000 ? 100 : (int)v;
}

static void __attribute__((constructor(102))) tracer_init(void)
{
	if (pthread_key_create(&exit_key, exit_key_destructor))
		return;
	pthread_atfork(NULL, NULL, atfork_child);
	tracer__client_start(register_timeout_ms());
}

static void __attribute__((destructor(102))) tracer_fini(void)
{
	tracer__thread_exit();
}
