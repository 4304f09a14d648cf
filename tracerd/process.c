/*
 * process.c - one traced process, as tracerd sees it: its registration
 * (or its resumption after a broken connection), its call sites, its
 * scan (the drain of its pool into its files, on the scan timer and when
 * a writer that closed a sub-buffer finds the wake-up armed and writes
 * the process's eventfd: pool_layout.h), its status, its snapshot, and
 * its end and freeing.
 *
 * Its pool is pool.c's (geometry, segments, growth), its channel files
 * sink.c's (streams, batches, losses, write errors), its directory and
 * description files meta.c's; its end's salvage is
 * salvage.c's.
 *
 * The process may have written anything into the pool: readers range-check
 * counters and parse packets from a private copy (rb_read.c); descriptor
 * fields are only counted or copied, never used as offsets; each packet
 * must carry its own buffer's index in stream_instance_id.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "tracerd.h"
#include "sink.h"
#include "pattern.h"

#define TRACERD_INSTANCE_MASK	0xffffffff00000000ULL
#define MAX_CALLSITES	65536
#define MAX_STRING	4096
#define DIR_RETRY_MS	1000	/* a process directory that could not be
				   written is tried again this often */
#define RENAME_EVENT	"tracer:thread_name"	/* tid %d name %s */
#define START_EVENT	"tracer:thread_start"	/* tid %d name %s */


static char *dup_bounded(const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s ? s : "", n);
		d[n] = '\0';
	}
	return d;
}

/*
 * A process of the session whose directory could not be written (output
 * full): try again now and then; tracerd_session_add_process() starts its
 * files afresh.
 */
static void retry_directory(struct tracerd_process *p)
{
	uint64_t now;

	if (!p->in_session || p->files.dir || !p->d->session_id ||
	    p->d->stopping)
		return;
	now = tracerd_now_ms();
	if (now < p->files.retry_ms)
		return;
	p->files.retry_ms = now + DIR_RETRY_MS;
	tracerd_session_add_process(p);
}

void tracerd_process_scan(struct tracerd_process *p)
{
	bool more;

	if (p->adopting || p->recovering)
		return;		/* no pool yet, or kept for the next session */
	if (p->ending)
		return;		/* its end reads it (salvage.c) */
	/*
	 * Call sites come before their events on the socket: read it first,
	 * so that no packet reaches a file before the metadata describes its
	 * events (a tracerd killed in between leaves a readable trace).
	 */
	if (p->client)
		tracerd_client_read_all(p->client);
	retry_directory(p);
	/* Growth first: a drain may take long (files to create), and the
	 * threads need room meanwhile. */
	tracerd_pool_maybe_grow(p);
	if (tracerd_flight_recording(p->d))
		return;
	more = tracerd_sink_drain(p);

	tracerd_sink_close_idle(p);
	tracerd_pool_maybe_grow(p);
	/* Arm the wake-up, then look again: no close goes unnoticed. */
	__atomic_store_n(&tracerd_pool_line(p)->wake_armed, 1,
			 __ATOMIC_SEQ_CST);
	more |= tracerd_sink_drain(p);
	tracerd_priority_note(p->d);
	if (more)
		tracerd_sink_yield(p);
	if (p->files.meta)
		fflush(p->files.meta);
}

