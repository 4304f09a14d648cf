/*
 * test_next - libtracer's lookup of the next definitions
 * (libtracer/next.c, included here) answers as dlsym(RTLD_NEXT) does, for
 * every function the C library exports, with libtracer.so (which defines
 * many of the same names: its wrappers) between this program and the C
 * library, as it is between a traced program and the C library.
 *
 * What a wrong model would break: a wrapper forwarding to the wrong
 * function (an old version, an IFUNC resolver instead of what it
 * resolves to, a definition in an object outside the scope) corrupts the
 * traced program. So every answer is checked, and the test also checks
 * that most are given without dlsym() (else the speed is not there).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "wrap.h"
#include "tracer.h"

#include "next.c"

/* The C library's link map (the object that defines getpid). */
static struct link_map *libc_map(void)
{
	struct link_map *l = NULL;
	Dl_info info;

	if (!dladdr1((void *)getpid, &info, (void **)&l, RTLD_DL_LINKMAP))
		return NULL;
	return l;
}

struct tally {
	unsigned names, fast, wrong;
	char first_wrong[128];
};

/* Every defined function name of o, compared. */
static void compare_all(const struct next_object *o, struct tally *t)
{
	uint32_t b, i, ch;

	for (b = 0; b < o->nbuckets; b++) {
		i = o->buckets[b];
		if (i == 0 || i < o->symoffset)
			continue;
		do {
			const ElfW(Sym) *s = &o->symtab[i];
			unsigned type = ELF64_ST_TYPE(s->st_info);
			const char *name = o->strtab + s->st_name;
			void *fast, *want;

			ch = o->chain[i - o->symoffset];
			i++;
			if (s->st_shndx == SHN_UNDEF ||
			    (type != STT_FUNC && type != STT_GNU_IFUNC))
				continue;
			t->names++;
			fast = tracer__next_fast(name);
			want = dlsym(RTLD_NEXT, name);
			if (!fast)
				continue;
			t->fast++;
			if (fast != want && t->wrong++ == 0)
				snprintf(t->first_wrong, sizeof(t->first_wrong),
					 "%s: %p, dlsym %p", name, fast, want);
		} while (!(ch & 1));
	}
}

/* The object that defines the function at p, by file name. */
static const char *object_of(void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "";
}

int main(void)
{
	struct next_object libc;
	struct link_map *lc = libc_map();
	struct tally t = { 0, 0, 0, "" };
	void *p, *h;

	plan(11);
	/* The first lookups go to dlsym() and grow the run: exit (a
	 * wrapper of libtracer.so), then getppid (the C library's). */
	p = tracer__next("exit");
	ok(p == dlsym(RTLD_NEXT, "exit"), "the first lookup is dlsym()'s");
	p = tracer__next("getppid");
	ok(p == dlsym(RTLD_NEXT, "getppid") &&
	   __atomic_load_n(&nrun, __ATOMIC_ACQUIRE) >= 2,
	   "the run reaches the C library past libtracer.so (%d objects)",
	   nrun);

	ok(lc && read_object(lc, &libc), "the C library has a GNU hash table");
	compare_all(&libc, &t);
	ok(t.wrong == 0, "every fast answer is dlsym()'s (%u wrong%s%s)",
	   t.wrong, t.wrong ? ": " : "", t.first_wrong);
	ok(t.fast * 10 >= t.names * 8,
	   "most of the C library's %u functions are answered without "
	   "dlsym(): %u", t.names, t.fast);

	/* libtracer.so, between, defines nanosleep: its wrapper is next. */
	p = tracer__next_fast("nanosleep");
	ok(p && p == dlsym(RTLD_NEXT, "nanosleep") &&
	   (strstr(object_of(p), "libtracer") ||
	    strstr(object_of(p), "asan")),
	   "a name defined in between is found there (%s)", object_of(p));

	/* Two versions: the default one (GLIBC_2.3.2), as dlsym() gives. */
	p = tracer__next("pthread_cond_timedwait");
	ok(p == dlsym(RTLD_NEXT, "pthread_cond_timedwait") &&
	   p != dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.2.5"),
	   "of two versions, the default one");

	/* An IFUNC (the C library's memcpy) is dlsym()'s to resolve; a
	 * sanitizer's runtime in between defines a plain one. */
	p = dlsym(RTLD_NEXT, "memcpy");
	ok(tracer__next("memcpy") == p &&
	   (strstr(object_of(p), "libc.so") ? tracer__next_fast("memcpy") == NULL
					     : tracer__next_fast("memcpy") == p),
	   "an IFUNC is left to dlsym() (memcpy from %s)", object_of(p));

	ok(tracer__next("tracer_test_no_such_function") == NULL,
	   "a name nobody defines: NULL");

	/* A name only the dynamic linker defines: the run grows to it, and
	 * answers it itself from then on. */
	p = tracer__next("__tls_get_addr");
	ok(p && p == dlsym(RTLD_NEXT, "__tls_get_addr") &&
	   tracer__next_fast("__tls_get_addr") == p,
	   "a name of the dynamic linker: the run reaches it (%s)",
	   object_of(p));

	/* A library loaded later, in no scope of ours (RTLD_LOCAL): its
	 * names are not answered (libcrypt: Debian's login needs it, and
	 * nothing here links it). */
	h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);
	p = dlsym(RTLD_NEXT, "crypt_checksalt");
	ok(h && !p && tracer__next("crypt_checksalt") == NULL &&
	   tracer__next_fast("crypt_checksalt") == NULL,
	   "a library loaded later with RTLD_LOCAL: not looked in");
	return done();
}
