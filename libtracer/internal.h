/*
 * internal.h - libtracer's internal interfaces (not installed).
 *
 *   tracer.c     tracer_record_emit(): the event write path, per-thread
 *                state, thread start and exit
 *   callsites.c  the registry of call sites and their ids
 *   client.c     registration with tracerd and the listener thread
 *   pool.c       the process's view of its buffer pool
 *   stash.c      the events of a thread that found no free buffer
 *   modules.c    the objects loaded in the process (proc:module)
 *   filter.c     the enable tables (generations, counted readers)
 *   fds.c        the descriptors libtracer holds, kept above the program's
 *   signal.c     the update signal, the program's own actions for it
 *   wrap_*.c     the wrappers of libc and libpthread calls
 *   next.c       what the wrappers forward to: dlsym(RTLD_NEXT)'s
 *                answers, mostly without calling it
 *
 * Contexts. Code here runs in four kinds of context; each may take only
 * what the line says.
 *
 *   program thread   the event path (tracer.c, rb.h): no lock, no
 *                    system call, no allocation; its slow path (first
 *                    event, epoch change) may take the pool's state word
 *                    (one bus-locked update) or a stash slot (stash.c:
 *                    one CAS, and an mmap the first time), wake a
 *                    detached client
 *                    (wake_lock, then send_lock: it connects and
 *                    registers), read the reply of a registration that
 *                    did not wait (wake_lock: complete_locked(); a
 *                    thread whose stash fills, or that finds every
 *                    stash slot taken, waits for it there, the
 *                    registration's time at most) and allocate; it runs
 *                    with cancellation disabled (an asynchronous
 *                    cancellation acts when it ends).
 *   signal handler   any event, on any thread, also in the middle of the
 *                    above: the event path only. A handler that lands
 *                    in the slow path (tracer__thread.busy) or a
 *                    detached client (tracer__in_handler()) drops its
 *                    event and
 *                    counts it lost. The update signal's handler
 *                    (signal.c) only reads the control page, flushes the
 *                    thread's own sub-buffers and counts interrupted
 *                    calls (tracer__intr, resume.h); sent by the kernel
 *                    for a dormant client's socket, it pokes the client
 *                    (client.c: atomic stores, and the call sites' walk
 *                    of callsites.c, which never waits). A wrapper
 *                    a handler may call (the async-signal-safe ones:
 *                    exec, _exit, the waits of wrap_wait.c) forwards to
 *                    a function looked up before a handler of the
 *                    program could run (the constructors), never with
 *                    dlsym() in the handler.
 *   listener thread  client.c: reads tracerd's messages, sends what the
 *                    socket did not take, mends a broken connection.
 *                    Started when there is something to hear (a dormant
 *                    client: from a program thread's slow path, or a
 *                    wrapper that saw our socket lost).
 *                    All signals blocked; WRAP_GUARD for ever (its calls
 *                    are the tracer's own, never events).
 *   fork child       the single thread left: tracer.c's pthread_atfork
 *                    handlers take send_lock and the registry's lock
 *                    before fork() (timed: a stuck one is left) and
 *                    every lock below is re-initialised in the child
 *                    (each file's *_fork_child()).
 *
 * Locks, in the order they nest (an outer one is taken first):
 *
 *   client.c wake_lock        one thread wakes a detached client (trylock:
 *                             the others yield, then drop their event),
 *                             or reads the reply to a registration that
 *                             did not wait (PENDING)
 *   client.c send_lock        the send queue and the socket's sending
 *                             side; timed where a program thread takes
 *                             it from a wrapper
 *   callsites.c lock          the call-site registry (inside send_lock:
 *                             send_callsites()); inside it, `writing`
 *                             around a change of the modules' sections,
 *                             which waits for a handler's walk to end
 *   client.c lock             the registration state (innermost)
 *   modules.c lock            the module table (alone)
 *   fds.c mover_lock          spin lock around moving a descriptor
 *                             the program wants (dup2 onto ours); held
 *                             only around system calls, alone
 *   signal.c app_writer       spin lock of sigaction() writers; readers
 *                             (the handler) use the seqlock `seq`
 *
 * Nothing here is ever taken by a signal handler, and no lock is held
 * across a wait for tracerd except send_lock while the listener
 * registers again on a new connection (program threads that need it wait
 * at most their timeout).
 */
