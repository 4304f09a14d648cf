/*
 * list.c - `tracectl list [--pid PID] [--json]`: the events the traced
 * processes registered, one line per distinct name, or every call site as
 * JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "json.h"

enum { KEY_PID = 1, KEY_JSON };

#define NAME_WIDTH_MAX 48

struct entry {
	const Tracer__EventInfo *e;
	size_t index;			/* in the reply */
};

/* By name, then pid, then order in the reply. */
static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int d = strcmp(x->e->name, y->e->name);

	if (d)
		return d;
	if (x->e->pid != y->e->pid)
		return x->e->pid < y->e->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* A format string on one line: control characters escaped. */
static void print_escaped(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\t')
			fputs("\\t", stdout);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			printf("\\x%02x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('\n');
}

/* Print the group of entries v[0..n) named alike. */
static void print_group(const struct entry *v, size_t n, int width)
{
	size_t i, procs = 0, on = 0;

	for (i = 0; i < n; i++) {
		procs += i == 0 || v[i].e->pid != v[i - 1].e->pid;
		on += v[i].e->enabled;
	}
	printf("%-*s %9zu %-8s ", width, v[0].e->name, procs,
	       on == n ? "yes" : on ? "partly" : "no");
	print_escaped(v[0].e->format);
}

static void print_list(struct entry *v, size_t n)
{
	size_t i, j;
	int width = 4;

	for (i = 0; i < n; i++) {
		size_t len = strlen(v[i].e->name);

		if ((int)len > width)
			width = len > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
	}
	qsort(v, n, sizeof(*v), by_name);
	printf("%-*s %9s %-8s %s\n", width, "NAME", "PROCESSES", "RECORDED",
	       "FORMAT");
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(v[j].e->name, v[i].e->name);)
			j++;
		print_group(v + i, j - i, width);
	}
}

static void json_list(const Tracer__EventList *l)
{
	struct tracer__json j;
	size_t i;

	tracer__json_init(&j, stdout);
	tracer__json_open(&j, NULL, '[');
	for (i = 0; i < l->n_events; i++) {
		const Tracer__EventInfo *e = l->events[i];

		tracer__json_open(&j, NULL, '{');
		tracer__json_str(&j, "name", e->name);
		tracer__json_str(&j, "format", e->format);
		tracer__json_u64(&j, "pid", e->pid);
		tracer__json_bool(&j, "vital", e->vital);
		tracer__json_bool(&j, "enabled", e->enabled);
		tracer__json_str(&j, "file", e->file);
		tracer__json_u64(&j, "line", e->line);
		tracer__json_close(&j, '}');
	}
	tracer__json_close(&j, ']');
}

static int show(const Tracer__EventList *l, bool json)
{
	struct entry *v;
	size_t i;

	if (json) {
		json_list(l);
		return CTL_OK;
	}
	v = calloc(l->n_events ? l->n_events : 1, sizeof(*v));
	if (!v)
		return tracer__ctl_fail("out of memory");
	for (i = 0; i < l->n_events; i++) {
		v[i].e = l->events[i];
		v[i].index = i;
	}
	print_list(v, l->n_events);
	free(v);
	return CTL_OK;
}

static const struct tracer__ctl_opt list_opts[] = {
	{ "pid", KEY_PID, true, 0 },
	{ "json", KEY_JSON, false, 0 },
	{ NULL, 0, false, 0 },
};

/* Options. Returns 0 or the exit status. */
static int list_args(struct tracer__ctl *c, int argc, char **argv,
		     uint32_t *pid, bool *json)
{
	struct tracer__ctl_args a;
	int key, ret = 0;

	tracer__ctl_args_init(&a, c, list_opts, argc, argv);
	while (!ret && (key = tracer__ctl_next(&a)) != CTL_END) {
		if (key == CTL_STOP)
			return a.status;
		if (key == CTL_ARG)
			return tracer__ctl_syntax_error(c,
				"unexpected argument '%s'", a.val);
		if (key == KEY_JSON)
			*json = true;
		else
			ret = tracer__ctl_pid(c, a.val, pid);
	}
	return ret;
}

int tracer__ctl_list(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__ListRequest lr = TRACER__LIST_REQUEST__INIT;
	bool json = false;
	tracer_msg *r;
	int ret = list_args(c, argc, argv, &lr.pid, &json);

	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	if (ret)
		return ret;
	m.body_case = TRACER__MESSAGE__BODY_LIST_REQUEST;
	m.list_request = &lr;
	r = tracer__ctl_call(c, &m, TRACER__MESSAGE__BODY_EVENT_LIST);
	if (!r)
		return CTL_FAIL;
	ret = show(r->event_list, json);
	tracer__wire_free(r);
	return ret;
}
