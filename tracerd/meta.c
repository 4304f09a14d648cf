/*
 * meta.c - a process's directory in a session and its description files
 *
 * Every process of a session has NAME-PID (NAME-PID.N when the session has
 * one of that name: the image before an exec) under the session directory,
 * with tracer/process.meta (who the process is, its call sites, its
 * threads' names) and the CTF metadata (ctf_meta.h: the trace, its clock,
 * an event class per call site). Both are written when the directory is
 * made and stay open while the session runs: call sites that come later
 * are appended to both at once, so that a trace left by a tracerd that was
 * killed still describes every event it holds. Their formats are in
 * doc/session-files.md.
 *
 * The text of a call site comes from sitetext.c. The channel files are
 * sink.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracerd.h"
#include "relay.h"
#include "ctf_meta.h"
#include "paths.h"

static FILE *open_meta(struct tracerd *d, const char *dir, const char *mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/" TRACER_META_DIR, dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		tracerd_write_failed(d, path, -errno);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/" TRACER_META_FILE, dir);
	f = fopen(path, mode);
	if (!f)
		tracerd_write_failed(d, path, -errno);
	return f;
}

/* process.meta lines of p's call sites from index `from` on. */
static void put_callsites(FILE *f, const struct tracerd_process *p,
			  size_t from)
{
	size_t i;

	for (i = from; i < p->ncs; i++)
		tracerd_site_text_write(&p->cs[i], f, NULL);
}

/* process.meta's head: who the process is, its call sites so far. */
static int put_meta_head(FILE *f, const struct tracerd_process *p)
{
	size_t i;

	fprintf(f, TRACER__SESSION_LINE "\npid %d\nppid %d\nname ",
		(int)p->pid, (int)p->ppid);
	tracerd_put_field(f, p->name);
	fprintf(f, "\nstart_time %" PRIu64 "\nclock_offset %" PRIu64 "\nargv",
		p->start_time_ns, p->clock_offset_ns);
	for (i = 0; i < p->argc; i++) {
		fputc(' ', f);
		tracerd_put_field(f, p->argv[i]);
	}
	fputc('\n', f);
	put_callsites(f, p, 0);
	return fflush(f) ? -errno : 0;
}

FILE *tracerd_process_meta(struct tracerd_process *p, const char *dir)
{
	FILE *f = open_meta(p->d, dir, "w");
	int ret;

	if (!f)
		return NULL;
	ret = put_meta_head(f, p);
	if (ret) {
		tracerd_write_failed(p->d, dir, ret);
		fclose(f);
		return NULL;
	}
	return f;
}

/* ------------------------------------------------------------------ */
/* CTF metadata                                                        */

/* A random UUID (a new trace's) into out, TRACER_CTF_UUID_LEN + 1 bytes. */
static void new_uuid(char *out)
{
	static uint64_t count;
	uint8_t b[16];
	struct timespec ts;
	uint64_t x[2];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		/* No entropy yet (early boot): unique is enough. */
		clock_gettime(CLOCK_REALTIME, &ts);
		x[0] = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
		x[1] = ((uint64_t)getpid() << 32) ^ ++count;
		memcpy(b, x, sizeof(b));
	}
	tracer__ctf_format_uuid(b, out);
}

/* CLOCK_MONOTONIC's identity: the boot id, into out (TRACER_CTF_UUID_LEN
 * + 2 bytes). Returns out, or NULL if it cannot be read. */
static const char *boot_id(char *out)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	bool ok = f && fgets(out, TRACER_CTF_UUID_LEN + 2, f);

	if (f)
		fclose(f);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok && tracer__ctf_uuid_valid(out) ? out : NULL;
}

/* Trace, env and clock of p's metadata. Returns 0 or a negative errno. */
static int put_preamble(FILE *f, const struct tracerd_process *p)
{
	char uuid[TRACER_CTF_UUID_LEN + 1], boot[TRACER_CTF_UUID_LEN + 2];
	char host[256];
	struct tracer_ctf_trace t = {
		.uuid = uuid, .clock_uuid = boot_id(boot), .hostname = host,
		.tracer_version = PACKAGE_VERSION, .procname = p->name,
		.vpid = p->pid, .ppid = p->ppid,
		.start_time_ns = p->start_time_ns,
		.clock_offset_ns = p->clock_offset_ns,
		.tsc_hz = p->d->clock.c.kind == TRACER_CLOCK_TSC &&
			  !p->clock_monotonic ? p->d->clock.c.tsc_hz : 0,
	};

	new_uuid(uuid);
	if (gethostname(host, sizeof(host)) < 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	return tracer__ctf_write_preamble(f, &t);
}

/* The event classes of p's call sites from index `from` on. */
static int put_events(FILE *f, const struct tracerd_process *p, size_t from)
{
	size_t i;
	int ret = 0;

	for (i = from; i < p->ncs && !ret; i++)
		ret = tracerd_site_text_write(&p->cs[i], NULL, f);
	return ret;
}

/* The CTF metadata's head: preamble, call sites so far. */
static int put_ctf_head(FILE *f, const struct tracerd_process *p)
{
	int ret = put_preamble(f, p);

	if (!ret)
		ret = put_events(f, p, 0);
	if (!ret && fflush(f))
		ret = -errno;
	return ret;
}

/* Write dir/metadata for p: preamble, call sites; NULL on error. */
FILE *tracerd_meta_open_ctf(const struct tracerd_process *p, const char *dir)
{
	char path[4096];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "we");
	if (!f) {
		tracerd_write_failed(p->d, path, -errno);
		return NULL;
	}
	ret = put_ctf_head(f, p);
	if (!ret)
		return f;
	tracerd_write_failed(p->d, path, ret);
	fclose(f);
	return NULL;
}