static void on_wake(uv_poll_t *h, int status, int events)
{
	struct tracerd_process *p = h->data;
	uint64_t v;

	(void)events;
	if (status == 0 && read(p->wake_fd, &v, sizeof(v)) < 0)
		(void)0;
	tracerd_process_scan(p);
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */

static int make_control(struct tracerd_process *p)
{
	void *map;
	int fd = tracerd_make_memfd("tracer-control", TRACER_CONTROL_SIZE,
				    &map);

	if (fd < 0)
		return fd;
	p->control = map;
	p->control->version = TRACER_POOL_VERSION;
	p->control->size = sizeof(struct tracer_control);
	p->control->tracerd_pid = (uint32_t)getpid();
	tracerd_control_clock_page(p->d, p->control);
	__atomic_store_n(&p->control->magic, TRACER_CONTROL_MAGIC,
			 __ATOMIC_RELEASE);
#ifdef F_SEAL_FUTURE_WRITE
	/* From now on the process can only map it read-only. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
#endif
	return fd;
}

static int copy_identity(struct tracerd_process *p, const Tracer__Register *r)
{
	size_t i, n = r->n_argv < 256 ? r->n_argv : 256;

	p->ppid = (pid_t)r->ppid;
	p->name = dup_bounded(r->name, 64);
	p->argv = calloc(n + 1, sizeof(char *));
	if (!p->name || !p->argv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		p->argv[i] = dup_bounded(r->argv[i], MAX_STRING);
		if (!p->argv[i])
			return -ENOMEM;
		p->argc++;
	}
	p->start_time_ns = r->start_time_ns;
	p->clock_offset_ns = r->start_time_ns - r->monotonic_ns;
	p->clock_monotonic = r->clock_monotonic;
	p->signal = r->signal;
	return 0;
}

static void close_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* A name only the process learns (over its socket), for resume. */
static uint64_t new_token(void)
{
	uint64_t t = 0;

	while (t == 0)
		if (getrandom(&t, sizeof(t), 0) != (ssize_t)sizeof(t))
			t = (uint64_t)tracerd_now_ms() * 0x9e3779b97f4a7c15ULL;
	return t;
}

static int send_registered(struct tracerd_process *p, int ctl_fd, int seg_fd)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Registered r = TRACER__REGISTERED__INIT;
	Tracer__Filter f = TRACER__FILTER__INIT;
	int fds[3] = { ctl_fd, dup(p->wake_fd), seg_fd };
	int n = seg_fd < 0 ? 2 : 3;	/* adopted: no new segment */

	if (fds[1] < 0) {
		close(ctl_fd);
		if (seg_fd >= 0)
			close(seg_fd);
		return -errno;
	}
	r.control_size = TRACER_CONTROL_SIZE;
	r.segment_size = seg_fd < 0 ? 0 : p->pool.seg[0].size;
	p->filter = strdup(tracerd_session_filter_text(p->d));
	if (!p->filter) {
		close_fds(fds, n);
		return -ENOMEM;
	}
	f.generation = p->filter_sent = 1;
	f.patterns = p->filter;
	r.filter = &f;
	r.resume_token = p->resume_token = new_token();
	m.body_case = TRACER__MESSAGE__BODY_REGISTERED;
	m.registered = &r;
	return tracerd_send(p->client, &m, fds, n);
}

int tracerd_process_make_pool(struct tracerd_process *p, int *ctl_fd,
			      int *seg_fd)
{
	*seg_fd = -1;
	*ctl_fd = make_control(p);
	if (*ctl_fd < 0)
		return *ctl_fd;
	*seg_fd = tracerd_pool_create(p);
	return *seg_fd < 0 ? *seg_fd : 0;
}

/*
 * Identity, tracerd's own events, control page, wake-up eventfd and, unless
 * the process brings its pool (seg_fd NULL: adopt.c), a pool: one made
 * ahead (stock.c), or a new one.
 */
static int setup(struct tracerd_process *p, const Tracer__Register *r,
		 int *ctl_fd, int *seg_fd)
{
	int ret = copy_identity(p, r);

	if (!ret)
		ret = tracerd_salvage_events(p);
	if (ret)
		return ret;
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wake_fd < 0)
		return -errno;
	/* Outside a session, a lazy process gets its pool when one starts. */
	if (seg_fd && r->lazy_listener && !p->d->session_id &&
	    !p->d->starting) {
		*seg_fd = -1;
		seg_fd = NULL;
	}
	if (!seg_fd) {
		*ctl_fd = make_control(p);
		if (*ctl_fd < 0)
			return *ctl_fd;
		return tracerd_scratch_fit(p->d, TRACERD_BATCH_BYTES);
	}
	if (tracerd_stock_take(p, ctl_fd, seg_fd) == 0) {
		/* The kit's page has the clock of when it was made: a
		 * calibration or a stray since reached only the processes
		 * registered then (tracerd_control_clock()). */
		tracerd_control_clock_page(p->d, p->control);
		return 0;
	}
	return tracerd_process_make_pool(p, ctl_fd, seg_fd);
}

