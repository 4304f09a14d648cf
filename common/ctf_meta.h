/*
 * ctf_meta.h - the CTF 1.8 metadata (TSDL text) that makes a process
 * directory a trace CTF readers such as babeltrace2 open: its preamble
 * (types, trace, env, clock, the two stream classes) and one event class
 * per call site, with field names taken from the call site's printf format.
 * doc/session-files.md describes the file and how tracerd writes it.
 *
 * Pure text generation: nothing here opens files or reads the system. Text
 * goes to a stdio stream (a file, or a buffer through open_memstream() or
 * fmemopen()). Every string that ends up in the metadata comes from a
 * traced process (names, formats): it is escaped, and field names are made
 * valid TSDL identifiers, whatever the bytes.
 *
 * Internal header: not installed.
 */
#ifndef TRACER_CTF_META_H
#define TRACER_CTF_META_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "event_format.h"

#define TRACER_CTF_NAME_MAX	64	/* bytes of a field name, NUL included */
#define TRACER_CTF_UUID_LEN	36	/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */

/* Stream classes: the channels of a buffer. */
#define TRACER_CTF_STREAM_DEFAULT	0
#define TRACER_CTF_STREAM_VITAL		1

/* What the preamble says about the trace (tracer__ctf_write_preamble()). */
struct tracer_ctf_trace {
	const char *uuid;		/* this trace's: random per directory */
	const char *clock_uuid;		/* CLOCK_MONOTONIC's (the boot id), or
					   NULL */
	const char *hostname;
	const char *tracer_version;
	const char *procname;
	int64_t vpid, ppid;
	uint64_t start_time_ns;		/* CLOCK_REALTIME at registration */
	uint64_t clock_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t tsc_hz;		/* stamps from the TSC at this rate,
					   0: from clock_gettime() */
};

/* One call site: an event class (tracer__ctf_write_event()). */
struct tracer_ctf_event {
	uint32_t id;			/* the id records carry */
	uint32_t stream_id;		/* TRACER_CTF_STREAM_* */
	const char *name;		/* "provider:event" */
	const char *format;		/* its printf format */
	const char *types;		/* one letter per argument: iudDpse */
};

/*
 * Name the arguments of a call site after its printf format: names[i] is
 * the field name of argument i (types[i]), a TSDL identifier unique among
 * them. For each conversion: the nearest word of the literal text before it
 * (since the previous conversion), else the first word after it (up to the
 * next conversion), else argN (N = argument number, from 1). Numbers are
 * not words. `%%` is text; a `*` width or precision takes an argument named
 * NAME_width or NAME_precision after the value's NAME; positional
 * conversions (%2$s, *3$) name the argument they designate. A name that
 * starts with a digit or an underscore, or that TSDL reserves, gets a `_`
 * in front (CTF readers drop one when they display it); a repeated name
 * gets _2, _3, ... Arguments no conversion designates are argN.
 * format may be anything (NULL is ""). names needs strlen(types) entries.
 * Returns 0, or -EINVAL (types NULL or longer than TRACER_MAX_ARGS).
 */
int tracer__ctf_field_names(const char *format, const char *types,
			    char names[][TRACER_CTF_NAME_MAX]);

/*
 * Write s as a TSDL string literal, quotes included: `"` and `\` escaped,
 * control bytes, DEL and bytes that are not valid UTF-8 written as octal
 * escapes (\ooo), valid UTF-8 kept as it is. NULL is written as "".
 * Returns 0, or -EIO (the stream has an error).
 */
int tracer__ctf_put_string(FILE *f, const char *s);

/* Is s a UUID in its 36-character text form? */
bool tracer__ctf_uuid_valid(const char *s);

/*
 * Format 16 random bytes as a version 4 UUID (the version and variant bits
 * are set) into out (TRACER_CTF_UUID_LEN + 1 bytes).
 */
void tracer__ctf_format_uuid(const uint8_t bytes[16], char *out);

/*
 * Write the preamble: the comment "CTF 1.8" on the first line, type
 * aliases, trace (byte order of this machine), env, the clock "monotonic"
 * (offset: clock_offset_ns, so that times read as wall-clock times) and
 * the stream classes 0 (default channel) and 1 (vital channel) with the
 * packet header, packet context and event header of common/rb_layout.h.
 * Returns 0, -EINVAL (t->uuid, or t->clock_uuid when not NULL, is not a
 * UUID), or -EIO (the stream has an error).
 */
int tracer__ctf_write_preamble(FILE *f, const struct tracer_ctf_trace *t);

/*
 * Append the event class of call site e (after the preamble; event blocks
 * may follow each other in the same file at any time).
 * Returns 0, -EINVAL (a type letter is unknown, more than
 * TRACER_MAX_ARGS of them, or stream_id is not a TRACER_CTF_STREAM_*),
 * or -EIO (the stream has an error).
 */
int tracer__ctf_write_event(FILE *f, const struct tracer_ctf_event *e);

#endif /* TRACER_CTF_META_H */
