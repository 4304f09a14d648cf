/*
 * record.c - `tracectl record [START OPTIONS] [--no-follow] [--] PROGRAM
 * [ARGS...]`: start a session, run PROGRAM with libtracer.so preloaded
 * (record_run.c), stop the session when it and every process it left
 * running have exited. When no tracerd answers on the socket, a private
 * one is started on a socket in a temporary directory, and stopped (then
 * the directory removed) at the end.
 *
 * Standard output is the program's: record writes only on stderr, and the
 * lines that name the trace directory keep this form, for scripts:
 *
 *   tracectl: session ID started (MODE); trace directory: DIR
 *   tracectl: session ID stopped; trace directory: DIR
 *
 * A PROGRAM that cannot be run is reported before anything is started:
 * exit status 127 (not found) or 126 (not executable), as the shell's.
 *
 * The private tracerd: $TRACER_TRACERD, else next to our executable
 * (EXEDIR/tracerd, EXEDIR/../tracerd/tracerd in the build tree), else
 * tracerd in $PATH; run as `tracerd --socket DIR/tracerd.sock --ready-fd
 * FD`, in its own process group (^C is for the program), its stdout and
 * stderr in DIR/tracerd.log. It writes a byte to FD once it listens.
 *
 * The library: $TRACER_LIB, else EXEDIR/../libtracer/.libs/libtracer.so
 * (build tree), EXEDIR/../lib/libtracer.so, TRACER_LIBDIR/libtracer.so.
 * Its call sites are also what the patterns of start/record --events and
 * filter are checked against (tracer__ctl_patterns(), here for that).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "elfsites.h"
#include "pattern.h"
#include "record.h"

#ifndef TRACER_LIBDIR
#define TRACER_LIBDIR "/usr/local/lib"
#endif

#define READY_TIMEOUT_MS 30000
#define DIED_WAIT_MS	1000	/* a private tracerd's exit, once its socket
				   failed us */
#define SOCKET_NAME "tracerd.sock"
#define LOG_NAME "tracerd.log"

/* A tracerd started for this run. */
struct private_daemon {
	pid_t pid;			/* 0: none */
	char dir[TRACER_PATH_MAX];	/* its temporary directory, "": none */
};

/* The session record started. */
struct recording {
	uint64_t id;
	char *dir;			/* its trace directory (malloc'ed) */
	bool dir_existed;		/* -o DIR was there before the start */
};

/* ---- Finding tracerd and libtracer.so ----------------------------------- */

/* The directory of our own executable into buf (PATH_MAX bytes). */
static int exe_dir(char *buf)
{
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* The first EXEDIR/rel[i] that access(mode) allows, resolved into buf
 * (PATH_MAX bytes). */
static bool find_near(char *buf, const char *const *rel, int mode)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];

	if (exe_dir(dir))
		return false;
	for (; *rel; rel++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *rel);
		if (!access(path, mode) && realpath(path, buf))
			return true;
	}
	return false;
}

/* The tracerd to run into buf (PATH_MAX bytes); may be a $PATH name. */
static void find_tracerd(char *buf)
{
	static const char *const rel[] = {
		"tracerd", "../tracerd/tracerd", NULL,
	};
	const char *env = getenv("TRACER_TRACERD");

	if (env && env[0])
		snprintf(buf, PATH_MAX, "%s", env);
	else if (!find_near(buf, rel, X_OK))
		strcpy(buf, "tracerd");
}

/* The absolute path of libtracer.so into buf (PATH_MAX bytes): false
 * when there is none (errno says why for $TRACER_LIB). */
static bool lib_path(char *buf)
{
	static const char *const rel[] = {
		"../libtracer/.libs/libtracer.so", "../lib/libtracer.so", NULL,
	};
	const char *env = getenv("TRACER_LIB");

	if (env && env[0])
		return !access(env, R_OK) && realpath(env, buf);
	return find_near(buf, rel, R_OK) ||
	       (!access(TRACER_LIBDIR "/libtracer.so", R_OK) &&
		realpath(TRACER_LIBDIR "/libtracer.so", buf));
}

