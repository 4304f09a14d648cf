/*
 * fuzz_daemon.c - libFuzzer target: tracerd's message handlers, as a
 * client reaches them.
 *
 * The whole daemon (every tracerd/ file but main.c) runs in this process
 * on its own loop, listening on a socket in a private directory, with its
 * default settings. Each input is the byte stream of one client: it
 * connects, sends the input, closes its sending side and reads whatever
 * tracerd answers until tracerd closes the connection (or the loop has
 * turned 200 times). The input reaches the frame decoder and, for frames
 * that decode, every handler: Register (and what it creates: pool, files,
 * directories), call sites, filters, Start, Stop, Snapshot, Status...
 * Then a second client stops any session the input started, and the
 * output directory is emptied, so that each input starts from the same
 * daemon. A crash, a sanitizer report or a hang (libFuzzer's -timeout) is
 * a finding.
 *
 * The seed corpus (tests/fuzz/corpus/daemon) holds well-formed sessions:
 * FUZZ_DAEMON_SEEDS=DIR ./fuzz_daemon writes them into DIR and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tracerd/tracerd.h"
#include "proto/wire.h"

static struct tracerd d;
static uv_loop_t loop;
static char dir[64], sock[96], out[96];

void tracerd_log(const char *fmt, ...)
{
	(void)fmt;	/* every input would log: silence */
}

static int dial(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);

	if (fd < 0)
		abort();
	strcpy(sa.sun_path, sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();	/* tracerd's own socket: must accept */
	return fd;
}

/* Send n bytes, turning the loop while the socket is full. Stops when
 * tracerd closed the connection. */
static void send_all(int fd, const uint8_t *p, size_t n)
{
	int turns = 0;

	while (n > 0 && turns < 1000) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN) {
			return;
		}
		uv_run(&loop, UV_RUN_NOWAIT);
		turns++;
	}
}

/* Turn the loop, reading tracerd's answers, until it hangs up. */
static void drain(int fd, int turns)
{
	char buf[65536];

	while (turns-- > 0) {
		ssize_t r;

		uv_run(&loop, UV_RUN_NOWAIT);
		while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			;
		if (r == 0)
			return;
	}
}

static void send_msg(int fd, tracer_msg *m)
{
	void *frame;
	size_t size;

	if (tracer__wire_pack(m, &frame, &size))
		abort();
	send_all(fd, frame, size);
	free(frame);
}

