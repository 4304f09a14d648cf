/*
 * status.c - `tracectl status [--json]`: tracerd, the session, and every
 * traced process with its threads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "json.h"
#include "pattern.h"

#define KEY_JSON 1

static const char *or_dash(const char *s)
{
	return s && s[0] ? s : "-";
}

/* "64 MiB", "4 KiB", "3000 bytes"; "-" for 0 (not known). */
static const char *bytes(char *buf, size_t size, uint64_t v)
{
	static const char *const units[] = { "GiB", "MiB", "KiB" };
	int i;

	if (!v)
		return "-";
	for (i = 0; i < 3; i++) {
		int shift = 10 * (3 - i);

		if (!(v & ((1ULL << shift) - 1))) {
			snprintf(buf, size, "%" PRIu64 " %s", v >> shift,
				 units[i]);
			return buf;
		}
	}
	snprintf(buf, size, "%" PRIu64 " bytes", v);
	return buf;
}

/* The session's relay: where, how far, what was skipped. */
static void print_relay(const Tracer__RelayStatus *r)
{
	char sent[32], left[32];

	if (!r)
		return;
	printf("relay   %s %s", r->url, or_dash(r->state));
	if (r->path[0])
		printf(" into '%s'", r->path);
	printf("; sent %" PRIu64 " packets, %s; %s behind; %" PRIu64
	       " events skipped; %" PRIu32 " reconnection(s)\n",
	       r->packets_sent, bytes(sent, sizeof(sent), r->bytes_sent),
	       bytes(left, sizeof(left), r->backlog_bytes), r->events_skipped,
	       r->reconnects);
	if (r->last_error[0])
		printf("        last trouble: %s\n", r->last_error);
}

static void json_relay(struct tracer__json *j, const Tracer__RelayStatus *r)
{
	if (!r)
		return;
	tracer__json_open(j, "relay", '{');
	tracer__json_str(j, "url", r->url);
	tracer__json_str(j, "state", r->state);
	tracer__json_str(j, "path", r->path);
	tracer__json_u64(j, "bytes_sent", r->bytes_sent);
	tracer__json_u64(j, "packets_sent", r->packets_sent);
	tracer__json_u64(j, "events_skipped", r->events_skipped);
	tracer__json_u64(j, "reconnects", r->reconnects);
	tracer__json_u64(j, "backlog_bytes", r->backlog_bytes);
	tracer__json_str(j, "last_error", r->last_error);
	tracer__json_close(j, '}');
}

static void print_daemon(const Tracer__Status *st)
{
	char cap[32], sub[32], tot[32], now[32];

	printf("tracerd pid %" PRIu32 "\nversion %s\nsocket  %s\noutput  %s\n",
	       st->pid, or_dash(st->version), st->socket, st->output);
	if (st->session_id) {
		printf("session %" PRIu64 " recording into %s\n",
		       st->session_id, st->session_directory);
		printf("mode    %s; filter '%s'; live interval ", or_dash(st->mode),
		       st->filter[0] ? st->filter : TRACER_DEFAULT_EVENTS);
		if (st->live_interval_ms)
			printf("%" PRIu32 " ms\n", st->live_interval_ms);
		else
			printf("default\n");
	} else {
		printf("session none (tracectl start begins one)\n");
	}
	printf("pools   cap %s per process", bytes(cap, sizeof(cap),
						      st->max_memory));
	if (st->max_total_memory)	/* 0: an older tracerd */
		printf(", %s in all (%s now)",
		       bytes(tot, sizeof(tot), st->max_total_memory),
		       bytes(now, sizeof(now), st->pools_bytes));
	printf("; default channel %" PRIu32 " x %s\n", st->subbuf_count,
	       bytes(sub, sizeof(sub), st->subbuf_size));
	if (st->clock[0]) {	/* "": an older tracerd */
		printf("clock   %s", st->clock);
		if (st->tsc_hz)
			printf(" (%" PRIu64 " Hz, %" PRId64 " ns off "
			       "CLOCK_MONOTONIC at the last anchor)", st->tsc_hz,
			       st->clock_error_ns);
		printf(": %s", or_dash(st->clock_why));
		if (st->tick_packets)
			printf(" (%" PRIu64 " packets so far)",
			       st->tick_packets);
		printf("\n");
	}
	if (st->refused)
		printf("refused %" PRIu64 " registration(s); last: %s\n",
		       st->refused, or_dash(st->last_refusal));
	print_relay(st->relay);
}