/* The pool is complete: watch the process, give it the session, reply. */
int tracerd_process_go_live(struct tracerd_process *p, int ctl_fd,
			    int seg_fd)
{
	int ret;

	uv_poll_init(p->d->loop, &p->wake_poll, p->wake_fd);
	p->wake_poll.data = p;
	uv_poll_start(&p->wake_poll, UV_READABLE, on_wake);
	ret = tracerd_watch_pid(p);
	if (ret)
		tracerd_log("pid %d: no pidfd (%s): its end is noticed when it "
			    "hangs up, and not told apart from an exec",
			    (int)p->pid, strerror(-ret));
	tracerd_log("registered pid %d (%s)", (int)p->pid, p->name);
	if (p->d->session_id && !p->d->stopping) {
		tracerd_process_set_mode(p, p->d->sess.mode);
		tracerd_control_publish(p, p->d->session_id, p->d->sess.mode,
					false);
		p->in_session = true;
	}
	tracerd_pool_line(p)->wake_armed = 1;
	ret = send_registered(p, ctl_fd, seg_fd);
	/* The session's files after the reply, which the process waits
	 * for: nothing is drained before they exist (same loop turn). */
	if (!ret && p->in_session)
		tracerd_session_add_process(p);
	return ret;
}

int tracerd_process_register(struct tracerd_client *c,
			     const Tracer__Register *r)
{
	struct tracerd_process *p = calloc(1, sizeof(*p));
	bool adopt = r->adopt_segments > 0;
	int ctl_fd = -1, seg_fd = -1, ret;

	if (!p)
		return -ENOMEM;
	p->d = c->d;
	p->serial = ++c->d->serials;
	p->pid = c->pid;	/* from the socket, not from the message */
	p->same_pidns = r->pid == (uint32_t)c->pid;
	p->wake_fd = -1;
	p->pidfd = -1;
	p->control_fd = -1;
	tracerd_process_replaced(c->d, c->pid);
	if (r->pidfd && tracerd_give_pidfd(p, tracerd_client_take_fd(c)))
		tracerd_log("pid %d: the pidfd it sent is not its own",
			    (int)c->pid);
	ret = setup(p, r, &ctl_fd, adopt ? NULL : &seg_fd);
	if (ret) {
		const char *cause = ret == -ENOSPC ? "its pool would pass "
			"what all pools may take (--max-total-memory)" :
			strerror(-ret);
		char why[160];

		tracerd_log("pid %d: cannot set up this process: %s",
			    (int)c->pid, cause);
		c->d->refused++;
		snprintf(c->d->last_refusal, sizeof(c->d->last_refusal),
			 "pid %d: cannot set up this process: %s", (int)c->pid,
			 cause);
		snprintf(why, sizeof(why),
			 "tracerd cannot set up this process: %s", cause);
		tracerd_send_error(c, ret, why);
		if (ctl_fd >= 0)
			close(ctl_fd);
		tracerd_process_free(p);
		return ret;
	}
	p->client = c;
	c->proc = p;
	p->lazy = r->lazy_listener && (!adopt || r->fresh_pool);
	cds_list_add_tail(&p->node, &p->d->processes);
	if (adopt) {
		p->control_fd = ctl_fd;	/* sent once the pool is in */
		return tracerd_process_adopt(p, r);
	}
	return tracerd_process_go_live(p, ctl_fd, seg_fd);
}

static struct tracerd_process *find_resumable(struct tracerd *d, pid_t pid,
					      uint64_t token)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->pid == pid && p->resume_token == token &&
		    !p->ending && !p->adopting)
			return p;
	return NULL;
}

