/*
 * allocee - a program linked with an allocator of its own that comes
 * after libtracer (nextalloc.c): allocates one block of NEXTALLOC_SIZE
 * bytes, writes to it and frees it (test_wrap_io.sh).
 *
 *   allocee     prints "block N bytes ptr P"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextalloc.h"

int main(void)
{
	char *volatile p = malloc(NEXTALLOC_SIZE);

	if (!p) {
		perror("allocee: malloc");
		return 1;
	}
	memset(p, 1, NEXTALLOC_SIZE);
	printf("block %d bytes ptr %p\n", NEXTALLOC_SIZE, (void *)p);
	free(p);
	return 0;
}
