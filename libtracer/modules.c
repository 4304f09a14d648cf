/*
 * modules.c - the module map: the objects loaded in the process (the
 * executable, its libraries, the vDSO, what dlopen() added), each with its
 * path and load base (l_addr: what is added to the addresses in its ELF
 * file), so that a trace knows where everything was and tracectl can name
 * the addresses it holds (proc:module, proc:dlopen).
 *
 * The table is a fixed array filled by dl_iterate_phdr(): at library
 * initialisation, and again after each dlopen() and dlclose() (wrap_dl.c)
 * that changed the set of objects. Writers take a mutex; the reader,
 * tracer__modules_record(), takes nothing: it may run in a signal handler
 * (record_start() in tracer.c). The model:
 *
 *   - entries are only appended: an entry's fields are written before the
 *     count that publishes it (release store; the reader loads it with
 *     acquire), and never change after, except `live`;
 *   - `live` (an atomic byte) says whether the object is loaded now: an
 *     object unloaded by dlclose() is marked dead, not removed; loaded
 *     again at the same base, its entry lives again;
 *   - paths are copied into a static arena, cut at TRACER_STRING_MAX - 1
 *     bytes (what an event can hold).
 *
 * Bound: MODULES_MAX entries and MODULES_TEXT bytes of paths. An object
 * found once either is full is not kept: it is not listed by proc:module
 * in later sessions (its proc:dlopen event, when recorded, still names it),
 * and the number of such objects is told by a "proc:module" event with the
 * path "<N objects not listed: table full>" and base 0.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MODULES_MAX	1024
#define MODULES_TEXT	(128 * 1024)

struct module {
	const char *path;		/* in text[], NUL-terminated */
	uintptr_t base;
	uint8_t live;			/* atomic: loaded now */
	uint8_t seen;			/* writer: found by the current scan */
};

static struct module table[MODULES_MAX] TRACER_COLD_BSS;
static uint32_t count;			/* atomic: entries published */
static char text[MODULES_TEXT] TRACER_COLD_BSS;
static size_t text_used;		/* writer */
static uint64_t not_kept;		/* atomic: objects the table missed */
static char exe_path[PATH_MAX] TRACER_COLD_BSS;		/* the executable (/proc/self/exe) */
static unsigned long long last_adds = ~0ULL, last_subs = ~0ULL;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Atomic: the table and exe_path are filled (tracer__modules_init()). */
static int filled;

/* Copy path (cut to fit an event) into the arena; NULL when full. */
static const char *keep_path(const char *path)
{
	size_t n = strnlen(path, TRACER_STRING_MAX - 1);
	char *p;

	if (n + 1 > MODULES_TEXT - text_used)
		return NULL;
	p = text + text_used;
	memcpy(p, path, n);
	p[n] = '\0';
	text_used += n + 1;
	return p;
}

/* The entry of (path, base), or NULL. */
static struct module *find(const char *path, uintptr_t base)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		if (table[i].base == base &&
		    !strncmp(table[i].path, path, TRACER_STRING_MAX - 1))
			return &table[i];
	return NULL;
}

/* A new live entry, published; counted in not_kept when there is no room. */
static void append(const char *path, uintptr_t base)
{
	struct module *m;
	const char *kept;

	if (count == MODULES_MAX || !(kept = keep_path(path))) {
		__atomic_fetch_add(&not_kept, 1, __ATOMIC_RELAXED);
		return;
	}
	m = &table[count];
	m->path = kept;
	m->base = base;
	m->seen = 1;
	m->live = 1;
	__atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
}

/* dl_iterate_phdr() callback: mark or add one object (lock held). */
static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name;
	struct module *m;

	(void)size;
	(void)arg;
	/* The executable is the object without a name (glibc: the first). */
	if (!path || !*path)
		path = exe_path[0] ? exe_path : "(executable)";
	m = find(path, (uintptr_t)info->dlpi_addr);
	if (!m) {
		append(path, (uintptr_t)info->dlpi_addr);
		return 0;
	}
	m->seen = 1;
	if (!__atomic_load_n(&m->live, __ATOMIC_RELAXED))
		__atomic_store_n(&m->live, 1, __ATOMIC_RELAXED);
	return 0;
}

/* dl_iterate_phdr() callback: the loader's counters of loads and unloads. */
static int counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_subs) +
		   sizeof(info->dlpi_subs))
		return 1;	/* too old a loader: always rescan */
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	c[2] = 1;
	return 1;		/* the first object tells */
}

/* Bring the table up to date with the loaded objects (lock held). */
static void scan(void)
{
	unsigned long long c[3] = { 0, 0, 0 };
	uint32_t i;

	dl_iterate_phdr(counters, c);
	if (c[2] && c[0] == last_adds && c[1] == last_subs)
		return;		/* nothing loaded or unloaded since */
	last_adds = c[0];
	last_subs = c[1];
	for (i = 0; i < count; i++)
		table[i].seen = 0;
	dl_iterate_phdr(scan_one, NULL);
	for (i = 0; i < count; i++)
		if (!table[i].seen)
			__atomic_store_n(&table[i].live, 0, __ATOMIC_RELAXED);
}

/* Not filled yet: tracer__modules_init() will find everything. */
void tracer__modules_sync(void)
{
	if (!__atomic_load_n(&filled, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	scan();
	pthread_mutex_unlock(&lock);
}

/* Once, before the process first records (its registration): a process
 * that never meets a session never pays for the table. */
void tracer__modules_init(void)
{
	ssize_t n;

	if (__atomic_load_n(&filled, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	if (!filled) {
		n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
		exe_path[n > 0 ? n : 0] = '\0';
		scan();
		/* The table and the path before the flag. */
		__atomic_store_n(&filled, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
}

void tracer__modules_fork_child(void)
{
	/* Another thread of the parent may have held it: ours is free. */
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	lock = fresh;
}

const char *tracer__modules_exe(void)
{
	return exe_path[0] ? exe_path : "(executable)";
}

/* One proc:module event (its one call site). */
static void record_module(const char *path, const void *base)
{
	tracer_record_vital("proc:module", "path %s base %p", path, base);
}

/* "<N objects not listed: table full>" into buf (no snprintf: this may run
 * in a signal handler). */
static const char *missed_note(uint64_t missed, char *buf)
{
	static const char tail[] = " objects not listed: table full>";
	char num[24], *p = num + sizeof(num);
	size_t len;

	*--p = '\0';
	do
		*--p = (char)('0' + missed % 10);
	while ((missed /= 10));
	len = (size_t)(num + sizeof(num) - 1 - p);
	buf[0] = '<';
	memcpy(buf + 1, p, len);
	memcpy(buf + 1 + len, tail, sizeof(tail));
	return buf;
}

void tracer__modules_record(void)
{
	uint32_t n = __atomic_load_n(&count, __ATOMIC_ACQUIRE), i;
	uint64_t missed = __atomic_load_n(&not_kept, __ATOMIC_RELAXED);
	char note[64];

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&table[i].live, __ATOMIC_RELAXED))
			record_module(table[i].path,
				      (const void *)table[i].base);
	if (missed)
		record_module(missed_note(missed, note), NULL);
}
