/*
 * test_export.c - `tracectl export` and `tracectl timeline` on synthetic
 * session directories (built as in test_view.c, per
 * doc/session-files.md).
 *
 * The Chrome trace of a session with nested, cut, unclosed and unmatched
 * pairs on two threads is compared with the exact expected JSON, then
 * checked by tests/integration/check_chrome.py (strict UTF-8 JSON, B/E
 * nesting per thread, one thread_name per thread); hostile strings
 * (quotes, backslashes, control bytes, NUL, invalid UTF-8, "</script>")
 * are decoded back by Python and compared; lost items, the filters, a
 * pid that stands for three process images (exec, a pid used again), a
 * nesting deeper than the limit, usage mistakes and write errors are
 * checked through tracer__ctl_export() in a child process. The timeline
 * page's data blocks are checked by check_timeline.py: counts, nesting,
 * no '<' inside them, --max-events. Where python3 is missing, those checks
 * are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export.h"
#include "rb_layout.h"
#include "tap.h"

static char root[] = "/tmp/tracer-test-export-XXXXXX";
static int have_python;

#include "trace_build.h"

/* Concatenate callsite lines (freeing them) and extra into process.meta. */
static void meta_with(const char *dir, uint32_t pid, const char *name,
		      char **lines, size_t n, const char *extra)
{
	char *all = strdup(extra), *tmp;
	size_t i;

	for (i = 0; i < n; i++) {
		if (asprintf(&tmp, "%s%s", all, lines[i]) < 0)
			bail_out("out of memory");
		free(all);
		free(lines[i]);
		all = tmp;
	}
	write_meta(dir, pid, name, all);
	free(all);
}

/* ----------------------------------------------------------------------
 * The sessions.
 */

/*
 * pairs/app-10: thread 10 "main" nests func in a:work twice (the second
 * func is cut by a:work_end); thread 11 (no name) opens x and never closes
 * it, and records an end that opens nothing (y_end).
 */