#ifndef TRACER_LIBTRACER_INTERNAL_H
#define TRACER_LIBTRACER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "tracer.h"
#include "compiler.h"
#include "pool_layout.h"
#include "rb.h"

/* A buffer taken from the pool by a thread. */
struct tracer__buffer {
	struct tracer_pool_desc *desc;
	char *base;			/* both channels */
	uint32_t index;			/* pool-wide */
	uint64_t generation;
};

/* X(n) for each number of values an entry takes, 0 to TRACER_MAX_ARGS:
 * the tracer_record_emitN() entries and the wrappers' (tracer.c, wrap.h). */
#define TRACER__EACH_NARGS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
_Static_assert(TRACER_MAX_ARGS == 8, "TRACER__EACH_NARGS lists 0 to 8");

/* Per-thread state (initial-exec TLS: no call to reach it). */
struct tracer__thread {
	uint64_t epoch;			/* control epoch acted on (never 0) */
	uint64_t session;		/* session the writers are ready for */
	uint64_t switch_seq;		/* last switch request acted on */
	struct tracer_rb_writer ch[TRACER_POOL_CHANNELS];
	struct tracer_clock_cell clock;	/* the writers' clock (clock.h) */
	struct tracer__buffer buf;
	uint64_t lost_no_buffer;	/* events dropped without a buffer */
	uint64_t lost_base[TRACER_POOL_CHANNELS];	/* channel `lost` when
							   the buffer was taken */
	char name[16];			/* thread name when it took it, or
					   at the session's start */
	uint64_t pool_epoch;		/* pool state when last refused */
	uint32_t tid;
	uint8_t state;			/* TRACER__THREAD_* */
	uint8_t busy;			/* inside the slow path */
	uint16_t stash;			/* stash.c slot + 1, 0: none */
};

enum {
	TRACER__THREAD_NEW = 0,		/* no buffer yet */
	TRACER__THREAD_READY = 1,	/* has a buffer */
	TRACER__THREAD_EXITED = 2,	/* released; records are dropped */
	TRACER__THREAD_STASHING = 3,	/* no buffer: ch[] write its stash */
};

/*
 * tracer_callsite.enabled (the public header promises only "nonzero:
 * record"): 0 when the call site is off, else
 *
 *   bits 31..2  generation of the enable table that turned it on (filter.c;
 *               0: "look at the table", during a filter change)
 *   bit 1       TRACER__CS_FIXED: every argument is stored in 8 bytes, so
 *               the payload size is fixed and the values are copied without
 *               looking at the types
 *   bit 0       TRACER__CS_ON
 */
#define TRACER__CS_ON		1u
#define TRACER__CS_FIXED	2u
#define TRACER__CS_GEN_SHIFT	2
#define TRACER__CS_GEN(en)	((en) >> TRACER__CS_GEN_SHIFT)
#define TRACER__CS_WORD(gen, fixed) \
	((uint32_t)(gen) << TRACER__CS_GEN_SHIFT | (fixed) | TRACER__CS_ON)

/* TRACER_CLOCK=monotonic in the environment (tracer.c). */
bool tracer__clock_forced_monotonic(void) TRACER_HIDDEN;

/*
 * The control page: tracerd's, or a static one saying "not recording".
 * It is tracer_control_page (tracer.h), which every call site reads
 * inline; libtracer reads and writes it by that exported name, through
 * the GOT, so that a copy relocation in a program is the one variable.
 */
#define tracer__control \
	(*(const struct tracer_control *volatile *)&tracer_control_page)
extern const struct tracer_control tracer__idle_control TRACER_HIDDEN;

/*
 * Connect to tracerd and register the process, waiting at most timeout_ms
 * in all (for room in a busy daemon's backlog, then for the answer); the
 * listener thread finishes the job if the answer comes later. argv: the
 * program's arguments (the constructor's), or NULL to read them from
 * /proc (a child of fork(), which may have changed them).
 * Returns 0 (registered), -ENOENT/-ECONNREFUSED (no tracerd), -ETIMEDOUT,
 * or another negative errno (refused, protocol error).
 */
