/*
 * elfsites.h - the static call sites of an ELF file, read from the file on
 * disk, for the events of processes that never connected to tracerd
 * (`tracectl list`).
 *
 * Reads an ELF64 file of the host's byte order: the descriptors that
 * <tracer.h> puts in its section "tracer_callsites", with their strings
 * (name, format, file) found through the file's RELATIVE dynamic
 * relocations and its loadable segments. Nothing in the file is trusted:
 * every offset, size and count is checked against the file, so a
 * truncated, corrupt or hostile file is refused (or yields fewer sites),
 * never read out of bounds.
 */
#ifndef TRACECTL_ELFSITES_H
#define TRACECTL_ELFSITES_H

#include <stddef.h>
#include <stdint.h>

/* tracectl does not link libtracer: no registration of its own sites. */
#ifndef TRACER_NO_AUTO_REGISTER
# define TRACER_NO_AUTO_REGISTER
#endif
#include "tracer.h"

/* Longest string of a site, its NUL included; a longer one drops the site. */
#define TRACER_ELF_SITE_STRING_MAX	4096

struct tracer_elf_site {
	const char *name;	/* "provider:event", in sites->strings */
	const char *format;	/* "" when the file has none */
	const char *file;	/* "" when the file has none */
	uint32_t line;
	uint8_t nargs, vital;
	char types[TRACER_MAX_ARGS + 1];	/* NUL-terminated */
};

struct tracer_elf_sites {
	struct tracer_elf_site *v;	/* in the order of the section */
	size_t n;
	char *strings;	/* one block holding every string */
};

/*
 * Read the call sites of the ELF64 file at path (section "tracer_callsites")
 * into *out. Entries of another TRACER_CALLSITE_ABI, with more than
 * TRACER_MAX_ARGS arguments, without a name, or with a string that is not
 * in a loadable segment of the file (or longer than
 * TRACER_ELF_SITE_STRING_MAX) are left out.
 * Returns 0 (out->n is 0 when the file has no such section: most
 * libraries), or a negative errno: that of open/fstat/pread, -ENOEXEC (not
 * an ELF64 file of the host's byte order, or not a regular file), -EBADMSG
 * (headers or entries that do not fit the file, a section larger than
 * TRACER_ELF_SECTION_MAX (elffile.h), strings that add up to more, or more
 * program headers than the kernel would load: 64 KiB), -ENOMEM.
 * On error *out is empty (v and strings NULL, n 0).
 */
int tracer__elf_sites(const char *path, struct tracer_elf_sites *out);

/* Free what tracer__elf_sites() read; *s is left empty. */
void tracer__elf_sites_free(struct tracer_elf_sites *s);

#endif /* TRACECTL_ELFSITES_H */