/* The reply to a resuming Register: a new eventfd, the filter in force. */
static int send_resumed(struct tracerd_process *p)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Registered r = TRACER__REGISTERED__INIT;
	Tracer__Filter f = TRACER__FILTER__INIT;
	int fd = dup(p->wake_fd);

	if (fd < 0)
		return -errno;
	r.control_size = TRACER_CONTROL_SIZE;
	r.resume_token = p->resume_token;
	r.resumed = true;
	f.generation = ++p->filter_sent;
	f.patterns = p->filter ? p->filter : (char *)"";
	r.filter = p->filter ? &f : NULL;
	m.body_case = TRACER__MESSAGE__BODY_REGISTERED;
	m.registered = &r;
	return tracerd_send(p->client, &m, &fd, 1);
}

int tracerd_process_resume(struct tracerd_client *c,
			   const Tracer__Register *r)
{
	struct tracerd_process *p = find_resumable(c->d, c->pid,
						   r->resume_token);
	struct tracerd_client *old;

	if (!p) {
		tracerd_send_error(c, -ESRCH, "no such traced process here: "
				   "register with the pool (adopt)");
		return -ESRCH;
	}
	old = p->client;
	if (old) {		/* its end of the broken connection */
		old->proc = NULL;
		p->client = NULL;
		tracerd_client_close(old);
	}
	p->client = c;
	c->proc = p;
	p->hangup_ms = 0;
	p->resumed = true;
	/* What it says now: a process that was dormant comes back with its
	 * listener (it connects again from there or starts it next), and
	 * its Listening went to the broken connection. Still taken for
	 * lazy, it would not be waited for: a filter "applied" before it
	 * read it (test_descriptors: close by raw, 1 run in 12). */
	p->lazy = r->lazy_listener;
	tracerd_log("pid %d (%s) connected again; tracing goes on",
		    (int)p->pid, p->name);
	return send_resumed(p);
}

int tracerd_process_untraced(struct tracerd_process *p)
{
	uint32_t e;

	if (!p->pool.nseg)
		return 0;
	e = __atomic_load_n(&tracerd_pool_line(p)->untraced_errno,
			   __ATOMIC_ACQUIRE);
	return e > 0 && e < 4096 ? (int)e : e ? EIO : 0;
}

static bool known_id(const struct tracerd_process *p, uint32_t id)
{
	return tracerd_process_site(p, id) != NULL;
}

static int store_callsite(struct tracerd_process *p,
			  const Tracer__CallSite *s);

static int add_callsite(struct tracerd_process *p, const Tracer__CallSite *s)
{
	if (p->resumed && s->id != 0 && known_id(p, s->id))
		return 0;	/* sent again after a broken connection */
	if (s->id == 0 || s->id > (1u << 30) || !tracer__types_valid(s->types) ||
	    known_id(p, s->id) || p->ncs >= MAX_CALLSITES)
		return -EINVAL;
	return store_callsite(p, s);
}

int tracerd_process_add_site(struct tracerd_process *p, uint32_t id,
			     const char *name, const char *types,
			     const char *format)
{
	Tracer__CallSite s = TRACER__CALL_SITE__INIT;

	s.id = id;
	s.vital = true;
	s.name = (char *)(uintptr_t)name;
	s.types = (char *)(uintptr_t)types;
	s.format = (char *)(uintptr_t)format;
	s.file = (char *)"tracerd";
	return store_callsite(p, &s);
}

/* Where id is, or would go, in p->cs_index (cs_index_cap > 0). */
static size_t site_slot(const struct tracerd_process *p, uint32_t id)
{
	size_t mask = p->cs_index_cap - 1, h = (id * 2654435761u) & mask;

	while (p->cs_index[h] && p->cs[p->cs_index[h] - 1].id != id)
		h = (h + 1) & mask;
	return h;
}

const struct tracer__site *tracerd_process_site(
	const struct tracerd_process *p, uint32_t id)
{
	size_t h;

	if (!p->cs_index_cap)
		return NULL;
	h = site_slot(p, id);
	return p->cs_index[h] ? &p->cs[p->cs_index[h] - 1] : NULL;
}

