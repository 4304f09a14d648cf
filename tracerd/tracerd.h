/*
 * tracerd.h - the daemon's internal interfaces.
 *
 *   main.c     options, socket path, daemonizing, signals, the loop
 *   server.c   the listening socket and client connections: frames in and
 *              out (with descriptors), credentials, dispatch
 *   process.c  one traced process: control page, pool segments, readers,
 *              draining sub-buffers into channel files
 *   session.c  sessions: start, stop (drain everything first), switch,
 *              snapshot, status, list, directories and process.meta
 *   control.c  changing a running process: its control page (sequence
 *              lock), the update signal, event filters and the requests
 *              that wait for processes to confirm them
 *   salvage.c  the end of a process or thread that did not say goodbye:
 *              pidfd, exit status, reading dead writers' buffers
 *   trigger.c  flight-recorder triggers: watching what is recorded for
 *              events that take a snapshot
 *
 * Everything runs on the libuv loop thread: no locking.
 */
#ifndef TRACERD_H
#define TRACERD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <uv.h>
#include <urcu/list.h>

/*
 * liburcu's list macros recover the entry with caa_container_of(), which
 * casts through char *: clang's -Wcast-align flags every use although the
 * pointer came from a properly aligned entry.
 */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wcast-align"
#endif

#include "clock_history.h"
#include "clock_make.h"
#include "compiler.h"
#include "event_format.h"	/* struct tracer__site: a call site */
#include "pattern.h"
#include "pool_layout.h"
#include "rb.h"
#include "ratelimit.h"
#include "proto/wire.h"

struct tracerd_config {
	const char *socket_path;
	const char *output_dir;
	uint32_t buffers;		/* initial pool size */
	uint64_t max_memory;		/* pool cap per process, bytes */
	uint64_t max_total_memory;	/* cap of all pools together */
	uint64_t max_site_memory;	/* call sites of one process */
	uint64_t max_total_site_memory;	/* of every process */
	uint32_t max_clients;		/* connections in all */
	uint32_t max_clients_per_user;	/* of a user not root nor ours */
	uint32_t silent_ms;		/* a connection with nothing whole
					   said is closed after it */
	uint64_t subbuf_size[TRACER_POOL_CHANNELS];
	uint64_t subbuf_count[TRACER_POOL_CHANNELS];
	uint32_t scan_ms;		/* timer-driven scan period */
	bool world_readable;		/* traces readable by all (umask 022) */
	bool no_start_pools;		/* starting processes wait for a pool
					   instead of making their first
					   segment (--no-start-pools) */
	int clock;			/* TRACERD_CLOCK_* (--clock) */
	const char *relay;		/* sessions' default relay (--relay) */
	uint64_t relay_backlog;		/* bytes a file may run ahead of
					   what was streamed (relay.c) */
};

/* --clock: which trace clock the writers use (clock.c). */
enum {
	TRACERD_CLOCK_AUTO = 0,		/* the TSC where usable */
	TRACERD_CLOCK_TSC = 1,		/* the TSC whatever the clocksource */
	TRACERD_CLOCK_MONOTONIC = 2,	/* clock_gettime() */
};

/* What `tracectl start` asked for. */
struct tracerd_session_opts {
	uint32_t mode;			/* enum tracer_control_mode */
	char *events;			/* session filter (pattern.h) */
	uint64_t subbuf_size;		/* default channel; 0: tracerd's */
	uint64_t subbuf_count;
	uint32_t live_ms;		/* live interval */
	char *relay;			/* net://... to stream to, or NULL */
	bool relay_only;		/* no local copy of what streamed */
};

/* A request answered once processes confirm a filter (control.c). */
struct tracerd_waiter {
	struct cds_list_head node;
	struct tracerd_client *client;	/* NULL once it hung up */
	int kind;			/* TRACERD_WAIT_* */
	uint32_t reached;		/* processes the request applies to */
	uint64_t deadline_ms;
	size_t n;
	struct { pid_t pid; uint64_t gen; } *targets;
};

enum {
	TRACERD_WAIT_START = 1,		/* publish the session, then reply */
	TRACERD_WAIT_FILTER = 2,	/* reply Done */
};

struct tracerd_spill;

/* Packets held back while files are slow to make (spill.c). */
struct tracerd_spills {
	struct cds_list_head list;	/* struct tracerd_spill */
	void *buf;			/* the splitter's reads */
	size_t buf_size;
	uint64_t win_start, win_ns;	/* time making files, lately */
	bool always;			/* unit tests: spill every owner */
	uint64_t episodes;		/* times a spill fell behind */
	uint64_t logged_ms;		/* when that was last said */
	uv_idle_t idle;			/* the splitter's turns (session.c) */
	bool stop_waits;		/* a stop is answered once written out */
};

/* tracerd's scheduling priority (priority.c). */
struct tracerd_prio {
	int boost;			/* --nice, taken while behind */
	int base, base_group;		/* at the start: its own, its group's */
	bool group;			/* its autogroup's too */
	bool allowed;			/* the boost may be taken */
	bool boosted;			/* and is now */
	uint64_t behind_seen;		/* d->drain_behind when last looked */
	uint64_t last_ms;		/* a drain was last behind */
};

/*
 * A flight-recorder trigger (trigger.c): when tracerd sees a record of an
 * event that `pats` selects (of process pid, 0: any), recorded after the
 * trigger was added (`since`, trace clock), it takes a snapshot, at most
 * one per interval_ms.
 */
