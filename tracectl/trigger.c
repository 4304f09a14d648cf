/*
 * trigger.c - `tracectl trigger add|list|remove`: snapshots of a
 * flight-recorder session taken by tracerd when a matching event is
 * recorded (tracerd/trigger.c does the watching).
 *
 *   tracectl trigger add --on PATTERNS [--pid PID] [--interval T] --snapshot
 *   tracectl trigger list [--json]
 *   tracectl trigger remove ID|--all
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "json.h"
#include "trace_merge.h"	/* tracer__parse_time() */

enum { KEY_ON = 1, KEY_PID, KEY_INTERVAL, KEY_SNAPSHOT, KEY_JSON, KEY_ALL };

#define INTERVAL_MIN_NS	1000000ULL			/* 1 ms */
#define INTERVAL_MAX_NS	(24ULL * 3600 * 1000000000ULL)	/* a day */

/* Send m; the TriggerList reply, or NULL (reported). */
static tracer_msg *call(struct tracer__ctl *c, tracer_msg *m)
{
	if (tracer__ctl_resolve_socket(c))
		return NULL;
	return tracer__ctl_call(c, m, TRACER__MESSAGE__BODY_TRIGGER_LIST);
}

/* "every 10 s", "every 1.5 s", "every 250 ms". */
static void put_interval(FILE *f, uint64_t ms)
{
	if (ms % 1000 == 0)
		fprintf(f, "%" PRIu64 " s", ms / 1000);
	else if (ms >= 1000)
		fprintf(f, "%" PRIu64 ".%03" PRIu64 " s", ms / 1000, ms % 1000);
	else
		fprintf(f, "%" PRIu64 " ms", ms);
}

/* One trigger, one line (and its last snapshot on a second). */
static void show_one(const Tracer__Trigger *t)
{
	printf("trigger %" PRIu32 ": on '%s'", t->id, t->on);
	if (t->pid)
		printf(" in pid %" PRIu32, t->pid);
	printf(": %s at most every ", t->action);
	put_interval(stdout, t->interval_ms);
	printf("; %" PRIu64 " match(es), %" PRIu64 " snapshot(s)\n",
	       t->matched, t->fired);
	if (t->last_snapshot[0])
		printf("  last: %s: %s\n", t->last_event, t->last_snapshot);
}

static void json_one(struct tracer__json *j, const Tracer__Trigger *t)
{
	tracer__json_open(j, NULL, '{');
	tracer__json_u64(j, "id", t->id);
	tracer__json_str(j, "on", t->on);
	tracer__json_u64(j, "pid", t->pid);
	tracer__json_str(j, "action", t->action);
	tracer__json_u64(j, "interval_ms", t->interval_ms);
	tracer__json_u64(j, "matched", t->matched);
	tracer__json_u64(j, "snapshots", t->fired);
	tracer__json_str(j, "last_event", t->last_event);
	tracer__json_str(j, "last_snapshot", t->last_snapshot);
	tracer__json_close(j, '}');
}

/* ---- add ---------------------------------------------------------------- */

static const struct tracer__ctl_opt add_opts[] = {
	{ "on", KEY_ON, true, 0 },
	{ "pid", KEY_PID, true, 0 },
	{ "interval", KEY_INTERVAL, true, 0 },
	{ "snapshot", KEY_SNAPSHOT, false, 0 },
	{ NULL, 0, false, 0 },
};

/* T as a duration in ns: tracer__parse_time()'s (10s, 500ms, 2.5), or
 * minutes and hours (5m, 1.5h). Returns 0 or -EINVAL. */
static int duration_ns(const char *val, uint64_t *ns)
{
	size_t len = strlen(val);
	uint64_t per = 0;
	char num[64];
	bool rel;

	if (len > 1 && len < sizeof(num) && (val[len - 1] == 'm' ||
					      val[len - 1] == 'h')) {
		per = val[len - 1] == 'm' ? 60 : 3600;
		memcpy(num, val, len - 1);
		num[len - 1] = '\0';
		val = num;
	}
	if (tracer__parse_time(val, ns, &rel) || rel ||
	    (per && *ns > UINT64_MAX / per))
		return -EINVAL;
	*ns *= per ? per : 1;
	return 0;
}

/* --interval T: 1 ms to a day; 10s, 500ms, 2 (seconds), 5m, 1h. */
static int interval_arg(const struct tracer__ctl *c, const char *val,
			uint64_t *ms)
{
	uint64_t ns;

	if (duration_ns(val, &ns) || ns < INTERVAL_MIN_NS ||
	    ns > INTERVAL_MAX_NS)
		return tracer__ctl_usage_error(c, "--interval: '%s' is not a "
					       "duration from 1ms to 24h (10s, "
					       "500ms, 5m, 1h)", val);
	*ms = ns / 1000000;
	return 0;
}

static int add_opt(struct tracer__ctl_args *a, int key, Tracer__Trigger *t)
{
	switch (key) {
	case KEY_ON:
		if (!a->val[0])
			return tracer__ctl_usage_error(a->ctl, "--on: empty "
						       "PATTERNS");
		t->on = (char *)a->val;
		return tracer__ctl_patterns(a->val);
	case KEY_PID:
		return tracer__ctl_pid(a->ctl, a->val, &t->pid);
	case KEY_INTERVAL:
		return interval_arg(a->ctl, a->val, &t->interval_ms);
	case KEY_SNAPSHOT:
		t->action = (char *)"snapshot";
		return 0;
	}
	return tracer__ctl_syntax_error(a->ctl, "unexpected argument '%s'",
					a->val);
}

