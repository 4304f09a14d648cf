/*
 * test_view.c - `tracectl view` on synthetic session directories.
 *
 * The sessions are built in a temporary directory exactly as
 * doc/session-files.md describes them (process.meta with percent-encoded
 * fields, channel files of CTF packets: compact ones whose packet size is
 * the content, and padded ones), then viewed with the output and error
 * streams captured, and compared with the exact expected text: the merged
 * event lines (ties broken by pid, tid, file order), and for broken
 * sessions the events still readable, a one-line error naming the file and
 * what is wrong, and exit status 1. Usage errors are checked through
 * tracer__ctl_view() in a child process. Finally process.meta is read
 * directly with tracer__meta_load().
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb_layout.h"
#include "tap.h"
#include "trace_dir.h"
#include "view.h"

static char root[] = "/tmp/tracer-test-view-XXXXXX";

#include "trace_build.h"

/* Where the packet header's fields are (rb_layout.h). */
#define PACKET_SIZE_AT	offsetof(struct tracer_rb_packet, packet_size)
#define CONTENT_SIZE_AT	offsetof(struct tracer_rb_packet, content_size)
#define DISCARDED_AT	offsetof(struct tracer_rb_packet, events_discarded)

/* ----------------------------------------------------------------------
 * Running the view.
 */

static void run_view(struct run *r, const char *rel)
{
	char *dir = path_of("%s", rel);
	FILE *out = open_memstream(&r->out, &r->out_len);
	FILE *err = open_memstream(&r->err, &r->err_len);

	if (!out || !err)
		bail_out("open_memstream: %s", strerror(errno));
	r->status = tracer__view_dir(dir, out, err);
	fclose(out);
	fclose(err);
	free(dir);
}

/* Check status, output and errors exactly. */
static void expect(const struct run *r, int status, const char *out,
		   const char *err, const char *name)
{
	if (!ok(r->status == status && strcmp(r->out, out) == 0 &&
		strcmp(r->err, err) == 0, "%s", name))
		diag("  status %d (want %d)\n--- output:\n%s--- want:\n%s"
		     "--- errors:\n%s--- want:\n%s---", r->status, status,
		     r->out, out, r->err, err);
}

/* View rel; expect status 1, output out and one error: "tracectl: "
 * then the path of file (relative to root) then msg. */
static void expect_error(const char *rel, const char *out, const char *file,
			 const char *msg, const char *name)
{
	struct run r;
	char *err;

	if (asprintf(&err, "tracectl: %s/%s%s\n", root, file, msg) < 0)
		bail_out("out of memory");
	run_view(&r, rel);
	expect(&r, 1, out, err, name);
	run_free(&r);
	free(err);
}

/* ----------------------------------------------------------------------
 * A good session: two processes, several files, ties.
 */

