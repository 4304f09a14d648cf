/*
 * control.c - changing a running process without stopping it.
 *
 *   control page   tracerd is its only writer. A change is staged under
 *                  the page's sequence lock (pool_layout.h) and published
 *                  by the new epoch, the word the event path loads: one
 *                  atomic switch. Threads act on it at their next event.
 *   update signal  then queued to every thread that holds a buffer,
 *                  does not block it and catches it (SigBlk, SigCgt in
 *                  /proc/PID/task/TID/status), so threads act at once:
 *                  close their sub-buffers for a switch, notice a start
 *                  or a stop.
 *   state page     SOCKET.state: one struct tracer_control that every
 *                  process may map read-only, published like the
 *                  others with the session's epoch. A process that
 *                  registered while no session recorded has not read
 *                  our reply and runs no listener thread
 *                  (libtracer/client.c): this page is how it learns
 *                  that a session started. The file outlives tracerd,
 *                  so that a new tracerd reaches the processes of the
 *                  old one; it says "no session" when tracerd starts
 *                  and exits.
 *   filters        event-name patterns travel over the socket to the
 *                  process's listener thread, which switches its enable
 *                  table and confirms with FilterApplied; requests that
 *                  depend on filters (start --events, filter) wait here
 *                  for the confirmations, at most WAIT_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paths.h"
#include "pattern.h"
#include "tracerd.h"

#define WAIT_MS		1000	/* for a process to confirm a filter */

static void publish_page(struct tracer_control *c, uint64_t session,
			 uint32_t mode, uint64_t filter_gen, bool bump_switch,
			 uint64_t epoch);

void tracerd_control_publish(struct tracerd_process *p, uint64_t session,
			     uint32_t mode, bool bump_switch)
{
	publish_page(p->control, session, mode, p->filter_sent, bump_switch,
		     session ? ++p->d->epoch : 0);
}

/* The seqlock write of control.c's header comment on page c: begin (odd
 * seq), the fields, end (even seq). */
static uint32_t write_begin(struct tracer_control *c)
{
	uint32_t seq = c->seq;

	__atomic_store_n(&c->seq, seq + 1, __ATOMIC_RELAXED);
	/* The odd seq before any field (smp_wmb). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return seq;
}

static void write_end(struct tracer_control *c, uint32_t seq)
{
	/* Every field before the even seq. */
	__atomic_store_n(&c->seq, seq + 2, __ATOMIC_RELEASE);
}

static void publish_page(struct tracer_control *c, uint64_t session,
			 uint32_t mode, uint64_t filter_gen, bool bump_switch,
			 uint64_t epoch)
{
	uint32_t seq = write_begin(c);

	__atomic_store_n(&c->session, session, __ATOMIC_RELAXED);
	__atomic_store_n(&c->mode, mode, __ATOMIC_RELAXED);
	if (bump_switch)
		__atomic_store_n(&c->switch_seq, c->switch_seq + 1,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&c->filter_generation, filter_gen, __ATOMIC_RELAXED);
	__atomic_store_n(&c->epoch, epoch, __ATOMIC_RELAXED);
	write_end(c, seq);
}

/* The clock line of c, field by field (readers copy it the same way). */
static void put_clock(struct tracer_control *c, const struct tracer_clock *k)
{
	__atomic_store_n(&c->clock.tsc_base, k->tsc_base, __ATOMIC_RELAXED);
	__atomic_store_n(&c->clock.ns_base, k->ns_base, __ATOMIC_RELAXED);
	__atomic_store_n(&c->clock.mult, k->mult, __ATOMIC_RELAXED);
	__atomic_store_n(&c->clock.tsc_hz, k->tsc_hz, __ATOMIC_RELAXED);
	__atomic_store_n(&c->clock.flags, k->flags, __ATOMIC_RELAXED);
	__atomic_store_n(&c->clock.kind, k->kind, __ATOMIC_RELAXED);
}

