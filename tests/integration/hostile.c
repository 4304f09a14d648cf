/*
 * hostile.c - a client that attacks tracerd, for test_hostile.sh: each
 * case is one of the attacks tracerd must survive (tracerd(8), THREAT
 * MODEL).
 *
 *   hostile SOCKET adopt-unsealed   register, hand over a copy of the pool
 *                                   in an unsealed memfd as a process whose
 *                                   tracerd died, then truncate it to 0
 *   hostile SOCKET adopt-huge       hand over a sparse pool (tracerd's own
 *                                   layout, sealed) whose rings claim
 *                                   128 MiB sub-buffers
 *   hostile SOCKET adopt-flip N     hand over a pool N times while a
 *                                   thread flips its header's buffer count
 *                                   between the right one and one past the
 *                                   segment (tracerd must check what it
 *                                   uses); prints "handed over N times"
 *   hostile SOCKET adopt-pipe       hand over a pipe as the pool
 *   hostile SOCKET idle N           open N connections that send 6 bytes
 *                                   each (half a frame header), print
 *                                   "holding K" (K: those tracerd took),
 *                                   hold them until stdin closes
 *   hostile SOCKET silent N         open N connections that send 6 bytes
 *                                   each, wait (30 s at most) until tracerd
 *                                   closed them all, print "closed K of N
 *                                   after MS ms"
 *   hostile SOCKET garbage N        N connections in turn, each sending
 *                                   a malformed frame
 *   hostile SOCKET sites N SIZE     register, then N call sites whose
 *                                   strings are SIZE bytes each; prints
 *                                   "accepted" or "refused: MESSAGE"
 *   hostile SOCKET salvage N        register N call sites, grow the pool
 *                                   to 150 buffers or more, take every
 *                                   buffer and write records
 *                                   of the last id into its default ring,
 *                                   a sub-buffer and a half, the last one
 *                                   left uncommitted, and exit: tracerd
 *                                   salvages every open sub-buffer
 *   hostile SOCKET flood N          register, grow the pool to N buffers
 *                                   (at most 256), fill the default ring
 *                                   of each, its first record committed
 *                                   last (tracerd can read none before),
 *                                   and exit: tracerd has all of them to
 *                                   write out at once; prints "flooded B
 *                                   buffers with R records"
 *   hostile SOCKET vanished N       the same, each buffer owned by a thread
 *                                   that has ended (its thread id gone),
 *                                   the first records never committed,
 *                                   and stay: tracerd salvages them as the
 *                                   buffers of vanished threads and gives
 *                                   them back; prints "reclaimed K of N in
 *                                   MS ms" once it has (60 s at most)
 *   hostile SOCKET bad-packets MS   register, take a buffer and write
 *                                   packets with a bad magic into its
 *                                   default ring, about 1000 a second,
 *                                   for MS ms (tracerd reports and skips
 *                                   each); prints "wrote P bad packets"
 *
 * Prints "adopted" or "refused: MESSAGE" (tracerd's answer to the
 * hand-over), then carries out the rest of the attack; exits 0 when it
 * could.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/tracerd_stubs.h"
#include "proto/wire.h"

static const char *sock_path;

static int dial(void)
{
	int fd = tracer__wire_connect(sock_path, 0);

	if (fd < 0) {
		fprintf(stderr, "hostile: connect: %s\n", strerror(-fd));
		exit(1);
	}
	return fd;
}

/* Register as this process; adopt: that many segments follow. */
static void send_register(int fd, uint32_t adopt)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__Register r = TRACER__REGISTER__INIT;

	r.pid = (uint32_t)getpid();
	r.ppid = (uint32_t)getppid();
	r.name = (char *)"hostile";
	r.adopt_segments = adopt;
	m.body_case = TRACER__MESSAGE__BODY_REGISTER;
	m.register_ = &r;
	if (tracer__wire_send(fd, &m, NULL, 0, 5000)) {
		fprintf(stderr, "hostile: cannot send Register\n");
		exit(1);
	}
}

