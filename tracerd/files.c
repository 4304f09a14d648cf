/*
 * files.c - a process's session files, made away from the loop
 *
 * Creating a file can take milliseconds: ext4 placing the inodes of a new
 * directory among recently deleted ones (0.7 ms a file measured here), a
 * network file system. Made on the loop, every registration and every
 * drain waited behind them: a shell loop of short programs paid 3 to 7 ms
 * per program in a session. So the files a process joining a session
 * always gets are made on libuv's thread pool, and the loop goes on:
 *
 *   loop: tracerd_files_start(p) ---> pool thread: work()
 *         p->files.job set               mkdir NAME-PID[.N], NAME-PID/tracer
 *         p not drained; its end         create metadata, tracer/process.meta,
 *         and flushes wait (busy)        default-PID, vital-PID, vital-PID.1
 *   loop: done() <-----------------------'
 *         p takes the descriptors (tracerd_session_files_ready()), or,
 *         if p or its session went away meanwhile, the files are undone.
 *
 * The main thread's channel files and the file of the process's end are
 * made ahead with the rest (p->files.ahead_fd1[]): a program's first
 * thread has a stream in each channel, and every process ends. Those not
 * used by the end are removed (tracerd_files_drop_ahead()).
 *
 * One job at a time, in the order the processes joined: the image before
 * an exec takes NAME-PID, the one after NAME-PID.1, as when they were made
 * on the loop (the jobs wait in `queue` for the one running).
 *
 * Threads: work() reads and writes only its job, which holds copies of
 * what it needs; it logs nothing (the loop does, in done()). The job's p
 * is cleared by the loop when p stops waiting for it (freed, or its session
 * files closed), which done() then sees on the loop: no lock is needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/paths.h"
#include "tracerd.h"

#define MAX_DIR_SUFFIX	10000

struct tracerd_files_job {
	uv_work_t req;
	struct cds_list_head node;	/* in queue, until it runs */
	uv_loop_t *loop;
	struct tracerd_process *p;	/* NULL: nobody waits for it */
	uint64_t session_id;
	char *parent;			/* the session directory */
	char name[128];			/* NAME-PID */
	pid_t pid;
	/* Results (work()). */
	char *dir;			/* the process directory made */
	int fd[TRACERD_AHEAD + 2];	/* ahead files, metadata, meta */
	int err;			/* 0 or a negative errno */
	char failed[4200];		/* the path err is about */
};

enum { META_FD = TRACERD_AHEAD, CTF_FD = TRACERD_AHEAD + 1 };

static CDS_LIST_HEAD(queue);		/* jobs waiting, oldest first */
static bool running;			/* one job is on the thread pool */

static void work(uv_work_t *req);
static void done(uv_work_t *req, int status);
static void free_job(struct tracerd_files_job *j);

/* The path of ahead file i (TRACERD_AHEAD_*) in dir. */
static void ahead_path(char *buf, size_t size, const char *dir, int i,
		       pid_t pid)
{
	snprintf(buf, size, "%s/%s-%d%s", dir,
		 tracerd_channel_name(i == TRACERD_AHEAD_DEFAULT ?
				      TRACER_CHANNEL_DEFAULT :
				      TRACER_CHANNEL_VITAL),
		 (int)pid, i == TRACERD_AHEAD_END ? ".1" : "");
}

static int make_dir(struct tracerd_files_job *j)
{
	char path[4096];
	int n;

	for (n = 0; n < MAX_DIR_SUFFIX; n++) {
		if (n == 0)
			snprintf(path, sizeof(path), "%s/%s", j->parent,
				 j->name);
		else
			snprintf(path, sizeof(path), "%s/%s.%d", j->parent,
				 j->name, n);
		if (mkdir(path, 0755) == 0) {
			j->dir = strdup(path);
			return j->dir ? 0 : -ENOMEM;
		}
		if (errno != EEXIST)
			break;
	}
	snprintf(j->failed, sizeof(j->failed), "%s", path);
	return -errno;
}

static int create(struct tracerd_files_job *j, const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);

	if (fd < 0)
		snprintf(j->failed, sizeof(j->failed), "%s", path);
	return fd < 0 ? -errno : fd;
}

/* Pool thread: make everything, or stop at the first failure. */
static void work(uv_work_t *req)
{
	struct tracerd_files_job *j = req->data;
	char path[4200];
	int i, ret = make_dir(j);

	if (!ret) {
		snprintf(path, sizeof(path), "%s/" TRACER_META_DIR, j->dir);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			snprintf(j->failed, sizeof(j->failed), "%s", path);
		}
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%s/" TRACER_META_FILE, j->dir);
		ret = j->fd[META_FD] = create(j, path, O_TRUNC);
	}
	if (ret >= 0) {
		snprintf(path, sizeof(path), "%s/metadata", j->dir);
		ret = j->fd[CTF_FD] = create(j, path, O_TRUNC);
	}
	for (i = 0; i < TRACERD_AHEAD && ret >= 0; i++) {
		ahead_path(path, sizeof(path), j->dir, i, j->pid);
		ret = j->fd[i] = create(j, path, O_EXCL);
	}
	j->err = ret < 0 ? ret : 0;
}

