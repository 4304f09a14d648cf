/*
 * trace_dir.h - read a process directory of a session written by tracerd
 * (doc/session-files.md): its process.meta, the list of its channel files,
 * and the records of a channel file, packet by packet.
 *
 * Nothing read from disk is trusted. Every function that can fail takes an
 * error buffer and, on failure, writes there a one-line message that names
 * the file (and line, or packet and record offsets) and says what is wrong,
 * such as "/s/p/default-12: packet at offset 4096: bad magic 0x12345678".
 *
 * All functions return 0 (or 1, as stated) or a negative errno value.
 */
#ifndef TRACER_TRACE_DIR_H
#define TRACER_TRACE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_format.h"

/* A size for error buffers that always holds a message naming a path. */
#define TRACER_ERR_SIZE		(4096 + 256)

/* Largest packet accepted from a file: the largest sub-buffer. */
#define TRACER_MAX_PACKET	(1ULL << 30)

/* A `callsite` line of process.meta is a struct tracer__site
 * (event_format.h). */

/* A `thread` line of process.meta. */
struct tracer_thread {
	uint32_t tid;
	char *name;
	uint64_t since;			/* a rename at this time; 0: the
					   name when it took its buffer */
};

/* process.meta, decoded. */
struct tracer_meta {
	uint32_t version;
	uint32_t pid;
	uint32_t ppid;
	char *name;
	uint64_t start_time;		/* CLOCK_REALTIME ns */
	int64_t clock_offset;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	char **argv;
	size_t argc;
	struct tracer__site *callsites;	/* sorted by id */
	size_t ncallsites;
	struct tracer_thread *threads;
	size_t nthreads;
};

/*
 * Read and decode the process.meta file at path into *m. Lines whose first
 * word is unknown are ignored, and so are extra fields at the end of a known
 * line. The first line must be "tracer-process 2" or "tracer-process 3"
 * (TRACER__SESSION_FORMAT_OLDEST .. TRACER__SESSION_FORMAT); pid and name
 * lines are required.
 * Returns 0, -ENOENT and other errors of open/read (err: "cannot open
 * 'PATH': ..."), -EBADMSG (err: "PATH:LINE: malformed WORD line: why", or
 * "PATH: missing 'pid' line"), -EPROTO (unsupported format version),
 * -ENOMEM. On error *m is left empty (nothing to free).
 */
int tracer__meta_load(struct tracer_meta *m, const char *path, char *err,
		      size_t err_size);

/* Free what tracer__meta_load() allocated; *m is left empty. */
void tracer__meta_free(struct tracer_meta *m);

/* The call site with this id, or NULL. */
const struct tracer__site *tracer__meta_callsite(
	const struct tracer_meta *m, uint32_t id);

/* A channel file of a process directory. */
struct tracer_chan_name {
	char *path;			/* DIR/CHANNEL-TID[.N] */
	int vital;			/* 0: default-*, 1: vital-* */
	uint32_t tid;
	uint32_t gen;			/* N, 0 for none */
};

/*
 * List the channel files of the process directory dir: the entries named
 * default-TID, vital-TID, default-TID.N or vital-TID.N (TID and N
 * decimal); others are ignored. The list is sorted by TID, then N, then
 * default before vital. *names is allocated (NULL when *count is 0).
 * Returns 0, -ENOENT and other errors of opendir/readdir (err set),
 * -ENOMEM.
 */
int tracer__dir_channels(const char *dir, struct tracer_chan_name **names,
			 size_t *count, char *err, size_t err_size);

/* Free a list from tracer__dir_channels(). */
void tracer__chan_names_free(struct tracer_chan_name *names, size_t count);

