/*
 * session.c - sessions: `tracectl start`, `stop`, `filter`, `switch`,
 * `snapshot`, `status` and `list`.
 *
 * Start checks the options, sends the session's filter to every process
 * whose filter differs and waits (control.c) until they confirm it, then
 * creates OUTPUT/session-YYYYMMDD-HHMMSS-ID (or the client's empty
 * directory: SessionStart.directory) with one directory per traced
 * process (NAME-PID, with its process.meta), publishes the session in
 * every control page and queues the update signal: threads start recording
 * at once, with the filter already in place.
 *
 * Stop publishes "no session" in every control page, then drains every
 * channel, including the committed part of each open sub-buffer, retrying
 * every couple of milliseconds while a record is still being written (a
 * thread that read the old state just before the switch); only then are
 * the files closed and the stop answered, so `tracectl stop` returns once
 * everything recorded is in the files. In flight-recorder mode nothing is
 * written while the session runs; stop writes what the buffers hold.
 *
 * Switch asks every thread to close its sub-buffers (control page and
 * signal) and drains everything committed, the same way. Snapshot (flight
 * mode) writes what every buffer holds into SESSION/snapshot-N without
 * consuming it. The files of a process directory are meta.c's.
 */
#include <dirent.h>
#include <grp.h>
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
#include "relay.h"
#include "pattern.h"
#include "spill.h"

#define STOP_RETRY_MS	2
#define PROGRESS_MS	5000	/* a stop waiting for the spill says so */
#define STOP_GIVE_UP_MS	2000
#define LIVE_DEFAULT_MS	1000
#define LIVE_MAX_MS	3600000
/* Room under a chosen session directory for NAME-PID.N/FILE (4096). */
#define CHOSEN_DIR_MAX	3584

uint64_t tracerd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *tracerd_session_filter_text(struct tracerd *d)
{
	if ((d->session_id || d->starting) && d->sess.events)
		return d->sess.events;
	return TRACER_DEFAULT_EVENTS;
}

/* Every control page says session (0: none), then threads are told. */
static void publish(struct tracerd *d, uint64_t session, bool bump_switch)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node) {
		tracerd_control_publish(p, session, d->sess.mode, bump_switch);
		tracerd_control_signal(p);
	}
	/* Lazy processes: their filters were sent before this. */
	if (!bump_switch)
		tracerd_state_publish(d, session);
}

static const char *mode_name(uint32_t mode)
{
	return mode == TRACER_MODE_FLIGHT ? "flight" : "discard";
}

static void reply_session(struct tracerd_client *c, uint64_t id,
			  const char *dir, const char *warning)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Session s = TRACER__SESSION__INIT;

	s.id = id;
	s.directory = (char *)dir;
	s.mode = (char *)mode_name(c->d->sess.mode);
	s.warning = (char *)(warning ? warning : "");
	m.body_case = TRACER__MESSAGE__BODY_SESSION;
	m.session = &s;
	tracerd_send(c, &m, NULL, 0);
}

void tracerd_reply_done(struct tracerd_client *c, uint32_t processes,
			const char *dir, const char *warning)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Done done = TRACER__DONE__INIT;

	done.processes = processes;
	done.directory = (char *)(dir ? dir : "");
	done.warning = (char *)(warning ? warning : "");
	m.body_case = TRACER__MESSAGE__BODY_DONE;
	m.done = &done;
	tracerd_send(c, &m, NULL, 0);
}

/*
 * A directory root made for traces: the tracing group's too (group
 * tracing, set-group-ID so that everything made below it is the group's,
 * and readable by it through tracerd's umask 027), unless traces are
 * world-readable anyway or there is no such group.
 */
static void share_with_group(const struct tracerd *d, const char *dir)
{
	struct group *g;

	if (geteuid() != 0 || d->cfg.world_readable ||
	    !(g = getgrnam("tracing")))
		return;
	if (chown(dir, (uid_t)-1, g->gr_gid) < 0 || chmod(dir, 02750) < 0)
		tracerd_log("cannot give '%s' to the tracing group: %s", dir,
			    strerror(errno));
}

