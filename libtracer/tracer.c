/*
 * tracer.c - the event write path of libtracer, and per-thread state.
 *
 * Write path (tracer_record_emit)
 * ----------
 *   1. one plain load of the control page's `epoch`, compared with the
 *      epoch this thread last acted on (thread-local, initial-exec TLS);
 *   2. the call site's `enabled` word (already loaded by the macro) names
 *      the enable table that set it: compared with the current generation
 *      (one load of a word written only at a filter change);
 *   3. reserve in the thread's own channel (rb_write.h: a CPU-local CAS,
 *      or a restartable sequence where the thread has an rseq area),
 *      store the values, commit (CPU-local adds).
 * No lock, no system call, no allocation, no shared cache line written:
 * the control page and the generation are only read, the channel is the
 * thread's own.
 *
 * A thread whose epoch does not match takes the slow path (thread_sync):
 * it copies the control page's state under its sequence lock, and acts on
 * it: take a buffer from the pool on the first event, record the process
 * and thread start events for a new session, set the channels' mode, close
 * its sub-buffers when tracerd asked for a switch. The slow path may run
 * in a signal handler (the thread's first event can be one, and the update
 * signal runs it too); a handler that interrupts it finds `busy` set: it
 * records if the thread's writers stay whole meanwhile (`steady`: a new
 * clock anchor, a switch), and otherwise (a first buffer, a new session)
 * drops its event, counted as lost and told in the trace.
 *
 * A thread that finds no free buffer at its first event records into a
 * stash of its own instead (stash.c: its ch[] point there, state
 * STASHING, and its epoch never matches, so that each of its events comes
 * back here to look for a buffer); the first buffer with room it takes
 * gets the stash's records first, at their own times.
 *
 * Thread exit (pthread key destructor) and process exit (library
 * destructor) record the thread's exit, switch its channels so tracerd
 * can take the last sub-buffers, and hand the buffer back to the pool; a
 * thread still stashing leaves its stash for the next thread that frees
 * or takes a buffer.
 *
 * A child of fork() starts over in the fork handler (fork_child): the
 * event path sees the idle control page, the forking thread's state is
 * that of a thread that never recorded, and the child registers as a new
 * process, so its first event takes a buffer from its own pool. The event
 * path itself never checks the pid. (fork() called from a signal handler
 * that interrupted a record in progress is not supported: the interrupted
 * record would resume into the unmapped parent buffer.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "event_format.h"
#include "wrap.h"
#include "emit.h"

const struct tracer_control tracer__idle_control = {
	.magic = TRACER_CONTROL_MAGIC,
	.version = TRACER_POOL_VERSION,
	.size = sizeof(struct tracer_control),
	.session = 0,
};

const void *volatile tracer_control_page = &tracer__idle_control;
_Static_assert(TRACER_CHANNEL_DEFAULT == 0 && TRACER_CHANNEL_VITAL == 1,
	       "the fast path picks a channel by cs->vital & 1");
_Static_assert(offsetof(struct tracer_control, epoch) ==
	       TRACER__CONTROL_EPOCH, "the epoch call sites read");

__thread struct tracer__thread tracer__tls
	__attribute__((tls_model("initial-exec"))) = {
	.epoch = UINT64_MAX,
};

#define CONTROL_TRIES	64	/* sequence-lock attempts before giving up */

/*
 * Set while the slow path records its own events (record_start(), the
 * exit event) with the thread's writers final: an event that comes back
 * to thread_sync() then, busy, is recorded even if the control page's
 * epoch moved meanwhile (a clock step, a switch, the reply to a process
 * registering at its start): the next event acts on the new page. Before,
 * such an event was dropped and counted in the pool line only, never told
 * in the trace (a thread's tracer:thread_start missing in CI).
 */
static __thread bool own_events __attribute__((tls_model("initial-exec")));

/*
 * Set while the slow path runs for a thread that has a buffer for the
 * session in force, until it would change the thread's writers in a way a
 * nested record cannot see half done (a new session, a stash left, a
 * buffer taken): a handler's event that comes back to thread_sync() then,
 * busy, is recorded with the writers as they are. What the slow path
 * changes for such a thread is safe for a record nested in it: the clock
 * cell (its seq), a switch (tracer__rb_flush()), the epoch it acted on.
 * Before, every handler's event was dropped while its thread took in a
 * new clock anchor (once a second) or a switch, and the drops were not
 * told in the trace (in CI: 3448 of 12056 handlers' events missing from a
 * signal storm, with no tracer:lost).
 */
