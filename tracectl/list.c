/*
 * list.c - `tracectl list [--pid PID] [--json]`: the events the traced
 * processes registered, one line per distinct name, or every call site as
 * JSON.
 *
 * An event is shown by its fields, name and C type, in the order they are
 * recorded: `fd (int), addr (string), result (int)`. The types are those
 * the event's printf format reads (tracer__format_arg_types()), the names
 * those its CTF traces give the fields (tracer__ctf_field_names(), as a
 * CTF reader shows them): what babeltrace2 prints, and what the event's
 * message in `tracectl view` says in front of each value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "ctf_meta.h"
#include "format.h"
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

/* The fields of an event: names[i], types[i] (NULL: a value the
 * format does not read, "?"). */
struct fields {
	size_t n;
	const char *types[TRACER_MAX_ARGS];
	char names[TRACER_MAX_ARGS][TRACER_CTF_NAME_MAX];
};

/* The type letter of a C type name (for tracer__ctf_field_names()). */
static char type_letter(const char *type)
{
	if (!type)
		return TRACER_ARG_SIGNED;
	if (!strcmp(type, "string"))
		return TRACER_ARG_STRING;
	if (!strcmp(type, "pointer"))
		return TRACER_ARG_POINTER;
	if (!strcmp(type, "double"))
		return TRACER_ARG_DOUBLE;
	if (!strcmp(type, "long double"))
		return TRACER_ARG_LDOUBLE;
	return TRACER_ARG_SIGNED;
}

/* The fields of an event of this format, into *f; then, when the call
 * site's letters (types, "" if unknown) end with an errno value that
 * the format does not read (the library's events), the field errno. */
static void event_fields(const char *format, const char *types,
			 struct fields *f)
{
	char letters[TRACER_MAX_ARGS + 1];
	size_t i;

	f->n = tracer__format_arg_types(format, f->types, TRACER_MAX_ARGS);
	for (i = 0; i < f->n; i++)
		letters[i] = type_letter(f->types[i]);
	if (f->n < TRACER_MAX_ARGS && strlen(types) == f->n + 1 &&
	    types[f->n] == TRACER_ARG_ERRNO) {
		f->types[f->n] = "errno";
		letters[f->n++] = TRACER_ARG_ERRNO;
	}
	letters[f->n] = '\0';
	if (tracer__ctf_field_names(format, letters, f->names))
		f->n = 0;	/* cannot happen: n <= TRACER_MAX_ARGS */
}

/* A field name as a CTF reader shows it: one leading '_' dropped
 * (tracer__ctf_field_names() adds one to reserved words). */
static const char *shown_name(const char *name)
{
	return name[0] == '_' && name[1] ? name + 1 : name;
}

/* The fields of an event on one line: "fd (int), addr (string)", "-" for
 * none. */
static void print_fields(const char *format, const char *types)
{
	struct fields f;
	size_t i;

	event_fields(format, types, &f);
	if (!f.n)
		putchar('-');
	for (i = 0; i < f.n; i++)
		printf("%s%s (%s)", i ? ", " : "", shown_name(f.names[i]),
		       f.types[i] ? f.types[i] : "?");
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
	print_fields(v[0].e->format, v[0].e->types);
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
	       "FIELDS");
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(v[j].e->name, v[i].e->name);)
			j++;
		print_group(v + i, j - i, width);
	}
}

/* "fields": [{"name": "fd", "type": "int"}, ...] */
static void json_fields(struct tracer__json *j, const char *format,
			const char *types)
{
	struct fields f;
	size_t i;

	event_fields(format, types, &f);
	tracer__json_open(j, "fields", '[');
	for (i = 0; i < f.n; i++) {
		tracer__json_open(j, NULL, '{');
		tracer__json_str(j, "name", shown_name(f.names[i]));
		tracer__json_str(j, "type", f.types[i] ? f.types[i] : "?");
		tracer__json_close(j, '}');
	}
	tracer__json_close(j, ']');
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
		json_fields(&j, e->format, e->types);
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

/* The pids tracerd listed events of (l may be NULL): how many, into
 * *pids (to free), or -ENOMEM. */
static ssize_t known_pids(const Tracer__EventList *l, uint32_t **pids)
{
	size_t i, n = 0;

	*pids = calloc(l && l->n_events ? l->n_events : 1, sizeof(**pids));
	if (!*pids)
		return -ENOMEM;
	for (i = 0; l && i < l->n_events; i++)
		if (!n || (*pids)[n - 1] != l->events[i]->pid)
			(*pids)[n++] = l->events[i]->pid;
	return (ssize_t)n;
}

/*
 * The events of the processes that wait for a session (tracerd does not
 * know them): process pid, or every one but those of l. Returns 0 or a
 * negative errno.
 */
static int add_waiting(const char *socket, const Tracer__EventList *l,
		       uint32_t pid, struct tracer__waiting_events *w)
{
	struct tracer__waiting *v;
	uint32_t *known;
	ssize_t n = pid ? 0 : known_pids(l, &known), i;
	int ret = 0;

	if (pid)
		return tracer__ctl_waiting_events(pid, w);
	if (n >= 0) {
		n = tracer__ctl_waiting(socket, known, (size_t)n, &v);
		free(known);
	}
	for (i = 0; i < n && ret != -ENOMEM; i++)
		ret = tracer__ctl_waiting_events(v[i].pid, w);	/* or gone */
	if (n > 0)
		free(v);
	return n < 0 ? (int)n : ret == -ENOMEM ? ret : 0;
}

/* tracerd's events (l, may be NULL) and those of w, shown. */
static int show_all(const Tracer__EventList *l,
		    const struct tracer__waiting_events *w, bool json)
{
	Tracer__EventList all = TRACER__EVENT_LIST__INIT;
	size_t i, n = l ? l->n_events : 0;
	int ret;

	all.events = calloc(n + w->n + 1, sizeof(*all.events));
	if (!all.events)
		return tracer__ctl_fail("out of memory");
	for (i = 0; i < n; i++)
		all.events[all.n_events++] = l->events[i];
	for (i = 0; i < w->n; i++)
		all.events[all.n_events++] = &w->info[i];
	ret = show(&all, json);
	free(all.events);
	return ret;
}

int tracer__ctl_list(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__ListRequest lr = TRACER__LIST_REQUEST__INIT;
	struct tracer__waiting_events w = { NULL, 0, 0, NULL, 0 };
	char why[TRACER_PATH_MAX + 4096];
	bool json = false;
	tracer_msg *r;
	int ret = list_args(c, argc, argv, &lr.pid, &json);

	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	if (ret)
		return ret;
	m.body_case = TRACER__MESSAGE__BODY_LIST_REQUEST;
	m.list_request = &lr;
	r = tracer__ctl_request(c, &m, TRACER__MESSAGE__BODY_EVENT_LIST,
				why, sizeof(why));
	/* A pid tracerd does not know may be one that waits. */
	if (!r && !(lr.pid && tracer__ctl_maps_state(c->socket, lr.pid)))
		return tracer__ctl_fail("%s", why);
	if (!r || !lr.pid)	/* that one, or every one */
		ret = add_waiting(c->socket, r ? r->event_list : NULL,
				  lr.pid, &w);
	if (ret)
		ret = tracer__ctl_fail("cannot read the events of the "
				       "processes that wait for a session: %s",
				       strerror(-ret));
	else
		ret = show_all(r ? r->event_list : NULL, &w, json);
	tracer__ctl_waiting_events_free(&w);
	if (r)
		tracer__wire_free(r);
	return ret;
}