struct tracerd_trigger {
	struct cds_list_head node;
	uint32_t id;			/* from 1, never reused */
	uint32_t bit;			/* its bit in the scans' masks */
	char *on;			/* the patterns, as given */
	struct tracer__patterns pats;
	pid_t pid;
	uint64_t interval_ms;
	uint64_t since;			/* trace clock when added */
	uint64_t matched, fired;
	uint64_t last_ms;		/* monotonic ms of the last snapshot */
	char *last_snapshot;		/* its directory, NULL: none yet */
	char last_event[200];		/* what fired it */
	bool hit;			/* matched, not acted on yet */
	char hit_event[200];
};

#define TRACERD_TRIGGERS_MAX	64	/* a bit each in a uint64_t */

struct tracerd_triggers {
	struct cds_list_head list;	/* struct tracerd_trigger, by id */
	uint32_t n, next_id;
	uint64_t bits;			/* bits in use */
	uint64_t gen;			/* changes with the list */
	bool any_hit;			/* a trigger to act on */
	uv_timer_t fire;		/* acts out of the current callback */
	void *buf;			/* a packet copy, 64-byte aligned */
	uint64_t buf_size;
};

struct tracerd {
	uv_loop_t *loop;
	struct tracerd_config cfg;
	int listen_fd;
	uv_poll_t listen_poll;
	uv_timer_t scan_timer;
	uv_timer_t stop_timer;
	uv_signal_t sig[2];
	struct cds_list_head clients;
	struct cds_list_head processes;
	uint64_t session_id;		/* 0: none */
	uint64_t last_session;
	char *session_dir;
	bool stopping;			/* a stop is draining */
	uint64_t stop_deadline;
	struct cds_list_head stop_waiters;	/* clients owed a reply */
	bool quitting;			/* SIGTERM/SIGINT: exit after stop */
	bool starting;			/* a start waits for filters */
	struct tracerd_session_opts sess;	/* of the current session */
	uint64_t epoch;			/* last control epoch given */
	uint64_t serials;		/* processes registered so far */
	struct cds_list_head waiters;	/* struct tracerd_waiter */
	struct cds_list_head switch_waiters;	/* clients owed Done */
	bool switching;			/* a switch is draining */
	uint64_t switch_deadline;
	uv_timer_t switch_timer;
	uv_timer_t live_timer;
	uint64_t snapshots;		/* snapshots taken in this session */
	/* Flight mode: directories of the processes that ended since the
	 * session started or the last snapshot (ended.c). */
	char **ended;
	size_t nended;
	uint64_t pending_id;		/* id of the session starting */
	int write_error;		/* errno of the write-error episode
					   under way (output full), 0: none */
	uint64_t unwritten;		/* records lost to it so far */
	uint64_t drain_behind;		/* drain passes that found a ring 1/8
					   full (sink.c) */
	struct tracerd_prio prio;	/* priority.c */
	struct tracerd_relay *relay;	/* the session's (relay.c) */
	struct cds_list_head relays;	/* stopped ones sending the rest */
	struct tracer_control *state;	/* SOCKET.state (control.c) */
	struct tracerd_kit *stock;	/* pools made ahead (stock.c) */
	uint32_t nstock;
	uv_idle_t stock_idle;
	struct cds_list_head ending;	/* processes whose end goes a step
					   per turn (salvage.c) */
	struct cds_list_head reclaiming;	/* processes reading a vanished
					   thread's buffer in steps */
	uv_idle_t end_idle;
	bool stock_filling;
	struct tracerd_spills spill;
	uint64_t cs_bytes;		/* every process's call sites */
	uint64_t lazy_reads;		/* read_lazy() rounds (control.c) */
	uint64_t pools_bytes;		/* every pool's segments (stock too) */
	/*
	 * Where the drain gathers packets for a writev(2): one for all
	 * processes (the loop drains one channel at a time, and a batch is
	 * empty between two), at least TRACERD_BATCH_BYTES and the largest
	 * sub-buffer of any process served so far (grown, never shrunk).
	 */
	struct tracerd_scratch {
		void *buf;		/* 64-byte aligned */
		uint64_t size;
		/* Where the drain stages a run of sub-buffers read from a
		 * pool's memfd with one pread() (sink.c, stage_ahead()):
		 * STAGE_BYTES there, made at its first use. */
		void *stage;
	} scratch;
	uint64_t refused;		/* registrations that failed */
	char last_refusal[160];		/* "pid N: why" (status) */
	/* The trace clock the pages carry (clock.c). */
	struct tracerd_triggers trig;	/* trigger.c */
	struct tracerd_clock {
		struct tracer_clock c;	/* published */
		struct tracer_clock_sample anchor;	/* c's (or the first) */
		uv_timer_t timer;	/* calibration, then anchors */
		int64_t err;		/* ns off CLOCK_MONOTONIC at the last
					   anchor, before it was steered */
		char why[224];		/* why this kind */
		char usable[160];	/* why the TSC may be used */
		/* Every line published, and the previous tracerd's:
		 * packets in ticks are read by them (clock.h). */
		struct tracer_clock_history history;
		/* After a stray: lines from samples still go into the
		 * history for writers yet to leave ticks (not published
		 * to them). */
		bool sampling;
		int ticks;		/* 1: writers may stamp ticks, -1:
					   not (judged once: clock.c) */
		uint64_t tick_packets;	/* written to a session's files
					   converted from ticks (sink.c) */
	} clock;
};

/* Descriptors received from a client and not taken by a message yet. */
#define TRACERD_CLIENT_FDS	8

/* A frame waiting to be sent, with the descriptors it carries. */
struct tracerd_out {
	struct cds_list_head node;
	char *data;
	size_t size, sent;
	int fds[TRACER_WIRE_MAX_FDS];
	int nfds;
};