static __thread bool steady __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static bool key_made;		/* exit_key exists (tracer__thread_key_init) */
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
		int fixed = tracer__type_fixed_size(cs->types[i]);

		/* Registration took only known letters; 8 otherwise. */
		size += fixed > 0 ? (uint32_t)fixed : fixed < 0 ?
			TRACER__PAYLOAD_WORD :
			(uint32_t)tracer__string_stored(args[i].s);
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
			p = tracer__store_string(p, args[i].s);
		} else if (cs->types[i] == TRACER_ARG_LDOUBLE) {
			p = tracer__store_ldouble(p, args[i].ld);
		} else {
			memcpy(p, &args[i].u, TRACER__PAYLOAD_WORD);
			p += TRACER__PAYLOAD_WORD;
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

/* TRACER_CLOCK=monotonic: this process ignores tracerd's TSC clock. */
static bool clock_forced_monotonic;

bool tracer__clock_forced_monotonic(void)
{
	return clock_forced_monotonic;
}

/* t's writers stamp with t's copy of the clock. */
static void writers_clock(struct tracer__thread *t)
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		t->ch[c].clock = &t->clock;
}

/* The unit t's clock says: TSC ticks where tracerd converts them. */
static uint32_t clock_unit(const struct tracer__thread *t)
{
	return tracer__clock_ticks(&t->clock.clock) ? TRACER_RB_UNIT_TSC
						     : TRACER_RB_UNIT_NS;
}

/*
 * t's writers stamp in that unit (clock.h). Only where none of t's
 * records is being written, nor can be meanwhile (tracer__rb_set_unit()):
 * writers just attached, or the slow path outside any handler with
 * steady cleared.
 */
static void writers_unit(struct tracer__thread *t)
{
	uint32_t unit = clock_unit(t);
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		tracer__rb_set_unit(&t->ch[c], unit);
}

/* Copy the control page's clock (st) into t's cell. */
static void take_clock(struct tracer__thread *t,
		       const struct tracer_control_state *st)
{
	struct tracer_clock c = st->clock;

	if (clock_forced_monotonic)
		c.kind = TRACER_CLOCK_MONOTONIC;
	tracer__clock_cell_set(&t->clock, &c);
	writers_clock(t);
}

static bool take_buffer(struct tracer__thread *t, bool need_room)
{
	if (t->pool_epoch == (tracer__pool_epoch() | 1))
		return false;	/* still nothing free since last time */
	t->tid = (uint32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	t->name[15] = '\0';
	if (tracer__pool_acquire(&t->buf, t->tid, t->name, need_room)) {
		t->pool_epoch = tracer__pool_epoch() | 1;
		return false;
	}
	if (tracer__pool_attach_all(&t->buf, t->ch, t->lost_base, t->tid)) {
		tracer__pool_release(&t->buf, true);
		t->state = TRACER__THREAD_EXITED;
		return false;
	}
	pthread_setspecific(exit_key, t);
	writers_clock(t);
	writers_unit(t);
	t->state = TRACER__THREAD_READY;
	return true;
}

static void set_mode(struct tracer__thread *t, uint32_t mode)
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		t->ch[c].mode = tracer__channel_mode(mode);
}

static void switch_channels(struct tracer__thread *t)
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		tracer__rb_flush(&t->ch[c]);
}

static void tell_unbuffered(void);

/*
 * The events t dropped while it had no buffer for the session (count_lost:
 * a first event, or a handler's while the slow path changed its writers),
 * told once in its vital channel. Taken whole: a handler may add to the
 * count meanwhile.
 */
static void tell_lost(struct tracer__thread *t)
{
	uint64_t n;

	if (!t->lost_no_buffer)
		return;
	n = __atomic_exchange_n(&t->lost_no_buffer, 0, __ATOMIC_RELAXED);
	if (n)
		tracer_record_vital("tracer:lost", "%llu events dropped before "
				    "this thread had a buffer",
				    (unsigned long long)n);
}

/* The library's own events: the thread is ready for session s. */
static void record_start(struct tracer__thread *t, uint64_t s)
{
	/* Its name now: it may have changed since an earlier session. */
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	if (t->state == TRACER__THREAD_READY)	/* not a stash */
		memcpy(t->buf.desc->thread_name, t->name, sizeof(t->name));
	if (__atomic_exchange_n(&process_start_session, s,
				__ATOMIC_RELAXED) != s) {
		tracer_record_vital("tracer:process_start", "pid %d name %s",
				    (int)getpid(), t->name);
		tracer__proc_record_start();	/* proc:start */
		tracer__modules_record();	/* where everything is */
	}
	tracer_record_vital("tracer:thread_start", "tid %d name %s",
			    (int)t->tid, t->name);
	tell_lost(t);
	tell_unbuffered();
}

