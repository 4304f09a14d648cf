/*
 * wrap_mem.c - the C library's allocator and mmap/munmap, recorded as
 * libc:malloc, libc:free, ... (off unless the filter names them: a
 * program allocates far more often than it does anything else).
 *
 *   libc:malloc          size 24 ptr 0x5581e0c2a2a0
 *   libc:free            ptr 0x5581e0c2a2a0
 *   libc:realloc         ptr 0x5581e0c2a2a0 size 48 result 0x5581e0c2a6d0
 *
 * The bootstrap allocator. The allocator the program uses is the next
 * definition after libtracer's (the C library's, or one loaded after it,
 * such as libjemalloc): it is looked up with dlsym(), which may itself
 * allocate (older C libraries allocate their dlerror() state there). While
 * the lookup runs, allocations are served from a static arena that is
 * never freed; free() and realloc() recognise its blocks by address. A
 * program that defines malloc itself (in its executable) keeps its own and
 * never comes here.
 *
 * When: an allocation is stamped after the allocator returned the block,
 * libc:free before it is handed back, so that in a merged trace a block's
 * libc:free comes before any thread's next allocation of it, to within
 * what the clock tells apart across CPUs (a few ns: the TSC is read
 * unfenced, and the allocator's own work may still be in flight).
 * realloc() is one event, stamped after the call: a block it moved away
 * from may show reused by another thread just before it.
 *
 * Cost when the events are off: malloc and friends, one load and one
 * branch; free, the same branch also tests for an arena block.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wrap.h"
#include "emit.h"

/* ---- bootstrap arena ------------------------------------------------ */

#define BOOT_SIZE	(64 * 1024)
#define BOOT_ALIGN	16

static char boot_arena[BOOT_SIZE] __attribute__((aligned(BOOT_ALIGN)))
	TRACER_COLD_BSS;
static size_t boot_used;		/* bump pointer (atomic) */

/* Each block: its size in the 16 bytes before it (for realloc). */
static void *boot_alloc(size_t size, size_t align)
{
	size_t need, old, start;

	if (align < BOOT_ALIGN)
		align = BOOT_ALIGN;
	if (size > BOOT_SIZE || align > 4096)
		return NULL;
	need = size + align + BOOT_ALIGN;
	old = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
	if (old + need > BOOT_SIZE)
		return NULL;	/* errno: ENOMEM below */
	/* The address is aligned, not the offset (the arena is only
	 * BOOT_ALIGN-aligned); need leaves room for the padding. */
	start = TRACER_ALIGN_UP((uintptr_t)boot_arena + old + BOOT_ALIGN,
				align) - (uintptr_t)boot_arena;
	memcpy(boot_arena + start - sizeof(size_t), &size, sizeof(size_t));
	return boot_arena + start;
}

static inline int in_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_arena < BOOT_SIZE;
}

static size_t boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* ---- the next definitions --------------------------------------------- */

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*aligned_alloc_fn)(size_t, size_t);

static void *resolving_malloc(size_t n);
static void *resolving_calloc(size_t n, size_t size);
static void *resolving_realloc(void *p, size_t n);
static void resolving_free(void *p);
static int resolving_posix_memalign(void **p, size_t align, size_t n);
static void *resolving_aligned_alloc(size_t align, size_t n);
static void *resolving_memalign(size_t align, size_t n);

static malloc_fn real_malloc = resolving_malloc;
static calloc_fn real_calloc = resolving_calloc;
static realloc_fn real_realloc = resolving_realloc;
static free_fn real_free = resolving_free;
static posix_memalign_fn real_posix_memalign = resolving_posix_memalign;
static aligned_alloc_fn real_aligned_alloc = resolving_aligned_alloc;
static aligned_alloc_fn real_memalign = resolving_memalign;

#define LOAD(fn)	__atomic_load_n(&(fn), __ATOMIC_RELAXED)

static int resolving;	/* a lookup runs: allocate from the arena */

/*
 * Look every allocator function up at once. A thread that allocates while
 * another looks them up also gets arena blocks (the flag is global): the
 * arena is only for the first moments of the process.
 */
