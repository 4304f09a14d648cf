/*
 * tracerd_stubs.c - the rest of tracerd, as its output layer's unit tests
 * need it (tracerd_stubs.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracerd_stubs.h"
#include "tracerd/spill.h"

struct stub_sent stub_sent;

void tracerd_log(const char *fmt, ...)
{
	va_list ap;

	fputs("# tracerd: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

int tracerd_send(struct tracerd_client *c, const tracer_msg *msg,
		 const int *fds, int nfds)
{
	int i;

	(void)c;
	stub_sent_clear();
	stub_sent.messages++;
	stub_sent.body_case = (int)msg->body_case;
	for (i = 0; i < nfds && i < 4; i++)
		stub_sent.fds[i] = fds[i];
	stub_sent.nfds = nfds < 4 ? nfds : 4;
	return 0;
}

/* The tests call tracerd_spill_work() themselves. */
void tracerd_spill_kick(struct tracerd *d)
{
	(void)d;
}

void stub_sent_clear(void)
{
	int i;

	for (i = 0; i < stub_sent.nfds; i++)
		close(stub_sent.fds[i]);
	stub_sent.nfds = 0;
}

void stub_free_process(struct tracerd_process *p)
{
	tracerd_process_close_files(p);
	tracerd_pool_free(p);
	free(p);
}