static void print_thread(const Tracer__ThreadStatus *t)
{
	printf("         tid %-7" PRIu32 " %-16s buffer %-5" PRIu32
	       " written %-10" PRIu64 " lost %-8" PRIu64 " use %.1f%%\n",
	       t->tid, or_dash(t->name), t->buffer, t->events_written,
	       t->events_lost, t->use_permille / 10.0);
}

/* LOST stays the 7th column: scripts read it. */
static void print_process(const Tracer__ProcessStatus *p)
{
	size_t i;

	printf("%8" PRIu32 " %-16s %7" PRIu32 " %6" PRIu32 " %10" PRIu64
	       " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %s\n", p->pid,
	       or_dash(p->name), p->buffers, p->buffers_in_use,
	       p->pool_bytes >> 10, p->pool_cap >> 10, p->events_lost,
	       p->events_written, or_dash(p->filter));
	for (i = 0; i < p->n_threads; i++)
		print_thread(p->threads[i]);
	if (p->threads_stashed)
		printf("         %" PRIu32 " more thread(s) without a buffer: "
		       "their events wait in the process until one is free\n",
		       p->threads_stashed);
}

/* The processes that wait for a session (waiting.c). */
struct waiting {
	struct tracer__waiting *v;
	size_t n;
};

static void print_waiting(const struct waiting *w)
{
	size_t i;

	if (!w->n)
		return;
	printf("waiting %zu (preloaded, not connected: they connect when a "
	       "session starts)\n%8s %s\n", w->n, "PID", "NAME");
	for (i = 0; i < w->n; i++)
		printf("%8" PRIu32 " %s\n", w->v[i].pid, w->v[i].name);
}

static void print_status(const Tracer__Status *st, const struct waiting *w)
{
	size_t i;

	print_daemon(st);
	printf("processes %zu\n", st->n_processes);
	if (st->n_processes)
		printf("%8s %-16s %7s %6s %10s %10s %10s %10s %s\n", "PID",
		       "NAME", "BUFFERS", "IN-USE", "POOL-KIB", "CAP-KIB",
		       "LOST", "WRITTEN", "FILTER");
	for (i = 0; i < st->n_processes; i++)
		print_process(st->processes[i]);
	print_waiting(w);
}

static void json_thread(struct tracer__json *j, const Tracer__ThreadStatus *t)
{
	tracer__json_open(j, NULL, '{');
	tracer__json_u64(j, "tid", t->tid);
	tracer__json_str(j, "name", t->name);
	tracer__json_u64(j, "buffer", t->buffer);
	tracer__json_u64(j, "events_written", t->events_written);
	tracer__json_u64(j, "events_lost", t->events_lost);
	tracer__json_u64(j, "use_permille", t->use_permille);
	tracer__json_close(j, '}');
}

static void json_counters(struct tracer__json *j,
			  const Tracer__ProcessStatus *p)
{
	tracer__json_u64(j, "buffers", p->buffers);
	tracer__json_u64(j, "buffers_in_use", p->buffers_in_use);
	tracer__json_u64(j, "pool_bytes", p->pool_bytes);
	tracer__json_u64(j, "bytes_written", p->bytes_written);
	tracer__json_u64(j, "packets_written", p->packets_written);
	tracer__json_u64(j, "events_lost", p->events_lost);
	tracer__json_u64(j, "segments", p->segments);
	tracer__json_u64(j, "events_written", p->events_written);
	tracer__json_u64(j, "pool_cap", p->pool_cap);
	tracer__json_u64(j, "subbuf_size", p->subbuf_size);
	tracer__json_u64(j, "subbuf_count", p->subbuf_count);
	tracer__json_u64(j, "filter_sent", p->filter_sent);
	tracer__json_u64(j, "filter_applied", p->filter_applied);
	tracer__json_u64(j, "events_lost_session", p->events_lost_session);
	tracer__json_u64(j, "threads_stashed", p->threads_stashed);
}

static void json_process(struct tracer__json *j,
			 const Tracer__ProcessStatus *p)
{
	size_t i;

	tracer__json_open(j, NULL, '{');
	tracer__json_u64(j, "pid", p->pid);
	tracer__json_str(j, "name", p->name);
	json_counters(j, p);
	tracer__json_str(j, "filter", p->filter);
	tracer__json_open(j, "threads", '[');
	for (i = 0; i < p->n_threads; i++)
		json_thread(j, p->threads[i]);
	tracer__json_close(j, ']');
	tracer__json_close(j, '}');
}