static void send_segment(int fd, uint32_t index, uint64_t size, int seg)
{
	tracer_msg m = TRACER__MESSAGE__INIT;
	Tracer__Segment s = TRACER__SEGMENT__INIT;

	s.index = index;
	s.size = size;
	m.body_case = TRACER__MESSAGE__BODY_SEGMENT;
	m.segment = &s;
	if (tracer__wire_send(fd, &m, &seg, 1, 5000)) {
		fprintf(stderr, "hostile: cannot send Segment\n");
		exit(1);
	}
}

/* tracerd's answer to a registration: Registered or Error. Returns 0 if
 * registered (prints "adopted" when adopting), 1 if refused. */
static int answer(int fd, bool adopting)
{
	tracer_msg *m = NULL;
	const char *why = NULL;
	int fds[TRACER_WIRE_MAX_FDS], nfds = 0, i, ret;

	for (;;) {
		ret = tracer__wire_recv(fd, &m, fds, &nfds, 10000, &why);
		if (ret) {
			printf("refused: %s\n", why ? why : strerror(-ret));
			return 1;
		}
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (m->body_case == TRACER__MESSAGE__BODY_REGISTERED) {
			if (adopting)
				printf("adopted\n");
			tracer__wire_free(m);
			return 0;
		}
		if (m->body_case == TRACER__MESSAGE__BODY_ERROR) {
			printf("refused: %s\n", m->error->message);
			tracer__wire_free(m);
			return 1;
		}
		tracer__wire_free(m);	/* a Filter, say: wait on */
	}
}

/* A pool in tracerd's own layout, from its own code (sealed, sparse):
 * subbuf_size bytes x count sub-buffers in the default channel. */
static int make_pool(uint64_t subbuf_size, uint64_t count, uint64_t *size)
{
	static struct tracerd d;
	struct tracerd_process *p = calloc(1, sizeof(*p));
	int fd;

	if (!p)
		exit(1);
	tracerd_config_defaults(&d.cfg);
	CDS_INIT_LIST_HEAD(&d.spill.list);
	if (subbuf_size) {
		d.cfg.subbuf_size[0] = subbuf_size;
		d.cfg.subbuf_count[0] = count;
		d.cfg.max_memory = UINT64_MAX;
		d.cfg.buffers = 1;
	}
	p->d = &d;
	fd = tracerd_pool_create(p);
	if (fd < 0) {
		fprintf(stderr, "hostile: no pool: %s\n", strerror(-fd));
		exit(1);
	}
	*size = p->pool.seg[0].size;
	stub_free_process(p);	/* fd is the process's: it stays */
	return fd;
}

/* A copy of seg (size bytes) in a memfd without seals. */
static int unsealed_copy(int seg, uint64_t size)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC);
	off_t off = 0;

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0)
		exit(1);
	while ((uint64_t)off < size)
		if (sendfile(fd, seg, &off, size - (uint64_t)off) <= 0)
			exit(1);
	return fd;
}

/* Hand seg over as the pool of a process whose tracerd died. */
static int adopt(int seg, uint64_t size)
{
	int fd = dial(), refused;

	send_register(fd, 1);
	send_segment(fd, 0, size, seg);
	refused = answer(fd, true);
	return refused ? -1 : fd;
}

/* Let tracerd go through its loop: a request on another connection. */
static void round_trip(void)
{
	tracer_msg m = TRACER__MESSAGE__INIT, *r = NULL;
	Tracer__StatusRequest s = TRACER__STATUS_REQUEST__INIT;
	int fd = dial();

	m.body_case = TRACER__MESSAGE__BODY_STATUS_REQUEST;
	m.status_request = &s;
	if (!tracer__wire_send(fd, &m, NULL, 0, 5000) &&
	    !tracer__wire_recv(fd, &r, NULL, NULL, 5000, NULL))
		tracer__wire_free(r);
	close(fd);
}

static int adopt_unsealed(void)
{
	uint64_t size;
	int seg = make_pool(0, 0, &size), copy = unsealed_copy(seg, size);
	int conn = adopt(copy, size);

	/* Pull the memory from under tracerd's mapping. */
	if (ftruncate(copy, 0) < 0)
		return 1;
	round_trip();
	if (conn >= 0)
		close(conn);
	return 0;
}