/* The clock line of c under its seq; epoch: a new one, 0: unchanged. */
static void clock_line(struct tracer_control *c, const struct tracer_clock *k,
		       uint64_t epoch)
{
	uint32_t seq = write_begin(c);

	put_clock(c, k);
	if (epoch)
		__atomic_store_n(&c->epoch, epoch, __ATOMIC_RELAXED);
	write_end(c, seq);
}

void tracerd_control_clock_page(const struct tracerd *d,
				struct tracer_control *c)
{
	clock_line(c, &d->clock.c, 0);
}

void tracerd_control_clock(struct tracerd *d)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if (p->control)	/* a new epoch where threads record */
			clock_line(p->control, &d->clock.c,
				   p->control->epoch ? ++d->epoch : 0);
	if (d->state)
		clock_line(d->state, &d->clock.c, 0);
}

int tracerd_state_open(struct tracerd *d)
{
	char path[TRACER_PATH_MAX + 8];
	struct tracer_control *c;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s.state", d->cfg.socket_path);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  geteuid() == 0 ? 0644 : 0600);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() ||
	    fchmod(fd, geteuid() == 0 ? 0644 : 0600) < 0 ||
	    ftruncate(fd, TRACER_CONTROL_SIZE) < 0)
		goto fail;
	c = mmap(NULL, TRACER_CONTROL_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		goto fail;
	close(fd);
	c->version = TRACER_POOL_VERSION;
	c->size = sizeof(*c);
	c->tracerd_pid = (uint32_t)getpid();
	c->seq &= ~1u;	/* a tracerd killed mid-update left it odd */
	publish_page(c, 0, 0, 0, false, 0);
	__atomic_store_n(&c->magic, TRACER_CONTROL_MAGIC, __ATOMIC_RELEASE);
	d->state = c;
	tracerd_state_start(d);
	return 0;
fail:
	tracerd_log("cannot write the state page '%s': %s (processes will "
		    "wait for tracerd's reply at their start)", path,
		    strerror(errno));
	if (fd >= 0)
		close(fd);
	return -errno;
}

void tracerd_state_publish(struct tracerd *d, uint64_t session)
{
	if (!d->state)
		return;
	tracerd_state_start(d);
	publish_page(d->state, session, d->sess.mode, 0, false,
		     session ? ++d->epoch : 0);
}

/* Does the session record the events a process records by default? */
static bool default_events(const struct tracerd *d)
{
	const char *ev = tracerd_session_filter_text((struct tracerd *)d);

	return strcmp(ev, TRACER_DEFAULT_EVENTS) == 0;
}

/*
 * Line 2 of the state page, under its sequence lock (epoch unchanged:
 * only starting processes read it). A process may make its own first
 * segment in a discard-mode session (adopt.c takes it in); it records
 * the default events until our reply brings the session's filter, so it
 * is told whether they are the session's.
 */
