/*
 * main.c - tracectl, the command line of tracer.
 *
 *   tracectl [--socket PATH] start     start recording a session
 *   tracectl [--socket PATH] stop      stop it, once all is on disk
 *   tracectl [--socket PATH] status    the daemon, session and processes
 *   tracectl view DIR                  print a session's events
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "paths.h"
#include "proto/wire.h"
#include "view.h"

#define REPLY_TIMEOUT_MS 60000

static const char *prog = "tracectl";

static void usage(FILE *f)
{
	fputs("usage: tracectl [--socket PATH] start|stop|status\n"
	      "       tracectl view DIR\n", f);
}

static int die(const char *what, const char *path, int err)
{
	fprintf(stderr, "%s: %s '%s': %s\n", prog, what, path, strerror(err));
	return 1;
}

/* Send msg, wait for the reply. Returns the reply or NULL (reported). */
static tracer_msg *request(const char *path, tracer_msg *msg)
{
	const char *why = NULL;
	tracer_msg *reply = NULL;
	int fd = tracer__wire_connect(path, 0), ret, sent;

	if (fd < 0) {
		die("cannot reach tracerd at", path, -fd);
		return NULL;
	}
	sent = tracer__wire_send(fd, msg, NULL, 0, REPLY_TIMEOUT_MS);
	/* Even if sending failed, a refusal may be waiting to be read. */
	ret = tracer__wire_recv(fd, &reply, NULL, NULL,
				sent ? 1000 : REPLY_TIMEOUT_MS, &why);
	if (ret && sent) {
		ret = sent;
		why = NULL;
	}
	close(fd);
	if (ret) {
		fprintf(stderr, "%s: no answer from tracerd at '%s': %s\n",
			prog, path, why ? why : strerror(-ret));
		return NULL;
	}
	if (reply->body_case == TRACER__MESSAGE__BODY_ERROR) {
		fprintf(stderr, "%s: %s\n", prog, reply->error->message);
		tracer__wire_free(reply);
		return NULL;
	}
	return reply;
}

static int session_cmd(const char *path, bool start)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__SessionStart s1 = TRACER__SESSION_START__INIT;
	Tracer__SessionStop s2 = TRACER__SESSION_STOP__INIT;
	tracer_msg *r;

	if (start) {
		m.body_case = TRACER__MESSAGE__BODY_SESSION_START;
		m.session_start = &s1;
	} else {
		m.body_case = TRACER__MESSAGE__BODY_SESSION_STOP;
		m.session_stop = &s2;
	}
	r = request(path, &m);
	if (!r)
		return 1;
	if (r->body_case != TRACER__MESSAGE__BODY_SESSION) {
		fprintf(stderr, "%s: unexpected reply from tracerd\n", prog);
		tracer__wire_free(r);
		return 1;
	}
	printf("session %" PRIu64 " %s; trace directory:\n%s\n",
	       r->session->id, start ? "started" : "stopped",
	       r->session->directory);
	tracer__wire_free(r);
	return 0;
}

static void print_status(const Tracer__Status *st)
{
	size_t i;

	printf("tracerd pid %" PRIu32 "\nsocket  %s\noutput  %s\n", st->pid,
	       st->socket, st->output);
	if (st->session_id)
		printf("session %" PRIu64 " recording into %s\n",
		       st->session_id, st->session_directory);
	else
		printf("session none (tracectl start begins one)\n");
	printf("processes %zu\n", st->n_processes);
	if (st->n_processes)
		printf("%8s %-16s %7s %6s %10s %12s %10s\n", "PID", "NAME",
		       "BUFFERS", "IN-USE", "POOL-KIB", "WRITTEN-KIB",
		       "LOST");
	for (i = 0; i < st->n_processes; i++) {
		const Tracer__ProcessStatus *p = st->processes[i];

		printf("%8" PRIu32 " %-16s %7" PRIu32 " %6" PRIu32 " %10"
		       PRIu64 " %12" PRIu64 " %10" PRIu64 "\n", p->pid,
		       p->name, p->buffers, p->buffers_in_use,
		       p->pool_bytes >> 10, p->bytes_written >> 10,
		       p->events_lost);
	}
}

static int status_cmd(const char *path)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__StatusRequest sr = TRACER__STATUS_REQUEST__INIT;
	tracer_msg *r;

	m.body_case = TRACER__MESSAGE__BODY_STATUS_REQUEST;
	m.status_request = &sr;
	r = request(path, &m);
	if (!r)
		return 1;
	if (r->body_case != TRACER__MESSAGE__BODY_STATUS) {
		fprintf(stderr, "%s: unexpected reply from tracerd\n", prog);
		tracer__wire_free(r);
		return 1;
	}
	print_status(r->status);
	tracer__wire_free(r);
	return 0;
}

static int no_args(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "%s: %s takes no argument (got '%s')\n", prog,
			argv[0], argv[1]);
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char path[TRACER_PATH_MAX] = "";
	const char *cmd;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (strlen(optarg) >= sizeof(path))
				return die("socket path too long:", optarg,
					   ENAMETOOLONG);
			strcpy(path, optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("tracectl %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			fprintf(stderr, "%s: option '%s' needs a value\n", prog,
				argv[optind - 1]);
			usage(stderr);
			return 2;
		default:
			fprintf(stderr, "%s: unknown option '%s'\n", prog,
				argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command given\n", prog);
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (!strcmp(cmd, "view"))
		return tracer__ctl_view(argc - optind, argv + optind);
	if (!path[0] && tracer__socket_path(path, sizeof(path)))
		return die("socket path from", "$" TRACER_SOCKET_ENV,
			   ENAMETOOLONG);
	if (!strcmp(cmd, "start") || !strcmp(cmd, "stop") ||
	    !strcmp(cmd, "status")) {
		int ret = no_args(argc - optind, argv + optind);

		if (ret)
			return ret;
		if (!strcmp(cmd, "status"))
			return status_cmd(path);
		return session_cmd(path, !strcmp(cmd, "start"));
	}
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage(stderr);
	return 2;
}
