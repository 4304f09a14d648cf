/*
 * wrap_dl.c - dlopen(), dlmopen() and dlclose(): keep the module map up
 * to date (modules.c), and record what they did as vital events (tracectl
 * reads them to name addresses; wrap.h explains the wrappers):
 *
 *   proc:dlopen   path /usr/lib/libm.so.6 flags 0x2 base 0x7f3a5c000000
 *                 handle 0x5581e0c2a6d0
 *   proc:dlopen   path nosuch.so flags 0x2 base (nil) handle (nil) error
 *                 nosuch.so: cannot open shared object file: ...
 *   proc:dlclose  handle 0x5581e0c2a6d0 path /usr/lib/libm.so.6 result 0
 *
 * path is the object's path as the loader found it (the name given when
 * the call failed, the executable's for dlopen(NULL)); base its load base
 * (l_addr). The map is brought up to date whether the events are on or
 * not (a later session's proc:module events must be right): a call that
 * loaded or unloaded nothing costs one look at the loader's counters.
 *
 * dlerror(). The text of a failed dlopen() is read with dlerror(), which
 * clears it in the C library: the wrapper keeps a copy for the thread
 * ("pending"), and the dlerror() wrapper gives it to the program as the C
 * library would have, unless an error came after it (the C library has
 * one again: that one is given, as it would have been). The string given
 * stays valid until the thread's next dlerror() call.
 *
 * The caller. The C library searches a bare name ("libfoo.so") with the
 * DT_RPATH or DT_RUNPATH of the object that called dlopen(), which it
 * finds from the return address. When that object has either, dlopen()
 * jumps to the C library's (a tail call: the return address is still the
 * caller's), so the search is exactly the untraced one; that call records
 * no proc:dlopen, and its object reaches the module map at the next
 * dlopen() or dlclose(), or the next session's proc:module events.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrap.h"

#define TLS	__thread __attribute__((tls_model("initial-exec")))

static TLS char *pending;	/* an error taken from the C library */
static TLS char *given;		/* the copy dlerror() returned last */

WRAP_DEFINE_REAL(void *, dlopen, (const char *f, int fl), (f, fl))
WRAP_DEFINE_REAL(void *, dlmopen, (Lmid_t l, const char *f, int fl),
		 (l, f, fl))
WRAP_DEFINE_REAL(int, dlclose, (void *h), (h))
WRAP_DEFINE_REAL(char *, dlerror, (void), ())

/*
 * Look the C library's dlerror() up now. The lookup is a dlsym(), which
 * clears the error: it must not happen between a failed call and the
 * dlerror() that reads its error. Done by the library's initialisation
 * (a dlerror() before it, in an earlier constructor, may read nothing)
 * and before each dlopen().
 */
void tracer__wrap_dl_init(void)
{
	if (WRAP_REAL(dlerror) == wrap__resolve_dlerror)
		__atomic_store_n(&wrap__real_dlerror,
				 (__typeof__(wrap__real_dlerror))
				 tracer__wrap_next("dlerror"),
				 __ATOMIC_RELAXED);
}

/* The map, under the guard (its lock may be a wrapped call). */
static void sync_modules(void)
{
	WRAP_GUARD_ENTER();
	tracer__modules_sync();
	WRAP_GUARD_EXIT();
}

/* The loader's object of handle h, or NULL (h NULL). */
static const struct link_map *link_map_of(void *h)
{
	struct link_map *lm = NULL;

	/* RTLD_DI_LINKMAP cannot fail: it sets no error to clear. */
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0)
		return NULL;
	return lm;
}

/* The path of the object of h (the executable's has no name). */
static const char *path_of(const struct link_map *lm)
{
	if (!lm || !lm->l_name)
		return "(unknown)";
	return lm->l_name[0] ? lm->l_name : tracer__modules_exe();
}

/* Take the C library's error of a failed call (it clears it), keep a
 * copy for the program's dlerror(); " error TEXT" into buf. */
static const char *take_error(char *buf, size_t size)
{
	char *e = WRAP_REAL(dlerror)(), *copy;

	if (!e)
		return "";
	WRAP_GUARD_ENTER();
	copy = strdup(e);
	WRAP_GUARD_EXIT();
	if (copy) {
		free(pending);
		pending = copy;
	}
	snprintf(buf, size, " error %s", e);
	return buf;
}

/* dlopen() and dlmopen() (namespaced: lmid used). */
static void *dl_open(int namespaced, Lmid_t lmid, const char *file,
		     int flags)
{
	char eb[TRACER_STRING_MAX];
	const struct link_map *lm;
	const char *path = file ? file : tracer__modules_exe(), *es = "";
	void *h = NULL, *base = NULL;
	WRAP_SITE(cs, 1, "proc:dlopen",
		  "path %s flags %#x base %p handle %p%s",
		  path, flags, base, h, es);

	tracer__wrap_dl_init();
	h = namespaced ? WRAP_REAL(dlmopen)(lmid, file, flags) :
			 WRAP_REAL(dlopen)(file, flags);
	if (h)
		sync_modules();
	if (tracer_likely(!WRAP_ON(cs)) || !tracer__wrap_active())
		return h;
	if (h) {
		lm = link_map_of(h);
		path = path_of(lm);
		base = lm ? (void *)lm->l_addr : NULL;
	} else {
		es = take_error(eb, sizeof(eb));
	}
	WRAP_EMIT(cs, path, flags, base, h, es);
	return h;
}

/* Does the object holding code address pc have a DT_RPATH or DT_RUNPATH? */
static int __attribute__((noinline)) own_search_path(const void *pc)
{
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	Dl_info info;

	if (!dladdr1(pc, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !lm->l_ld)
		return 0;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return 1;
	return 0;
}

/* The tail call is what keeps the caller's return address: ask for it
 * also where the optimisation level would not (-O1 builds). */
WRAP_API __attribute__((optimize("optimize-sibling-calls")))
void *dlopen(const char *file, int flags)
{
	if (file && !strchr(file, '/') &&
	    own_search_path(__builtin_return_address(0)))
		return WRAP_REAL(dlopen)(file, flags);
	return dl_open(0, 0, file, flags);
}

WRAP_API void *dlmopen(Lmid_t lmid, const char *file, int flags)
{
	return dl_open(1, lmid, file, flags);
}

WRAP_API int dlclose(void *handle)
{
	char buf[TRACER_STRING_MAX];
	const char *path = buf;
	int ret = 0;
	WRAP_SITE(cs, 1, "proc:dlclose", "handle %p path %s result %d",
		  handle, path, ret);

	if (tracer_likely(!WRAP_ON(cs)) || !tracer__wrap_active()) {
		ret = WRAP_REAL(dlclose)(handle);
		sync_modules();
		return ret;
	}
	/* The name goes with the object: copy it first. */
	snprintf(buf, sizeof(buf), "%s", path_of(link_map_of(handle)));
	ret = WRAP_REAL(dlclose)(handle);
	sync_modules();
	WRAP_EMIT(cs, handle, path, ret);
	return ret;
}

WRAP_API char *dlerror(void)
{
	char *e;

	if (tracer_likely(!pending && !given))
		return WRAP_REAL(dlerror)();
	WRAP_GUARD_ENTER();
	free(given);
	given = NULL;
	e = WRAP_REAL(dlerror)();
	if (e || !pending) {
		/* A later error of the C library's: the one it would give. */
		free(pending);
		pending = NULL;
	} else {
		given = e = pending;
		pending = NULL;
	}
	WRAP_GUARD_EXIT();
	return e;
}
