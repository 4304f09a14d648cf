/*
 * tl_poll.c - a traced program for tests/integration/test_timeline.sh
 * (links libtracer): long waits among many short events, the way a server
 * spends its time in poll() between bursts of work.
 *
 *   tl_poll MS TICKS
 *
 * Three bursts of TICKS short events each (test:tick, and a read() of
 * /dev/null: a short libc:read slice); between them, a read() of
 * /dev/null and then poll() with no descriptors for MS milliseconds: two
 * long libc:poll slices, each starting within microseconds of a short
 * slice. Exits 0, or 1 if a call fails.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <tracer.h>

/* TICKS short events of burst b on fd. Returns 0 or -1. */
static int burst(int fd, int b, int ticks)
{
	char c;
	int i;

	for (i = 0; i < ticks; i++) {
		tracer_record("test:tick", "burst %d tick %d", b, i);
		if (read(fd, &c, 1) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fd, b, ms, ticks;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: tl_poll MS TICKS\n");
		return 2;
	}
	ms = atoi(argv[1]);
	ticks = atoi(argv[2]);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || ms < 0 || ticks < 0)
		return 1;
	for (b = 0; b < 3; b++) {
		if (burst(fd, b, ticks))
			return 1;
		if (b == 2)
			break;
		if (read(fd, &c, 1) < 0 || poll(NULL, 0, ms) < 0)
			return 1;
	}
	close(fd);
	return 0;
}