struct tracerd_client {
	struct tracerd *d;
	struct cds_list_head node;
	struct cds_list_head stop_node;	/* in d->stop_waiters */
	int fd;
	uv_poll_t poll;
	pid_t pid;
	uid_t uid;			/* SO_PEERCRED */
	char *in;			/* frame being assembled */
	size_t in_len, in_cap;
	struct cds_list_head out;
	size_t out_frames;
	struct tracerd_process *proc;	/* after Register */
	int fds_in[TRACERD_CLIENT_FDS];	/* received, not taken yet */
	int nfds_in;
	bool closing;
	bool spoke;			/* sent a whole valid frame */
	uint64_t since_ms;		/* accepted at */
	bool waits_stop;
	bool waits_switch;
	struct cds_list_head switch_node;	/* in d->switch_waiters */
};

/*
 * One thread's use of one channel of one buffer: a channel file, and what
 * its packets say (doc/session-files.md): packet_seq_num counts the
 * packets of the file, events_discarded the records lost since the file
 * was created. lost_seen and pending belong to the channel and outlive
 * the file. Records tracerd could not write (output full) count as lost:
 * in pending, and for status in unwritten (the owner's, whose
 * stream_instance_id is unwritten_instance).
 */
struct tracerd_stream {
	uint64_t instance;		/* stream_instance_id; 0: none */
	int fd;
	uint32_t tid;
	const char *dir;		/* the file's directory (its sink's) */
	uint64_t size;			/* bytes of whole packets in the file */
	uint64_t seq;			/* packet_seq_num of the next packet */
	uint64_t discarded;		/* events_discarded written last */
	uint64_t last_end;		/* timestamp_end written last */
	uint64_t lost_seen;		/* writer's `lost` accounted for */
	uint64_t pending;		/* losses no packet has told yet */
	bool counted;			/* the session's: status shows losses */
	uint64_t unwritten_instance;
	uint64_t unwritten;		/* records not written, that owner's */
	struct tracerd_spill *spill;	/* its packets go there (fd is the
					   spill's), NULL: to its own file */
	struct tracerd_relay_stream *relay;	/* its file's, streamed */
	uint64_t spill_id;		/* its name in the spill */
};

struct tracerd_buffer {
	uint64_t gone_word;		/* owner seen gone (salvage.c) */
	uint32_t gone_tid;
	uint64_t gone_read;		/* its read counts' sum then */
	struct tracer_rb_reader rd[TRACER_POOL_CHANNELS];
	struct tracerd_stream st[TRACER_POOL_CHANNELS];
	struct tracer_pool_desc *desc;
	bool broken[TRACER_POOL_CHANNELS];
	uint64_t live_mark[TRACER_POOL_CHANNELS];	/* read_count at the
							   last live tick */
	int seg_fd;			/* its segment's memfd (not owned;
					   -1: none): the drain's pread() */
	uint64_t data_at[TRACER_POOL_CHANNELS];	/* each channel's data
						   area in that file */
};

/* Where packets go: a process directory and its process.meta. */
struct tracerd_sink {
	const char *dir;
	FILE *meta;
	struct tracerd_spill **spill;	/* where owners may be held back
					   (spill.c), NULL: never */
};

struct tracerd_segment {
	char *base;
	const char *view;	/* base mapped again, read-only: where the
				   drain copies records from (NULL: base;
				   tracerd_segment_open()) */
	int fd;			/* the memfd, kept for the drain's pread()
				   (-1: none) */
	uint64_t size;
	uint32_t first, count;
};

enum tracerd_end {
	TRACERD_END_DIED,		/* its pidfd says so */
	TRACERD_END_EXEC,		/* the same pid registered again */
	TRACERD_END_HANGUP,		/* connection closed, no pidfd */
	TRACERD_END_UNTRACED,		/* alive, cannot reach us any more */
};

/* What could not be kept of one channel of a dead writer (salvage.c). */
struct tracerd_salvage_sum {
	uint32_t torn;
	uint64_t torn_bytes;
	uint64_t last_ts;		/* of the last record kept */
	char error[200];
};

/*
 * The end of a process that died, done a step per loop turn (salvage.c):
 * buffer `buf`, channel `chan`; `salvaging` once its complete sub-buffers
 * are drained (then one sub-buffer salvaged per step, `guard` of them).
 */
struct tracerd_end_job {
	struct cds_list_head node;	/* in tracerd's ending list */
	bool queued;			/* in it */
	enum tracerd_end how;
	uint32_t buf, guard, torn;
	int chan;
	bool salvaging;
	uint64_t now;			/* a time for salvaged packets */
	struct tracerd_salvage_sum sum[TRACER_POOL_CHANNELS];
};

/* A process's pool (pool.c): its segments, their buffers, its geometry. */
struct tracerd_pool {
	struct tracerd_segment seg[TRACER_POOL_MAX_SEGMENTS];
	uint32_t nseg;
	struct tracerd_buffer *buf;	/* all segments' buffers */
	uint32_t nbuf;
	uint64_t bytes;			/* all segments */
	uint64_t buffer_size;
	uint32_t channel_offset[TRACER_POOL_CHANNELS];
	uint64_t subbuf_size[TRACER_POOL_CHANNELS];
	uint64_t subbuf_count[TRACER_POOL_CHANNELS];
};

/* Pieces of a batch: packets read into scratch run together in one, and
 * so do staged packets that fill their sub-buffers; a staged packet with
 * a gap after it ends its piece. */
#define TRACERD_BATCH_IOV	64

/* The packets the drain gathers for one writev(2) (sink.c): in the
 * daemon's one scratch buffer (struct tracerd_scratch), or checked where
 * stage_ahead() copied them. */
