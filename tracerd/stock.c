/*
 * stock.c - pools made ahead of the programs that will need them.
 *
 * A program's start waits for tracerd's reply to its Register; making a
 * pool on that path (memfd_create, ftruncate, seals, mmap, then the first
 * touch of every buffer's channel headers: tens of pages of shared
 * memory) was most of the round trip. tracerd keeps STOCK_KITS pools,
 * each with its control page, made in the loop's idle time: a
 * registration takes one (the reply goes out at once) and the idle
 * handle makes the next.
 *
 * A kit is a "shadow" process (struct tracerd_process with only its
 * daemon set) that tracerd_process_make_pool() gave a control page and
 * segment 0 for the geometry in force; tracerd_process_take_pool() moves
 * them into the registering process. A kit whose geometry no longer fits
 * (a session with its own sub-buffer size started) is dropped when it
 * would be taken, and the stock is made again.
 *
 * Everything runs on the loop thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracerd.h"

#define STOCK_KITS	4

struct tracerd_kit {
	struct tracerd_process *shadow;
	int ctl_fd, seg_fd;
};

static void drop_kit(struct tracerd_kit *k)
{
	close(k->ctl_fd);
	close(k->seg_fd);
	tracerd_process_free(k->shadow);
}

/* Make one kit; false when it cannot be made now. */
static bool make_kit(struct tracerd *d, struct tracerd_kit *k)
{
	struct tracerd_process *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return false;
	s->d = d;
	s->wake_fd = s->pidfd = s->control_fd = -1;
	ret = tracerd_process_make_pool(s, &k->ctl_fd, &k->seg_fd);
	if (ret) {
		if (k->ctl_fd >= 0)
			close(k->ctl_fd);
		tracerd_process_free(s);
		return false;
	}
	k->shadow = s;
	return true;
}

static void on_idle(uv_idle_t *h)
{
	struct tracerd *d = h->data;

	if (d->quitting || d->nstock == STOCK_KITS ||
	    !make_kit(d, &d->stock[d->nstock])) {
		uv_idle_stop(h);	/* full, or failing: try at next take */
		d->stock_filling = false;
		return;
	}
	d->nstock++;
}

static void refill(struct tracerd *d)
{
	if (d->stock_filling || d->quitting || !d->stock)
		return;
	d->stock_filling = true;
	uv_idle_start(&d->stock_idle, on_idle);
}

void tracerd_stock_init(struct tracerd *d)
{
	d->stock = calloc(STOCK_KITS, sizeof(*d->stock));
	uv_idle_init(d->loop, &d->stock_idle);
	d->stock_idle.data = d;
	refill(d);
}

int tracerd_stock_take(struct tracerd_process *p, int *ctl_fd, int *seg_fd)
{
	struct tracerd *d = p->d;
	struct tracerd_kit k;

	while (d->nstock > 0) {
		k = d->stock[--d->nstock];
		if (tracerd_process_pool_fits(k.shadow)) {
			tracerd_process_take_pool(p, k.shadow);
			*ctl_fd = k.ctl_fd;
			*seg_fd = k.seg_fd;
			refill(d);
			return 0;
		}
		drop_kit(&k);	/* made for another geometry */
	}
	refill(d);
	return -ENOENT;
}

void tracerd_stock_flush(struct tracerd *d)
{
	while (d->nstock > 0)
		drop_kit(&d->stock[--d->nstock]);
	if (d->stock_filling)
		uv_idle_stop(&d->stock_idle);
	d->stock_filling = false;
}
