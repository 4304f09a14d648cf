/*
 * trigger.c - flight-recorder triggers: `tracectl trigger add --on
 * PATTERNS [--pid PID] [--interval T] --snapshot`, list and remove.
 *
 * A flight recorder is read only for a snapshot or the stop; what is worth
 * a snapshot (an error the program records, a crash) happens while nobody
 * watches. A trigger watches in tracerd, never on the writer's path:
 *
 *   scan timer (--scan-ms, 100 ms), flight session, triggers exist
 *     for each process with a call site a trigger selects
 *       for each channel of each buffer: a private copy of its reader
 *         (its own position; it writes nothing the writer or tracerd's
 *         reader sees: rb.h `quiet`) reads what was committed since the
 *         last pass: complete sub-buffers, then the committed part of
 *         the open one; each record's call-site id -> the triggers whose
 *         patterns select that site (a mask per site, made again when
 *         the triggers or the call sites change)
 *   a record stamped after the trigger was added (its `since`, the trace
 *   clock) is a match; the first match of a trigger whose last snapshot
 *   is older than its interval marks it hit
 *   then, out of the scan, one snapshot for every trigger hit (its file
 *   `trigger` names them; tracerd_snapshot_take())
 *
 * tracerd's own end events (tracer:process_exit, process_killed,
 * process_gone) are matched where tracerd writes them; the records a
 * process left are looked at when its end begins, before the end reads
 * them, so that a program that records its error and dies at once is
 * not missed. The snapshot waits for the end to be written (a timer of
 * 0 ms: out of the end's callback), and holds the ended process.
 *
 * Limits: a record the writer overwrote before a pass read it is not seen
 * (a ring that laps in less than the scan period); record the events that
 * fire triggers with tracer_record_vital(), whose channel holds them far
 * longer. Records are matched by call site: an id tracerd has no call
 * site for yet (sent after the record) is passed over.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracerd.h"

#define INTERVAL_DEFAULT_MS	10000
#define INTERVAL_MAX_MS		(24ULL * 3600 * 1000)
#define SCAN_TRIES		4	/* partial reads a pass (-EBUSY) */

/* One channel's reading: a copy of tracerd's reader, its own position. */
struct chan_scan {
	struct tracer_rb_reader r;
	uint64_t shadow;		/* r.read_count_shared points here */
	bool on;
};

struct tracerd_trig_scan {
	uint64_t session;		/* whose rings it reads */
	uint64_t gen;			/* the triggers the masks are for */
	size_t nsites;			/* call sites the masks cover */
	uint64_t *mask;			/* per call site (p->cs index) */
	uint64_t any;			/* every mask or'ed */
	uint32_t nbuf;
	struct chan_scan *ch;		/* nbuf * TRACER_POOL_CHANNELS */
};

static void on_fire(uv_timer_t *t);

void tracerd_triggers_init(struct tracerd *d)
{
	CDS_INIT_LIST_HEAD(&d->trig.list);
	uv_timer_init(d->loop, &d->trig.fire);
	d->trig.fire.data = d;
}

static void trigger_free(struct tracerd_trigger *t)
{
	tracer__patterns_free(&t->pats);
	free(t->on);
	free(t->last_snapshot);
	free(t);
}

static void scan_free(struct tracerd_trig_scan *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->nbuf * TRACER_POOL_CHANNELS; i++)
		free(s->ch[i].r.slot_records);
	free(s->ch);
	free(s->mask);
	free(s);
}

void tracerd_triggers_forget(struct tracerd_process *p)
{
	scan_free(p->tscan);
	p->tscan = NULL;
}

void tracerd_triggers_free(struct tracerd *d)
{
	struct tracerd_trigger *t, *tmp;

	cds_list_for_each_entry_safe(t, tmp, &d->trig.list, node) {
		cds_list_del(&t->node);
		trigger_free(t);
	}
	free(d->trig.buf);
	d->trig.buf = NULL;
	d->trig.n = 0;
}

/* ------------------------------------------------------------------ */
/* Which call sites each trigger selects                               */

static uint64_t site_mask(const struct tracerd *d,
			  const struct tracerd_process *p,
			  const struct tracer__site *cs)
{
	const struct tracerd_trigger *t;
	uint64_t m = 0;

	cds_list_for_each_entry(t, &d->trig.list, node)
		if ((!t->pid || t->pid == p->pid) &&
		    tracer__patterns_select(&t->pats, cs->name))
			m |= 1ULL << t->bit;
	return m;
}

