/*
 * test_ctf_meta.c - CTF metadata text (common/ctf_meta.h): field names
 * from printf formats (words before and after, duplicates, reserved words,
 * `*`, `%%`, positional arguments, formats without words, hostile bytes),
 * TSDL string escaping, UUIDs, and the preamble and event blocks written
 * for a few call sites.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctf_meta.h"
#include "tap.h"

/* ------------------------------------------------------------------ */
/* Field names                                                         */

/* The names of format's arguments (types), space separated, into out. */
static int names_of(const char *format, const char *types, char *out,
		    size_t size)
{
	char names[TRACER_MAX_ARGS][TRACER_CTF_NAME_MAX];
	size_t i, at = 0;
	int ret = tracer__ctf_field_names(format, types, names);

	out[0] = '\0';
	for (i = 0; !ret && types[i]; i++)
		at += (size_t)snprintf(out + at, size - at, "%s%s",
				       i ? " " : "", names[i]);
	return ret;
}

static void names(const char *format, const char *types, const char *want,
		  const char *what)
{
	char got[1024];
	int ret = names_of(format, types, got, sizeof(got));

	if (!ok(ret == 0 && !strcmp(got, want), "names: %s", what))
		diag("  format '%s': got %d '%s', want '%s'", format, ret, got,
		     want);
}

static void test_words(void)
{
	names("n=%d, from=%-6s", "is", "n from", "word before each");
	names("thread %d seq %lu check %lu", "iuu", "thread seq check",
	      "three words before");
	names("Move disk from %s to %s", "ss", "from to",
	      "nearest word before");
	names("%llu events dropped before this thread had a buffer", "u",
	      "events", "first word after when none before");
	names("%d items, %d bytes", "ii", "items bytes",
	      "a word taken after is not taken again before");
	names("%d %d", "ii", "arg1 arg2", "no words: argN");
	names("fds %d %d result %d", "iii", "fds fds_2 result",
	      "a value without a word after a named one: its word again");
	names("signal %d (%s) handler %p", "isp", "signal arg2 handler",
	      "the next value's word is not taken");
	names("pid %d %s", "is", "pid arg2",
	      "a word serves again only a value of its type");
	names("x %d \xc3\xa9=%d", "ii", "x arg2",
	      "nor across text that is not a name");
	names("fd %d result %d%s", "iis", "fd result arg3",
	      "a suffix glued to a named value (errno): not its word");
	names("", "ius", "arg1 arg2 arg3", "empty format");
	names(NULL, "d", "arg1", "NULL format");
	names("x=%d", "ids", "x arg2 arg3", "more arguments than conversions");
	names("a=%d b=%d c=%s", "i", "a", "more conversions than arguments");
	names("addr 0x%lx size 4096: %zu", "uu", "addr size",
	      "numbers are not words");
	names("took %d ms (limit 100)", "i", "took", "number after skipped");
	names("error %m in %s", "s", "in", "%m takes no argument");
	names("%y bad x=%d", "i", "x", "unknown conversion is text");
	names("trailing %", "", "", "unfinished conversion");
	names("path=%s", "", "", "no arguments at all");
}

static void test_special(void)
{
	names("x %d x %d x %d", "iii", "x x_2 x_3", "duplicates numbered");
	names("x_2 %d x %d x %d", "iii", "x_2 x x_3",
	      "a numbered name that exists is skipped");
	names("int %d string %s event %d", "isi", "_int _string _event",
	      "TSDL keywords get a '_'");
	names("uint64_t %lu double_t %f", "ud", "_uint64_t _double_t",
	      "type alias names get a '_'");
	names("2nd %d", "i", "_2nd", "leading digit gets a '_'");
	names("_priv=%d", "i", "__priv", "leading '_' survives display");
	names("width %*d name %.*s", "iiis",
	      "width_width width name_precision name",
	      "'*' width and precision name their argument");
	names("%*.*f", "iid", "arg3_width arg3_precision arg3",
	      "'*' without words");
	names("rate %d%%, name %s", "is", "rate name", "%% is text");
	names("100%% done %d", "i", "done", "%% before a word");
	names("to=%2$s from=%1$s", "ss", "from to", "positional arguments");
	names("%1$*2$d", "ii", "arg1 arg1_width", "positional width");
	names("v=%3$d", "iii", "arg1 arg2 v", "positional: others are argN");
	names("v=%9$d w=%d", "ii", "w arg2", "position out of range");
}