static int adopt_huge(void)
{
	uint64_t size;
	int seg = make_pool(128ULL << 20, 2, &size), conn = adopt(seg, size);

	round_trip();
	if (conn >= 0)
		close(conn);
	return 0;
}

static volatile int flipping;

/* Flip the header's buffer count between its value and a count far past
 * the segment, until told to stop. */
static void *flipper(void *arg)
{
	struct tracer_pool_header *h = arg;
	uint32_t good = h->buffer_count;

	while (__atomic_load_n(&flipping, __ATOMIC_RELAXED)) {
		__atomic_store_n(&h->buffer_count, good, __ATOMIC_RELAXED);
		__atomic_store_n(&h->buffer_count, 60000, __ATOMIC_RELAXED);
	}
	h->buffer_count = good;
	return NULL;
}

/*
 * A pool whose header changes while tracerd checks and uses it: its
 * buffer count flips between the right value and one past the segment, n
 * hand-overs in turn. Prints "handed over n times".
 */
static int adopt_flip(int n)
{
	uint64_t size;
	int seg = make_pool(0, 0, &size), i, conn;
	void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, seg,
			  0);
	pthread_t th;

	if (base == MAP_FAILED)
		return 1;
	flipping = 1;
	if (pthread_create(&th, NULL, flipper, base))
		return 1;
	for (i = 0; i < n; i++) {
		conn = adopt(seg, size);
		round_trip();
		if (conn >= 0)
			close(conn);
	}
	flipping = 0;
	pthread_join(th, NULL);
	printf("handed over %d times\n", n);
	return 0;
}

static int adopt_pipe(void)
{
	int p[2], conn;

	if (pipe(p) < 0)
		return 1;
	conn = adopt(p[0], 1 << 20);
	round_trip();
	if (conn >= 0)
		close(conn);
	return 0;
}

/* Is fd still open at tracerd's end (not refused, not hung up)? */
static bool still_open(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);

	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A connection, waiting up to half a second while tracerd's backlog is
 * full. Returns the fd or a negative errno (-EAGAIN: still full). */
static int connect_soon(void)
{
	int tries, fd = -EAGAIN;

	for (tries = 0; tries < 50 && fd == -EAGAIN; tries++) {
		fd = tracer__wire_connect(sock_path, SOCK_NONBLOCK);
		if (fd == -EAGAIN)
			usleep(10000);
	}
	return fd;
}

static int idle(int n)
{
	struct rlimit rl;
	int *fds = calloc((size_t)n, sizeof(int)), i, held = 0, full = 0;
	char line[16];

	if (!fds || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < n; i++) {
		fds[i] = connect_soon();
		if (fds[i] == -EAGAIN && ++full == 3)
			break;	/* tracerd does not accept any more */
		if (fds[i] >= 0 && send(fds[i], "TRCW\1\0", 6, MSG_NOSIGNAL) < 0)
			(void)0;	/* refused already */
	}
	for (; i < n; i++)
		fds[i] = -1;
	round_trip();	/* tracerd has seen them all */
	for (i = 0; i < n; i++)
		held += fds[i] >= 0 && still_open(fds[i]);
	printf("holding %d\n", held);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Connections that never finish a frame: how soon tracerd closes them. */
static int silent(int n)
{
	struct pollfd *pf = calloc((size_t)n, sizeof(*pf));
	long long t0 = now_ms(), left = 30000;
	int i, open = 0, closed = 0;

	if (!pf)
		return 1;
	for (i = 0; i < n; i++) {
		pf[i].fd = dial();
		pf[i].events = POLLIN | POLLRDHUP;
		if (pf[i].fd >= 0 &&
		    send(pf[i].fd, "TRCW\1\0", 6, MSG_NOSIGNAL) == 6)
			open++;
		else
			pf[i].fd = -1;
	}
	while (closed < open && left > 0) {
		if (poll(pf, (nfds_t)n, (int)left) < 0)
			return 1;
		for (i = 0; i < n; i++)
			if (pf[i].fd >= 0 && pf[i].revents) {
				close(pf[i].fd);
				pf[i].fd = -1;	/* poll() skips it now */
				closed++;
			}
		left = 30000 - (now_ms() - t0);
	}
	printf("closed %d of %d after %lld ms\n", closed, n, now_ms() - t0);
	return 0;
}

static int garbage(int n)
{
	char c;
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = dial();
		if (send(fd, "GET / HTTP/1.1\r\n\r\n", 18, MSG_NOSIGNAL) < 0)
			(void)0;
		while (recv(fd, &c, 1, 0) > 0)	/* until tracerd hangs up */
			;
		close(fd);
	}
	printf("sent %d\n", n);
	return 0;
}

