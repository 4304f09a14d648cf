/*
 * next.c - the next definition of a name after libtracer's, the one
 * dlsym(RTLD_NEXT, name) gives, without most of dlsym()'s cost.
 *
 * A traced program's start looks up some thirty functions for the
 * wrappers, several of which must be found before a signal handler or a
 * vfork child may call them. Each dlsym() costs about 0.4 us here (it
 * catches errors with setjmp, finds the caller's object among all of them,
 * then walks the scope): 12 us of a start that should cost 100 in all.
 *
 * The model. RTLD_NEXT searches, in order, the objects that follow the
 * caller's in its scope; for an object loaded at start-up (preloaded, or
 * needed by the program) that is the loader's global list, which is also
 * the order of the link-map chain (the vdso sits in the chain, before the
 * preloaded objects, but is in no scope). So:
 *
 *   chain:  program  vdso  [libtracer]  obj1  obj2 ... libc  ld.so ...
 *                                       `---- searched here ---'
 *
 * The run: the objects after ours that are searched here, each through
 * its GNU hash table. It grows as dlsym() answers: a name the run does not
 * have goes to dlsym(), then the chain after the run is searched for it,
 * and the first object that has it must define it as dlsym() did (else
 * the model does not hold here, and dlsym() answers everything from then
 * on); the objects up to that one join the run. The C library ends it
 * after the first few names.
 *
 * A name is answered here only when the answer is certainly dlsym()'s:
 * in the first object of the run that has it, the definition is
 * unversioned, or the only visible version (old versions are hidden, as
 * dlsym() ignores them), and a plain function (an IFUNC's resolver must
 * be called, which dlsym() does). Anything else goes to dlsym(): a name
 * the run lacks, a library loaded by dlopen() (the run never goes past
 * the dynamic linker, after which the objects dlopen() loads come, some
 * of them in no scope of ours), an object without DT_GNU_HASH, more than
 * NEXT_MAX objects. tests/unit/test_next compares the answers with
 * dlsym()'s for every function of the C library, with libtracer.so (and
 * its wrappers) in between.
 *
 * Thread-safety: one thread at a time grows the run (an exchange of nrun
 * to NEXT_BUSY; the others meanwhile use dlsym()), writing the new
 * objects before it publishes their count (release; the readers'
 * acquire). Objects loaded at start-up are never unloaded, so a published
 * object stays valid. Looking up takes no lock and calls only strcmp():
 * safe in a signal handler and in a vfork child for names the run
 * answers.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "wrap.h"

#define NEXT_MAX	16		/* objects searched here, at most */

struct next_object {
	ElfW(Addr) base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;	/* NULL: no versions */
	const uint32_t *buckets;	/* GNU hash: nbuckets of them */
	const uint32_t *chain;		/* chain[i - symoffset] */
	uint32_t nbuckets, symoffset;
};

static struct next_object run[NEXT_MAX];
static struct link_map *run_end;	/* the chain's object of the last */
/* The objects in run, or: */
static int nrun;
#define NEXT_BUSY	(-1)		/* growing: use dlsym() */
#define NEXT_OFF	(-2)		/* the model failed: dlsym() only */

/* A dynamic entry's address: glibc makes them absolute in memory, other
 * loaders may not. */
static const void *dyn_addr(ElfW(Addr) base, ElfW(Addr) v)
{
	return (const void *)(v >= base ? v : base + v);
}

/* o from the dynamic section of l. Returns false without a GNU hash
 * table. */
static bool read_object(const struct link_map *l, struct next_object *o)
{
	const ElfW(Dyn) *d;
	const uint32_t *h = NULL;

	memset(o, 0, sizeof(*o));
	o->base = l->l_addr;
	for (d = l->l_ld; d && d->d_tag != DT_NULL; d++) {
		const void *p = dyn_addr(l->l_addr, d->d_un.d_ptr);

		if (d->d_tag == DT_GNU_HASH)
			h = p;
		else if (d->d_tag == DT_SYMTAB)
			o->symtab = p;
		else if (d->d_tag == DT_STRTAB)
			o->strtab = p;
		else if (d->d_tag == DT_VERSYM)
			o->versym = p;
	}
	if (!h || !o->symtab || !o->strtab || h[0] == 0)
		return false;
	/* nbuckets, symoffset, bloom words, bloom shift; bloom; buckets */
	o->nbuckets = h[0];
	o->symoffset = h[1];
	o->buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + h[2]);
	o->chain = o->buckets + o->nbuckets;
	return true;
}

/* Is l the vdso (in the chain, in no scope)? */
static bool is_vdso(const struct link_map *l)
{
	return l->l_addr != 0 && l->l_addr == getauxval(AT_SYSINFO_EHDR);
}

/* Is l the dynamic linker? The objects after it in the chain may have
 * been loaded by dlopen() (RTLD_LOCAL ones are in no scope of ours):
 * the run never goes past it. */
static bool is_interp(const struct link_map *l)
{
	return l->l_addr != 0 && l->l_addr == getauxval(AT_BASE);
}

