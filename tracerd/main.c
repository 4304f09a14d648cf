/*
 * tracerd: the tracing daemon. Under construction: it only answers
 * --help and --version for now.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: tracerd [--socket PATH] [--output DIR] [--daemonize]\n";

int main(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
			  strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("tracerd %s\n", PACKAGE_VERSION);
		return 0;
	}
	fputs(usage, stderr);
	fputs("tracerd: (not implemented yet)\n", stderr);
	return 2;
}