/* The masks of p's call sites, for the triggers there are now. Returns
 * 0 or -ENOMEM. */
static int make_masks(struct tracerd_process *p, struct tracerd_trig_scan *s)
{
	uint64_t *m = NULL;
	size_t i;

	if (p->ncs && !(m = calloc(p->ncs, sizeof(*m))))
		return -ENOMEM;
	s->any = 0;
	for (i = 0; i < p->ncs; i++) {
		m[i] = site_mask(p->d, p, &p->cs[i]);
		s->any |= m[i];
	}
	free(s->mask);
	s->mask = m;
	s->nsites = p->ncs;
	s->gen = p->d->trig.gen;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The readers                                                         */

/* Channel c of buffer b read from where tracerd's own reader is. */
static int chan_start(struct chan_scan *cs, const struct tracerd_buffer *b,
		      int c)
{
	uint64_t n = b->rd[c].geo.subbuf_count;

	cs->r = b->rd[c];
	cs->r.stage = NULL;
	cs->r.quiet = true;
	cs->shadow = cs->r.read_count;
	cs->r.read_count_shared = &cs->shadow;
	cs->r.slot_records = malloc(n * sizeof(uint64_t));
	if (!cs->r.slot_records)
		return -ENOMEM;
	memcpy(cs->r.slot_records, b->rd[c].slot_records, n * sizeof(uint64_t));
	cs->on = true;
	return 0;
}

/* Room for the readers of p's buffers (the pool grew). 0 or -ENOMEM. */
static int fit_buffers(struct tracerd_process *p, struct tracerd_trig_scan *s)
{
	size_t n = (size_t)p->pool.nbuf * TRACER_POOL_CHANNELS, i;
	struct chan_scan *ch;

	if (p->pool.nbuf <= s->nbuf)
		return 0;
	ch = realloc(s->ch, n * sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	memset(ch + (size_t)s->nbuf * TRACER_POOL_CHANNELS, 0,
	       (n - (size_t)s->nbuf * TRACER_POOL_CHANNELS) * sizeof(*ch));
	for (i = 0; i < (size_t)s->nbuf * TRACER_POOL_CHANNELS; i++)
		ch[i].r.read_count_shared = &ch[i].shadow;	/* moved */
	s->ch = ch;
	s->nbuf = p->pool.nbuf;
	return 0;
}

/* p's reading state, up to date with the session, triggers and call
 * sites; NULL when it cannot be (out of memory: it is looked at later). */
static struct tracerd_trig_scan *scan_state(struct tracerd_process *p)
{
	struct tracerd_trig_scan *s = p->tscan;

	if (s && s->session != p->d->session_id) {
		tracerd_triggers_forget(p);	/* another session's rings */
		s = NULL;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->session = p->d->session_id;
		s->gen = p->d->trig.gen - 1;
		p->tscan = s;
	}
	if ((s->gen != p->d->trig.gen || s->nsites != p->ncs) &&
	    make_masks(p, s))
		return NULL;
	return fit_buffers(p, s) ? NULL : s;
}

/* A packet buffer for the largest sub-buffer of p. 0 or -ENOMEM. */
static int fit_copy(struct tracerd *d, const struct tracerd_process *p)
{
	uint64_t need = 0;
	void *buf;
	int c;

	for (c = 0; c < TRACER_POOL_CHANNELS; c++)
		if (p->pool.subbuf_size[c] > need)
			need = p->pool.subbuf_size[c];
	if (need <= d->trig.buf_size)
		return 0;
	if (posix_memalign(&buf, 64, need))
		return -ENOMEM;
	free(d->trig.buf);
	d->trig.buf = buf;
	d->trig.buf_size = need;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */

static struct tracerd_trigger *by_bit(struct tracerd *d, uint32_t bit)
{
	struct tracerd_trigger *t;

	cds_list_for_each_entry(t, &d->trig.list, node)
		if (t->bit == bit)
			return t;
	return NULL;
}

/* Trigger t matched `what` (an event of p, at ts on the trace clock). */
static void matched(struct tracerd *d, struct tracerd_trigger *t,
		    const char *what)
{
	uint64_t now = tracerd_now_ms();

	t->matched++;
	if (t->hit || (t->last_ms && now - t->last_ms < t->interval_ms))
		return;		/* within its interval: once */
	t->hit = true;
	snprintf(t->hit_event, sizeof(t->hit_event), "%s", what);
	if (!d->trig.any_hit) {
		d->trig.any_hit = true;
		uv_timer_start(&d->trig.fire, on_fire, 0, 0);
	}
}

/* A record of p's (site cs, mask m) at ts, in tid's packet. */
static void record_matched(struct tracerd_process *p, uint64_t m,
			   const struct tracer__site *cs, uint64_t ts,
			   uint32_t tid)
{
	struct tracerd_trigger *t;
	char what[200];
	uint32_t bit;

	for (bit = 0; m; bit++, m >>= 1) {
		if (!(m & 1) || !(t = by_bit(p->d, bit)) || ts < t->since)
			continue;
		snprintf(what, sizeof(what), "%s pid %d tid %" PRIu32,
			 cs->name, (int)p->pid, tid);
		matched(p->d, t, what);
	}
}

/* The records of one packet copy. */
static void packet_matches(struct tracerd_process *p,
			   struct tracerd_trig_scan *s, const void *copy,
			   const struct tracer_rb_packet_info *info)
{
	struct tracer_rb_cursor cur = { 0 };
	struct tracer_rb_record rec;
	const struct tracer__site *cs;
	size_t i;

	while (tracer__rb_packet_next(copy, info->content_bytes, &cur, &rec)) {
		cs = tracerd_process_site(p, rec.id);
		if (!cs)
			continue;	/* its call site is not here yet */
		i = (size_t)(cs - p->cs);
		if (i < s->nsites && s->mask[i])
			record_matched(p, s->mask[i], cs, rec.timestamp,
				       info->tid);
	}
}

/* What channel cs committed since the last pass. */
static void chan_scan(struct tracerd_process *p, struct tracerd_trig_scan *s,
		      struct chan_scan *cs)
{
	struct tracerd *d = p->d;
	struct tracer_rb_packet_info info;
	int ret, tries;

	for (tries = 0; tries < SCAN_TRIES; tries++) {
		while ((ret = tracer__rb_read(&cs->r, d->trig.buf,
					      d->trig.buf_size, &info)) == 0 ||
		       ret == -ESTALE || ret == -EBADMSG)
			if (ret == 0)
				packet_matches(p, s, d->trig.buf, &info);
		ret = tracer__rb_read_partial(&cs->r, d->trig.buf,
					      d->trig.buf_size, &info);
		if (ret == 0)
			packet_matches(p, s, d->trig.buf, &info);
		if (ret != -EAGAIN && ret != -ESTALE && ret != -EBUSY)
			break;
	}
}

/* One pass over p's rings. */
static void scan_process(struct tracerd_process *p)
{
	struct tracerd_trig_scan *s = scan_state(p);
	uint32_t i;
	int c;

	if (!s || !s->any || fit_copy(p->d, p))
		return;
	for (i = 0; i < p->pool.nbuf; i++) {
		for (c = 0; c < TRACER_POOL_CHANNELS; c++) {
			struct chan_scan *cs =
				&s->ch[i * TRACER_POOL_CHANNELS + c];

			if (p->pool.buf[i].broken[c] ||
			    (!cs->on && chan_start(cs, &p->pool.buf[i], c)))
				continue;
			chan_scan(p, s, cs);
		}
	}
}

static bool watching(const struct tracerd *d)
{
	return d->trig.n && tracerd_flight_recording(d);
}

void tracerd_triggers_scan(struct tracerd *d)
{
	struct tracerd_process *p;
	bool on = watching(d);

	cds_list_for_each_entry(p, &d->processes, node) {
		if (!on)
			tracerd_triggers_forget(p);	/* nothing to watch */
		else if (!p->ending && p->in_session && !p->adopting)
			scan_process(p);
	}
}

void tracerd_triggers_scan_ending(struct tracerd_process *p)
{
	if (watching(p->d) && p->in_session && !p->adopting)
		scan_process(p);
	tracerd_triggers_forget(p);
}

void tracerd_triggers_own(struct tracerd_process *p, const char *name)
{
	struct tracerd *d = p->d;
	struct tracerd_trigger *t;
	char what[200];

	if (!watching(d) || !p->in_session)
		return;
	snprintf(what, sizeof(what), "%s pid %d", name, (int)p->pid);
	cds_list_for_each_entry(t, &d->trig.list, node)
		if ((!t->pid || t->pid == p->pid) &&
		    tracer__patterns_select(&t->pats, name))
			matched(d, t, what);
}

/* ------------------------------------------------------------------ */
/* Acting                                                              */

/* The note of the snapshot: every trigger hit, a line each. */
static char *hit_note(struct tracerd *d)
{
	struct tracerd_trigger *t;
	char *note = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&note, &len);
	bool first = true;

	if (!f)
		return NULL;
	cds_list_for_each_entry(t, &d->trig.list, node) {
		if (!t->hit)
			continue;
		fprintf(f, "%strigger %" PRIu32 " on '%s': %s",
			first ? "" : "\n", t->id, t->on, t->hit_event);
		first = false;
	}
	if (fclose(f)) {
		free(note);
		return NULL;
	}
	return note;
}

/* The triggers hit: the snapshot in dir is theirs (NULL: none, why). */
static void fired(struct tracerd *d, const char *dir, const char *why)
{
	struct tracerd_trigger *t;
	uint64_t now = tracerd_now_ms();

	cds_list_for_each_entry(t, &d->trig.list, node) {
		if (!t->hit)
			continue;
		t->hit = false;
		t->fired++;
		t->last_ms = now ? now : 1;
		memcpy(t->last_event, t->hit_event, sizeof(t->last_event));
		free(t->last_snapshot);
		t->last_snapshot = dir ? strdup(dir) : NULL;
		tracerd_log("trigger %" PRIu32 " on '%s': %s: %s%s", t->id,
			    t->on, t->hit_event, dir ? "snapshot " :
			    "no snapshot: ", dir ? dir : why);
	}
}

static void on_fire(uv_timer_t *h)
{
	struct tracerd *d = h->data;
	struct tracerd_trigger *t;
	char dir[4200], why[4300], *note;
	bool hit = false;
	unsigned failed;
	int n;

	cds_list_for_each_entry(t, &d->trig.list, node)
		hit |= t->hit;
	d->trig.any_hit = false;
	if (!hit)
		return;		/* removed meanwhile */
	if (!tracerd_flight_recording(d)) {
		fired(d, NULL, "the session stopped meanwhile");
		return;
	}
	note = hit_note(d);
	n = tracerd_snapshot_take(d, note, dir, sizeof(dir), &failed, why,
				  sizeof(why));
	free(note);
	if (n >= 0 && failed)
		tracerd_log("a trigger's snapshot: %u process(es) could not be "
			    "written", failed);
	fired(d, n < 0 ? NULL : dir, why);
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */

static void to_msg(const struct tracerd_trigger *t, Tracer__Trigger *m)
{
	tracer__trigger__init(m);
	m->id = t->id;
	m->on = t->on;
	m->pid = (uint32_t)t->pid;
	m->interval_ms = t->interval_ms;
	m->action = (char *)"snapshot";
	m->matched = t->matched;
	m->fired = t->fired;
	m->last_snapshot = t->last_snapshot ? t->last_snapshot : (char *)"";
	m->last_event = (char *)t->last_event;
}

/* Answer c with the triggers v[0..n). */
static void reply_list(struct tracerd_client *c, struct tracerd_trigger **v,
		       size_t n)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__TriggerList l = TRACER__TRIGGER_LIST__INIT;
	Tracer__Trigger *e = calloc(n ? n : 1, sizeof(*e));
	Tracer__Trigger **pv = calloc(n ? n : 1, sizeof(*pv));
	size_t i;

	if (!e || !pv) {
		free(e);
		free(pv);
		tracerd_send_error(c, -ENOMEM, "out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		to_msg(v[i], &e[i]);
		pv[i] = &e[i];
	}
	l.n_triggers = n;
	l.triggers = pv;
	m.body_case = TRACER__MESSAGE__BODY_TRIGGER_LIST;
	m.trigger_list = &l;
	tracerd_send(c, &m, NULL, 0);
	free(e);
	free(pv);
}

/* why (n bytes) gets the reason; returns err. */
static int refuse(int err, char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(int err, char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return err;
}

/* What is wrong with request r, in why: 0 if nothing, -EINVAL (no
 * patterns, another action, an interval over a day), -ESRCH (a pid
 * tracerd does not trace), -ENOSPC (TRACERD_TRIGGERS_MAX already). */
static int check_add(struct tracerd *d, const Tracer__Trigger *r,
		     char *why, size_t n)
{
	if (!r || !r->on || !r->on[0])
		return refuse(-EINVAL, why, n, "a trigger needs event "
			      "patterns (--on)");
	if (!r->action || strcmp(r->action, "snapshot"))
		return refuse(-EINVAL, why, n, "unknown trigger action "
			      "'%.40s' (snapshot)",
			      r->action ? r->action : "");
	if (r->interval_ms > INTERVAL_MAX_MS)
		return refuse(-EINVAL, why, n, "interval %" PRIu64 " ms is "
			      "longer than a day", r->interval_ms);
	if (r->pid && !tracerd_process_find(d, (pid_t)r->pid))
		return refuse(-ESRCH, why, n, "no traced process has pid %"
			      PRIu32, r->pid);
	if (d->trig.n >= TRACERD_TRIGGERS_MAX)
		return refuse(-ENOSPC, why, n, "tracerd holds %d triggers "
			      "already: remove one first",
			      TRACERD_TRIGGERS_MAX);
	return 0;
}

/* The lowest bit no trigger uses (there is one: n < 64). */
static uint32_t free_bit(const struct tracerd *d)
{
	uint32_t b = 0;

	while (d->trig.bits & (1ULL << b))
		b++;
	return b;
}

void tracerd_trigger_add(struct tracerd_client *c, const Tracer__TriggerAdd *r)
{
	struct tracerd *d = c->d;
	const Tracer__Trigger *q = r->trigger;
	struct tracerd_trigger *t;
	char why[400];
	int ret = check_add(d, q, why, sizeof(why));

	if (ret || !(t = calloc(1, sizeof(*t)))) {
		tracerd_send_error(c, ret ? ret : -ENOMEM,
				   ret ? why : "out of memory");
		return;
	}
	ret = tracer__patterns_parse(q->on, &t->pats, why, sizeof(why));
	if (ret || !(t->on = strdup(q->on))) {
		tracerd_send_error(c, ret ? ret : -ENOMEM,
				   ret ? why : "out of memory");
		trigger_free(t);
		return;
	}
	t->id = ++d->trig.next_id;
	t->bit = free_bit(d);
	t->pid = (pid_t)q->pid;
	t->interval_ms = q->interval_ms ? q->interval_ms : INTERVAL_DEFAULT_MS;
	t->since = tracerd_now(d);
	d->trig.bits |= 1ULL << t->bit;
	d->trig.n++;
	d->trig.gen++;
	cds_list_add_tail(&t->node, &d->trig.list);
	tracerd_log("trigger %" PRIu32 " added: on '%s'%s, snapshot at most "
		    "every %" PRIu64 " ms", t->id, t->on, t->pid ? " of a pid"
		    : "", t->interval_ms);
	reply_list(c, &t, 1);
}

void tracerd_trigger_remove(struct tracerd_client *c,
			    const Tracer__TriggerRemove *r)
{
	struct tracerd *d = c->d;
	struct tracerd_trigger *t, *tmp, **v;
	size_t n = 0;
	char why[80];

	v = calloc(d->trig.n ? d->trig.n : 1, sizeof(*v));
	if (!v) {
		tracerd_send_error(c, -ENOMEM, "out of memory");
		return;
	}
	cds_list_for_each_entry(t, &d->trig.list, node)
		if (r->all || t->id == r->id)
			v[n++] = t;
	if (!n && !r->all) {
		snprintf(why, sizeof(why), "no trigger %" PRIu32, r->id);
		tracerd_send_error(c, -ENOENT, why);
		free(v);
		return;
	}
	reply_list(c, v, n);	/* before they are freed */
	cds_list_for_each_entry_safe(t, tmp, &d->trig.list, node) {
		if (!r->all && t->id != r->id)
			continue;
		tracerd_log("trigger %" PRIu32 " removed", t->id);
		d->trig.bits &= ~(1ULL << t->bit);
		d->trig.n--;
		cds_list_del(&t->node);
		trigger_free(t);
	}
	d->trig.gen++;
	free(v);
}

void tracerd_trigger_list(struct tracerd_client *c)
{
	struct tracerd *d = c->d;
	struct tracerd_trigger *t, **v;
	size_t n = 0;

	v = calloc(d->trig.n ? d->trig.n : 1, sizeof(*v));
	if (!v) {
		tracerd_send_error(c, -ENOMEM, "out of memory");
		return;
	}
	cds_list_for_each_entry(t, &d->trig.list, node)
		v[n++] = t;
	reply_list(c, v, n);
	free(v);
}
