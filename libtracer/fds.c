/*
 * fds.c - the descriptors libtracer keeps open, out of the program's way.
 *
 * A traced program finds its descriptor table as it would untraced: its
 * first open() returns 3, `exec 6>log` in a shell script writes only into
 * the log, and a daemon that closes every descriptor goes on being
 * traced. libtracer keeps a few descriptors for the life of the process:
 *
 *   slot           what                           used by
 *   SOCK           the connection to tracerd      any thread (sends, under
 *                                                 client.c's send_lock);
 *                                                 the listener (poll, recv)
 *   QUEUE          eventfd: "look at the send     any thread (write); the
 *                  queue", read by the listener   listener (poll, read)
 *   WAKE           eventfd: "drain now", read by  the event path, in any
 *                  tracerd                        context (signal handlers)
 *   SEG0..SEG31    the pool's memfds, kept so     the listener (adoption)
 *                  that a new tracerd can adopt
 *
 * Where. Each one is moved with F_DUPFD_CLOEXEC to the top of the range
 * programs use: at or above TOP - FD_BAND, TOP being the soft
 * RLIMIT_NOFILE capped at FD_TOP_MAX (1024, select()'s FD_SETSIZE: a
 * larger limit would grow the kernel's descriptor table for nothing). A
 * program's open() takes the lowest free number, so it meets them only
 * when it has a thousand descriptors open, and then only as numbers
 * skipped. A limit too low for the band leaves them where they are.
 *
 * Hidden. The program's close(), close_range(), closefrom() and dup*()
 * calls (wrap_io.c) see them as numbers that are not open: close() of
 * one fails with EBADF, as it would untraced, and the ranges skip them.
 * dup2() or dup3() onto one of them is what the program asked for: the
 * descriptor moves to another free number of the band first
 * (tracer__fd_vacate()), then the program's call replaces the number.
 * Only a raw close system call can take one away; the listener checks
 * theirs every CHECK_MS (tracer__fd_intact()) and reconnects.
 *
 * Users and movers. A number must never be used once the program may
 * own it: whoever makes a system call on a slot's descriptor holds it
 * for the duration; a mover publishes the new number, then waits until
 * every hold that could have read the old one has ended (two counters,
 * by phase, as in SRCU, so that new holds never delay it):
 *
 *   user (any thread or handler)        mover (tracer__fd_vacate, _close)
 *   p = phase                           slot[s] = new number
 *   users[p] += 1                       phase ^= 1
 *   fd = slot[s]                        wake the listener (QUEUE)
 *   ... system call on fd ...           while users[old] != 0: yield
 *   users[p] -= 1                       the old number is free to go
 *
 * Every access to slot, phase and users is sequentially consistent, so
 * either the mover sees the user's increment (and waits), or the user's
 * increment comes after the mover's check, hence after the new number
 * was stored, and the user reads the new number. The counters are
 * bus-locked, but only around system calls, never on the event path's
 * common case (it writes WAKE once per tracerd nap). Movers take
 * mover_lock (a spin lock: they are rare); a thread that holds a slot,
 * or is already moving, does not wait for itself (a signal handler that
 * dup2()s onto our number while its own thread was in the middle of a
 * send: the only case left where a number is reused early).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sys.h"

#define FD_TOP_MAX	1024
#define FD_BAND		64	/* numbers below TOP we may use */
#define FD_MIN_TOP	256	/* a lower limit: stay where we are */

static int slot[TRACER__FD_SLOTS] = {
	[0 ... TRACER__FD_SLOTS - 1] = -1,
};
/* The file behind each slot, to tell a raw close (tracer__fd_intact). */
static dev_t slot_dev[TRACER__FD_SLOTS] TRACER_COLD_BSS;
static ino_t slot_ino[TRACER__FD_SLOTS] TRACER_COLD_BSS;
static int lo = INT_MAX, hi = -1;	/* bounds of the numbers we hold */
static int band_base = -1;		/* 0: no band; -1: not looked at */
static unsigned phase;
static unsigned long users[2];
static int mover_lock;
static __thread unsigned holding __attribute__((tls_model("initial-exec")));
static __thread bool moving __attribute__((tls_model("initial-exec")));

/* The lowest number of the band, 0 when the limit is too low for one. */
static int band(void)
{
	int b = __atomic_load_n(&band_base, __ATOMIC_RELAXED);
	struct rlimit rl;
	rlim_t top;

	if (b >= 0)
		return b;
	top = getrlimit(RLIMIT_NOFILE, &rl) ? 0 : rl.rlim_cur;
	if (top > FD_TOP_MAX)
		top = FD_TOP_MAX;
	b = top >= FD_MIN_TOP ? (int)top - FD_BAND : 0;
	__atomic_store_n(&band_base, b, __ATOMIC_RELAXED);
	return b;
}

static int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

/* A copy of fd in the band (close-on-exec), or -errno. */
static int copy_high(int fd)
{
	int b = band(), n;

	if (!b)
		return -ENOSPC;
	n = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, b);	/* not recorded */
	return n < 0 ? -errno : n;
}

static void widen(int fd)
{
	if (fd < __atomic_load_n(&lo, __ATOMIC_RELAXED))
		__atomic_store_n(&lo, fd, __ATOMIC_SEQ_CST);
	if (fd > __atomic_load_n(&hi, __ATOMIC_RELAXED))
		__atomic_store_n(&hi, fd, __ATOMIC_SEQ_CST);
}