/* Register; the pool's segment 0 (*seg, *size) from the answer. */
static int register_pool(int fd, int *seg, uint64_t *size)
{
	tracer_msg *m = NULL;
	int fds[TRACER_WIRE_MAX_FDS], nfds = 0, i;

	send_register(fd, 0);
	for (;;) {
		if (tracer__wire_recv(fd, &m, fds, &nfds, 10000, NULL))
			return -1;
		if (m->body_case == TRACER__MESSAGE__BODY_REGISTERED &&
		    nfds == 3) {
			*seg = fds[2];
			*size = m->registered->segment_size;
			close(fds[0]);
			close(fds[1]);
			tracer__wire_free(m);
			return 0;
		}
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (m->body_case == TRACER__MESSAGE__BODY_REGISTERED ||
		    m->body_case == TRACER__MESSAGE__BODY_ERROR) {
			tracer__wire_free(m);
			return -1;	/* no pool: no session */
		}
		tracer__wire_free(m);
	}
}

/* n call sites "h:K" (types "i"), ids 1..n. Returns 0 or -1. */
static int send_sites(int fd, int n)
{
	enum { BATCH = 256 };
	struct tracer_wire_site items[BATCH];
	char name[BATCH][32];
	int i, k;
	size_t len;
	void *frame;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < BATCH && i + k < n; k++) {
			snprintf(name[k], sizeof(name[k]), "h:%d", i + k);
			items[k] = (struct tracer_wire_site){
				.id = (uint32_t)(i + k + 1), .line = 1,
				.types = "i", .file = "h.c", .name = name[k],
				.format = "%d",
			};
		}
		if (tracer__wire_pack_sites(items, (size_t)k, &frame, &len) ||
		    send(fd, frame, len, MSG_NOSIGNAL) != (ssize_t)len)
			return -1;
		free(frame);
	}
	return 0;
}

/*
 * Take buffer i of the pool at base as thread tid (as a thread of the
 * process would) and attach w to its default ring; returns its
 * descriptor, NULL if it is in use or cannot be attached.
 */
static struct tracer_pool_desc *take_buffer(char *base, uint32_t i,
					    uint32_t tid,
					    struct tracer_rb_writer *w)
{
	const struct tracer_pool_header *h = (const void *)base;
	struct tracer_pool_desc *d = (void *)(base + h->desc_offset +
					      (uint64_t)i * h->desc_size);
	char *buf = base + h->buffer_offset + (uint64_t)i * h->buffer_size;
	uint64_t word = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);

	if (TRACER_BUF_STATE(word) == TRACER_BUF_IN_USE ||
	    !__atomic_compare_exchange_n(&d->state, &word,
			TRACER_BUF_WORD(TRACER_BUF_GEN(word) + 1,
					TRACER_BUF_IN_USE), false,
			__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return NULL;
	d->owner_tid = tid;
	if (tracer__rb_writer_attach(w, buf + h->channel_offset[0],
			tracer__pool_channel_size(h->channel_offset,
						  h->buffer_size, 0), tid, NULL))
		return NULL;
	w->stream_instance_id = (uint64_t)(h->first_buffer + i) << 32 |
				(TRACER_BUF_GEN(word) + 1);
	return d;
}

/* Take buffer i of the pool at base as thread tid; fill its default ring
 * with records of id, the last one reserved and never committed. */
static long fill_buffer(char *base, uint32_t i, uint32_t tid, uint32_t id)
{
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	long n = 0;

	if (!take_buffer(base, i, tid, &w))
		return 0;
	/* A sub-buffer and a half: the open one is half filled. */
	while (n < (long)((3ULL << w.subbuf_order) / 2 / 24) &&
	       tracer__rb_reserve(&w, &ctx, id, 8) == 0) {
		memcpy(ctx.payload, &n, 8);
		tracer__rb_commit(&w, &ctx);
		n++;
	}
	if (tracer__rb_reserve(&w, &ctx, id, 8) == 0)
		memset(ctx.payload, 0, 8);	/* never committed */
	return n;
}

#define GROW_TO		150	/* buffers: 11 doubled 4 times, at the defaults */

/* Map segment fd of size bytes as the next one; NULL if it cannot be. */
static char *map_segment(int fd, uint64_t size)
{
	char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  0);

	close(fd);
	return base == MAP_FAILED ? NULL : base;
}

