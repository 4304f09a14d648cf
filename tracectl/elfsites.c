/*
 * elfsites.c - the call sites of an ELF64 file on disk (elfsites.h).
 *
 * The file is read with pread(), never mapped (a file truncated while it
 * is read cannot fault): the ELF header; the section headers and the
 * section-name string table, to find "tracer_callsites"; then, only when
 * it is there, the program headers (PT_LOAD: a virtual address to a file
 * offset), the RELATIVE relocations of the allocated SHT_RELA sections
 * that fall in "tracer_callsites" (a pointer of a PIC file is the addend
 * of its relocation; one without is the value in the file: a non-PIE
 * executable, or DT_RELR), the descriptors, and the strings they point
 * to.
 *
 * Nothing in the file is trusted. Every range read is checked to lie in
 * the file and to be at most TRACER_ELF_SECTION_MAX bytes (tables are read
 * in chunks); every PT_LOAD segment's file part to lie in the file; a
 * string to start in one of them and to end (its NUL) in the same one,
 * within TRACER_ELF_SITE_STRING_MAX bytes. A descriptor is read with the
 * ELF64 layout of struct tracer_callsite (struct disk_site), whatever the
 * host's pointer size.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"
#include "elfsites.h"

#define SITES_SECTION	"tracer_callsites"
/* Table entries (relocations, descriptors) read at a time. */
#define CHUNK		128
/* Most program headers: the kernel's ELF loader refuses a larger table
 * (and each string looks through them). */
#define PHDRS_MAX	(65536 / sizeof(Elf64_Phdr))

/* struct tracer_callsite as an ELF64 file holds it: 64-bit pointers. */
struct disk_site {
	uint32_t id;
	uint32_t enabled;
	uint16_t abi;
	uint8_t nargs;
	uint8_t vital;
	uint32_t line;
	uint64_t name;
	uint64_t format;
	uint64_t file;
	char types[TRACER_MAX_ARGS + 1];
} __attribute__((aligned(8)));

#if UINTPTR_MAX == UINT64_MAX
# define SAME_FIELD(f) \
	_Static_assert(offsetof(struct disk_site, f) == \
		       offsetof(struct tracer_callsite, f), \
		       "struct disk_site: " #f " is not where tracer.h has it")
SAME_FIELD(abi);
SAME_FIELD(nargs);
SAME_FIELD(vital);
SAME_FIELD(line);
SAME_FIELD(name);
SAME_FIELD(format);
SAME_FIELD(file);
SAME_FIELD(types);
_Static_assert(sizeof(struct disk_site) == sizeof(struct tracer_callsite),
	       "struct disk_site is not the size of struct tracer_callsite");
#endif

/* A RELATIVE relocation: the pointer at vaddr is the load base + addend. */
struct reloc {
	uint64_t vaddr;
	uint64_t addend;
};

/* A site taken, its strings as offsets in the strings block. */
struct pending {
	size_t name, format, file;
	uint32_t line;
	uint8_t nargs, vital;
	char types[TRACER_MAX_ARGS + 1];
};

struct reader {
	struct tracer_elf_file f;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;			/* the section headers */
	size_t nsh;
	Elf64_Phdr *load;		/* the PT_LOAD program headers */
	size_t nload;
	uint64_t addr, off, len;	/* "tracer_callsites" */
	uint32_t reltype;		/* RELATIVE on e_machine; 0: unknown */
	struct reloc *rel;		/* in "tracer_callsites", sorted */
	size_t nrel, relcap;
	struct pending *sites;
	size_t nsites, sitecap;
	char *strings;			/* "" at 0, then each string */
	size_t used, strcap;
	uint64_t last_file;		/* address of the last file name */
	size_t last_file_at;		/* its offset in strings */
};

/* Called on each entry (at index i) of a table read by each_entry(). */
typedef int entry_fn(struct reader *r, const void *entry, uint64_t i);

union chunk {
	Elf64_Rela rela[CHUNK];
	struct disk_site site[CHUNK];
};

/* p (room for *cap elements of size bytes) with room for need: p itself,
 * a larger copy (*cap updated), or NULL (p left alone). */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need && n <= SIZE_MAX / 2)
		n *= 2;
	if (n < need || n > SIZE_MAX / size)
		return NULL;
	p = realloc(p, n * size);
	if (p)
		*cap = n;
	return p;
}

/* Call fn on each of the n entries of size bytes at off, CHUNK at a time.
 * Returns 0, the first nonzero result of fn, or an error of read_at. */