static void test_hostile(void)
{
	char long_fmt[600];

	names("\"}; event { %d", "i", "_event", "TSDL in the format");
	names("\xff\xfe=%d", "i", "arg1", "bytes without letters");
	names("na\xc3\xafve=%d", "i", "na_ve", "UTF-8 inside a word");
	names("\xc3\xa9t\xc3\xa9=%d", "i", "t", "UTF-8 at the ends dropped");
	names("a-b=%d c.d=%d", "ii", "b d", "punctuation splits words");
	memset(long_fmt, 'a', 500);
	strcpy(long_fmt + 500, "=%d");
	names(long_fmt, "i", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	      "long words cut at 40 bytes");
	{
		char n[TRACER_CTF_NAME_MAX * 9];

		ok(names_of("x", "iiiiiiiii", n, sizeof(n)) == -EINVAL,
		   "more than 8 arguments: -EINVAL");
		ok(tracer__ctf_field_names("x", NULL, NULL) == -EINVAL,
		   "NULL types: -EINVAL");
	}
}

/* Is s a TSDL identifier that is not reserved? */
static bool identifier(const char *s)
{
	static const char *const bad[] = { "int", "string", "event",
					   "struct", "uint64_t", "align" };
	size_t i;

	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
	      *s == '_'))
		return false;
	for (i = 0; s[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_", s[i]))
			return false;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!strcmp(s, bad[i]))
			return false;
	return strlen(s) < TRACER_CTF_NAME_MAX;
}

/* One random format of pieces that matter to the parser. */
static void random_format(char *f, size_t size, unsigned *seed)
{
	static const char *const piece[] = {
		"%", "%%", "d", "s", "*", "$", "1", "2", "9", ".", "l", "x",
		" ", "=", "int", "x", "_", "\xc3\xa9", "\xff", "0x", "m",
		"event", "-", "#", "q",
	};
	size_t at = 0, n = (size_t)(rand_r(seed) % 24);

	while (n-- && at + 8 < size)
		at += (size_t)snprintf(f + at, size - at, "%s",
				       piece[rand_r(seed) % (sizeof(piece) /
							    sizeof(piece[0]))]);
	f[at] = '\0';
}

static void test_random(void)
{
	char f[256], n[TRACER_MAX_ARGS][TRACER_CTF_NAME_MAX];
	unsigned seed = 42, bad = 0;
	int round;
	size_t i, j;

	for (round = 0; round < 20000; round++) {
		random_format(f, sizeof(f), &seed);
		if (tracer__ctf_field_names(f, "iudDpsiu", n)) {
			bad++;
			continue;
		}
		for (i = 0; i < 8; i++) {
			bad += !identifier(n[i]);
			for (j = 0; j < i; j++)
				bad += !strcmp(n[i], n[j]);
		}
	}
	is_u64(bad, 0, "20000 random formats: valid, unreserved, unique "
	       "identifiers");
}

/* ------------------------------------------------------------------ */
/* Strings and UUIDs                                                   */

/* What tracer__ctf_put_string() writes for s (static buffer). */
static const char *escaped(const char *s)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		bail_out("fmemopen: %s", strerror(errno));
	if (tracer__ctf_put_string(f, s))
		strcpy(buf, "<error>");
	fclose(f);
	return buf;
}

static void escapes(const char *s, const char *want, const char *what)
{
	const char *got = escaped(s);

	if (!ok(!strcmp(got, want), "escape: %s", what))
		diag("  got '%s', want '%s'", got, want);
}