/* Take every buffer of segment base and fill it; returns the records. */
static long fill_segment(char *base, uint32_t id)
{
	const struct tracer_pool_header *h = (const void *)base;
	uint32_t i;
	long n = 0;

	for (i = 0; i < h->buffer_count; i++)
		n += fill_buffer(base, i, (uint32_t)gettid(), id);
	return n;
}

/*
 * The next segment tracerd sends after a thread short of buffers asks for
 * growth (want_grow: the number it sees, total), NULL: none came.
 */
static char *next_segment(int fd, char *seg0, uint32_t total)
{
	struct tracer_pool_header *h0 = (void *)seg0;
	int fds[TRACER_WIRE_MAX_FDS], nfds = 0, i;
	tracer_msg *m = NULL;
	char *base = NULL;

	__atomic_store_n(&h0->want_grow, total, __ATOMIC_RELEASE);
	if (tracer__wire_recv(fd, &m, fds, &nfds, 5000, NULL))
		return NULL;
	if (m->body_case == TRACER__MESSAGE__BODY_SEGMENT && nfds == 1)
		base = map_segment(fds[0], m->segment->size);
	else
		for (i = 0; i < nfds; i++)
			close(fds[i]);
	tracer__wire_free(m);
	return base;
}

/*
 * Take every buffer, growing the pool as threads short of buffers would
 * (every buffer in use, and the ask) to GROW_TO buffers, then die with
 * each of them half through a sub-buffer.
 */
static int salvage(int nsites)
{
	uint32_t nbuf = 0;
	int fd = dial(), seg0, nseg = 0;
	char *base;
	uint64_t size;
	long n = 0;

	if (register_pool(fd, &seg0, &size) || send_sites(fd, nsites) ||
	    !(base = map_segment(seg0, size)))
		return 1;
	for (char *s = base; s && nseg < TRACER_POOL_MAX_SEGMENTS; nseg++) {
		n += fill_segment(s, (uint32_t)nsites);
		nbuf += ((const struct tracer_pool_header *)(void *)s)->
			buffer_count;
		s = nbuf < GROW_TO ? next_segment(fd, base, nbuf) : NULL;
	}
	printf("filled %u buffers with %ld records of id %d\n", nbuf, n,
	       nsites);
	return 0;	/* and die with every buffer in use */
}

/* A buffer of flood(): its writer, and its first record, not committed. */
struct held {
	struct tracer_rb_writer w;
	struct tracer_rb_ctx first;
	struct tracer_pool_desc *desc;
};

/*
 * Take buffer i of segment base and fill its default ring with records of
 * id, the first one held uncommitted in *hd; returns the records, -1 if
 * the buffer could not be taken.
 */
static long flood_buffer(char *base, uint32_t i, uint32_t id, uint32_t tid,
			 struct held *hd)
{
	struct tracer_rb_ctx ctx;
	long n = 1;

	hd->desc = take_buffer(base, i, tid, &hd->w);
	if (!hd->desc)
		return -1;
	if (tracer__rb_reserve(&hd->w, &hd->first, id, 8))
		return -1;
	memset(hd->first.payload, 0, 8);
	while (tracer__rb_reserve(&hd->w, &ctx, id, 8) == 0) {
		memcpy(ctx.payload, &n, 8);
		tracer__rb_commit(&hd->w, &ctx);
		n++;
	}
	return n;
}

static struct held held[256];

