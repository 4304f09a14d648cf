/*
 * view.c - `tracectl view`: print the events of a session, merged in time
 * order (trace_merge.c), one line each.
 *
 * Problems are reported as they are met, one line each on the error stream
 * (after flushing the events printed so far), and the merge goes on with
 * whatever is still readable; the exit status is then 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fdnames.h"
#include "symbols.h"
#include "trace_args.h"
#include "trace_merge.h"
#include "view.h"

static const char usage[] =
	"usage: tracectl view DIR [--pid PID] [--tid TID] [--events PATTERNS]"
	"\n"
	"                     [--since TIME] [--until TIME] [--no-symbols]\n"
	"                     [--no-fd-names] [--follow [--lag MS]]\n";

static const char help[] =
	"\n"
	"Print the events recorded in DIR, a session directory or one of its\n"
	"process directories, merged in time order, one line per event:\n"
	"\n"
	"  SECONDS.NANOSECONDS NAME PID TID PROVIDER:EVENT: MESSAGE\n"
	"\n"
	"(CLOCK_MONOTONIC time; NAME is the process name.) Where events were\n"
	"lost, a line 'tracer:lost: N events lost ...' says how many. An\n"
	"address (%p) in a function or object of a file the process loaded\n"
	"is followed by its name, '0x55d0c3a1b139 <main+9>' (from the\n"
	"file's symbol table, as it is now on disk). A descriptor is\n"
	"followed by what the process had open there, as strace -y shows\n"
	"it: 'fd 3</etc/hosts>', 'fds 4<pipe:[r]> 5<pipe:[w]>' (from the\n"
	"opens, sockets, pipes, dups and closes read, and the parent's\n"
	"table at fork; see tracectl(1)).\n"
	"\n"
	"  --pid PID          only this process\n"
	"  --tid TID          only this thread\n"
	"  --events PATTERNS  only these events: globs, '-' excludes, the\n"
	"                     last match wins ('hanoi:*,-hanoi:call')\n"
	"  --since TIME       from TIME: SECONDS[.FRACTION] as printed, or\n"
	"                     +SECONDS from the first event of the whole\n"
	"                     trace, whatever --pid and --tid select (units\n"
	"                     s, ms, us, ns: '+250ms')\n"
	"  --until TIME       up to TIME (included), same forms\n"
	"  --no-symbols       addresses without their names\n"
	"  --no-fd-names      descriptors without their names\n"
	"  --follow           then print new events as they are written, like\n"
	"                     tail -f, until interrupted (or --until)\n"
	"  --lag MS           with --follow, how late events are printed:\n"
	"                     more than the session's live interval (default\n"
	"                     2000; a thread's events reach the files that\n"
	"                     late at most)\n"
	"\n"
	"A selection that matches no event is an error (status 1); a pattern\n"
	"of --events that matches no event of the trace, a warning.\n";

#define FOLLOW_ROUND_MS	200	/* between two looks at the files */
#define FOLLOW_LAG_MS	2000

/* --follow and --lag. */
struct follow_args {
	bool on;
	uint64_t lag_ms;
};

/* Append v in decimal, at least width digits, at p: the end. */
static char *put_dec(char *p, uint64_t v, int width)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v || n < width);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/*
 * "SSSS.NNNNNNNNN NAME PID TID EVENT: " (printf would do, but this is the
 * hot path of a view of millions of events; the merge is single-threaded,
 * so the stream needs no locking).
 */
static void print_head(FILE *out, const struct tracer_item *it)
{
	char buf[64], *p;

	p = put_dec(buf, it->timestamp / 1000000000, 1);
	*p++ = '.';
	p = put_dec(p, it->timestamp % 1000000000, 9);
	*p++ = ' ';
	fwrite_unlocked(buf, 1, (size_t)(p - buf), out);
	fputs_unlocked(it->proc->meta.name, out);
	p = buf;
	*p++ = ' ';
	p = put_dec(p, it->pid, 1);
	*p++ = ' ';
	p = put_dec(p, it->tid, 1);
	*p++ = ' ';
	fwrite_unlocked(buf, 1, (size_t)(p - buf), out);
	fputs_unlocked(it->name, out);
	fputs_unlocked(": ", out);
}

