/*
 * ownmalloc - a program with its own allocator (malloc, free, calloc,
 * realloc defined in the executable: a bump allocator over mmap). Its
 * definitions come first in the search order, so libtracer's malloc
 * wrapper is never called; the program must run as it does untraced,
 * and its other calls are still recorded (test_wrap_io.sh).
 *
 *   ownmalloc FILE    prints how many of its own allocations served the
 *                     C library's strdup, fopen and stdio, and FILE's
 *                     first line
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA	(64 << 20)

static char *arena;
static size_t used;
static unsigned long count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The allocator itself (not called malloc: GCC would turn calloc's
 * malloc + memset into a call to calloc, itself). */
static void *bump(size_t n)
{
	char *p = NULL;

	pthread_mutex_lock(&lock);
	if (!arena) {
		arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED)
			arena = NULL;
	}
	n = (n + 15) & ~(size_t)15;
	if (arena && used + n + 16 <= ARENA) {
		p = arena + used + 16;
		memcpy(p - 16, &n, sizeof(n));
		used += n + 16;
		count++;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

void *malloc(size_t n)
{
	return bump(n);
}

void free(void *p)
{
	(void)p;	/* never given back */
}

void *calloc(size_t n, size_t size)
{
	void *p = size && n > SIZE_MAX / size ? NULL : bump(n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = bump(n);
	size_t had;

	if (p && old) {
		memcpy(&had, (char *)old - 16, sizeof(had));
		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

int main(int argc, char **argv)
{
	char line[256] = "";
	char *copy;
	FILE *f;

	if (argc != 2)
		return 2;
	copy = strdup(argv[1]);
	f = fopen(copy, "r");
	if (!f || !fgets(line, sizeof(line), f))
		return 1;
	fclose(f);
	printf("own allocations: %s, first line: %s",
	       count > 0 ? "yes" : "no", line);
	return 0;
}