/* Index p->cs[i] by its id, the index growing to stay half empty.
 * Returns 0 or -ENOMEM. */
static int index_site(struct tracerd_process *p, size_t i)
{
	if (2 * (p->ncs + 1) > p->cs_index_cap) {
		size_t cap = p->cs_index_cap ? 2 * p->cs_index_cap : 256, k;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		free(p->cs_index);
		p->cs_index = n;
		p->cs_index_cap = cap;
		for (k = 0; k < p->ncs; k++)
			p->cs_index[site_slot(p, p->cs[k].id)] = (uint32_t)k + 1;
	}
	p->cs_index[site_slot(p, p->cs[i].id)] = (uint32_t)i + 1;
	return 0;
}

/* The memory call site s would take; -ENOSPC past the limits. */
static int site_room(const struct tracerd_process *p,
		     const Tracer__CallSite *s, uint64_t *bytes)
{
	*bytes = sizeof(struct tracer__site) + 2 * sizeof(uint32_t) +
		 (s->types ? strnlen(s->types, TRACER_MAX_ARGS) : 0) +
		 (s->file ? strnlen(s->file, MAX_STRING) : 0) +
		 (s->name ? strnlen(s->name, MAX_STRING) : 0) +
		 (s->format ? strnlen(s->format, MAX_STRING) : 0) + 4;
	if (p->cs_bytes + *bytes > p->d->cfg.max_site_memory ||
	    p->d->cs_bytes + *bytes > p->d->cfg.max_total_site_memory)
		return -ENOSPC;
	return 0;
}

