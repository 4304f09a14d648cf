/*
 * bench_spawn.c - how long a program takes from spawn to exit, in
 * several environments measured in turn (round robin, so that whatever
 * else the machine does weighs on every case alike).
 *
 *   bench_spawn [-n RUNS] -c 'NAME|VAR=VALUE VAR=VALUE...' [-c ...]
 *               -- PROGRAM [ARG...]
 *
 * Each case adds its variables to the environment (an empty value
 * removes the variable). Prints, per case, the median and 90th
 * percentile in milliseconds, and the median's difference from the first
 * case's. Used by bench_start.sh.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CASES	8
#define MAX_VARS	8

struct bench_case {
	char *name;
	char **env;
	double *ms;
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Is var (NAME=...) set by one of vars? */
static int overridden(const char *var, char **vars, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t k = strcspn(vars[i], "=");

		if (!strncmp(var, vars[i], k) && var[k] == '=')
			return 1;
	}
	return 0;
}

/* environ with vars (NAME=VALUE; NAME= removes NAME). */
static char **make_env(char **vars, int n)
{
	extern char **environ;
	size_t count = 0, i;
	char **env;
	int j;

	while (environ[count])
		count++;
	env = calloc(count + (size_t)n + 1, sizeof(*env));
	if (!env)
		exit(1);
	for (i = 0, count = 0; environ[i]; i++)
		if (!overridden(environ[i], vars, n))
			env[count++] = environ[i];
	for (j = 0; j < n; j++)
		if (vars[j][strcspn(vars[j], "=") + 1])
			env[count++] = vars[j];
	return env;
}

static void parse_case(struct bench_case *c, char *spec, int runs)
{
	char *vars[MAX_VARS], *bar = strchr(spec, '|'), *tok, *save;
	int n = 0;

	c->name = spec;
	if (bar) {
		*bar = '\0';
		for (tok = strtok_r(bar + 1, " ", &save); tok && n < MAX_VARS;
		     tok = strtok_r(NULL, " ", &save))
			vars[n++] = tok;
	}
	c->env = make_env(vars, n);
	c->ms = calloc((size_t)runs, sizeof(double));
	if (!c->ms)
		exit(1);
}

static double run_once(char **argv, char **env)
{
	double t0 = now_ms();
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, env)) {
		perror("bench_spawn: posix_spawn");
		exit(1);
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	return now_ms() - t0;
}

static void report(struct bench_case *c, int ncases, int runs)
{
	double base = 0;
	int i;

	printf("%-36s %8s %8s %9s\n", "case", "median", "p90", "vs first");
	for (i = 0; i < ncases; i++) {
		double med, p90;

		qsort(c[i].ms, (size_t)runs, sizeof(double), cmp_double);
		med = c[i].ms[runs / 2];
		p90 = c[i].ms[runs * 9 / 10];
		if (i == 0)
			base = med;
		printf("%-36s %8.3f %8.3f %+9.3f\n", c[i].name, med, p90,
		       med - base);
	}
}

int main(int argc, char **argv)
{
	struct bench_case c[MAX_CASES];
	int runs = 300, ncases = 0, opt, r, i;

	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			runs = atoi(optarg);
		else if (opt == 'c' && ncases < MAX_CASES)
			c[ncases++].name = optarg;
		else
			goto usage;
	}
	if (optind >= argc || ncases == 0 || runs < 1)
		goto usage;
	for (i = 0; i < ncases; i++)
		parse_case(&c[i], c[i].name, runs);
	for (i = 0; i < ncases; i++)	/* warm the caches once */
		run_once(argv + optind, c[i].env);
	for (r = 0; r < runs; r++)
		for (i = 0; i < ncases; i++)
			c[i].ms[r] = run_once(argv + optind, c[i].env);
	report(c, ncases, runs);
	return 0;
usage:
	fprintf(stderr, "usage: bench_spawn [-n RUNS] -c 'NAME|VAR=VALUE...' "
		"[-c ...] -- PROGRAM [ARG...]\n");
	return 2;
}