static void test_escape(void)
{
	FILE *full;

	escapes("hanoi:move", "\"hanoi:move\"", "plain text unchanged");
	escapes("a\"b\\c", "\"a\\\"b\\\\c\"", "quote and backslash");
	escapes("\n\t\x01\x7f", "\"\\012\\011\\001\\177\"",
		"control bytes and DEL in octal");
	escapes("1\n2", "\"1\\0122\"", "octal escape before a digit");
	escapes("caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"",
		"valid UTF-8 kept");
	escapes("\xff\xc3", "\"\\377\\303\"", "invalid bytes in octal");
	escapes("\xc0\xaf", "\"\\300\\257\"", "overlong form in octal");
	escapes("\xed\xa0\x80", "\"\\355\\240\\200\"", "surrogate in octal");
	escapes("\"}; event { name = \"x",
		"\"\\\"}; event { name = \\\"x\"", "TSDL inside a name");
	escapes("", "\"\"", "empty string");
	escapes(NULL, "\"\"", "NULL is empty");
	full = fopen("/dev/full", "w");
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		ok(tracer__ctf_put_string(full, "x") == -EIO,
		   "write error: -EIO");
		fclose(full);
	} else {
		ok(1, "# SKIP no /dev/full");
	}
}

static void test_uuid(void)
{
	uint8_t bytes[16];
	char u[TRACER_CTF_UUID_LEN + 1];

	memset(bytes, 0xff, sizeof(bytes));
	tracer__ctf_format_uuid(bytes, u);
	ok(!strcmp(u, "ffffffff-ffff-4fff-bfff-ffffffffffff"),
	   "UUID: version 4, variant 1 (%s)", u);
	ok(tracer__ctf_uuid_valid(u), "formatted UUID is valid");
	ok(tracer__ctf_uuid_valid("21227d2e-c835-4416-a958-80d011740bf3"),
	   "boot id is valid");
	ok(!tracer__ctf_uuid_valid("21227d2e-c835-4416-a958-80d011740bf"),
	   "short UUID is not");
	ok(!tracer__ctf_uuid_valid("21227d2e-c835-4416-a958-80d011740bf3\n"),
	   "UUID with newline is not");
	ok(!tracer__ctf_uuid_valid("21227d2e+c835-4416-a958-80d011740bf3"),
	   "UUID without its dash is not");
	ok(!tracer__ctf_uuid_valid("\"1227d2e-c835-4416-a958-80d011740bf3"),
	   "UUID with a quote is not");
	ok(!tracer__ctf_uuid_valid(NULL), "NULL is not a UUID");
}

/* ------------------------------------------------------------------ */
/* Metadata                                                            */

static const char *const uuid = "0f5b9c0a-1d2e-4f3a-8b4c-5d6e7f809102";
static const char *const boot = "21227d2e-c835-4416-a958-80d011740bf3";

/* Run put(f, arg) into a memory stream; returns the text (free it). */
static char *text_of(int (*put)(FILE *, const void *), const void *arg,
		     int *ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		bail_out("open_memstream: %s", strerror(errno));
	*ret = put(f, arg);
	fclose(f);
	return buf;
}

static int write_preamble(FILE *f, const void *t)
{
	return tracer__ctf_write_preamble(f, t);
}

static int write_event(FILE *f, const void *e)
{
	return tracer__ctf_write_event(f, e);
}

static void has(const char *text, const char *want, const char *what)
{
	if (!ok(text && strstr(text, want) != NULL, "%s", what))
		diag("  missing:\n%s\n  in:\n%s", want, text ? text : "NULL");
}