/* "N events lost in the default channel since S.NNNNNNNNN" */
static void print_lost(FILE *out, const struct tracer_item *it)
{
	const char *chan = it->vital ? "vital" : "default";

	fprintf(out, "%" PRIu64 " event%s lost in the %s channel", it->lost,
		it->lost == 1 ? "" : "s", chan);
	if (it->lost_since)
		fprintf(out, " since %" PRIu64 ".%09" PRIu64,
			it->lost_since / 1000000000,
			it->lost_since % 1000000000);
	else
		fputs(" before this point", out);
	putc_unlocked('\n', out);
}

static void print_item(FILE *out, const struct tracer_item *it)
{
	print_head(out, it);
	if (it->kind == TRACER_ITEM_LOST) {
		print_lost(out, it);
		return;
	}
	fwrite_unlocked(it->msg, 1, it->msg_len, out);
	putc_unlocked('\n', out);
}

/* A view of dir, following descriptors with fdn (NULL: bare). */
static int view_names(const char *dir, const struct tracer_merge_opts *opts,
		      FILE *out, struct tracer_fdnames *fdn)
{
	struct tracer_merge_opts o = *opts;
	struct tracer_syms *syms = NULL;
	struct tracer_merge *m;
	struct tracer_item it;
	int ret, status;

	o.out = out;
	ret = tracer__merge_open(&m, dir, &o);
	if (!ret && !o.no_symbols && tracer__syms_new(&syms, m)) {
		tracer__merge_close(m);
		ret = -ENOMEM;
	}
	if (ret == -ENOMEM)
		fprintf(opts->err, "tracectl: out of memory\n");
	if (ret)
		return 1;
	if (syms)
		tracer__syms_attach(syms, m);
	if (fdn) {
		tracer__fdnames_attach(fdn, m);
		tracer__fdnames_set_note(fdn, syms ? tracer__syms_note : NULL,
					 syms);
	}
	while (tracer__merge_next(m, &it) == 1) {
		if (fdn)
			tracer__fdnames_item(fdn, &it);
		print_item(out, &it);
	}
	if (fflush(out) != 0 || ferror(out))
		tracer__merge_error(m, "cannot write the events: %s",
				    strerror(errno));
	status = tracer__merge_failed(m) ? 1 : 0;
	tracer__merge_close(m);
	tracer__syms_free(syms);
	return status;
}

/* A set of descriptor tables, unless opts say --no-fd-names: NULL then,
 * or when out of memory (said on opts->err; *status 1). */
static struct tracer_fdnames *fdnames_for(const struct tracer_merge_opts *opts,
					  int *status)
{
	struct tracer_fdnames *fdn = NULL;

	if (!opts->no_fd_names && tracer__fdnames_new(&fdn)) {
		fprintf(opts->err, "tracectl: out of memory\n");
		*status = 1;
	}
	return fdn;
}

int tracer__view(const char *dir, const struct tracer_merge_opts *opts,
		 FILE *out)
{
	int status = 0;
	struct tracer_fdnames *fdn = fdnames_for(opts, &status);

	if (status)
		return status;
	status = view_names(dir, opts, out, fdn);
	tracer__fdnames_free(fdn);
	return status;
}

static bool is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the trace clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * --follow: the events up to `lag` before now, then every FOLLOW_ROUND_MS
 * those since, in rounds of a merge from where the round before stopped.
 * A thread's events reach the files up to a live interval late, so a
 * round prints only what is older than the lag: each event is printed
 * once, in time order across rounds (an event later than the lag is
 * missed). Problems are reported by the first round only (a damaged
 * packet would be reported again by every round). Ends at --until, or
 * when the output goes away.
 */
