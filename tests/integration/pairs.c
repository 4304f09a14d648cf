/*
 * pairs.c - a traced program for tests/integration/test_export.sh and
 * test_timeline.sh (links libtracer): THREADS threads each record DEPTH
 * levels of nested pairs, ROUNDS times:
 *
 *   pairs THREADS ROUNDS DEPTH
 *
 *   per round:  test:work_begin
 *                 func:entry (DEPTH levels, nested)
 *                   test:tick (one at the innermost level)
 *                 func:exit ...
 *               test:work_end
 *
 * so a thread records ROUNDS * (DEPTH + 1) pairs and ROUNDS ticks. Each
 * thread names itself "pairs-N" (pthread_setname_np).
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracer.h>

static int rounds, depth;

static void nest(int t, int level)
{
	tracer_record("func:entry", "level %d of thread %d", level, t);
	if (level + 1 < depth)
		nest(t, level + 1);
	else
		tracer_record("test:tick", "thread %d innermost", t);
	tracer_record("func:exit", "level %d of thread %d", level, t);
}

static void *worker(void *arg)
{
	int t = (int)(long)arg, r;
	char name[16];

	snprintf(name, sizeof(name), "pairs-%d", t);
	pthread_setname_np(pthread_self(), name);
	for (r = 0; r < rounds; r++) {
		tracer_record("test:work_begin", "thread %d round %d", t, r);
		if (depth > 0)
			nest(t, 0);
		tracer_record("test:work_end", "thread %d round %d", t, r);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int n, i;

	if (argc != 4) {
		fprintf(stderr, "usage: pairs THREADS ROUNDS DEPTH\n");
		return 2;
	}
	n = atoi(argv[1]);
	rounds = atoi(argv[2]);
	depth = atoi(argv[3]);
	if (n < 1 || n > 64 || rounds < 0 || depth < 0 || depth > 1000)
		return 2;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