/* The absolute path of libtracer.so into buf (PATH_MAX bytes). */
static int find_lib(char *buf)
{
	const char *env = getenv("TRACER_LIB");

	if (lib_path(buf))
		return 0;
	if (env && env[0])
		return tracer__ctl_fail("$TRACER_LIB '%s': %s", env,
					strerror(errno));
	return tracer__ctl_fail("cannot find libtracer.so (tried next to "
				"tracectl and in '%s'; set $TRACER_LIB)",
				TRACER_LIBDIR);
}

/* ---- --events and filter PATTERNS against the library's events ---------
 *
 * The events the library records are the call sites of libtracer.so
 * (elfsites.h), as `tracectl list` shows them once a process registered
 * them, and those tracerd writes itself when it salvages a process
 * (tracerd/salvage.c). A pattern can be checked in advance only for the
 * library's own providers (libc, pthread, proc, tracer...): a program's
 * own events are not known before it runs. So a warning says that a
 * pattern matches no event of the library when its provider is one of
 * the library's ('libc:opne'), or one edit away from one ('lib:*'), with
 * the nearest name when there is one. Nothing is said when the library
 * is not found.
 */

static const char *const daemon_events[] = {
	"tracer:process_exit", "tracer:process_killed", "tracer:process_gone",
	"tracer:torn", "tracer:thread_vanished", "tracer:salvage_error",
};

/* The names of the events known in advance. */
struct known_events {
	const char **v;
	size_t n;
};

/* Is a provider of the library plen bytes long, at name? */
static bool lib_provider(const struct known_events *k, const char *name,
			 size_t plen)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strncmp(k->v[i], name, plen) && k->v[i][plen] == ':')
			return true;
	return false;
}

/* Does v match an event of the library? */
static bool lib_matches(const struct known_events *k,
			const struct tracer__pattern *v)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (tracer__pattern_matches(v, k->v[i]))
			return true;
	return false;
}

/* The event whose name (prov: provider) is nearest to the len bytes at
 * name, at most max edits away: its name, or NULL. */
static const char *nearest(const struct known_events *k, const char *name,
			   size_t len, uint32_t max, bool prov)
{
	uint32_t d, best_d = max + 1;
	const char *best = NULL;
	size_t i;

	for (i = 0; i < k->n; i++) {
		size_t n = prov ? strcspn(k->v[i], ":") : strlen(k->v[i]);

		d = tracer__name_distance(name, len, k->v[i], n);
		if (d < best_d) {
			best_d = d;
			best = k->v[i];
		}
	}
	return best;
}

/* Warn about v if it is misspelled (see above). */
static void check_pattern(const struct known_events *k,
			  const struct tracer__pattern *v)
{
	size_t plen = tracer__pattern_provider(v);
	const char *sign = v->exclude ? "-" : "", *near = NULL;
	char msg[3 * TRACER_PATTERN_MAX_LEN + 128];
	bool own = plen && lib_provider(k, v->glob, plen);
	int n;

	if (!plen)
		return;
	if (own) {
		if (lib_matches(k, v))
			return;
		if (!v->glob[v->len])	/* a name: the nearest one */
			near = nearest(k, v->glob, v->len, 2, false);
	} else {
		near = nearest(k, v->glob, plen, 1, true);
		if (!near)
			return;		/* a program's own provider */
	}
	n = snprintf(msg, sizeof(msg), "'%s%s' matches no event of the "
		     "library", sign, v->glob);
	if (near && own)
		snprintf(msg + n, sizeof(msg) - (size_t)n, " (did you mean "
			 "'%s%s'?)", sign, near);
	else if (near)		/* the provider replaced */
		snprintf(msg + n, sizeof(msg) - (size_t)n, " (did you mean "
			 "'%s%.*s%s'?)", sign, (int)strcspn(near, ":"), near,
			 v->glob + plen);
	tracer__ctl_warn(msg);
}

/* Check every pattern of p against the library's events, if found. */
static void check_patterns(const struct tracer__patterns *p)
{
	const size_t nd = sizeof(daemon_events) / sizeof(daemon_events[0]);
	struct tracer_elf_sites s = { NULL, 0, NULL };
	struct known_events k = { NULL, 0 };
	char lib[PATH_MAX];
	size_t i;

	if (!lib_path(lib) || tracer__elf_sites(lib, &s) || !s.n)
		goto out;
	k.v = calloc(s.n + nd, sizeof(*k.v));
	if (!k.v)
		goto out;
	for (i = 0; i < s.n; i++)
		k.v[k.n++] = s.v[i].name;
	for (i = 0; i < nd; i++)
		k.v[k.n++] = daemon_events[i];
	for (i = 0; i < p->n; i++)
		check_pattern(&k, &p->v[i]);
out:
	free(k.v);
	tracer__elf_sites_free(&s);
}