static void build_foo(void)
{
	struct pkt p;
	FILE *f;
	char *cs = callsite(7, 0, "u", "foo:tick", "tick %lu");

	make_dir("good/foo-50");
	write_meta("good/foo-50", 50, "foo bar", cs);
	f = create("good/foo-50/default-50", "w");
	pkt_begin(&p, 0, 50, 1000);
	rec(&p, 7, 1000, "u", 1ULL);
	rec(&p, 7, 999999999, "u", 3ULL);
	pkt_write(&p, f, 0);
	pkt_begin(&p, 0, 50, 1000000000);
	rec(&p, 7, 1000000000, "u", 4ULL);
	rec(&p, 7, 4000000000123ULL, "u", 5ULL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("good/foo-50/default-50.1", "w");	/* tid reused */
	pkt_begin(&p, 0, 50, 1000);
	rec(&p, 7, 1000, "u", 2ULL);
	pkt_write(&p, f, 0);
	fclose(f);
	write_file("good/foo-50/notes.txt", "not a channel file\n");
	free(cs);
}

static void build_hanoi_meta(void)
{
	char *c1 = callsite(1, 0, "is", "hanoi:call", "n=%d, left=%-6s|");
	char *c2 = callsite(2, 0, "ss", "hanoi:move",
			    "Move disk from %s to %s");
	char *c4 = callsite(4, 0, "dDu", "hanoi:float",
			    "x=%.2f y=%.3Lf z=%#x");
	char *c5 = callsite(5, 0, "s", "hanoi:multi", "line1\nline2 %s");
	char *extra;

	/* id 3 written by hand: TYPES "-", encoded "Begin 100%%" */
	if (asprintf(&extra, "%s%s%sfuture-record 1 2 3\n"
		     "callsite 3 1 - 7 src%%2Fhanoi.c hanoi:timing "
		     "Begin%%20100%%25%%25 extra-field\n%s"
		     "thread 100 main\nthread 101 worker%%20one\n",
		     c5, c2, c1, c4) < 0)
		bail_out("out of memory");
	write_meta("good/hanoi-100", 100, "hanoi", extra);
	free(extra);
	free(c1);
	free(c2);
	free(c4);
	free(c5);
}

static void build_hanoi(void)
{
	struct pkt p;
	FILE *f;

	make_dir("good/hanoi-100");
	build_hanoi_meta();
	f = create("good/hanoi-100/default-100", "w");
	pkt_begin(&p, 0, 100, 1000);
	rec(&p, 1, 1000, "is", 4LL, "LEFT");
	rec(&p, 2, 3000, "ss", "LEFT", "RIGHT");
	pkt_write(&p, f, 0);
	pkt_begin(&p, 0, 100, 4000);		/* an empty packet */
	pkt_write(&p, f, 0);
	pkt_begin(&p, 0, 100, 5000);		/* a padded one */
	rec(&p, 4, 5000, "dDu", 3.14159, 2.5L, 255ULL);
	pkt_write(&p, f, 48);
	fclose(f);
	f = create("good/hanoi-100/vital-100", "w");
	pkt_begin(&p, 1, 100, 1000);
	rec(&p, 3, 1000, "");
	rec(&p, 3, 7000, "");
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("good/hanoi-100/default-101", "w");
	pkt_begin(&p, 0, 101, 2000);
	rec(&p, 5, 2000, "s", "x");
	rec(&p, 2, 5000, "ss", "A", "B");
	pkt_write(&p, f, 0);
	fclose(f);
	make_dir("good/junk");		/* no process.meta: ignored */
	write_file("good/README", "not a directory\n");
}

static const char good_foo[] =
	"0.000001000 foo bar 50 50 foo:tick: tick 1\n"
	"0.000001000 foo bar 50 50 foo:tick: tick 2\n";
static const char good_hanoi_1[] =
	"0.000001000 hanoi 100 100 hanoi:call: n=4, left=LEFT  |\n"
	"0.000001000 hanoi 100 100 hanoi:timing: Begin 100%\n"
	"0.000002000 hanoi 100 101 hanoi:multi: line1\nline2 x\n"
	"0.000003000 hanoi 100 100 hanoi:move: Move disk from LEFT to RIGHT\n"
	"0.000005000 hanoi 100 100 hanoi:float: x=3.14 y=2.500 z=0xff\n"
	"0.000005000 hanoi 100 101 hanoi:move: Move disk from A to B\n"
	"0.000007000 hanoi 100 100 hanoi:timing: Begin 100%\n";
static const char good_foo_2[] =
	"0.999999999 foo bar 50 50 foo:tick: tick 3\n"
	"1.000000000 foo bar 50 50 foo:tick: tick 4\n"
	"4000.000000123 foo bar 50 50 foo:tick: tick 5\n";

static void test_good(void)
{
	char want[4096];
	struct run r;

	build_foo();
	build_hanoi();
	snprintf(want, sizeof(want), "%s%s%s", good_foo, good_hanoi_1,
		 good_foo_2);
	run_view(&r, "good");
	expect(&r, 0, want, "", "a session: all files of all processes "
	       "merged, ties by pid, tid, file order");
	run_free(&r);
	run_view(&r, "good///");
	expect(&r, 0, want, "", "the same with trailing slashes");
	run_free(&r);
	run_view(&r, "good/hanoi-100");
	expect(&r, 0, good_hanoi_1, "", "a process directory alone");
	run_free(&r);
}

/* ----------------------------------------------------------------------
 * Broken sessions.
 */

/* A process directory rel with pid 7, name p and call site 1: "v=%d". */
static void simple_proc(const char *rel, const char *extra)
{
	char *cs = callsite(1, 0, "i", "p:ev", "v=%d"), *all;

	if (asprintf(&all, "%s%s", cs, extra) < 0)
		bail_out("out of memory");
	make_dir(rel);
	write_meta(rel, 7, "p", all);
	free(all);
	free(cs);
}

static void test_missing(void)
{
	struct run r;
	char *err;

	if (asprintf(&err, "tracectl: cannot open '%s/nonexistent': No such "
		     "file or directory\n", root) < 0)
		bail_out("out of memory");
	run_view(&r, "nonexistent");
	expect(&r, 1, "", err, "a missing directory");
	run_free(&r);
	free(err);
	make_dir("empty");
	make_dir("empty/sub");
	if (asprintf(&err, "tracectl: '%s/empty' is not a session directory"
		     ": no tracer/process.meta in it or in its "
		     "subdirectories\n",
		     root) < 0)
		bail_out("out of memory");
	run_view(&r, "empty");
	expect(&r, 1, "", err, "a directory without process directories");
	run_free(&r);
	free(err);
}

/*
 * Process directory dir/p-7 whose default channel holds three packets of
 * one record or two (times 100 and 200, 300, 500), the second damaged by
 * pkt_set(offset, v, size): it starts at offset 112, the third at 208.
 */
static void damaged_second(const char *dir, size_t offset, uint64_t v,
			   size_t size)
{
	char rel[64];
	struct pkt p;
	FILE *f;

	make_dir(dir);
	snprintf(rel, sizeof(rel), "%s/p-7", dir);
	simple_proc(rel, "");
	snprintf(rel, sizeof(rel), "%s/p-7/default-7", dir);
	f = create(rel, "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	rec(&p, 1, 200, "i", 2LL);
	pkt_write(&p, f, 0);			/* 112 bytes */
	pkt_begin(&p, 0, 7, 300);
	pkt_set(&p, offset, v, size);
	rec(&p, 1, 300, "i", 3LL);
	pkt_write(&p, f, 0);			/* 96 bytes */
	pkt_begin(&p, 0, 7, 500);
	rec(&p, 1, 500, "i", 5LL);
	pkt_write(&p, f, 0);			/* at 208 */
	fclose(f);
}

static void test_bad_magic(void)
{
	struct pkt p;
	FILE *f;

	damaged_second("magic", 0, 0x12345678, 4);
	f = create("magic/p-7/vital-7", "w");
	pkt_begin(&p, 1, 7, 400);
	rec(&p, 1, 400, "i", 4LL);
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("magic", "0.000000100 p 7 7 p:ev: v=1\n"
		     "0.000000200 p 7 7 p:ev: v=2\n"
		     "0.000000400 p 7 7 p:ev: v=4\n"
		     "0.000000500 p 7 7 p:ev: v=5\n",
		     "magic/p-7/default-7", ": packet at offset 112: bad magic "
		     "0x12345678 (reading resumes at offset 208)",
		     "bad magic: the records before it, the other files, the "
		     "error, and the packets after it");
}

/* A packet whose times were never converted from TSC ticks. */
static void test_ticks(void)
{
	damaged_second("ticks", offsetof(struct tracer_rb_packet, unit),
		       TRACER_RB_UNIT_TSC, 4);
	expect_error("ticks", "0.000000100 p 7 7 p:ev: v=1\n"
		     "0.000000200 p 7 7 p:ev: v=2\n"
		     "0.000000500 p 7 7 p:ev: v=5\n",
		     "ticks/p-7/default-7", ": packet at offset 112: times in "
		     "unit 1 (TSC ticks?), not nanoseconds (reading resumes "
		     "at offset 208)",
		     "a packet in TSC ticks in a file: named, skipped, the "
		     "rest read");
}

static void test_bad_record_size(void)
{
	struct pkt p;
	FILE *f;

	simple_proc("recsize", "");
	f = create("recsize/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);		/* 80..96 */
	rec(&p, 1, 200, "i", 2LL);		/* 96..112 */
	pkt_set(&p, 96, tracer__rb_compact_word(1, 64, 200, 0), 8); /* 64 */
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("recsize", "0.000000100 p 7 7 p:ev: v=1\n",
		     "recsize/default-7", ": packet at offset 0: record at "
		     "offset 96: bad header: size 64 (16 bytes left in the "
		     "packet content) (rest of the packet skipped)",
		     "a record size overrunning the content");
	f = create("recsize/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	pkt_set(&p, 80, tracer__rb_compact_word(1, 0, 100, 0), 8);
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("recsize", "", "recsize/default-7", ": packet at offset "
		     "0: record at offset 80: bad header: size 0 (16 bytes "
		     "left in the packet content) (rest of the packet "
		     "skipped)", "a record size below 8");
	f = create("recsize/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	p.extended = 1;
	rec(&p, 1, 100, "i", 1LL);		/* 80..112 */
	pkt_set(&p, 80 + 4, 36, 4);		/* not a multiple of 8 */
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("recsize", "", "recsize/default-7", ": packet at offset "
		     "0: record at offset 80: bad header: size 36 (32 bytes "
		     "left in the packet content) (rest of the packet "
		     "skipped)", "an extended header's size not a multiple "
		     "of 8");
}

static void test_truncated(void)
{
	struct pkt p;
	FILE *f;
	char *path;

	simple_proc("trunc", "");
	f = create("trunc/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	pkt_write(&p, f, 0);			/* 96 bytes */
	pkt_begin(&p, 0, 7, 200);
	rec(&p, 1, 200, "i", 2LL);
	rec(&p, 1, 300, "i", 3LL);
	pkt_write(&p, f, 0);			/* 112 bytes */
	fclose(f);
	path = path_of("trunc/default-7");
	if (truncate(path, 96 + 100) < 0)
		bail_out("truncate: %s", strerror(errno));
	expect_error("trunc", "0.000000100 p 7 7 p:ev: v=1\n",
		     "trunc/default-7", ": packet at offset 96: truncated "
		     "file: packet of 112 bytes, 100 bytes left (nothing "
		     "readable after it)",
		     "a file truncated inside a packet");
	if (truncate(path, 96 + 40) < 0)
		bail_out("truncate: %s", strerror(errno));
	expect_error("trunc", "0.000000100 p 7 7 p:ev: v=1\n",
		     "trunc/default-7", ": packet at offset 96: truncated "
		     "file: 40 bytes left for an 80-byte header",
		     "a file truncated inside a packet header");
	free(path);
}

/* One packet whose header field at offset is set to v. */
static void bad_header(const char *file, size_t offset, uint64_t v)
{
	struct pkt p;
	FILE *f = create(file, "w");

	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	pkt_write_raw(&p, f, offset, v);
	fclose(f);
}

static void test_bad_sizes(void)
{
	simple_proc("sizes", "");
	bad_header("sizes/default-7", PACKET_SIZE_AT, 104 * 8 + 32);
	expect_error("sizes", "", "sizes/default-7", ": packet at offset 0: "
		     "bad packet size 864 bits (nothing readable after it)",
		     "packet size not a multiple "
		     "of 64 bits");
	bad_header("sizes/default-7", PACKET_SIZE_AT, 72 * 8);
	expect_error("sizes", "", "sizes/default-7", ": packet at offset 0: "
		     "bad packet size 576 bits (nothing readable after it)",
		     "packet size below the "
		     "header");
	bad_header("sizes/default-7", CONTENT_SIZE_AT, 112 * 8);
	expect_error("sizes", "", "sizes/default-7", ": packet at offset 0: "
		     "content size 896 bits exceeds packet size 768 bits "
		     "(nothing readable after it)",
		     "content size above packet size");
	bad_header("sizes/default-7", CONTENT_SIZE_AT, 64 * 8);
	expect_error("sizes", "", "sizes/default-7", ": packet at offset 0: "
		     "bad content size 512 bits (nothing readable after it)",
		     "content size below the "
		     "header");
}

static void test_time_order(void)
{
	struct pkt p;
	FILE *f;

	simple_proc("time", "");
	f = create("time/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 500, "i", 1LL);
	pkt_write(&p, f, 0);
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 400, "i", 2LL);
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("time", "0.000000500 p 7 7 p:ev: v=1\n",
		     "time/default-7", ": packet at offset 96: record at "
		     "offset "
		     "80: timestamp 400 is before the previous record's 500 (rest of "
		     "the packet skipped)",
		     "a timestamp going back in time across packets");
}

static void test_unknown_event(void)
{
	struct pkt p;
	FILE *f;

	simple_proc("unknown", "");
	f = create("unknown/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 9, 100, "i", 1LL);
	rec(&p, 1, 200, "i", 2LL);
	rec(&p, 0, 300, "");
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("unknown", "0.000000100 p 7 7 <unknown event ID>: \n"
		     "0.000000200 p 7 7 p:ev: v=2\n"
		     "0.000000300 p 7 7 <unknown event ID>: \n",
		     "unknown/default-7", ": packet at offset 0: record at "
		     "offset 80: unknown event ID 9 (no callsite line in "
		     "process.meta)", "unknown event ids: shown, reported once");
}

static void test_bad_payload(void)
{
	struct pkt p;
	FILE *f;

	simple_proc("payload", "callsite 2 0 s 1 f p:str %25s\n");
	f = create("payload/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 2, 100, "u", 0x4141414141414141ULL);	/* no NUL */
	rec(&p, 2, 200, "s", "ok");
	pkt_write(&p, f, 0);
	fclose(f);
	expect_error("payload", "0.000000100 p 7 7 p:str: <bad payload>\n"
		     "0.000000200 p 7 7 p:str: ok\n", "payload/default-7",
		     ": packet at offset 0: record at offset 80: payload of 8 "
		     "bytes does not hold the values 's' of event ID 2 "
		     "(p:str)", "a payload that does not match the types");
}

/* A message larger than the view's first buffer is printed whole. */
static void test_long_message(void)
{
	static char want[100000];
	struct pkt p;
	struct run r;
	FILE *f;
	int n;

	simple_proc("long", "callsite 2 0 is 1 f p:long "
		    "%25-90000d|%25.3s|\n");
	f = create("long/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 2, 100, "is", 42LL, "abcdef");
	pkt_write(&p, f, 0);
	fclose(f);
	n = snprintf(want, sizeof(want), "0.000000100 p 7 7 p:long: %-90000d|"
		     "%.3s|\n", 42, "abcdef");
	run_view(&r, "long");
	ok(n > 90000 && r.status == 0 && r.out_len == (size_t)n &&
	   strcmp(r.out, want) == 0 && r.err_len == 0,
	   "a message of 90 KB is printed whole");
	run_free(&r);
}

/* A session with a good process "ok-1" and process.meta of "bad" made of
 * the usual lines then extra. */
static void meta_case(const char *extra, const char *raw, const char *msg,
		      const char *name)
{
	struct pkt p;
	FILE *f;

	simple_proc("meta/ok-1", "");
	f = create("meta/ok-1/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 5LL);
	pkt_write(&p, f, 0);
	fclose(f);
	make_dir("meta/bad/tracer");
	if (raw)
		write_file("meta/bad/tracer/process.meta", raw);
	else
		write_meta("meta/bad", 8, "bad", extra);
	write_file("meta/bad/default-8", "");
	expect_error("meta", "0.000000100 p 7 7 p:ev: v=5\n",
		     "meta/bad/tracer/process.meta", msg, name);
}

static void test_bad_meta(void)
{
	meta_case("callsite 1 0 i 1 f n x\ncallsite x 0 i 1 f n fmt\n", NULL,
		  ":9: malformed callsite line: bad ID",
		  "malformed meta: callsite ID, line number");
	meta_case("callsite 1 0 ix 1 f n fmt\n", NULL,
		  ":8: malformed callsite line: bad TYPES", "bad TYPES");
	meta_case("callsite 1 2 i 1 f n fmt\n", NULL,
		  ":8: malformed callsite line: bad VITAL", "bad VITAL");
	meta_case("callsite 1 0 i 1 f n\n", NULL,
		  ":8: malformed callsite line: missing fields",
		  "a callsite line without FORMAT");
	meta_case("callsite 1 0 i 1 f n a%2\n", NULL,
		  ":8: malformed callsite line: bad percent-encoding",
		  "an unfinished %XX");
	meta_case("callsite 1 0 i 1 f n a%zz\n", NULL,
		  ":8: malformed callsite line: bad percent-encoding",
		  "a %XX that is not hex");
	meta_case("callsite 2 0 i 1 f n a\ncallsite 2 0 i 1 f n b\n", NULL,
		  ":9: malformed callsite line: duplicate ID 2 (first on "
		  "line 8)", "a duplicate callsite id");
	meta_case("thread x y\n", NULL, ":8: malformed thread line: bad TID",
		  "a bad thread line");
	meta_case("pid  8\n", NULL, ":8: malformed pid line: bad PID",
		  "two spaces: an empty field");
	meta_case(NULL, "tracer-procezz 1\n", ":1: not a process.meta file "
		  "(expected 'tracer-process 3')", "a wrong first line");
	meta_case(NULL, "tracer-process 4\npid 8\nname x\n",
		  ":1: unsupported format version 4", "a newer version");
	meta_case(NULL, "tracer-process 1\npid 8\nname x\n",
		  ":1: unsupported format version 1", "an older version (16-byte "
		  "record headers)");
	meta_case(NULL, "tracer-process 2\nname x\n", ": missing 'pid' line",
		  "no pid line");
	meta_case(NULL, "", ": empty file (expected 'tracer-process 3')",
		  "an empty process.meta");
}

/* ----------------------------------------------------------------------
 * tracer__ctl_view(): arguments.
 */

/* View rel; expect status, exactly out, and no error. */
static void run_view_expect(const char *rel, int status, const char *out,
			    const char *name)
{
	struct run r;

	run_view(&r, rel);
	expect(&r, status, out, "", name);
	run_free(&r);
}

/* The trace of test_lost in dir, written in session format `format`. */
static void lost_trace(const char *dir, unsigned format)
{
	char *cs = callsite(1, 0, "i", "p:ev", "v=%d"), file[64];
	struct pkt p;
	FILE *f;

	make_dir(dir);
	write_meta_format(dir, format, 7, "p", cs);
	free(cs);
	snprintf(file, sizeof(file), "%s/default-7", dir);
	f = create(file, "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	pkt_write_format(&p, f, 0, format);	/* ends at 1000100 */
	pkt_begin(&p, 0, 7, 2000000);
	pkt_set(&p, DISCARDED_AT, 5, 8);	/* 5 lost since */
	rec(&p, 1, 2000000, "i", 2LL);
	pkt_write_format(&p, f, 0, format);
	pkt_begin(&p, 0, 7, 4000000);
	pkt_set(&p, DISCARDED_AT, 5, 8);	/* none more */
	rec(&p, 1, 4000000, "i", 3LL);
	pkt_write_format(&p, f, 0, format);
	pkt_begin(&p, 0, 7, 6000000);
	pkt_set(&p, DISCARDED_AT, 6, 8);	/* one more */
	rec(&p, 1, 6000000, "i", 4LL);
	pkt_write_format(&p, f, 0, format);
	fclose(f);
	snprintf(file, sizeof(file), "%s/vital-7", dir);
	f = create(file, "w");
	pkt_begin(&p, 1, 7, 3000000);
	pkt_set(&p, DISCARDED_AT, 2, 8);	/* lost before the first */
	rec(&p, 1, 3000000, "i", 9LL);
	pkt_write_format(&p, f, 0, format);
	fclose(f);
}

static void test_lost(void)
{
	static const char *const dirs[] = { "lost", "lost-v2" };
	static const char *const what[] = {
		"lost events: a line where the count grew, none where it "
		"did not",
		"session format 2 (the older packet layout): read the same",
	};
	size_t i;

	lost_trace("lost", TRACER__SESSION_FORMAT);
	lost_trace("lost-v2", 2);
	for (i = 0; i < 2; i++)
		run_view_expect(dirs[i], 0,
			"0.000000100 p 7 7 p:ev: v=1\n"
			"0.002000000 p 7 7 tracer:lost: 5 events lost in the "
			"default channel since 0.001000100\n"
			"0.002000000 p 7 7 p:ev: v=2\n"
			"0.003000000 p 7 7 tracer:lost: 2 events lost in the "
			"vital channel before this point\n"
			"0.003000000 p 7 7 p:ev: v=9\n"
			"0.004000000 p 7 7 p:ev: v=3\n"
			"0.006000000 p 7 7 tracer:lost: 1 event lost in the "
			"default channel since 0.005000000\n"
			"0.006000000 p 7 7 p:ev: v=4\n", what[i]);
}

/* text with each "%s" replaced by dir (a new string). */
static char *with_dir(const char *text, const char *dir)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	const char *p;

	if (!f)
		bail_out("open_memstream: %s", strerror(errno));
	while ((p = strstr(text, "%s"))) {
		fwrite(text, 1, (size_t)(p - text), f);
		fputs(dir, f);
		text = p + 2;
	}
	fputs(text, f);
	fclose(f);
	return buf;
}

/* `tracectl view` with the args of ap (NULL-terminated) on good/: status,
 * output and errors exactly; "%s" in err is the path of good/. */
static void view_run(int status, const char *out, const char *err,
		     const char *name, va_list ap)
{
	char view[] = "view", *argv[16], *dir = path_of("good"), *want;
	struct run r;
	int n = 0;

	argv[n++] = view;
	argv[n++] = dir;
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	argv[n] = NULL;
	want = with_dir(err, dir);
	run_ctl(&r, tracer__ctl_view, argv);
	expect(&r, status, out, want, name);
	run_free(&r);
	free(want);
	free(dir);
}

/* `tracectl view` with args (NULL-terminated) on good/; exact output. */
static void view_args(const char *out, const char *name, ...)
{
	va_list ap;

	va_start(ap, name);
	view_run(0, out, "", name, ap);
	va_end(ap);
}

/* The same, expecting status, output out and errors err (see view_run). */
static void view_errs(int status, const char *out, const char *err,
		      const char *name, ...)
{
	va_list ap;

	va_start(ap, name);
	view_run(status, out, err, name, ap);
	va_end(ap);
}

/* `tracectl view` with args: usage error err (after "tracectl: view: "),
 * status 2. */
static void view_usage(const char *err, const char *name, char *a1,
		       char *a2)
{
	char view[] = "view", *dir = path_of("good");
	char *argv[] = { view, dir, a1, a2, NULL };
	char want[1024];
	struct run r;

	snprintf(want, sizeof(want), "tracectl: view: %s (see 'tracectl "
		 "view --help')\n", err);
	run_ctl(&r, tracer__ctl_view, argv);
	expect(&r, 2, "", want, name);
	run_free(&r);
	free(dir);
}

static void test_options(void)
{
	view_args(good_hanoi_1, "--pid: one process", "--pid", "100", NULL);
	view_args("0.000002000 hanoi 100 101 hanoi:multi: line1\nline2 x\n"
		  "0.000005000 hanoi 100 101 hanoi:move: Move disk from A to "
		  "B\n", "--tid: one thread", "--tid=101", NULL);
	view_args("0.000003000 hanoi 100 100 hanoi:move: Move disk from LEFT"
		  " to RIGHT\n"
		  "0.000005000 hanoi 100 101 hanoi:move: Move disk from A to "
		  "B\n", "--events: one name", "--events", "hanoi:move", NULL);
	view_args(good_foo, "--events: an exclusion first keeps the rest",
		  "--events", "-hanoi:*", "--until", "0.5", NULL);
	view_args("0.000003000 hanoi 100 100 hanoi:move: Move disk from LEFT"
		  " to RIGHT\n"
		  "0.000005000 hanoi 100 100 hanoi:float: x=3.14 y=2.500 "
		  "z=0xff\n"
		  "0.000005000 hanoi 100 101 hanoi:move: Move disk from A to "
		  "B\n", "--since/--until: absolute, both ends included",
		  "--since", "0.000003", "--until=0.000005", NULL);
	view_args("0.000003000 hanoi 100 100 hanoi:move: Move disk from LEFT"
		  " to RIGHT\n", "--since +2us --until +2000ns: from the "
		  "first event", "--since", "+2us", "--until", "+2000ns",
		  NULL);
	view_args(good_foo_2 + strlen("0.999999999 foo bar 50 50 foo:tick: "
				      "tick 3\n1.000000000 foo bar 50 50 "
				      "foo:tick: tick 4\n"),
		  "--since: packets before it are skipped", "--since",
		  "1.5", NULL);
	view_usage("--pid: 'x' is not a process id (1 to 2147483647)",
		   "--pid x", (char *)"--pid", (char *)"x");
	view_usage("--tid: '0' is not a thread id (1 to 2147483647)",
		   "--tid 0", (char *)"--tid", (char *)"0");
	view_usage("--since: 'yesterday' is not a time (SECONDS[.FRACTION] "
		   "as view prints them, or +SECONDS from the first event; "
		   "units s, ms, us, ns)", "--since yesterday",
		   (char *)"--since", (char *)"yesterday");
	view_usage("--until: '5h' is not a time (SECONDS[.FRACTION] as view "
		   "prints them, or +SECONDS from the first event; units s, "
		   "ms, us, ns)", "--until 5h", (char *)"--until",
		   (char *)"5h");
	view_usage("option '--events' needs a value", "--events without a "
		   "value", (char *)"--events", NULL);
	view_usage("--until is before --since", "--until before --since",
		   (char *)"--since=2", (char *)"--until=1");
	view_usage("--until is before --since", "--until +TIME before "
		   "--since +TIME", (char *)"--since=+2s",
		   (char *)"--until=+1s");
}

/* The selection (issue 19): +TIME from the first event of the whole
 * trace whatever --pid or --tid select, misspelled --events, nothing
 * selected. Thread 101's first event is at 2us, the trace's at 1us. */
static void test_selection(void)
{
	static const char t101_2us[] =
		"0.000002000 hanoi 100 101 hanoi:multi: line1\nline2 x\n";
	static const char t101_5us[] =
		"0.000005000 hanoi 100 101 hanoi:move: Move disk from A to "
		"B\n";
	char both[256];

	snprintf(both, sizeof(both), "%s%s", t101_2us, t101_5us);
	view_args(both, "--tid --since +1us: from the trace's first event, "
		  "not the thread's", "--tid", "101", "--since", "+1us",
		  NULL);
	view_args(t101_2us, "--tid --until +3500ns: the same origin",
		  "--tid", "101", "--until", "+3500ns", NULL);
	view_args(t101_5us, "--pid --tid --since +4us --until +4us",
		  "--pid", "100", "--tid", "101", "--since", "+4us",
		  "--until", "+4us", NULL);
	view_errs(1, "", "tracectl: no events of thread 999 in '%s'\n",
		  "--tid of no thread: said, status 1", "--tid", "999",
		  NULL);
	view_errs(1, "", "tracectl: no events of process 50 from "
		  "0.000002000 up to 0.000003000 in '%s'\n",
		  "--pid --since --until around none of its events: said",
		  "--pid", "50", "--since", "+1us", "--until", "0.000003",
		  NULL);
	view_errs(1, "", "tracectl: --until 0.000000500 is before --since "
		  "0.000002000\n", "--until TIME before --since +TIME: said, "
		  "nothing read", "--since", "+1us", "--until", "0.0000005",
		  NULL);
	view_errs(0, t101_5us, "tracectl: warning: --events: 'foo:tcik' "
		  "matches no event of '%s' (did you mean 'foo:tick'?)\n",
		  "--events: a misspelled name warned about, the rest shown",
		  "--tid", "101", "--events", "hanoi:move,foo:tcik", NULL);
	view_errs(1, "", "tracectl: warning: --events: 'app:*' matches no "
		  "event of '%s'\n"
		  "tracectl: warning: --events: '-hanoi:mvoe' matches "
		  "no event of '%s' (did you mean '-hanoi:move'?)\n"
		  "tracectl: no events matching 'app:*,-hanoi:mvoe' in '%s'\n",
		  "--events that select nothing: warnings, then said",
		  "--events", "app:* -hanoi:mvoe", NULL);
}

static void test_usage(void)
{
	char view[] = "view", help[] = "--help", h[] = "-h", x[] = "-x";
	char dd[] = "--", a[] = "a", b[] = "b";
	char *no_dir[] = { view, NULL };
	char *two[] = { view, a, b, NULL };
	char *opt[] = { view, x, NULL };
	char *helps[] = { view, help, NULL };
	char *hs[] = { view, a, h, NULL };
	char *dash[] = { view, dd, x, NULL };
	char *dir = path_of("good"), *one[] = { view, dir, NULL };
	const char *usage = "usage: tracectl view DIR [--pid PID]";
	char want[4096];
	struct run r;

	run_ctl(&r, tracer__ctl_view, no_dir);
	expect(&r, 2, "", "tracectl: view: missing DIR (see 'tracectl view "
	       "--help')\n", "no DIR: one-line usage error, status 2");
	run_free(&r);
	run_ctl(&r, tracer__ctl_view, two);
	expect(&r, 2, "", "tracectl: view: unexpected argument 'b' (see "
	       "'tracectl view --help')\n", "an extra argument");
	run_free(&r);
	run_ctl(&r, tracer__ctl_view, opt);
	expect(&r, 2, "", "tracectl: view: unknown option '-x' (see "
	       "'tracectl view --help')\n", "an unknown option");
	run_free(&r);
	run_ctl(&r, tracer__ctl_view, helps);
	ok(r.status == 0 && strncmp(r.out, usage, strlen(usage)) == 0 &&
	   r.err_len == 0, "--help: usage on stdout, status 0");
	run_free(&r);
	run_ctl(&r, tracer__ctl_view, hs);
	ok(r.status == 0 && strncmp(r.out, usage, strlen(usage)) == 0,
	   "-h after DIR: usage, status 0");
	run_free(&r);
	run_ctl(&r, tracer__ctl_view, dash);
	expect(&r, 1, "", "tracectl: cannot open '-x': No such file or "
	       "directory\n", "after --, -x is a directory");
	run_free(&r);
	snprintf(want, sizeof(want), "%s%s%s", good_foo, good_hanoi_1,
		 good_foo_2);
	run_ctl(&r, tracer__ctl_view, one);
	expect(&r, 0, want, "", "tracectl view DIR through stdout");
	run_free(&r);
	free(dir);
}

/* ----------------------------------------------------------------------
 * process.meta read directly.
 */

static void test_meta_load(void)
{
	struct tracer_meta m;
	char err[TRACER_ERR_SIZE];
	char *path;
	int ret;

	make_dir("direct");
	write_file("direct/process.meta",	/* any path will do */
		   "tracer-process 3\npid 4242\nppid 4100\nname a%25b%20c\n"
		   "start_time 18446744073709551615\n"
		   "clock_offset -9223372036854775808\n"
		   "argv ./x % a%0Ab\n"
		   "callsite 9 1 - 12 f%2Fg.c p:e %\n"
		   "callsite 2 0 iudDps 3 f p:f %25s\n"
		   "thread 4243 w%2Fone\n");
	path = path_of("direct/process.meta");
	ret = tracer__meta_load(&m, path, err, sizeof(err));
	ok(ret == 0 && m.version == 3 && m.pid == 4242 && m.ppid == 4100 &&
	   strcmp(m.name, "a%b c") == 0 && m.start_time == UINT64_MAX &&
	   m.clock_offset == INT64_MIN, "meta: header fields decoded");
	ok(ret == 0 && m.argc == 3 && strcmp(m.argv[0], "./x") == 0 &&
	   strcmp(m.argv[1], "") == 0 && strcmp(m.argv[2], "a\nb") == 0,
	   "meta: argv, a lone %% is an empty string");
	ok(ret == 0 && m.ncallsites == 2 && m.callsites[0].id == 2 &&
	   m.callsites[1].id == 9 && strcmp(m.callsites[1].types, "") == 0 &&
	   m.callsites[1].vital == 1 && m.callsites[1].line == 12 &&
	   strcmp(m.callsites[1].file, "f/g.c") == 0 &&
	   strcmp(m.callsites[1].format, "") == 0 &&
	   strcmp(m.callsites[0].types, "iudDps") == 0,
	   "meta: callsites sorted by id, TYPES '-' is none");
	ok(ret == 0 && tracer__meta_callsite(&m, 9) == &m.callsites[1] &&
	   tracer__meta_callsite(&m, 2) == &m.callsites[0] &&
	   !tracer__meta_callsite(&m, 1) && !tracer__meta_callsite(&m, 3),
	   "meta: callsite lookup");
	ok(ret == 0 && m.nthreads == 1 && m.threads[0].tid == 4243 &&
	   strcmp(m.threads[0].name, "w/one") == 0, "meta: thread line");
	if (ret == 0)
		tracer__meta_free(&m);
	free(path);

	/* tracerd in the middle of appending a call site's line (a live
	 * session: view --follow): the part is left for the next read. */
	write_file("direct/process.meta",
		   "tracer-process 2\npid 4242\nname a\n"
		   "callsite 2 0 i 3 f p:f x%3D%25d\n"
		   "callsite 3 0 i");
	path = path_of("direct/process.meta");
	ret = tracer__meta_load(&m, path, err, sizeof(err));
	ok(ret == 0 && m.ncallsites == 1 && m.callsites[0].id == 2,
	   "meta: a last line without its newline is not read yet (%s)",
	   ret ? err : "read");
	if (ret == 0)
		tracer__meta_free(&m);
	free(path);
}

int main(void)
{
	plan(71);
	if (!mkdtemp(root))
		bail_out("mkdtemp: %s", strerror(errno));
	test_good();
	test_missing();
	test_bad_magic();
	test_ticks();
	test_bad_record_size();
	test_truncated();
	test_bad_sizes();
	test_time_order();
	test_unknown_event();
	test_bad_payload();
	test_long_message();
	test_bad_meta();
	test_lost();
	test_options();
	test_selection();
	test_usage();
	test_meta_load();
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}