void tracerd_state_start(struct tracerd *d)
{
	struct tracer_control *c = d->state;
	uint64_t size[TRACER_POOL_CHANNELS], count[TRACER_POOL_CHANNELS];
	uint32_t flags = 0, seq;
	int i;

	if (!c)
		return;
	tracerd_pool_pick(d, size, count);
	if (d->sess.mode == TRACER_MODE_DISCARD && !d->cfg.no_start_pools)
		flags |= TRACER_START_POOL;
	if (default_events(d))
		flags |= TRACER_START_DEFAULT_EVENTS;
	seq = write_begin(c);
	for (i = 0; i < TRACER_POOL_CHANNELS; i++) {
		__atomic_store_n(&c->start_subbuf_size[i], size[i],
				 __ATOMIC_RELAXED);
		__atomic_store_n(&c->start_subbuf_count[i], (uint32_t)count[i],
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&c->start_flags, flags, __ATOMIC_RELAXED);
	write_end(c, seq);
}

void tracerd_state_close(struct tracerd *d)
{
	if (!d->state)
		return;
	publish_page(d->state, 0, 0, 0, false, 0);
	/* No tracerd behind it: a process starting now connects to none. */
	__atomic_store_n(&d->state->tracerd_pid, 0, __ATOMIC_RELEASE);
	munmap(d->state, TRACER_CONTROL_SIZE);
	d->state = NULL;
}

/*
 * Would thread tid of p not take sig: blocked, or not caught? (If we
 * cannot tell: assume so.) Not caught is a program that exec'd before
 * tracerd read its hang-up: the signal's default action would end it.
 */
static bool blocks(pid_t pid, uint32_t tid, int sig)
{
	char path[64], line[256];
	unsigned long long blk = ~0ULL, cgt = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32 "/status",
		 (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigBlk: %llx", &v) == 1)
			blk = v;
		else if (sscanf(line, "SigCgt: %llx", &v) == 1)
			cgt = v;
	}
	fclose(f);
	return ((blk >> (sig - 1)) & 1) || !((cgt >> (sig - 1)) & 1);
}

static void queue_signal(struct tracerd_process *p, uint32_t tid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = p->signal;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = TRACER_SIGNAL_COOKIE;
	/* The kernel checks that tid is a thread of p (else ESRCH). */
	if (syscall(SYS_rt_tgsigqueueinfo, p->pid, (pid_t)tid, p->signal,
		    &si) < 0 && errno != ESRCH && errno != EAGAIN)
		tracerd_log("pid %d tid %" PRIu32 ": cannot signal: %s",
			    (int)p->pid, tid, strerror(errno));
}

void tracerd_control_signal(struct tracerd_process *p)
{
	uint32_t i;

	if (p->signal < SIGRTMIN || p->signal > SIGRTMAX || !p->client)
		return;
	for (i = 0; i < p->pool.nbuf; i++) {
		uint64_t st = __atomic_load_n(&p->pool.buf[i].desc->state,
					      __ATOMIC_ACQUIRE);
		uint32_t tid = TRACER_READ_ONCE(p->pool.buf[i].desc->owner_tid);

		if (TRACER_BUF_STATE(st) != TRACER_BUF_IN_USE || tid == 0 ||
		    blocks(p->pid, tid, p->signal))
			continue;
		queue_signal(p, tid);
	}
}

bool tracerd_control_send_filter(struct tracerd_process *p,
				 const char *patterns)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__Filter f = TRACER__FILTER__INIT;
	char *copy;

	if (p->filter && !strcmp(p->filter, patterns))
		return false;
	copy = strdup(patterns);
	if (!copy)
		return false;
	free(p->filter);
	p->filter = copy;
	if (!p->client)
		return false;	/* reconnecting: sent when it is back */
	f.generation = ++p->filter_sent;
	f.patterns = copy;
	m.body_case = TRACER__MESSAGE__BODY_FILTER;
	m.filter = &f;
	tracerd_send(p->client, &m, NULL, 0);
	return true;
}

void tracerd_control_filter_applied(struct tracerd_process *p,
				    const Tracer__FilterApplied *a)
{
	if (a->generation > p->filter_sent)
		return;		/* never sent: ignore */
	if (a->code)
		tracerd_log("pid %d could not apply filter %" PRIu64 ": %s",
			    (int)p->pid, a->generation, strerror(-a->code));
	if (a->generation > p->filter_acked)
		p->filter_acked = a->generation;
	tracerd_waiters_check(p->d);
}

/* ------------------------------------------------------------------ */
/* Requests waiting for confirmations                                  */

static void waiter_free(struct tracerd_waiter *w)
{
	cds_list_del(&w->node);
	free(w->targets);
	free(w);
}

/*
 * A lazy process (pid's, or every one) may have said Listening: read
 * what each sent. Reading may end processes, this one or others (a
 * rejected message closes its client; a message may stop the session),
 * so the list is walked again from its start after each read; a round
 * number marks those read. Not the asking client's: its message is being
 * handled (its input is in use).
 */