/*
 * process.meta and the metadata stay open while the session runs; new call
 * sites are flushed to both at once, so that a trace left by a tracerd
 * that was killed still describes every event it holds.
 */
void tracerd_session_append_callsites(struct tracerd_process *p, size_t from)
{
	int ret;

	if (p->files.meta) {
		put_callsites(p->files.meta, p, from);
		fflush(p->files.meta);
	}
	if (p->files.ctf) {
		ret = put_events(p->files.ctf, p, from);
		if (ret || fflush(p->files.ctf))
			tracerd_write_failed(p->d, p->files.dir,
					     ret ? ret : -errno);
	}
}

void tracerd_note_thread(FILE *meta, uint32_t tid, const char *name,
			 uint64_t since)
{
	if (meta) {
		fprintf(meta, "thread %" PRIu32 " ", tid);
		tracerd_put_field(meta, name);
		if (since)
			fprintf(meta, " %" PRIu64, since);
		fputc('\n', meta);
	}
}

/* NAME-PID, with the name made safe for a file name. */
static void process_dir_name(const struct tracerd_process *p, char *buf,
			     size_t size)
{
	size_t i, n;

	n = (size_t)snprintf(buf, size, "%s", p->name[0] ? p->name : "process");
	for (i = 0; i < n && i < size; i++)
		if (buf[i] == '/' || (unsigned char)buf[i] <= 0x20 ||
		    (i == 0 && buf[i] == '.'))
			buf[i] = '_';
	snprintf(buf + strlen(buf), size - strlen(buf), "-%d", (int)p->pid);
}

#define MAX_DIR_SUFFIX	10000

/*
 * mkdir dir/NAME-PID, or dir/NAME-PID.N with the first N = 1, 2, ... free
 * when another process of the session had that name and pid: the image
 * before an exec (same pid, often the same name), or a reused pid.
 * Returns its path (malloc'ed) or NULL.
 */
char *tracerd_meta_make_dir(const struct tracerd_process *p, const char *dir)
{
	char name[128], path[4096];
	int n;

	process_dir_name(p, name, sizeof(name));
	for (n = 0; n < MAX_DIR_SUFFIX; n++) {
		if (n == 0)
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		else
			snprintf(path, sizeof(path), "%s/%s.%d", dir, name, n);
		if (mkdir(path, 0755) == 0)
			return strdup(path);
		if (errno != EEXIST)
			break;
	}
	if (errno == EEXIST)
		tracerd_log("cannot create '%s': %s", path, strerror(errno));
	else
		tracerd_write_failed(p->d, path, -errno);
	return NULL;
}

/* Undo a process directory that could not be written (tried again). */
static void remove_dir(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/metadata", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, TRACER_META_FILE);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, TRACER_META_DIR);
	rmdir(path);
	rmdir(dir);
}

/* Make p's directory and description files. Returns 0 or -EIO. */
static int add_now(struct tracerd_process *p)
{
	p->files.dir = tracerd_meta_make_dir(p, p->d->session_dir);
	if (!p->files.dir)
		return -EIO;
	p->files.meta = tracerd_process_meta(p, p->files.dir);
	p->files.ctf = p->files.meta ?
		tracerd_meta_open_ctf(p, p->files.dir) : NULL;
	if (!p->files.ctf) {
		if (p->files.meta)
			fclose(p->files.meta);
		p->files.meta = NULL;
		remove_dir(p->files.dir);	/* the next try makes it again */
		free(p->files.dir);
		p->files.dir = NULL;
		return -EIO;
	}
	tracerd_relay_add_trace(p->d, p->files.dir);
	return 0;
}

/* p joins the session: its directory and description files. */
int tracerd_session_add_process(struct tracerd_process *p)
{
	if (p->files.dir)
		return 0;
	return add_now(p);
}