int tracer__client_start(int timeout_ms, char *const *argv) TRACER_HIDDEN;
bool tracer__client_registered(void) TRACER_HIDDEN;
/* Send new call sites now, from the calling thread (module load). */
void tracer__client_sync_callsites(void) TRACER_HIDDEN;
/*
 * fork(): the client's lock and the call-site registry's are taken before
 * the fork (waiting a few milliseconds at most: the listener may hold them
 * while tracerd is slow to read) and released after it in the parent; in
 * the child they are new, so that a child never inherits them held by
 * another thread, which would block its exit for ever. A child forked
 * while they could not be taken starts with no filter (nothing recorded
 * until tracerd sends it one when it registers).
 * tracer__client_fork_child() also drops the parent's registration: its
 * socket, control page, pool segments and eventfd; the caller (tracer.c)
 * has made the control page idle and then registers the child with
 * tracer__client_start().
 */
void tracer__client_fork_prepare(void) TRACER_HIDDEN;
void tracer__client_fork_parent(void) TRACER_HIDDEN;
void tracer__client_fork_child(void) TRACER_HIDDEN;

/*
 * Call-site registry. tracer__callsites_pending() fills sites with up to n
 * call sites not yet sent to tracerd (and marks them sent); returns how
 * many. Call it between tracer__callsites_lock() and _unlock(), and use the
 * descriptors before unlocking: a module may be unloaded after.
 * tracer__callsites_enable() sets `enabled` on every call site.
 */
/* The process exits (exit() or main()'s return): the modules' destructors
 * need not unregister their call sites. */
void tracer__callsites_exiting(void) TRACER_HIDDEN;
void tracer__callsites_lock(void) TRACER_HIDDEN;
/* The registry's lock for fork(): try for at most ms milliseconds; 0 or
 * -ETIMEDOUT. In the child, a new lock; consistent is false when the
 * parent did not hold it (the filter is then dropped, not freed). */
int tracer__callsites_trylock(int ms) TRACER_HIDDEN;

/* *t = CLOCK_REALTIME now + ms (a deadline for pthread_mutex_timedlock). */
static inline void tracer__deadline_ms(struct timespec *t, int ms)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_nsec += (long)ms * 1000000;
	t->tv_sec += t->tv_nsec / 1000000000;
	t->tv_nsec %= 1000000000;
}
void tracer__callsites_fork_child(bool consistent) TRACER_HIDDEN;
void tracer__callsites_unlock(void) TRACER_HIDDEN;
size_t tracer__callsites_pending(struct tracer_callsite **sites, size_t n)
	TRACER_HIDDEN;
/* Mark every call site unsent (a new tracerd knows none of them). */
void tracer__callsites_resend(void) TRACER_HIDDEN;
/*
 * Enable tables (filter.c). One table per filter: on[id] for every call
 * site id; published by storing its generation in tracer__filter_gen (one
 * atomic store, the switch), freed once no reader can hold it.
 */
struct tracer__filter_table {
	uint32_t gen;
	uint32_t n;			/* ids 0..n-1 */
	uint8_t on[];
};

/*
 * Apply a new event filter (pattern.h text) to every call site, and to
 * those registered later. Returns 0, -EINVAL (bad patterns), -ENOMEM;
 * *enabled and *total count the call sites on and registered; *old is the
 * table replaced, for tracer__filter_retire() (the filter is in force
 * already: retire it after telling tracerd).
 * tracer__callsites_disable() turns every call site off (no tracerd).
 */
int tracer__callsites_filter(const char *patterns, uint32_t *enabled,
			     uint32_t *total,
			     struct tracer__filter_table **old) TRACER_HIDDEN;
void tracer__callsites_disable(void) TRACER_HIDDEN;
/*
 * TRACER_DEFAULT_EVENTS in force without a table and without allocating:
 * every word set from it, in the generation in force (0 in a process that
 * never had a table: exact). For a process that waits for its first
 * session (client.c, DETACHED); the registration's filter replaces it.
 * The library's own call sites take it without a name matched: all on
 * but those of WRAP_SITE_QUIET (wrap.h).
 */
void tracer__callsites_default(void) TRACER_HIDDEN;
/*
 * After tracer__callsites_default(): how many of the library's call sites
 * have a word that TRACER_DEFAULT_EVENTS, matched, would not give them
 * (0: WRAP_SITE_QUIET marks exactly the ones it leaves off); *name: the
 * last of them. For TRACER_VERBOSE (tests/integration/test_start.sh).
 */