static int follow(const char *dir, const struct tracer_merge_opts *opts,
		  uint64_t lag_ms, FILE *out)
{
	struct tracer_merge_opts o = *opts;
	FILE *quiet = fopen("/dev/null", "w");
	struct timespec pause = { 0, FOLLOW_ROUND_MS * 1000000L };
	uint64_t upto, from = opts->since;
	bool last = false, shown = false;
	int status = 0;
	/* One set for all rounds: each round reads on from the last. */
	struct tracer_fdnames *fdn = fdnames_for(opts, &status);

	if (status) {
		if (quiet)
			fclose(quiet);
		return status;
	}

	/* Events may still come: a round that finds none is no mistake. */
	o.check = false;

	while (!last) {
		upto = now_ns() - lag_ms * 1000000u;
		if (opts->until && opts->until <= upto) {
			upto = opts->until;
			last = true;
		}
		o.since = from;
		o.until = upto;
		if (shown && quiet)
			o.err = quiet;
		if (from <= upto) {
			status |= view_names(dir, &o, out, fdn);
			if (ferror(out) || (status && !shown && !is_dir(dir)))
				break;		/* gone, or never was: said */
			shown = true;
			from = upto + 1;
		}
		if (!last)
			nanosleep(&pause, NULL);
	}
	if (quiet)
		fclose(quiet);
	tracer__fdnames_free(fdn);
	return status;
}

int tracer__view_dir(const char *dir, FILE *out, FILE *err)
{
	struct tracer_merge_opts opts = { .err = err };

	return tracer__view(dir, &opts, out);
}

enum { KEY_FOLLOW = 1, KEY_LAG };

static const struct tracer__ctl_opt view_opts[] = {
	{ "follow", KEY_FOLLOW, false, 0 },
	{ "lag", KEY_LAG, true, 0 },
	{ NULL, 0, false, 0 },
};

/* --follow or --lag (ctx: f). Returns 0 or 2. */
static int follow_arg(struct tracer_trace_args *a, void *ctx, int key,
		      const char *val)
{
	struct follow_args *f = ctx;
	char *end;

	if (key == KEY_FOLLOW) {
		f->on = true;
		return 0;
	}
	errno = 0;
	f->lag_ms = strtoull(val, &end, 10);
	if (*val < '0' || *val > '9' || *end || errno ||
	    f->lag_ms > 3600000)
		return tracer__ctl_syntax_error(&a->ctl, "--lag: '%s' is not a "
						"number of milliseconds up to "
						"3600000", val);
	return 0;
}

/* Returns -1 to go on, or an exit status. */
static int parse(struct tracer_trace_args *a, struct follow_args *f,
		 int argc, char **argv)
{
	int ret = tracer__trace_parse(a, argc, argv, view_opts, follow_arg,
				      f, usage, help);

	if (ret >= 0)
		return ret;
	if (f->lag_ms != FOLLOW_LAG_MS && !f->on)
		return tracer__ctl_syntax_error(&a->ctl, "--lag without "
						"--follow");
	if (f->on && (a->opts.since_relative || a->opts.until_relative))
		return tracer__ctl_syntax_error(&a->ctl, "--follow takes "
						"--since and --until as times, "
						"not +TIME");
	return -1;
}

int tracer__ctl_view(int argc, char **argv)
{
	struct tracer_trace_args a;
	struct follow_args f = { .lag_ms = FOLLOW_LAG_MS };
	int ret;

	tracer__trace_args_init(&a, "view");
	ret = parse(&a, &f, argc, argv);
	if (ret < 0 && f.on) {
		setvbuf(stdout, NULL, _IOLBF, 0);	/* like tail -f */
		tracer__raise_file_limit();
		ret = follow(a.dir, &a.opts, f.lag_ms, stdout);
	} else if (ret < 0) {
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		tracer__raise_file_limit();
		ret = tracer__view(a.dir, &a.opts, stdout);
	}
	tracer__trace_args_free(&a);
	return ret;
}