struct tracerd_batch {
	uint64_t len;			/* bytes of packets, in iov */
	uint64_t used;			/* scratch in use: the end of the
					   last packet placed there */
	struct iovec iov[TRACERD_BATCH_IOV];
	int niov;
	struct tracerd_stream *stream;	/* whose they are */
	uint64_t seq, discarded;	/* its counts before them */
	uint64_t records, packets;
};

/* A process's files in the session (meta.c). */
struct tracerd_files {
	char *dir;			/* its process directory */
	FILE *meta;			/* its process.meta, appended to */
	FILE *ctf;			/* its CTF metadata, appended to */
	struct tracerd_spill *spill;	/* made at the first owner held back */
	uint64_t retry_ms;		/* next try at a directory that
					   could not be made */
};

struct tracerd_process {
	struct tracerd *d;
	struct cds_list_head node;
	uint64_t serial;		/* its registration's number, from 1 */
	struct tracerd_client *client;	/* NULL once it hung up */
	pid_t pid, ppid;
	char *name;
	char **argv;
	size_t argc;
	uint64_t start_time_ns, clock_offset_ns;
	bool clock_monotonic;		/* its TRACER_CLOCK=monotonic */
	int control_fd;
	struct tracer_control *control;
	int wake_fd;
	uv_poll_t wake_poll;
	struct tracerd_pool pool;	/* pool.c */
	struct tracer__site *cs;
	size_t ncs, cs_cap;
	uint32_t *cs_index;		/* by id: index + 1, 0: empty (at
					   most half full; process.c) */
	size_t cs_index_cap;		/* a power of 2 */
	uint64_t cs_bytes;		/* memory its call sites take */
	struct tracerd_batch batch;	/* sink.c */
	uint32_t drain_next;		/* the buffer the next drain pass
					   starts at (sink.c) */
	struct tracerd_files files;	/* meta.c */
	uint64_t unwritten;		/* records not written (output full) */
	uint64_t bytes_written, packets_written;
	uint64_t dropped_packets;	/* outside any session */
	int signal;			/* update signal, 0: none */
	char *filter;			/* patterns it was last sent */
	uint64_t filter_sent, filter_acked;	/* generations */
	uint64_t base_records, base_lost;	/* at session start */
	bool in_session;		/* publish() gave it the session */
	int pidfd;			/* -1: none (salvage.c) */
	uv_poll_t pid_poll;
	int handles;			/* uv handles still to close */
	bool same_pidns;		/* its thread ids are ours */
	uint32_t vanish_scan;		/* scans since threads were checked */
	uint32_t vanish_from;		/* the buffer the next check starts at */
	struct tracerd_reclaim {	/* a vanished thread's buffer read in
					   steps (salvage.c) */
		struct cds_list_head node;	/* in tracerd's reclaiming */
		bool queued;
		uint64_t word;		/* its state word, owner gone */
		struct tracerd_end_job job;	/* job.buf: the buffer */
	} reclaim;
	uint64_t hangup_ms;		/* when its connection closed */
	bool ending;			/* tracerd_process_end() runs, or
					   its steps are queued (end) */
	struct tracerd_end_job end;
	uint32_t adopting;		/* segments an adopting Register
					   announced (adopt.c), 0: none */
	uint64_t adopt_epoch;
	bool fresh_pool;		/* the pool adopted is one the process
					   made at its start (adopt.c) */
	bool recovering;		/* adopted outside a session: keep
					   its buffers for the next one */
	uint64_t resume_token;		/* the process's name for a new
					   connection (Register.resume_token) */
	bool resumed;			/* came back after a broken
					   connection: known call sites are
					   sent again */
	uint32_t start_id;		/* its tracer:thread_start call site */
	uint32_t rename_id;		/* its tracer:thread_name call site
					   (0: none yet) */
	uint64_t lazy_read;		/* tracerd's lazy_reads when last read
					   for a waiter (control.c) */
	bool lazy;			/* runs no listener yet: do not wait
					   for its confirmations */
	struct tracerd_rate log_rate;	/* its damage, in the log */
	struct tracerd_trig_scan *tscan;	/* trigger.c, NULL: none */
};

/* Bytes of packets gathered per write(2): the scratch buffer's least size. */
#define TRACERD_BATCH_BYTES	(1 << 20)
/* The buffer generation part of stream_instance_id (the rest: its index). */
#define TRACERD_INSTANCE_MASK	0xffffffff00000000ULL

/* A flight-recorder session keeps everything in the buffers. */
static inline bool tracerd_flight_recording(const struct tracerd *d)
{
	return d->session_id && !d->stopping &&
	       d->sess.mode == TRACER_MODE_FLIGHT;
}

/* Event ids of tracerd's own events (salvage.c); programs use fewer. */
#define TRACERD_EVENT_BASE	0x7fffff00u
/* stream_instance_id of the file that tells a process's end. */
#define TRACERD_END_INSTANCE	0xffffffff00000000ULL

/* main.c */
void tracerd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* loop.c */
/*
 * Set d up (its cfg filled) to run on loop: its lists, the listening
 * socket, the state page, the timers, SIGTERM and SIGINT (signals), the
 * pools made ahead. Returns 0, or -1 (the socket could not be made:
 * logged). tracerd_close(), after the loop returned, closes everything
 * and writes out what is held back.
 */
int tracerd_open(struct tracerd *d, uv_loop_t *loop, bool signals);
void tracerd_close(struct tracerd *d);

