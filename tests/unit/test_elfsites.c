/*
 * test_elfsites.c - the call-site reader of tracectl (tracectl/elfsites.c):
 * reads the sites of libtracer.so as built (argv[1], or the path from the
 * build directory where `make check` runs the tests) and of this very
 * program (three tracer_record() calls of known strings, types and
 * lines), finds none in libc, and fails cleanly, with one of its
 * documented errors, on files that are missing, not ELF, truncated or
 * corrupt; sites whose strings cannot be found are left out. A sanitizer
 * build checks that nothing is read out of bounds.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "emit_stub.h"
#include "elfsites.h"		/* and tracer.h, without registration */

#define LIBTRACER	"libtracer/.libs/libtracer.so"
#define SITE_SIZE	sizeof(struct tracer_callsite)
/* An address in no segment of any file here. */
#define NOWHERE		0x7ead00000000ULL

struct image {
	unsigned char *d;
	size_t size;
};

static char dir[] = "/tmp/test_elfsites.XXXXXX";
static char path[sizeof(dir) + 16];
static struct image self, lib;		/* this program's file, libtracer's */
static unsigned line_one, line_two, line_vital;

/* This program does not link libtracer: its call sites are only read. */
EMIT_STUB(tracer_record_emit0)
EMIT_STUB(tracer_record_emit2)
EMIT_STUB(tracer_record_emit3)

/* ... nor its control page: a page that says "not recording". */
static const uint64_t no_session[16];
const void *volatile tracer_control_page = no_session;

/* Statement stmt, on one line; var: the line. */
#define AT(var, stmt)	do { var = __LINE__; stmt; } while (0)

void record_some(int n, const char *s, double d, unsigned long long u);
void record_some(int n, const char *s, double d, unsigned long long u)
{
	AT(line_one, tracer_record("elfsites:one", "n %d s %s", n, s));
	AT(line_two, tracer_record("elfsites:two", "d %.3f u %llu at %p", d,
				   u, (void *)s));
	AT(line_vital, tracer_record_vital("elfsites:vital", "no arguments"));
}

static void read_image(const char *file, struct image *m)
{
	FILE *f = fopen(file, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0)
		bail_out("cannot open %s", file);
	m->size = (size_t)st.st_size;
	m->d = malloc(m->size);
	if (!m->d || fread(m->d, 1, m->size, f) != m->size)
		bail_out("cannot read %s", file);
	fclose(f);
}

/* Write len bytes of data as the file at path. */
static void write_file(const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("cannot write %s", path);
}

static unsigned char *copy(const struct image *m)
{
	unsigned char *c = malloc(m->size);

	if (!c)
		bail_out("out of memory");
	return memcpy(c, m->d, m->size);
}

static const struct tracer_elf_site *find(const struct tracer_elf_sites *s,
					  const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

/* Is a site as it should be: named, types one letter per argument? */
static bool well_formed(const struct tracer_elf_site *s)
{
	size_t i;

	if (!s->name[0] || s->nargs > TRACER_MAX_ARGS ||
	    strlen(s->types) != s->nargs || strlen(s->name) >= 4096 ||
	    strlen(s->format) >= 4096 || strlen(s->file) >= 4096)
		return false;
	for (i = 0; i < s->nargs; i++)
		if (!strchr("iudDpse", s->types[i]))
			return false;
	return true;
}

/* Is ret a documented result for a damaged file, with what it returns
 * readable (types may be garbage there, but NUL-terminated)? */
static bool clean(int ret, const struct tracer_elf_sites *s)
{
	size_t i, len = 0;

	if (ret)
		return !s->v && !s->n && !s->strings &&
		       (ret == -EBADMSG || ret == -ENOEXEC || ret == -ENOMEM);
	for (i = 0; i < s->n; i++)
		len += strlen(s->v[i].name) + strlen(s->v[i].format) +
		       strlen(s->v[i].file) + strlen(s->v[i].types);
	return (s->n == 0) == (s->v == NULL) && len < SIZE_MAX;
}

/* Read the sites of a copy of data; true when the result is clean. */
static bool load_copy(const void *data, size_t len, int *ret_out,
		      struct tracer_elf_sites *keep)
{
	struct tracer_elf_sites s;
	bool good;
	int ret;

	write_file(data, len);
	ret = tracer__elf_sites(path, &s);
	good = clean(ret, &s);
	if (ret_out)
		*ret_out = ret;
	if (keep)
		*keep = s;
	else
		tracer__elf_sites_free(&s);
	return good;
}

/* ---- the image's structure (trusted: files of this build) ----------- */

static Elf64_Shdr *shdr(unsigned char *c, size_t i)
{
	const Elf64_Ehdr *eh = (const void *)c;

	return (Elf64_Shdr *)(c + eh->e_shoff) + i;
}

static Elf64_Shdr *section_named(unsigned char *c, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)c;
	const char *names = (const char *)c +
			    shdr(c, eh->e_shstrndx)->sh_offset;
	size_t i;

	for (i = 1; i < eh->e_shnum; i++)
		if (!strcmp(names + shdr(c, i)->sh_name, name))
			return shdr(c, i);
	return NULL;
}