static int each_entry(struct reader *r, uint64_t off, uint64_t n,
		      size_t size, entry_fn *fn)
{
	union chunk buf;
	const char *p = (const char *)&buf;
	uint64_t i, k, m;
	int ret;

	for (i = 0; i < n; i += m) {
		m = n - i < CHUNK ? n - i : CHUNK;
		ret = tracer__elf_read_at(&r->f, &buf, (size_t)m * size, off + i * size);
		for (k = 0; k < m && !ret; k++)
			ret = fn(r, p + k * size, i + k);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- headers ---------------------------------------------------------- */

/* The section headers, if any (r->nsh stays 0 without). */
static int read_sections(struct reader *r)
{
	int ret = tracer__elf_read_sections(&r->f, &r->eh, &r->sh, &r->nsh);

	return ret == -ENODATA ? 0 : ret;
}

/* The section-name string table into a new *names (*len bytes, then a
 * NUL). Returns 0 (*names NULL: the sections have no names), -EBADMSG,
 * -ENOMEM, or an errno of pread. */
static int read_names(const struct reader *r, char **names, uint64_t *len)
{
	uint64_t i = r->eh.e_shstrndx;
	void *buf;
	int ret;

	*names = NULL;
	*len = 0;
	if (i == SHN_XINDEX)
		i = r->sh[0].sh_link;
	if (i == SHN_UNDEF)
		return 0;
	if (i >= r->nsh || r->sh[i].sh_type != SHT_STRTAB)
		return -EBADMSG;
	ret = tracer__elf_read_range(&r->f, r->sh[i].sh_offset,
				     r->sh[i].sh_size, 0, &buf);
	if (!ret) {
		*names = buf;
		*len = r->sh[i].sh_size;
	}
	return ret;
}

/* Take the extent of section s, "tracer_callsites". */
static int take_section(struct reader *r, const Elf64_Shdr *s)
{
	if (s->sh_type == SHT_NOBITS || !s->sh_size)
		return 0;		/* nothing in the file */
	if (s->sh_size % sizeof(struct disk_site) ||
	    !tracer__elf_in_file(&r->f, s->sh_offset, s->sh_size))
		return -EBADMSG;
	r->addr = s->sh_addr;
	r->off = s->sh_offset;
	r->len = s->sh_size;
	return 0;
}

/* Find "tracer_callsites" (r->len stays 0 without it). */
static int find_section(struct reader *r)
{
	uint64_t len;
	char *names;
	size_t i;
	int ret;

	ret = read_names(r, &names, &len);
	if (ret || !names)
		return ret;
	for (i = 1; i < r->nsh; i++) {
		if (r->sh[i].sh_name < len &&
		    !strcmp(names + r->sh[i].sh_name, SITES_SECTION)) {
			ret = take_section(r, &r->sh[i]);
			break;
		}
	}
	free(names);
	return ret;
}

/* The PT_LOAD program headers; -EBADMSG if one does not fit the file,
 * or if there are more than PHDRS_MAX program headers. */
static int read_segments(struct reader *r)
{
	uint64_t count = r->eh.e_phnum, i;
	Elf64_Phdr *ph;
	void *buf;
	int ret;

	if (count == PN_XNUM && r->nsh)	/* extended numbering */
		count = r->sh[0].sh_info;
	if (!count)
		return 0;
	if (r->eh.e_phentsize != sizeof(*ph) || count > PHDRS_MAX)
		return -EBADMSG;
	ret = tracer__elf_read_range(&r->f, r->eh.e_phoff,
				     count * sizeof(*ph), 0, &buf);
	if (ret)
		return ret;
	r->load = ph = buf;
	for (i = 0; i < count; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (!tracer__elf_fits(&r->f, ph[i].p_offset, ph[i].p_filesz) ||
		    ph[i].p_filesz > UINT64_MAX - ph[i].p_vaddr)
			return -EBADMSG;
		ph[r->nload++] = ph[i];
	}
	return 0;
}

/* ---- relocations ------------------------------------------------------ */

/* The RELATIVE relocation type of a machine; 0 when not known here. */
static uint32_t relative_type(uint16_t machine)
{
	switch (machine) {
	case EM_X86_64:
		return R_X86_64_RELATIVE;
	case EM_AARCH64:
		return R_AARCH64_RELATIVE;
	case EM_PPC64:
		return R_PPC64_RELATIVE;
	case EM_S390:
		return R_390_RELATIVE;
	case EM_RISCV:
		return R_RISCV_RELATIVE;
#ifdef EM_LOONGARCH
	case EM_LOONGARCH:
		return R_LARCH_RELATIVE;
#endif
	default:
		return 0;
	}
}

/* entry_fn: keep a RELATIVE relocation (no symbol; on a machine not known
 * here, any type but NONE) of a slot in "tracer_callsites". */
static int take_reloc(struct reader *r, const void *entry, uint64_t i)
{
	const Elf64_Rela *ra = entry;
	uint32_t type = (uint32_t)ELF64_R_TYPE(ra->r_info);
	struct reloc *rel;

	(void)i;
	if (ELF64_R_SYM(ra->r_info) != 0 ||
	    (r->reltype ? type != r->reltype : type == 0) ||
	    ra->r_offset - r->addr >= r->len)
		return 0;
	rel = grow(r->rel, &r->relcap, r->nrel + 1, sizeof(*rel));
	if (!rel)
		return -ENOMEM;
	r->rel = rel;
	rel[r->nrel].vaddr = ra->r_offset;
	rel[r->nrel++].addend = (uint64_t)ra->r_addend;
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return 0;
}

/* The relocations of "tracer_callsites" from every allocated SHT_RELA. */
static int read_relocs(struct reader *r)
{
	const Elf64_Shdr *s;
	size_t i;
	int ret;

	r->reltype = relative_type(r->eh.e_machine);
	for (i = 0; i < r->nsh; i++) {
		s = &r->sh[i];
		if (s->sh_type != SHT_RELA || !(s->sh_flags & SHF_ALLOC))
			continue;
		if (s->sh_entsize != sizeof(Elf64_Rela) ||
		    s->sh_size % sizeof(Elf64_Rela) ||
		    !tracer__elf_in_file(&r->f, s->sh_offset, s->sh_size))
			return -EBADMSG;
		ret = each_entry(r, s->sh_offset,
				 s->sh_size / sizeof(Elf64_Rela),
				 sizeof(Elf64_Rela), take_reloc);
		if (ret)
			return ret;
	}
	if (r->nrel)
		qsort(r->rel, r->nrel, sizeof(*r->rel), cmp_reloc);
	return 0;
}

/* The address held by the pointer at vaddr (stored: its bytes in the
 * file), for the file loaded at address 0. */
static uint64_t pointer(const struct reader *r, uint64_t vaddr,
			uint64_t stored)
{
	const struct reloc key = { .vaddr = vaddr };
	const struct reloc *hit = NULL;

	if (r->nrel)
		hit = bsearch(&key, r->rel, r->nrel, sizeof(key), cmp_reloc);
	return hit ? hit->addend : stored;
}

/* ---- strings ---------------------------------------------------------- */

/* The file offset of vaddr, and how many bytes of its segment the file
 * holds from there. False when no PT_LOAD segment's file part holds it. */
static bool locate(const struct reader *r, uint64_t vaddr, uint64_t *off,
		   uint64_t *avail)
{
	const Elf64_Phdr *p;
	size_t i;

	for (i = 0; i < r->nload; i++) {
		p = &r->load[i];
		if (vaddr < p->p_vaddr || vaddr - p->p_vaddr >= p->p_filesz)
			continue;
		*off = p->p_offset + (vaddr - p->p_vaddr);
		*avail = p->p_filesz - (vaddr - p->p_vaddr);
		return true;
	}
	return false;
}

/* Append s[0..len) to the strings block; *at: where. */
static int add_string(struct reader *r, const char *s, size_t len,
		      size_t *at)
{
	char *block;

	if (len > TRACER_ELF_SECTION_MAX - r->used)
		return -EBADMSG;
	block = grow(r->strings, &r->strcap, r->used + len, 1);
	if (!block)
		return -ENOMEM;
	r->strings = block;
	memcpy(block + r->used, s, len);
	*at = r->used;
	r->used += len;
	return 0;
}

/* Copy the string at vaddr (0: "") to the strings block; *at: where.
 * Returns 0, 1 (no string there: skip the site), or a negative errno. */
static int take_string(struct reader *r, uint64_t vaddr, size_t *at)
{
	char buf[TRACER_ELF_SITE_STRING_MAX];
	uint64_t off, avail;
	const char *nul;
	size_t len;
	int ret;

	*at = 0;			/* "" */
	if (!vaddr)
		return 0;
	if (!locate(r, vaddr, &off, &avail))
		return 1;
	len = avail < sizeof(buf) ? (size_t)avail : sizeof(buf);
	ret = tracer__elf_read_at(&r->f, buf, len, off);
	if (ret)
		return ret;
	nul = memchr(buf, '\0', len);
	if (!nul)
		return 1;
	return add_string(r, buf, (size_t)(nul - buf) + 1, at);
}

/* take_string() for a file name: the last one again is not copied. */
static int take_file(struct reader *r, uint64_t vaddr, size_t *at)
{
	int ret;

	if (vaddr && vaddr == r->last_file) {
		*at = r->last_file_at;
		return 0;
	}
	ret = take_string(r, vaddr, at);
	if (!ret && vaddr) {
		r->last_file = vaddr;
		r->last_file_at = *at;
	}
	return ret;
}

/* ---- sites ------------------------------------------------------------ */

/* The strings of descriptor d, at vaddr va, into p. Returns 0, 1 (skip
 * the site: its strings are dropped), or a negative errno. */
static int site_strings(struct reader *r, const struct disk_site *d,
			uint64_t va, struct pending *p)
{
	uint64_t name = pointer(r, va + offsetof(struct disk_site, name),
				d->name);
	size_t mark = r->used;
	int ret;

	if (!name)
		return 1;
	ret = take_string(r, name, &p->name);
	if (!ret && !r->strings[p->name])
		ret = 1;		/* "": no name either */
	if (!ret)
		ret = take_string(r, pointer(r, va + offsetof(struct disk_site,
						       format), d->format),
				  &p->format);
	if (!ret)
		ret = take_file(r, pointer(r, va + offsetof(struct disk_site,
						     file), d->file),
				&p->file);
	if (ret > 0)
		r->used = mark;
	return ret;
}

/* entry_fn: take descriptor i of "tracer_callsites" if it is usable. */
static int take_site(struct reader *r, const void *entry, uint64_t i)
{
	const struct disk_site *d = entry;
	struct pending p = { .line = d->line, .nargs = d->nargs,
			     .vital = d->vital }, *sites;
	int ret;

	if (d->abi != TRACER_CALLSITE_ABI || d->nargs > TRACER_MAX_ARGS)
		return 0;
	ret = site_strings(r, d, r->addr + i * sizeof(*d), &p);
	if (ret)
		return ret > 0 ? 0 : ret;
	memcpy(p.types, d->types, TRACER_MAX_ARGS);
	p.types[TRACER_MAX_ARGS] = '\0';
	sites = grow(r->sites, &r->sitecap, r->nsites + 1, sizeof(*sites));
	if (!sites)
		return -ENOMEM;
	r->sites = sites;
	sites[r->nsites++] = p;
	return 0;
}

/* The sites taken, as *out (its strings block handed over). */
static int hand_over(struct reader *r, struct tracer_elf_sites *out)
{
	const struct pending *p;
	size_t i;

	if (!r->nsites)
		return 0;
	out->v = calloc(r->nsites, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < r->nsites; i++) {
		p = &r->sites[i];
		out->v[i].name = r->strings + p->name;
		out->v[i].format = r->strings + p->format;
		out->v[i].file = r->strings + p->file;
		out->v[i].line = p->line;
		out->v[i].nargs = p->nargs;
		out->v[i].vital = p->vital;
		memcpy(out->v[i].types, p->types, sizeof(p->types));
	}
	out->n = r->nsites;
	out->strings = r->strings;
	r->strings = NULL;
	return 0;
}

static int read_file(struct reader *r, struct tracer_elf_sites *out)
{
	size_t empty;
	int ret;

	ret = tracer__elf_read_header(&r->f, &r->eh);
	if (!ret)
		ret = read_sections(r);
	if (!ret && r->nsh)
		ret = find_section(r);
	if (ret || !r->len)
		return ret;
	ret = read_segments(r);
	if (!ret)
		ret = read_relocs(r);
	if (!ret)
		ret = add_string(r, "", 1, &empty);	/* offset 0 */
	if (!ret)
		ret = each_entry(r, r->off, r->len / sizeof(struct disk_site),
				 sizeof(struct disk_site), take_site);
	return ret ? ret : hand_over(r, out);
}

int tracer__elf_sites(const char *path, struct tracer_elf_sites *out)
{
	struct reader r = { .f.fd = -1 };
	int ret;

	memset(out, 0, sizeof(*out));
	ret = tracer__elf_open(&r.f, path);
	if (!ret) {
		ret = read_file(&r, out);
		close(r.f.fd);
	}
	free(r.sh);
	free(r.load);
	free(r.rel);
	free(r.sites);
	free(r.strings);
	if (ret)
		tracer__elf_sites_free(out);
	return ret;
}

void tracer__elf_sites_free(struct tracer_elf_sites *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->strings);
	s->v = NULL;
	s->n = 0;
	s->strings = NULL;
}