/*
 * An event of call site cs (NULL: none, the thread's own sync) dropped
 * for want of a buffer or of a registered process: counted as lost if
 * the filter would have recorded it. (A call site that is off reaches
 * here while a dormant client is poked: client.c.)
 */
static void count_lost(struct tracer__thread *t,
		       const struct tracer_callsite *cs)
{
	uint32_t en = cs ? __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED) : 1;

	if (!en || (cs && TRACER__CS_GEN(en) !=
		    TRACER_READ_ONCE(tracer__filter_gen) &&
		    !tracer__filter_allows(cs)))
		return;
	/* Its end must be seen even if it never has a buffer (the key's
	 * value: a store into the thread's own block). */
	if (t->lost_no_buffer++ == 0 &&
	    __atomic_load_n(&key_made, __ATOMIC_ACQUIRE))
		pthread_setspecific(exit_key, t);
	tracer__pool_add_lost(1);
}

/*
 * Events dropped by threads that ended before they had a buffer: no
 * stream of theirs can tell them, so the next thread of the process to
 * start recording, or to end, tells them (tracer:lost_unbuffered) in its
 * vital channel. Added to at a thread's end, taken whole (atomic).
 */
static uint64_t lost_unbuffered;

static void tell_unbuffered(void)
{
	uint64_t n = __atomic_exchange_n(&lost_unbuffered, 0,
					 __ATOMIC_RELAXED);

	if (n)
		tracer_record_vital("tracer:lost_unbuffered", "%llu events "
				    "dropped by threads that ended before "
				    "they had a buffer",
				    (unsigned long long)n);
}

/* A wait for the pool (await_pool()) came to nothing: tracerd is late,
 * and the next threads do not wait for it again. */
static bool pool_late;

/*
 * The process started without waiting for tracerd and its pool is still
 * the one buffer it made (client.c, PENDING): wait for the rest, within
 * the registration's time, then take a buffer. Not in a handler, nor in
 * an allocator's event; once per process if tracerd does not answer (a
 * hung tracerd costs one wait, not one per thread). Returns true when t
 * has a buffer now.
 */
static bool await_pool(struct tracer__thread *t)
{
	if (__atomic_load_n(&pool_late, __ATOMIC_RELAXED) ||
	    !tracer__client_pending() || tracer__in_handler() ||
	    tracer__wrap_alloc)
		return false;
	tracer__client_settle();
	if (tracer__client_pending())
		__atomic_store_n(&pool_late, true, __ATOMIC_RELAXED);
	return take_buffer(t, false);
}

/* A wait for a buffer (await_buffer()) came to nothing: the next threads
 * do not wait again. */
static bool buffers_late;

#define AWAIT_BUFFER_MS		1000	/* await_buffer(): at most */
#define AWAIT_BUFFER_STEP_US	500	/* between two looks */

/*
 * Every stash slot is taken (threads that ended without a buffer wait in
 * them for one) and no buffer is free, although the pool came: the
 * failed acquire asked tracerd for more (pool.c, want_grow), and threads
 * ending now give theirs back. Wait for one, a second at most, rather
 * than drop the event: not in a handler, nor in an allocator's event, and
 * once per process if none comes. Returns true when t has a buffer.
 */
static bool await_buffer(struct tracer__thread *t)
{
	struct timespec step = { 0, AWAIT_BUFFER_STEP_US * 1000L };
	int i;

	if (__atomic_load_n(&buffers_late, __ATOMIC_RELAXED) ||
	    tracer__client_pending() || tracer__in_handler() ||
	    tracer__wrap_alloc)
		return false;
	for (i = 0; i < AWAIT_BUFFER_MS * 1000 / AWAIT_BUFFER_STEP_US; i++) {
		if (take_buffer(t, false))
			return true;
		nanosleep(&step, NULL);
	}
	__atomic_store_n(&buffers_late, true, __ATOMIC_RELAXED);
	return false;
}

/*
 * No buffer for a thread's first event: its events go into a stash
 * (stash.c) until one is free. With every stash slot taken (a burst of
 * threads that ended before the pool came, or before a buffer was free),
 * the pool tracerd is sending, or else a buffer, is waited for rather
 * than the events dropped. Returns false when there is no stash either:
 * the event is dropped, counted.
 */
static bool enter_stash(struct tracer__thread *t,
			const struct tracer_control_state *st,
			const struct tracer_callsite *cs)
{
	if (t->state == TRACER__THREAD_NEW) {
		if (tracer__stash_open(t, st->session) == 0) {
			writers_clock(t);
			writers_unit(t);
			t->state = TRACER__THREAD_STASHING;
			if (__atomic_load_n(&key_made, __ATOMIC_ACQUIRE))
				pthread_setspecific(exit_key, t);
			return true;
		}
		if (await_pool(t) || await_buffer(t))
			return true;
	}
	count_lost(t, cs);
	return false;
}

