/*
 * test_elf.c - the ELF symbol reader of tracectl (tracectl/elfsyms.c):
 * names the functions of this very program, and fails cleanly, with one
 * of its documented errors, on files that are missing, not ELF,
 * truncated, or corrupt (garbage section headers, inconsistent tables,
 * random damage). A sanitizer build checks that nothing is read out of
 * bounds.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "elfsyms.h"

static char dir[] = "/tmp/test_elf.XXXXXX";
static char path[sizeof(dir) + 16];
static unsigned char *image;		/* this program's file */
static size_t image_size;

int tracer_test_named_function(int x);
int main(void);

__attribute__((noinline, used)) int tracer_test_named_function(int x)
{
	return x * 3 + 1;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

static void read_image(void)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0)
		bail_out("cannot open /proc/self/exe");
	image_size = (size_t)st.st_size;
	image = malloc(image_size);
	if (!image || fread(image, 1, image_size, f) != image_size)
		bail_out("cannot read /proc/self/exe");
	fclose(f);
}

/* Write len bytes of data as the file at path. */
static void write_file(const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("cannot write %s", path);
}

/* Is ret one of the documented results for a damaged file? After a
 * success, lookups anywhere must stay in bounds. */
static bool clean(int ret, struct tracer_elf *e)
{
	uint64_t a;

	if (ret == 0) {
		for (a = 0; a < 1 << 20; a += 4093)
			tracer__elf_find(e, e->lo + a, NULL);
		tracer__elf_find(e, UINT64_MAX, NULL);
		tracer__elf_find(e, 0, NULL);
		return e != NULL && e->nsyms > 0;
	}
	return e == NULL && (ret == -ENOEXEC || ret == -EBADMSG ||
			     ret == -ENODATA || ret == -ENOMEM);
}

/* Load a modified copy of the image; true when the result is clean. */
static bool load_copy(const unsigned char *data, size_t len, int *ret_out)
{
	struct tracer_elf *e;
	int ret;
	bool good;

	write_file(data, len);
	ret = tracer__elf_load(&e, path);
	good = clean(ret, e);
	tracer__elf_free(e);
	if (ret_out)
		*ret_out = ret;
	return good;
}

static void test_self(void)
{
	uintptr_t base = 0;
	const struct tracer_elf_sym *s;
	struct tracer_elf *e;
	uint64_t off = 99;
	int ret;

	dl_iterate_phdr(first_object, &base);
	ret = tracer__elf_load(&e, "/proc/self/exe");
	is_int(ret, 0, "this program's symbols load");
	if (ret)
		return;
	s = tracer__elf_find(e, (uintptr_t)tracer_test_named_function - base,
			     &off);
	ok(s && !strcmp(s->name, "tracer_test_named_function") && off == 0,
	   "a function's address is named by its symbol, offset 0");
	s = tracer__elf_find(e, (uintptr_t)tracer_test_named_function + 3 -
			     base, &off);
	ok(s && !strcmp(s->name, "tracer_test_named_function") && off == 3,
	   "an address inside a function: its symbol, offset 3");
	s = tracer__elf_find(e, (uintptr_t)main - base, NULL);
	ok(s && !strcmp(s->name, "main"), "main is named main");
	ok(tracer__elf_holds(e, (uintptr_t)main - base) &&
	   !tracer__elf_holds(e, e->hi), "the loadable extent holds main");
	ok(!tracer__elf_find(e, 0, NULL), "address 0 has no name");
	tracer__elf_free(e);
}

static void test_not_elf(void)
{
	struct tracer_elf *e = (void *)1;
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	unsigned char c32[64];

	is_int(tracer__elf_load(&e, "/nonexistent/file"), -ENOENT,
	       "a missing file: -ENOENT");
	ok(e == NULL, "... and no result");
	is_int(tracer__elf_load(&e, dir), -ENOEXEC, "a directory: -ENOEXEC");
	write_file(text, sizeof(text) - 1);
	is_int(tracer__elf_load(&e, path), -ENOEXEC, "a script: -ENOEXEC");
	write_file("", 0);
	is_int(tracer__elf_load(&e, path), -ENOEXEC, "an empty file: -ENOEXEC");
	memcpy(c32, image, sizeof(c32));
	c32[EI_CLASS] = ELFCLASS32;
	write_file(c32, sizeof(c32));
	is_int(tracer__elf_load(&e, path), -ENOEXEC, "ELF32: -ENOEXEC");
}

static void test_truncated(void)
{
	const Elf64_Ehdr *eh = (const void *)image;
	size_t lens[] = { 4, 20, 63, 64, 100, 4096, image_size / 2,
			  (size_t)eh->e_shoff + 10, image_size - 1 };
	size_t i;
	int ret;
	bool all = true;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		if (lens[i] >= image_size)
			continue;
		if (!load_copy(image, lens[i], &ret) || ret != -EBADMSG) {
			diag("truncated to %zu bytes: %d", lens[i], ret);
			all = false;
		}
	}
	ok(all, "a file cut anywhere before its section headers end: -EBADMSG");
}