/* server.c */
int tracerd_listen(struct tracerd *d);
void tracerd_server_close(struct tracerd *d);
/* Close the connections that sent no whole frame in cfg.silent_ms (the
 * scan timer calls it). */
/*
 * Before a session stops: every connection already made accepted, and
 * what every client but `except` (the one asking, in the middle of its
 * own messages) sent, read and handled. A process that registered
 * without waiting for our reply may have connected, sent its Register
 * and pool, and ended before the request to stop came (tracectl record
 * stops when its program ends): its records are the session's.
 */
void tracerd_server_take_in(struct tracerd *d, struct tracerd_client *except);
/* The same for the connections of pid not registered yet: its next image
 * may have connected before the death we are told of (an exec, then the
 * new image ended, both before we read their Registers). */
void tracerd_server_take_in_pid(struct tracerd *d, pid_t pid);
/* Has p's pid ended (its pidfd readable)? */
bool tracerd_pid_exited(const struct tracerd_process *p);
void tracerd_server_sweep(struct tracerd *d);
/*
 * Queue msg (and fds, whose ownership passes to the queue) for client c.
 * Returns 0, -ENOMEM, -EMSGSIZE, -ENOBUFS (client does not read: it is
 * disconnected).
 */
int tracerd_send(struct tracerd_client *c, const tracer_msg *msg,
		 const int *fds, int nfds);
int tracerd_send_error(struct tracerd_client *c, int code, const char *why);
void tracerd_client_close(struct tracerd_client *c);
/* The oldest descriptor c sent that no message took yet; -1: none. */
int tracerd_client_take_fd(struct tracerd_client *c);
/* Read and handle every frame c has sent so far (its process is ending). */
void tracerd_client_read_all(struct tracerd_client *c);

/* process.c */
/*
 * Create the process of client c from its Register message and send the
 * Registered reply. Returns 0 or a negative errno (the client is told).
 */
int tracerd_process_register(struct tracerd_client *c,
			     const Tracer__Register *r);
int tracerd_process_callsites(struct tracerd_process *p,
			      const Tracer__CallSites *cs);
/* Drain every complete sub-buffer; grow the pool when asked. */
void tracerd_process_scan(struct tracerd_process *p);
/*
 * Drain everything, including the committed part of open sub-buffers.
 * Returns the number of channels with a record still being written.
 */
unsigned tracerd_process_flush(struct tracerd_process *p);
void tracerd_process_close_files(struct tracerd_process *p);
/* The client hung up: salvage, then free. */
void tracerd_process_gone(struct tracerd_process *p);
/*
 * Client c, whose process lost its connection, names itself with the
 * token of a Register: give it its process back and reply. Returns 0, or
 * -ESRCH (no such process here: the client is told, and adopts).
 */
int tracerd_process_resume(struct tracerd_client *c,
			   const Tracer__Register *r);
/* The errno a process that gave up on us left in its pool line, or 0. */
int tracerd_process_untraced(struct tracerd_process *p);
/*
 * Pools made ahead (stock.c). tracerd_process_make_pool() gives p (with
 * only its daemon set, for a stock "shadow") a control page and segment 0
 * for the geometry in force: their fds, or -errno. _pool_fits(): would a
 * process registering now get shadow's geometry? _take_pool(): p gets
 * shadow's pool and control page; shadow is freed.
 */
int tracerd_process_make_pool(struct tracerd_process *p, int *ctl_fd,
			      int *seg_fd);
/*
 * A process registered outside a session (lazy) has no pool: give it one
 * (Segment 0) before a session is published. Returns 0 or -errno.
 */
int tracerd_process_ensure_pool(struct tracerd_process *p);
bool tracerd_process_pool_fits(const struct tracerd_process *shadow);
void tracerd_process_take_pool(struct tracerd_process *p,
			       struct tracerd_process *shadow);

/*
 * The daemon's state page (control.c): SOCKET.state, made at start and
 * published with every session start and stop (the epoch lazy processes
 * look at). _open: 0 or -errno (logged; processes then wait for the
 * reply at their start). _close: "no session", unmapped; the file stays.
 */
int tracerd_state_open(struct tracerd *d);
void tracerd_state_publish(struct tracerd *d, uint64_t session);
/* The state page's start line: the geometry and events a process
 * starting now records with (pool_layout.h), after a change of them. */
void tracerd_state_start(struct tracerd *d);
void tracerd_state_close(struct tracerd *d);

/* stock.c */
/*
 * tracerd_stock_init(): the stock starts filling (in the loop's idle
 * time). tracerd_stock_take(): give p a pool of the stock that fits;
 * 0, or -ENOENT (none: make one). tracerd_stock_flush(): drop them all
 * (the geometry changed, or tracerd exits).
 */
void tracerd_stock_init(struct tracerd *d);
int tracerd_stock_take(struct tracerd_process *p, int *ctl_fd, int *seg_fd);
void tracerd_stock_flush(struct tracerd *d);
void tracerd_process_free(struct tracerd_process *p);
/*
 * Fill st; thread entries are malloc'ed: free them with
 * tracerd_process_status_free().
 */
void tracerd_process_status(struct tracerd_process *p,
			    Tracer__ProcessStatus *st);
void tracerd_process_status_free(Tracer__ProcessStatus *st);
/* Readers follow the session's mode (enum tracer_control_mode). */
void tracerd_process_set_mode(struct tracerd_process *p, uint32_t mode);
/*
 * Counters at session start, for status; losses before it are no file's
 * (doc/session-files.md, events_discarded), except, for a pool adopted
 * while no session recorded (recovered), those since its last tracerd
 * wrote: they are told in this session.
 */