/* Remove what work() made (the loop; its results are nobody's). */
static void undo(struct tracerd_files_job *j)
{
	char path[4200];
	int i;

	for (i = 0; i < TRACERD_AHEAD + 2; i++)
		if (j->fd[i] >= 0)
			close(j->fd[i]);
	if (!j->dir)
		return;
	for (i = 0; i < TRACERD_AHEAD; i++) {
		ahead_path(path, sizeof(path), j->dir, i, j->pid);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/metadata", j->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" TRACER_META_FILE, j->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" TRACER_META_DIR, j->dir);
	rmdir(path);
	rmdir(j->dir);
}

static void free_job(struct tracerd_files_job *j)
{
	free(j->parent);
	free(j->dir);
	free(j);
}

/* Start the oldest job still wanted, if none runs. */
static void next_job(void)
{
	struct tracerd_files_job *j;

	while (!running && !cds_list_empty(&queue)) {
		j = cds_list_first_entry(&queue, struct tracerd_files_job,
					 node);
		cds_list_del(&j->node);
		if (!j->p) {		/* forgotten before it ran */
			free_job(j);
			continue;
		}
		running = uv_queue_work(j->loop, &j->req, work, done) == 0;
		if (!running) {
			j->err = -EAGAIN;
			done(&j->req, 0);
		}
	}
}

/* The loop: hand the files to the process that waits for them. */
static void done(uv_work_t *req, int status)
{
	struct tracerd_files_job *j = req->data;
	struct tracerd_process *p = j->p;
	int i;

	running = false;
	next_job();

	if (p)
		p->files.job = NULL;
	if (!p || status < 0 || j->session_id != p->d->session_id ||
	    !p->in_session) {
		undo(j);
		free_job(j);
		if (p)
			tracerd_files_done(p, -ECANCELED);
		return;
	}
	if (j->err) {
		tracerd_write_failed(p->d, j->failed, j->err);
		undo(j);
		free_job(j);
		tracerd_files_done(p, -EIO);
		return;
	}
	for (i = 0; i < TRACERD_AHEAD; i++)
		p->files.ahead_fd1[i] = j->fd[i] + 1;
	i = tracerd_session_files_ready(p, j->dir, j->fd[META_FD],
					j->fd[CTF_FD]);
	j->dir = NULL;		/* p's now, or freed */
	free_job(j);
	tracerd_files_done(p, i);
}

int tracerd_files_start(struct tracerd_process *p, const char *name)
{
	struct tracerd_files_job *j = calloc(1, sizeof(*j));
	int i;

	if (!j)
		return -ENOMEM;
	for (i = 0; i < TRACERD_AHEAD + 2; i++)
		j->fd[i] = -1;
	j->req.data = j;
	j->p = p;
	j->pid = p->pid;
	j->session_id = p->d->session_id;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->loop = p->d->loop;
	j->parent = strdup(p->d->session_dir);
	if (!j->parent) {
		free_job(j);
		return -ENOMEM;
	}
	p->files.job = j;
	cds_list_add_tail(&j->node, &queue);
	next_job();
	return 0;
}

void tracerd_files_drop_queue(void)
{
	struct tracerd_files_job *j, *tmp;

	cds_list_for_each_entry_safe(j, tmp, &queue, node) {
		cds_list_del(&j->node);
		if (j->p)
			j->p->files.job = NULL;
		free_job(j);
	}
}

void tracerd_files_forget(struct tracerd_process *p)
{
	if (p->files.job)
		p->files.job->p = NULL;
	p->files.job = NULL;
}

int tracerd_files_take_ahead(struct tracerd_process *p, const char *dir,
			     int c, uint32_t tid, bool end)
{
	int i = end ? TRACERD_AHEAD_END : c == TRACER_CHANNEL_DEFAULT ?
		TRACERD_AHEAD_DEFAULT : TRACERD_AHEAD_VITAL;
	int fd = p->files.ahead_fd1[i] - 1;

	if (fd < 0 || dir != p->files.dir || tid != (uint32_t)p->pid)
		return -1;
	p->files.ahead_fd1[i] = 0;
	return fd;
}

void tracerd_files_drop_ahead(struct tracerd_process *p)
{
	char path[4200];
	int i;

	for (i = 0; i < TRACERD_AHEAD; i++) {
		if (p->files.ahead_fd1[i] <= 0)
			continue;
		close(p->files.ahead_fd1[i] - 1);
		p->files.ahead_fd1[i] = 0;
		if (!p->files.dir)
			continue;
		ahead_path(path, sizeof(path), p->files.dir, i, p->pid);
		unlink(path);
	}
}