/*
 * A stashing thread of session st: if a buffer is free and the stash can
 * be written out now (not in a handler, which may have interrupted a
 * record of the stash; every record committed), the thread takes the
 * buffer and its stash goes first into it. Returns false when the thread
 * cannot record at all any more (its buffer could not be attached).
 */
static bool leave_stash(struct tracer__thread *t,
			const struct tracer_control_state *st)
{
	if (tracer__in_handler() || !tracer__stash_quiet(t))
		return true;		/* still the stash */
	if (!take_buffer(t, true)) {
		if (t->state == TRACER__THREAD_STASHING)
			return true;
		tracer__stash_drop(t);
		return false;
	}
	set_mode(t, st->mode);
	tracer__stash_replay(t);
	return true;
}

/*
 * Act on the control page's state st (session not 0). Returns false when
 * the thread cannot record (no buffer, no stash). A new session records
 * the start events after t is ready, with busy still set: their own emit
 * calls take the fast path. A stashing thread's epoch stays one that
 * never matches, so that each of its events looks for a buffer again.
 */
static bool apply_state(struct tracer__thread *t,
			const struct tracer_control_state *st,
			const struct tracer_callsite *cs)
{
	bool fresh = st->session != t->session, reunit;
	uint8_t was = t->state;

	if (fresh)	/* the writers change for another session */
		steady = false;
	/* Cleared before the writers change (a handler of this thread). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	take_clock(t, st);
	/* The unit the clock says (TSC ticks once tracerd has calibrated,
	 * ns after a stray), changed only here, outside any handler: no
	 * record of the thread is being written, and its handlers' drop
	 * their events meanwhile (told). */
	reunit = t->state == TRACER__THREAD_READY &&
		 t->ch[0].unit != clock_unit(t);
	if (reunit && !tracer__in_handler()) {
		steady = false;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		writers_unit(t);
		reunit = false;
	}
	if (t->state == TRACER__THREAD_STASHING && fresh) {
		tracer__stash_drop(t);	/* another session's events */
		t->state = TRACER__THREAD_NEW;
	} else if (t->state == TRACER__THREAD_STASHING &&
		   !leave_stash(t, st)) {
		return false;
	}
	if (t->state == TRACER__THREAD_NEW && !take_buffer(t, false) &&
	    !enter_stash(t, st, cs))
		return false;
	/* A buffer for a new session, or again after lending its own
	 * (image_end()). */
	if (t->state == TRACER__THREAD_READY &&
	    (fresh || was == TRACER__THREAD_NEW))
		set_mode(t, st->mode);
	if (fresh) {
		t->session = st->session;
	} else if (st->switch_seq != t->switch_seq &&
		   t->state == TRACER__THREAD_READY) {
		switch_channels(t);
	}
	t->switch_seq = st->switch_seq;
	t->epoch = st->epoch;
	own_events = true;
	if (fresh)
		record_start(t, st->session);
	else if (t->state == TRACER__THREAD_READY)
		tell_lost(t);	/* a handler's, while the stash was left */
	own_events = false;
	/* A stash looks for a buffer at each event; a unit left to change
	 * (in a handler) changes at the next event outside one. */
	if (t->state == TRACER__THREAD_STASHING || reunit)
		t->epoch = UINT64_MAX;
	else if (!tracer__in_handler())
		/* A thread's first buffer, or the pool grown at tracerd's
		 * reply (client.c, PENDING): room for threads that ended
		 * stashing meanwhile. */
		tracer__stash_flush_orphans(st, t->tid, false);
	return true;
}

/*
 * A detached process (client.c): a session started while it was not
 * connected to tracerd. It connects and registers here, in the thread's
 * own context, never in a signal handler nor in an allocator's event
 * (the C library may hold the locks a new thread needs: wrap.h), nor in
 * the slow path's own events (busy is not set yet). Returns false when
 * the event is dropped: counted as lost if a session records.
 */
static bool wake_client(struct tracer__thread *t,
			const struct tracer_callsite *cs)
{
	int ret = -EAGAIN;

	if (!tracer__in_handler() && !tracer__wrap_alloc) {
		WRAP_GUARD_ENTER();
		ret = tracer__client_wake();
		WRAP_GUARD_EXIT();
	}
	if (ret && tracer__client_recording())
		count_lost(t, cs);
	return ret == 0;
}

/* Has t writers for a session (a buffer's, or its stash)? */
static bool recording(const struct tracer__thread *t)
{
	return (t->state == TRACER__THREAD_READY ||
		t->state == TRACER__THREAD_STASHING) && t->session != 0;
}