void tracerd_process_baseline(struct tracerd_process *p, bool recovered);
/* Live interval: make quiet channels' committed records readable. */
void tracerd_process_live(struct tracerd_process *p);
/*
 * Write the current contents of every buffer, without consuming them, to
 * the process directory of sink. Returns 0 or a negative errno.
 */
int tracerd_process_snapshot(struct tracerd_process *p,
			     const struct tracerd_sink *sink);
/* Write process.meta (identity, call sites) into dir; NULL on error. */
FILE *tracerd_process_meta(struct tracerd_process *p, const char *dir);
/*
 * A `thread` line in process.meta: the name of thread tid when it took
 * its buffer (since 0), or its new name from time since on (a rename, in
 * tracer:thread_name).
 */
void tracerd_note_thread(FILE *meta, uint32_t tid, const char *name,
			 uint64_t since);
/* Percent-encode s (doc/session-files.md) onto f; "%" for empty. */
void tracerd_put_field(FILE *f, const char *s);

/* meta.c */
/*
 * mkdir dir/NAME-PID for p, or NAME-PID.N with the first N free. Returns
 * its path (malloc'ed) or NULL (logged).
 */
char *tracerd_meta_make_dir(const struct tracerd_process *p, const char *dir);
/* Write dir/metadata for p (preamble, call sites so far); NULL on error
 * (logged). */
FILE *tracerd_meta_open_ctf(const struct tracerd_process *p, const char *dir);
/*
 * Write call site cs's process.meta line to meta and its CTF event class
 * to ctf (either may be NULL), from a table of the texts of the sites seen
 * last (sitetext.c). Returns 0, or tracer__ctf_write_event()'s error.
 */
int tracerd_site_text_write(const struct tracer__site *cs, FILE *meta,
			    FILE *ctf);
/* Free the table (at exit, for leak checkers). */
void tracerd_site_text_free(void);
/* pool.c */
/* tracerd's defaults: --buffers, --max-memory, the channels' geometry. */
void tracerd_config_defaults(struct tracerd_config *cfg);
/* Unmap p's pool, free its buffers' readers. */
void tracerd_pool_free(struct tracerd_process *p);
/*
 * The daemon's scratch buffer at least `need` bytes (and
 * TRACERD_BATCH_BYTES). Returns 0 or -ENOMEM (the old one is kept). Called
 * outside a drain only (a batch in it would be lost). tracerd_scratch_free()
 * at the end.
 */
int tracerd_scratch_fit(struct tracerd *d, uint64_t need);
void tracerd_scratch_free(struct tracerd *d);
/* Would a segment of size bytes keep all pools within --max-total-memory? */
bool tracerd_pools_fit(const struct tracerd *d, uint64_t size);
/*
 * Make p's pool for the geometry in force (the session's default channel
 * geometry, else tracerd's): room for its sub-buffers in the scratch
 * buffer, and its first segment of --buffers + 1 buffers. Returns the
 * segment's memfd, -ENOSPC (at the memory cap), -ENOMEM, -EINVAL
 * (geometry), or the errno of memfd/mmap.
 */
int tracerd_pool_create(struct tracerd_process *p);
/*
 * Could a pool be made with subbuf_count sub-buffers of subbuf_size bytes
 * in the default channel (the vital channel as configured), one buffer
 * at least under --max-memory? Returns 0, or -EINVAL / -E2BIG with why
 * (n bytes) saying why not.
 */
int tracerd_pool_geometry_ok(const struct tracerd *d, uint64_t subbuf_size,
			     uint64_t subbuf_count, char *why, size_t n);
/* Grow p's pool if fewer than half of its buffers are usable, or a thread
 * asked (want_grow): a new segment, sent to the process. */
void tracerd_pool_maybe_grow(struct tracerd_process *p);
/*
 * A pool the process made at its start (one buffer, adopt.c): a segment
 * with the rest of the --buffers + 1 a pool starts with, sent to it.
 */
void tracerd_pool_top_up(struct tracerd_process *p);
/* The sub-buffer geometry a pool made now gets (the session's default
 * channel geometry, else tracerd's). */
void tracerd_pool_pick(const struct tracerd *d,
		       uint64_t size[TRACER_POOL_CHANNELS],
		       uint64_t count[TRACER_POOL_CHANNELS]);
/* The pool header (segment 0): counters shared with the process. */
struct tracer_pool_header *tracerd_pool_line(struct tracerd_process *p);
/* A sealed memfd of size bytes, mapped at *map. Returns it or -errno. */
int tracerd_make_memfd(const char *name, uint64_t size, void **map);
/* The losses a reader before us told in ring r (0 for a new ring). */
uint64_t tracerd_lost_told(const struct tracer_rb_reader *r);
/* The latest registration of pid (NULL: none). */
struct tracerd_process *tracerd_process_find(struct tracerd *d, pid_t pid);
/*
 * Attach the readers of buffer b at offset off of segment s (descriptor
 * desc); fresh: its channels were just made and no writer had them
 * (nothing to restore). On failure nothing of b stays attached.
 */
int tracerd_attach_buffer(struct tracerd_process *p, struct tracerd_buffer *b,
			  const struct tracerd_segment *s, uint64_t off,
			  struct tracer_pool_desc *desc, bool fresh);
/*
 * Segment s, at base, of size bytes, from memfd fd: what the drain reads
 * it through besides (a copy of fd, and a second, read-only mapping:
 * rb.h, tracer__rb_reader_view()); without them (no descriptor or
 * address space left) the drain reads through base.
 * tracerd_segment_close() unmaps and closes all of it.
 */
void tracerd_segment_open(struct tracerd_segment *s, char *base, int fd,
			  uint64_t size);
