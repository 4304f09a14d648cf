/*
 * slicer.c - begin and end events paired into slices, per thread of each
 * process image, with a stack of the slices still open (slicer.h has the
 * rules); export.c and timeline.c draw what it makes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "slicer.h"
#include "format.h"
#include "hash_index.h"

/* ----------------------------------------------------------------------
 * Pairing.
 */

static const struct pair_word {
	const char *word;
	enum tracer_pair_role role;
	int family;
	const char *seps;
} pair_words[] = {
	{ "begin", TRACER_PAIR_BEGIN, 0, ":_-." },
	{ "end", TRACER_PAIR_END, 0, ":_-." },
	{ "entry", TRACER_PAIR_BEGIN, 1, ":_" },
	{ "exit", TRACER_PAIR_END, 1, ":_" },
};

/* Is name one of the library's single events (TRACER_PAIR_SINGLES)? */
static bool is_single(const char *name)
{
	static const char *const singles[] = TRACER_PAIR_SINGLES;
	size_t i;

	for (i = 0; i < sizeof(singles) / sizeof(singles[0]); i++)
		if (!strcmp(name, singles[i]))
			return true;
	return false;
}

void tracer__pair_classify(const char *name, struct tracer_pair *p)
{
	size_t len = strlen(name), wlen, i;
	const struct pair_word *w;

	memset(p, 0, sizeof(*p));
	if (!strncmp(name, "tracer:", 7) || is_single(name))
		return;
	for (i = 0; i < sizeof(pair_words) / sizeof(pair_words[0]); i++) {
		w = &pair_words[i];
		wlen = strlen(w->word);
		/* BASE (at least one byte), S, WORD */
		if (len < wlen + 2 || strcmp(name + len - wlen, w->word) ||
		    !strchr(w->seps, name[len - wlen - 1]))
			continue;
		p->role = w->role;
		p->family = w->family;
		p->key_len = len - wlen;
		return;
	}
}

/* ----------------------------------------------------------------------
 * The slicer: threads, and their stacks of open slices.
 */

void tracer__slicer_init(struct tracer_slicer *s,
			 const struct tracer_slice_ops *ops, void *ctx,
			 size_t keep_msg, struct tracer_syms *syms)
{
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ctx = ctx;
	s->keep_msg = keep_msg;
	s->syms = syms;
}

/* A lane's home slot: by its process image and thread. */
static size_t lane_hash(const struct tracer_merge_proc *p, uint32_t tid,
			size_t size)
{
	uint64_t k = ((uint64_t)(uintptr_t)p << 32 ^ tid) *
		     0x9e3779b97f4a7c15ULL;

	return (size_t)(k >> 32) & (size - 1);
}

static size_t lane_home(const void *ctx, size_t i, size_t size)
{
	const struct tracer_lane *l =
		&((const struct tracer_slicer *)ctx)->lanes[i];

	return lane_hash(l->proc, l->tid, size);
}

/* An image's home slot: by its pid, so that the images of a pid are all
 * met on the way from it to the first free slot. */
static size_t image_hash(uint32_t pid, size_t size)
{
	return (size_t)((pid * 0x9e3779b97f4a7c15ULL) >> 32) & (size - 1);
}

static size_t image_home(const void *ctx, size_t i, size_t size)
{
	const struct tracer_slicer *s = ctx;

	return image_hash(s->images[i].pid, size);
}

/* A new image p of pid, numbered n, at hash slot h. Returns 0 or
 * -ENOMEM. */
static int new_image(struct tracer_slicer *s, size_t h,
		     const struct tracer_merge_proc *p, uint32_t pid,
		     uint32_t n)
{
	size_t cap = s->images_cap ? s->images_cap * 2 : 8;
	struct tracer_image *im;

	if (s->nimages == s->images_cap) {
		im = reallocarray(s->images, cap, sizeof(*im));
		if (!im)
			return -ENOMEM;
		s->images = im;
		s->images_cap = cap;
	}
	im = &s->images[s->nimages];
	im->proc = p;
	im->pid = pid;
	im->image = n;
	s->ihash[h] = (uint32_t)++s->nimages;
	return 0;
}

