/*
 * fdnames.c - descriptors named in messages (fdnames.h).
 *
 * Each call site gets a plan once: its fields (the word before each
 * conversion of its format: "fd %d" is field fd), which of them are
 * descriptors, and what the event does to the table. The watch applies
 * what an event opens at once and what it closes when the next record
 * comes, so that the item handed out in between (tracer__fdnames_item())
 * names the descriptors its own event closes, and those it opens.
 *
 * A name is put after the text of its value: the message is cut where
 * the format up to that conversion ends, measured by formatting that
 * much of the format with the same values (and the same %p notes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdnames.h"
#include "format.h"

#define MAX_PROCS	1024
#define MAX_FDS_PROC	1024
#define MAX_FDS_ALL	65536
#define NAME_CUT	200
#define MAX_FIELDS	24
#define MAX_CONVS	8
#define MAX_VALUES	32
#define PLAN_SLOTS	4096		/* a power of two */
#define CLOEXEC		0x80000		/* O_CLOEXEC, SOCK_CLOEXEC */
#define RANGE_CLOEXEC	4		/* CLOSE_RANGE_CLOEXEC */
#define MEASURE_MAX	(16 * 1024 * 1024)

struct fd_entry {
	int fd;
	bool cloexec;
	bool socket;
	char *name;			/* a socket's family */
	char *local;			/* a socket's addresses, or NULL */
	char *peer;
};

struct fd_table {
	uint32_t pid;			/* 0: a free slot */
	bool exec_pending;		/* proc:exec seen, new image not yet */
	bool from_start;		/* made by the child's proc:start */
	uint64_t used;			/* for forgetting the least recent */
	struct fd_entry *e;		/* by fd */
	size_t n, cap;
};

enum act {
	ACT_NONE, ACT_OPEN, ACT_SOCKET, ACT_BIND, ACT_CONNECT,
	ACT_CONNECT_EXIT, ACT_ACCEPT, ACT_PAIR, ACT_DUP, ACT_FCNTL, ACT_CLOSE,
	ACT_CLOSE_RANGE, ACT_CLOSEFROM, ACT_FORK, ACT_START, ACT_SPAWN,
	ACT_EXEC, ACT_EXEC_FAILED, ACT_EXIT, ACT_KERNEL,
};

/* Descriptors of the kernel's own objects, named as /proc/PID/fd does
 * (a memfd: "/memfd:" and its name). */
static const struct { const char *call, *name; } kernel_fds[] = {
	{ "epoll_create", "anon_inode:[eventpoll]" },
	{ "epoll_create1", "anon_inode:[eventpoll]" },
	{ "eventfd", "anon_inode:[eventfd]" },
	{ "timerfd_create", "anon_inode:[timerfd]" },
	{ "inotify_init", "anon_inode:inotify" },
	{ "inotify_init1", "anon_inode:inotify" },
	{ "signalfd", "anon_inode:[signalfd]" },
	{ "memfd_create", "/memfd:" },
};

static const char *kernel_fd_name(const char *call)
{
	size_t i;

	for (i = 0; i < sizeof(kernel_fds) / sizeof(kernel_fds[0]); i++)
		if (!strcmp(call, kernel_fds[i].call))
			return kernel_fds[i].name;
	return NULL;
}

/* A conversion of a format and the word before it. */
struct field {
	const char *name;		/* in the format; NULL: none */
	size_t len;
	int arg;			/* the value it prints */
	char conv;			/* its conversion letter */
};

/* A descriptor conversion: the format up to its end, and the types of
 * the values that much reads. */
struct fd_conv {
	char *prefix;
	char *types;
	int arg;
};

struct plan {
	const struct tracer__site *cs;
	enum act act;
	bool pipe;			/* ACT_PAIR: pipe, else socketpair */
	struct field f[MAX_FIELDS];
	size_t nf;
	struct fd_conv c[MAX_CONVS];
	size_t nc;
};

/* A removal the next record applies. */
struct pending {
	enum act act;			/* ACT_NONE: none */
	uint32_t pid;
	int64_t a, b;
};

struct tracer_fdnames {
	struct fd_table *procs;		/* MAX_PROCS slots, nprocs used */
	size_t nprocs;
	size_t last;			/* the slot found last */
	uint64_t clock;
	size_t total;			/* entries of all tables */
	struct plan **plans;		/* PLAN_SLOTS, by call site */
	size_t nplans;
	struct pending pend;
	tracer_merge_note_fn note;
	void *note_ctx;
	char *out, *pre;		/* the message made; a measure */
	size_t out_size, pre_size;
};

/* ----------------------------------------------------------------------
 * Plans.
 */

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool field_is(const struct field *f, const char *name)
{
	return f->name && f->len == strlen(name) &&
	       !strncmp(f->name, name, f->len);
}