static void build_pairs(void)
{
	char *cs[] = {
		callsite(1, 0, "i", "a:work_begin", "work %d"),
		callsite(2, 0, "i", "a:work_end", "work %d done"),
		callsite(3, 0, "s", "func:entry", "enter %s"),
		callsite(4, 0, "s", "func:exit", "leave %s"),
		callsite(5, 0, "i", "a:tick", "tick %d"),
		callsite(6, 0, "-", "x:begin", "x"),
		callsite(7, 0, "-", "y_end", "y"),
	};
	struct pkt p;
	FILE *f;

	make_dir("pairs");
	make_dir("pairs/app-10");
	meta_with("pairs/app-10", 10, "app", cs, 7, "thread 10 main\n");
	f = create("pairs/app-10/default-10", "w");
	pkt_begin(&p, 0, 10, 1000);
	rec(&p, 1, 1000, "i", 1LL);
	rec(&p, 3, 2000, "s", "f");
	rec(&p, 5, 3000, "i", 7LL);
	rec(&p, 4, 4000, "s", "f");
	rec(&p, 2, 5000, "i", 1LL);
	rec(&p, 1, 6000, "i", 2LL);
	rec(&p, 3, 6500, "s", "g");
	rec(&p, 2, 7000, "i", 2LL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("pairs/app-10/default-11", "w");
	pkt_begin(&p, 0, 11, 1500);
	rec(&p, 6, 1500, "");
	rec(&p, 5, 2500, "i", 8LL);
	rec(&p, 7, 3500, "");
	pkt_write(&p, f, 0);
	fclose(f);
}

/*
 * renames/app-20: thread 20 starts as "app" (tracer:thread_start), names
 * thread 21 "worker" at 3000 (tracer:thread_name) and itself "boss" at
 * 5000; thread 21 ends as "late" (tracer:thread_exit at 8000, a rename
 * the library did not see). process.meta names both "app", and has a
 * rename line for 21 (it changes nothing: the events say it). Ticks
 * (a:tick) in both threads in between.
 */
static void build_renames(void)
{
	char *cs[] = {
		callsite(1, 1, "is", "tracer:thread_start", "tid %d name %s"),
		callsite(2, 1, "is", "tracer:thread_name", "tid %d name %s"),
		callsite(3, 0, "i", "a:tick", "tick %d"),
		callsite(4, 1, "isu", "tracer:thread_exit",
			 "tid %d name %s lost %llu"),
	};
	struct pkt p;
	FILE *f;

	make_dir("renames/app-20");
	meta_with("renames/app-20", 20, "app", cs, 4, "thread 20 app\n"
		  "thread 21 app\nthread 21 worker 3000\n");
	f = create("renames/app-20/vital-20", "w");
	pkt_begin(&p, 1, 20, 1000);
	rec(&p, 1, 1000, "is", 20LL, "app");
	rec(&p, 2, 3000, "is", 21LL, "worker");
	rec(&p, 2, 5000, "is", 20LL, "boss");
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("renames/app-20/default-20", "w");
	pkt_begin(&p, 0, 20, 2000);
	rec(&p, 3, 2000, "i", 1LL);
	rec(&p, 3, 4000, "i", 2LL);
	rec(&p, 3, 6000, "i", 3LL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("renames/app-20/default-21", "w");
	pkt_begin(&p, 0, 21, 1500);
	rec(&p, 3, 1500, "i", 4LL);
	rec(&p, 3, 3500, "i", 5LL);
	rec(&p, 3, 7000, "i", 6LL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("renames/app-20/vital-21", "w");
	pkt_begin(&p, 1, 21, 8000);
	rec(&p, 4, 8000, "isu", 21LL, "late", 0ULL);
	pkt_write(&p, f, 0);
	fclose(f);
}

/*
 * images/: pid 30 is three process images: sh (sh-30) opens x at 1000 on
 * thread 30 and execs; true (true-30) records an x:end at 3000 (it must
 * not close sh's x: another program) and thread 31 a tick at 3500; a
 * later true (true-30.1, the pid used again) ticks at 5000 on thread 30.
 */
static void build_images(void)
{
	char *cs1[] = {
		callsite(1, 0, "-", "x:begin", "x"),
		callsite(2, 1, "-", "proc:exec", "exec"),
	};
	char *cs2[] = {
		callsite(1, 0, "-", "x:end", "x done"),
		callsite(2, 0, "i", "a:tick", "tick %d"),
	};
	char *cs3[] = { callsite(1, 0, "i", "a:tick", "tick %d") };
	struct pkt p;
	FILE *f;

	make_dir("images/sh-30");
	make_dir("images/true-30");
	make_dir("images/true-30.1");
	meta_with("images/sh-30", 30, "sh", cs1, 2, "");
	meta_with("images/true-30", 30, "true", cs2, 2, "");
	meta_with("images/true-30.1", 30, "true", cs3, 1, "");
	f = create("images/sh-30/default-30", "w");
	pkt_begin(&p, 0, 30, 1000);
	rec(&p, 1, 1000, "");
	rec(&p, 2, 2000, "");
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("images/true-30/default-30", "w");
	pkt_begin(&p, 0, 30, 3000);
	rec(&p, 1, 3000, "");
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("images/true-30/default-31", "w");
	pkt_begin(&p, 0, 31, 3500);
	rec(&p, 2, 3500, "i", 1LL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("images/true-30.1/default-30", "w");
	pkt_begin(&p, 0, 30, 5000);
	rec(&p, 1, 5000, "i", 2LL);
	pkt_write(&p, f, 0);
	fclose(f);
}

static const char pairs_events[] =
	"\"traceEvents\":[\n"
	"{\"ph\":\"M\",\"ts\":1.000,\"pid\":10,\"tid\":10,\"name\":"
	"\"process_name\",\"args\":{\"name\":\"app\"}},\n"
	"{\"ph\":\"M\",\"ts\":1.000,\"pid\":10,\"tid\":10,\"name\":"
	"\"thread_name\",\"args\":{\"name\":\"main\"}},\n"
	"{\"ph\":\"B\",\"ts\":1.000,\"pid\":10,\"tid\":10,\"name\":\"a:work\","
	"\"cat\":\"a\",\"args\":{\"msg\":\"work 1\"}},\n"
	"{\"ph\":\"M\",\"ts\":1.500,\"pid\":10,\"tid\":11,\"name\":"
	"\"thread_name\",\"args\":{\"name\":\"tid 11\"}},\n"
	"{\"ph\":\"B\",\"ts\":1.500,\"pid\":10,\"tid\":11,\"name\":\"x\","
	"\"args\":{\"msg\":\"x\"}},\n"
	"{\"ph\":\"B\",\"ts\":2.000,\"pid\":10,\"tid\":10,\"name\":\"func\","
	"\"args\":{\"msg\":\"enter f\"}},\n"
	"{\"ph\":\"i\",\"s\":\"t\",\"ts\":2.500,\"pid\":10,\"tid\":11,\"name\":"
	"\"a:tick\",\"cat\":\"a\",\"args\":{\"msg\":\"tick 8\"}},\n"
	"{\"ph\":\"i\",\"s\":\"t\",\"ts\":3.000,\"pid\":10,\"tid\":10,\"name\":"
	"\"a:tick\",\"cat\":\"a\",\"args\":{\"msg\":\"tick 7\"}},\n"
	"{\"ph\":\"i\",\"s\":\"t\",\"ts\":3.500,\"pid\":10,\"tid\":11,\"name\":"
	"\"y_end\",\"args\":{\"msg\":\"y\",\"unmatched\":\"an end without a "
	"begin\"}},\n"
	"{\"ph\":\"E\",\"ts\":4.000,\"pid\":10,\"tid\":10,\"name\":\"func\","
	"\"args\":{\"end_msg\":\"leave f\"}},\n"
	"{\"ph\":\"E\",\"ts\":5.000,\"pid\":10,\"tid\":10,\"name\":\"a:work\","
	"\"cat\":\"a\",\"args\":{\"end_msg\":\"work 1 done\"}},\n"
	"{\"ph\":\"B\",\"ts\":6.000,\"pid\":10,\"tid\":10,\"name\":\"a:work\","
	"\"cat\":\"a\",\"args\":{\"msg\":\"work 2\"}},\n"
	"{\"ph\":\"B\",\"ts\":6.500,\"pid\":10,\"tid\":10,\"name\":\"func\","
	"\"args\":{\"msg\":\"enter g\"}},\n"
	"{\"ph\":\"E\",\"ts\":7.000,\"pid\":10,\"tid\":10,\"name\":\"func\","
	"\"args\":{\"unclosed\":\"closed by the end of an enclosing slice\"}},"
	"\n"
	"{\"ph\":\"E\",\"ts\":7.000,\"pid\":10,\"tid\":10,\"name\":\"a:work\","
	"\"cat\":\"a\",\"args\":{\"end_msg\":\"work 2 done\"}},\n"
	"{\"ph\":\"E\",\"ts\":7.000,\"pid\":10,\"tid\":11,\"name\":\"x\","
	"\"args\":{\"unclosed\":\"still open at the end of the trace\"}}\n"
	"]}\n";

/* The message of the hostile event (a C string: no NUL inside). */
static const char hostile_msg[] =
	"q\"b\\c\x01\x1f\x7f\xff\xc3(\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	"</script><!--\xc0\xaf\xed\xa0\x80\xe2\x82";

/* What Python decodes it to, as json.dumps() writes it. */
static const char hostile_dumped[] =
	"\"q\\\"b\\\\c\\u0001\\u001f\\u007f\\ufffd\\ufffd(\\u00e9\\u20ac"
	"\\ud83d\\ude00</script><!--\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	"\\ufffd\\ufffd\"";

/*
 * hostile/evil-20: a process name with a quote and a backslash, a thread
 * name with control bytes, an event name with quotes, the message above,
 * a message holding a NUL byte ("a%cb" with 0), and one of 3000 bytes.
 */
static void build_hostile(void)
{
	char *cs[] = {
		callsite(1, 0, "s", "h:str", "%s"),
		callsite(2, 0, "i", "h:nul", "a%cb"),
		callsite(3, 0, "-", "h:\"q\"", "x"),
		callsite(4, 0, "s", "h:long", "%s"),
	};
	char *extra, big[3001];
	struct pkt p;
	FILE *f;

	if (asprintf(&extra, "thread 20 %s\n", pct("t\x01\x7f\"")) < 0)
		bail_out("out of memory");
	make_dir("hostile");
	make_dir("hostile/evil-20");
	meta_with("hostile/evil-20", 20, "evil \"name\\", cs, 4, extra);
	free(extra);
	memset(big, 'x', 3000);
	big[3000] = '\0';
	f = create("hostile/evil-20/default-20", "w");
	pkt_begin(&p, 0, 20, 100);
	rec(&p, 1, 100, "s", hostile_msg);
	rec(&p, 2, 200, "i", 0LL);
	rec(&p, 3, 300, "");
	rec(&p, 4, 400, "s", big);
	pkt_write(&p, f, 0);
	fclose(f);
}

/* lost/p-7: losses in the default channel (5 since the first packet's
 * end, then 1) and 2 in the vital channel before its first packet. */
static void build_lost(void)
{
	char *cs[] = { callsite(1, 0, "i", "p:ev", "v=%d") };
	struct pkt p;
	FILE *f;

	make_dir("lost");
	meta_with("lost", 7, "p", cs, 1, "");
	f = create("lost/default-7", "w");
	pkt_begin(&p, 0, 7, 100);
	rec(&p, 1, 100, "i", 1LL);
	pkt_write(&p, f, 0);			/* ends at 1000100 */
	pkt_begin(&p, 0, 7, 2000000);
	pkt_discarded(&p, 5);
	rec(&p, 1, 2000000, "i", 2LL);
	pkt_write(&p, f, 0);
	pkt_begin(&p, 0, 7, 6000000);
	pkt_discarded(&p, 6);
	rec(&p, 1, 6000000, "i", 3LL);
	pkt_write(&p, f, 0);
	fclose(f);
	f = create("lost/vital-7", "w");
	pkt_begin(&p, 1, 7, 3000000);
	pkt_discarded(&p, 2);
	rec(&p, 1, 3000000, "i", 9LL);
	pkt_write(&p, f, 0);
	fclose(f);
}

#define DEEP	(TRACER_SLICE_MAX_DEPTH + 4464)

/* deep/d-5: DEEP nested begins, no end. */
static void build_deep(void)
{
	char *cs[] = { callsite(1, 0, "-", "d:begin", "deeper") };
	struct pkt p;
	FILE *f;
	int i;

	make_dir("deep");
	meta_with("deep", 5, "d", cs, 1, "");
	f = create("deep/default-5", "w");
	for (i = 0; i < DEEP; i++) {
		if (i % 2000 == 0)
			pkt_begin(&p, 0, 5, 1000 + (uint64_t)i);
		rec(&p, 1, 1000 + (uint64_t)i, "");
		if (i % 2000 == 1999 || i == DEEP - 1)
			pkt_write(&p, f, 0);
	}
	fclose(f);
}

/* ----------------------------------------------------------------------
 * Running the commands.
 */

/* `tracectl CMD` with the arguments after cmd (NULL-terminated). */
static void run_cmd(struct run *r, const char *cmd, ...)
{
	char *argv[16];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)cmd;
	va_start(ap, cmd);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	run_ctl(r, strcmp(cmd, "export") ? tracer__ctl_timeline :
		tracer__ctl_export, argv);
}

/* Check the status, and that stderr is err exactly. */
static int expect_status(const struct run *r, int status, const char *err,
			 const char *name)
{
	if (ok(r->status == status && !strcmp(r->err, err), "%s", name))
		return 1;
	diag("  status %d (want %d)\n--- errors:\n%s--- want:\n%s---",
	     r->status, status, r->err, err);
	return 0;
}

/* Run python3 script on file; its output (stdout and stderr) in *out.
 * Returns its exit status. */
static int run_python(const char *script, const char *file, char **out)
{
	char *cmd, *res = path_of("py.out");
	size_t len;
	int status;

	if (asprintf(&cmd, "python3 '%s' '%s' >'%s' 2>&1", script, file,
		     res) < 0)
		bail_out("out of memory");
	status = system(cmd);
	*out = read_all(res, &len);
	free(cmd);
	free(res);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run a checker of tests/integration (check_chrome.py...) on file. */
static int run_py(const char *checker, const char *file, char **out)
{
	char *script;
	int status;

	if (asprintf(&script, "%s/tests/integration/%s", TRACER_SRCDIR,
		     checker) < 0)
		bail_out("out of memory");
	status = run_python(script, file, out);
	free(script);
	return status;
}

/* ok() skipped without python3. */
static int skip_no_python(const char *name)
{
	if (have_python)
		return 0;
	printf("ok %d - %s # SKIP python3 not found\n", ++tap_count, name);
	return 1;
}

/* The checker's summary of file contains each of the lines of want. */
static void expect_summary(const char *script, const char *file,
			   const char *want, const char *name)
{
	char *out, *lines = strdup(want), *line, *save = NULL;
	int status, good;

	if (skip_no_python(name)) {
		free(lines);
		return;
	}
	status = run_py(script, file, &out);
	good = status == 0;
	for (line = strtok_r(lines, "\n", &save); line && good;
	     line = strtok_r(NULL, "\n", &save))
		good = strstr(out, line) && (strstr(out, line) == out ||
					     strstr(out, line)[-1] == '\n');
	if (!ok(good, "%s", name))
		diag("  %s exit %d, output:\n%s--- want lines:\n%s", script,
		     status, out, want);
	free(out);
	free(lines);
}

/* ----------------------------------------------------------------------
 * Tests.
 */

static void test_classify(void)
{
	static const struct {
		const char *name;
		enum tracer_pair_role role;
		int family;
		size_t key_len;
	} cases[] = {
		{ "a:begin", TRACER_PAIR_BEGIN, 0, 2 },
		{ "myapp:work_begin", TRACER_PAIR_BEGIN, 0, 11 },
		{ "a-begin", TRACER_PAIR_BEGIN, 0, 2 },
		{ "a.end", TRACER_PAIR_END, 0, 2 },
		{ "myapp:work_end", TRACER_PAIR_END, 0, 11 },
		{ "func:entry", TRACER_PAIR_BEGIN, 1, 5 },
		{ "func:exit", TRACER_PAIR_END, 1, 5 },
		{ "db:query_exit", TRACER_PAIR_END, 1, 9 },
		{ "a-entry", TRACER_PAIR_NONE, 0, 0 },
		{ "begin", TRACER_PAIR_NONE, 0, 0 },
		{ ":begin", TRACER_PAIR_NONE, 0, 0 },
		{ "a:beginning", TRACER_PAIR_NONE, 0, 0 },
		{ "a:Begin", TRACER_PAIR_NONE, 0, 0 },
		{ "tracer:thread_exit", TRACER_PAIR_NONE, 0, 0 },
		{ "proc:exit", TRACER_PAIR_NONE, 0, 0 },
		{ "pthread:exit", TRACER_PAIR_NONE, 0, 0 },
		{ "proc:exit_x", TRACER_PAIR_NONE, 0, 0 },
		{ "myproc:exit", TRACER_PAIR_END, 1, 7 },
		{ "pthread:cond_wait_exit", TRACER_PAIR_END, 1, 18 },
	};
	struct tracer_pair p;
	size_t i;
	int good = 1;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tracer__pair_classify(cases[i].name, &p);
		if (p.role == cases[i].role && p.family == cases[i].family &&
		    p.key_len == cases[i].key_len)
			continue;
		good = 0;
		diag("  %s: role %d family %d key %zu", cases[i].name, p.role,
		     p.family, p.key_len);
	}
	ok(good, "pairing: begin/end after : _ - ., entry/exit after : _, "
	   "a non-empty BASE, never tracer:*, proc:exit, pthread:exit");
}

static void test_pairs(void)
{
	char *dir = path_of("pairs"), *file = path_of("pairs.json");
	char *want, *out;
	struct run r;
	size_t len;

	if (asprintf(&want, "{\"displayTimeUnit\":\"ns\",\"otherData\":{"
		     "\"producer\":\"tracectl export\",\"version\":\"%s\","
		     "\"clock\":\"CLOCK_MONOTONIC\",\"source\":\"%s\"},\n%s",
		     PACKAGE_VERSION, dir, pairs_events) < 0)
		bail_out("out of memory");
	run_cmd(&r, "export", dir, NULL);
	if (!ok(r.status == 0 && !strcmp(r.out, want) && r.err_len == 0,
		"export: slices nested, cut, unclosed; an unmatched end; "
		"metadata; exact JSON"))
		diag("  status %d\n--- output:\n%s--- want:\n%s--- errors:\n%s",
		     r.status, r.out, want, r.err);
	run_free(&r);
	run_cmd(&r, "export", "--format", "chrome", dir, "-o", file, NULL);
	out = read_all(file, &len);
	ok(r.status == 0 && r.out_len == 0 && !strcmp(out, want),
	   "export --format chrome -o FILE: the same, in FILE");
	free(out);
	run_free(&r);
	expect_summary("check_chrome.py", file, "threads 2\nprocesses 1\n"
		       "slices 5\ninstants 3\nunmatched 1\nunclosed 2\n"
		       "depth 2\nslice a:work=2\nslice func=2\nslice x=1\n",
		       "export: Python reads it; B/E nest per thread; one "
		       "thread_name per thread");
	free(want);
	free(dir);
	free(file);
}

/* Python's view of the hostile trace: names and args of every event. */
static const char dump_py[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
	"for e in d['traceEvents']:\n"
	"    print(json.dumps([e['name'], e['args']]))\n";

/* What dump_py prints for the hostile trace (a new string). */
static char *hostile_dump(void)
{
	char x[3001], *want;

	memset(x, 'x', 3000);
	x[3000] = '\0';
	if (asprintf(&want, "[\"process_name\", {\"name\": \"evil \\\"name"
		     "\\\\\"}]\n[\"thread_name\", {\"name\": \"t\\u0001"
		     "\\u007f\\\"\"}]\n[\"h:str\", {\"msg\": %s}]\n[\"h:nul\", "
		     "{\"msg\": \"a\\u0000b\"}]\n[\"h:\\\"q\\\"\", {\"msg\": "
		     "\"x\"}]\n[\"h:long\", {\"msg\": \"%s\"}]\n",
		     hostile_dumped, x) < 0)
		bail_out("out of memory");
	return want;
}

/* Python decodes the hostile trace in file to what was recorded. */
static void hostile_decoded(const char *file)
{
	const char *name = "export: hostile strings decode to what was "
			   "recorded, bad bytes as U+FFFD";
	char *py = path_of("dump.py"), *out, *want;
	int status;
	FILE *f;

	if (!skip_no_python(name)) {
		f = fopen(py, "w");
		fputs(dump_py, f);
		fclose(f);
		want = hostile_dump();
		status = run_python(py, file, &out);
		if (!ok(status == 0 && !strcmp(out, want), "%s", name))
			diag("  exit %d\n--- got:\n%s--- want:\n%s", status,
			     out, want);
		free(out);
		free(want);
	}
	free(py);
}

static void test_hostile_export(void)
{
	char *dir = path_of("hostile"), *file = path_of("hostile.json");
	char *out, *p;
	struct run r;
	int bad = 0;

	run_cmd(&r, "export", dir, "-o", file, NULL);
	out = read_all(file, &r.out_len);
	for (p = out; *p; p++)
		bad |= (unsigned char)*p < 0x20 && *p != '\n';
	ok(r.status == 0 && !bad && r.out_len > 0, "export: hostile strings, "
	   "exit 0, no raw control bytes");
	free(out);
	run_free(&r);
	expect_summary("check_chrome.py", file, "threads 1\ninstants 4\n",
		       "export: hostile strings are valid UTF-8 JSON");
	hostile_decoded(file);
	free(dir);
	free(file);
}

static void test_lost(void)
{
	char *dir = path_of("lost"), *file = path_of("lost.json");
	struct run r;

	run_cmd(&r, "export", dir, NULL);
	ok(r.status == 0 &&
	   strstr(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"ts\":2000.000,\"pid\":7,"
		  "\"tid\":7,\"name\":\"tracer:lost\",\"cat\":\"tracer\","
		  "\"args\":{\"lost\":5,\"channel\":\"default\",\"since\":"
		  "1000.100}}") &&
	   strstr(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"ts\":3000.000,\"pid\":7,"
		  "\"tid\":7,\"name\":\"tracer:lost\",\"cat\":\"tracer\","
		  "\"args\":{\"lost\":2,\"channel\":\"vital\"}}"),
	   "export: lost events are tracer:lost instants with the count, "
	   "channel and since");
	run_free(&r);
	run_cmd(&r, "export", dir, "-o", file, NULL);
	run_free(&r);
	expect_summary("check_chrome.py", file, "lost 3\nlost_sum 8\n"
		       "instants 4\n", "export: every lost item, valid JSON");
	free(dir);
	free(file);
}

/* export DIR with two options into FILE; the checker's summary. */
static void filtered(const char *a1, const char *a2, const char *want,
		     const char *name)
{
	char *dir = path_of("pairs"), *file = path_of("filtered.json");
	struct run r;

	run_cmd(&r, "export", dir, a1, a2, "-o", file, NULL);
	expect_status(&r, 0, "", name);
	expect_summary("check_chrome.py", file, want, name);
	run_free(&r);
	free(dir);
	free(file);
}

/* A selection that matches nothing: said, exit 1. */
static void no_process(void)
{
	char *dir = path_of("pairs"), *file = path_of("filtered.json");
	char want[4096 + 64];
	struct run r;

	snprintf(want, sizeof(want),
		 "tracectl: no events of process 99 in '%s'\n", dir);
	run_cmd(&r, "export", dir, "--pid", "99", "-o", file, NULL);
	expect_status(&r, 1, want, "export --pid of no process: said, "
		      "exit 1");
	run_free(&r);
	free(dir);
	free(file);
}

static void test_filters(void)
{
	filtered("--tid", "11", "threads 1\nslices 1\nunclosed 1\n"
		 "instants 2\nunmatched 1\n", "export --tid: one thread, its "
		 "metadata only");
	filtered("--events", "a:*", "threads 2\nslices 2\nslice a:work=2\n"
		 "instants 2\nunclosed 0\n", "export --events: pairs of the "
		 "events kept only");
	no_process();
	filtered("--since", "0.0000055", "threads 1\nslices 2\nunclosed 1\n"
		 "instants 0\n", "export --since: what began before is gone");
	filtered("--until", "+2500ns", "threads 2\nslices 3\nunclosed 3\n"
		 "instants 3\n", "export --until: slices still open end at "
		 "the last event");
}

static void test_deep(void)
{
	char *dir = path_of("deep"), *file = path_of("deep.json");
	char want[256];
	struct run r;

	run_cmd(&r, "export", dir, "-o", file, NULL);
	expect_status(&r, 0, "", "export: a nesting deeper than the limit");
	run_free(&r);
	snprintf(want, sizeof(want), "slices %d\ndepth %d\nunclosed %d\n"
		 "instants %d\nunmatched %d\n", TRACER_SLICE_MAX_DEPTH,
		 TRACER_SLICE_MAX_DEPTH, TRACER_SLICE_MAX_DEPTH,
		 DEEP - TRACER_SLICE_MAX_DEPTH, DEEP - TRACER_SLICE_MAX_DEPTH);
	expect_summary("check_chrome.py", file, want, "export: begins over "
		       "the depth limit are instants; the rest close at the "
		       "end");
	free(dir);
	free(file);
}

/* cmd with args a1, a2 (either NULL): usage error err, status 2. */
static void usage_error(const char *cmd, const char *a1, const char *a2,
			const char *err, const char *name)
{
	char *dir = path_of("pairs"), *want;
	struct run r;

	if (asprintf(&want, "tracectl: %s: %s (see 'tracectl %s --help')\n",
		     cmd, err, cmd) < 0)
		bail_out("out of memory");
	run_cmd(&r, cmd, dir, a1, a2, NULL);
	if (!expect_status(&r, 2, want, name) || r.out_len)
		diag("  output: %s", r.out);
	run_free(&r);
	free(want);
	free(dir);
}

static void test_usage(void)
{
	char *file = path_of("never.json"), *missing = path_of("nothere");
	char *err;
	struct run r;

	usage_error("export", "--format", "xml", "unknown format 'xml'",
		    "export --format xml: usage error");
	usage_error("export", "-o", NULL, "option '-o' needs a value",
		    "export -o without FILE");
	usage_error("export", "-x", NULL, "unknown option '-x'",
		    "export: an unknown option");
	usage_error("export", "extra", NULL, "unexpected argument 'extra'",
		    "export: two directories");
	usage_error("timeline", "--max-events", "lots", "--max-events: "
		    "'lots' is not a number of events",
		    "timeline --max-events lots");
	run_cmd(&r, "export", "--help", NULL);
	ok(r.status == 0 && !strncmp(r.out, "usage: tracectl export", 22) &&
	   strstr(r.out, "BASE_begin/BASE_end") && !r.err_len,
	   "export --help: usage and the pairing rules on stdout");
	run_free(&r);
	run_cmd(&r, "export", missing, "-o", file, NULL);
	if (asprintf(&err, "tracectl: cannot open '%s': No such file or "
		     "directory\n", missing) < 0)
		bail_out("out of memory");
	expect_status(&r, 1, err, "export of a missing directory: status 1");
	ok(access(file, F_OK) < 0, "... and no output file is created");
	run_free(&r);
	free(err);
	free(file);
	free(missing);
}

static void test_write_error(void)
{
	char *dir = path_of("pairs"), *bad = path_of("nodir/x.json");
	char *err;
	struct run r;

	run_cmd(&r, "export", dir, "-o", "/dev/full", NULL);
	expect_status(&r, 1, "tracectl: cannot write '/dev/full': No space "
		      "left on device\n", "export -o /dev/full: one-line "
		      "error, status 1");
	run_free(&r);
	run_cmd(&r, "timeline", dir, "-o", "/dev/full", NULL);
	expect_status(&r, 1, "tracectl: cannot write '/dev/full': No space "
		      "left on device\n", "timeline -o /dev/full: the same");
	run_free(&r);
	if (asprintf(&err, "tracectl: cannot create '%s': No such file or "
		     "directory\n", bad) < 0)
		bail_out("out of memory");
	run_cmd(&r, "export", dir, "-o", bad, NULL);
	expect_status(&r, 1, err, "export -o in a missing directory");
	run_free(&r);
	free(err);
	free(bad);
	free(dir);
}

/* ----------------------------------------------------------------------
 * Renamed threads.
 */

/* The names the export of the renames trace with options a1 a2 (NULL:
 * none) gives tid: "TS NAME," per thread_name, in order. */
static char *export_names(const char *a1, const char *a2, int tid)
{
	char *dir = path_of("renames"), *file = path_of("renames.json");
	char *json, *line, *save = NULL, *ts, *nm, key[64], *got = NULL;
	size_t len, n = 0;
	struct run r;
	FILE *f;

	run_cmd(&r, "export", dir, "-o", file, a1, a2, NULL);
	run_free(&r);
	json = read_all(file, &len);
	f = open_memstream(&got, &n);
	snprintf(key, sizeof(key), "\"tid\":%d,\"name\":\"thread_name\"",
		 tid);
	for (line = strtok_r(json, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ts = strstr(line, "\"ts\":");
		nm = strstr(line, "\"args\":{\"name\":\"");
		if (strstr(line, key) && ts && nm)
			fprintf(f, "%.*s %.*s,", (int)strcspn(ts + 5, ","),
				ts + 5, (int)strcspn(nm + 16, "\""), nm + 16);
	}
	fclose(f);
	free(json);
	free(dir);
	free(file);
	return got;
}

static void expect_names(const char *a1, const char *a2, int tid,
			 const char *want, const char *name)
{
	char *got = export_names(a1, a2, tid);

	if (!ok(!strcmp(got, want), "%s", name))
		diag("  got '%s', want '%s'", got, want);
	free(got);
}

static void test_renames(void)
{
	char *dir = path_of("renames"), *file = path_of("renames.html");
	struct run r;

	expect_names(NULL, NULL, 21, "1.500 app,3.000 worker,8.000 late,",
		     "export: a thread renamed by another, then at its exit: "
		     "a thread_name at each rename");
	expect_names(NULL, NULL, 20, "1.000 app,5.000 boss,",
		     "export: a thread that renamed itself");
	expect_names("--events", "a:*", 21, "1.500 app,3.000 worker,"
		     "8.000 late,", "export --events without the renames: "
		     "the names still follow");
	expect_names("--since", "0.000004", 21, "7.000 worker,8.000 late,",
		     "export --since: named as it was at that time");
	expect_names("--since", "0.000004", 20, "4.000 app,5.000 boss,",
		     "export --since: renamed after it");
	run_cmd(&r, "timeline", dir, "-o", file, NULL);
	run_free(&r);
	expect_summary("check_timeline.py", file, "lane 20 20 app / boss "
		       "formerly app\nlane 20 21 app / late formerly app, "
		       "worker\n", "timeline: a lane has the thread's last "
		       "name, and the ones before");
	free(dir);
	free(file);
}

/* ----------------------------------------------------------------------
 * Process images.
 */

/* The exported id of thread or process v of image n of its pid. */
#define IMAGE_ID(v, n)	((v) + ((n) - 1) * TRACER_IMAGE_STRIDE)

static void test_images(void)
{
	char *dir = path_of("images"), *file = path_of("images.json");
	char *html = path_of("images.html"), *labels;
	struct run r;

	run_cmd(&r, "export", dir, "-o", file, NULL);
	expect_status(&r, 0, "", "export: a pid of three process images");
	run_free(&r);
	if (asprintf(&labels, "processes 3\nthreads 4\nslices 1\n"
		     "unclosed 1\nunmatched 1\nprocess 30 sh\n"
		     "process %llu true | pid 30, image 2\n"
		     "process %llu true | pid 30, image 3\n",
		     (unsigned long long)IMAGE_ID(30, 2),
		     (unsigned long long)IMAGE_ID(30, 3)) < 0)
		bail_out("out of memory");
	expect_summary("check_chrome.py", file, labels, "export: each image "
		       "a process of its own, labelled; sh's slice is not "
		       "closed by the next program's end");
	free(labels);
	run_cmd(&r, "timeline", dir, "-o", html, NULL);
	expect_status(&r, 0, "", "timeline: a pid of three process images");
	run_free(&r);
	expect_summary("check_timeline.py", html, "lanes 4\nprocs 3\n"
		       "unmatched 1\nunclosed 1\nproc 30 1 sh sh-30\n"
		       "proc 30 2 true true-30\nproc 30 3 true true-30.1\n"
		       "image 30 1 30 proc:exec x\nimage 30 2 30 x:end\n"
		       "image 30 2 31 a:tick\nimage 30 3 30 a:tick\n",
		       "timeline: a lane per thread of each image, the "
		       "images numbered in time order");
	free(dir);
	free(file);
	free(html);
}

/* ----------------------------------------------------------------------
 * The timeline.
 */

static void test_timeline(void)
{
	char *dir = path_of("pairs"), *file = path_of("pairs.html");
	char *page;
	struct run r;
	size_t len;

	run_cmd(&r, "timeline", dir, "-o", file, NULL);
	page = read_all(file, &len);
	ok(r.status == 0 && !r.err_len && !strncmp(page, "<!DOCTYPE html>", 15)
	   && len > 8 && !strcmp(page + len - 8, "</html>\n") &&
	   !strstr(page, "<!--TIMELINE-DATA-->") && !strstr(page, "http"),
	   "timeline: a whole page, its data in place, no URL");
	free(page);
	run_free(&r);
	expect_summary("check_timeline.py", file, "lanes 2\nitems 11\n"
		       "truncated 0\ninstants 3\nunmatched 1\nslices 5\n"
		       "unclosed 2\nlost 0\ndepth 2\nnames 5\nscripts 4\n"
		       "procs 1\nlane 10 10 app / main\nlane 10 11 app / None\n"
		       "proc 10 1 app app-10\n",
		       "timeline: lanes, slices, instants as export pairs "
		       "them");
	run_cmd(&r, "timeline", dir, "--max-events=5", "-o", file, NULL);
	expect_status(&r, 0, "tracectl: warning: the trace has more than 5 "
		      "events; the timeline shows the first 5 (see "
		      "--max-events)\n", "timeline --max-events: a warning, "
		      "status 0");
	run_free(&r);
	expect_summary("check_timeline.py", file, "items 5\ntruncated 1\n",
		       "timeline --max-events: only the first events, "
		       "marked truncated");
	free(dir);
	free(file);
}

static void test_timeline_hostile(void)
{
	char *dir = path_of("hostile"), *file = path_of("hostile.html");
	char *page, x[1025];
	struct run r;
	size_t len;

	run_cmd(&r, "timeline", "--", dir, NULL);	/* to stdout */
	ok(r.status == 0 && !strncmp(r.out, "<!DOCTYPE html>", 15),
	   "timeline: to stdout when it is not a terminal");
	run_free(&r);
	run_cmd(&r, "timeline", dir, "-o", file, NULL);
	run_free(&r);
	expect_summary("check_timeline.py", file, "lanes 1\ninstants 4\n"
		       "scripts 4\n", "timeline: hostile strings leave the "
		       "data blocks valid and closed");
	page = read_all(file, &len);
	memset(x, 'x', 1024);
	x[1024] = '\0';
	ok(strstr(page, "\\u003c/script>\\u003c!--") &&
	   strstr(page, "\"a\\u0000b\"") && strstr(page, x) &&
	   strstr(strstr(page, x), "x [...]\"") &&
	   !strstr(page, "xxxxxxxxxxx [...]x"), "timeline: '<' escaped, NUL "
	   "kept, a long message cut at 1024 bytes");
	free(page);
	free(dir);
	free(file);
}

/* ----------------------------------------------------------------------
 * main
 */

int main(void)
{
	plan(48);
	if (!mkdtemp(root))
		bail_out("mkdtemp: %s", strerror(errno));
	have_python = system("python3 -c pass >/dev/null 2>&1") == 0;
	build_pairs();
	build_hostile();
	build_lost();
	build_deep();
	build_renames();
	build_images();
	test_classify();
	test_pairs();
	test_hostile_export();
	test_lost();
	test_filters();
	test_deep();
	test_renames();
	test_images();
	test_usage();
	test_write_error();
	test_timeline();
	test_timeline_hostile();
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}
