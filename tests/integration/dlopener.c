/*
 * dlopener.c - a traced program that loads a module when told, for
 * test_hung.sh. Prints "ready", then answers each line of its standard
 * input with one line:
 *
 *   d PATH   dlopen(PATH) and call its dlmod_run(): "ok N" (N call
 *            sites), or "error ..."
 *   q        exit 0
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <tracer.h>

static void load(const char *path)
{
	int (*run)(int);
	void *h = dlopen(path, RTLD_NOW);

	if (!h) {
		printf("error %s\n", dlerror());
		return;
	}
	*(void **)&run = dlsym(h, "dlmod_run");
	if (!run) {
		printf("error %s\n", dlerror());
		return;
	}
	printf("ok %d\n", run(1));
}

int main(void)
{
	char line[4096];

	tracer_record("test:start", "dlopener ready");
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'q')
			break;
		if (line[0] == 'd' && line[1] == ' ')
			load(line + 2);
		else
			printf("error unknown command\n");
		fflush(stdout);
	}
	return 0;
}