/*
 * The epoch changed (to a nonzero value). Returns true to record. Out of
 * line and cold: the event path stays small.
 */
static bool __attribute__((noinline, cold))
thread_sync(struct tracer__thread *t, const struct tracer_callsite *cs)
{
	struct tracer_control_state st;
	int saved = errno, cancel;
	bool ok = false;

	if (t->state == TRACER__THREAD_EXITED)
		goto out;
	if (t->busy) {
		/*
		 * Inside the slow path: its own start or exit events, or a
		 * handler that interrupted it. The thread's state is whole
		 * while it records its own events (own_events), while its
		 * writers stay those of the session in force (steady), or
		 * when only a poke (client.c) sent it here (its epoch is the
		 * page behind the poke): the event is recorded. Otherwise
		 * (a first event, a new session, a stash left) it is
		 * dropped, and counted like one without a buffer (told by
		 * apply_state(), which runs after it: tell_lost()).
		 */
		ok = recording(t) &&
		     (own_events || steady ||
		      TRACER_READ_ONCE(tracer__client_control()->epoch) ==
		      t->epoch);
		if (!ok)
			count_lost(t, cs);
		goto out;
	}
	/*
	 * No cancellation in here (a thread cancelled asynchronously could
	 * stop between taking a buffer and naming itself its owner, leaving
	 * a buffer in use that tracerd cannot tell is an exited thread's, or
	 * while it holds the client's locks). pthread_setcancelstate() is
	 * async-cancel-safe; a cancellation that came meanwhile acts when
	 * the state is restored.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	/* No listener yet: read what tracerd sent first (client.c). */
	if (tracer__client_detached() && !wake_client(t, cs))
		goto restore;
	t->busy = 1;
	steady = t->state == TRACER__THREAD_READY && t->session != 0;
	/* busy and steady before any change (a handler of this thread). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	WRAP_GUARD_ENTER();	/* the slow path's calls are the tracer's */
	/* A dormant one with news; not in a handler, nor where the C
	 * library may hold the locks a new thread needs (wrap.h). */
	if (!tracer__in_handler() && !tracer__wrap_alloc) {
		/* Registering at the start: a stash about to overflow waits
		 * for the pool (client.c, PENDING). */
		if (t->state == TRACER__THREAD_STASHING &&
		    tracer__client_pending() && tracer__stash_filling(t))
			tracer__client_settle();
		tracer__client_rouse();
	}
	if (tracer__control_read(tracer__client_control(), &st,
				 CONTROL_TRIES)) {
		/* tracerd is mid-update (or stopped there): carry on. */
		ok = recording(t);
	} else if (st.session != 0 && st.epoch != 0) {
		ok = apply_state(t, &st, cs);
	}
	WRAP_GUARD_EXIT();
	steady = false;
	t->busy = 0;
restore:
	pthread_setcancelstate(cancel, NULL);
out:
	errno = saved;
	return ok;
}

void tracer__thread_signal(void)
{
	struct tracer__thread *t = &tracer__tls;
	uint64_t e = TRACER_READ_ONCE(tracer__client_control()->epoch);

	if (t->state != TRACER__THREAD_READY || t->busy)
		return;
	if (e == 0) {
		/* Session stopped: make the last sub-buffers complete. */
		if (t->session != 0) {
			t->busy = 1;
			switch_channels(t);
			t->busy = 0;
		}
		return;
	}
	if (e != t->epoch)
		thread_sync(t, NULL);
}

/*
 * One event of cs, when the fast path in tracer_record_emit() cannot
 * take it: the thread's epoch is not the control page's, or cs's word is
 * not from the enable table in force, or its values are not all 8 bytes.
 */
static __attribute__((noinline)) void
emit_slow(struct tracer__thread *t, const struct tracer_callsite *cs,
	  const union tracer_arg *args)
{
	uint64_t e = TRACER_READ_ONCE(tracer__control->epoch);
	struct tracer_rb_writer *w;
	uint32_t en;

	if (e != t->epoch && (e == 0 || !thread_sync(t, cs)))
		return;
	if (tracer_unlikely(cs->id == 0 || cs->nargs > TRACER_MAX_ARGS))
		return;
	/*
	 * Relaxed loads: any mismatch goes to the table, which decides;
	 * a match means the word was set from the current table.
	 */
	en = __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED);
	if (TRACER__CS_GEN(en) != TRACER_READ_ONCE(tracer__filter_gen) &&
	    !tracer__filter_allows(cs))
		return;
	w = &t->ch[cs->vital ? TRACER_CHANNEL_VITAL : TRACER_CHANNEL_DEFAULT];
	if (en & TRACER__CS_FIXED)	/* no type dispatch */
		tracer__rb_write_words(w, cs->id, args, sizeof(*args),
				       cs->nargs);
	else
		write_event(w, cs, args);
}

