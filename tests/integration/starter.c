/*
 * starter.c - a program that knows nothing of the tracer, for
 * test_start.sh: it reads CLOCK_MONOTONIC at main's first statement,
 * prints "ready", then obeys one command a line on stdin, answering each
 * with one line:
 *
 *   t        "main SECONDS.NANOSECONDS": that first reading
 *   o PATH   open PATH for writing (created), write a line, close it
 *   n NAME   name the main thread NAME (prctl PR_SET_NAME)
 *   q        exit 0
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec t;
	char line[4096];

	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "q"))
			return 0;
		if (!strcmp(line, "t")) {
			printf("main %lld.%09ld\n", (long long)t.tv_sec,
			       t.tv_nsec);
			fflush(stdout);
			continue;
		}
		if (!strncmp(line, "n ", 2)) {
			printf("%s\n", prctl(PR_SET_NAME, line + 2, 0, 0, 0)
			       ? "error" : "ok");
			fflush(stdout);
			continue;
		}
		if (!strncmp(line, "o ", 2)) {
			int fd = open(line + 2, O_WRONLY | O_CREAT | O_TRUNC,
				      0644);

			if (fd < 0 || write(fd, "x\n", 2) != 2 || close(fd))
				printf("error\n");
			else
				printf("ok\n");
		} else {
			printf("unknown\n");
		}
		fflush(stdout);
	}
	return 0;
}