void tracerd_segment_close(struct tracerd_segment *s);
/* Detach the readers of the n buffers at b (attached, or zeroed). */
void tracerd_detach_buffers(struct tracerd_buffer *b, uint32_t n);
/*
 * p's pool is complete: watch it, give it the session, send Registered
 * (control page ctl_fd, and seg_fd unless -1). Returns 0 or -errno.
 */
int tracerd_process_go_live(struct tracerd_process *p, int ctl_fd,
			    int seg_fd);
/* Unlink p from the process list and free it. */
void tracerd_process_remove(struct tracerd_process *p);
/*
 * Add a call site of tracerd's own (no checks). Returns 0 or -ENOMEM.
 */
int tracerd_process_add_site(struct tracerd_process *p, uint32_t id,
			     const char *name, const char *types,
			     const char *format);
/* The call site with this id, or NULL. */
const struct tracer__site *tracerd_process_site(
	const struct tracerd_process *p, uint32_t id);
/* For salvage.c: the drain machinery of process.c, channel by channel. */
const char *tracerd_channel_name(int c);
/* One pass of the drain over channel c of b (at most DRAIN_BUDGET
 * packets); true if packets are left. */
bool tracerd_drain_some(struct tracerd_process *p, struct tracerd_buffer *b,
			int c);
void *tracerd_batch_room(struct tracerd_process *p, uint64_t need);
uint64_t tracerd_batch_free(const struct tracerd_process *p);
/* The packet (info) at tracerd_batch_room() goes to b's channel c file. */
void tracerd_emit_batch(struct tracerd_process *p, struct tracerd_buffer *b,
			int c, const struct tracer_rb_packet_info *info);
/* The same for a packet built elsewhere. */
void tracerd_emit_copy(struct tracerd_process *p, struct tracerd_buffer *b,
		       int c, const void *packet,
		       const struct tracer_rb_packet_info *info);
/* A packet telling losses not told yet, if any. */
void tracerd_flush_channel_losses(struct tracerd_process *p,
				  struct tracerd_buffer *b, int c);
/* Write the packet telling p's end into a file of its own. */
void tracerd_write_end(struct tracerd_process *p, const void *packet,
		       uint64_t len);
/* Give b back to p's pool: its owner (state word) is gone. */
void tracerd_buffer_release(struct tracerd_process *p,
			    struct tracerd_buffer *b, uint64_t word);

/* adopt.c */
/*
 * Register(adopt_segments > 0) made p: a process whose tracerd died hands
 * over its pool. Returns 0 (the reply waits for the segments) or a
 * negative errno.
 */
int tracerd_process_adopt(struct tracerd_process *p, const Tracer__Register *r);
/*
 * One of its segments (fd: -1 if none came). Returns 0, or -EBADF,
 * -EINVAL (does not check out), -E2BIG, -ENOMEM, or mmap's errno.
 */
int tracerd_process_adopt_segment(struct tracerd_process *p,
				  const Tracer__Segment *s, int fd);

/* salvage.c */
/* Add tracerd's own events to p's call sites. Returns 0 or -ENOMEM. */
int tracerd_salvage_events(struct tracerd_process *p);
/* Watch p's pid (pidfd). Returns 0 or a negative errno (not watched). */
int tracerd_watch_pid(struct tracerd_process *p);
/*
 * fd, a pidfd the process sent with its Register, becomes p's (watched
 * by tracerd_watch_pid()). Returns 0, or -EINVAL (not a pidfd of p:
 * closed).
 */
int tracerd_give_pidfd(struct tracerd_process *p, int fd);
/*
 * Salvage everything of p, tell its end in the trace, free it. Now: a
 * process whose end was queued (tracerd_process_end_soon()) is finished
 * here at once, as it began.
 */
void tracerd_process_end(struct tracerd_process *p, enum tracerd_end how);
/*
 * The same for a process that died, in steps: a bounded part of its
 * buffers per loop turn, so that no death of a process with large
 * buffers holds up requests and the other processes' drains.
 */
void tracerd_process_end_soon(struct tracerd_process *p,
			      enum tracerd_end how);
/* Finish every end still in steps (before a stop, a snapshot, the exit). */
void tracerd_finish_ends(struct tracerd *d);
/* The ends in steps: set up with tracerd_open(). */
void tracerd_ends_init(struct tracerd *d);
/* p is freed: out of the queue of ends. */
void tracerd_end_forget(struct tracerd_process *p);

/*
 * ended.c: the processes of a flight-recorder session that ended, for the
 * next snapshot. tracerd_ended_add(): remember dir (its last events were
 * written there). tracerd_ended_snapshot(): link (or copy) each into dir,
 * forget them; returns how many, *failed counting those that could not
 * be placed (logged). tracerd_ended_clear(): forget them.
 */
void tracerd_ended_add(struct tracerd *d, const char *dir);
unsigned tracerd_ended_snapshot(struct tracerd *d, const char *dir,
				unsigned *failed);
void tracerd_ended_clear(struct tracerd *d);
/* A process registers with pid: the one tracerd has with it ran exec. */
void tracerd_process_replaced(struct tracerd *d, pid_t pid);
/* On each scan: vanished threads, or the end of a process that hung up
   (may free p). */
void tracerd_process_check(struct tracerd_process *p);
/*
 * Writing (or creating) something in dir failed with err, a negative
 * errno: logged once per episode (the output file system is full, or
 * failing), which ends when a channel file write succeeds with room again.
 */
void tracerd_write_failed(struct tracerd *d, const char *dir, int err);

