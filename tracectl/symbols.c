/*
 * symbols.c - the names of a trace's addresses (symbols.h).
 *
 *   files    one per path, shared by the processes that loaded it: its
 *            ELF symbols (elfsyms.h), read on first use, or why not (kept:
 *            a file is tried once)
 *   procs    one per process of the merge (same index): its modules,
 *            (base, time first seen loaded, file), sorted by base, read
 *            from its vital channel files on first use
 *
 * A lookup finds the modules whose base is at or below the address (a
 * binary search, then down from there), and keeps the best that holds it.
 * C++ names are shown demangled (the C++ runtime's demangler), each once
 * per file, when first shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "format.h"
#include "symbols.h"

#ifdef HAVE_CXA_DEMANGLE
/* libstdc++'s demangler (abi::__cxa_demangle of <cxxabi.h>): a malloc'd
 * name, *status 0; or NULL. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status);
#endif

#define EV_MODULE	"proc:module"
#define DEMANGLE_MAX	4096		/* longer names are shown as they are */
#define EV_DLOPEN	"proc:dlopen"

struct sym_file {
	char *path;
	struct tracer_elf *elf;		/* NULL: not read, or unreadable */
	bool tried;
	char **shown;			/* by symbol: its demangled name,
					   as_linked, or NULL (not yet) */
};

static char as_linked[1];		/* shown[i]: the name as it is */

struct sym_module {
	uint64_t base;
	uint64_t ts;			/* first seen loaded */
	struct sym_file *file;
};

struct sym_proc {
	bool scanned;
	struct sym_module *mods;	/* by base, then time */
	size_t n, cap;
};

struct tracer_syms {
	struct tracer_merge *m;
	struct sym_proc *procs;		/* as tracer__merge_proc(m, i) */
	size_t nprocs;
	struct sym_file **files;
	size_t nfiles, files_cap;
	char err[TRACER_ERR_SIZE];	/* pre-pass errors: not reported */
};

int tracer__syms_new(struct tracer_syms **sp, struct tracer_merge *m)
{
	struct tracer_syms *s = calloc(1, sizeof(*s));

	*sp = NULL;
	if (!s)
		return -ENOMEM;
	s->m = m;
	s->nprocs = tracer__merge_nprocs(m);
	s->procs = calloc(s->nprocs ? s->nprocs : 1, sizeof(*s->procs));
	if (!s->procs) {
		free(s);
		return -ENOMEM;
	}
	*sp = s;
	return 0;
}

void tracer__syms_attach(struct tracer_syms *s, struct tracer_merge *m)
{
	tracer__merge_set_note(m, tracer__syms_note, s);
}

/* ----------------------------------------------------------------------
 * Files.
 */

/* The file of path (made on first use); NULL when out of memory. */
static struct sym_file *file_of(struct tracer_syms *s, const char *path)
{
	size_t cap = s->files_cap ? s->files_cap * 2 : 16, i;
	struct sym_file *f, **l;

	for (i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i]->path, path))
			return s->files[i];
	if (s->nfiles == s->files_cap) {
		l = reallocarray(s->files, cap, sizeof(*l));
		if (!l)
			return NULL;
		s->files = l;
		s->files_cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	s->files[s->nfiles++] = f;
	return f;
}

/* The symbols of f, read on first use; NULL when it has none. */
static const struct tracer_elf *elf_of(struct sym_file *f)
{
	if (!f->tried) {
		f->tried = true;
		tracer__elf_load(&f->elf, f->path);	/* NULL on error */
	}
	return f->elf;
}

/* ----------------------------------------------------------------------
 * The module map of a process.
 */