int tracer__callsites_default_check(const char **name) TRACER_HIDDEN;
/* Register the library's own call sites (at the registration with
 * tracerd; again is harmless). */
void tracer__callsites_register_own(void) TRACER_HIDDEN;
/* The thread-exit key (tracer.c), made at the registration, before any
 * thread takes a buffer. 0 or -errno. */
int tracer__thread_key_init(void) TRACER_HIDDEN;
/*
 * tracer__callsites_poke_all(): every call site that is off asks the
 * filter table instead (a word of generation 0), so that its next event
 * reaches tracer_record_emit() (a dormant client was poked: client.c).
 * Async-signal-safe. tracer__callsites_refilter(): the filter in force,
 * applied again (every word exact); the caller retires *old. 0 or
 * -ENOMEM.
 */
void tracer__callsites_poke_all(void) TRACER_HIDDEN;
int tracer__callsites_refilter(struct tracer__filter_table **old)
	TRACER_HIDDEN;

extern uint32_t tracer__filter_gen TRACER_HIDDEN;

struct tracer__filter_table *tracer__filter_new(uint32_t n) TRACER_HIDDEN;
/* Give t the next generation, publish it; returns the table it replaced. */
struct tracer__filter_table *tracer__filter_publish(
	struct tracer__filter_table *t) TRACER_HIDDEN;
/* Wait until no thread can read old, then free it (NULL: nothing). */
void tracer__filter_retire(struct tracer__filter_table *old) TRACER_HIDDEN;
/* In a forked child: the readers counted by other threads are dropped. */
void tracer__filter_fork_child(void) TRACER_HIDDEN;
/* The generation the next tracer__filter_publish() will give. */
uint32_t tracer__filter_next_gen(void) TRACER_HIDDEN;
/* Slow path: does the current table record cs? (RCU read side) */
bool tracer__filter_allows(const struct tracer_callsite *cs) TRACER_HIDDEN;

/*
 * Pool. tracer__pool_add_segment() maps a segment received from tracerd
 * (takes ownership of fd). Returns 0, -EINVAL (bad header), -E2BIG (too
 * many segments), or the errno of mmap.
 */
int tracer__pool_add_segment(int fd, uint64_t size) TRACER_HIDDEN;
/*
 * Make segment 0 here, with one buffer of the geometry st names (a process
 * that starts while a session records: client.c), in a sealed memfd kept
 * like a received one. Returns 0, -EEXIST (a pool is there), -EINVAL (the
 * geometry), or the errno of memfd_create, ftruncate, fcntl or mmap.
 */
int tracer__pool_make_first(const struct tracer_control_start *st)
	TRACER_HIDDEN;
/*
 * Take the least recently used free buffer for thread tid (need_room:
 * only one with room in its rings, pool_room.h).
 * Returns 0, -ENOBUFS (none free: pool at its memory cap, or not yet
 * grown).
 */
int tracer__pool_acquire(struct tracer__buffer *b, uint32_t tid,
			 const char *name, bool need_room) TRACER_HIDDEN;
/* Free buffer b for the next thread; wake: tell tracerd (not when the
 * process is ending: tracer_fini()). */
void tracer__pool_release(struct tracer__buffer *b, bool wake) TRACER_HIDDEN;
/* Attach writer w to channel c of buffer b. Returns 0 or -EINVAL. */
int tracer__pool_attach(const struct tracer__buffer *b, int c,
			struct tracer_rb_writer *w, uint32_t tid)
	TRACER_HIDDEN;
/*
 * Attach writers w[] to both channels of buffer b, stamping tid in their
 * packets; the channels' losses so far go to lost_base[] and, with the
 * records committed so far, into b's descriptor. Returns 0 or -EINVAL.
 */
int tracer__pool_attach_all(const struct tracer__buffer *b,
			    struct tracer_rb_writer *w, uint64_t *lost_base,
			    uint32_t tid) TRACER_HIDDEN;
/* Count of events lost for lack of a buffer (pool-wide). */
void tracer__pool_add_lost(uint64_t n) TRACER_HIDDEN;
/* The pool line's count of stashing threads, by delta (1 or -1); returns
 * false when there is no pool line to count in (nothing was counted). */