static int add_args(struct tracer__ctl_args *a, Tracer__Trigger *t)
{
	int key, ret = 0;

	a->opts = add_opts;
	while (!ret && (key = tracer__ctl_next(a)) != CTL_END) {
		if (key == CTL_STOP)
			return a->status;
		ret = add_opt(a, key, t);
	}
	if (!ret && !t->on[0])
		return tracer__ctl_syntax_error(a->ctl, "missing --on "
						"PATTERNS");
	if (!ret && !t->action[0])
		return tracer__ctl_syntax_error(a->ctl, "missing the action: "
						"--snapshot");
	return ret;
}

static int add_cmd(struct tracer__ctl_args *a)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__TriggerAdd ta = TRACER__TRIGGER_ADD__INIT;
	Tracer__Trigger t = TRACER__TRIGGER__INIT;
	tracer_msg *r;
	int ret = add_args(a, &t);

	if (ret)
		return ret;
	ta.trigger = &t;
	m.body_case = TRACER__MESSAGE__BODY_TRIGGER_ADD;
	m.trigger_add = &ta;
	r = call(a->ctl, &m);
	if (!r)
		return CTL_FAIL;
	if (r->trigger_list->n_triggers == 1) {
		printf("added ");
		show_one(r->trigger_list->triggers[0]);
	}
	tracer__wire_free(r);
	return CTL_OK;
}

/* ---- list, remove ------------------------------------------------------- */

static const struct tracer__ctl_opt list_opts[] = {
	{ "json", KEY_JSON, false, 0 },
	{ NULL, 0, false, 0 },
};

static int list_cmd(struct tracer__ctl_args *a)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__TriggerListRequest lr = TRACER__TRIGGER_LIST_REQUEST__INIT;
	struct tracer__json j;
	bool json = false;
	tracer_msg *r;
	size_t i;
	int key;

	a->opts = list_opts;
	while ((key = tracer__ctl_next(a)) != CTL_END) {
		if (key == CTL_STOP)
			return a->status;
		if (key == CTL_ARG)
			return tracer__ctl_syntax_error(a->ctl, "unexpected "
							"argument '%s'", a->val);
		json = true;
	}
	m.body_case = TRACER__MESSAGE__BODY_TRIGGER_LIST_REQUEST;
	m.trigger_list_request = &lr;
	r = call(a->ctl, &m);
	if (!r)
		return CTL_FAIL;
	if (json) {
		tracer__json_init(&j, stdout);
		tracer__json_open(&j, NULL, '[');
	}
	for (i = 0; i < r->trigger_list->n_triggers; i++) {
		if (json)
			json_one(&j, r->trigger_list->triggers[i]);
		else
			show_one(r->trigger_list->triggers[i]);
	}
	if (json) {
		tracer__json_close(&j, ']');
		putchar('\n');
	} else if (!r->trigger_list->n_triggers) {
		printf("no triggers\n");
	}
	tracer__wire_free(r);
	return CTL_OK;
}

static const struct tracer__ctl_opt remove_opts[] = {
	{ "all", KEY_ALL, false, 0 },
	{ NULL, 0, false, 0 },
};

/* remove's arguments: ID or --all. Returns 0 or the exit status. */
static int remove_args(struct tracer__ctl_args *a, Tracer__TriggerRemove *tr)
{
	uint64_t id = 0;
	int key, ret = 0;

	a->opts = remove_opts;
	while (!ret && (key = tracer__ctl_next(a)) != CTL_END) {
		if (key == CTL_STOP)
			return a->status;
		if (key == KEY_ALL)
			tr->all = true;
		else if (tr->id)
			return tracer__ctl_syntax_error(a->ctl, "unexpected "
							"argument '%s'", a->val);
		else if (!(ret = tracer__ctl_number(a->ctl, "ID", a->val, 1,
						    UINT32_MAX, 0, &id)))
			tr->id = (uint32_t)id;
	}
	if (!ret && !tr->id == !tr->all)
		return tracer__ctl_syntax_error(a->ctl, tr->all ? "ID and --all "
						"together" : "missing ID (or "
						"--all)");
	return ret;
}

static int remove_cmd(struct tracer__ctl_args *a)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__TriggerRemove tr = TRACER__TRIGGER_REMOVE__INIT;
	tracer_msg *r;
	size_t i;
	int ret = remove_args(a, &tr);

	if (ret)
		return ret;
	m.body_case = TRACER__MESSAGE__BODY_TRIGGER_REMOVE;
	m.trigger_remove = &tr;
	r = call(a->ctl, &m);
	if (!r)
		return CTL_FAIL;
	for (i = 0; i < r->trigger_list->n_triggers; i++)
		printf("removed trigger %" PRIu32 "\n",
		       r->trigger_list->triggers[i]->id);
	if (!r->trigger_list->n_triggers)
		printf("no triggers\n");
	tracer__wire_free(r);
	return CTL_OK;
}

int tracer__ctl_trigger(struct tracer__ctl *c, int argc, char **argv)
{
	struct tracer__ctl_args a;
	int key;

	/* The action first: its options come after it. */
	tracer__ctl_args_init(&a, c, NULL, argc, argv);
	key = tracer__ctl_next(&a);
	if (key == CTL_STOP)
		return a.status;
	if (key != CTL_ARG)
		return tracer__ctl_syntax_error(c, "missing the action: add, "
						"list or remove");
	if (!strcmp(a.val, "add"))
		return add_cmd(&a);
	if (!strcmp(a.val, "list"))
		return list_cmd(&a);
	if (!strcmp(a.val, "remove"))
		return remove_cmd(&a);
	return tracer__ctl_syntax_error(c, "unknown action '%s' (add, list, "
					"remove)", a.val);
}
