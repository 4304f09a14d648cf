/*
 * session.c - sessions: `tracectl start`, `stop` and `status`.
 *
 * Start creates OUTPUT/session-YYYYMMDD-HHMMSS-ID with one directory per
 * traced process (NAME-PID, with its process.meta) and publishes the
 * session id in every control page: threads start recording at their next
 * event.
 *
 * Stop publishes 0 in every control page, then drains every channel,
 * including the committed part of each open sub-buffer, retrying every
 * couple of milliseconds while a record is still being written (a thread
 * that read the old session id just before the switch); only then are the
 * files closed and the stop answered, so `tracectl stop` returns once
 * everything recorded is in the files. The format of process.meta is in
 * doc/session-files.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracerd.h"

#define STOP_RETRY_MS	2
#define STOP_GIVE_UP_MS	2000

uint64_t tracerd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Percent-encode s (doc/session-files.md) onto f. */
static void put_field(FILE *f, const char *s)
{
	if (!*s) {
		fputc('%', f);
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch == '%' || ch == 0x7f)
			fprintf(f, "%%%02X", ch);
		else
			fputc(ch, f);
	}
}

static FILE *open_meta(const struct tracerd_process *p, const char *mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/process.meta", p->dir);
	f = fopen(path, mode);
	if (!f)
		tracerd_log("cannot write '%s': %s", path, strerror(errno));
	return f;
}

static void put_callsites(FILE *f, const struct tracerd_process *p,
			  size_t from)
{
	size_t i;

	for (i = from; i < p->ncs; i++) {
		const struct tracerd_callsite *cs = &p->cs[i];

		fprintf(f, "callsite %" PRIu32 " %d %s %" PRIu32 " ", cs->id,
			cs->vital ? 1 : 0, cs->types[0] ? cs->types : "-",
			cs->line);
		put_field(f, cs->file);
		fputc(' ', f);
		put_field(f, cs->name);
		fputc(' ', f);
		put_field(f, cs->format);
		fputc('\n', f);
	}
}

static int write_meta(struct tracerd_process *p)
{
	FILE *f = open_meta(p, "w");
	size_t i;

	if (!f)
		return -errno;
	fprintf(f, "tracer-process 1\npid %d\nppid %d\nname ", (int)p->pid,
		(int)p->ppid);
	put_field(f, p->name);
	fprintf(f, "\nstart_time %" PRIu64 "\nclock_offset %" PRIu64 "\nargv",
		p->start_time_ns, p->clock_offset_ns);
	for (i = 0; i < p->argc; i++) {
		fputc(' ', f);
		put_field(f, p->argv[i]);
	}
	fputc('\n', f);
	put_callsites(f, p, 0);
	if (fflush(f)) {
		fclose(f);
		return -errno;
	}
	p->meta = f;
	return 0;
}

/* process.meta stays open while the session runs; flushed after scans. */
void tracerd_session_append_callsites(struct tracerd_process *p, size_t from)
{
	if (p->meta) {
		put_callsites(p->meta, p, from);
		fflush(p->meta);
	}
}

void tracerd_session_note_thread(struct tracerd_process *p, uint32_t tid,
				 const char *name)
{
	if (p->meta) {
		fprintf(p->meta, "thread %" PRIu32 " ", tid);
		put_field(p->meta, name);
		fputc('\n', p->meta);
	}
}

/* NAME-PID, with the name made safe for a file name. */
static void process_dir_name(const struct tracerd_process *p, char *buf,
			     size_t size)
{
	size_t i, n;

	n = (size_t)snprintf(buf, size, "%s", p->name[0] ? p->name : "process");
	for (i = 0; i < n && i < size; i++)
		if (buf[i] == '/' || (unsigned char)buf[i] <= 0x20 ||
		    (i == 0 && buf[i] == '.'))
			buf[i] = '_';
	snprintf(buf + strlen(buf), size - strlen(buf), "-%d", (int)p->pid);
}

int tracerd_session_add_process(struct tracerd_process *p)
{
	char name[128], path[4096];
	int ret;

	process_dir_name(p, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", p->d->session_dir, name);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		tracerd_log("cannot create '%s': %s", path, strerror(errno));
		return ret;
	}
	p->dir = strdup(path);
	if (!p->dir)
		return -ENOMEM;
	ret = write_meta(p);
	if (ret) {
		free(p->dir);
		p->dir = NULL;
	}
	return ret;
}

static void publish(struct tracerd *d, uint64_t session)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		__atomic_store_n(&p->control->session, session,
				 __ATOMIC_SEQ_CST);
}

static void reply_session(struct tracerd_client *c, uint64_t id,
			  const char *dir)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Session s = TRACER__SESSION__INIT;

	s.id = id;
	s.directory = (char *)dir;
	m.body_case = TRACER__MESSAGE__BODY_SESSION;
	m.session = &s;
	tracerd_send(c, &m, NULL, 0);
}

