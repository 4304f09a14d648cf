/*
 * elfsyms.h - the symbols of an ELF file, for naming addresses (symbols.c).
 *
 * Reads an ELF64 file of the host's byte order: its function and object
 * symbols (from .symtab, or from .dynsym when the file has no usable
 * .symtab: a stripped library) and the extent of its loadable segments.
 * Nothing in the file is trusted: every offset, size and count is checked
 * against the file, so a truncated, corrupt or hostile file is refused
 * (or yields fewer symbols), never read out of bounds. Symbol values are
 * the file's virtual addresses: an address of a process minus the
 * object's load base (l_addr) is one, for executables (PIE or not) and
 * libraries alike.
 */
#ifndef TRACECTL_ELFSYMS_H
#define TRACECTL_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "elffile.h"


struct tracer_elf_sym {
	uint64_t value;
	uint64_t size;			/* 0: only its address is known */
	const char *name;		/* in the file's string table copy */
	unsigned char rank;		/* global 0, weak 1, local 2 */
};

struct tracer_elf {
	struct tracer_elf_sym *syms;	/* sorted by value */
	size_t nsyms;
	char *strtab;			/* NUL-terminated copy */
	uint64_t lo, hi;		/* [lo, hi): the loadable segments */
};

/*
 * Read the symbols of the ELF file at path into a new *e.
 * Returns 0, the negative errno of open/fstat/pread (-ENOENT ...),
 * -ENOEXEC (not an ELF64 file of this byte order, or not a regular file),
 * -EBADMSG (headers that do not fit the file, or inconsistent), -ENODATA
 * (no symbols: stripped), -ENOMEM. On error *e is NULL.
 */
int tracer__elf_load(struct tracer_elf **e, const char *path);

/*
 * The symbol that holds the file address addr (value <= addr < value +
 * size, or addr == value for a symbol without size), or NULL; *offset
 * (may be NULL) is addr - value.
 */
const struct tracer_elf_sym *tracer__elf_find(const struct tracer_elf *e,
					       uint64_t addr,
					       uint64_t *offset);

/* Is addr in the file's loadable segments? */
static inline int tracer__elf_holds(const struct tracer_elf *e, uint64_t addr)
{
	return addr >= e->lo && addr < e->hi;
}

void tracer__elf_free(struct tracer_elf *e);

#endif /* TRACECTL_ELFSYMS_H */
