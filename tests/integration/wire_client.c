/*
 * wire_client.c - a misbehaving tracerd client for the tests.
 *
 *   wire_client SOCKET garbage|oversize|version|undecodable|unexpected
 *
 * Sends one bad frame, then reads what tracerd answers. Prints
 * "error: MESSAGE" for an Error reply and "disconnected" when tracerd
 * closes the connection; exits 0 only if both happened.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/wire.h"

static int dial(const char *path)
{
	int fd = tracer__wire_connect(path, 0);

	if (fd < 0) {
		fprintf(stderr, "wire_client: connect: %s\n", strerror(-fd));
		exit(1);
	}
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n)
		perror("wire_client: send");
}

static void send_bad(int fd, const char *what)
{
	char frame[64];

	if (!strcmp(what, "garbage")) {
		send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
	} else if (!strcmp(what, "oversize")) {
		tracer__wire_header(frame, TRACER_WIRE_MAX + 1);
		send_all(fd, frame, TRACER_WIRE_HEADER);
	} else if (!strcmp(what, "version")) {
		tracer__wire_header(frame, 0);
		frame[4] = 99;	/* version field */
		send_all(fd, frame, TRACER_WIRE_HEADER);
	} else if (!strcmp(what, "undecodable")) {
		tracer__wire_header(frame, 8);
		memset(frame + TRACER_WIRE_HEADER, 0xff, 8);
		send_all(fd, frame, TRACER_WIRE_HEADER + 8);
	} else if (!strcmp(what, "unexpected")) {
		Tracer__Message m = TRACER__MESSAGE__INIT;
		Tracer__Segment s = TRACER__SEGMENT__INIT;

		m.body_case = TRACER__MESSAGE__BODY_SEGMENT;
		m.segment = &s;
		tracer__wire_send(fd, &m, NULL, 0, 1000);
	} else {
		fprintf(stderr, "wire_client: unknown case '%s'\n", what);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	tracer_msg *m = NULL;
	const char *why = NULL;
	int fd, ret, got_error = 0;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: wire_client SOCKET CASE\n");
		return 2;
	}
	fd = dial(argv[1]);
	send_bad(fd, argv[2]);
	ret = tracer__wire_recv(fd, &m, NULL, NULL, 10000, &why);
	if (!ret && m->body_case == TRACER__MESSAGE__BODY_ERROR) {
		printf("error: %s\n", m->error->message);
		got_error = 1;
	}
	tracer__wire_free(m);
	/* tracerd must hang up now (EOF), not keep us waiting forever. */
	ret = (int)recv(fd, &c, 1, 0);
	if (ret == 0 || (ret < 0 && errno == ECONNRESET))
		printf("disconnected\n");
	close(fd);
	return got_error && ret <= 0 ? 0 : 1;
}