int tracer__ctl_patterns(const char *text)
{
	struct tracer__patterns p;
	char err[512];

	if (tracer__patterns_parse(text, &p, err, sizeof(err)))
		return tracer__ctl_fail("%s", err);
	check_patterns(&p);
	tracer__patterns_free(&p);
	return 0;
}

/* ---- A private tracerd --------------------------------------------------- */

/* Make sure fds 0, 1 and 2 are open, so that no pipe lands there. */
static void std_fds(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd <= 2);
	if (fd > 2)
		close(fd);
}

/* DIR/name into buf (size bytes); "" if it does not fit (make_dir() made
 * DIR short enough for every name here). */
static void in_dir(char *buf, size_t size, const struct private_daemon *d,
		   const char *name)
{
	int n = snprintf(buf, size, "%s/%s", d->dir, name);

	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

static int make_dir(struct private_daemon *d)
{
	static const char tail[] = "/tracectl.XXXXXX/" SOCKET_NAME;
	const char *tmp = getenv("TMPDIR");

	if (!tmp || tmp[0] != '/' ||
	    strlen(tmp) + sizeof(tail) > sizeof(d->dir))
		tmp = "/tmp";
	snprintf(d->dir, sizeof(d->dir), "%s/tracectl.XXXXXX", tmp);
	if (mkdtemp(d->dir))
		return 0;
	d->dir[0] = '\0';
	return tracer__ctl_fail("cannot create a directory in '%s': %s", tmp,
				strerror(errno));
}

static void tracerd_child(const char *exe, const char *sock, int ready,
			  int log, pid_t parent)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char fd[16];

	/* Should tracectl die without stopping it, it stops on its own. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(127);
	tracer__run_child_signals();
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	if (null >= 0)
		dup2(null, 0);
	dup2(log, 1);
	dup2(log, 2);
	fcntl(ready, F_SETFD, 0);	/* the only descriptor it inherits */
	snprintf(fd, sizeof(fd), "%d", ready);
	execlp(exe, exe, "--socket", sock, "--ready-fd", fd, (char *)NULL);
	fprintf(stderr, "cannot run '%s': %s\n", exe, strerror(errno));
	_exit(127);
}

/* The first line tracerd wrote to its log, without "tracerd: ". */
static const char *why_not(const struct private_daemon *d, char *buf,
			   size_t size)
{
	char path[TRACER_PATH_MAX + 16];
	const char *line = buf;
	FILE *f;

	in_dir(path, sizeof(path), d, LOG_NAME);
	f = fopen(path, "re");
	if (!f || !fgets(buf, (int)size, f))
		buf[0] = '\0';
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(line, "tracerd: ", 9))
		line += 9;
	return line[0] ? line : "it exited before it was ready";
}

/* Wait for tracerd's byte on fd. Returns 0 or CTL_FAIL (reported). */
static int wait_ready(struct private_daemon *d, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c, why[512];
	ssize_t n = -1;
	int ret;

	do
		ret = poll(&p, 1, READY_TIMEOUT_MS);
	while (ret < 0 && errno == EINTR);
	if (ret > 0)
		n = read(fd, &c, 1);
	close(fd);
	if (n == 1)
		return 0;
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
	return tracer__ctl_fail("cannot start tracerd: %s", ret == 0 ?
				"not ready after 30 s" :
				why_not(d, why, sizeof(why)));
}

