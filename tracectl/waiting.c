/*
 * waiting.c - the processes that wait for a session: preloaded with
 * libtracer, they found tracerd with no session recording and did not
 * connect (libtracer/client.c, "DETACHED"): each maps tracerd's state
 * page, SOCKET.state, and connects when a session starts there. tracerd
 * does not know them; /proc/PID/maps does (for the processes we may
 * read: our own, or all of them as root).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "control.h"
#include "elfsites.h"
#include "pattern.h"

/* The state page's file, as maps names it: device and inode. */
struct page_id {
	unsigned major, minor;
	unsigned long ino;
};

/* Fills id from the state page of the tracerd at socket: 0 or -errno. */
static int page_id(const char *socket, struct page_id *id)
{
	char path[TRACER_PATH_MAX + 8];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s.state", socket) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return -errno;
	id->major = major(st.st_dev);
	id->minor = minor(st.st_dev);
	id->ino = (unsigned long)st.st_ino;
	return 0;
}

/* Does process pid map the file id read-only (as libtracer does)? false
 * when we may not look. */
static bool maps_page(uint32_t pid, const struct page_id *id)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char perms[8];
		unsigned ma, mi;
		unsigned long ino;

		/* Read-only: tracerd's own mapping is writable. */
		found = sscanf(line, "%*s %7s %*s %x:%x %lu", perms, &ma, &mi,
			       &ino) == 4 && perms[1] == '-' &&
			ino == id->ino && ma == id->major && mi == id->minor;
	}
	free(line);
	fclose(f);
	return found;
}

bool tracer__ctl_maps_state(const char *socket, uint32_t pid)
{
	struct page_id id;

	return page_id(socket, &id) == 0 && maps_page(pid, &id);
}

/* The name of pid (its main thread's), "-" when gone. */
static void comm_of(uint32_t pid, char name[17])
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	strcpy(name, "-");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, 17, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

static bool listed(uint32_t pid, const uint32_t *skip, size_t nskip)
{
	size_t i;

	for (i = 0; i < nskip; i++)
		if (skip[i] == pid)
			return true;
	return (pid_t)pid == getpid();
}

/* The pid a /proc entry names, 0 for the other entries. */
static uint32_t proc_pid(const char *name)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	v = strtoul(name, &end, 10);
	return *end || v > INT32_MAX ? 0 : (uint32_t)v;
}

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct tracer__waiting *)a)->pid;
	uint32_t y = ((const struct tracer__waiting *)b)->pid;

	return x < y ? -1 : x > y;
}

/* Append pid to *v (n of cap): 0 or -ENOMEM. */
static int add(struct tracer__waiting **v, size_t *n, size_t *cap,
	       uint32_t pid)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct tracer__waiting *w = realloc(*v, c * sizeof(**v));

		if (!w)
			return -ENOMEM;
		*v = w;
		*cap = c;
	}
	(*v)[*n].pid = pid;
	comm_of(pid, (*v)[*n].name);
	(*n)++;
	return 0;
}

ssize_t tracer__ctl_waiting(const char *socket, const uint32_t *skip,
			    size_t nskip, struct tracer__waiting **out)
{
	struct tracer__waiting *v = NULL;
	size_t n = 0, cap = 0;
	struct page_id id;
	struct dirent *e;
	DIR *d;
	int ret = page_id(socket, &id);

	*out = NULL;
	if (ret)
		return ret == -ENOENT ? 0 : ret;	/* no page: nobody */
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		uint32_t pid = proc_pid(e->d_name);

		if (pid && !listed(pid, skip, nskip) && maps_page(pid, &id))
			ret = add(&v, &n, &cap, pid);
	}
	closedir(d);
	if (ret) {
		free(v);
		return ret;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_pid);
	*out = v;
	return (ssize_t)n;
}

/* ---- their events ------------------------------------------------------ */

/* Append one call site of pid, enabled under patterns. 0 or -ENOMEM. */
static int add_event(struct tracer__waiting_events *w, uint32_t pid,
		     const struct tracer_elf_site *s,
		     const struct tracer__patterns *patterns)
{
	Tracer__EventInfo *e;

	if (w->n == w->cap) {
		size_t c = w->cap ? w->cap * 2 : 256;
		Tracer__EventInfo *v = realloc(w->info, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->info = v;
		w->cap = c;
	}
	e = &w->info[w->n++];
	*e = (Tracer__EventInfo)TRACER__EVENT_INFO__INIT;
	e->name = (char *)s->name;
	e->format = (char *)s->format;
	e->file = (char *)s->file;
	e->line = s->line;
	e->types = (char *)s->types;
	e->pid = pid;
	e->vital = s->vital != 0;
	e->enabled = tracer__patterns_match(patterns, s->name);
	return 0;
}

/* Keep the sites read from one file (their strings stay ours). */
static int keep_file(struct tracer__waiting_events *w,
		     struct tracer_elf_sites *s)
{
	struct tracer_elf_sites *v;

	v = realloc(w->files, (w->nfiles + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->files = v;
	w->files[w->nfiles++] = *s;
	return 0;
}

/* The call sites of the file at path, for pid. A file that is not an
 * ELF file, or that we cannot read, adds none. 0 or -ENOMEM. */
static int add_file(struct tracer__waiting_events *w, uint32_t pid,
		    const char *path, const struct tracer__patterns *patterns)
{
	struct tracer_elf_sites s;
	size_t i;
	int ret = tracer__elf_sites(path, &s);

	if (ret)
		return ret == -ENOMEM ? ret : 0;
	if (!s.n) {
		tracer__elf_sites_free(&s);
		return 0;
	}
	ret = keep_file(w, &s);
	if (ret) {
		tracer__elf_sites_free(&s);
		return ret;
	}
	for (i = 0; i < s.n && !ret; i++)
		ret = add_event(w, pid, &s.v[i], patterns);
	return ret;
}

/* The file a maps line names, or NULL (anonymous, deleted, pseudo). */
static const char *mapped_file(char *line)
{
	char *path = strchr(line, '/');
	size_t len;

	if (!path)
		return NULL;
	len = strcspn(path, "\n");
	path[len] = '\0';
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		return NULL;
	return path;
}

/* Has pid's maps named path before the line we are at? Mappings of one
 * file are mostly adjacent: only the last one is compared. */
static bool same_file(char *last, size_t size, const char *path)
{
	if (!strcmp(last, path))
		return true;
	snprintf(last, size, "%s", path);
	return false;
}

int tracer__ctl_waiting_events(uint32_t pid, struct tracer__waiting_events *w)
{
	char path[64], last[TRACER_PATH_MAX] = "", *line = NULL, err[128];
	struct tracer__patterns patterns;
	size_t cap = 0;
	FILE *f;
	int ret;

	ret = tracer__patterns_parse(TRACER_DEFAULT_EVENTS, &patterns, err,
				     sizeof(err));
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	ret = f ? 0 : -errno;
	while (f && !ret && getline(&line, &cap, f) > 0) {
		const char *file = mapped_file(line);

		if (file && !same_file(last, sizeof(last), file))
			ret = add_file(w, pid, file, &patterns);
	}
	free(line);
	if (f)
		fclose(f);
	tracer__patterns_free(&patterns);
	return ret;
}

void tracer__ctl_waiting_events_free(struct tracer__waiting_events *w)
{
	size_t i;

	for (i = 0; i < w->nfiles; i++)
		tracer__elf_sites_free(&w->files[i]);
	free(w->files);
	free(w->info);
	*w = (struct tracer__waiting_events){ NULL, 0, 0, NULL, 0 };
}