/* Is a field of this name a descriptor? fd, fds, *fd but lowfd, fd_*. */
static bool fd_field(const struct field *f)
{
	if (!f->name || !strchr("di", f->conv))
		return false;
	if (field_is(f, "fds") || (f->len > 3 && !strncmp(f->name, "fd_", 3)))
		return true;
	return f->len >= 2 && !strncmp(f->name + f->len - 2, "fd", 2) &&
	       !field_is(f, "lowfd");
}

/*
 * The end of the conversion at fmt[i] (just after '%'), *conv its letter
 * (0: none, an unknown one, copied as it is). Sets *positional at a '$'.
 */
static size_t conv_end(const char *fmt, size_t i, char *conv,
		       bool *positional)
{
	*conv = 0;
	while (fmt[i] && strchr("-+ #0'I", fmt[i]))
		i++;
	while (fmt[i] && (strchr("0123456789*.", fmt[i]) || fmt[i] == '$')) {
		if (fmt[i] == '$')
			*positional = true;
		i++;
	}
	while (fmt[i] && strchr("hlqjzZtL", fmt[i]))
		i++;
	if (fmt[i] && strchr("diouxXcspfFeEgGaAn", fmt[i]))
		*conv = fmt[i++];
	return i;
}

/* The word just before fmt[at] ("fd " before "%d"), if any, not part of
 * the conversion that ends at fmt[from]. */
static void word_before(const char *fmt, size_t from, size_t at,
			struct field *f)
{
	size_t e = at, b;

	f->name = NULL;
	if (e < 2 || fmt[e - 1] != ' ')
		return;
	e--;
	for (b = e; b > 0 && word_char(fmt[b - 1]); b--)
		;
	if (b < e && b >= from && (b == 0 || !word_char(fmt[b - 1]))) {
		f->name = fmt + b;
		f->len = e - b;
	}
}

/* Only spaces between fmt[from] and fmt[to] (at least one)? */
static bool spaces_only(const char *fmt, size_t from, size_t to)
{
	size_t i;

	if (from >= to)
		return false;
	for (i = from; i < to; i++)
		if (fmt[i] != ' ')
			return false;
	return true;
}

/* Add a descriptor conversion ending at fmt[end] to p. Returns 0 or
 * -ENOMEM. */
static int add_conv(struct plan *p, const struct tracer__site *cs,
		    size_t end)
{
	struct fd_conv *c = &p->c[p->nc];
	const char *types[MAX_VALUES];
	size_t n;

	c->prefix = strndup(cs->format, end);
	if (!c->prefix)
		return -ENOMEM;
	n = tracer__format_arg_types(c->prefix, types, MAX_VALUES);
	if (n == 0 || n > strlen(cs->types) || n > MAX_VALUES) {
		free(c->prefix);
		return 0;
	}
	c->types = strndup(cs->types, n);
	if (!c->types) {
		free(c->prefix);
		return -ENOMEM;
	}
	c->arg = (int)n - 1;
	p->nc++;
	return 0;
}

/* How many '*' (values read) in the n bytes of a conversion at s. */
static int stars(const char *s, size_t n)
{
	int k = 0;

	while (n--)
		k += *s++ == '*';
	return k;
}