/*
 * One event of cs. Leaves errno as it found it, which the C library
 * wrappers count on (wrap.h): the fast path calls nothing that sets it,
 * thread_sync() and the wake-up of tracerd (pool.c) restore it.
 */

/*
 * tracer_record_emit() for a call site of n values, the entry the macros
 * of <tracer.h> call: with n a constant the record's size is one and the
 * values are n loads and n stores, no loop (2.6 ns of an event on the
 * TSC VM of the README, and 8.6 of a traced malloc+free pair). A call
 * site whose nargs is not n (a descriptor not made by the macros) takes
 * the slow path, which goes by nargs.
 */
static tracer_always_inline void
emit_n(const struct tracer_callsite *cs, const union tracer_arg *args,
       uint32_t n)
{
	struct tracer__thread *t = &tracer__tls;

	if (tracer_likely(tracer__emit_fast(t, cs, args, n)))
		return;
	emit_slow(t, cs, args);
}

void tracer_record_emit(const struct tracer_callsite *cs,
			const union tracer_arg *args)
{
	emit_n(cs, args, cs->nargs);
}

#define EMIT_N(n) \
void tracer_record_emit##n(const struct tracer_callsite *cs, \
			   const union tracer_arg *args) \
{ \
	emit_n(cs, args, n); \
}
TRACER__EACH_NARGS(EMIT_N)

/*
 * A wrapper's event that the fast path did not take (emit.h): the guard
 * (and for an allocator's event, `alloc`) raised around the slow path,
 * the only one that may call a wrapped function or start a thread.
 */
__attribute__((noinline)) void
tracer__wrap_emit_slow(const struct tracer_callsite *cs,
		       const union tracer_arg *args, unsigned alloc)
{
	tracer__wrap_guard++;
	tracer__wrap_alloc += alloc;
	emit_slow(&tracer__tls, cs, args);
	tracer__wrap_alloc -= alloc;
	tracer__wrap_guard--;
}

/* One entry per number of values, as tracer_record_emitN(). */
#define WRAP_EMIT_N(n) \
void tracer__wrap_emit##n(const struct tracer_callsite *cs, \
			  const union tracer_arg *args) \
{ \
	tracer__wrap_emit_inline(cs, args, 0, n); \
}
TRACER__EACH_NARGS(WRAP_EMIT_N)

/*
 * Has channel w a record reserved and never committed? Its thread was
 * cancelled asynchronously in the middle of one: the commit count of the
 * sub-buffer holding the last reserved byte is short of what was reserved.
 */
bool tracer__writer_torn(const struct tracer_rb_writer *w)
{
	uint64_t wc = TRACER_READ_ONCE(w->hdr->write_count);
	uint64_t start = (wc - 1) & ~w->smask;
	uint64_t count = TRACER_READ_ONCE(tracer__rb_slot(w, start)->count);

	return wc != 0 && ((count - tracer__rb_lap_base(start, w->subbuf_order,
							 w->count_order)) &
			   w->cmask) != wc - start;
}

/* The thread's exit event, into its buffer or its stash. */
static void record_exit(struct tracer__thread *t)
{
	uint64_t lost = 0;
	int c;

	prctl(PR_GET_NAME, t->name, 0, 0, 0);	/* it may have changed */
	t->name[15] = '\0';
	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		lost += TRACER_READ_ONCE(t->ch[c].hdr->lost) - t->lost_base[c];
	tracer_record_vital("tracer:thread_exit", "tid %d name %s lost %llu",
			    (int)t->tid, t->name, (unsigned long long)lost);
}

/* Release t's buffer, unless a torn record keeps it (below). */
static void give_back(struct tracer__thread *t, bool wake,
		      const struct tracer_control_state *st, bool on)
{
	bool keep = false;
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		keep |= tracer__writer_torn(&t->ch[c]);
	/*
	 * A torn record would leave its sub-buffer incomplete for the next
	 * owner: keep the buffer, tracerd salvages and frees it once this
	 * thread is gone (salvage.c).
	 */
	if (keep)
		return;
	if (!wake)	/* the switch would wake tracerd too */
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			t->ch[c].on_close = NULL;
	switch_channels(t);
	tracer__pool_release(&t->buf, wake);
	/* A buffer is free now: the stashes of threads that ended
	 * without one go out through it. */
	if (on)
		tracer__stash_flush_orphans(st, t->tid, !wake);
}