void tracer__wrap_mem_init(void)
{
	static int done;

	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&resolving, 1, __ATOMIC_RELAXED);
	/* Every function is looked up before any pointer is replaced. */
	void *m = tracer__wrap_next("malloc"), *c = tracer__wrap_next("calloc"),
	     *r = tracer__wrap_next("realloc"), *f = tracer__wrap_next("free"),
	     *pm = tracer__wrap_next("posix_memalign"),
	     *aa = tracer__wrap_next("aligned_alloc"),
	     *ma = tracer__wrap_next("memalign");

	__atomic_store_n(&real_malloc, (malloc_fn)m, __ATOMIC_RELAXED);
	__atomic_store_n(&real_calloc, (calloc_fn)c, __ATOMIC_RELAXED);
	__atomic_store_n(&real_realloc, (realloc_fn)r, __ATOMIC_RELAXED);
	__atomic_store_n(&real_free, (free_fn)f, __ATOMIC_RELAXED);
	__atomic_store_n(&real_posix_memalign, (posix_memalign_fn)pm,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&real_aligned_alloc, (aligned_alloc_fn)aa,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&real_memalign, (aligned_alloc_fn)ma,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&resolving, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

/* Before the lookup ends: the arena; after it: the real function. */
static void *boot_or_null(size_t n, size_t align)
{
	void *p = boot_alloc(n, align);

	if (!p)
		errno = ENOMEM;
	return p;
}

static int in_lookup(void)
{
	if (__atomic_load_n(&resolving, __ATOMIC_RELAXED))
		return 1;
	tracer__wrap_mem_init();
	return 0;
}

static void *resolving_malloc(size_t n)
{
	return in_lookup() ? boot_or_null(n, 0) : LOAD(real_malloc)(n);
}

static void *resolving_calloc(size_t n, size_t size)
{
	if (!in_lookup())
		return LOAD(real_calloc)(n, size);
	if (size && n > SIZE_MAX / size)
		return boot_or_null(SIZE_MAX, 0);
	return boot_or_null(n * size, 0);	/* static: already zero */
}

static void *resolving_realloc(void *p, size_t n)
{
	return in_lookup() ? boot_or_null(n, 0) : LOAD(real_realloc)(p, n);
}

static void resolving_free(void *p)
{
	if (!in_lookup())
		LOAD(real_free)(p);
}

static int resolving_posix_memalign(void **p, size_t align, size_t n)
{
	if (!in_lookup())
		return LOAD(real_posix_memalign)(p, align, n);
	*p = boot_alloc(n, align);
	return *p ? 0 : ENOMEM;
}

static void *resolving_aligned_alloc(size_t align, size_t n)
{
	return in_lookup() ? boot_or_null(n, align)
			   : LOAD(real_aligned_alloc)(align, n);
}

static void *resolving_memalign(size_t align, size_t n)
{
	return in_lookup() ? boot_or_null(n, align)
			   : LOAD(real_memalign)(align, n);
}

/* ---- the wrappers ----------------------------------------------------- */

/* An allocator's event, its fast path inline (emit.h);
 * tracer__wrap_alloc raised around its slow path (wrap.h). */
#define MEM_EMIT(var, ...) do { \
	WRAP__ARGS(mem__args, __VA_ARGS__); \
	tracer__wrap_emit_inline(&(var), mem__args, 1, \
				 WRAP__N(__VA_ARGS__)); \
} while (0)