static void test_preamble(void)
{
	struct tracer_ctf_trace t = {
		.uuid = uuid, .clock_uuid = boot, .hostname = "host\"1",
		.tracer_version = "0.1.0", .procname = "ha\nnoi",
		.vpid = 4242, .ppid = 4100,
		.start_time_ns = 1763738412123456789ULL,
		.clock_offset_ns = 1763730000987654321ULL,
	};
	int ret;
	char *s = text_of(write_preamble, &t, &ret);

	ok(ret == 0 && !strncmp(s, "/* CTF 1.8 */\n", 14),
	   "preamble starts with the CTF 1.8 comment");
	has(s, "\tmajor = 1;\n\tminor = 8;\n\tuuid = \"0f5b9c0a-1d2e-4f3a-8b4c-"
	    "5d6e7f809102\";\n\tbyte_order = "
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	    "be"
#else
	    "le"
#endif
	    ";\n", "trace: version, uuid, this machine's byte order");
	has(s, "\tpacket.header := struct {\n"
	    "\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n"
	    "\t\tuint64_t stream_instance_id;\n\t};\n", "packet header: "
	    "the fields CTF gives a meaning, nothing else");
	has(s, "\thostname = \"host\\\"1\";\n\ttracer_name = \"tracer\";\n"
	    "\ttracer_version = \"0.1.0\";\n\tprocname = \"ha\\012noi\";\n"
	    "\tvpid = 4242;\n\tppid = 4100;\n"
	    "\tstart_time = 1763738412123456789;\n"
	    "\tclock_offset = 1763730000987654321;\n", "env, escaped");
	has(s, "\tname = \"monotonic\";\n\tuuid = \"21227d2e-c835-4416-a958-"
	    "80d011740bf3\";\n", "clock named monotonic, boot id as uuid");
	has(s, "\tfreq = 1000000000;\n\tprecision = 1;\n"
	    "\toffset_s = 1763730000;\n\toffset = 987654321;\n"
	    "\tabsolute = false;\n", "clock offset: the clock_offset");
	has(s, "\tid = 0;", "stream class 0");
	has(s, "\tid = 1;", "stream class 1");
	has(s, "\tpacket.context := struct {\n\t\tuint32_t tid;\n"
	    "\t\tinteger { size = 64; align = 128; signed = false; "
	    "map = clock.monotonic.value; } timestamp_begin;\n"
	    "\t\tuint64_clock_monotonic_t timestamp_end;\n"
	    "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	    "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
	    "\t};\n", "packet context as on disk, the bookkeeping after tid "
	    "skipped by timestamp_begin's alignment");
	has(s, "\t\tenum : integer { size = 12; align = 64; signed = false; "
	    "} {\n\t\t\tcompact = 0 ... 4094,\n\t\t\textended = 4095\n"
	    "\t\t} id;\n", "event header: a 12-bit id, 64-bit aligned, "
	    "4095 for the extended header");
	has(s, "\t\t\tstruct {\n\t\t\t\tinteger { size = 32; align = 32; "
	    "signed = false; map = clock.monotonic.value; } timestamp;\n"
	    "\t\t\t} compact;\n", "compact header: 32 bits of time, "
	    "32-bit aligned (the size in the gap)");
	has(s, "\t\t\tstruct {\n\t\t\t\tinteger { size = 32; align = 64; "
	    "signed = false; } id;\n\t\t\t\tinteger { size = 64; align = "
	    "64; signed = false; map = clock.monotonic.value; } timestamp;\n"
	    "\t\t\t} extended;\n", "extended header: the id in word 1, "
	    "the time in word 2");
	has(s, "enum tracer_errno : int64_t {\n\t\"none\" = 0,\n\t\"EPERM\" = 1,\n"
	    "\t\"ENOENT\" = 2,\n", "the errno enumeration: none, then the C "
	    "library's names");
	free(s);

	t.clock_uuid = NULL;
	t.clock_offset_ns = (uint64_t)-5;
	t.ppid = -1;
	s = text_of(write_preamble, &t, &ret);
	ok(ret == 0 && !strstr(s, "\tuuid = \"2122") &&
	   strstr(s, "\toffset_s = 0;\n\toffset = 0;\n") &&
	   !strstr(s, "ppid"), "no boot id, offset before the epoch, bad ppid:"
	   " left out");
	free(s);
	t.uuid = "not-a-uuid";
	s = text_of(write_preamble, &t, &ret);
	ok(ret == -EINVAL && s && !*s, "bad uuid: -EINVAL, nothing written");
	free(s);
}