/*
 * The process image of l (its proc and pid), numbered on its first lane:
 * l->image, l->proc_index and l->proc_first set. Returns 0 or -ENOMEM.
 */
static int image_of(struct tracer_slicer *s, struct tracer_lane *l)
{
	const struct tracer_image *im;
	uint32_t n = 0;
	size_t h;

	if ((s->nimages + 1) * 2 > s->ihash_size &&
	    tracer__index_grow(&s->ihash, &s->ihash_size, 16, s->nimages,
			       image_home, s))
		return -ENOMEM;
	for (h = image_hash(l->pid, s->ihash_size); s->ihash[h];
	     h = (h + 1) & (s->ihash_size - 1)) {
		im = &s->images[s->ihash[h] - 1];
		if (im->proc == l->proc) {
			l->image = im->image;
			l->proc_index = s->ihash[h] - 1;
			return 0;
		}
		n += im->pid == l->pid;
	}
	if (new_image(s, h, l->proc, l->pid, n + 1))
		return -ENOMEM;
	l->image = n + 1;
	l->proc_index = (uint32_t)(s->nimages - 1);
	l->proc_first = true;
	return 0;
}

/* Double the hash table (lane indexes). Returns 0 or -ENOMEM. */
static int rehash(struct tracer_slicer *s)
{
	return tracer__index_grow(&s->hash, &s->hash_size, 64, s->nlanes,
				  lane_home, s);
}

/* A new lane for it's thread, at hash slot h. NULL: out of memory. */
static struct tracer_lane *new_lane(struct tracer_slicer *s, size_t h,
				    const struct tracer_item *it)
{
	size_t cap = s->lanes_cap ? s->lanes_cap * 2 : 16;
	struct tracer_lane *l;

	if (s->nlanes == s->lanes_cap) {
		l = reallocarray(s->lanes, cap, sizeof(*l));
		if (!l)
			return NULL;
		s->lanes = l;
		s->lanes_cap = cap;
	}
	l = &s->lanes[s->nlanes];
	memset(l, 0, sizeof(*l));
	l->pid = it->pid;
	l->tid = it->tid;
	l->index = (uint32_t)s->nlanes;
	l->proc = it->proc;
	l->thread_name = it->thread_name;
	if (image_of(s, l))
		return NULL;
	s->hash[h] = (uint32_t)++s->nlanes;
	if (s->ops->lane)
		s->ops->lane(s->ctx, l, it);
	return l;
}

/* The lane of it's thread, made on its first item. NULL: no memory. */
static struct tracer_lane *lane_of(struct tracer_slicer *s,
				   const struct tracer_item *it)
{
	struct tracer_lane *l;
	size_t h;

	if ((s->nlanes + 1) * 2 > s->hash_size && rehash(s))
		return NULL;
	h = lane_hash(it->proc, it->tid, s->hash_size);
	while (s->hash[h]) {
		l = &s->lanes[s->hash[h] - 1];
		if (l->proc == it->proc && l->tid == it->tid)
			return l;
		h = (h + 1) & (s->hash_size - 1);
	}
	return new_lane(s, h, it);
}

/* The lane of thread tid of process image p, if it has one. */
static struct tracer_lane *find_lane(const struct tracer_slicer *s,
				     const struct tracer_merge_proc *p,
				     uint32_t tid)
{
	struct tracer_lane *l;
	size_t h;

	if (!s->hash_size)
		return NULL;
	for (h = lane_hash(p, tid, s->hash_size); s->hash[h];
	     h = (h + 1) & (s->hash_size - 1)) {
		l = &s->lanes[s->hash[h] - 1];
		if (l->proc == p && l->tid == tid)
			return l;
	}
	return NULL;
}