/* mkdir -p for the output directory. */
static int make_dirs(const struct tracerd *d, const char *path)
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
	if (mkdir(buf, 0755) == 0)
		share_with_group(d, buf);
	else if (errno != EEXIST)
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

	*err = make_dirs(d, d->cfg.output_dir);
	if (*err)
		return NULL;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (tries = 0; tries < 1000; tries++, (*id)++) {
		snprintf(path, sizeof(path), "%s/session-%s-%" PRIu64,
			 d->cfg.output_dir, stamp, *id);
		if (mkdir(path, 0755) == 0) {
			share_with_group(d, path);
			return strdup(path);
		}
		if (errno != EEXIST)
			break;
	}
	*err = -errno;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Start                                                               */

/* The last component of path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void clear_opts(struct tracerd *d)
{
	free(d->sess.events);
	free(d->sess.relay);
	memset(&d->sess, 0, sizeof(d->sess));
}

static int parse_mode(const char *s, uint32_t *mode)
{
	if (!s || !*s || !strcmp(s, "discard"))
		*mode = TRACER_MODE_DISCARD;
	else if (!strcmp(s, "flight"))
		*mode = TRACER_MODE_FLIGHT;
	else
		return -EINVAL;
	return 0;
}

/* The session's relay: the request's, else tracerd's --relay; "none":
 * none. In flight mode, its snapshots and what its stop writes go there
 * (nothing is written while it runs). */
static int relay_opt(struct tracerd *d, const Tracer__SessionStart *req,
		     struct tracerd_session_opts *o, char *why, size_t n)
{
	const char *url = req->relay && *req->relay ? req->relay
						    : d->cfg.relay;

	if (!url || !strcmp(url, "none")) {
		if (!req->relay_only)
			return 0;
		snprintf(why, n, "--relay-only without a relay");
		return -EINVAL;
	}
	if (tracerd_relay_check_url(url, why, n))
		return -EINVAL;
	o->relay = strdup(url);
	o->relay_only = req->relay_only;
	return o->relay ? 0 : -ENOMEM;
}

/* Check req into o; on error why says what is wrong. */
static int check_opts(struct tracerd *d, const Tracer__SessionStart *req,
		      struct tracerd_session_opts *o, char *why, size_t n)
{
	struct tracer__patterns pats;
	int ret;

	memset(o, 0, sizeof(*o));
	if (parse_mode(req->mode, &o->mode)) {
		snprintf(why, n, "unknown mode '%.100s' (discard or flight)",
			 req->mode);
		return -EINVAL;
	}
	ret = tracer__patterns_parse(req->events, &pats, why, n);
	if (ret)
		return ret;
	tracer__patterns_free(&pats);
	o->subbuf_size = req->subbuf_size;
	o->subbuf_count = req->subbuf_count;
	/* A geometry no process could join is refused here, not by
	 * every process's registration. */
	ret = tracerd_pool_geometry_ok(d, o->subbuf_size ? o->subbuf_size :
				       d->cfg.subbuf_size[0], o->subbuf_count ?
				       o->subbuf_count : d->cfg.subbuf_count[0],
				       why, n);
	if (ret)
		return ret;
	o->live_ms = req->live_interval_ms ? req->live_interval_ms
					   : LIVE_DEFAULT_MS;
	if (o->live_ms > LIVE_MAX_MS) {
		snprintf(why, n, "live interval above %d ms", LIVE_MAX_MS);
		return -EINVAL;
	}
	ret = relay_opt(d, req, o, why, n);
	if (ret)
		return ret;
	o->events = strdup(req->events && *req->events ? req->events
						       : TRACER_DEFAULT_EVENTS);
	return o->events ? 0 : -ENOMEM;
}

