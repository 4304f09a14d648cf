/*
 * funcs.c - a program built with -finstrument-functions, for
 * test_symbols.sh: functions of a known nesting, in the main thread and
 * in a second one, and a module (funcmod.c) loaded with dlopen() at run
 * time. Each instrumented function notes its name when it is called; the
 * program prints what it knows, last:
 *
 *   exe PATH BASE            the executable and its load base
 *   module PATH              the module (as the loader found it)
 *   dlerror ok               a failed dlopen() left its error to dlerror()
 *   calls TID NAME NAME ...  the functions a thread called, in order
 *
 * usage: funcs MODULE DEPTH
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keep each function a function of its own name: no inlining, cloning
 * or merging. */
#if defined(__clang__)
# define KEEP	__attribute__((noinline, used))
#else
# define KEEP	__attribute__((noipa, used))
#endif
#define NOI	__attribute__((no_instrument_function))

#define LOG_MAX	256

/* Names copied: the module's go with it. */
struct log {
	char names[LOG_MAX][32];
	int n;
};

static __thread struct log *log_of;

static NOI void note(const char *name)
{
	if (log_of && log_of->n < LOG_MAX)
		snprintf(log_of->names[log_of->n++], sizeof(log_of->names[0]),
			 "%s", name);
}

static NOI void print_log(const struct log *l, long tid)
{
	int i;

	printf("calls %ld", tid);
	for (i = 0; i < l->n; i++)
		printf(" %s", l->names[i]);
	printf("\n");
}

static KEEP int recurse(int n)
{
	note(__func__);
	return n <= 1 ? 1 : recurse(n - 1) + 1;
}

static KEEP int leaf(int x)
{
	note(__func__);
	return x * 2;
}

static int (*volatile indirect)(int) = leaf;

static KEEP void *worker(void *arg)
{
	static struct log l;

	log_of = &l;
	note(__func__);
	recurse(*(int *)arg);
	print_log(&l, (long)gettid());
	return NULL;
}

/* The executable: the first object. */
static NOI int first_object(struct dl_phdr_info *info, size_t size,
			    void *arg)
{
	(void)size;
	*(void **)arg = (void *)info->dlpi_addr;
	return 1;
}

static KEEP int use_module(const char *path)
{
	int (*work)(int, void (*)(const char *));
	struct link_map *lm;
	const char *e;
	void *h;
	int r;

	note(__func__);
	if (dlopen("/nonexistent/funcs-nosuch.so", RTLD_NOW) == NULL &&
	    (e = dlerror()) && strstr(e, "funcs-nosuch") && !dlerror())
		printf("dlerror ok\n");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "funcs: %s\n", dlerror());
		return -1;
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0)
		printf("module %s\n", lm->l_name);
	*(void **)&work = dlsym(h, "funcmod_work");
	r = work ? work(3, note) : -1;
	dlclose(h);
	return r;
}

int main(int argc, char **argv)
{
	static struct log l;	/* the worker has its own */
	char exe[4096];
	void *base = NULL;
	pthread_t t;
	ssize_t n;
	int depth;

	log_of = &l;
	note(__func__);
	if (argc != 3)
		return 2;
	depth = atoi(argv[2]);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(first_object, &base);
	printf("exe %s %p\n", exe, base);
	recurse(depth);
	indirect(21);
	if (use_module(argv[1]) < 0)
		return 1;
	if (pthread_create(&t, NULL, worker, &depth) || pthread_join(t, NULL))
		return 1;
	print_log(&l, (long)gettid());
	return 0;
}