/* l's thread is called name from ts on. */
static void rename_lane(struct tracer_slicer *s, struct tracer_lane *l,
			const char *name, uint64_t ts)
{
	size_t cap = l->former_cap ? l->former_cap * 2 : 4;
	const char **f = l->former;

	if (!name || (l->thread_name && !strcmp(l->thread_name, name))) {
		l->thread_name = name ? name : l->thread_name;
		return;
	}
	if (l->thread_name && l->nformer == l->former_cap) {
		f = reallocarray(l->former, cap, sizeof(*f));
		if (!f)
			return;		/* keeps its name: no memory */
		l->former = f;
		l->former_cap = cap;
	}
	if (l->thread_name)
		l->former[l->nformer++] = l->thread_name;
	l->thread_name = name;
	if (s->ops->rename)
		s->ops->rename(s->ctx, l, ts);
}

/* Renames to the lanes of the threads (a thread without one yet gets
 * its name with its first item). */
static void follow_renames(struct tracer_slicer *s,
			   const struct tracer_rename *r, size_t n)
{
	struct tracer_lane *l;
	size_t i;

	for (i = 0; i < n; i++) {
		l = find_lane(s, r[i].proc, r[i].tid);
		if (l)
			rename_lane(s, l, r[i].name, r[i].timestamp);
	}
}

/* The renames it tells, and its own thread's name, to the lanes. */
static void follow_names(struct tracer_slicer *s, struct tracer_lane *l,
			 const struct tracer_item *it)
{
	follow_renames(s, it->renames, it->nrenames);
	if (it->thread_name != l->thread_name)
		rename_lane(s, l, it->thread_name, it->timestamp);
}

static void show_instant(struct tracer_slicer *s, struct tracer_lane *l,
			 const struct tracer_item *it, unsigned flags)
{
	if (s->ops->instant)
		s->ops->instant(s->ctx, l, it, flags);
}

/* Room for one more open slice; false beyond the limit or memory. */
static bool stack_room(struct tracer_lane *l)
{
	size_t cap = l->cap ? l->cap * 2 : 16;
	struct tracer_open *st;

	if (l->depth < l->cap)
		return true;
	if (l->depth >= TRACER_SLICE_MAX_DEPTH)
		return false;
	st = reallocarray(l->stack, cap, sizeof(*st));
	if (!st)
		return false;
	l->stack = st;
	l->cap = cap;
	return true;
}

/* Keep a copy of the begin's message (up to s->keep_msg bytes). */
static void keep_message(struct tracer_slicer *s, struct tracer_open *o,
			 const struct tracer_item *it)
{
	size_t len = it->msg_len < s->keep_msg ? it->msg_len : s->keep_msg;

	o->msg = NULL;
	o->msg_len = 0;
	if (!s->keep_msg)
		return;
	o->msg = malloc(len + 1);
	if (!o->msg)
		return;		/* shown without its message */
	memcpy(o->msg, it->msg, len);
	o->msg[len] = '\0';
	o->msg_len = len;
}

/*
 * The function of a func:entry or func:exit event: its first value, when
 * that is a pointer (libtracer's "fn %p caller %p"); 0 for another event.
 */
static uint64_t func_of(const struct tracer_item *it)
{
	struct tracer__value v;
	size_t off = 0;

	if (!it->cs || !it->payload || strncmp(it->name, "func:", 5) ||
	    it->cs->types[0] != TRACER_ARG_POINTER ||
	    tracer__payload_next(TRACER_ARG_POINTER, it->payload, it->payload_size, &off,
				 &v))
		return 0;
	return v.u;
}

/* Name the slice o: the symbol of its function, or BASE. */
static void label_slice(struct tracer_slicer *s, struct tracer_open *o,
			const struct tracer_item *it)
{
	const char *sym = NULL;

	o->label = o->name;
	o->label_len = o->key_len - 1;
	o->fn = func_of(it);
	if (o->fn && s->syms)
		sym = tracer__syms_lookup(s->syms, it->proc, it->timestamp,
					  o->fn, NULL);
	if (sym) {
		o->label = sym;
		o->label_len = strlen(sym);
	}
}