static int spawn_tracerd(struct private_daemon *d, const char *exe,
			 const char *sock)
{
	char path[TRACER_PATH_MAX + 16];
	int p[2], log, err;
	pid_t parent;

	in_dir(path, sizeof(path), d, LOG_NAME);
	log = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (log < 0)
		return tracer__ctl_fail("cannot create '%s': %s", path,
					strerror(errno));
	if (pipe2(p, O_CLOEXEC)) {
		err = errno;
		close(log);
		return tracer__ctl_fail("cannot start tracerd: %s",
					strerror(err));
	}
	parent = getpid();
	d->pid = fork();
	if (d->pid == 0)
		tracerd_child(exe, sock, p[1], log, parent);
	err = errno;
	close(log);
	close(p[1]);
	if (d->pid < 0) {
		d->pid = 0;
		close(p[0]);
		return tracer__ctl_fail("cannot start tracerd: %s",
					strerror(err));
	}
	setpgid(d->pid, d->pid);	/* may fail once it ran exec: fine */
	return wait_ready(d, p[0]);
}

/* Start a private tracerd and use its socket. Returns 0 or CTL_FAIL. */
static int start_private(struct tracer__ctl *c, struct private_daemon *d)
{
	char exe[PATH_MAX], sock[TRACER_PATH_MAX];
	int ret = make_dir(d);

	if (ret)
		return ret;
	find_tracerd(exe);
	in_dir(sock, sizeof(sock), d, SOCKET_NAME);
	ret = spawn_tracerd(d, exe, sock);
	if (!ret)
		strcpy(c->socket, sock);
	return ret;
}

/* Use the tracerd on c->socket, or start one. Returns 0 or CTL_FAIL. */
static int ensure_daemon(struct tracer__ctl *c, struct private_daemon *d)
{
	int fd = tracer__wire_connect(c->socket, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -ENOENT && fd != -ECONNREFUSED)
		return tracer__ctl_fail("cannot reach tracerd at '%s': %s",
					c->socket, strerror(-fd));
	return start_private(c, d);
}

/* SIGTERM, then wait; remove its files and directory. */
static void stop_private(struct private_daemon *d)
{
	char path[TRACER_PATH_MAX + 16];

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (!d->dir[0])
		return;
	in_dir(path, sizeof(path), d, LOG_NAME);
	unlink(path);
	in_dir(path, sizeof(path), d, SOCKET_NAME);
	unlink(path);
	in_dir(path, sizeof(path), d, SOCKET_NAME ".state");
	unlink(path);
	if (rmdir(d->dir))
		fprintf(stderr, "tracectl: warning: cannot remove '%s': %s\n",
			d->dir, strerror(errno));
}

/* ---- The session ------------------------------------------------------- */

/* Start it; say so on stderr. Returns 0 or CTL_FAIL (reported). */
static int start_session(const struct tracer__ctl *c,
			 const struct tracer__ctl_start *s,
			 struct recording *rec)
{
	char why[TRACER_PATH_MAX + 4096];
	tracer_msg *reply = tracer__ctl_session_request(c, s, why, sizeof(why));
	const Tracer__Session *r;

	if (!reply)
		return tracer__ctl_fail("%s", why);
	r = reply->session;
	tracer__ctl_warn(r->warning);
	fprintf(stderr, "tracectl: session %" PRIu64 " started (%s); trace "
		"directory: %s\n", r->id, r->mode[0] ? r->mode :
		s->mode ? s->mode : "discard", r->directory);
	rec->id = r->id;
	rec->dir = strdup(r->directory);
	tracer__wire_free(reply);
	return rec->dir ? 0 : tracer__ctl_fail("out of memory");
}