/* Add (path, base) seen at ts; the earliest time is kept. */
static void add_module(struct tracer_syms *s, struct sym_proc *sp,
		       const char *path, uint64_t base, uint64_t ts)
{
	size_t cap = sp->cap ? sp->cap * 2 : 32, i;
	struct sym_file *f = file_of(s, path);
	struct sym_module *l;

	if (!f)
		return;			/* out of memory: left unnamed */
	for (i = 0; i < sp->n; i++)
		if (sp->mods[i].file == f && sp->mods[i].base == base) {
			if (ts < sp->mods[i].ts)
				sp->mods[i].ts = ts;
			return;
		}
	if (sp->n == sp->cap) {
		l = reallocarray(sp->mods, cap, sizeof(*l));
		if (!l)
			return;
		sp->mods = l;
		sp->cap = cap;
	}
	sp->mods[sp->n++] = (struct sym_module){ base, ts, f };
}

/*
 * The path and base of a module event of call site cs (NULL: not one):
 *   proc:module  path %s base %p
 *   proc:dlopen  path %s flags %#x base %p handle %p%s (handle NULL:
 *                it failed)
 */
static bool module_event(const struct tracer__site *cs,
			 const struct tracer_chan_record *rec,
			 const char **path, uint64_t *base)
{
	struct tracer__value v[4];
	size_t off = 0, i, n;
	bool dl;

	if (!cs || !cs->types)
		return false;
	dl = !strcmp(cs->name, EV_DLOPEN);
	if (dl ? strncmp(cs->types, "s", 1) || strlen(cs->types) < 4 ||
		 cs->types[2] != 'p' || cs->types[3] != 'p' :
	    strcmp(cs->name, EV_MODULE) || strcmp(cs->types, "sp"))
		return false;
	n = dl ? 4 : 2;
	for (i = 0; i < n; i++)
		if (tracer__payload_next(cs->types[i], rec->payload,
					 rec->payload_size, &off, &v[i]))
			return false;
	if (dl && v[3].u == 0)
		return false;
	*path = v[0].s;
	*base = v[dl ? 2 : 1].u;
	return true;
}

/* The module events of one vital channel file (errors: silently what
 * could be read; the merge reports the file's problems). */
static void scan_file(struct tracer_syms *s, struct sym_proc *sp,
		      const struct tracer_merge_proc *p, const char *path)
{
	struct tracer_chan_record rec;
	struct tracer_chan c;
	const char *mpath;
	uint64_t base;
	int ret;

	if (tracer__chan_open(&c, path, p->meta.version, s->err,
			      sizeof(s->err)) == 0) {
		while ((ret = tracer__chan_next(&c, &rec, s->err,
						sizeof(s->err))) != 0) {
			if (ret == -EBADMSG)
				continue;	/* on from the next packet */
			if (ret < 0)
				break;
			if (!rec.lost &&
			    module_event(tracer__meta_callsite(&p->meta,
							       rec.id),
					 &rec, &mpath, &base))
				add_module(s, sp, mpath, base, rec.timestamp);
		}
	}
	tracer__chan_close(&c);
}

