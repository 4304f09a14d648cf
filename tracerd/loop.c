/*
 * loop.c - tracerd's event loop: the listening socket, the state page, the
 * timers and signals, and the shutdown that writes out what is held back.
 * main.c runs it as the daemon; tests/fuzz/fuzz_daemon.c drives the same
 * loop in process, one client at a time.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tracerd.h"
#include "relay.h"
#include "spill.h"

static void on_scan(uv_timer_t *t)
{
	struct tracerd *d = t->data;
	struct tracerd_process *p, *tmp;

	cds_list_for_each_entry_safe(p, tmp, &d->processes, node) {
		tracerd_process_scan(p);
		tracerd_process_check(p);	/* may free p */
	}
	tracerd_triggers_scan(d);
	tracerd_waiters_check(d);
	tracerd_server_sweep(d);
	tracerd_priority_tick(d);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct tracerd *d = h->data;

	tracerd_log("%s: writing what was recorded, then exiting",
		    strsignal(signum));
	tracerd_quit(d);
}

int tracerd_open(struct tracerd *d, uv_loop_t *loop, bool signals)
{
	int i, sigs[2] = { SIGTERM, SIGINT };

	d->loop = loop;
	d->listen_fd = -1;
	CDS_INIT_LIST_HEAD(&d->clients);
	CDS_INIT_LIST_HEAD(&d->processes);
	CDS_INIT_LIST_HEAD(&d->stop_waiters);
	CDS_INIT_LIST_HEAD(&d->switch_waiters);
	CDS_INIT_LIST_HEAD(&d->waiters);
	CDS_INIT_LIST_HEAD(&d->spill.list);
	CDS_INIT_LIST_HEAD(&d->relays);
	if (tracerd_listen(d))
		return -1;
	tracerd_state_open(d);
	tracerd_clock_init(d);
	uv_timer_init(d->loop, &d->scan_timer);
	d->scan_timer.data = d;
	uv_timer_start(&d->scan_timer, on_scan, d->cfg.scan_ms,
		       d->cfg.scan_ms);
	uv_timer_init(d->loop, &d->stop_timer);
	d->stop_timer.data = d;
	uv_timer_init(d->loop, &d->switch_timer);
	d->switch_timer.data = d;
	uv_timer_init(d->loop, &d->live_timer);
	d->live_timer.data = d;
	for (i = 0; signals && i < 2; i++) {
		uv_signal_init(d->loop, &d->sig[i]);
		d->sig[i].data = d;
		uv_signal_start(&d->sig[i], on_signal, sigs[i]);
	}
	uv_idle_init(d->loop, &d->spill.idle);	/* tracerd_spill_kick() */
	d->spill.idle.data = d;
	tracerd_ends_init(d);
	tracerd_triggers_init(d);
	tracerd_stock_init(d);	/* pools ready before the first program */
	return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

void tracerd_close(struct tracerd *d)
{
	struct tracerd_process *p, *tmp;

	tracerd_finish_ends(d);
	tracerd_server_close(d);
	tracerd_state_close(d);
	tracerd_stock_flush(d);
	free(d->stock);
	cds_list_for_each_entry_safe(p, tmp, &d->processes, node) {
		cds_list_del(&p->node);
		tracerd_process_free(p);
	}
	while (tracerd_spill_work(d))	/* nothing held back is left out */
		;
	tracerd_spill_free_all(d);
	tracerd_scratch_free(d);
	tracerd_triggers_free(d);
	tracerd_site_text_free();
	tracerd_relay_quit(d);
	uv_walk(d->loop, close_walk, NULL);
	uv_run(d->loop, UV_RUN_DEFAULT);
	uv_loop_close(d->loop);
	tracer__clock_history_free(&d->clock.history);
}