/*
 * Fill `want` buffers' default rings, owned by thread tid, while tracerd
 * can read none of them (each one's first record is not committed), then
 * (if commit) commit those first records together. Returns the buffers,
 * -1 if the
 * registration failed; *records: the records written.
 */
static int flood_fill(int want, uint32_t tid, bool commit, long *records)
{
	uint32_t i, taken = 0, total = 0;
	int fd = dial(), seg0, nseg;
	char *base, *seg[TRACER_POOL_MAX_SEGMENTS];
	uint64_t size;
	long r;

	*records = 0;
	if (want < 1 || want > 256 || register_pool(fd, &seg0, &size) ||
	    send_sites(fd, 1) || !(base = map_segment(seg0, size)))
		return -1;
	seg[0] = base;
	for (nseg = 0; seg[nseg] && taken < (uint32_t)want;) {
		const struct tracer_pool_header *h = (const void *)seg[nseg];

		for (i = 0; i < h->buffer_count && taken < (uint32_t)want; i++)
			if ((r = flood_buffer(seg[nseg], i, 1, tid,
					      &held[taken])) >= 0) {
				*records += r;
				taken++;
			}
		total += h->buffer_count;
		if (++nseg == TRACER_POOL_MAX_SEGMENTS)
			break;
		seg[nseg] = taken < (uint32_t)want ?
			    next_segment(fd, base, total) : NULL;
	}
	for (i = 0; commit && i < taken; i++)
		tracer__rb_commit(&held[i].w, &held[i].first);
	return (int)taken;
}

/* Die with every ring full: tracerd has the whole of them to write. */
static int flood(int want)
{
	long n;
	int nbuf = flood_fill(want, (uint32_t)gettid(), true, &n);

	if (nbuf < 0)
		return 1;
	printf("flooded %d buffers with %ld records\n", nbuf, n);
	fflush(stdout);
	return 0;
}

static void *ended_thread(void *arg)
{
	*(uint32_t *)arg = (uint32_t)gettid();
	return NULL;
}

/*
 * The same rings, owned by a thread that has ended: stay, and wait until
 * tracerd gave every buffer back (it salvages a vanished thread's).
 */
static int vanished(int want)
{
	pthread_t th;
	uint32_t tid = 0;
	long n;
	int nbuf, i, back = 0, tries;
	long long t0;

	if (pthread_create(&th, NULL, ended_thread, &tid) ||
	    pthread_join(th, NULL) || !tid)
		return 1;
	/* Their first records never committed: nothing is read before
	 * tracerd salvages them (then, all of each ring at once). */
	nbuf = flood_fill(want, tid, false, &n);
	if (nbuf < 0)
		return 1;
	t0 = now_ms();
	for (tries = 0; tries < 6000 && back < nbuf; tries++) {
		for (i = 0, back = 0; i < nbuf; i++)
			back += TRACER_BUF_STATE(__atomic_load_n(
					&held[i].desc->state,
					__ATOMIC_ACQUIRE)) != TRACER_BUF_IN_USE;
		if (back < nbuf)
			usleep(10000);	/* polled: tracerd's scan, 100 ms */
	}
	printf("reclaimed %d of %d in %lld ms\n", back, nbuf,
	       now_ms() - t0);
	return back == nbuf ? 0 : 1;
}

/*
 * Packets that make no sense, about a thousand a second (each one a log
 * line, were tracerd's not limited), for ms milliseconds: each
 * sub-buffer's magic is spoiled by the record that opens it, before any
 * of its records is committed.
 */
static int bad_packets(long long ms)
{
	struct tracer_rb_writer w;
	struct tracer_rb_ctx ctx;
	int fd = dial(), seg0;
	char *base;
	uint64_t size;
	long long t0 = now_ms();
	long packets = 0;

	if (register_pool(fd, &seg0, &size) || send_sites(fd, 1) ||
	    !(base = map_segment(seg0, size)) ||
	    !take_buffer(base, 0, (uint32_t)gettid(), &w))
		return 1;
	while (now_ms() - t0 < ms) {
		if (tracer__rb_reserve(&w, &ctx, 1, 8)) {
			usleep(1000);	/* full: tracerd reads on */
			continue;
		}
		memset(ctx.payload, 0, 8);
		if ((ctx.commit_pos & w.smask) == 0) {	/* opened one */
			memcpy(w.data + (ctx.commit_pos & (w.bufsize - 1)),
			       "BAD!", 4);
			packets++;
			usleep(1000);
		}
		tracer__rb_commit(&w, &ctx);
	}
	printf("wrote %ld bad packets\n", packets);
	return 0;
}