static void open_slice(struct tracer_slicer *s, struct tracer_lane *l,
		       const struct tracer_item *it,
		       const struct tracer_pair *p)
{
	struct tracer_open *o;

	if (!stack_room(l)) {
		show_instant(s, l, it, TRACER_SLICE_TOO_DEEP);
		return;
	}
	o = &l->stack[l->depth++];
	o->name = it->name;
	o->key_len = p->key_len;
	label_slice(s, o, it);
	o->family = p->family;
	o->ts = it->timestamp;
	keep_message(s, o, it);
	if (s->ops->begin)
		s->ops->begin(s->ctx, l, o, it);
}

/* Close the innermost slice of l: by it, or (NULL) for flags at ts. */
static void close_top(struct tracer_slicer *s, struct tracer_lane *l,
		      const struct tracer_item *it, uint64_t ts,
		      unsigned flags)
{
	struct tracer_open *o = &l->stack[--l->depth];

	if (s->ops->end)
		s->ops->end(s->ctx, l, o, l->depth, it, ts, flags);
	free(o->msg);
	o->msg = NULL;
}

/* Does the open slice o pair with an end named name (p), of the
 * function fn (0: not a function's)? */
static bool pairs_with(const struct tracer_open *o, const char *name,
		       const struct tracer_pair *p, uint64_t fn)
{
	return o->family == p->family && o->key_len == p->key_len &&
	       !memcmp(o->name, name, p->key_len) &&
	       (!fn || !o->fn || fn == o->fn);
}

static void close_slice(struct tracer_slicer *s, struct tracer_lane *l,
			const struct tracer_item *it,
			const struct tracer_pair *p)
{
	uint64_t fn = func_of(it);
	size_t i = l->depth;

	while (i > 0 && !pairs_with(&l->stack[i - 1], it->name, p, fn))
		i--;
	if (i == 0) {
		show_instant(s, l, it, TRACER_SLICE_UNMATCHED);
		return;
	}
	while (l->depth > i)
		close_top(s, l, NULL, it->timestamp, TRACER_SLICE_CUT);
	close_top(s, l, it, it->timestamp, 0);
}

int tracer__slicer_item(struct tracer_slicer *s, const struct tracer_item *it)
{
	struct tracer_lane *l = lane_of(s, it);
	struct tracer_pair p;

	if (!l)
		return -ENOMEM;
	follow_names(s, l, it);
	s->last_ts = it->timestamp;
	if (it->kind == TRACER_ITEM_LOST) {
		if (s->ops->lost)
			s->ops->lost(s->ctx, l, it);
		return 0;
	}
	tracer__pair_classify(it->name, &p);
	if (p.role == TRACER_PAIR_BEGIN)
		open_slice(s, l, it, &p);
	else if (p.role == TRACER_PAIR_END)
		close_slice(s, l, it, &p);
	else
		show_instant(s, l, it, 0);
	return 0;
}

void tracer__slicer_finish(struct tracer_slicer *s,
			   const struct tracer_merge *m)
{
	const struct tracer_rename *r;
	size_t i, n;

	if (m) {
		n = tracer__merge_renames_left(m, &r);
		follow_renames(s, r, n);
	}
	for (i = 0; i < s->nlanes; i++)
		while (s->lanes[i].depth)
			close_top(s, &s->lanes[i], NULL, s->last_ts,
				  TRACER_SLICE_OPEN);
}

void tracer__slicer_free(struct tracer_slicer *s)
{
	size_t i;

	for (i = 0; i < s->nlanes; i++) {
		while (s->lanes[i].depth)
			free(s->lanes[i].stack[--s->lanes[i].depth].msg);
		free(s->lanes[i].stack);
		free(s->lanes[i].former);
	}
	free(s->lanes);
	free(s->hash);
	free(s->images);
	free(s->ihash);
	memset(s, 0, sizeof(*s));
}