static int store_callsite(struct tracerd_process *p,
			  const Tracer__CallSite *s)
{
	struct tracer__site *cs;
	uint64_t bytes;
	int ret = site_room(p, s, &bytes);

	if (ret)
		return ret;
	if (p->ncs == p->cs_cap) {
		size_t cap = p->cs_cap ? p->cs_cap * 2 : 64;
		struct tracer__site *n = realloc(p->cs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->cs = n;
		p->cs_cap = cap;
	}
	cs = &p->cs[p->ncs];
	cs->id = s->id;
	cs->vital = s->vital;
	cs->line = s->line;
	cs->types = dup_bounded(s->types, TRACER_MAX_ARGS);
	cs->file = dup_bounded(s->file, MAX_STRING);
	cs->name = dup_bounded(s->name, MAX_STRING);
	cs->format = dup_bounded(s->format, MAX_STRING);
	if (!cs->types || !cs->file || !cs->name || !cs->format ||
	    index_site(p, p->ncs)) {
		free(cs->types);
		free(cs->file);
		free(cs->name);
		free(cs->format);
		return -ENOMEM;
	}
	if (cs->vital && !strcmp(cs->name, RENAME_EVENT) &&
	    !strcmp(cs->types, "is"))
		p->rename_id = cs->id;
	if (cs->vital && !strcmp(cs->name, START_EVENT) &&
	    !strcmp(cs->types, "is"))
		p->start_id = cs->id;
	p->ncs++;
	p->cs_bytes += bytes;
	p->d->cs_bytes += bytes;
	return 0;
}

int tracerd_process_callsites(struct tracerd_process *p,
			      const Tracer__CallSites *m)
{
	size_t from = p->ncs, i;
	int ret = 0;

	for (i = 0; i < m->n_sites && !ret; i++)
		ret = add_callsite(p, m->sites[i]);
	if (p->files.dir && p->ncs > from)
		tracerd_session_append_callsites(p, from);
	return ret;
}

/* ------------------------------------------------------------------ */
/* End of a process                                                    */

/*
 * The client hung up. The pidfd tells a death; a process still alive may
 * be running exec (its new image registers with the same pid) or be
 * connecting again (tracerd_process_resume()); its buffers are drained
 * meanwhile, and tracerd_process_check() ends it if it says it cannot.
 */
void tracerd_process_gone(struct tracerd_process *p)
{
	if (p->ending)
		return;		/* tracerd_process_end() is at work */
	if (p->pidfd < 0 || p->d->quitting || p->adopting) {
		tracerd_process_end(p, TRACERD_END_HANGUP);
		return;
	}
	/* Never freed here: the pidfd or tracerd_process_check() ends it. */
	p->hangup_ms = tracerd_now_ms();
}

void tracerd_process_remove(struct tracerd_process *p)
{
	struct tracerd_client *c = p->client;

	if (c) {		/* died before its hang-up was seen */
		c->proc = NULL;
		p->client = NULL;
		tracerd_client_close(c);
	}
	tracerd_log("pid %d (%s) is gone: %" PRIu64 " bytes written, %" PRIu64
		    " packets outside any session dropped", (int)p->pid,
		    p->name, p->bytes_written, p->dropped_packets);
	cds_list_del(&p->node);
	tracerd_process_free(p);
}

static void free_later(uv_handle_t *h)
{
	struct tracerd_process *p = h->data;

	if (--p->handles == 0)
		free(p);
}

static void close_handle(struct tracerd_process *p, uv_poll_t *h, int fd)
{
	if (uv_is_active((uv_handle_t *)h))
		uv_poll_stop(h);
	close(fd);
	h->data = p;
	p->handles++;
	uv_close((uv_handle_t *)h, free_later);
}

void tracerd_process_free(struct tracerd_process *p)
{
	char who[32];
	size_t k;

	snprintf(who, sizeof(who), "pid %d", (int)p->pid);
	tracerd_rate_done(&p->log_rate, who);
	tracerd_end_forget(p);
	tracerd_triggers_forget(p);
	tracerd_process_close_files(p);
	tracerd_pool_free(p);
	if (p->control)
		munmap(p->control, TRACER_CONTROL_SIZE);
	if (p->control_fd >= 0)
		close(p->control_fd);
	for (k = 0; k < p->ncs; k++) {
		free(p->cs[k].types);
		free(p->cs[k].file);
		free(p->cs[k].name);
		free(p->cs[k].format);
	}
	for (k = 0; p->argv && k < p->argc; k++)
		free(p->argv[k]);
	free(p->argv);
	free(p->cs);
	free(p->cs_index);
	p->d->cs_bytes -= p->cs_bytes;
	free(p->name);
	free(p->filter);
	if (p->wake_fd >= 0 && p->wake_poll.loop)
		close_handle(p, &p->wake_poll, p->wake_fd);
	else if (p->wake_fd >= 0)
		close(p->wake_fd);
	/* A pidfd the process sent is watched only once it goes live. */
	if (p->pidfd >= 0 && p->pid_poll.loop)
		close_handle(p, &p->pid_poll, p->pidfd);
	else if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->handles == 0)
		free(p);
}

/* Records committed in channel c of b over all owners. */
static uint64_t records_committed(const struct tracerd_buffer *b, int c)
{
	return tracer__rb_records_committed(b->rd[c].commit,
					    b->rd[c].geo.subbuf_count);
}

/*
 * Flight: records of channel c of b the writer overwrote before they
 * were read (at most made, the records committed): lost, not written,
 * for status as for the trace, which tells them when it reads the ring.
 */
static uint64_t overwritten(const struct tracerd_buffer *b, int c,
			    uint64_t made)
{
	uint64_t n = tracer__rb_overwritten(&b->rd[c]);

	return n < made ? n : made;
}

static void totals(const struct tracerd_process *p, uint64_t *records,
		   uint64_t *lost)
{
	uint32_t i;
	int c;

	*records = 0;
	*lost = TRACER_READ_ONCE(
		tracerd_pool_line((struct tracerd_process *)p)->lost_no_buffer);
	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			uint64_t made = records_committed(&p->pool.buf[i], c),
				 over = overwritten(&p->pool.buf[i], c, made);

			*records += made - over;
			*lost += TRACER_READ_ONCE(
					p->pool.buf[i].rd[c].hdr->lost) + over;
		}
	/* Records tracerd could not write are lost, not written. */
	*records -= p->unwritten;
	*lost += p->unwritten;
}