static int cmp_module(const void *a, const void *b)
{
	const struct sym_module *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Read the module map of process p from its vital channel files. */
static void scan_proc(struct tracer_syms *s, struct sym_proc *sp,
		      const struct tracer_merge_proc *p)
{
	struct tracer_chan_name *names;
	size_t n, i;

	sp->scanned = true;
	if (tracer__dir_channels(p->dir, &names, &n, s->err, sizeof(s->err)))
		return;
	for (i = 0; i < n; i++)
		if (names[i].vital)
			scan_file(s, sp, p, names[i].path);
	tracer__chan_names_free(names, n);
	if (sp->n)
		qsort(sp->mods, sp->n, sizeof(*sp->mods), cmp_module);
}

/* The state of process p, its map read; NULL if p is not the merge's. */
static struct sym_proc *proc_of(struct tracer_syms *s,
				const struct tracer_merge_proc *p)
{
	const struct tracer_merge_proc *first = tracer__merge_proc(s->m, 0);
	size_t i;

	if (!first || p < first || p >= first + s->nprocs)
		return NULL;
	i = (size_t)(p - first);
	if (!s->procs[i].scanned)
		scan_proc(s, &s->procs[i], p);
	return &s->procs[i];
}

/* ----------------------------------------------------------------------
 * Lookups.
 */

/* Is module a a better owner of an address at time ts than b? The one
 * loaded last at or before ts; else the first loaded after it. */
static bool better(const struct sym_module *a, const struct sym_module *b,
		   uint64_t ts)
{
	bool a_before = a->ts <= ts, b_before = b->ts <= ts;

	if (a_before != b_before)
		return a_before;
	return a_before ? a->ts > b->ts : a->ts < b->ts;
}

/* The module of addr in sp at ts (its symbols in *e), or NULL. */
static const struct sym_module *module_at(struct sym_proc *sp, uint64_t ts,
					  uint64_t addr,
					  const struct tracer_elf **e)
{
	const struct sym_module *best = NULL;
	const struct tracer_elf *be = NULL, *fe;
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {		/* lo: modules with base <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (sp->mods[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct sym_module *mod = &sp->mods[lo];

		fe = elf_of(mod->file);
		if (!fe || !tracer__elf_holds(fe, addr - mod->base))
			continue;
		if (!best || better(mod, best, ts)) {
			best = mod;
			be = fe;
		}
	}
	*e = be;
	return best;
}

/* The name of f's symbol sym as shown: demangled if it is a C++ one. */
static const char *shown_name(struct sym_file *f,
			      const struct tracer_elf_sym *sym)
{
#ifdef HAVE_CXA_DEMANGLE
	size_t i = (size_t)(sym - f->elf->syms);
	int status = -1;
	char *d;

	if (strncmp(sym->name, "_Z", 2) ||
	    strnlen(sym->name, DEMANGLE_MAX) == DEMANGLE_MAX)
		return sym->name;
	if (!f->shown && !(f->shown = calloc(f->elf->nsyms, sizeof(char *))))
		return sym->name;
	if (!f->shown[i]) {
		d = __cxa_demangle(sym->name, NULL, NULL, &status);
		if (status || !d) {
			free(d);
			d = as_linked;
		}
		f->shown[i] = d;
	}
	return f->shown[i] == as_linked ? sym->name : f->shown[i];
#else
	(void)f;
	(void)as_linked;
	return sym->name;
#endif
}

/* Free what shown_name() kept of f. */
static void shown_free(struct sym_file *f)
{
	size_t i;

	if (!f->shown)
		return;
	for (i = 0; i < f->elf->nsyms; i++)
		if (f->shown[i] != as_linked)
			free(f->shown[i]);
	free(f->shown);
}

const char *tracer__syms_lookup(struct tracer_syms *s,
				const struct tracer_merge_proc *p, uint64_t ts,
				uint64_t addr, uint64_t *offset)
{
	struct sym_proc *sp = proc_of(s, p);
	const struct tracer_elf_sym *sym;
	const struct sym_module *mod;
	const struct tracer_elf *e;

	if (!sp || !addr)
		return NULL;
	mod = module_at(sp, ts, addr, &e);
	if (!mod)
		return NULL;
	sym = tracer__elf_find(e, addr - mod->base, offset);
	return sym ? shown_name(mod->file, sym) : NULL;
}

size_t tracer__syms_note(void *ctx, const struct tracer_merge_proc *p,
			 uint64_t ts, uint64_t addr, char *buf, size_t size)
{
	uint64_t off = 0;
	const char *name = tracer__syms_lookup(ctx, p, ts, addr, &off);
	int n;

	if (!name || size == 0)
		return 0;
	if (off)
		n = snprintf(buf, size, " <%s+%" PRIu64 ">", name, off);
	else
		n = snprintf(buf, size, " <%s>", name);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

void tracer__syms_free(struct tracer_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].mods);
	for (i = 0; i < s->nfiles; i++) {
		shown_free(s->files[i]);
		tracer__elf_free(s->files[i]->elf);
		free(s->files[i]->path);
		free(s->files[i]);
	}
	free(s->files);
	free(s->procs);
	free(s);
}
