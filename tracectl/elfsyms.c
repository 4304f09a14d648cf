/*
 * elfsyms.c - the symbols of an ELF64 file (elfsyms.h).
 *
 * The file is read through elffile.h (pread(), every range checked): the
 * ELF header, the program headers (for the extent of the loadable
 * segments), the section headers, then one symbol table and the string
 * table it links to. Each symbol's name offset is checked against its
 * string table, which is copied with a NUL after it.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"

/* Symbols kept when a name is looked for back from the nearest one. */
#define FIND_BACK	8

/* [lo, hi) of the PT_LOAD segments; lo > hi when there is none (or the
 * program headers cannot be read: the symbols will tell). */
static void read_extent(const struct tracer_elf_file *f, const Elf64_Ehdr *eh,
			struct tracer_elf *e)
{
	uint64_t len = (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), i;
	Elf64_Phdr *ph;

	e->lo = UINT64_MAX;
	e->hi = 0;
	if (!eh->e_phnum || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    tracer__elf_read_range(f, eh->e_phoff, len, 0, (void **)&ph))
		return;
	for (i = 0; i < eh->e_phnum; i++) {
		uint64_t end = ph[i].p_vaddr + ph[i].p_memsz;

		if (ph[i].p_type != PT_LOAD || end < ph[i].p_vaddr)
			continue;
		if (ph[i].p_vaddr < e->lo)
			e->lo = ph[i].p_vaddr;
		if (end > e->hi)
			e->hi = end;
	}
	free(ph);
}

/* Is s a symbol that names code or data at an address? */
static bool wanted(const Elf64_Sym *s, uint64_t strsize)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_OBJECT ||
		type == STT_GNU_IFUNC) &&
	       s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE &&
	       s->st_name != 0 && s->st_name < strsize;
}

/* Preference among symbols of one address: global, weak, local. */
static unsigned rank(const Elf64_Sym *s)
{
	switch (ELF64_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cmp_sym(const void *a, const void *b)
{
	const struct tracer_elf_sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sort, and keep the preferred symbol of each address. */
static void sort_syms(struct tracer_elf *e)
{
	size_t i, o = 0;

	qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_sym);
	for (i = 0; i < e->nsyms; i++)
		if (!o || e->syms[o - 1].value != e->syms[i].value)
			e->syms[o++] = e->syms[i];
	e->nsyms = o;
}

/* The wanted symbols of raw[0..n) (names in strtab[0..strsize)). */
static int take_syms(struct tracer_elf *e, const Elf64_Sym *raw, size_t n,
		     uint64_t strsize)
{
	size_t i;

	e->syms = calloc(n ? n : 1, sizeof(*e->syms));
	if (!e->syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct tracer_elf_sym *s = &e->syms[e->nsyms];

		if (!wanted(&raw[i], strsize) || !e->strtab[raw[i].st_name])
			continue;
		s->value = raw[i].st_value;
		s->size = raw[i].st_size;
		s->name = e->strtab + raw[i].st_name;
		s->rank = (unsigned char)rank(&raw[i]);
		e->nsyms++;
	}
	sort_syms(e);
	return e->nsyms ? 0 : -ENODATA;
}

/* Load the symbol table of section i. Returns 0, -ENODATA (none usable),
 * -EBADMSG, -ENOMEM, or an errno of pread. */
static int load_table(const struct tracer_elf_file *f, const Elf64_Shdr *sh,
		      size_t n, size_t i, struct tracer_elf *e)
{
	const Elf64_Shdr *st = &sh[i], *str;
	Elf64_Sym *raw;
	int ret;

	if (st->sh_entsize != sizeof(Elf64_Sym) ||
	    st->sh_size % sizeof(Elf64_Sym) || st->sh_link >= n)
		return -EBADMSG;
	str = &sh[st->sh_link];
	if (str->sh_type != SHT_STRTAB)
		return -EBADMSG;
	ret = tracer__elf_read_range(f, str->sh_offset, str->sh_size, 1,
			 (void **)&e->strtab);
	if (ret)
		return ret;
	ret = tracer__elf_read_range(f, st->sh_offset, st->sh_size, 0, (void **)&raw);
	if (!ret)
		ret = take_syms(e, raw, (size_t)(st->sh_size /
						  sizeof(Elf64_Sym)),
				str->sh_size);
	free(raw);
	if (ret) {
		free(e->strtab);
		free(e->syms);
		e->strtab = NULL;
		e->syms = NULL;
		e->nsyms = 0;
	}
	return ret;
}

/* The first section of type `type` with symbols: -ENODATA if none. */
static int load_type(const struct tracer_elf_file *f, const Elf64_Shdr *sh,
		     size_t n, uint32_t type, struct tracer_elf *e)
{
	int ret = -ENODATA;
	size_t i;

	for (i = 0; i < n; i++) {
		if (sh[i].sh_type != type)
			continue;
		ret = load_table(f, sh, n, i, e);
		if (ret != -ENODATA && ret != -EBADMSG)
			return ret;
	}
	return ret;
}

/* Without program headers: the extent of the symbols. */
static void extent_from_syms(struct tracer_elf *e)
{
	size_t i;

	e->lo = e->syms[0].value;
	e->hi = e->lo + 1;
	for (i = 0; i < e->nsyms; i++) {
		uint64_t end = e->syms[i].value + (e->syms[i].size ?
						   e->syms[i].size : 1);

		if (end > e->hi)
			e->hi = end;
	}
}

static int load_file(const struct tracer_elf_file *f, struct tracer_elf *e)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	size_t n;
	int ret;

	ret = tracer__elf_read_header(f, &eh);
	if (ret)
		return ret;
	read_extent(f, &eh, e);
	ret = tracer__elf_read_sections(f, &eh, &sh, &n);
	if (ret)
		return ret;
	ret = load_type(f, sh, n, SHT_SYMTAB, e);
	if (ret == -ENODATA || ret == -EBADMSG) {
		int dyn = load_type(f, sh, n, SHT_DYNSYM, e);

		ret = dyn == -ENODATA && ret == -EBADMSG ? ret : dyn;
	}
	free(sh);
	if (!ret && e->lo >= e->hi)
		extent_from_syms(e);
	return ret;
}

int tracer__elf_load(struct tracer_elf **ep, const char *path)
{
	struct tracer_elf_file f = { .fd = -1 };
	struct tracer_elf *e;
	int ret;

	*ep = NULL;
	ret = tracer__elf_open(&f, path);
	if (ret)
		return ret;
	e = calloc(1, sizeof(*e));
	ret = e ? load_file(&f, e) : -ENOMEM;
	close(f.fd);
	if (ret) {
		tracer__elf_free(e);
		return ret;
	}
	*ep = e;
	return 0;
}

/* Does s hold addr? */
static bool holds(const struct tracer_elf_sym *s, uint64_t addr)
{
	return s->size ? addr - s->value < s->size : addr == s->value;
}

const struct tracer_elf_sym *tracer__elf_find(const struct tracer_elf *e,
					       uint64_t addr,
					       uint64_t *offset)
{
	size_t lo = 0, hi = e->nsyms, k;

	/* hi: the number of symbols whose value <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < FIND_BACK && k < lo; k++) {
		const struct tracer_elf_sym *s = &e->syms[lo - 1 - k];

		if (holds(s, addr)) {
			if (offset)
				*offset = addr - s->value;
			return s;
		}
	}
	return NULL;
}

void tracer__elf_free(struct tracer_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->strtab);
	free(e);
}