static void json_waiting(struct tracer__json *j, const struct waiting *w)
{
	size_t i;

	tracer__json_open(j, "waiting", '[');
	for (i = 0; i < w->n; i++) {
		tracer__json_open(j, NULL, '{');
		tracer__json_u64(j, "pid", w->v[i].pid);
		tracer__json_str(j, "name", w->v[i].name);
		tracer__json_close(j, '}');
	}
	tracer__json_close(j, ']');
}

static void json_status(const Tracer__Status *st, const struct waiting *w)
{
	struct tracer__json j;
	size_t i;

	tracer__json_init(&j, stdout);
	tracer__json_open(&j, NULL, '{');
	tracer__json_u64(&j, "pid", st->pid);
	tracer__json_str(&j, "version", st->version);
	tracer__json_str(&j, "socket", st->socket);
	tracer__json_str(&j, "output", st->output);
	tracer__json_u64(&j, "session_id", st->session_id);
	tracer__json_str(&j, "session_directory", st->session_directory);
	tracer__json_str(&j, "mode", st->mode);
	tracer__json_str(&j, "filter", st->filter);
	tracer__json_u64(&j, "live_interval_ms", st->live_interval_ms);
	tracer__json_u64(&j, "max_memory", st->max_memory);
	tracer__json_u64(&j, "subbuf_size", st->subbuf_size);
	tracer__json_u64(&j, "subbuf_count", st->subbuf_count);
	tracer__json_u64(&j, "refused", st->refused);
	tracer__json_str(&j, "last_refusal", st->last_refusal);
	tracer__json_str(&j, "clock", st->clock);
	tracer__json_str(&j, "clock_why", st->clock_why);
	tracer__json_u64(&j, "tsc_hz", st->tsc_hz);
	tracer__json_i64(&j, "clock_error_ns", st->clock_error_ns);
	tracer__json_u64(&j, "tick_packets", st->tick_packets);
	json_relay(&j, st->relay);
	tracer__json_open(&j, "processes", '[');
	for (i = 0; i < st->n_processes; i++)
		json_process(&j, st->processes[i]);
	tracer__json_close(&j, ']');
	json_waiting(&j, w);
	tracer__json_close(&j, '}');
}

/* The processes that wait at the tracerd at socket: those it does not
 * know (st). Returns 0 or CTL_FAIL (reported). */
static int find_waiting(const char *socket, const Tracer__Status *st,
			struct waiting *w)
{
	uint32_t *known = calloc(st->n_processes + 1, sizeof(*known));
	ssize_t n;
	size_t i;

	if (!known)
		return tracer__ctl_fail("out of memory");
	for (i = 0; i < st->n_processes; i++)
		known[i] = st->processes[i]->pid;
	n = tracer__ctl_waiting(socket, known, st->n_processes, &w->v);
	free(known);
	if (n < 0)
		return tracer__ctl_fail("cannot look for the processes that "
					"wait for a session: %s",
					strerror((int)-n));
	w->n = (size_t)n;
	return CTL_OK;
}

static const struct tracer__ctl_opt status_opts[] = {
	{ "json", KEY_JSON, false, 0 },
	{ NULL, 0, false, 0 },
};

int tracer__ctl_status(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__StatusRequest sr = TRACER__STATUS_REQUEST__INIT;
	struct tracer__ctl_args a;
	struct waiting w = { NULL, 0 };
	bool json = false;
	tracer_msg *r;
	int key, ret;

	tracer__ctl_args_init(&a, c, status_opts, argc, argv);
	while ((key = tracer__ctl_next(&a)) == KEY_JSON)
		json = true;
	if (key == CTL_STOP)
		return a.status;
	if (key == CTL_ARG)
		return tracer__ctl_syntax_error(c, "unexpected argument '%s'",
						a.val);
	if (tracer__ctl_resolve_socket(c))
		return CTL_FAIL;
	m.body_case = TRACER__MESSAGE__BODY_STATUS_REQUEST;
	m.status_request = &sr;
	r = tracer__ctl_call(c, &m, TRACER__MESSAGE__BODY_STATUS);
	if (!r)
		return CTL_FAIL;
	ret = find_waiting(c->socket, r->status, &w);
	if (!ret && json)
		json_status(r->status, &w);
	else if (!ret)
		print_status(r->status, &w);
	free(w.v);
	tracer__wire_free(r);
	return ret;
}