/* The fields of cs's format into p. Returns 0 or -ENOMEM. */
static int read_fields(struct plan *p, const struct tracer__site *cs)
{
	const char *fmt = cs->format;
	bool positional = false;
	struct field *f;
	size_t i = 0, prev_end = 0, pct;
	int arg = 0, ret;
	char conv;

	while (fmt[i] && p->nf < MAX_FIELDS) {
		if (fmt[i] != '%') {
			i++;
			continue;
		}
		if (fmt[i + 1] == '%') {
			i += 2;
			continue;
		}
		pct = i;
		i = conv_end(fmt, i + 1, &conv, &positional);
		if (positional) {
			p->nf = 0;	/* not followed: no names */
			return 0;
		}
		arg += stars(fmt + pct, i - pct);
		if (!conv)
			continue;
		f = &p->f[p->nf];
		word_before(fmt, prev_end, pct, f);
		if (!f->name && p->nf && p->f[p->nf - 1].name &&
		    spaces_only(fmt, prev_end, pct)) {
			f->name = p->f[p->nf - 1].name;	/* "fds %d %d" */
			f->len = p->f[p->nf - 1].len;
		}
		f->conv = conv;
		f->arg = arg++;
		p->nf++;
		prev_end = i;
		if (p->nc < MAX_CONVS && (fd_field(f) ||
		    (p->act == ACT_ACCEPT && field_is(f, "result")))) {
			ret = add_conv(p, cs, i);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The field named name (the which-th of that name), or NULL. */
static const struct field *field_of(const struct plan *p, const char *name,
				    int which)
{
	size_t i;

	for (i = 0; i < p->nf; i++)
		if (field_is(&p->f[i], name) && which-- == 0)
			return &p->f[i];
	return NULL;
}

/* What an event of name base (after "PROVIDER:") does, from its name
 * and fields. */
static enum act act_of(const struct plan *p, const char *provider,
		       size_t plen, const char *base)
{
	static const struct { const char *name; enum act act; } proc[] = {
		{ "fork", ACT_FORK }, { "start", ACT_START },
		{ "spawn", ACT_SPAWN }, { "exec", ACT_EXEC },
		{ "exec_failed", ACT_EXEC_FAILED }, { "exit", ACT_EXIT },
	};
	const struct field *path = field_of(p, "path", 0);
	const struct field *fd = field_of(p, "fd", 0);
	size_t i;

	if (plen == 4 && !strncmp(provider, "proc", 4)) {
		for (i = 0; i < sizeof(proc) / sizeof(proc[0]); i++)
			if (!strcmp(base, proc[i].name))
				return proc[i].act;
		return ACT_NONE;
	}
	if (plen != 4 || strncmp(provider, "libc", 4))
		return ACT_NONE;
	if (path && path->conv == 's' && fd && fd->arg > path->arg)
		return ACT_OPEN;
	if (!strcmp(base, "socket"))
		return ACT_SOCKET;
	if (!strcmp(base, "bind"))
		return ACT_BIND;
	if (!strcmp(base, "connect_entry"))
		return ACT_CONNECT;
	if (!strcmp(base, "connect_exit"))
		return ACT_CONNECT_EXIT;
	if (!strcmp(base, "close") || !strcmp(base, "fclose"))
		return ACT_CLOSE;
	if (!strcmp(base, "fcntl") || !strcmp(base, "fcntl64"))
		return ACT_FCNTL;
	if (!strcmp(base, "close_range"))
		return ACT_CLOSE_RANGE;
	if (fd && kernel_fd_name(base))
		return ACT_KERNEL;
	if (!strcmp(base, "closefrom"))
		return ACT_CLOSEFROM;
	if (field_of(p, "fds", 1) && (strstr(base, "pipe") ||
				      strstr(base, "socketpair")))
		return ACT_PAIR;
	if (fd && field_of(p, "newfd", 0))
		return ACT_DUP;
	return ACT_NONE;
}

static void plan_free(struct plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nc; i++) {
		free(p->c[i].prefix);
		free(p->c[i].types);
	}
	free(p);
}

/* The plan of cs (made the first time), NULL when out of memory. */
static const struct plan *plan_of(struct tracer_fdnames *f,
				  const struct tracer__site *cs)
{
	size_t h = ((uintptr_t)cs >> 4) * 2654435761u, i;
	const char *colon = strchr(cs->name, ':');
	struct plan *p;

	for (i = 0; i < PLAN_SLOTS; i++) {
		p = f->plans[(h + i) & (PLAN_SLOTS - 1)];
		if (!p)
			break;
		if (p->cs == cs)
			return p;
	}
	if (f->nplans >= PLAN_SLOTS / 2) {	/* many processes: start over */
		for (i = 0; i < PLAN_SLOTS; i++) {
			plan_free(f->plans[i]);
			f->plans[i] = NULL;
		}
		f->nplans = 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cs = cs;
	if (colon && !strcmp(colon + 1, "accept_exit"))
		p->act = ACT_ACCEPT;	/* its result is named too */
	if (read_fields(p, cs)) {
		plan_free(p);
		return NULL;
	}
	if (colon && p->act == ACT_NONE)
		p->act = act_of(p, cs->name, (size_t)(colon - cs->name),
				colon + 1);
	p->pipe = strstr(cs->name, "pipe") != NULL;
	for (i = 0; f->plans[(h + i) & (PLAN_SLOTS - 1)]; i++)
		;
	f->plans[(h + i) & (PLAN_SLOTS - 1)] = p;
	f->nplans++;
	return p;
}

/* ----------------------------------------------------------------------
 * Values.
 */

struct values {
	struct tracer__value v[MAX_VALUES];
	size_t n;
};

static void decode(const char *types, const void *payload, size_t size,
		   struct values *vs)
{
	size_t off = 0;

	for (vs->n = 0; types[vs->n] && vs->n < MAX_VALUES; vs->n++)
		if (tracer__payload_next(types[vs->n], payload, size, &off,
					 &vs->v[vs->n]))
			break;
}

/* The integer value of field f. */
static bool int_value(const struct values *vs, const struct field *f,
		      int64_t *out)
{
	const struct tracer__value *v;

	if (!f || f->arg < 0 || (size_t)f->arg >= vs->n)
		return false;
	v = &vs->v[f->arg];
	if (v->type == 'i')
		*out = v->i;
	else if (v->type == 'u' || v->type == 'p')
		*out = (int64_t)v->u;
	else
		return false;
	return true;
}

static bool int_field(const struct plan *p, const struct values *vs,
		      const char *name, int which, int64_t *out)
{
	return int_value(vs, field_of(p, name, which), out);
}

static const char *str_field(const struct plan *p, const struct values *vs,
			     const char *name)
{
	const struct field *f = field_of(p, name, 0);

	if (!f || (size_t)f->arg >= vs->n || vs->v[f->arg].type != 's')
		return NULL;
	return vs->v[f->arg].s;
}

/* A descriptor number: 0 to INT32_MAX. */
static bool fd_value(int64_t v)
{
	return v >= 0 && v <= INT32_MAX;
}

/* ----------------------------------------------------------------------
 * Tables.
 */

static struct fd_table *table_find(struct tracer_fdnames *f, uint32_t pid)
{
	size_t i;

	if (!pid)
		return NULL;
	if (f->procs[f->last].pid == pid)
		return &f->procs[f->last];
	for (i = 0; i < f->nprocs; i++)
		if (f->procs[i].pid == pid) {
			f->last = i;
			return &f->procs[i];
		}
	return NULL;
}

static void entry_clear(struct fd_entry *e)
{
	free(e->name);
	free(e->local);
	free(e->peer);
}

static void table_clear(struct tracer_fdnames *f, struct fd_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		entry_clear(&t->e[i]);
	f->total -= t->n;
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/* A new empty table for pid, forgetting the least recently used one if
 * all slots are taken. */
static struct fd_table *table_new(struct tracer_fdnames *f, uint32_t pid)
{
	size_t i, pick = f->nprocs;

	if (f->nprocs < MAX_PROCS) {
		f->nprocs++;
	} else {
		for (pick = i = 0; i < f->nprocs; i++)
			if (f->procs[i].used < f->procs[pick].used)
				pick = i;
	}
	table_clear(f, &f->procs[pick]);
	f->procs[pick].pid = pid;
	f->procs[pick].used = ++f->clock;
	f->last = pick;
	return &f->procs[pick];
}

/* Forget t: the last table takes its slot. */
static void table_forget(struct tracer_fdnames *f, struct fd_table *t)
{
	struct fd_table *last = &f->procs[f->nprocs - 1];

	table_clear(f, t);
	if (t != last) {
		*t = *last;
		memset(last, 0, sizeof(*last));
	}
	f->nprocs--;
	f->last = 0;
}

/* The index of fd in t, or where it would go (*found false). */
static size_t entry_at(const struct fd_table *t, int fd, bool *found)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->e[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < t->n && t->e[lo].fd == fd;
	return lo;
}

static struct fd_entry *entry_find(struct fd_table *t, int64_t fd)
{
	bool found;
	size_t i;

	if (!t || !fd_value(fd))
		return NULL;
	i = entry_at(t, (int)fd, &found);
	return found ? &t->e[i] : NULL;
}

static void entry_remove(struct tracer_fdnames *f, struct fd_table *t,
			 int64_t fd)
{
	bool found;
	size_t i;

	if (!t || !fd_value(fd))
		return;
	i = entry_at(t, (int)fd, &found);
	if (!found)
		return;
	entry_clear(&t->e[i]);
	memmove(&t->e[i], &t->e[i + 1], (t->n - i - 1) * sizeof(t->e[0]));
	t->n--;
	f->total--;
}

/* A copy of s, cut at NAME_CUT bytes, other than printable bytes as
 * '?' (NULL: s NULL, or no memory). */
static char *name_dup(const char *s)
{
	size_t n = s ? strnlen(s, NAME_CUT) : 0, i;
	char *d;

	if (!s)
		return NULL;
	d = malloc(n + 1);
	if (!d)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		d[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	d[n] = '\0';
	return d;
}

/*
 * Name fd in t: the entry, empty (name NULL) but for fd and cloexec, or
 * NULL when a limit or memory does not allow it (fd then forgotten).
 */
static struct fd_entry *entry_set(struct tracer_fdnames *f,
				  struct fd_table *t, int64_t fd, bool cloexec)
{
	struct fd_entry *e;
	bool found;
	size_t i;

	if (!t || !fd_value(fd))
		return NULL;
	i = entry_at(t, (int)fd, &found);
	if (found) {
		entry_clear(&t->e[i]);
	} else {
		if (t->n >= MAX_FDS_PROC || f->total >= MAX_FDS_ALL)
			return NULL;
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;

			e = realloc(t->e, cap * sizeof(*e));
			if (!e)
				return NULL;
			t->e = e;
			t->cap = cap;
		}
		memmove(&t->e[i + 1], &t->e[i], (t->n - i) * sizeof(*e));
		t->n++;
		f->total++;
	}
	e = &t->e[i];
	memset(e, 0, sizeof(*e));
	e->fd = (int)fd;
	e->cloexec = cloexec;
	return e;
}

/* fd names path (or a socket of that family): false when not kept. */
static bool name_fd(struct tracer_fdnames *f, struct fd_table *t, int64_t fd,
		    const char *name, bool socket, bool cloexec)
{
	struct fd_entry *e = entry_set(f, t, fd, cloexec);

	if (e) {
		e->socket = socket;
		e->name = name_dup(name);
		if (e->name)
			return true;
	}
	entry_remove(f, t, fd);
	return false;
}

/* Copy src's entry to fd of t (dup). */
static void copy_entry(struct tracer_fdnames *f, struct fd_table *t,
		       const struct fd_entry *src, int64_t fd, bool cloexec)
{
	struct fd_entry copy = *src, *e;

	/* src may move when t grows: its strings are copied first. */
	copy.name = name_dup(src->name);
	copy.local = name_dup(src->local);
	copy.peer = name_dup(src->peer);
	e = entry_set(f, t, fd, cloexec);
	if (!e || !copy.name || (src->local && !copy.local) ||
	    (src->peer && !copy.peer)) {
		entry_clear(&copy);
		entry_remove(f, t, fd);
		return;
	}
	copy.fd = (int)fd;
	copy.cloexec = cloexec;
	*e = copy;
}

/* A copy of table src for pid (without its close-on-exec entries). */
static struct fd_table *table_copy(struct tracer_fdnames *f, uint32_t pid,
				   uint32_t src_pid, bool drop_cloexec)
{
	struct fd_table *t = table_new(f, pid), *src = table_find(f, src_pid);
	size_t i;

	f->last = (size_t)(t - f->procs);
	if (!src || src == t)
		return t;
	for (i = 0; i < src->n; i++)
		if (!drop_cloexec || !src->e[i].cloexec)
			copy_entry(f, t, &src->e[i], src->e[i].fd,
				   src->e[i].cloexec);
	return t;
}

static void drop_cloexec(struct tracer_fdnames *f, struct fd_table *t)
{
	size_t i = 0;

	while (i < t->n)
		if (t->e[i].cloexec)
			entry_remove(f, t, t->e[i].fd);
		else
			i++;
}

/* Remove (or, cloexec_only, mark) the entries from first to last. */
static void remove_range(struct tracer_fdnames *f, struct fd_table *t,
			 int64_t first, int64_t last, bool cloexec_only)
{
	size_t i = 0;

	while (t && i < t->n) {
		if (t->e[i].fd < first || t->e[i].fd > last) {
			i++;
		} else if (cloexec_only) {
			t->e[i++].cloexec = true;
		} else {
			entry_remove(f, t, t->e[i].fd);
		}
	}
}

/* ----------------------------------------------------------------------
 * Events.
 */

/* The family word of a socket() domain. */
static const char *family_of(int64_t domain, char *buf, size_t size)
{
	switch (domain) {
	case 1: return "unix";
	case 2: return "inet";
	case 10: return "inet6";
	case 16: return "netlink";
	case 17: return "packet";
	}
	snprintf(buf, size, "domain %" PRId64, domain);
	return buf;
}

/* The family of a socket from its address text (wrap.c's forms). */
static const char *family_of_addr(const char *a)
{
	if (!strncmp(a, "unix:", 5))
		return "unix";
	if (a[0] == '[')
		return "inet6";
	if (a[0] >= '0' && a[0] <= '9')
		return "inet";
	return "socket";
}

/* Replace *slot by a copy of a ("-" or NULL: none). */
static void set_addr(char **slot, const char *a)
{
	free(*slot);
	*slot = NULL;
	if (a && strcmp(a, "-") && *a) {
		if (!strncmp(a, "unix:", 5))
			a += 5;
		*slot = name_dup(a);
	}
}

/* Did flags (field "flags" or "type") ask for close-on-exec? */
static bool cloexec_of(const struct plan *p, const struct values *vs)
{
	const char *mode = str_field(p, vs, "mode");
	int64_t v;

	if ((int_field(p, vs, "flags", 0, &v) ||
	     int_field(p, vs, "type", 0, &v)) && (v & CLOEXEC))
		return true;
	return mode && strchr(mode, 'e');
}

/* A call whose "result" (if it has one) says it failed. */
static bool failed(const struct plan *p, const struct values *vs)
{
	int64_t r;

	return int_field(p, vs, "result", 0, &r) && r < 0;
}

/* Does a string value of vs hold s? */
static bool any_string_has(const struct values *vs, const char *s)
{
	size_t i;

	for (i = 0; i < vs->n; i++)
		if (vs->v[i].type == 's' && strstr(vs->v[i].s, s))
			return true;
	return false;
}

static void on_accept(struct tracer_fdnames *f, struct fd_table *t,
		      const struct plan *p, const struct values *vs)
{
	const struct fd_entry *l;
	const char *peer = str_field(p, vs, "peer");
	const char *fam;
	struct fd_entry *e;
	int64_t fd, r;
	char *local;

	if (!int_field(p, vs, "fd", 0, &fd) ||
	    !int_field(p, vs, "result", 0, &r) || !fd_value(r))
		return;
	l = entry_find(t, fd);
	fam = l && l->socket ? l->name : family_of_addr(peer ? peer : "");
	local = l && l->socket ? name_dup(l->local) : NULL;
	if (!name_fd(f, t, r, fam, true, false)) {
		free(local);
		return;
	}
	e = entry_find(t, r);
	e->local = local;
	set_addr(&e->peer, peer);
}

/* fcntl(): F_DUPFD and F_DUPFD_CLOEXEC as dup(), F_SETFD's FD_CLOEXEC
 * (by the "cmdname" libc:fcntl gives). */
static void on_fcntl(struct tracer_fdnames *f, struct fd_table *t,
		     const struct plan *p, const struct values *vs)
{
	const char *cmd = str_field(p, vs, "cmdname");
	struct fd_entry *e;
	int64_t fd, r, arg;

	if (!cmd || !int_field(p, vs, "fd", 0, &fd) ||
	    !int_field(p, vs, "result", 0, &r) || r < 0)
		return;
	e = entry_find(t, fd);
	if (!strcmp(cmd, "F_DUPFD") || !strcmp(cmd, "F_DUPFD_CLOEXEC")) {
		if (e && r != fd)
			copy_entry(f, t, e, r, cmd[7] == '_');
		else if (!e)
			entry_remove(f, t, r);
	} else if (!strcmp(cmd, "F_SETFD") && e &&
		   int_field(p, vs, "arg", 0, &arg)) {
		e->cloexec = arg & 1;	/* FD_CLOEXEC */
	}
}

/* A descriptor of the kernel's own (ACT_KERNEL); memfd_create's flags
 * say close-on-exec with MFD_CLOEXEC (1). */
static void on_kernel_fd(struct tracer_fdnames *f, struct fd_table *t,
			 const struct plan *p, const struct values *vs,
			 int64_t fd, bool ce)
{
	const char *base = strchr(p->cs->name, ':'), *name, *given;
	char buf[NAME_CUT];
	int64_t flags;

	base = base ? base + 1 : p->cs->name;
	name = kernel_fd_name(base);
	if (!name)
		return;
	if (!strcmp(base, "signalfd")) {
		/* fd -1 makes one (its result); another fd is that one. */
		if (fd == -1 && int_field(p, vs, "result", 0, &fd) && fd >= 0)
			name_fd(f, t, fd, name, false, ce);
		return;
	}
	if (strcmp(base, "memfd_create")) {
		name_fd(f, t, fd, name, false, ce);
		return;
	}
	given = str_field(p, vs, "name");
	snprintf(buf, sizeof(buf), "%s%s", name, given ? given : "");
	name_fd(f, t, fd, buf, false,
		int_field(p, vs, "flags", 0, &flags) && (flags & 1));
}

/* Descriptors made: named at once. */
static void on_open(struct tracer_fdnames *f, struct fd_table *t,
		    const struct plan *p, const struct values *vs)
{
	bool ce = cloexec_of(p, vs);
	int64_t fd = -1, a, b;
	struct fd_entry *e;
	char buf[32];

	int_field(p, vs, "fd", 0, &fd);
	switch (p->act) {
	case ACT_OPEN:
		name_fd(f, t, fd, str_field(p, vs, "path"), false, ce);
		break;
	case ACT_KERNEL:
		on_kernel_fd(f, t, p, vs, fd, ce);
		break;
	case ACT_SOCKET:
		if (int_field(p, vs, "domain", 0, &a))
			name_fd(f, t, fd, family_of(a, buf, sizeof(buf)),
				true, ce);
		break;
	case ACT_BIND:
	case ACT_CONNECT:
		e = entry_find(t, fd);
		if (e && e->socket && !failed(p, vs))
			set_addr(p->act == ACT_BIND ? &e->local : &e->peer,
				 str_field(p, vs, "addr"));
		break;
	case ACT_CONNECT_EXIT:
		e = entry_find(t, fd);
		if (e && e->socket && failed(p, vs) &&
		    !any_string_has(vs, "EINPROGRESS"))
			set_addr(&e->peer, NULL);
		break;
	case ACT_ACCEPT:
		on_accept(f, t, p, vs);
		break;
	case ACT_PAIR:
		if (failed(p, vs) || !int_field(p, vs, "fds", 0, &a) ||
		    !int_field(p, vs, "fds", 1, &b))
			break;
		name_fd(f, t, a, p->pipe ? "pipe:[r]" : "unix", !p->pipe, ce);
		name_fd(f, t, b, p->pipe ? "pipe:[w]" : "unix", !p->pipe, ce);
		break;
	case ACT_DUP:
		if (failed(p, vs) || !int_field(p, vs, "newfd", 0, &b) ||
		    !fd_value(b) || b == fd)
			break;
		e = entry_find(t, fd);
		if (e)
			copy_entry(f, t, e, b, ce);
		else
			entry_remove(f, t, b);
		break;
	case ACT_FCNTL:
		on_fcntl(f, t, p, vs);
		break;
	default:
		break;
	}
}

/* proc: events. */
static void on_proc(struct tracer_fdnames *f, uint32_t pid,
		    const struct plan *p, const struct values *vs)
{
	struct fd_table *t = table_find(f, pid), *c;
	int64_t v;

	switch (p->act) {
	case ACT_FORK:
		if (int_field(p, vs, "child", 0, &v) && v > 0 &&
		    v <= INT32_MAX && !table_find(f, (uint32_t)v) && t)
			table_copy(f, (uint32_t)v, pid, false);
		break;
	case ACT_SPAWN:
		if (!int_field(p, vs, "pid", 0, &v) || v <= 0 ||
		    v > INT32_MAX || !t)
			break;
		c = table_find(f, (uint32_t)v);
		if (!c) {
			table_copy(f, (uint32_t)v, pid, true);
		} else if (c->from_start) {
			drop_cloexec(f, c);
			c->from_start = false;
		}
		break;
	case ACT_START:
		if (t && t->exec_pending) {
			drop_cloexec(f, t);
			t->exec_pending = false;
		} else if (!t && int_field(p, vs, "ppid", 0, &v) && v > 0 &&
			   v <= INT32_MAX && table_find(f, (uint32_t)v)) {
			t = table_copy(f, pid, (uint32_t)v, false);
			t->from_start = true;
		}
		break;
	case ACT_EXEC:
	case ACT_EXEC_FAILED:
		if (t)
			t->exec_pending = p->act == ACT_EXEC;
		break;
	default:
		break;
	}
}

static void apply_pending(struct tracer_fdnames *f)
{
	struct pending *q = &f->pend;
	struct fd_table *t;

	if (q->act == ACT_NONE)
		return;
	t = table_find(f, q->pid);
	if (t && q->act == ACT_EXIT)
		table_forget(f, t);
	else if (q->act == ACT_CLOSE)
		entry_remove(f, t, q->a);
	else
		remove_range(f, t, q->a, q->b, false);
	q->act = ACT_NONE;
}

/* Removals, left for the next record. */
static void on_close(struct tracer_fdnames *f, uint32_t pid,
		     const struct plan *p, const struct values *vs)
{
	struct pending *q = &f->pend;
	int64_t a = 0, b = 0, flags = 0;

	switch (p->act) {
	case ACT_CLOSE:
		if (!int_field(p, vs, "fd", 0, &a))
			return;
		break;
	case ACT_CLOSE_RANGE:
		if (failed(p, vs) || !int_field(p, vs, "first", 0, &a) ||
		    !int_field(p, vs, "last", 0, &b))
			return;
		int_field(p, vs, "flags", 0, &flags);
		if (flags & RANGE_CLOEXEC) {
			remove_range(f, table_find(f, pid), a, b, true);
			return;
		}
		break;
	case ACT_CLOSEFROM:
		if (!int_field(p, vs, "lowfd", 0, &a))
			return;
		b = INT32_MAX;
		break;
	default:
		break;
	}
	q->act = p->act;
	q->pid = pid;
	q->a = a;
	q->b = b;
}

/* The merge's watch. */
static void watch(void *ctx, const struct tracer_merge_proc *proc,
		  uint32_t pid, uint64_t ts, const struct tracer__site *cs,
		  const void *payload, size_t size)
{
	struct tracer_fdnames *f = ctx;
	const struct plan *p;
	struct fd_table *t;
	struct values vs;

	(void)proc;
	(void)ts;
	apply_pending(f);
	p = plan_of(f, cs);
	if (!p || p->act == ACT_NONE)
		return;
	decode(cs->types, payload, size, &vs);
	t = table_find(f, pid);
	if (t)
		t->used = ++f->clock;
	switch (p->act) {
	case ACT_FORK: case ACT_SPAWN: case ACT_START:
	case ACT_EXEC: case ACT_EXEC_FAILED:
		on_proc(f, pid, p, &vs);
		return;
	case ACT_CLOSE: case ACT_CLOSE_RANGE: case ACT_CLOSEFROM:
	case ACT_EXIT:
		on_close(f, pid, p, &vs);
		return;
	default:
		break;
	}
	if (!t)		/* a process first seen opening: an empty table */
		t = table_new(f, pid);
	on_open(f, t, p, &vs);
}

/* ----------------------------------------------------------------------
 * Messages.
 */

struct measure_note {
	const struct tracer_fdnames *f;
	const struct tracer_item *it;
};

static size_t measure_note(void *ctx, uint64_t addr, char *buf, size_t size)
{
	const struct measure_note *n = ctx;

	return n->f->note(n->f->note_ctx, n->it->proc, n->it->timestamp, addr,
			  buf, size);
}

/* How long the message is up to the end of conversion c: false when it
 * cannot be told. */
static bool measure(struct tracer_fdnames *f, const struct tracer_item *it,
		    const struct fd_conv *c, size_t *len)
{
	struct measure_note mn = { .f = f, .it = it };
	struct tracer__format_note note = { .fn = measure_note, .ctx = &mn };
	char *b;
	int ret;

	for (;;) {
		if (!f->pre_size) {
			f->pre = malloc(256);
			if (!f->pre)
				return false;
			f->pre_size = 256;
		}
		ret = tracer__format_event_note(f->pre, f->pre_size, c->prefix,
						c->types, it->payload,
						it->payload_size, len,
						f->note ? &note : NULL);
		if (ret != -ENOSPC)
			return ret == 0;
		if (f->pre_size >= MEASURE_MAX)
			return false;
		b = realloc(f->pre, f->pre_size * 2);
		if (!b)
			return false;
		f->pre = b;
		f->pre_size *= 2;
	}
}

/* Append n bytes of s to f->out at *at. */
static bool put(struct tracer_fdnames *f, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > f->out_size) {
		size_t size = f->out_size ? f->out_size : 256;
		char *b;

		while (*at + n + 1 > size)
			size *= 2;
		b = realloc(f->out, size);
		if (!b)
			return false;
		f->out = b;
		f->out_size = size;
	}
	memcpy(f->out + *at, s, n);
	*at += n;
	f->out[*at] = '\0';
	return true;
}

/* "<NAME>" of e. */
static bool put_name(struct tracer_fdnames *f, size_t *at,
		     const struct fd_entry *e)
{
	bool ok = put(f, at, "<", 1);

	if (e->socket) {
		ok = ok && put(f, at, "socket:[", 8) &&
		     put(f, at, e->name, strlen(e->name));
		if (e->local)
			ok = ok && put(f, at, " ", 1) &&
			     put(f, at, e->local, strlen(e->local));
		if (e->peer)
			ok = ok && put(f, at, e->local ? "->" : " ->", e->local
				       ? 2 : 3) &&
			     put(f, at, e->peer, strlen(e->peer));
		ok = ok && put(f, at, "]", 1);
	} else {
		ok = ok && put(f, at, e->name, strlen(e->name));
	}
	return ok && put(f, at, ">", 1);
}

/* Does msg[0..end) end with the decimal text of v? */
static bool ends_with_value(const char *msg, size_t end, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	return n > 0 && (size_t)n <= end &&
	       !memcmp(msg + end - (size_t)n, num, (size_t)n);
}

void tracer__fdnames_item(struct tracer_fdnames *f, struct tracer_item *it)
{
	const struct plan *p;
	const struct fd_entry *e;
	struct fd_table *t;
	struct values vs;
	size_t i, at = 0, from = 0, end;
	int64_t v;

	if (it->kind != TRACER_ITEM_EVENT || !it->cs || !it->payload)
		return;
	p = plan_of(f, it->cs);
	if (!p || !p->nc)
		return;
	t = table_find(f, it->pid);
	if (!t || !t->n)
		return;
	decode(it->cs->types, it->payload, it->payload_size, &vs);
	for (i = 0; i < p->nc; i++) {
		const struct fd_conv *c = &p->c[i];

		if ((size_t)c->arg >= vs.n || vs.v[c->arg].type != 'i')
			continue;
		v = vs.v[c->arg].i;
		e = entry_find(t, v);
		if (!e || !measure(f, it, c, &end) || end < from ||
		    end > it->msg_len || !ends_with_value(it->msg, end, v))
			continue;
		if (!put(f, &at, it->msg + from, end - from) ||
		    !put_name(f, &at, e))
			return;
		from = end;
	}
	if (!at || !put(f, &at, it->msg + from, it->msg_len - from))
		return;
	it->msg = f->out;
	it->msg_len = at;
}

/* ----------------------------------------------------------------------
 * The set.
 */

int tracer__fdnames_new(struct tracer_fdnames **out)
{
	struct tracer_fdnames *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->procs = calloc(MAX_PROCS, sizeof(*f->procs));
	f->plans = calloc(PLAN_SLOTS, sizeof(*f->plans));
	if (!f->procs || !f->plans) {
		tracer__fdnames_free(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

void tracer__fdnames_attach(struct tracer_fdnames *f, struct tracer_merge *m)
{
	tracer__merge_set_watch(m, watch, f);
}

void tracer__fdnames_set_note(struct tracer_fdnames *f,
			      tracer_merge_note_fn fn, void *ctx)
{
	f->note = fn;
	f->note_ctx = ctx;
}

void tracer__fdnames_free(struct tracer_fdnames *f)
{
	size_t i;

	if (!f)
		return;
	if (f->procs)
		for (i = 0; i < MAX_PROCS; i++)
			table_clear(f, &f->procs[i]);
	if (f->plans)
		for (i = 0; i < PLAN_SLOTS; i++)
			plan_free(f->plans[i]);
	free(f->procs);
	free(f->plans);
	free(f->out);
	free(f->pre);
	free(f);
}