bool tracer__pool_add_stashed(int delta) TRACER_HIDDEN;

/*
 * Stash (stash.c): the events of a thread that found no free buffer.
 * tracer__stash_open() takes a slot for thread t of session `session` and
 * points t->ch[] at it: 0, -ENOBUFS (every slot taken), -ENOMEM (no
 * mapping), -EINVAL. tracer__stash_quiet(): every record reserved in t's
 * stash is committed (none is: a replay must wait). tracer__stash_replay()
 * writes t's stash into t->ch[] (t's buffer now) and frees the slot;
 * tracer__stash_drop() frees it, its records counted lost;
 * tracer__stash_orphan() leaves it, complete, to the next
 * tracer__stash_flush_orphans() by any thread (self: that thread's tid)
 * in a normal context, which writes orphans only into buffers with room
 * in their rings unless forced (the process ends: now or never).
 */
int tracer__stash_open(struct tracer__thread *t, uint64_t session)
	TRACER_HIDDEN;
bool tracer__stash_quiet(const struct tracer__thread *t) TRACER_HIDDEN;
/* Is either channel of t's stash past its first half? */
bool tracer__stash_filling(const struct tracer__thread *t) TRACER_HIDDEN;
void tracer__stash_replay(struct tracer__thread *t) TRACER_HIDDEN;
void tracer__stash_drop(struct tracer__thread *t) TRACER_HIDDEN;
void tracer__stash_orphan(struct tracer__thread *t) TRACER_HIDDEN;
void tracer__stash_flush_orphans(const struct tracer_control_state *st,
				 uint32_t self, bool force) TRACER_HIDDEN;
/* Is any stash an orphan's (a hint: relaxed)? */
bool tracer__stash_has_orphans(void) TRACER_HIDDEN;
void tracer__stash_fork_child(void) TRACER_HIDDEN;
/* The rings' mode for a session's (control page) mode. */
static inline uint32_t tracer__channel_mode(uint32_t session_mode)
{
	return session_mode == TRACER_MODE_FLIGHT ? TRACER_RB_FLIGHT
						  : TRACER_RB_DISCARD;
}
/* Has w a record reserved and never committed? (tracer.c) */
bool tracer__writer_torn(const struct tracer_rb_writer *w) TRACER_HIDDEN;
/* Changes whenever the pool may have a buffer again. */
uint64_t tracer__pool_epoch(void) TRACER_HIDDEN;
/* The eventfd that wakes tracerd (a previous one is closed). */
void tracer__pool_set_wake_fd(int fd) TRACER_HIDDEN;
/* Segments mapped, and segment i's size (its memfd is kept in slot
 * TRACER__FD_SEG0 + i, so that a new tracerd can adopt the pool). */
uint32_t tracer__pool_segments(void) TRACER_HIDDEN;
uint64_t tracer__pool_segment_size(uint32_t i) TRACER_HIDDEN;
/* The process cannot reach tracerd any more (err: why): tracerd reads it
 * in the pool line and ends the trace with it. */
void tracer__pool_set_untraced(int err) TRACER_HIDDEN;
/* In a child of fork(): unmap the parent's segments. */
void tracer__pool_fork_child(void) TRACER_HIDDEN;
/* Ask tracerd to look at the pool now (eventfd, only when it sleeps). */
void tracer__pool_wake(void) TRACER_HIDDEN;

/*
 * The descriptors libtracer keeps (fds.c), one slot each, moved to the top
 * of the program's range and hidden from its close()/dup*() calls.
 *
 * tracer__fd_keep(s, fd) moves fd there and makes it slot s's (a previous
 * one is closed once unused); returns the number it has now, or -EMFILE
 * (the band is full: fd is closed rather than left at a low number).
 * tracer__fd_hold() before a system call on a slot's descriptor, read
 * with tracer__fd(s) after it, tracer__fd_release(token) after the call:
 * a mover waits for it. tracer__fd_close(s): the tracer's own close.
 * tracer__fd_ours(fd): is fd one of ours (the program sees it closed)?
 * tracer__fd_next_ours(from): the lowest of ours >= from, or -1.
 * tracer__fd_vacate(fd): the program is about to dup2() onto fd; if fd is
 * ours, move it elsewhere first and return true: if the program's call
 * fails, tracer__fd_vacated(fd) closes what is left at fd.
 * tracer__fd_intact(s): slot s still holds the file we put there (a raw
 * close system call, or a dup2() we did not see, would change it), or
 * nothing.
 * tracer__fd_forget_all(): in a child of fork(): close them all.
 */