/* The file offset of the descriptor of this program's site at line. */
static size_t site_at_line(unsigned char *c, unsigned line)
{
	const Elf64_Shdr *cs = section_named(c, "tracer_callsites");
	struct tracer_callsite e;
	size_t off;

	for (off = 0; cs && off + SITE_SIZE <= cs->sh_size; off += SITE_SIZE) {
		memcpy(&e, c + cs->sh_offset + off, sizeof(e));
		if (e.line == line)
			return cs->sh_offset + off;
	}
	bail_out("no descriptor of line %u in this program", line);
}

/* The virtual address of file offset off in section s. */
static uint64_t vaddr_of(const Elf64_Shdr *s, size_t off)
{
	return s->sh_addr + (off - s->sh_offset);
}

/* Make the pointer at vaddr (file offset off) value: its bytes and the
 * addend of its relocation, if it has one. */
static void set_pointer(unsigned char *c, size_t off, uint64_t vaddr,
			uint64_t value)
{
	const Elf64_Ehdr *eh = (const void *)c;
	Elf64_Rela *ra;
	size_t i, k;

	memcpy(c + off, &value, sizeof(value));
	for (i = 0; i < eh->e_shnum; i++) {
		if (shdr(c, i)->sh_type != SHT_RELA)
			continue;
		ra = (Elf64_Rela *)(c + shdr(c, i)->sh_offset);
		for (k = 0; k < shdr(c, i)->sh_size / sizeof(*ra); k++)
			if (ra[k].r_offset == vaddr)
				ra[k].r_addend = (int64_t)value;
	}
}

/* Change a field of the descriptor of line in c. */
static void set_field(unsigned char *c, unsigned line, size_t field,
		      uint64_t value)
{
	const Elf64_Shdr *cs = section_named(c, "tracer_callsites");
	size_t off = site_at_line(c, line) + field;

	set_pointer(c, off, vaddr_of(cs, off), value);
}

/* How many relocations of c fall in [lo, hi)? */
static size_t relocs_in(unsigned char *c, uint64_t lo, uint64_t hi)
{
	const Elf64_Ehdr *eh = (const void *)c;
	const Elf64_Rela *ra;
	size_t i, k, n = 0;

	for (i = 0; i < eh->e_shnum; i++) {
		if (shdr(c, i)->sh_type != SHT_RELA)
			continue;
		ra = (const Elf64_Rela *)(c + shdr(c, i)->sh_offset);
		for (k = 0; k < shdr(c, i)->sh_size / sizeof(*ra); k++)
			n += ra[k].r_offset >= lo && ra[k].r_offset < hi;
	}
	return n;
}

/* ---- the tests -------------------------------------------------------- */

static void test_libtracer(const char *file)
{
	const Elf64_Shdr *cs = section_named(lib.d, "tracer_callsites");
	const struct tracer_elf_site *s;
	struct tracer_elf_sites sites;
	bool all = true;
	size_t i;
	int ret;

	ret = tracer__elf_sites(file, &sites);
	is_int(ret, 0, "%s: read", file);
	ok(cs && sites.n == cs->sh_size / SITE_SIZE,
	   "every descriptor of libtracer.so is read (%zu)", sites.n);
	s = find(&sites, "libc:open");
	ok(s && s->format[0] && s->nargs > 0 && s->file[0] && s->line > 0,
	   "libc:open: format \"%s\", %u arguments", s ? s->format : "?",
	   s ? s->nargs : 0);
	s = find(&sites, "libc:malloc");
	ok(s && s->format[0] && s->nargs > 0 && s->file[0] && s->line > 0,
	   "libc:malloc: format \"%s\", %u arguments", s ? s->format : "?",
	   s ? s->nargs : 0);
	for (i = 0; i < sites.n; i++)
		if (!well_formed(&sites.v[i]) || !strchr(sites.v[i].name, ':')) {
			diag("site %zu (%s): types \"%s\" for %u arguments", i,
			     sites.v[i].name, sites.v[i].types,
			     sites.v[i].nargs);
			all = false;
		}
	ok(all, "every site has a provider:event name, one type per argument");
	tracer__elf_sites_free(&sites);
}

