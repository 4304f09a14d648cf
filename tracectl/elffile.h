/*
 * elffile.h - reading an ELF64 file that is trusted in nothing, for the
 * symbol reader (elfsyms.c) and the call-site reader (elfsites.c).
 *
 * The file is read with pread(), never mapped (a file truncated while it
 * is read cannot fault). Every range read is checked to lie in the file
 * and to be at most TRACER_ELF_SECTION_MAX bytes.
 */
#ifndef TRACECTL_ELFFILE_H
#define TRACECTL_ELFFILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest file section read (a symbol or string table). */
#define TRACER_ELF_SECTION_MAX	(512ULL << 20)

struct tracer_elf_file {
	int fd;
	uint64_t size;
};

/* Open path, a regular file. Returns 0, the negative errno of open or
 * fstat, or -ENOEXEC (not a regular file). */
int tracer__elf_open(struct tracer_elf_file *f, const char *path);

/* Is [off, off + len) inside the file? ... and within the bound? */
bool tracer__elf_fits(const struct tracer_elf_file *f, uint64_t off,
		      uint64_t len);
bool tracer__elf_in_file(const struct tracer_elf_file *f, uint64_t off,
			 uint64_t len);

/* Read exactly len bytes at off. Returns 0, -EBADMSG (the file ended
 * first), or the negative errno of pread. */
int tracer__elf_read_at(const struct tracer_elf_file *f, void *buf,
			size_t len, uint64_t off);

/* A new buffer *out with [off, off + len) of the file and `extra` + 1 zero
 * bytes after it. Returns 0, -EBADMSG, -ENOMEM, or an errno of pread. */
int tracer__elf_read_range(const struct tracer_elf_file *f, uint64_t off,
			   uint64_t len, size_t extra, void **out);

/* The ELF header. Returns 0, -ENOEXEC (not ELF64 of the host's byte
 * order), -EBADMSG (cut short), or an errno of pread. */
int tracer__elf_read_header(const struct tracer_elf_file *f, Elf64_Ehdr *eh);

/* The section headers into a new *sh (*n of them). Returns 0, -ENODATA
 * (the file has none), -EBADMSG, -ENOMEM, or an errno of pread. */
int tracer__elf_read_sections(const struct tracer_elf_file *f,
			      const Elf64_Ehdr *eh, Elf64_Shdr **sh, size_t *n);

#endif /* TRACECTL_ELFFILE_H */