enum {
	TRACER__FD_SOCK,
	TRACER__FD_QUEUE,
	TRACER__FD_WAKE,
	TRACER__FD_SEG0,
	TRACER__FD_SLOTS = TRACER__FD_SEG0 + TRACER_POOL_MAX_SEGMENTS,
};

int tracer__fd_keep(int s, int fd) TRACER_HIDDEN;
unsigned tracer__fd_hold(void) TRACER_HIDDEN;
int tracer__fd(int s) TRACER_HIDDEN;
void tracer__fd_release(unsigned token) TRACER_HIDDEN;
void tracer__fd_close(int s) TRACER_HIDDEN;
bool tracer__fd_ours(int fd) TRACER_HIDDEN;
int tracer__fd_next_ours(int from) TRACER_HIDDEN;
bool tracer__fd_vacate(int fd) TRACER_HIDDEN;
void tracer__fd_vacated(int fd) TRACER_HIDDEN;
bool tracer__fd_intact(int s) TRACER_HIDDEN;
void tracer__fd_forget_all(void) TRACER_HIDDEN;
/* The process the slots belong to (a vfork child's calls pass through). */
extern uint32_t tracer__fd_owner_pid TRACER_HIDDEN;

/*
 * A detached process (client.c): started while no session recorded, it
 * did not connect; the control page in force is the daemon's state page,
 * whose epoch changes when a session starts. tracer__client_detached():
 * is it one (or being woken)? tracer__client_wake() (from the slow path,
 * not in a signal handler) connects, registers, reads the reply and puts
 * the process's own control page in force: 0, or -EAGAIN (another thread
 * is at it for longer than a short wait). tracer__client_recording():
 * does the page in force say a session records?
 */
bool tracer__client_detached(void) TRACER_HIDDEN;
int tracer__client_wake(void) TRACER_HIDDEN;
bool tracer__client_recording(void) TRACER_HIDDEN;
/*
 * A dormant process (client.c): registered in a session, it records but
 * runs no listener until tracerd writes to it or hangs up.
 * tracer__client_poke() (the update signal's handler, on the kernel's
 * POLL_IN/POLL_HUP for tracer__client_async_fd(), which is -1 when no
 * such signal is expected; async-signal-safe) makes every thread's next
 * event take the slow path, where tracer__client_rouse() (not in a
 * signal handler) reads what came and starts the listener.
 * tracer__client_control(): the control page in force, never the poke.
 */
void tracer__client_poke(void) TRACER_HIDDEN;
/* Before exec (failed false) and after it failed (true): wrap_proc.c. */
void tracer__client_exec(bool failed) TRACER_HIDDEN;
/*
 * The image ends (exit, _exit, exec): what the send queue still holds
 * goes to tracerd, waiting for the socket TRACER_FLUSH_MS at most, and
 * TRACER_FLUSH_STALL_MS at most without room. Returns 0, -ETIMEDOUT or a
 * negative errno.
 */
#define TRACER_FLUSH_MS		10000
#define TRACER_FLUSH_STALL_MS	1000
int tracer__client_flush(void) TRACER_HIDDEN;
int tracer__client_async_fd(void) TRACER_HIDDEN;
void tracer__client_rouse(void) TRACER_HIDDEN;
/*
 * Registering at the start without waiting (client.c, PENDING): is the
 * reply still to be read? tracer__client_settle() waits for it (the
 * registration's time at most) and reads it: for a thread whose stash is
 * filling before the pool has room for it, or that finds no stash slot
 * (tracer.c, await_pool()). Not in a signal handler.
 */
bool tracer__client_pending(void) TRACER_HIDDEN;
void tracer__client_settle(void) TRACER_HIDDEN;
/* A descriptor of ours was lost (fds.c, a raw close): see client.c. */
void tracer__client_lost(void) TRACER_HIDDEN;
const struct tracer_control *tracer__client_control(void) TRACER_HIDDEN;
/* Is this thread running a signal handler (signal.c's trampoline)? */
bool tracer__in_handler(void) TRACER_HIDDEN;
/*
 * The thread jumps (longjmp(), siglongjmp(): wrap_jump.c) to a frame
 * whose stack pointer is sp: the handlers that jump leaves are over.
 */