static struct tracerd_process *unread_lazy(struct tracerd *d, pid_t pid,
					   const struct tracerd_client *asking,
					   uint64_t round)
{
	struct tracerd_process *p;

	cds_list_for_each_entry(p, &d->processes, node)
		if ((!pid || p->pid == pid) && !p->ending && p->lazy &&
		    p->client && p->client != asking && p->lazy_read != round)
			return p;
	return NULL;
}

static void read_lazy(struct tracerd *d, pid_t pid,
		      const struct tracerd_client *asking)
{
	uint64_t round = ++d->lazy_reads;
	struct tracerd_process *p;

	while ((p = unread_lazy(d, pid, asking, round))) {
		p->lazy_read = round;
		tracerd_client_read_all(p->client);	/* may free p */
	}
}

struct tracerd_waiter *tracerd_wait_filters(struct tracerd_client *c,
					    int kind, pid_t pid)
{
	struct tracerd *d = c->d;
	struct tracerd_waiter *w;
	struct tracerd_process *p;
	size_t n = 0;

	read_lazy(d, pid, c);
	if (c->closing)
		return NULL;	/* a message read meanwhile dropped it */
	w = calloc(1, sizeof(*w));
	cds_list_for_each_entry(p, &d->processes, node)
		n++;
	if (w)
		w->targets = calloc(n ? n : 1, sizeof(*w->targets));
	if (!w || !w->targets) {
		free(w);
		tracerd_send_error(c, -ENOMEM, "out of memory");
		return NULL;
	}
	cds_list_for_each_entry(p, &d->processes, node) {
		if ((pid && p->pid != pid) || p->ending)
			continue;
		w->reached++;
		/* A lazy process reads the filter at its next event. */
		if (p->filter_acked >= p->filter_sent || p->lazy)
			continue;
		w->targets[w->n].pid = p->pid;
		w->targets[w->n++].gen = p->filter_sent;
	}
	w->client = c;
	w->kind = kind;
	w->deadline_ms = tracerd_now_ms() + WAIT_MS;
	cds_list_add_tail(&w->node, &d->waiters);
	return w;
}

/* Pids that have not confirmed yet, as a warning; "" when none. */
static size_t pending(struct tracerd *d, const struct tracerd_waiter *w,
		      char *buf, size_t size)
{
	size_t i, late = 0, len = 0;

	buf[0] = '\0';
	for (i = 0; i < w->n; i++) {
		struct tracerd_process *p =
			tracerd_process_find(d, w->targets[i].pid);

		if (!p || !p->client || p->ending ||
		    p->filter_acked >= w->targets[i].gen)
			continue;
		late++;
		if (len + 16 < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%d",
						late > 1 ? " " : "",
						(int)p->pid);
	}
	return late;
}

static void answer(struct tracerd *d, struct tracerd_waiter *w,
		   size_t late, const char *pids)
{
	char warn[700] = "";	/* pids: 512 bytes at most */

	if (late)
		snprintf(warn, sizeof(warn), "%zu process(es) did not confirm "
			 "the filter within %d ms (pid %s); they apply it when "
			 "they can", late, WAIT_MS, pids);
	if (w->kind == TRACERD_WAIT_START)
		tracerd_session_started(d, w->client, warn);
	else if (w->client)
		tracerd_reply_done(w->client, w->reached, NULL, warn);
}

void tracerd_waiters_check(struct tracerd *d)
{
	struct tracerd_waiter *w, *tmp;
	uint64_t now = tracerd_now_ms();
	char pids[512];

	cds_list_for_each_entry_safe(w, tmp, &d->waiters, node) {
		size_t late = pending(d, w, pids, sizeof(pids));

		if (late && now < w->deadline_ms)
			continue;
		/* Unlinked first: answering may add waiters. */
		cds_list_del(&w->node);
		CDS_INIT_LIST_HEAD(&w->node);
		answer(d, w, late, pids);
		waiter_free(w);
	}
}

void tracerd_waiters_forget(struct tracerd_client *c)
{
	struct tracerd_waiter *w;

	cds_list_for_each_entry(w, &c->d->waiters, node)
		if (w->client == c)
			w->client = NULL;
}