/* The answer to a StatusRequest sent after everything else on fd: 0 if
 * tracerd answered it (took all before), 1 if it refused something. */
static int took_all(int fd)
{
	tracer_msg m = TRACER__MESSAGE__INIT, *r = NULL;
	Tracer__StatusRequest sr = TRACER__STATUS_REQUEST__INIT;
	const char *why = NULL;
	int ret;

	m.body_case = TRACER__MESSAGE__BODY_STATUS_REQUEST;
	m.status_request = &sr;
	tracer__wire_send(fd, &m, NULL, 0, 5000);
	for (;;) {
		ret = tracer__wire_recv(fd, &r, NULL, NULL, 60000, &why);
		if (ret) {
			printf("refused: %s\n", why ? why : strerror(-ret));
			return 1;
		}
		if (r->body_case == TRACER__MESSAGE__BODY_ERROR) {
			printf("refused: %s\n", r->error->message);
			tracer__wire_free(r);
			return 1;
		}
		if (r->body_case == TRACER__MESSAGE__BODY_STATUS) {
			printf("accepted\n");
			tracer__wire_free(r);
			return 0;
		}
		tracer__wire_free(r);
	}
}

static int sites(int n, size_t size)
{
	enum { BATCH = 64 };
	struct tracer_wire_site items[BATCH];
	char *text = malloc(size + 1), name[BATCH][32];
	int fd = dial(), i, k;
	size_t len;
	void *frame;

	if (!text)
		return 1;
	memset(text, 'x', size);
	text[size] = '\0';
	send_register(fd, 0);
	if (answer(fd, false))
		return 1;
	for (i = 0; i < n; i += k) {
		for (k = 0; k < BATCH && i + k < n; k++) {
			snprintf(name[k], sizeof(name[k]), "h:%d", i + k);
			items[k] = (struct tracer_wire_site){
				.id = (uint32_t)(i + k + 1), .line = 1,
				.types = "i", .file = text, .name = name[k],
				.format = text,
			};
		}
		while (tracer__wire_pack_sites(items, (size_t)k, &frame,
					       &len) == -EMSGSIZE && k > 1)
			k /= 2;
		if (send(fd, frame, len, MSG_NOSIGNAL) != (ssize_t)len) {
			free(frame);
			break;	/* refused and closed: took_all() says */
		}
		free(frame);
	}
	took_all(fd);
	close(fd);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc >= 3 ? argv[2] : "";
	int n = argc >= 4 ? atoi(argv[3]) : 0;

	if (argc < 3) {
		fprintf(stderr, "usage: hostile SOCKET CASE [N [SIZE]]\n");
		return 2;
	}
	sock_path = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(c, "adopt-unsealed"))
		return adopt_unsealed();
	if (!strcmp(c, "adopt-huge"))
		return adopt_huge();
	if (!strcmp(c, "adopt-flip"))
		return adopt_flip(n > 0 ? n : 50);
	if (!strcmp(c, "adopt-pipe"))
		return adopt_pipe();
	if (!strcmp(c, "idle") && argc == 4)
		return idle(n);
	if (!strcmp(c, "silent") && argc == 4)
		return silent(n);
	if (!strcmp(c, "garbage") && argc == 4)
		return garbage(n);
	if (!strcmp(c, "salvage") && argc == 4)
		return salvage(n);
	if (!strcmp(c, "flood") && argc == 4)
		return flood(n);
	if (!strcmp(c, "vanished") && argc == 4)
		return vanished(n);
	if (!strcmp(c, "bad-packets") && argc == 4)
		return bad_packets(n);
	if (!strcmp(c, "sites") && argc == 5)
		return sites(n, (size_t)atol(argv[4]));
	fprintf(stderr, "hostile: unknown case '%s' or its arguments\n", c);
	return 2;
}
