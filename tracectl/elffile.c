/*
 * elffile.c - reading an ELF64 file that is trusted in nothing
 * (elffile.h).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"
#include "open_regular.h"

#if __BYTE_ORDER == __LITTLE_ENDIAN
# define HOST_DATA	ELFDATA2LSB
#else
# define HOST_DATA	ELFDATA2MSB
#endif

int tracer__elf_open(struct tracer_elf_file *f, const char *path)
{
	struct stat st;

	/* A path a traced program recorded: it may name a FIFO. */
	f->fd = tracer__open_regular(path, &st);
	if (f->fd < 0) {
		int ret = f->fd;

		f->fd = -1;
		return ret == -EINVAL ? -ENOEXEC : ret;
	}
	f->size = (uint64_t)st.st_size;
	return 0;
}

bool tracer__elf_fits(const struct tracer_elf_file *f, uint64_t off,
		      uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

/* Is [off, off + len) inside the file (and len within the bound)? */
bool tracer__elf_in_file(const struct tracer_elf_file *f, uint64_t off,
			 uint64_t len)
{
	return len <= TRACER_ELF_SECTION_MAX && off <= f->size &&
	       len <= f->size - off;
}

/* Read exactly len bytes at off. Returns 0, -EBADMSG (the file ended
 * first), or the negative errno of pread. */
int tracer__elf_read_at(const struct tracer_elf_file *f, void *buf,
			size_t len, uint64_t off)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = pread(f->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* A new buffer with [off, off + len) of the file (and `extra` zero bytes
 * after it). Returns 0, -EBADMSG, -ENOMEM, or an errno of pread. */
int tracer__elf_read_range(const struct tracer_elf_file *f, uint64_t off,
			   uint64_t len, size_t extra, void **out)
{
	void *buf;
	int ret;

	*out = NULL;
	if (!tracer__elf_in_file(f, off, len))
		return -EBADMSG;
	buf = calloc(1, (size_t)len + extra + 1);
	if (!buf)
		return -ENOMEM;
	ret = tracer__elf_read_at(f, buf, (size_t)len, off);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

/* The ELF header: checked to be ELF64 of this byte order. */
int tracer__elf_read_header(const struct tracer_elf_file *f, Elf64_Ehdr *eh)
{
	static const unsigned char magic[SELFMAG] = { ELFMAG0, ELFMAG1,
						      ELFMAG2, ELFMAG3 };
	int ret;

	if (f->size < SELFMAG)
		return -ENOEXEC;
	ret = tracer__elf_read_at(f, eh, f->size < sizeof(*eh) ? SELFMAG :
				  sizeof(*eh), 0);
	if (ret)
		return ret;
	if (memcmp(eh->e_ident, magic, SELFMAG))
		return -ENOEXEC;
	if (f->size < sizeof(*eh))
		return -EBADMSG;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != HOST_DATA)
		return -ENOEXEC;
	return 0;
}

/* The section headers into a new *sh (*n of them). */
int tracer__elf_read_sections(const struct tracer_elf_file *f,
			      const Elf64_Ehdr *eh, Elf64_Shdr **sh, size_t *n)
{
	uint64_t count = eh->e_shnum;
	Elf64_Shdr first;
	int ret;

	*sh = NULL;
	*n = 0;
	if (!eh->e_shoff)
		return -ENODATA;	/* no sections: nothing to name */
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !tracer__elf_in_file(f, eh->e_shoff, sizeof(first)))
		return -EBADMSG;
	if (count == 0) {		/* extended numbering: in section 0 */
		ret = tracer__elf_read_at(f, &first, sizeof(first), eh->e_shoff);
		if (ret)
			return ret;
		count = first.sh_size;
	}
	if (count == 0 || count > TRACER_ELF_SECTION_MAX / sizeof(**sh))
		return -EBADMSG;
	ret = tracer__elf_read_range(f, eh->e_shoff, count * sizeof(**sh), 0,
			 (void **)sh);
	if (!ret)
		*n = (size_t)count;
	return ret;
}