/* A copy of the image to damage. */
static unsigned char *copy(void)
{
	unsigned char *c = malloc(image_size);

	if (!c)
		bail_out("out of memory");
	memcpy(c, image, image_size);
	return c;
}

/* The section header of the first section of this type in c, or NULL. */
static Elf64_Shdr *section(unsigned char *c, uint32_t type)
{
	Elf64_Ehdr *eh = (void *)c;
	Elf64_Shdr *sh = (void *)(c + eh->e_shoff);
	int i;

	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	return NULL;
}

static void test_headers(void)
{
	unsigned char *c = copy();
	Elf64_Ehdr *eh = (void *)c;
	Elf64_Ehdr orig = *eh;
	int ret;

	eh->e_shentsize = 10;
	ok(load_copy(c, image_size, &ret) && ret == -EBADMSG,
	   "a wrong section header size: -EBADMSG");
	*eh = orig;
	eh->e_shoff = UINT64_MAX - 8;
	ok(load_copy(c, image_size, &ret) && ret == -EBADMSG,
	   "section headers past the end of the file: -EBADMSG");
	*eh = orig;
	eh->e_shnum = 0xfff0;
	ok(load_copy(c, image_size, &ret) && ret == -EBADMSG,
	   "too many section headers for the file: -EBADMSG");
	*eh = orig;
	eh->e_shoff = 0;
	ok(load_copy(c, image_size, &ret) && ret == -ENODATA,
	   "no section headers: -ENODATA");
	*eh = orig;
	eh->e_phoff = UINT64_MAX / 2;
	ok(load_copy(c, image_size, &ret) && ret == 0,
	   "bad program headers: the symbols still load");
	free(c);
}

static void test_tables(void)
{
	unsigned char *c = copy();
	Elf64_Shdr *st = section(c, SHT_SYMTAB), saved;
	int ret = 0;

	if (!st) {
		ok(1, "# SKIP no .symtab in this build");
		free(c);
		return;
	}
	saved = *st;
	st->sh_link = 0xffff;
	ok(load_copy(c, image_size, &ret) && (ret == 0 || ret == -ENODATA),
	   "a symbol table linked to no section: .dynsym or -ENODATA");
	*st = saved;
	st->sh_offset = image_size - 8;
	ok(load_copy(c, image_size, &ret) && (ret == 0 || ret == -ENODATA ||
					       ret == -EBADMSG),
	   "a symbol table past the end of the file: refused");
	*st = saved;
	st->sh_size = saved.sh_size - 5;
	ok(load_copy(c, image_size, NULL),
	   "a symbol table of a size that is no multiple of a symbol");
	*st = saved;
	((Elf64_Shdr *)(c + ((Elf64_Ehdr *)c)->e_shoff))[saved.sh_link]
		.sh_size = 3;		/* the string table cut short */
	ok(load_copy(c, image_size, &ret) && (ret == 0 || ret == -ENODATA),
	   "a string table shorter than its names: names cut, not overrun");
	memcpy(c, image, image_size);
	st = section(c, SHT_SYMTAB);
	memset(c + st->sh_offset, 0xff, st->sh_size);	/* every st_name */
	ok(load_copy(c, image_size, NULL),
	   "symbols with garbage names and values: clean");
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

static void test_garbage(void)
{
	const Elf64_Ehdr *eh = (const void *)image;
	size_t shlen = (size_t)eh->e_shnum * sizeof(Elf64_Shdr), i, k;
	unsigned char *c = copy();
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	bool all = true;
	int ret;

	for (i = 0; i < 300 && all; i++) {
		memcpy(c, image, image_size);
		for (k = 0; k < shlen; k++)
			if (i < 100 || rnd(&seed) % 16 == 0)
				c[eh->e_shoff + k] = (unsigned char)rnd(&seed);
		all = load_copy(c, image_size, &ret);
		if (!all)
			diag("garbage section headers, round %zu: %d", i, ret);
	}
	ok(all, "garbage section headers (300 rounds): clean");
	for (i = 0; i < 300 && all; i++) {
		memcpy(c, image, image_size);
		for (k = 0; k < 64; k++) {
			size_t at = rnd(&seed) % 2 ? rnd(&seed) % 64 :
				    eh->e_shoff + rnd(&seed) % shlen;
			c[at] = (unsigned char)rnd(&seed);
		}
		all = load_copy(c, image_size, &ret);
		if (!all)
			diag("random damage, round %zu: %d", i, ret);
	}
	ok(all, "random damage to the headers (300 rounds): clean");
	free(c);
}

int main(void)
{
	if (!mkdtemp(dir))
		bail_out("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/f", dir);
	read_image();
	test_self();
	test_not_elf();
	test_truncated();
	test_headers();
	test_tables();
	test_garbage();
	unlink(path);
	rmdir(dir);
	free(image);
	plan(tap_count);
	return done();
}