/* clock.c */
/*
 * tracerd_clock_init(): decide the trace clock and start calibrating
 * (after tracerd_state_open()). tracerd_now(): the trace clock's time,
 * what record stamps are compared with. tracerd_clock_name(): "tsc" or
 * "monotonic".
 */
void tracerd_clock_init(struct tracerd *d);
/* The clock's why until the first calibration (status polls for it). */
#define TRACERD_CLOCK_CALIBRATING \
	"until the TSC is calibrated, 100 ms after the start"
uint64_t tracerd_now(const struct tracerd *d);
const char *tracerd_clock_name(const struct tracerd *d);

/* control.c */
/*
 * The clock line of every control page and of the state page; a process
 * whose session records gets a new epoch (its threads copy the clock at
 * their next event). tracerd_control_clock_page(): one page, under its
 * seq, epoch unchanged (a page being made).
 */
void tracerd_control_clock(struct tracerd *d);
void tracerd_control_clock_page(const struct tracerd *d,
				struct tracer_control *c);
/*
 * Write the control page: session (0: none), mode; bump_switch asks the
 * threads to close their sub-buffers. Every call gives a new epoch.
 */
void tracerd_control_publish(struct tracerd_process *p, uint64_t session,
			     uint32_t mode, bool bump_switch);
/* Queue the update signal to every thread holding a buffer. */
void tracerd_control_signal(struct tracerd_process *p);
/* Send patterns to p unless it has them; returns true if sent. */
bool tracerd_control_send_filter(struct tracerd_process *p,
				 const char *patterns);
/* FilterApplied from p. */
void tracerd_control_filter_applied(struct tracerd_process *p,
				    const Tracer__FilterApplied *a);
/*
 * Make a waiter for client c on the processes sent a filter (pid 0: all,
 * else that one), after reading what the lazy ones sent. Returns it, or
 * NULL (out of memory: c was told; or c was dropped meanwhile).
 */
struct tracerd_waiter *tracerd_wait_filters(struct tracerd_client *c,
					    int kind, pid_t pid);
/* Answer the waiters that are done (or late); called on acks and scans. */
void tracerd_waiters_check(struct tracerd *d);
/* Client c hung up: forget it in every waiter. */
void tracerd_waiters_forget(struct tracerd_client *c);

/* session.c */
void tracerd_session_start(struct tracerd_client *c,
			   const Tracer__SessionStart *req);
/* The start's filters are confirmed (or late): publish, answer. */
void tracerd_session_started(struct tracerd *d, struct tracerd_client *c,
			     const char *warning);
void tracerd_session_stop(struct tracerd_client *c);
void tracerd_session_filter(struct tracerd_client *c,
			    const Tracer__FilterRequest *req);
void tracerd_session_switch(struct tracerd_client *c);
void tracerd_session_snapshot(struct tracerd_client *c);
void tracerd_status(struct tracerd_client *c);
void tracerd_list(struct tracerd_client *c, const Tracer__ListRequest *req);
/* Reply Done to c. */
void tracerd_reply_done(struct tracerd_client *c, uint32_t processes,
			const char *dir, const char *warning);
/* The filter (patterns) a process registering now gets. */
const char *tracerd_session_filter_text(struct tracerd *d);
/* A process appeared while a session runs: give it its directory. */
int tracerd_session_add_process(struct tracerd_process *p);
void tracerd_session_append_callsites(struct tracerd_process *p, size_t from);
/* Begin a clean shutdown (signal): stop the session, then leave. */
void tracerd_quit(struct tracerd *d);
/* Monotonic milliseconds. */
uint64_t tracerd_now_ms(void);

/*
 * Take the session's next snapshot, SESSION/snapshot-N, of every process
 * and of those ended since the last one; note, if not NULL, goes into its
 * file `trigger`. Returns how many processes it holds (dir filled, *failed
 * those that could not be written), or a negative errno with why: -EINVAL
 * (not a flight-recorder session), -ENODATA (nothing to snapshot), or
 * mkdir's.
 */
int tracerd_snapshot_take(struct tracerd *d, const char *note, char *dir,
			  size_t dir_size, unsigned *failed, char *why,
			  size_t why_size);

/* trigger.c */
void tracerd_triggers_init(struct tracerd *d);
void tracerd_triggers_free(struct tracerd *d);
/* tracectl trigger add / remove / list: answered with TriggerList. */
void tracerd_trigger_add(struct tracerd_client *c, const Tracer__TriggerAdd *r);
void tracerd_trigger_remove(struct tracerd_client *c,
			    const Tracer__TriggerRemove *r);
void tracerd_trigger_list(struct tracerd_client *c);
/* The scan timer: read every ring a trigger may match in (flight mode). */
void tracerd_triggers_scan(struct tracerd *d);
/* p's end begins: the records it left, looked at before they are read. */
void tracerd_triggers_scan_ending(struct tracerd_process *p);
/* tracerd recorded its own event `name` for p (its end). */
void tracerd_triggers_own(struct tracerd_process *p, const char *name);
/* The session ended or p is freed: forget what was read of its rings. */
void tracerd_triggers_forget(struct tracerd_process *p);

/*
 * priority.c. Init: tracerd may take nice `boost` (0: never) when a drain
 * is behind; tried once, and left at the start's nice. Returns 0 or a
 * negative errno (-EACCES, -EPERM: not allowed, never taken). Note: after
 * a drain, take it if a pass was behind. Tick: give it back once no pass
 * has been behind for a second (the scan timer).
 */
int tracerd_priority_init(struct tracerd *d, int boost);
void tracerd_priority_note(struct tracerd *d);
void tracerd_priority_tick(struct tracerd *d);

#endif /* TRACERD_H */
