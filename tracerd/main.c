/*
 * tracerd: the tracing daemon. Under construction: it only answers
 * --help and --version for now.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>
#include <urcu.h>
#include <uv.h>

#include "proto/tracer.pb-c.h"

/*
 * References to one symbol of each library the daemon will be built on, so
 * that the link (which uses --as-needed on Debian) really depends on them.
 */
__attribute__((used))
static const void *const tracerd_deps[] = {
	&tracer__hello__descriptor,
};
__attribute__((used))
static void (*const tracerd_dep_funcs[])(void) = {
	(void (*)(void))uv_version,
	(void (*)(void))rcu_register_thread,
	(void (*)(void))protobuf_c_version,
};

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
