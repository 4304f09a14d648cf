/*
 * priority.c - tracerd's scheduling priority (--nice): raised while the
 * drain is behind, given back once it has caught up.
 *
 * Writers that keep every CPU busy leave tracerd its fair share, but
 * late: it waits out their time slices (4 ms ticks on the development VM)
 * while their rings fill, and two writers on two CPUs lost 2-7% of their
 * events at nice 0, 0.2-1.8% at nice -10 (bench_drain.sh drain). Held all
 * the time, though, nice -10 put tracerd's answer to every new process
 * ahead of the process itself on its CPU: a preloaded /bin/true started
 * in a session took 1 ms more (bench_start.sh). So tracerd runs at the
 * nice it was started with, takes --nice (-10 by default) when a drain
 * pass finds a ring at least 1/8 full (sink.c counts those in
 * d->drain_behind: it wakes at 1/64), and goes back once no pass has
 * found one for CALM_MS.
 *
 * With autogroups (a scheduling group per session), what weighs tracerd
 * against programs of other sessions is its group's nice: changed too
 * when tracerd leads its own session (--daemonize, a service), never for
 * a group it shares with whoever started it.
 *
 * Single-threaded: tracerd's loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tracerd.h"

#define CALM_MS		1000	/* no ring found behind this long: back */
#define GROUP_PATH	"/proc/self/autogroup"

/* The autogroup's nice ("/autogroup-42 nice 0"). Returns 0 or -1. */
static int group_read(int *nice)
{
	char buf[64];
	const char *at;
	ssize_t n;
	int fd = open(GROUP_PATH, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	at = strstr(buf, " nice ");
	if (!at)
		return -1;
	*nice = atoi(at + 6);
	return 0;
}

/* Returns 0 or a negative errno. */
static int group_write(int nice)
{
	char buf[16];
	int fd = open(GROUP_PATH, O_WRONLY | O_CLOEXEC), n, ret = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d", nice);
	if (write(fd, buf, (size_t)n) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Take nice (and the group's). Returns 0 or a negative errno (-EACCES,
 * -EPERM: not allowed). */
static int take(const struct tracerd_prio *pr, int nice, int group)
{
	int ret = 0, g = 0;

	/* The group first: once the process's nice shows the change (what
	 * ps and test_drain look at), the group's has it too. */
	if (pr->group)
		g = group_write(group);
	if (setpriority(PRIO_PROCESS, 0, nice) < 0)
		ret = -errno;
	return ret ? ret : g;
}

/* Back to the nice tracerd was started with (and its group's). */
static void take_base(const struct tracerd_prio *pr)
{
	take(pr, pr->base, pr->base_group);
}

int tracerd_priority_init(struct tracerd *d, int boost)
{
	struct tracerd_prio *pr = &d->prio;
	int ret;

	memset(pr, 0, sizeof(*pr));
	errno = 0;
	pr->base = getpriority(PRIO_PROCESS, 0);
	if (errno)
		return 0;
	pr->group = getsid(0) == getpid() && group_read(&pr->base_group) == 0;
	if (boost == 0 || boost >= pr->base)
		return 0;	/* nothing to raise */
	pr->boost = boost;
	/* Allowed? Then back to the start's until a drain is behind. */
	ret = take(pr, boost, boost);
	take_base(pr);
	pr->allowed = ret == 0;
	return ret;
}

void tracerd_priority_note(struct tracerd *d)
{
	struct tracerd_prio *pr = &d->prio;

	if (!pr->allowed || d->drain_behind == pr->behind_seen)
		return;
	pr->behind_seen = d->drain_behind;
	pr->last_ms = tracerd_now_ms();
	if (!pr->boosted && take(pr, pr->boost, pr->boost) == 0)
		pr->boosted = true;
}

void tracerd_priority_tick(struct tracerd *d)
{
	struct tracerd_prio *pr = &d->prio;

	if (!pr->boosted || tracerd_now_ms() - pr->last_ms < CALM_MS)
		return;
	take_base(pr);
	pr->boosted = false;
}