void tracerd_process_baseline(struct tracerd_process *p, bool recovered)
{
	uint32_t i;
	int c;

	totals(p, &p->base_records, &p->base_lost);
	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			struct tracer_rb_reader *r = &p->pool.buf[i].rd[c];

			/* A pool kept for this session (its tracerd died)
			 * brings the losses of that time with it. */
			p->pool.buf[i].st[c].lost_seen = recovered ?
				tracerd_lost_told(r) : tracer__rb_lost(r);
			p->pool.buf[i].st[c].pending = 0;
		}
}

/* Default channel: share not yet read (discard) or filled (flight). */
static uint32_t use_permille(const struct tracerd_buffer *b)
{
	const struct tracer_rb_reader *r = &b->rd[TRACER_CHANNEL_DEFAULT];
	uint64_t B = r->geo.subbuf_size * r->geo.subbuf_count;
	uint64_t wc = TRACER_READ_ONCE(r->hdr->write_count);
	uint64_t used = wc - r->read_count;	/* flight: since the start */

	if (used > B)
		used = B;
	return (uint32_t)(used * 1000 / B);
}

static char no_name[1];

/* Records of channel c of b's current owner tracerd could not write. */
static uint64_t owner_unwritten(const struct tracerd_buffer *b, int c)
{
	uint64_t gen = TRACER_BUF_GEN(TRACER_READ_ONCE(b->desc->state));
	const struct tracerd_stream *st = &b->st[c];

	if (!st->unwritten_instance ||
	    (st->unwritten_instance & 0xffffffffu) != (gen & 0xffffffffu))
		return 0;
	return st->unwritten;
}

/*
 * Thread tid's name now, from /proc/PID/task/TID/comm: a rename since it
 * took its buffer is in there, however it was made. Only for a process
 * whose thread ids are ours. Returns false when it cannot be read (the
 * thread is gone, or another pid namespace).
 */
static bool comm_now(const struct tracerd_process *p, uint32_t tid,
		     char name[17])
{
	char path[64];
	ssize_t n;
	int fd;

	if (!p->same_pidns || tid == 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32 "/comm",
		 (int)p->pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, name, 16);
	close(fd);
	if (n <= 0)
		return false;
	/* The kernel ends it with a newline (a name may hold more). */
	name[name[n - 1] == '\n' ? n - 1 : n] = '\0';
	return true;
}

static void thread_status(const struct tracerd_process *p, uint32_t i,
			  Tracer__ThreadStatus *t)
{
	const struct tracerd_buffer *b = &p->pool.buf[i];
	char *name = malloc(17);
	int c;

	tracer__thread_status__init(t);
	t->tid = TRACER_READ_ONCE(b->desc->owner_tid);
	if (name && !comm_now(p, t->tid, name)) {
		memcpy(name, b->desc->thread_name, 16);
		name[16] = '\0';
	}
	t->name = name ? name : no_name;
	t->buffer = i;
	for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
		uint64_t unwritten = owner_unwritten(b, c),
			 made = records_committed(b, c) -
				TRACER_READ_ONCE(b->desc->records_base[c]),
			 over = overwritten(b, c, made - unwritten);

		t->events_written += made - unwritten - over;
		t->events_lost += TRACER_READ_ONCE(b->rd[c].hdr->lost) -
				  TRACER_READ_ONCE(b->desc->lost_base[c]) +
				  unwritten + over;
	}
	t->use_permille = use_permille(b);
}

static bool in_use(const struct tracerd_buffer *b)
{
	return TRACER_BUF_STATE(TRACER_READ_ONCE(b->desc->state)) ==
	       TRACER_BUF_IN_USE;
}

static void threads_status(struct tracerd_process *p,
			   Tracer__ProcessStatus *st)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->pool.nbuf; i++)
		n += in_use(&p->pool.buf[i]);
	st->threads = calloc(n ? n : 1, sizeof(*st->threads));
	if (!st->threads)
		return;
	for (i = 0; i < p->pool.nbuf && st->n_threads < n; i++) {
		Tracer__ThreadStatus *t;

		if (!in_use(&p->pool.buf[i]) || !(t = malloc(sizeof(*t))))
			continue;
		thread_status(p, i, t);
		st->threads[st->n_threads++] = t;
	}
}

