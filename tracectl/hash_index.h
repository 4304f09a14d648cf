/*
 * hash_index.h - an open-addressing index over the entries of an array:
 * slot h holds an entry's index + 1 (0: free), collisions go to the next
 * slot, the size is a power of two kept over twice the entries. The
 * lookups are the callers' (they know their keys); growing is the same
 * for all of them.
 */
#ifndef TRACECTL_HASH_INDEX_H
#define TRACECTL_HASH_INDEX_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Entry i's home slot in a table of `size` slots (a power of two). */
typedef size_t (*tracer_index_home)(const void *ctx, size_t i, size_t size);

/*
 * Rebuild the index *slots (*size slots) of n entries at twice the size
 * (`first` when empty). Returns 0 or -ENOMEM (the old index stays).
 */
static inline int tracer__index_grow(uint32_t **slots, size_t *size,
				     size_t first, size_t n,
				     tracer_index_home home, const void *ctx)
{
	size_t want = *size ? *size * 2 : first, i, h;
	uint32_t *grown = calloc(want, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (h = home(ctx, i, want); grown[h]; h = (h + 1) & (want - 1))
			;
		grown[h] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = grown;
	*size = want;
	return 0;
}

#endif /* TRACECTL_HASH_INDEX_H */