/*
 * The thread ends: its exit event, its channels switched, its buffer
 * released. A stashing thread takes a buffer if one is free now; if not,
 * its stash, exit event included, is left to the next thread that frees
 * or takes one. wake: tell tracerd now (not at the process's end: see
 * tracer_fini()).
 */
static void thread_exit(bool wake)
{
	struct tracer__thread *t = &tracer__tls;
	struct tracer_control_state st;
	int saved = errno;
	bool on, ready, stashing;

	if (t->state == TRACER__THREAD_NEW && t->lost_no_buffer) {
		__atomic_fetch_add(&lost_unbuffered, t->lost_no_buffer,
				   __ATOMIC_RELAXED);
		t->lost_no_buffer = 0;
	}
	if ((t->state != TRACER__THREAD_READY &&
	     t->state != TRACER__THREAD_STASHING) || t->busy)
		return;
	t->busy = 1;
	WRAP_GUARD_ENTER();
	on = t->session != 0 &&
	     tracer__control_read(tracer__client_control(), &st,
				  CONTROL_TRIES) == 0 &&
	     st.session == t->session;
	if (on && t->state == TRACER__THREAD_STASHING)
		on = leave_stash(t, &st);
	if (on) {
		t->epoch = st.epoch;	/* the exit event's own path */
		own_events = true;
		tell_unbuffered();
		record_exit(t);
		own_events = false;
	}
	ready = t->state == TRACER__THREAD_READY;
	stashing = t->state == TRACER__THREAD_STASHING;
	/* From here a handler's event is dropped: the buffer or the stash
	 * is about to be someone else's. */
	t->state = TRACER__THREAD_EXITED;
	t->epoch = UINT64_MAX;
	if (stashing && on) {
		tracer__stash_orphan(t);
		/*
		 * A thread that gave a buffer back meanwhile may have looked
		 * for orphans before this one was one (the main thread's last
		 * flush, while a thread python3 had joined was still ending:
		 * its events were lost, in CI): look again. Each side
		 * publishes, then looks (stash.c): one of them sees the other.
		 */
		tracer__stash_flush_orphans(&st, t->tid, false);
	} else if (stashing)
		tracer__stash_drop(t);
	else if (ready)
		give_back(t, wake, &st, on);
	WRAP_GUARD_EXIT();
	errno = saved;
}

void tracer__thread_exit(void)
{
	thread_exit(true);
}

/*
 * Lend t's buffer to the orphans' stashes (image_end()): its channels
 * closed and the buffer given back, t is a thread that has not recorded
 * yet in this session; its next event (after a failed exec) takes a
 * buffer again. Kept if a torn record is in it (give_back()).
 */
static void lend_buffer(struct tracer__thread *t)
{
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (tracer__writer_torn(&t->ch[c]))
			return;
	switch_channels(t);
	/* From here a handler's event is dropped, counted: the buffer is
	 * about to be the orphans' (as in thread_exit()). */
	t->state = TRACER__THREAD_NEW;
	t->epoch = UINT64_MAX;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tracer__pool_release(&t->buf, true);
}

/*
 * The image ends without our destructor (exec, _exit). Orphaned stashes
 * are this image's private memory: they go into free buffers, or, with
 * none free (the first buffer still the only one: tracerd has not
 * answered, client.c PENDING), into this thread's, lent to them. A
 * stashing thread orphans its own stash first. A thread still recording
 * into its stash at this moment loses it (exec ends it mid-way).
 */
static void image_end(struct tracer__thread *t,
		      const struct tracer_control_state *st)
{
	if (t->state == TRACER__THREAD_STASHING && t->session == st->session &&
	    tracer__stash_quiet(t)) {
		tracer__stash_orphan(t);
		t->state = TRACER__THREAD_NEW;
		t->epoch = UINT64_MAX;
	}
	if (!tracer__stash_has_orphans())
		return;
	tracer__stash_flush_orphans(st, t->tid, false);
	if (!tracer__stash_has_orphans() || t->state != TRACER__THREAD_READY)
		return;
	lend_buffer(t);
	if (t->state == TRACER__THREAD_NEW)
		tracer__stash_flush_orphans(st, t->tid, true);
}

void tracer__image_end(void)
{
	struct tracer__thread *t = &tracer__tls;
	struct tracer_control_state st;
	int saved = errno;

	if (t->busy || tracer__in_handler() ||
	    (t->state != TRACER__THREAD_STASHING &&
	     !tracer__stash_has_orphans()))
		return;
	t->busy = 1;
	WRAP_GUARD_ENTER();
	if (tracer__control_read(tracer__client_control(), &st,
				 CONTROL_TRIES) == 0 && st.session != 0)
		image_end(t, &st);
	WRAP_GUARD_EXIT();
	t->busy = 0;
	errno = saved;
}