/* "killed by signal 9 (Killed)", "exited with status 1". */
static void describe_wait(char *buf, size_t size, int wstatus)
{
	if (WIFSIGNALED(wstatus))
		snprintf(buf, size, "killed by signal %d (%s)",
			 WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	else
		snprintf(buf, size, "exited with status %d",
			 WEXITSTATUS(wstatus));
}

/* Stop it; say so on stderr (quiet: only trouble). Trouble is a warning:
 * record exits with the program's status all the same. */
static void stop_session(const struct tracer__ctl *c,
			 const struct recording *rec,
			 struct tracer__run *run, bool quiet)
{
	char why[TRACER_PATH_MAX + 4096];
	tracer_msg *reply = NULL;

	if (!run->tracerd_died)
		reply = tracer__ctl_session_request(c, NULL, why, sizeof(why));
	/* A private tracerd killed meanwhile: say how it ended. */
	if (!reply && tracer__run_tracerd_gone(run, DIED_WAIT_MS)) {
		describe_wait(why, sizeof(why), run->tracerd_wait);
		fprintf(stderr, "tracectl: warning: tracerd %s before session "
			"%" PRIu64 " was stopped; the trace in '%s' may lack "
			"its end\n", why, rec->id, rec->dir);
		return;
	}
	if (!reply) {
		fprintf(stderr, "tracectl: warning: cannot stop session %"
			PRIu64 ": %s; the trace in '%s' may lack its end\n",
			rec->id, why, rec->dir);
		return;
	}
	tracer__ctl_warn(reply->session->warning);
	if (!quiet)
		fprintf(stderr, "tracectl: session %" PRIu64 " stopped; trace "
			"directory: %s\n", reply->session->id,
			reply->session->directory);
	tracer__wire_free(reply);
}

/* start, run, stop. Returns the exit status. */
static int traced_run(const struct tracer__ctl *c,
		      const struct tracer__ctl_start *s, struct tracer__run *run)
{
	struct recording rec = { .id = 0 };
	struct stat st;
	int ret;

	rec.dir_existed = s->directory[0] && !stat(s->directory, &st);
	ret = start_session(c, s, &rec);
	if (!ret)
		ret = tracer__run(run);
	/* The program could not be run after all (it changed since it was
	 * checked), or a signal came first: the session's directory goes,
	 * if nothing is in it. */
	if (run->exec_errno)
		fprintf(stderr, "tracectl: cannot run '%s': %s\n",
			run->argv[0], strerror(run->exec_errno));
	if (rec.dir)
		stop_session(c, &rec, run, run->not_run);
	if (rec.dir && run->not_run && !rec.dir_existed)
		rmdir(rec.dir);
	free(rec.dir);
	return ret ? ret : run->status;
}

/* ---- The command -------------------------------------------------------- */

#define KEY_NO_FOLLOW	0x100

static const struct tracer__ctl_opt record_opts[] = {
	{ "no-follow", KEY_NO_FOLLOW, false, 0 },
	{ NULL, 0, false, 0 },
};

/* Options up to PROGRAM (run->argv). Returns 0 or the exit status. */
static int record_args(struct tracer__ctl *c, int argc, char **argv,
		       struct tracer__ctl_start *s, struct tracer__run *run)
{
	struct tracer__ctl_args a;
	int key, ret;

	tracer__ctl_args_init(&a, c, record_opts, argc, argv);
	a.more_opts = tracer__ctl_start_opts;
	while ((key = tracer__ctl_next(&a)) != CTL_END) {
		if (key == CTL_STOP)
			return a.status;
		if (key == CTL_ARG) {
			run->argv = argv + a.i - 1;
			return tracer__ctl_start_check(c, s);
		}
		if (key == KEY_NO_FOLLOW) {
			run->follow = false;
			continue;
		}
		ret = tracer__ctl_start_opt(c, s, key, a.val);
		if (ret)
			return ret;
	}
	return tracer__ctl_usage_error(c, "missing PROGRAM");
}

/* Can PROGRAM run? Returns 0, or 127 or 126 (reported). */
static int check_program(const char *file)
{
	int err = tracer__run_check(file);

	if (!err)
		return 0;
	fprintf(stderr, "tracectl: cannot run '%s': %s\n", file,
		strerror(-err));
	return tracer__run_exec_status(-err);
}

int tracer__ctl_record(struct tracer__ctl *c, int argc, char **argv)
{
	struct tracer__ctl_start s = { .mode = NULL };
	struct private_daemon d = { .pid = 0 };
	struct tracer__run run = { .follow = true };
	char lib[PATH_MAX];
	int ret = record_args(c, argc, argv, &s, &run);

	if (!ret)
		ret = check_program(run.argv[0]);
	if (!ret)
		ret = find_lib(lib);
	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	if (ret)
		return ret;
	std_fds();
	ret = ensure_daemon(c, &d);
	/* From now on, a signal stops the session (^C before that: the
	 * private tracerd follows tracectl). */
	tracer__run_signals();
	if (!ret) {
		run.lib = lib;
		run.socket = c->socket;
		run.tracerd = d.pid;
		ret = traced_run(c, &s, &run);
		if (run.tracerd_died)
			d.pid = 0;	/* reaped */
	}
	stop_private(&d);
	return ret;
}
