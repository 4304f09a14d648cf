/*
 * test_wrap_boot - the bootstrap allocator of libtracer's malloc wrappers
 * (libtracer/wrap_mem.c, linked in here): while the next allocator is
 * being looked up, and the lookup itself allocates (as dlsym() does in
 * some C libraries), allocations come from a static arena; afterwards its
 * blocks can be freed (ignored) and reallocated (copied) like any other.
 *
 * The lookup is this file's tracer__wrap_next(), which allocates on its
 * first call the way such a dlsym() would, then asks the dynamic linker.
 * wrap_mem.c is included, not linked: an AddressSanitizer build, whose
 * allocator is the sanitizer's, skips the whole test.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "wrap.h"
#include "emit_stub.h"

#ifdef __SANITIZE_ADDRESS__
int main(void)
{
	printf("1..0 # SKIP the allocator is AddressSanitizer's\n");
	return 0;
}
#else
#include "wrap_mem.c"

static char *during_malloc, *during_calloc, *during_realloc;
static void *during_aligned, *during_memalign, *during_posix;
static void *too_big = (void *)1;
static int too_big_errno, posix_ret = -1, lookups;

/* What a dlsym() that allocates would do, on the first lookup. */
void *tracer__wrap_next(const char *name)
{
	if (lookups++ == 0) {
		during_malloc = malloc(100);
		memcpy(during_malloc, "bootstrap", 10);
		during_calloc = calloc(16, 4);
		during_realloc = realloc(NULL, 40);
		during_aligned = aligned_alloc(256, 64);
		during_memalign = memalign(128, 32);
		posix_ret = posix_memalign(&during_posix, 64, 24);
		errno = 0;
		too_big = malloc(1 << 20);
		too_big_errno = errno;
		free(during_realloc);	/* an arena block: ignored */
	}
	return dlsym(RTLD_NEXT, name);
}

/* The rest of wrap.h's and emit.h's interface that wrap_mem.c uses:
 * never reached with events off, which they are here (no libtracer, no
 * tracerd). */
__thread unsigned tracer__wrap_guard;
__thread struct tracer__thread tracer__tls;
const void *volatile tracer_control_page;
uint32_t tracer__filter_gen;

void tracer__wrap_emit_slow(const struct tracer_callsite *cs,
			    const union tracer_arg *args, unsigned alloc)
{
	(void)cs;
	(void)args;
	(void)alloc;
}

void tracer__rb_write_words_slow(struct tracer_rb_writer *w, uint32_t id,
				 const void *src, size_t stride, uint32_t n)
{
	(void)w;
	(void)id;
	(void)src;
	(void)stride;
	(void)n;
}

#define STUB_EMITS(n) EMIT_STUB(tracer__wrap_emit##n)
STUB_EMITS(0)
STUB_EMITS(1)
STUB_EMITS(2)
STUB_EMITS(3)
STUB_EMITS(4)
STUB_EMITS(5)
STUB_EMITS(6)
STUB_EMITS(7)
STUB_EMITS(8)

static int all_zero(const char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

int main(void)
{
	char *later, *moved;

	tracer__wrap_mem_init();
	plan(10);
	ok(lookups >= 7, "every allocator function looked up (%d)", lookups);
	ok(during_malloc && !strcmp(during_malloc, "bootstrap"),
	   "malloc during the lookup gives usable memory");
	ok(during_calloc && all_zero(during_calloc, 64),
	   "calloc during the lookup gives zeroed memory");
	ok(during_aligned && ((uintptr_t)during_aligned & 255) == 0 &&
	   during_memalign && ((uintptr_t)during_memalign & 127) == 0,
	   "aligned_alloc and memalign during the lookup are aligned");
	ok(posix_ret == 0 && ((uintptr_t)during_posix & 63) == 0,
	   "posix_memalign during the lookup succeeds, aligned");
	ok(too_big == NULL && too_big_errno == ENOMEM,
	   "more than the arena holds: NULL and ENOMEM");
	later = malloc(100);
	ok(later && (later < during_malloc - 65536 ||
		     later > during_malloc + 65536),
	   "after the lookup, malloc is the C library's (not the arena)");
	free(later);
	moved = realloc(during_malloc, 4000);
	ok(moved && moved != during_malloc && !strcmp(moved, "bootstrap"),
	   "realloc of an arena block moves it to the C library, contents kept");
	free(moved);
	free(during_calloc);	/* would abort in the C library's free() */
	free(during_aligned);
	ok(1, "free of arena blocks is ignored (the process is still here)");
	ok(strdup("the C library's allocator works") != NULL,
	   "strdup() (the C library's own malloc call) works after it");
	return done();
}
#endif