/* nftw(): everything below the directory walked, not itself. */
static int remove_below(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

/* No session, no file: the next input meets the daemon this one did. */
static void reset(void)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__SessionStop stop = TRACER__SESSION_STOP__INIT;
	int fd;

	if (d.session_id && !d.stopping) {
		fd = dial();
		m.body_case = TRACER__MESSAGE__BODY_SESSION_STOP;
		m.session_stop = &stop;
		send_msg(fd, &m);
		shutdown(fd, SHUT_WR);
		drain(fd, 2000);
		close(fd);
	}
	nftw(out, remove_below, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_seeds(const char *to);

/* At exit (libFuzzer's too): the private directory goes. */
static void remove_dir(void)
{
	nftw(dir, remove_below, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_DAEMON_SEEDS");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/fuzz-daemon.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	signal(SIGPIPE, SIG_IGN);
	umask(077);
	tracerd_config_defaults(&d.cfg);
	d.cfg.socket_path = sock;
	d.cfg.output_dir = out;
	uv_loop_init(&loop);
	if (tracerd_open(&d, &loop, false))
		abort();
	if (seeds) {
		write_seeds(seeds);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = dial();

	uv_run(&loop, UV_RUN_NOWAIT);	/* accepted */
	send_all(fd, data, size);
	shutdown(fd, SHUT_WR);
	drain(fd, 200);
	close(fd);
	uv_run(&loop, UV_RUN_NOWAIT);	/* its end seen */
	uv_run(&loop, UV_RUN_NOWAIT);
	reset();
	return 0;
}

/* ---- the seed corpus ----------------------------------------------- */

struct seed {
	uint8_t *buf;
	size_t len;
};

static void add(struct seed *s, tracer_msg *m)
{
	void *frame;
	size_t size;

	if (tracer__wire_pack(m, &frame, &size))
		abort();
	s->buf = realloc(s->buf, s->len + size);
	memcpy(s->buf + s->len, frame, size);
	s->len += size;
	free(frame);
}

/* fresh: a start that does not wait (its pool and pidfd announced; no
 * descriptor comes with a fuzzed byte stream). */
static void add_register(struct seed *s, bool lazy, bool fresh)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__Register r = TRACER__REGISTER__INIT;

	r.pid = (uint32_t)getpid();
	r.name = (char *)"fuzzee";
	r.lazy_listener = lazy;
	r.fresh_pool = fresh;
	r.pidfd = fresh;
	r.adopt_segments = fresh;
	m.body_case = TRACER__MESSAGE__BODY_REGISTER;
	m.register_ = &r;
	add(s, &m);
}

static void add_sites(struct seed *s)
{
	struct tracer_wire_site w[2] = {
		{ 1, 10, 0, "ii", "f.c", "app:one", "a=%d b=%d" },
		{ 2, 20, 1, "s", "f.c", "app:two", "%s" },
	};
	void *frame;
	size_t size;

	if (tracer__wire_pack_sites(w, 2, &frame, &size))
		abort();
	s->buf = realloc(s->buf, s->len + size);
	memcpy(s->buf + s->len, frame, size);
	s->len += size;
	free(frame);
}

static void add_start(struct seed *s, const char *mode, const char *events)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__SessionStart r = TRACER__SESSION_START__INIT;

	r.mode = (char *)mode;
	r.events = (char *)events;
	m.body_case = TRACER__MESSAGE__BODY_SESSION_START;
	m.session_start = &r;
	add(s, &m);
}

static void add_simple(struct seed *s, Tracer__Message__BodyCase body)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__StatusRequest st = TRACER__STATUS_REQUEST__INIT;
	Tracer__SessionStop sp = TRACER__SESSION_STOP__INIT;
	Tracer__SnapshotRequest sn = TRACER__SNAPSHOT_REQUEST__INIT;

	m.body_case = body;
	if (body == TRACER__MESSAGE__BODY_STATUS_REQUEST)
		m.status_request = &st;
	else if (body == TRACER__MESSAGE__BODY_SESSION_STOP)
		m.session_stop = &sp;
	else
		m.snapshot_request = &sn;
	add(s, &m);
}

static void add_filter(struct seed *s, const char *patterns)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__FilterRequest f = TRACER__FILTER_REQUEST__INIT;

	f.patterns = (char *)patterns;
	m.body_case = TRACER__MESSAGE__BODY_FILTER_REQUEST;
	m.filter_request = &f;
	add(s, &m);
}

static void save(const char *to, const char *name, struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", to, name);
	f = fopen(path, "w");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f))
		abort();
	free(s->buf);
	*s = (struct seed){ 0 };
}

static void write_seeds(const char *to)
{
	struct seed s = { 0 };

	add_simple(&s, TRACER__MESSAGE__BODY_STATUS_REQUEST);
	save(to, "status", &s);
	add_start(&s, "discard", "*");
	add_simple(&s, TRACER__MESSAGE__BODY_STATUS_REQUEST);
	add_filter(&s, "-app:two");
	add_simple(&s, TRACER__MESSAGE__BODY_SESSION_STOP);
	save(to, "session", &s);
	add_start(&s, "flight", "app:*");
	add_simple(&s, TRACER__MESSAGE__BODY_SNAPSHOT_REQUEST);
	add_simple(&s, TRACER__MESSAGE__BODY_SESSION_STOP);
	save(to, "flight", &s);
	add_register(&s, false, false);
	add_sites(&s);
	save(to, "register", &s);
	add_register(&s, true, false);
	add_sites(&s);
	save(to, "register-lazy", &s);
	add_start(&s, "discard", "*");
	add_register(&s, false, false);
	add_sites(&s);
	add_simple(&s, TRACER__MESSAGE__BODY_STATUS_REQUEST);
	save(to, "register-in-session", &s);
	add_start(&s, "discard", "*");
	add_register(&s, true, true);
	add_sites(&s);
	add_simple(&s, TRACER__MESSAGE__BODY_SESSION_STOP);
	save(to, "register-early", &s);
}