/* A channel file being read: at most one packet of it is in memory. */
struct tracer_chan {
	char *path;
	int fd;
	uint64_t file_size;		/* at open time */
	uint64_t next_packet;		/* file offset of the next packet */
	uint64_t packet_offset;		/* file offset of the current one */
	unsigned char *buf;		/* current packet: header + records */
	size_t buf_size;
	uint64_t content;		/* bytes of buf that hold content */
	uint64_t record;		/* offset of the next record in buf */
	uint64_t last_timestamp;	/* of the previous record */
	uint64_t clock;			/* the time before the next record
					   of the packet (rb_record.h) */
	uint32_t tid;			/* of the current packet */
	uint32_t stream_id;
	uint32_t format;		/* session format of the file */
	uint64_t skip_before;		/* skip packets ending before it */
	uint64_t discarded;		/* events_discarded of the packet */
	uint64_t prev_end;		/* timestamp_end of the packet before */
	uint64_t pending_lost;		/* to return before the records */
	uint64_t lost_since;
	uint64_t lost_at;
	bool any_packet;		/* a packet was read before */
};

/* A record returned by tracer__chan_next(). */
struct tracer_chan_record {
	uint32_t id;
	uint32_t tid;			/* from the packet header */
	uint64_t timestamp;
	uint64_t packet_offset;		/* file offset of its packet */
	uint64_t offset;		/* its offset in the packet */
	const void *payload;		/* valid until the next call */
	size_t payload_size;		/* includes the padding */
	uint32_t header_size;		/* payload - record */
	uint64_t lost;			/* > 0: not a record but the number
					   of records lost before this packet
					   (id 0, no payload) */
	uint64_t lost_since;		/* end of the packet before, or 0 */
};

/*
 * Open the channel file at path for tracer__chan_next(), written in the
 * session format `format` (its process.meta's version: 2 or 3, which
 * differ in the packet header's layout, rb_layout.h).
 * Returns 0, or the negative errno of open/fstat (err: "cannot open
 * 'PATH': ..."), -EINVAL (not a regular file, or a format other than 2
 * and 3), -ENOMEM.
 */
int tracer__chan_open(struct tracer_chan *c, const char *path,
		      uint32_t format, char *err, size_t err_size);

/*
 * The next record of the file, in file order. Each packet is checked as it
 * is read (magic; packet size a multiple of 64 bits, at least the 80-byte
 * header, at most TRACER_MAX_PACKET and within the file; content size a
 * multiple of 64 bits between the header and the packet size) and each
 * record as it is reached (size >= 16, a multiple of 8, within the content;
 * timestamp not before the previous record of the file), so the records
 * before a corruption are all returned. When a packet's events_discarded is
 * larger than the previous packet's (or than 0 for the first), a "lost"
 * record (rec->lost > 0) comes before its records. Packets that end before
 * c->skip_before are skipped unread (their losses too).
 * Returns 1 (*rec filled), 0 (end of file), -EBADMSG (corrupt or truncated
 * file; err: "PATH: packet at offset N: ... (reading resumes at offset M)":
 * the next call goes on from the next intact packet, if any), -EIO or
 * another errno of pread (err set), -ENOMEM: the file must then be closed.
 */
int tracer__chan_next(struct tracer_chan *c, struct tracer_chan_record *rec,
		      char *err, size_t err_size);

/* Close a channel file (also after a failed open). */
void tracer__chan_close(struct tracer_chan *c);

/*
 * Park an open channel file: its descriptor is closed and its packet buffer
 * freed, its place kept (the current packet, the next record), so that a
 * reader of more files than it may hold open (a trace of many threads)
 * takes each up again when it needs it. The payload of the record last
 * returned is gone until tracer__chan_unpark() gives rec (that record, or
 * NULL) a new one. tracer__chan_parked(): is it parked?
 * tracer__chan_unpark() returns 0, or the negative errno of open or pread,
 * -EBADMSG (the file is shorter than it was), -ENOMEM (err says what).
 */
void tracer__chan_park(struct tracer_chan *c);
bool tracer__chan_parked(const struct tracer_chan *c);
int tracer__chan_unpark(struct tracer_chan *c, struct tracer_chan_record *rec,
			char *err, size_t err_size);

#endif /* TRACER_TRACE_DIR_H */