static void test_events(void)
{
	struct tracer_ctf_event move = { 7, TRACER_CTF_STREAM_DEFAULT,
		"hanoi:move", "Move disk %d from %s to %s", "iss" };
	struct tracer_ctf_event vital = { 3, TRACER_CTF_STREAM_VITAL,
		"tracer:thread_start", "tid %d name %s", "is" };
	struct tracer_ctf_event none = { 9, TRACER_CTF_STREAM_DEFAULT,
		"app:tick", "tick", "" };
	struct tracer_ctf_event all = { 10, TRACER_CTF_STREAM_DEFAULT,
		"app:\"all\"\n", "i=%d u=%u d=%f D=%Lf p=%p", "iudDp" };
	struct tracer_ctf_event err = { 11, TRACER_CTF_STREAM_DEFAULT,
		"libc:open", "path %s fd %d", "sie" };
	int ret;
	char *s;

	s = text_of(write_event, &move, &ret);
	ok(ret == 0, "event written");
	has(s, "event {\n\tname = \"hanoi:move\";\n\tid = 7;\n"
	    "\tstream_id = 0;\n\tfields := struct {\n"
	    "\t\tint64_t disk;\n"
	    "\t\tstring { encoding = UTF8; } from;\n"
	    "\t\tstring { encoding = UTF8; } to;\n"
	    "\t\tinteger { size = 8; align = 64; signed = false; "
	    "map = clock.monotonic.value; } _padding[0];\n\t};\n};\n",
	    "event block: names, types, padding after strings (no value)");
	free(s);
	s = text_of(write_event, &vital, &ret);
	has(s, "\tname = \"tracer:thread_start\";\n\tid = 3;\n"
	    "\tstream_id = 1;\n", "vital call site: stream 1");
	free(s);
	s = text_of(write_event, &none, &ret);
	ok(ret == 0 && s && !strstr(s, "fields") &&
	   strstr(s, "\tstream_id = 0;\n};\n"), "no arguments: no fields");
	free(s);
	s = text_of(write_event, &all, &ret);
	has(s, "\tname = \"app:\\\"all\\\"\\012\";\n", "hostile name escaped");
	has(s, "\t\tint64_t i;\n\t\tuint64_t u;\n\t\tdouble_t d;\n",
	    "i, u, d types");
	has(s, "\t\tuint64_hex_t p;\n\t};\n", "p: hexadecimal, no padding "
	    "without strings");
#if defined(__x86_64__) || defined(__i386__)
	has(s, "\t\tstruct {\n\t\t\tuint64_t mantissa;\n", "D: x87 layout");
#else
	has(s, "\t\tuint8_t D[16];\n", "D: 16 bytes");
#endif
	free(s);
	s = text_of(write_event, &err, &ret);
	has(s, "\t\tstring { encoding = UTF8; } path;\n\t\tint64_t fd;\n"
	    "\t\tenum tracer_errno errno;\n",
	    "an errno value (e): the field errno, of the errno enumeration");
	free(s);
	all.types = "iix";
	s = text_of(write_event, &all, &ret);
	ok(ret == -EINVAL && s && !*s, "unknown type letter: -EINVAL, "
	   "nothing written");
	free(s);
	all.types = "iudDpsiui";
	s = text_of(write_event, &all, &ret);
	ok(ret == -EINVAL, "9 arguments: -EINVAL");
	free(s);
	all.types = "i";
	all.stream_id = 2;
	s = text_of(write_event, &all, &ret);
	ok(ret == -EINVAL, "stream 2: -EINVAL");
	free(s);
}

int main(void)
{
	test_words();
	test_special();
	test_hostile();
	test_random();
	test_escape();
	test_uuid();
	test_preamble();
	test_events();
	plan(tap_count);
	return done();
}