static bool start_refused(struct tracerd_client *c)
{
	struct tracerd *d = c->d;
	char why[4200];

	if (d->quitting) {	/* relays finishing before the exit */
		tracerd_send_error(c, -ESHUTDOWN, "tracerd is exiting");
		return true;
	}
	if (!d->session_id && !d->stopping && !d->starting)
		return false;
	snprintf(why, sizeof(why), "a session is already %s%s%s%s",
		 d->stopping ? "stopping" : d->starting ? "starting" :
		 "started", d->session_dir ? ": '" : "",
		 d->session_dir ? d->session_dir : "",
		 d->session_dir ? "'" : "");
	tracerd_send_error(c, -EALREADY, why);
	return true;
}

/* 0 if dir holds nothing, -ENOTEMPTY if it does, or -errno. */
static int empty_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!dp)
		return -errno;
	while (!ret && (e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ret = -ENOTEMPTY;
	closedir(dp);
	return ret;
}

/*
 * The session directory a client chose (SessionStart.directory): only for
 * tracerd's own user (the directory is written with tracerd's rights),
 * absolute, created with its parents if missing, else an empty directory.
 * Returns 0 or -errno with why filled.
 */
static int chosen_dir(const struct tracerd_client *c, const char *dir,
		      char *why, size_t n)
{
	struct stat st;
	int err;

	if (c->uid != geteuid()) {
		snprintf(why, n, "a session directory of your choice is only "
			 "for tracerd's own user (uid %d), not uid %d",
			 (int)geteuid(), (int)c->uid);
		return -EPERM;
	}
	if (dir[0] != '/' || strlen(dir) > CHOSEN_DIR_MAX) {
		snprintf(why, n, "session directory '%.200s': not an absolute "
			 "path of at most %d bytes", dir, CHOSEN_DIR_MAX);
		return -EINVAL;
	}
	err = make_dirs(c->d, dir);
	if (!err && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
		err = -ENOTDIR;
	if (!err)
		err = empty_dir(dir);
	if (err == -ENOTEMPTY)
		snprintf(why, n, "session directory '%s' exists and is not "
			 "empty", dir);
	else if (err)
		snprintf(why, n, "cannot use '%s' as the session directory: %s",
			 dir, strerror(-err));
	return err;
}

static int make_session_dir(struct tracerd_client *c,
			    const Tracer__SessionStart *req)
{
	struct tracerd *d = c->d;
	char why[4200];
	int err = 0;

	d->pending_id = d->last_session + 1;
	if (req->directory && req->directory[0]) {
		err = chosen_dir(c, req->directory, why, sizeof(why));
		if (!err && !(d->session_dir = strdup(req->directory)))
			err = -ENOMEM;
		if (!err)
			return 0;
		if (err == -ENOMEM)
			snprintf(why, sizeof(why), "out of memory");
	} else {
		d->session_dir = new_session_dir(d, &d->pending_id, &err);
		if (d->session_dir)
			return 0;
		snprintf(why, sizeof(why), "cannot create a session directory "
			 "under '%s': %s", d->cfg.output_dir,
			 strerror(err ? -err : ENOMEM));
	}
	tracerd_log("%s", why);
	tracerd_send_error(c, err ? err : -ENOMEM, why);
	return -1;
}

void tracerd_session_start(struct tracerd_client *c,
			   const Tracer__SessionStart *req)
{
	struct tracerd *d = c->d;
	struct tracerd_session_opts o;
	struct tracerd_process *p;
	char why[600];
	int ret;

	if (start_refused(c))
		return;
	ret = check_opts(d, req, &o, why, sizeof(why));
	if (ret) {
		tracerd_send_error(c, ret, ret == -ENOMEM ? "out of memory"
							   : why);
		free(o.relay);
		return;
	}
	if (make_session_dir(c, req)) {
		free(o.events);
		free(o.relay);
		return;
	}
	tracerd_finish_ends(d);	/* no end goes on into the new session */
	d->sess = o;
	d->starting = true;
	/* Pools first (Segment), then filters: in the order a process that
	 * registered outside a session reads them (libtracer/client.c). */
	cds_list_for_each_entry(p, &d->processes, node) {
		tracerd_process_ensure_pool(p);
		tracerd_control_send_filter(p, d->sess.events);
	}
	if (!tracerd_wait_filters(c, TRACERD_WAIT_START, 0)) {
		tracerd_session_started(d, NULL, NULL);	/* no one to tell */
		return;
	}
	tracerd_waiters_check(d);
}

static void on_live(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		tracerd_process_live(p);
	tracerd_relay_tick(d);
}

/* A process joins the session: directory, reader mode, counters. */
static void join(struct tracerd_process *p)
{
	if (p->adopting)
		return;		/* joins when its pool is in (adopt.c) */
	/*
	 * A thread that read the old state just before the last stop may
	 * have committed its event since: it belongs to no session, so it
	 * is dropped (no directory yet) rather than filed under this one.
	 * Not so for a process whose tracerd died: its buffers hold what it
	 * recorded meanwhile, kept for this session.
	 */
	bool recovered = p->recovering;

	if (!recovered)
		tracerd_process_flush(p);
	p->recovering = false;
	tracerd_process_set_mode(p, p->d->sess.mode);
	tracerd_session_add_process(p);
	tracerd_process_baseline(p, recovered);
	p->in_session = true;
}

void tracerd_session_started(struct tracerd *d, struct tracerd_client *c,
			     const char *warning)
{
	struct tracerd_process *p;

	d->starting = false;
	d->session_id = d->last_session = d->pending_id;
	d->snapshots = 0;
	tracerd_ended_clear(d);
	tracerd_relay_start(d);	/* before the processes' directories */
	cds_list_for_each_entry(p, &d->processes, node)
		join(p);
	publish(d, d->session_id, false);
	if (d->sess.mode == TRACER_MODE_DISCARD)
		uv_timer_start(&d->live_timer, on_live, d->sess.live_ms,
			       d->sess.live_ms);
	tracerd_log("session %" PRIu64 " started (%s, events '%s'): '%s'",
		    d->session_id, mode_name(d->sess.mode), d->sess.events,
		    d->session_dir);
	if (c)
		reply_session(c, d->session_id, d->session_dir, warning);
}

/* ------------------------------------------------------------------ */
/* Stop                                                                */

/* Everything is in the files: answer the stop. */
static void stopped(struct tracerd *d)
{
	struct tracerd_client *c, *tmp;

	tracerd_log("session %" PRIu64 " stopped: '%s'", d->session_id,
		    d->session_dir);
	tracerd_relay_stop(d);	/* sends the rest on its own */
	if (d->sess.mode == TRACER_MODE_FLIGHT)	/* what the stop wrote */
		tracerd_relay_send_dir(d, d->session_dir,
				       base_name(d->session_dir));
	cds_list_for_each_entry_safe(c, tmp, &d->stop_waiters, stop_node) {
		cds_list_del(&c->stop_node);
		c->waits_stop = false;
		reply_session(c, d->session_id, d->session_dir, NULL);
	}
	free(d->session_dir);
	d->session_dir = NULL;
	d->session_id = 0;
	d->stopping = false;
	tracerd_ended_clear(d);
	clear_opts(d);
	if (d->quitting)
		tracerd_quit(d);
}

/*
 * A stop waits for the spill: tell its clients how much is left, now and
 * every PROGRESS_MS, so that they keep waiting (tracectl gives up on a
 * daemon silent for a minute).
 */
static void tell_progress(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	Tracer__Progress pr = TRACER__PROGRESS__INIT;
	tracer_msg m = TRACER__MESSAGE__INIT;
	struct tracerd_client *c, *tmp;

	pr.bytes_left = tracerd_spill_backlog(d);
	m.body_case = TRACER__MESSAGE__BODY_PROGRESS;
	m.progress = &pr;
	cds_list_for_each_entry_safe(c, tmp, &d->stop_waiters, stop_node)
		tracerd_send(c, &m, NULL, 0);
	uv_timer_start(&d->stop_timer, tell_progress, PROGRESS_MS, 0);
}

/*
 * The files are closed; the stop is answered once the packets held back
 * (spill.c) are written out too, so that what the stop returns is whole.
 */
static void end_session(struct tracerd *d)
{
	struct tracerd_process *p;
	uint64_t held;

	cds_list_for_each_entry(p, &d->processes, node) {
		tracerd_process_close_files(p);
		p->in_session = false;
	}
	held = tracerd_spill_backlog(d);
	if (!held) {
		stopped(d);
		return;
	}
	tracerd_log("stop: writing out %" PRIu64 " KiB of packets held back "
		    "while files were slow to make", (held + 1023) / 1024);
	d->spill.stop_waits = true;
	tell_progress(&d->stop_timer);
}

/*
 * A turn of the splitter. Threads that asked for a larger pool are served
 * first: with files being made, the loop is busy, and a burst of threads
 * would otherwise find the pool short before the next drain pass.
 */
static void on_spill_turn(uv_idle_t *h)
{
	struct tracerd *d = h->data;
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->pool.nseg &&
		    TRACER_READ_ONCE(tracerd_pool_line(p)->want_grow))
			tracerd_pool_maybe_grow(p);
	if (tracerd_spill_work(d))
		return;
	uv_idle_stop(h);
	if (d->spill.stop_waits) {
		d->spill.stop_waits = false;
		uv_timer_stop(&d->stop_timer);
		stopped(d);
	}
}

void tracerd_spill_kick(struct tracerd *d)
{
	if (!uv_is_active((uv_handle_t *)&d->spill.idle))
		uv_idle_start(&d->spill.idle, on_spill_turn);
}

/* Every process drained; the records still being written. */
static unsigned flush_all(struct tracerd *d)
{
	struct tracerd_process *p;
	unsigned busy = 0;

	cds_list_for_each_entry(p, &d->processes, node)
		busy += tracerd_process_flush(p);
	return busy;
}

/* Drain until no record is in flight (or we give up), then answer. */
static void stop_step(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	unsigned busy = flush_all(d);

	if (busy && tracerd_now_ms() < d->stop_deadline) {
		uv_timer_start(&d->stop_timer, stop_step, STOP_RETRY_MS, 0);
		return;
	}
	if (busy)
		tracerd_log("stop: %u record(s) still being written after "
			    "%d ms; not waiting for them", busy,
			    STOP_GIVE_UP_MS);
	end_session(d);
}

static void begin_stop(struct tracerd *d)
{
	d->stopping = true;
	uv_timer_stop(&d->live_timer);
	publish(d, 0, false);
	d->stop_deadline = tracerd_now_ms() + STOP_GIVE_UP_MS;
	d->stop_timer.data = d;
	stop_step(&d->stop_timer);
}

/* Refuse a request that needs a running session; true if refused. */
static bool no_session(struct tracerd_client *c)
{
	struct tracerd *d = c->d;

	if (d->session_id && !d->stopping)
		return false;
	tracerd_send_error(c, -ENOENT, d->stopping ? "the session is stopping"
			   : d->starting ? "the session is still starting"
			   : "no session is started");
	return true;
}

void tracerd_session_stop(struct tracerd_client *c)
{
	struct tracerd *d = c->d;

	if (!d->session_id) {
		tracerd_send_error(c, -ENOENT, d->starting ?
				   "the session is still starting" :
				   "no session is started");
		return;
	}
	if (!c->waits_stop) {
		c->waits_stop = true;
		cds_list_add_tail(&c->stop_node, &d->stop_waiters);
	}
	if (!d->stopping)
		tracerd_server_take_in(d, c);
	if (!d->stopping && d->session_id)
		begin_stop(d);
}

/* ------------------------------------------------------------------ */
/* Filter, switch, snapshot                                            */

void tracerd_session_filter(struct tracerd_client *c,
			    const Tracer__FilterRequest *req)
{
	struct tracerd *d = c->d;
	struct tracer__patterns pats;
	struct tracerd_process *p;
	char why[600], *copy;

	if (no_session(c))
		return;
	if (tracer__patterns_parse(req->patterns, &pats, why, sizeof(why))) {
		tracerd_send_error(c, -EINVAL, why);
		return;
	}
	tracer__patterns_free(&pats);
	if (req->pid && !tracerd_process_find(d, (pid_t)req->pid)) {
		snprintf(why, sizeof(why), "no traced process has pid %" PRIu32,
			 req->pid);
		tracerd_send_error(c, -ESRCH, why);
		return;
	}
	if (!req->pid && (copy = strdup(req->patterns))) {
		free(d->sess.events);
		d->sess.events = copy;
		tracerd_state_start(d);
	}
	cds_list_for_each_entry(p, &d->processes, node)
		if (!req->pid || p->pid == (pid_t)req->pid)
			tracerd_control_send_filter(p, req->patterns);
	if (tracerd_wait_filters(c, TRACERD_WAIT_FILTER, (pid_t)req->pid))
		tracerd_waiters_check(d);
}

static unsigned count_processes(struct tracerd *d)
{
	struct tracerd_process *p;
	unsigned n = 0;

	cds_list_for_each_entry(p, &d->processes, node)
		n++;
	return n;
}

static void switch_step(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	struct tracerd_client *c, *tmp;
	unsigned busy = flush_all(d);

	if (busy && tracerd_now_ms() < d->switch_deadline) {
		uv_timer_start(&d->switch_timer, switch_step, STOP_RETRY_MS, 0);
		return;
	}
	d->switching = false;
	cds_list_for_each_entry_safe(c, tmp, &d->switch_waiters, switch_node) {
		cds_list_del(&c->switch_node);
		c->waits_switch = false;
		tracerd_reply_done(c, count_processes(d), NULL, busy ?
				   "some records were still being written "
				   "after 2 s; they come later" : NULL);
	}
}

void tracerd_session_switch(struct tracerd_client *c)
{
	struct tracerd *d = c->d;

	if (no_session(c))
		return;
	if (d->sess.mode == TRACER_MODE_FLIGHT) {
		tracerd_send_error(c, -EINVAL, "switch writes to the channel "
				   "files, which a flight-recorder session "
				   "does not; use tracectl snapshot");
		return;
	}
	tracerd_finish_ends(d);	/* a switch writes out what was recorded */
	publish(d, d->session_id, true);
	if (!c->waits_switch) {
		c->waits_switch = true;
		cds_list_add_tail(&c->switch_node, &d->switch_waiters);
	}
	/* A later request drains what was committed before it, too. */
	d->switch_deadline = tracerd_now_ms() + STOP_GIVE_UP_MS;
	if (!d->switching) {
		d->switching = true;
		d->switch_timer.data = d;
		switch_step(&d->switch_timer);
	}
}

/* fclose f (if any); returns ret, or -errno if ret is 0 and it failed. */
static int close_file(FILE *f, int ret)
{
	if (f && fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* Snapshot of p into dir/NAME-PID. */
static int snapshot_one(struct tracerd_process *p, const char *dir)
{
	struct tracerd_sink sink;
	char *pdir = tracerd_meta_make_dir(p, dir);
	FILE *ctf;
	int ret;

	if (!pdir)
		return -EIO;
	sink.dir = pdir;
	sink.meta = tracerd_process_meta(p, pdir);
	ctf = sink.meta ? tracerd_meta_open_ctf(p, pdir) : NULL;
	ret = ctf ? tracerd_process_snapshot(p, &sink) : -EIO;
	ret = close_file(ctf, close_file(sink.meta, ret));
	free(pdir);
	return ret;
}

/* The note of a snapshot a trigger took: dir/trigger, one line. */
static int write_note(const char *dir, const char *note)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/trigger", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", note);
	return close_file(f, 0);
}

int tracerd_snapshot_take(struct tracerd *d, const char *note, char *dir,
			  size_t dir_size, unsigned *failed, char *why,
			  size_t why_size)
{
	struct tracerd_process *p;
	unsigned n = 0;
	char name[600];
	int ret;

	*failed = 0;
	if (d->sess.mode != TRACER_MODE_FLIGHT) {
		snprintf(why, why_size, "snapshot needs a flight-recorder "
			 "session (tracectl start --mode flight); in discard "
			 "mode use tracectl switch");
		return -EINVAL;
	}
	tracerd_finish_ends(d);	/* the processes just ended are in it */
	if (cds_list_empty(&d->processes) && !d->nended) {
		snprintf(why, why_size, "nothing to snapshot: no traced "
			 "process since the %s", d->snapshots ?
			 "last snapshot" : "session started");
		return -ENODATA;
	}
	snprintf(dir, dir_size, "%s/snapshot-%" PRIu64, d->session_dir,
		 ++d->snapshots);
	if (mkdir(dir, 0755) < 0) {
		snprintf(why, why_size, "cannot create '%s': %s", dir,
			 strerror(errno));
		return -errno;
	}
	publish(d, d->session_id, true);
	cds_list_for_each_entry(p, &d->processes, node) {
		n++;
		*failed += snapshot_one(p, dir) != 0;
	}
	n += tracerd_ended_snapshot(d, dir, failed);
	ret = note ? write_note(dir, note) : 0;
	if (ret)
		tracerd_log("cannot write '%s/trigger': %s", dir,
			    strerror(-ret));
	snprintf(name, sizeof(name), "%s-%s", base_name(d->session_dir),
		 base_name(dir));
	tracerd_relay_send_dir(d, dir, name);	/* with a relay */
	return (int)n;
}

void tracerd_session_snapshot(struct tracerd_client *c)
{
	char dir[4200], why[4300];
	unsigned failed;
	int n;

	if (no_session(c))
		return;
	n = tracerd_snapshot_take(c->d, NULL, dir, sizeof(dir), &failed, why,
				  sizeof(why));
	if (n < 0) {
		tracerd_send_error(c, n, why);
		return;
	}
	snprintf(why, sizeof(why), "%u process(es) could not be written "
		 "(see tracerd's log)", failed);
	tracerd_reply_done(c, (uint32_t)n, dir, failed ? why : NULL);
}

/* ------------------------------------------------------------------ */
/* Status and list                                                     */

static void fill_status(struct tracerd *d, Tracer__Status *st)
{
	st->pid = (uint32_t)getpid();
	st->version = (char *)PACKAGE_VERSION;
	st->refused = d->refused;
	st->last_refusal = d->last_refusal;
	st->socket = (char *)d->cfg.socket_path;
	st->output = (char *)d->cfg.output_dir;
	st->session_id = d->session_id;
	st->session_directory = d->session_dir && d->session_id ?
				d->session_dir : (char *)"";
	st->mode = d->session_id ? (char *)mode_name(d->sess.mode)
				 : (char *)"";
	st->filter = d->session_id && d->sess.events ? d->sess.events
						     : (char *)"";
	st->live_interval_ms = d->session_id ? d->sess.live_ms : 0;
	st->max_memory = d->cfg.max_memory;
	st->max_total_memory = d->cfg.max_total_memory;
	st->pools_bytes = d->pools_bytes;
	st->clock = (char *)tracerd_clock_name(d);
	st->clock_why = (char *)d->clock.why;
	st->tsc_hz = d->clock.c.kind == TRACER_CLOCK_TSC ? d->clock.c.tsc_hz
							 : 0;
	st->clock_error_ns = d->clock.err;
	st->tick_packets = d->clock.tick_packets;
	st->subbuf_size = d->session_id && d->sess.subbuf_size ?
			  d->sess.subbuf_size : d->cfg.subbuf_size[0];
	st->subbuf_count = (uint32_t)(d->session_id && d->sess.subbuf_count ?
			   d->sess.subbuf_count : d->cfg.subbuf_count[0]);
}

void tracerd_status(struct tracerd_client *c)
{
	struct tracerd *d = c->d;
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Status st = TRACER__STATUS__INIT;
	Tracer__ProcessStatus *ps = NULL, **pp = NULL;
	struct tracerd_process *p;
	size_t n = count_processes(d), i = 0;

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
	fill_status(d, &st);
	st.relay = tracerd_relay_status(d);
	st.n_processes = n;
	st.processes = pp;
	m.body_case = TRACER__MESSAGE__BODY_STATUS;
	m.status = &st;
	if (tracerd_send(c, &m, NULL, 0) == -EMSGSIZE)
		tracerd_send_error(c, -EMSGSIZE, "status too large for one "
				   "message");
	tracerd_relay_status_free(st.relay);
	for (i = 0; i < n; i++)
		tracerd_process_status_free(&ps[i]);
	free(ps);
	free(pp);
}

/* The call sites of p as EventInfo entries appended to l. */
static int list_process(struct tracerd_process *p, Tracer__EventInfo **l,
			Tracer__EventInfo *e, size_t *n)
{
	struct tracer__patterns pats;
	char why[320];
	size_t i;

	if (tracer__patterns_parse(p->filter, &pats, why, sizeof(why)))
		return -EINVAL;
	for (i = 0; i < p->ncs; i++) {
		if (p->cs[i].id >= TRACERD_EVENT_BASE)
			continue;	/* tracerd's own, not the program's */
		tracer__event_info__init(&e[*n]);
		e[*n].name = p->cs[i].name;
		e[*n].format = p->cs[i].format;
		e[*n].file = p->cs[i].file;
		e[*n].line = p->cs[i].line;
		e[*n].types = p->cs[i].types;
		e[*n].pid = (uint32_t)p->pid;
		e[*n].vital = p->cs[i].vital;
		e[*n].enabled = tracer__patterns_match(&pats, p->cs[i].name);
		l[*n] = &e[*n];
		(*n)++;
	}
	tracer__patterns_free(&pats);
	return 0;
}

void tracerd_list(struct tracerd_client *c, const Tracer__ListRequest *req)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__EventList el = TRACER__EVENT_LIST__INIT;
	struct tracerd_process *p;
	Tracer__EventInfo *e, **l;
	size_t total = 0;
	char why[100];

	if (req->pid && !tracerd_process_find(c->d, (pid_t)req->pid)) {
		snprintf(why, sizeof(why), "no traced process has pid %" PRIu32,
			 req->pid);
		tracerd_send_error(c, -ESRCH, why);
		return;
	}
	cds_list_for_each_entry(p, &c->d->processes, node)
		total += p->ncs;
	e = calloc(total ? total : 1, sizeof(*e));
	l = calloc(total ? total : 1, sizeof(*l));
	if (e && l) {
		cds_list_for_each_entry(p, &c->d->processes, node)
			if (!req->pid || p->pid == (pid_t)req->pid)
				list_process(p, l, e, &el.n_events);
		el.events = l;
		m.body_case = TRACER__MESSAGE__BODY_EVENT_LIST;
		m.event_list = &el;
		if (tracerd_send(c, &m, NULL, 0) == -EMSGSIZE)
			tracerd_send_error(c, -EMSGSIZE, "too many events for "
					   "one message; use --pid");
	} else {
		tracerd_send_error(c, -ENOMEM, "out of memory");
	}
	free(e);
	free(l);
}

void tracerd_quit(struct tracerd *d)
{
	d->quitting = true;
	if (d->session_id) {
		if (!d->stopping)
			tracerd_server_take_in(d, NULL);
		if (!d->stopping && d->session_id)
			begin_stop(d);
		return;		/* stop_step comes back here */
	}
	if (!cds_list_empty(&d->relays))
		return;		/* the last relay to finish comes back */
	uv_stop(d->loop);
}
