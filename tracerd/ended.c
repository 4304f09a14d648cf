/*
 * ended.c - what a flight-recorder snapshot holds of the processes that
 * ended since the session started or since the last snapshot.
 *
 * In flight mode tracerd reads a process's rings only for a snapshot, the
 * stop, or the process's end: then it writes its last events (and its end
 * event: exit status, signal) into SESSION/NAME-PID, as in discard mode.
 * Users take a snapshot because a program just ended or crashed, so a
 * snapshot holds those directories too: their files are linked (copied
 * when they cannot be) into the snapshot directory, once: the next
 * snapshot holds only what ended after this one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracerd.h"

void tracerd_ended_add(struct tracerd *d, const char *dir)
{
	char **v;

	if (!dir)
		return;
	v = realloc(d->ended, (d->nended + 1) * sizeof(*v));
	if (!v)
		return;		/* the session directory still holds it */
	d->ended = v;
	d->ended[d->nended] = strdup(dir);
	if (d->ended[d->nended])
		d->nended++;
}

void tracerd_ended_clear(struct tracerd *d)
{
	size_t i;

	for (i = 0; i < d->nended; i++)
		free(d->ended[i]);
	free(d->ended);
	d->ended = NULL;
	d->nended = 0;
}

/* Copy the regular file src to dst (new). Returns 0 or a negative errno. */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out, ret = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while (!ret && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0)
			ret = errno == EINTR ? 0 : -errno;
		else if (write(out, buf, (size_t)n) != n)
			ret = -EIO;
	}
	if (close(out) && !ret)
		ret = -errno;
	close(in);
	return ret;
}

static int place_tree(const char *src, const char *dst, int depth);

/* One entry of a process directory, src/name to dst/name. */
static int place_entry(const char *src, const char *dst, const char *name,
		       int depth)
{
	char from[4200], to[4200];
	struct stat st;

	if ((size_t)snprintf(from, sizeof(from), "%s/%s", src, name) >=
	    sizeof(from) ||
	    (size_t)snprintf(to, sizeof(to), "%s/%s", dst, name) >= sizeof(to))
		return -ENAMETOOLONG;
	if (lstat(from, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return place_tree(from, to, depth + 1);
	if (!S_ISREG(st.st_mode))
		return 0;
	if (link(from, to) == 0)
		return 0;
	return copy_file(from, to);
}

/* The files of src (and of its subdirectories, 2 levels) into dst (new). */
static int place_tree(const char *src, const char *dst, int depth)
{
	struct dirent *e;
	DIR *dir;
	int ret = 0;

	if (depth > 2)
		return 0;
	if (mkdir(dst, 0755) < 0)
		return -errno;
	dir = opendir(src);
	if (!dir)
		return -errno;
	while (!ret && (e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ret = place_entry(src, dst, e->d_name, depth);
	closedir(dir);
	return ret;
}

unsigned tracerd_ended_snapshot(struct tracerd *d, const char *dir,
				unsigned *failed)
{
	char to[4200];
	const char *base;
	size_t i;
	int ret;

	for (i = 0; i < d->nended; i++) {
		base = strrchr(d->ended[i], '/');
		base = base ? base + 1 : d->ended[i];
		snprintf(to, sizeof(to), "%s/%s", dir, base);
		ret = place_tree(d->ended[i], to, 0);
		if (ret) {
			tracerd_log("snapshot: cannot place '%s' in '%s': %s",
				    d->ended[i], dir, strerror(-ret));
			(*failed)++;
		}
	}
	i = d->nended;
	tracerd_ended_clear(d);
	return (unsigned)i;
}