/* Our own link map: the one whose dynamic section is ours. */
static struct link_map *self_map(void)
{
	extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));
	struct link_map *l;

	for (l = _r_debug.r_map; l; l = l->l_next)
		if (l->l_ld == _DYNAMIC)
			return l;
	return NULL;
}

static int lookup(const struct next_object *o, const char *name, uint32_t h,
		  void **fn);

/*
 * Grow the run (n objects) along the chain until the first object that
 * has name (hash h), which must define it as first (dlsym()'s answer).
 * Returns the new count (n when it cannot tell), or NEXT_OFF when the
 * answer differs (the model does not hold).
 */
static int grow_run(int n, const char *name, uint32_t h, const void *first)
{
	struct link_map *l, *self = n ? NULL : self_map();
	void *fn = NULL;
	int m = n, r;

	if (!n && !self)
		return NEXT_OFF;
	if (n && is_interp(run_end))
		return n;
	for (l = n ? run_end->l_next : self->l_next; l && m < NEXT_MAX;
	     l = l->l_next) {
		if (is_vdso(l))
			continue;
		if (!read_object(l, &run[m]))
			return n;
		r = lookup(&run[m], name, h, &fn);
		if (r < 0)
			return n;
		m++;
		if (r > 0) {
			if (fn != first)
				return NEXT_OFF;
			run_end = l;
			return m;
		}
		if (is_interp(l))
			return n;
	}
	return n;
}

/* The GNU hash of a name (the ELF gABI's, as the loader computes it). */
static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/*
 * Symbol i of o as dlsym() sees it: 2 an unversioned definition (the
 * first one found is the answer), 1 a visible versioned one (the answer
 * if it is the only one: the default, "name@@VERSION"; the old ones,
 * "name@VERSION", are hidden), 0 not to be counted, -1 one only dlsym()
 * can answer for (an IFUNC, data, a unique symbol).
 */
static int visible(const struct next_object *o, uint32_t i)
{
	const ElfW(Sym) *s = &o->symtab[i];
	unsigned type = ELF64_ST_TYPE(s->st_info);
	unsigned bind = ELF64_ST_BIND(s->st_info);
	unsigned ndx = o->versym ? o->versym[i] & 0x7fff : 1;

	if (s->st_shndx == SHN_UNDEF)
		return s->st_value ? -1 : 0;
	if (ndx >= 2 && (o->versym[i] & 0x8000))
		return 0;			/* a hidden (old) version */
	if (type != STT_FUNC || s->st_value == 0 ||
	    (bind != STB_GLOBAL && bind != STB_WEAK))
		return -1;
	return ndx < 2 ? 2 : 1;
}

/* Look name (hash h) up in o: 1 (*fn set), 0 not there, -1 ask dlsym(). */
static int lookup(const struct next_object *o, const char *name, uint32_t h,
		  void **fn)
{
	uint32_t i = o->buckets[h % o->nbuckets], ch;
	const ElfW(Sym) *found = NULL;
	int seen = 0, v;

	if (i == 0 || i < o->symoffset)
		return 0;
	do {
		ch = o->chain[i - o->symoffset];
		if ((ch | 1) == (h | 1) &&
		    strcmp(name, o->strtab + o->symtab[i].st_name) == 0) {
			v = visible(o, i);
			if (v < 0)
				return -1;
			if (v == 2) {
				*fn = (void *)(o->base + o->symtab[i].st_value);
				return 1;
			}
			if (v == 1 && seen++ == 0)
				found = &o->symtab[i];
		}
		i++;
	} while (!(ch & 1));
	if (seen != 1)
		return seen ? -1 : 0;
	*fn = (void *)(o->base + found->st_value);
	return 1;
}

/* name (hash h) in the first n objects of the run: 1 (*fn), 0 not
 * there, -1 ask dlsym(). */
static int find(const char *name, uint32_t h, int n, void **fn)
{
	int i, r;

	for (i = 0; i < n; i++) {
		r = lookup(&run[i], name, h, fn);
		if (r)
			return r;
	}
	return n < 0 ? -1 : 0;
}

void *tracer__next_fast(const char *name)
{
	int n = __atomic_load_n(&nrun, __ATOMIC_ACQUIRE);
	void *fn = NULL;

	return find(name, gnu_hash(name), n, &fn) > 0 ? fn : NULL;
}

void *tracer__next(const char *name)
{
	int n = __atomic_load_n(&nrun, __ATOMIC_ACQUIRE);
	uint32_t h = gnu_hash(name);
	void *fn = NULL;
	int r = find(name, h, n, &fn);

	if (r > 0)
		return fn;
	fn = dlsym(RTLD_NEXT, name);
	/* Not in the run: the objects up to dlsym()'s answer join it. */
	if (fn && r == 0 &&
	    __atomic_compare_exchange_n(&nrun, &n, NEXT_BUSY, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		/* The new objects before their count (release). */
		__atomic_store_n(&nrun, grow_run(n, name, h, fn),
				 __ATOMIC_RELEASE);
	return fn;
}