static void remember(int s, int fd)
{
	struct stat st;

	if (fd >= 0 && tracer__sys_fstat(fd, &st) == 0) {
		slot_dev[s] = st.st_dev;
		slot_ino[s] = st.st_ino;
	}
	widen(fd);
	__atomic_store_n(&slot[s], fd, __ATOMIC_SEQ_CST);
}

unsigned tracer__fd_hold(void)
{
	unsigned p = __atomic_load_n(&phase, __ATOMIC_SEQ_CST) & 1;

	__atomic_fetch_add(&users[p], 1, __ATOMIC_SEQ_CST);
	holding++;
	return p;
}

void tracer__fd_release(unsigned token)
{
	holding--;
	/* The system call on the old number is over before the count. */
	__atomic_fetch_sub(&users[token], 1, __ATOMIC_RELEASE);
}

int tracer__fd(int s)
{
	return __atomic_load_n(&slot[s], __ATOMIC_SEQ_CST);
}

static void lock_movers(void)
{
	while (__atomic_exchange_n(&mover_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	moving = true;
}

static void unlock_movers(void)
{
	moving = false;
	__atomic_store_n(&mover_lock, 0, __ATOMIC_RELEASE);
}

/*
 * Wait until no hold taken before the new numbers were stored is left.
 * The listener may hold across its poll(): QUEUE wakes it.
 */
static void wait_users(void)
{
	unsigned old = __atomic_fetch_xor(&phase, 1, __ATOMIC_SEQ_CST) & 1;
	int q = tracer__fd(TRACER__FD_QUEUE);

	if (holding)
		return;		/* we would wait for ourselves */
	if (q >= 0 && syscall(SYS_write, q, &(uint64_t){ 1 }, 8) < 0)
		(void)0;	/* already readable */
	while (__atomic_load_n(&users[old], __ATOMIC_SEQ_CST) != 0)
		sched_yield();
}

int tracer__fd_keep(int s, int fd)
{
	int high = copy_high(fd), old;

	if (high == -ENOSPC) {
		high = fd;	/* no band (a low limit): it stays there */
	} else {
		sys_close(fd);
		if (high < 0)
			return high;	/* the band is full: not at a low
					   number the program expects free */
	}
	fd = high;
	lock_movers();
	old = tracer__fd(s);
	remember(s, fd);
	if (old >= 0 && old != fd) {
		wait_users();
		sys_close(old);
	}
	unlock_movers();
	return fd;
}

void tracer__fd_close(int s)
{
	int old;

	lock_movers();
	old = __atomic_exchange_n(&slot[s], -1, __ATOMIC_SEQ_CST);
	if (old >= 0) {
		wait_users();
		sys_close(old);
	}
	unlock_movers();
}

void tracer__fd_forget_all(void)
{
	int s;

	for (s = 0; s < TRACER__FD_SLOTS; s++) {
		int fd = __atomic_exchange_n(&slot[s], -1, __ATOMIC_SEQ_CST);

		if (fd >= 0)
			sys_close(fd);
	}
	users[0] = users[1] = 0;
	holding = 0;
	mover_lock = 0;
	moving = false;
}

/* The slot holding fd, or -1. */
static int slot_of(int fd)
{
	int s;

	if (fd < __atomic_load_n(&lo, __ATOMIC_SEQ_CST) ||
	    fd > __atomic_load_n(&hi, __ATOMIC_SEQ_CST))
		return -1;
	for (s = 0; s < TRACER__FD_SLOTS; s++)
		if (__atomic_load_n(&slot[s], __ATOMIC_SEQ_CST) == fd)
			return s;
	return -1;
}

bool tracer__fd_ours(int fd)
{
	return fd >= 0 && slot_of(fd) >= 0;
}

int tracer__fd_next_ours(int from)
{
	int s, best = INT_MAX;

	if (from > __atomic_load_n(&hi, __ATOMIC_SEQ_CST))
		return -1;
	for (s = 0; s < TRACER__FD_SLOTS; s++) {
		int fd = __atomic_load_n(&slot[s], __ATOMIC_SEQ_CST);

		if (fd >= from && fd < best)
			best = fd;
	}
	return best == INT_MAX ? -1 : best;
}

uint32_t tracer__fd_owner_pid;

/* Not the process whose table we hold (a vfork or clone child)? */
static bool foreign(void)
{
	return (uint32_t)getpid() != tracer__fd_owner_pid;
}

bool tracer__fd_vacate(int fd)
{
	bool ours, lost = false;
	int s;

	/* Cheap test first: most dup2() targets are not ours. */
	if (fd < 0 || slot_of(fd) < 0 || moving || foreign())
		return false;
	lock_movers();
	s = slot_of(fd);
	ours = s >= 0;
	if (ours) {
		int n = copy_high(fd);

		/* No free number left: the slot is lost, and noticed. */
		remember(s, n >= 0 ? n : -1);
		wait_users();
		lost = n < 0;
	}
	unlock_movers();
	if (lost)
		tracer__client_lost();
	return ours;
}

void tracer__fd_vacated(int fd)
{
	sys_close(fd);
}

bool tracer__fd_intact(int s)
{
	int fd = tracer__fd(s);
	struct stat st;

	if (fd < 0)
		return true;	/* nothing there to lose */
	return tracer__sys_fstat(fd, &st) == 0 && st.st_dev == slot_dev[s] &&
	       st.st_ino == slot_ino[s];
}