void tracer__signal_jumped(uintptr_t sp) TRACER_HIDDEN;
/* The C library's jumps, looked up (wrap_jump.c; tracer__signal_init). */
void tracer__jump_init(void) TRACER_HIDDEN;

/* Release the calling thread's buffer (thread exit, process exit). */
void tracer__thread_exit(void) TRACER_HIDDEN;
/*
 * The program image is about to end without the library's destructor
 * (exec, _exit): the stashes of threads that ended before they had a
 * buffer, which live in this image's memory, are written into the pool
 * now. Not in a signal handler.
 */
void tracer__image_end(void) TRACER_HIDDEN;
/* The update signal arrived from tracerd (signal.c): act on the page. */
void tracer__thread_signal(void) TRACER_HIDDEN;

/*
 * The update signal (signal.c). tracer__signal_install() reads
 * TRACER_SIGNAL (default SIGRTMIN+3, "none" for no signal) and installs
 * the handler, keeping the program's own as the one it chains to.
 * Returns the signal number, 0 (none), or a negative errno.
 */
int tracer__signal_install(void) TRACER_HIDDEN;
/*
 * The pid of the tracerd that registered the process: its signals are
 * recognised from then on, also after it exited (one it queued just
 * before may arrive after the process let go of its control page).
 */
void tracer__signal_set_daemon(uint32_t pid) TRACER_HIDDEN;
/*
 * The program's handlers (signal.c): look the C library's functions up
 * now (tracer_init); around fork(), hold the table of the program's
 * actions (prepare), and let it go (after, in the parent and the child).
 */
void tracer__signal_init(void) TRACER_HIDDEN;
/* "SIGUSR1", "SIGRTMIN+3" into buf (16 bytes), for sig 1 to SIGRTMAX. */
const char *tracer__signal_name(int sig, char *buf) TRACER_HIDDEN;
/*
 * Every signal but those the kernel raises for the instruction a thread
 * runs (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS): the mask of
 * libtracer's update handler and of its listener thread. Such a signal
 * raised while blocked kills the process (the kernel forces the default
 * action), and a program's seccomp filter that traps a system call for
 * its SIGSYS handler to emulate raises one in the middle of the
 * tracer's own calls.
 */
void tracer__signal_async_set(sigset_t *set) TRACER_HIDDEN;
void tracer__signal_fork_prepare(void) TRACER_HIDDEN;
void tracer__signal_fork_after(void) TRACER_HIDDEN;

/*
 * Process events (wrap_proc.c): proc:start, recorded by record_start()
 * once per process and session (async-signal-safe: what it records was
 * read when the library was loaded); in a child of fork(), the new pid.
 */
void tracer__proc_record_start(void) TRACER_HIDDEN;
void tracer__proc_fork_child(void) TRACER_HIDDEN;
/* The process's pid, read by the library's first constructor. */
pid_t tracer__proc_pid(void) TRACER_HIDDEN;

/*
 * The module map (modules.c). tracer__modules_init() fills it, once,
 * when the process registers (a process that never meets a session never
 * builds it; until then tracer__modules_sync() does nothing and
 * tracer__modules_exe() says "(executable)"); tracer__modules_sync()
 * brings it up to date after a
 * dlopen() or dlclose() (not from a signal handler: it takes a lock and
 * the loader's). tracer__modules_record() records one proc:module event
 * per loaded object, without lock or allocation (record_start()).
 * tracer__modules_exe() is the executable's path ("(executable)" when
 * unknown). tracer__modules_fork_child(): in a child of fork().
 */
void tracer__modules_init(void) TRACER_HIDDEN;
void tracer__modules_sync(void) TRACER_HIDDEN;
void tracer__modules_record(void) TRACER_HIDDEN;
const char *tracer__modules_exe(void) TRACER_HIDDEN;
void tracer__modules_fork_child(void) TRACER_HIDDEN;

#endif /* TRACER_LIBTRACER_INTERNAL_H */
