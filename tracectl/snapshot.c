/*
 * snapshot.c - `tracectl switch` (discard mode) and `tracectl snapshot`
 * (flight mode): what the buffers hold, written out now.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

/*
 * A subcommand without arguments whose request m tracerd answers with
 * Done: *r gets the reply. Returns 0 or the exit status.
 */
static int no_arg_request(struct tracer__ctl *c, int argc, char **argv,
			  tracer_msg *m, tracer_msg **r)
{
	struct tracer__ctl_args a;
	int ret;

	tracer__ctl_args_init(&a, c, NULL, argc, argv);
	ret = tracer__ctl_no_args(&a);
	if (!ret)
		ret = tracer__ctl_resolve_socket(c);
	if (ret)
		return ret;
	*r = tracer__ctl_done(c, m);
	return *r ? 0 : CTL_FAIL;
}

int tracer__ctl_switch(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__SwitchRequest sw = TRACER__SWITCH_REQUEST__INIT;
	tracer_msg *r;
	int ret;

	m.body_case = TRACER__MESSAGE__BODY_SWITCH_REQUEST;
	m.switch_request = &sw;
	ret = no_arg_request(c, argc, argv, &m, &r);
	if (ret)
		return ret;
	printf("switched %" PRIu32 " process(es)\n", r->done->processes);
	tracer__wire_free(r);
	return CTL_OK;
}

int tracer__ctl_snapshot(struct tracer__ctl *c, int argc, char **argv)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__SnapshotRequest sn = TRACER__SNAPSHOT_REQUEST__INIT;
	tracer_msg *r;
	int ret;

	m.body_case = TRACER__MESSAGE__BODY_SNAPSHOT_REQUEST;
	m.snapshot_request = &sn;
	ret = no_arg_request(c, argc, argv, &m, &r);
	if (ret)
		return ret;
	printf("snapshot of %" PRIu32 " process(es); directory:\n%s\n",
	       r->done->processes, r->done->directory);
	tracer__wire_free(r);
	return CTL_OK;
}
