/*
 * nextalloc - an allocator that comes after libtracer in the search order,
 * as libjemalloc does for a program linked with it: allocee is linked with
 * this library, libtracer is preloaded, so the program's malloc() and
 * free() are libtracer's and libtracer's next definitions are these.
 *
 * It serves every block from the C library. For a block of
 * NEXTALLOC_SIZE bytes it makes a call libtracer records, close() of a
 * descriptor that cannot exist, at the moment it hands the block out
 * (close(NEXTALLOC_TAKEN)) and at the moment it gets the block back
 * (close(NEXTALLOC_GIVEN)): the points another thread could get the
 * same block from it. test_wrap_io.sh checks that libc:malloc comes
 * after the first and libc:free before the second.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "nextalloc.h"

void *__libc_malloc(size_t n);	/* the C library's, by their own names */
void __libc_free(void *p);

/* The NEXTALLOC_SIZE block out, if any: written by the program's thread,
 * read in free() by every thread (libtracer's listener allocates too). */
static void *watched;

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	int saved = errno;

	if (n == NEXTALLOC_SIZE && p &&
	    !__atomic_load_n(&watched, __ATOMIC_RELAXED)) {
		__atomic_store_n(&watched, p, __ATOMIC_RELAXED);
		close(NEXTALLOC_TAKEN);
	}
	errno = saved;
	return p;
}

void free(void *p)
{
	int saved = errno;

	if (p && p == __atomic_load_n(&watched, __ATOMIC_RELAXED)) {
		close(NEXTALLOC_GIVEN);
		__atomic_store_n(&watched, NULL, __ATOMIC_RELAXED);
	}
	errno = saved;
	__libc_free(p);
}
