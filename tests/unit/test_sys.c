/*
 * test_sys.c - libtracer/sys.h, the system calls libtracer makes at a
 * process's start without the C library's wrappers: each answers as the
 * kernel does (a value, or a negative errno) and leaves errno alone, both
 * made directly and through the C library (TRACER_SYS_LIBC, what other
 * architectures use). Built twice from this file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sys.h"
#include "tap.h"

#ifdef TRACER_SYS_LIBC
#define HOW "C library"
#else
#define HOW "direct"
#endif

int main(void)
{
	char path[] = "/tmp/test_sys.XXXXXX";
	struct stat st;
	int fd, wfd;
	char *p;

	plan(7);
	wfd = mkstemp(path);
	if (wfd < 0 || write(wfd, "state page\n", 11) != 11 ||
	    ftruncate(wfd, 4096) < 0)
		bail_out("cannot make %s", path);
	errno = 1234;
	fd = tracer__sys_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ok(fd >= 0 && errno == 1234, HOW ": open gives a descriptor (%d)",
	   fd);
	ok(tracer__sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	   st.st_size == 4096, HOW ": fstat: a regular file of 4096 bytes");
	p = tracer__sys_mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ok(!tracer__sys_failed(p) && memcmp(p, "state page\n", 11) == 0,
	   HOW ": mmap maps the file");
	is_int(tracer__sys_close(fd), 0, HOW ": close");
	errno = 1234;
	is_int(tracer__sys_open("/nonexistent/x", O_RDONLY), -ENOENT,
	       HOW ": a missing file: -ENOENT");
	ok(errno == 1234 && tracer__sys_close(fd) == -EBADF &&
	   tracer__sys_failed(tracer__sys_mmap(NULL, 4096, PROT_READ,
					       MAP_SHARED, fd, 0)) &&
	   errno == 1234, HOW ": failures as negative errnos, errno kept");
	ok(tracer__sys_kill(getpid(), 0) == 0 &&
	   tracer__sys_kill(-999999, 0) < 0, HOW ": kill(pid, 0)");
	munmap(p, 4096);
	unlink(path);
	return done();
}