/* mkdir -p for the output directory. */
static int make_dirs(const char *path)
{
	char buf[4096], *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * OUTPUT/session-YYYYMMDD-HHMMSS-ID; *id is bumped past a name an earlier
 * tracerd used in the same second.
 */
static char *new_session_dir(struct tracerd *d, uint64_t *id, int *err)
{
	char path[4096], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int tries;

	*err = make_dirs(d->cfg.output_dir);
	if (*err)
		return NULL;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (tries = 0; tries < 1000; tries++, (*id)++) {
		snprintf(path, sizeof(path), "%s/session-%s-%" PRIu64,
			 d->cfg.output_dir, stamp, *id);
		if (mkdir(path, 0755) == 0)
			return strdup(path);
		if (errno != EEXIST)
			break;
	}
	*err = -errno;
	return NULL;
}

void tracerd_session_start(struct tracerd_client *c)
{
	struct tracerd *d = c->d;
	struct tracerd_process *p;
	char why[4200];
	uint64_t id;
	int err = 0;

	if (d->session_id || d->stopping) {
		snprintf(why, sizeof(why), "a session is already %s: '%s'",
			 d->stopping ? "stopping" : "started", d->session_dir);
		tracerd_send_error(c, -EALREADY, why);
		return;
	}
	id = d->last_session + 1;
	d->session_dir = new_session_dir(d, &id, &err);
	if (!d->session_dir) {
		snprintf(why, sizeof(why), "cannot create a session directory "
			 "under '%s': %s", d->cfg.output_dir,
			 strerror(err ? -err : ENOMEM));
		tracerd_log("%s", why);
		tracerd_send_error(c, err ? err : -ENOMEM, why);
		return;
	}
	d->session_id = d->last_session = id;
	cds_list_for_each_entry(p, &d->processes, node) {
		/*
		 * A thread that read the old session id just before the last
		 * stop may have committed its event since: it belongs to no
		 * session, so it is dropped (no directory yet) rather than
		 * filed under this one.
		 */
		tracerd_process_flush(p);
		tracerd_session_add_process(p);
	}
	publish(d, d->session_id);
	tracerd_log("session %" PRIu64 " started: '%s'", d->session_id,
		    d->session_dir);
	reply_session(c, d->session_id, d->session_dir);
}

/* Drain until no record is in flight (or we give up), then answer. */
static void stop_step(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	struct tracerd_process *p;
	struct tracerd_client *c, *tmp;
	unsigned busy = 0;

	cds_list_for_each_entry(p, &d->processes, node)
		busy += tracerd_process_flush(p);
	if (busy && tracerd_now_ms() < d->stop_deadline) {
		uv_timer_start(&d->stop_timer, stop_step, STOP_RETRY_MS, 0);
		return;
	}
	if (busy)
		tracerd_log("stop: %u record(s) still being written after "
			    "%d ms; not waiting for them", busy,
			    STOP_GIVE_UP_MS);
	cds_list_for_each_entry(p, &d->processes, node)
		tracerd_process_close_files(p);
	tracerd_log("session %" PRIu64 " stopped: '%s'", d->session_id,
		    d->session_dir);
	cds_list_for_each_entry_safe(c, tmp, &d->stop_waiters, stop_node) {
		cds_list_del(&c->stop_node);
		c->waits_stop = false;
		reply_session(c, d->session_id, d->session_dir);
	}
	free(d->session_dir);
	d->session_dir = NULL;
	d->session_id = 0;
	d->stopping = false;
	if (d->quitting)
		tracerd_quit(d);
}

static void begin_stop(struct tracerd *d)
{
	d->stopping = true;
	publish(d, 0);
	d->stop_deadline = tracerd_now_ms() + STOP_GIVE_UP_MS;
	d->stop_timer.data = d;
	stop_step(&d->stop_timer);
}

void tracerd_session_stop(struct tracerd_client *c)
{
	struct tracerd *d = c->d;

	if (!d->session_id) {
		tracerd_send_error(c, -ENOENT, "no session is started");
		return;
	}
	if (!c->waits_stop) {
		c->waits_stop = true;
		cds_list_add_tail(&c->stop_node, &d->stop_waiters);
	}
	if (!d->stopping)
		begin_stop(d);
}

void tracerd_status(struct tracerd_client *c)
{
	struct tracerd *d = c->d;
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Status st = TRACER__STATUS__INIT;
	Tracer__ProcessStatus *ps = NULL, **pp = NULL;
	struct tracerd_process *p;
	size_t n = 0, i = 0;

	cds_list_for_each_entry(p, &d->processes, node)
		n++;
	ps = calloc(n ? n : 1, sizeof(*ps));
	pp = calloc(n ? n : 1, sizeof(*pp));
	if (!ps || !pp) {
		free(ps);
		free(pp);
		tracerd_send_error(c, -ENOMEM, "out of memory");
		return;
	}
	cds_list_for_each_entry(p, &d->processes, node) {
		tracer__process_status__init(&ps[i]);
		tracerd_process_status(p, &ps[i]);
		pp[i] = &ps[i];
		i++;
	}
	st.pid = (uint32_t)getpid();
	st.socket = (char *)d->cfg.socket_path;
	st.output = (char *)d->cfg.output_dir;
	st.session_id = d->session_id;
	st.session_directory = d->session_dir ? d->session_dir : (char *)"";
	st.n_processes = n;
	st.processes = pp;
	m.body_case = TRACER__MESSAGE__BODY_STATUS;
	m.status = &st;
	tracerd_send(c, &m, NULL, 0);
	free(ps);
	free(pp);
}

void tracerd_quit(struct tracerd *d)
{
	d->quitting = true;
	if (d->session_id) {
		if (!d->stopping)
			begin_stop(d);
		return;		/* stop_step comes back here */
	}
	uv_stop(d->loop);
}