/*
 * Threads whose events wait in the process's stash (libtracer/stash.c
 * counts them in the pool line): a hint, written by the process; a count
 * past the stash's slots (256) is nonsense, shown as none.
 */
static uint32_t stashed(struct tracerd_process *p)
{
	uint32_t n = TRACER_READ_ONCE(tracerd_pool_line(p)->stashed);

	return n <= TRACER_STASH_SLOTS ? n : 0;
}

void tracerd_process_status(struct tracerd_process *p,
			    Tracer__ProcessStatus *st)
{
	uint64_t records, lost;
	uint32_t i;

	st->pid = (uint32_t)p->pid;
	st->name = p->name;
	st->buffers = p->pool.nbuf;
	st->pool_bytes = p->pool.bytes;
	st->pool_cap = p->d->cfg.max_memory;
	st->segments = p->pool.nseg;
	st->bytes_written = p->bytes_written;
	st->packets_written = p->packets_written;
	st->filter = p->filter ? p->filter : (char *)TRACER_DEFAULT_EVENTS;
	st->filter_sent = p->filter_sent;
	st->filter_applied = p->filter_acked;
	st->subbuf_size = p->pool.subbuf_size[TRACER_CHANNEL_DEFAULT];
	st->subbuf_count =
		(uint32_t)p->pool.subbuf_count[TRACER_CHANNEL_DEFAULT];
	totals(p, &records, &lost);
	st->events_lost = lost;
	if (p->in_session) {
		st->events_written = records - p->base_records;
		st->events_lost_session = lost - p->base_lost;
	}
	for (i = 0; i < p->pool.nbuf; i++)
		st->buffers_in_use += in_use(&p->pool.buf[i]);
	threads_status(p, st);
	st->threads_stashed = stashed(p);
}

void tracerd_process_status_free(Tracer__ProcessStatus *st)
{
	size_t i;

	for (i = 0; i < st->n_threads; i++) {
		if (st->threads[i]->name != no_name)
			free(st->threads[i]->name);
		free(st->threads[i]);
	}
	free(st->threads);
	st->threads = NULL;
	st->n_threads = 0;
}

/*
 * The pid's latest registration: after an exec, the new image may
 * register before tracerd reads the old image's hang-up, and the old one
 * is then on its way out.
 */
struct tracerd_process *tracerd_process_find(struct tracerd *d, pid_t pid)
{
	struct tracerd_process *p, *found = NULL;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->pid == pid)
			found = p;
	return found;
}

void tracerd_process_set_mode(struct tracerd_process *p, uint32_t mode)
{
	uint32_t i;
	int c;

	for (i = 0; i < p->pool.nbuf; i++)
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			p->pool.buf[i].rd[c].mode = mode == TRACER_MODE_FLIGHT ?
				TRACER_RB_FLIGHT : TRACER_RB_DISCARD;
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */

int tracerd_process_snapshot(struct tracerd_process *p,
			     const struct tracerd_sink *sink)
{
	struct tracerd_stream pair[TRACER_POOL_CHANNELS];
	uint32_t i;
	int c, ret = 0;

	for (i = 0; i < p->pool.nbuf && !ret; i++) {
		/* Writer losses count from where the session's files
		   are (its start, in flight mode). */
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			pair[c] = (struct tracerd_stream){
				.fd = -1,
				.lost_seen = p->pool.buf[i].st[c].lost_seen,
			};
		for (c = 0; c < TRACER_POOL_CHANNELS && !ret; c++)
			if (!p->pool.buf[i].broken[c])
				ret = tracerd_sink_snapshot_channel(p, sink,
						pair, &p->pool.buf[i], c);
		for (c = 0; c < TRACER_POOL_CHANNELS; c++)
			tracerd_sink_close_stream(&pair[c]);
	}
	return ret;
}