WRAP_API void *malloc(size_t size)
{
	void *ret = NULL;
	WRAP_SITE_QUIET(cs, 0, "libc:malloc", "size %zu ptr %p", size, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return LOAD(real_malloc)(size);
	ret = LOAD(real_malloc)(size);
	MEM_EMIT(cs, size, ret);
	return ret;
}

WRAP_API void free(void *ptr)
{
	WRAP_SITE_QUIET(cs, 0, "libc:free", "ptr %p", ptr);

	if (tracer_likely(!(WRAP_ON(cs) | in_boot(ptr)))) {
		LOAD(real_free)(ptr);
		return;
	}
	if (in_boot(ptr))
		return;		/* an arena block: never freed */
	/* Stamped before the block goes back: from then on another thread
	 * may get it, and its libc:malloc must come after this one. */
	if (ptr)
		MEM_EMIT(cs, ptr);
	LOAD(real_free)(ptr);
}

WRAP_API void *calloc(size_t n, size_t size)
{
	void *ret = NULL;
	WRAP_SITE_QUIET(cs, 0, "libc:calloc", "nmemb %zu size %zu ptr %p",
		  n, size, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return LOAD(real_calloc)(n, size);
	ret = LOAD(real_calloc)(n, size);
	MEM_EMIT(cs, n, size, ret);
	return ret;
}

/* realloc of an arena block: a real block with the contents copied. */
static void *boot_realloc(void *ptr, size_t size)
{
	size_t old = boot_size(ptr);
	void *p = LOAD(real_malloc)(size);

	if (p)
		memcpy(p, ptr, old < size ? old : size);
	return p;
}

WRAP_API void *realloc(void *ptr, size_t size)
{
	void *ret = NULL;
	WRAP_SITE_QUIET(cs, 0, "libc:realloc", "ptr %p size %zu result %p",
		  ptr, size, ret);

	if (tracer_likely(!(WRAP_ON(cs) | in_boot(ptr))))
		return LOAD(real_realloc)(ptr, size);
	ret = in_boot(ptr) ? boot_realloc(ptr, size)
			   : LOAD(real_realloc)(ptr, size);
	if (WRAP_ON(cs))
		MEM_EMIT(cs, ptr, size, ret);
	return ret;
}

WRAP_API int posix_memalign(void **out, size_t align, size_t size)
{
	int ret = 0;
	void *p = NULL;
	WRAP_SITE_QUIET(cs, 0, "libc:posix_memalign",
		  "alignment %zu size %zu ptr %p result %d", align, size, p,
		  ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return LOAD(real_posix_memalign)(out, align, size);
	ret = LOAD(real_posix_memalign)(out, align, size);
	p = ret ? NULL : *out;
	MEM_EMIT(cs, align, size, p, ret);
	return ret;
}

/* aligned_alloc() and memalign(): the same arguments, the same event. */
#define ALIGNED_WRAPPER(name) \
WRAP_API void *name(size_t align, size_t size) \
{ \
	void *ret = NULL; \
	WRAP_SITE_QUIET(cs, 0, "libc:" #name, \
			"alignment %zu size %zu ptr %p", align, size, ret); \
 \
	if (tracer_likely(!WRAP_ON(cs))) \
		return LOAD(real_##name)(align, size); \
	ret = LOAD(real_##name)(align, size); \
	MEM_EMIT(cs, align, size, ret); \
	return ret; \
}

ALIGNED_WRAPPER(aligned_alloc)
ALIGNED_WRAPPER(memalign)

/* ---- mmap and munmap ---------------------------------------------------- */

WRAP_DEFINE_REAL(void *, mmap, (void *a, size_t n, int prot, int flags,
				int fd, off_t off),
		 (a, n, prot, flags, fd, off))
WRAP_DEFINE_REAL(int, munmap, (void *a, size_t n), (a, n))

WRAP_API void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	int64_t en = 0;
	void *ret = NULL;
	WRAP_SITE_QUIET_E(cs, 0, "libc:mmap",
		          "addr %p length %zu prot %#x flags %#x fd %d offset %lld "
		          "result %p", addr, len, prot, flags, fd, (long long)off,
		          ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(mmap)(addr, len, prot, flags, fd, off);
	ret = WRAP_REAL(mmap)(addr, len, prot, flags, fd, off);
	en = WRAP_ERRNO(ret == MAP_FAILED);
	WRAP_EMIT_E(cs, en, addr, len, prot, flags, fd, (long long)off, ret);
	return ret;
}
/* The C library's own declaration may carry attributes: copy them. */
WRAP_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off) __attribute__((alias("mmap"), copy(mmap)));

WRAP_API int munmap(void *addr, size_t len)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_QUIET_E(cs, 0, "libc:munmap",
			  "addr %p length %zu result %d", addr, len, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(munmap)(addr, len);
	ret = WRAP_REAL(munmap)(addr, len);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(cs, en, addr, len, ret);
	return ret;
}