/* Are this program's three sites in s, exactly? */
static bool own_sites(const struct tracer_elf_sites *s)
{
	const struct tracer_elf_site *one = find(s, "elfsites:one"),
		*two = find(s, "elfsites:two"), *vital = find(s, "elfsites:vital");

	return s->n == 3 && one && two && vital &&
	       !strcmp(one->format, "n %d s %s") &&
	       !strcmp(one->file, __FILE__) && one->line == line_one &&
	       one->nargs == 2 && !strcmp(one->types, "is") && !one->vital &&
	       !strcmp(two->format, "d %.3f u %llu at %p") &&
	       !strcmp(two->file, __FILE__) && two->line == line_two &&
	       two->nargs == 3 && !strcmp(two->types, "dup") && !two->vital &&
	       !strcmp(vital->format, "no arguments") &&
	       !strcmp(vital->file, __FILE__) &&
	       vital->line == line_vital && vital->nargs == 0 &&
	       !strcmp(vital->types, "") && vital->vital == 1;
}

static void test_self(void)
{
	struct tracer_elf_sites s;
	size_t i;
	int ret;

	ret = tracer__elf_sites("/proc/self/exe", &s);
	is_int(ret, 0, "this program's call sites are read");
	ok(own_sites(&s), "exactly its three sites: names, formats, file, "
	   "lines, types, vital");
	for (i = 0; i < s.n; i++)
		diag("%s:%u %s \"%s\" (%s)", s.v[i].file, s.v[i].line,
		     s.v[i].name, s.v[i].format, s.v[i].types);
	tracer__elf_sites_free(&s);
	ok(!s.v && !s.n && !s.strings, "freed: empty");
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	snprintf(arg, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

static void test_no_section(void)
{
	char libc[PATH_MAX] = "";
	struct tracer_elf_sites s;
	int ret;

	dl_iterate_phdr(find_libc, libc);
	if (!libc[0]) {
		ok(1, "# SKIP libc not found");
		return;
	}
	ret = tracer__elf_sites(libc, &s);
	ok(ret == 0 && s.n == 0 && !s.v && !s.strings,
	   "%s, without call sites: 0, none", libc);
	tracer__elf_sites_free(&s);
}

static void test_not_elf(void)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	struct tracer_elf_sites s;
	unsigned char head[64];

	is_int(tracer__elf_sites("/nonexistent/file", &s), -ENOENT,
	       "a missing file: -ENOENT");
	ok(!s.v && !s.n && !s.strings, "... and an empty result");
	is_int(tracer__elf_sites(dir, &s), -ENOEXEC, "a directory: -ENOEXEC");
	write_file(text, sizeof(text) - 1);
	is_int(tracer__elf_sites(path, &s), -ENOEXEC, "a script: -ENOEXEC");
	write_file("", 0);
	is_int(tracer__elf_sites(path, &s), -ENOEXEC,
	       "an empty file: -ENOEXEC");
	memcpy(head, self.d, sizeof(head));
	head[EI_CLASS] = ELFCLASS32;
	write_file(head, sizeof(head));
	is_int(tracer__elf_sites(path, &s), -ENOEXEC, "ELF32: -ENOEXEC");
	memcpy(head, self.d, sizeof(head));
	head[EI_DATA] = head[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB
						     : ELFDATA2LSB;
	write_file(head, sizeof(head));
	is_int(tracer__elf_sites(path, &s), -ENOEXEC,
	       "the other byte order: -ENOEXEC");
}

static void test_truncated(void)
{
	const Elf64_Shdr *cs = section_named(lib.d, "tracer_callsites");
	size_t lens[] = { 4, 40, 63, 64, 100, cs->sh_offset + 60,
			  cs->sh_offset + cs->sh_size, lib.size / 2,
			  lib.size - 1 }, len;
	struct tracer_elf_sites s;
	bool all;
	int ret;
	size_t i;

	all = load_copy(lib.d, 4096, &ret, &s);
	ok(all && (ret == -EBADMSG || (ret == 0 && s.n == 0)),
	   "libtracer.so cut to 4096 bytes: -EBADMSG or no sites (%d)", ret);
	tracer__elf_sites_free(&s);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		if (!load_copy(lib.d, lens[i], &ret, NULL) || ret != -EBADMSG) {
			diag("cut to %zu bytes: %d", lens[i], ret);
			all = false;
		}
	}
	for (len = 1; len < lib.size; len += 4093)
		if (!load_copy(lib.d, len, &ret, NULL)) {
			diag("cut to %zu bytes: %d", len, ret);
			all = false;
		}
	ok(all, "libtracer.so cut anywhere: -EBADMSG (or -ENOEXEC), clean");
}

/* The sites of a damaged copy c of this program; *ret: the result. */
static struct tracer_elf_sites damaged(const unsigned char *c, int *ret)
{
	struct tracer_elf_sites s;

	if (!load_copy(c, self.size, ret, &s))
		diag("unclean result %d", *ret);
	return s;
}

/* Damage copy c with one change to the descriptor of line_two; its site
 * must be left out or read as want_format, the others intact. */
static void check_damage(size_t field, uint64_t value, const char *want_format,
			 const char *what)
{
	unsigned char *c = copy(&self);
	const struct tracer_elf_site *two;
	struct tracer_elf_sites s;
	int ret;

	set_field(c, line_two, field, value);
	s = damaged(c, &ret);
	two = find(&s, "elfsites:two");
	ok(ret == 0 && find(&s, "elfsites:one") &&
	   find(&s, "elfsites:vital") &&
	   (want_format ? two && s.n == 3 && !strcmp(two->format, want_format)
			: !two && s.n == 2),
	   "%s (%d, %zu sites)", what, ret, s.n);
	tracer__elf_sites_free(&s);
	free(c);
}

/* Set the byte of the descriptor of line_two at offset field to v. */
static void check_byte(size_t field, unsigned char v, const char *what)
{
	unsigned char *c = copy(&self);
	struct tracer_elf_sites s;
	int ret;

	c[site_at_line(c, line_two) + field] = v;
	s = damaged(c, &ret);
	ok(ret == 0 && s.n == 2 && !find(&s, "elfsites:two") &&
	   find(&s, "elfsites:one"), "%s: left out", what);
	tracer__elf_sites_free(&s);
	free(c);
}

static void test_bad_sites(void)
{
	check_damage(offsetof(struct tracer_callsite, name), NOWHERE, NULL,
		     "a name outside every segment: the site is left out");
	check_damage(offsetof(struct tracer_callsite, name), 0, NULL,
		     "a null name: the site is left out");
	check_damage(offsetof(struct tracer_callsite, format), 0, "",
		     "a null format: read as \"\"");
	check_damage(offsetof(struct tracer_callsite, file), UINT64_MAX, NULL,
		     "a file name at the last address: the site is left out");
	check_byte(offsetof(struct tracer_callsite, abi), 2,
		   "another descriptor ABI");
	check_byte(offsetof(struct tracer_callsite, nargs),
		   TRACER_MAX_ARGS + 1, "too many arguments");
}

/* The executable PT_LOAD segment of c. */
static const Elf64_Phdr *code_segment(unsigned char *c)
{
	const Elf64_Ehdr *eh = (const void *)c;
	const Elf64_Phdr *ph = (const void *)(c + eh->e_phoff);
	size_t i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			return &ph[i];
	return NULL;
}

/* In copy c (freed), point the name of the site of line_two at vaddr: the
 * site must be read with a name of want bytes, or (want 0) left out. */
static void check_name_at(unsigned char *c, uint64_t vaddr, size_t want,
			  const char *what)
{
	struct tracer_elf_sites s;
	size_t i, got = 0;
	int ret;

	set_field(c, line_two, offsetof(struct tracer_callsite, name), vaddr);
	s = damaged(c, &ret);
	for (i = 0; i < s.n; i++)
		if (s.v[i].line == line_two)
			got = strlen(s.v[i].name);
	ok(ret == 0 && got == want && s.n == (want ? 3 : 2) &&
	   find(&s, "elfsites:one"), "%s (%d, %zu sites)", what, ret, s.n);
	tracer__elf_sites_free(&s);
	free(c);
}

static void test_long_names(void)
{
	const size_t max = TRACER_ELF_SITE_STRING_MAX;
	const Elf64_Phdr *ph = code_segment(self.d);
	unsigned char *c;

	if (!ph || ph->p_filesz <= max) {
		ok(1, "# SKIP no code segment of %zu bytes", max + 1);
		return;
	}
	c = copy(&self);
	memset(c + ph->p_offset, 'x', max - 1);
	c[ph->p_offset + max - 1] = '\0';
	check_name_at(c, ph->p_vaddr, max - 1,
		      "a name of the longest length (NUL included): read");
	c = copy(&self);
	memset(c + ph->p_offset, 'x', max);
	check_name_at(c, ph->p_vaddr, 0,
		      "a name without a NUL in its first bytes: left out");
	c = copy(&self);
	c[ph->p_offset + ph->p_filesz - 1] = 'x';
	check_name_at(c, ph->p_vaddr + ph->p_filesz - 1, 0,
		      "a name whose NUL would be past its segment: left out");
}

/* Move the addend of each RELATIVE relocation in the sites into its slot
 * and the relocation elsewhere (as DT_RELR leaves the slots), or fill
 * the slots with garbage and keep the relocations. */
static void relocs_to_slots(unsigned char *c, bool garbage)
{
	const Elf64_Shdr *cs = section_named(c, "tracer_callsites");
	const Elf64_Ehdr *eh = (const void *)c;
	uint64_t value = NOWHERE;
	Elf64_Rela *ra;
	size_t i, k;

	for (i = 0; i < eh->e_shnum; i++) {
		if (shdr(c, i)->sh_type != SHT_RELA)
			continue;
		ra = (Elf64_Rela *)(c + shdr(c, i)->sh_offset);
		for (k = 0; k < shdr(c, i)->sh_size / sizeof(*ra); k++) {
			if (ra[k].r_offset - cs->sh_addr >= cs->sh_size)
				continue;
			if (!garbage)
				value = (uint64_t)ra[k].r_addend;
			memcpy(c + cs->sh_offset + (ra[k].r_offset -
						    cs->sh_addr), &value, 8);
			if (!garbage)
				ra[k].r_offset = 8;
		}
	}
}

static void test_relocations(void)
{
	const Elf64_Shdr *cs = section_named(self.d, "tracer_callsites");
	unsigned char *c = copy(&self);
	struct tracer_elf_sites s;
	size_t n = relocs_in(self.d, cs->sh_addr, cs->sh_addr + cs->sh_size);
	int ret;

	if (!n) {
		ok(1, "# SKIP not a PIE: no relocations of the sites");
		ok(1, "# SKIP not a PIE: no relocations of the sites");
		free(c);
		return;
	}
	relocs_to_slots(c, true);
	s = damaged(c, &ret);
	ok(ret == 0 && own_sites(&s),
	   "garbage in the %zu relocated slots: the relocations are used", n);
	tracer__elf_sites_free(&s);
	memcpy(c, self.d, self.size);
	relocs_to_slots(c, false);
	s = damaged(c, &ret);
	ok(ret == 0 && own_sites(&s),
	   "the addends in the slots, no relocations (DT_RELR): same sites");
	tracer__elf_sites_free(&s);
	free(c);
}

static void test_bad_headers(void)
{
	unsigned char *c = copy(&self);
	Elf64_Shdr *cs = section_named(c, "tracer_callsites"), saved = *cs;
	Elf64_Ehdr *eh = (void *)c;
	Elf64_Phdr *ph = (Elf64_Phdr *)(c + eh->e_phoff);
	struct tracer_elf_sites s;
	bool good;
	int ret;
	size_t i;

	cs->sh_size = SITE_SIZE * 2 + 5;
	ok(load_copy(c, self.size, &ret, NULL) && ret == -EBADMSG,
	   "a section size that is no multiple of a descriptor: -EBADMSG");
	*cs = saved;
	cs->sh_offset = self.size - SITE_SIZE;
	ok(load_copy(c, self.size, &ret, NULL) && ret == -EBADMSG,
	   "a section past the end of the file: -EBADMSG");
	*cs = saved;
	for (i = 0; i < eh->e_phnum && ph[i].p_type != PT_LOAD; i++)
		;
	ph[i].p_filesz = self.size - ph[i].p_offset + 1;
	ok(load_copy(c, self.size, &ret, NULL) && ret == -EBADMSG,
	   "a segment past the end of the file: -EBADMSG");
	memcpy(c, self.d, self.size);
	eh->e_phnum = 0;
	good = load_copy(c, self.size, &ret, &s);
	ok(good && ret == 0 && s.n == 0,
	   "no program headers: 0 (%d), no site (its strings are nowhere)",
	   ret);
	tracer__elf_sites_free(&s);
	memcpy(c, self.d, self.size);
	eh->e_shstrndx = SHN_UNDEF;
	good = load_copy(c, self.size, &ret, &s);
	ok(good && ret == 0 && s.n == 0,
	   "no section names: 0 (%d), no section found", ret);
	tracer__elf_sites_free(&s);
	free(c);
}

/* xorshift: the same damage on every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random offset in one of the parts of the file the reader trusts
 * least: headers, section headers, the sites, the relocations. */
static size_t target(unsigned char *c, uint64_t *seed)
{
	const Elf64_Ehdr *eh = (const void *)c;
	const Elf64_Shdr *s;

	switch (rnd(seed) % 5) {
	case 0:
		return rnd(seed) % sizeof(*eh);
	case 1:
		return eh->e_phoff + rnd(seed) % (eh->e_phnum *
						  sizeof(Elf64_Phdr));
	case 2:
		return eh->e_shoff + rnd(seed) % (eh->e_shnum *
						  sizeof(Elf64_Shdr));
	case 3:
		s = section_named(self.d, "tracer_callsites");
		break;
	default:
		s = section_named(self.d, ".rela.dyn");
		break;
	}
	return s && s->sh_size ? s->sh_offset + rnd(seed) % s->sh_size : 0;
}

static void test_garbage(void)
{
	const Elf64_Shdr *cs = section_named(self.d, "tracer_callsites");
	unsigned char *c = copy(&self);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	bool all = true;
	size_t i, k;
	int ret;

	for (i = 0; i < 300 && all; i++) {
		memcpy(c, self.d, self.size);
		for (k = 0; k < cs->sh_size; k++)
			if (i < 100 || rnd(&seed) % 8 == 0)
				c[cs->sh_offset + k] = (unsigned char)rnd(&seed);
		all = load_copy(c, self.size, &ret, NULL);
		if (!all)
			diag("garbage sites, round %zu: %d", i, ret);
	}
	ok(all, "garbage descriptors (300 rounds): clean");
	for (i = 0; i < 300 && all; i++) {
		memcpy(c, self.d, self.size);
		for (k = 0; k < 32; k++)
			c[target(self.d, &seed)] = (unsigned char)rnd(&seed);
		all = load_copy(c, self.size, &ret, NULL);
		if (!all)
			diag("random damage, round %zu: %d", i, ret);
	}
	ok(all, "random damage to headers, sites, relocations (300 rounds): "
	   "clean");
	free(c);
}

int main(int argc, char **argv)
{
	const char *libtracer = argc > 1 ? argv[1] : LIBTRACER;

	if (access(libtracer, R_OK))
		bail_out("no %s (run from the build directory)", libtracer);
	if (!mkdtemp(dir))
		bail_out("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/f", dir);
	record_some(1, "x", 2.0, 3);
	read_image("/proc/self/exe", &self);
	read_image(libtracer, &lib);
	if (!section_named(lib.d, "tracer_callsites") ||
	    !section_named(self.d, "tracer_callsites"))
		bail_out("no section tracer_callsites in the test files");
	test_libtracer(libtracer);
	test_self();
	test_no_section();
	test_not_elf();
	test_truncated();
	test_bad_sites();
	test_long_names();
	test_relocations();
	test_bad_headers();
	test_garbage();
	unlink(path);
	rmdir(dir);
	free(self.d);
	free(lib.d);
	plan(tap_count);
	return done();
}