static void exit_key_destructor(void *arg)
{
	(void)arg;
	tracer__thread_exit();
}

static int key_error;

static void make_key(void)
{
	key_error = pthread_key_create(&exit_key, exit_key_destructor);
	__atomic_store_n(&key_made, key_error == 0, __ATOMIC_RELEASE);
}

int tracer__thread_key_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_key);
	return -key_error;
}

/*
 * The process starts now (constructor, or a child of fork()): when a
 * session records, the thread takes its buffer and records
 * tracer:process_start, proc:start and proc:module here, timed at the
 * start and not at the program's first event (which may come much later).
 */
static void start_now(void)
{
	struct tracer__thread *t = &tracer__tls;

	if (TRACER_READ_ONCE(tracer__control->epoch) != 0 &&
	    !tracer__client_detached() && t->epoch != tracer__control->epoch)
		thread_sync(t, NULL);
}

/*
 * How long the constructor waits for tracerd's reply: long enough for a
 * healthy tracerd almost always (its round trip is under 1 ms, and within
 * 10 ms 99% of the time with sanitizers on a saturated machine:
 * bench/bench_start.sh), short enough that a hung one delays no start
 * noticeably. A later reply still registers the process (the listener
 * thread); the events before it are not recorded.
 */
#define REGISTER_WAIT_MS	10

static int register_timeout_ms(void)
{
	const char *env = getenv("TRACER_REGISTER_TIMEOUT_MS");
	char *end;
	long v;

	if (!env || !*env)
		return REGISTER_WAIT_MS;
	v = strtol(env, &end, 10);
	return *end || v < 0 || v > 60000 ? REGISTER_WAIT_MS : (int)v;
}

/*
 * In a child of fork(), before fork() returns: a new process for tracerd.
 * The forking thread (the only one here) forgets the parent's buffer and
 * session, the parent's control page, pool and connection are dropped,
 * and the child registers like a new program, waiting as long as the
 * constructor does. Its first event takes a buffer from its own pool.
 */
static void fork_child(void)
{
	int saved = errno;

	__atomic_store_n(&tracer__control, &tracer__idle_control,
			 __ATOMIC_RELEASE);
	tracer__tls = (struct tracer__thread){ .epoch = UINT64_MAX };
	own_events = false;
	process_start_session = 0;
	lost_unbuffered = 0;		/* the parent's to tell */
	pool_late = false;
	buffers_late = false;
	tracer__stash_fork_child();
	tracer__fd_owner_pid = (uint32_t)getpid();
	WRAP_GUARD_ENTER();
	tracer__signal_fork_after();
	tracer__proc_fork_child();
	tracer__modules_fork_child();
	tracer__client_fork_child();
	tracer__client_start(register_timeout_ms(), NULL);
	WRAP_GUARD_EXIT();
	start_now();
	errno = saved;
}

/* Before fork(), in the forking thread: the tracer's locks (its own
 * calls: the guard is raised), then the table of the program's actions. */
static void fork_prepare(void)
{
	WRAP_GUARD_ENTER();
	tracer__client_fork_prepare();
	tracer__signal_fork_prepare();
	WRAP_GUARD_EXIT();
}

static void fork_parent(void)
{
	WRAP_GUARD_ENTER();
	tracer__signal_fork_after();
	tracer__client_fork_parent();
	WRAP_GUARD_EXIT();
}

/* The C library gives an object's constructors the program's arguments. */
static void __attribute__((constructor(102)))
tracer_init(int argc, char **argv, char **envp)
{
	const char *clock = getenv("TRACER_CLOCK");

	(void)envp;
	clock_forced_monotonic = clock && strcmp(clock, "monotonic") == 0;
	tracer__wrap_mem_init();
	tracer__wrap_syscall_init();
	tracer__signal_init();
	tracer__wrap_dl_init();
	tracer__fd_owner_pid = (uint32_t)tracer__proc_pid();
	WRAP_GUARD_ENTER();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	tracer__client_start(register_timeout_ms(), argc > 0 ? argv : NULL);
	WRAP_GUARD_EXIT();
	start_now();
}

/*
 * exit(): the exiting thread's end, without waking tracerd. Its pidfd (or
 * the connection's hang-up) tells it in a moment, and it drains every
 * buffer then; woken now, it would take this CPU ahead of the exit (a
 * start and exit of a short program: bench/bench_start.sh). Then the
 * call sites still queued for tracerd go to it (tracer__client_flush()).
 */
static void __attribute__((destructor(102))) tracer_fini(void)
{
	thread_exit(false);
	WRAP_GUARD_ENTER();
	tracer__client_flush();
	WRAP_GUARD_EXIT();
}
