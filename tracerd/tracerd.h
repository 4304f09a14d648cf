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
 *
 * Everything runs on the libuv loop thread: no locking.
 */
#ifndef TRACERD_H
#define TRACERD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
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

#include "compiler.h"
#include "pool_layout.h"
#include "rb.h"
#include "proto/wire.h"

struct tracerd_config {
	const char *socket_path;
	const char *output_dir;
	uint32_t buffers;		/* initial pool size */
	uint64_t max_memory;		/* pool cap per process, bytes */
	uint64_t subbuf_size[TRACER_POOL_CHANNELS];
	uint64_t subbuf_count[TRACER_POOL_CHANNELS];
	uint32_t scan_ms;		/* timer-driven scan period */
};

/* What `tracectl start` asked for. */
struct tracerd_session_opts {
	uint32_t mode;			/* enum tracer_control_mode */
	char *events;			/* session filter (pattern.h) */
	uint64_t subbuf_size;		/* default channel; 0: tracerd's */
	uint64_t subbuf_count;
	uint32_t live_ms;		/* live interval */
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
	struct cds_list_head waiters;	/* struct tracerd_waiter */
	struct cds_list_head switch_waiters;	/* clients owed Done */
	bool switching;			/* a switch is draining */
	uint64_t switch_deadline;
	uv_timer_t switch_timer;
	uv_timer_t live_timer;
	uint64_t snapshots;		/* snapshots taken in this session */
	uint64_t pending_id;		/* id of the session starting */
};

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
	char *in;			/* frame being assembled */
	size_t in_len, in_cap;
	struct cds_list_head out;
	size_t out_frames;
	struct tracerd_process *proc;	/* after Register */
	bool closing;
	bool waits_stop;
	bool waits_switch;
	struct cds_list_head switch_node;	/* in d->switch_waiters */
};

/*
 * One thread's use of one channel of one buffer: a channel file, and what
 * its packets say (doc/session-files.md): packet_seq_num counts the
 * packets of the file, events_discarded the records lost since the file
 * was created. lost_seen and pending belong to the channel and outlive
 * the file.
 */
struct tracerd_stream {
	uint64_t instance;		/* stream_instance_id; 0: none */
	int fd;
	uint32_t tid;
	uint64_t seq;			/* packet_seq_num of the next packet */
	uint64_t discarded;		/* events_discarded written last */
	uint64_t last_end;		/* timestamp_end written last */
	uint64_t lost_seen;		/* writer's `lost` accounted for */
	uint64_t pending;		/* losses no packet has told yet */
};

struct tracerd_buffer {
	struct tracer_rb_reader rd[TRACER_POOL_CHANNELS];
	struct tracerd_stream st[TRACER_POOL_CHANNELS];
	struct tracer_pool_desc *desc;
	bool broken[TRACER_POOL_CHANNELS];
	uint64_t live_mark[TRACER_POOL_CHANNELS];	/* read_count at the
							   last live tick */
};

/* Where packets go: a process directory and its process.meta. */
struct tracerd_sink {
	const char *dir;
	FILE *meta;
};

struct tracerd_segment {
	char *base;
	uint64_t size;
	uint32_t first, count;
};

struct tracerd_callsite {
	uint32_t id;
	bool vital;
	char *types, *file, *name, *format;
	uint32_t line;
};

struct tracerd_process {
	struct tracerd *d;
	struct cds_list_head node;
	struct tracerd_client *client;	/* NULL once it hung up */
	pid_t pid, ppid;
	char *name;
	char **argv;
	size_t argc;
	uint64_t start_time_ns, clock_offset_ns;
	int control_fd;
	struct tracer_control *control;
	int wake_fd;
	uv_poll_t wake_poll;
	struct tracerd_segment seg[TRACER_POOL_MAX_SEGMENTS];
	uint32_t nseg;
	struct tracerd_buffer *buf;	/* all segments' buffers */
	uint32_t nbuf;
	uint64_t pool_bytes;
	uint64_t buffer_size;
	uint32_t channel_offset[TRACER_POOL_CHANNELS];
	struct tracerd_callsite *cs;
	size_t ncs, cs_cap;
	char *dir;			/* this session's process directory */
	FILE *meta;			/* its process.meta, appended to */
	FILE *ctf;			/* its CTF metadata, appended to */
	void *scratch;			/* packets to write, 64-byte aligned */
	uint64_t scratch_size;
	uint64_t batch_len;		/* bytes of packets in scratch */
	struct tracerd_stream *batch_stream;	/* whose they are */
	uint64_t bytes_written, packets_written;
	uint64_t dropped_packets;	/* outside any session */
	uint64_t subbuf_size[TRACER_POOL_CHANNELS];	/* its pool's */
	uint64_t subbuf_count[TRACER_POOL_CHANNELS];
	int signal;			/* update signal, 0: none */
	char *filter;			/* patterns it was last sent */
	uint64_t filter_sent, filter_acked;	/* generations */
	uint64_t base_records, base_lost;	/* at session start */
	bool in_session;		/* publish() gave it the session */
};

/* main.c */
void tracerd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* server.c */
int tracerd_listen(struct tracerd *d);
void tracerd_server_close(struct tracerd *d);
/*
 * Queue msg (and fds, whose ownership passes to the queue) for client c.
 * Returns 0, -ENOMEM, -EMSGSIZE, -ENOBUFS (client does not read: it is
 * disconnected).
 */
int tracerd_send(struct tracerd_client *c, const tracer_msg *msg,
		 const int *fds, int nfds);
int tracerd_send_error(struct tracerd_client *c, int code, const char *why);
void tracerd_client_close(struct tracerd_client *c);

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
 * (doc/session-files.md, events_discarded).
 */
void tracerd_process_baseline(struct tracerd_process *p);
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
void tracerd_note_thread(FILE *meta, uint32_t tid, const char *name);
/* The latest registration of pid (NULL: none). */
struct tracerd_process *tracerd_process_find(struct tracerd *d, pid_t pid);

/* control.c */
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
 * else that one). Returns it, or NULL (out of memory: c was told).
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

#endif /* TRACERD_H */
