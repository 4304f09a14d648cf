/*
 * wrap_io.c - file, socket and polling calls of the C library, recorded
 * as libc:* events (wrap.h explains the wrappers).
 *
 * A call that cannot block records one event after it returns, holding
 * its arguments, its result and, when it failed, " errno ENAME":
 *
 *   libc:open    path /etc/hosts flags 0x80000 mode 0 fd 3
 *   libc:close   fd 3 result 0
 *
 * A call that can block records NAME_entry before it and NAME_exit after
 * it, so the time between them is the time the thread spent in the call
 * (tracectl export turns the pair into a slice):
 *
 *   libc:read_entry  fd 3 count 131072
 *   libc:read_exit   fd 3 result 4096
 *
 * Names of a file are recorded where the call has one (open, openat,
 * creat); socket addresses as text (connect, bind, accept, sendto,
 * recvfrom). The large-file aliases (open64, pread64 ...) and the
 * fortified entry points a program built with _FORTIFY_SOURCE calls
 * (__open_2, __read_chk ...) record the same events as the plain call.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/sendfile.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "resume.h"
#include "wrap.h"

/* ---- opening and closing ------------------------------------------- */

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
	       (mode_t)va_arg(ap, unsigned) : 0;
}

WRAP_DEFINE_REAL(int, open, (const char *p, int f, mode_t m), (p, f, m))
WRAP_DEFINE_REAL(int, openat, (int d, const char *p, int f, mode_t m),
		 (d, p, f, m))

/* open() and the fortified __open_2(): libc:open. */
static int record_open(const char *path, int flags, mode_t mode)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:open", "path %s flags %#x mode %#o fd %d",
		    path, flags, mode, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(open)(path, flags, mode);
	ret = WRAP_REAL(open)(path, flags, mode);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(cs, en, path, flags, mode, ret);
	return ret;
}

/* openat() (AT_FDCWD too: recorded as what it is) and __openat_2(). */
static int record_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:openat",
		    "dirfd %d path %s flags %#x mode %#o fd %d",
		    dirfd, path, flags, mode, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(openat)(dirfd, path, flags, mode);
	ret = WRAP_REAL(openat)(dirfd, path, flags, mode);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(cs, en, dirfd, path, flags, mode, ret);
	return ret;
}

WRAP_API int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return record_open(path, flags, mode);
}

WRAP_API int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return record_openat(dirfd, path, flags, mode);
}

/* Fortified open(path, flags) without a mode (_FORTIFY_SOURCE). */
WRAP_API int __open_2(const char *path, int flags);
WRAP_API int __openat_2(int dirfd, const char *path, int flags);
WRAP_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);

WRAP_API int __open_2(const char *path, int flags)
{
	return record_open(path, flags, 0);
}

WRAP_API int __openat_2(int dirfd, const char *path, int flags)
{
	return record_openat(dirfd, path, flags, 0);
}

WRAP_API int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));
WRAP_API int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));
WRAP_API int __open64_2(const char *path, int flags)
	__attribute__((alias("__open_2")));
WRAP_API int __openat64_2(int dirfd, const char *path, int flags)
	__attribute__((alias("__openat_2")));

IO_CALL(int, creat, (const char *path, mode_t mode), (path, mode),
	"path %s mode %#o fd %d", (path, mode, ret), ret < 0)
WRAP_API int creat64(const char *path, mode_t mode)
	__attribute__((alias("creat")));

/* ---- closing and duplicating: the tracer's descriptors stay hidden ---- */

/*
 * The descriptors libtracer keeps (fds.c) are not open as far as the
 * program can tell: close() and dup() of one fail with EBADF as they
 * would untraced, close_range() and closefrom() skip them, and dup2() or
 * dup3() onto one moves ours away before the program's call replaces the
 * number. Each records the same event as the plain call.
 */

/* The call as untraced: "not an open descriptor". */
static int ebadf(void)
{
	errno = EBADF;
	return -1;
}

/*
 * close() and dup(): one descriptor in, an int out. Ours are "not open"
 * (EBADF, as untraced); the event, when on, gives fd and the result.
 */
static int one_fd(const struct tracer_callsite *cs, int (*real)(int), int fd)
{
	int64_t en;
	int ret;

	if (tracer_unlikely(tracer__fd_ours(fd)))
		ret = ebadf();
	else if (tracer_likely(!WRAP_ON(*cs)))
		return real(fd);
	else
		ret = real(fd);
	if (WRAP_ON(*cs)) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(*cs, en, fd, ret);
	}
	return ret;
}

WRAP_DEFINE_REAL(int, close, (int fd), (fd))
WRAP_API int close(int fd)
{
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:close", "fd %d result %d", fd, ret);

	return one_fd(&cs, WRAP_REAL(close), fd);
}

WRAP_DEFINE_REAL(int, dup, (int fd), (fd))
WRAP_API int dup(int fd)
{
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:dup", "fd %d newfd %d", fd, ret);

	return one_fd(&cs, WRAP_REAL(dup), fd);
}

WRAP_DEFINE_REAL(int, dup2, (int fd, int fd2), (fd, fd2))
WRAP_DEFINE_REAL(int, dup3, (int fd, int fd2, int flags), (fd, fd2, flags))

/* dup2() (is_dup3 false) and dup3() onto fd2. */
static int dup_onto(int fd, int fd2, int flags, bool is_dup3)
{
	int ret, err;
	bool moved;

	if (tracer__fd_ours(fd))
		return ebadf();
	moved = fd != fd2 && tracer__fd_vacate(fd2);
	ret = is_dup3 ? WRAP_REAL(dup3)(fd, fd2, flags)
		      : WRAP_REAL(dup2)(fd, fd2);
	err = errno;
	if (moved && ret < 0)
		tracer__fd_vacated(fd2);	/* as untraced: not open */
	errno = err;
	return ret;
}

WRAP_API int dup2(int fd, int fd2)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:dup2", "fd %d newfd %d result %d", fd, fd2,
		    ret);

	ret = dup_onto(fd, fd2, 0, false);
	if (tracer_unlikely(WRAP_ON(cs))) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(cs, en, fd, fd2, ret);
	}
	return ret;
}

WRAP_API int dup3(int fd, int fd2, int flags)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:dup3", "fd %d newfd %d flags %#x result %d",
		    fd, fd2, flags, ret);

	ret = dup_onto(fd, fd2, flags, true);
	if (tracer_unlikely(WRAP_ON(cs))) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(cs, en, fd, fd2, flags, ret);
	}
	return ret;
}

/*
 * close_range(first, last, flags) around ours: one system call per run of
 * the program's numbers. CLOSE_RANGE_CLOEXEC only marks them (ours are
 * close-on-exec already): passed on whole.
 */
static int close_around(unsigned first, unsigned last, unsigned flags)
{
	int ours;

	if (flags & CLOSE_RANGE_CLOEXEC || first > last)
		return (int)syscall(SYS_close_range, first, last, flags);
	while ((ours = tracer__fd_next_ours(first > INT_MAX ? INT_MAX
					    : (int)first)) >= 0 &&
	       (unsigned)ours <= last) {
		if ((unsigned)ours > first &&
		    syscall(SYS_close_range, first, (unsigned)ours - 1,
			    flags) < 0)
			return -1;
		first = (unsigned)ours + 1;
	}
	if (first > last)
		return 0;
	return (int)syscall(SYS_close_range, first, last, flags);
}

/*
 * syscall(): forwarded as it is. A close of a dormant process's socket
 * made this way (close, close_range, dup2, dup3: the only way a program
 * takes our descriptors, the calls above hide them) is noticed at once:
 * the listener starts and connects again (client.c). The next definition
 * is looked up before any signal handler may call this one
 * (tracer__wrap_syscall_init(), from the library's constructor).
 */
typedef long (*syscall_fn)(long, ...);
static syscall_fn real_syscall;

void tracer__wrap_syscall_init(void)
{
	__atomic_store_n(&real_syscall,
			 (syscall_fn)tracer__wrap_next("syscall"),
			 __ATOMIC_RELAXED);
}

static bool closes_fds(long n)
{
	return n == SYS_close || n == SYS_close_range || n == SYS_dup3
#ifdef SYS_dup2
	       || n == SYS_dup2
#endif
	       ;
}

/* Not instrumented: it reads six words of arguments whatever the caller
 * passed (beyond them, the caller's frame: harmless, as for the C
 * library's own, written in assembly). */
__attribute__((no_sanitize_address))
WRAP_API long syscall(long n, ...)
{
	syscall_fn fn = __atomic_load_n(&real_syscall, __ATOMIC_RELAXED);
	long a[6], ret;
	va_list ap;
	int i, err;

	/* Six words whatever the call takes, as the C library's does. */
	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!fn)
		tracer__wrap_syscall_init();
	fn = __atomic_load_n(&real_syscall, __ATOMIC_RELAXED);
	ret = fn(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (closes_fds(n) && ret >= 0) {
		err = errno;
		if (!tracer__fd_intact(TRACER__FD_SOCK))
			tracer__client_lost();
		errno = err;
	}
	return ret;
}

WRAP_API int close_range(unsigned first, unsigned last, int flags)
{
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:close_range",
		    "first %u last %u flags %#x result %d", first, last,
		    flags, ret);

	ret = close_around(first, last, (unsigned)flags);
	if (tracer_unlikely(WRAP_ON(cs))) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(cs, en, first, last, flags, ret);
	}
	return ret;
}

/* closefrom(): every descriptor from lowfd on, but ours; a kernel without
 * close_range() gets the C library's own closefrom() for what lies
 * above our highest (below it: one close() each, as the C library's
 * fallback would). */
WRAP_DEFINE_REAL(void, closefrom, (int lowfd), (lowfd))
WRAP_API void closefrom(int lowfd)
{
	int saved = errno, fd, ours;
	WRAP_SITE(cs, 0, "libc:closefrom", "lowfd %d", lowfd);

	if (tracer_unlikely(WRAP_ON(cs)))
		WRAP_EMIT(cs, lowfd);
	if (lowfd < 0)
		lowfd = 0;
	if (close_around((unsigned)lowfd, ~0u, 0) == 0 || errno != ENOSYS) {
		errno = saved;
		return;
	}
	for (fd = lowfd; (ours = tracer__fd_next_ours(fd)) >= 0; fd = ours + 1)
		while (fd < ours)
			WRAP_REAL(close)(fd++);
	WRAP_REAL(closefrom)(fd);
	errno = saved;
}
IO_CALL(int, pipe, (int fds[2]), (fds), "fds %d %d result %d",
	(ret ? -1 : fds[0], ret ? -1 : fds[1], ret), ret < 0)
IO_CALL(int, pipe2, (int fds[2], int flags), (fds, flags),
	"fds %d %d flags %#x result %d",
	(ret ? -1 : fds[0], ret ? -1 : fds[1], flags, ret), ret < 0)
IO_CALL(off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence),
	"fd %d offset %lld whence %d result %lld",
	(fd, (long long)off, whence, (long long)ret), ret < 0)
WRAP_API off_t lseek64(int fd, off_t off, int whence)
	__attribute__((alias("lseek")));

/* ---- reading and writing ------------------------------------------- */

IO_BLOCKING(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n),
	    "fd %d count %zu", (fd, n), "fd %d result %zd", (fd, ret),
	    ret < 0)
IO_BLOCKING(ssize_t, write, (int fd, const void *buf, size_t n),
	    (fd, buf, n), "fd %d count %zu", (fd, n), "fd %d result %zd",
	    (fd, ret), ret < 0)
IO_BLOCKING(ssize_t, pread, (int fd, void *buf, size_t n, off_t off),
	    (fd, buf, n, off), "fd %d count %zu offset %lld",
	    (fd, n, (long long)off), "fd %d result %zd", (fd, ret), ret < 0)
IO_BLOCKING(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off),
	    (fd, buf, n, off), "fd %d count %zu offset %lld",
	    (fd, n, (long long)off), "fd %d result %zd", (fd, ret), ret < 0)
WRAP_API ssize_t pread64(int fd, void *buf, size_t n, off_t off)
	__attribute__((alias("pread")));
WRAP_API ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
	__attribute__((alias("pwrite")));

/* Fortified read() of a buffer whose size the compiler knew. */
WRAP_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen) {
		static const char msg[] = "*** buffer overflow detected ***"
					  ": terminated\n";
		ssize_t r = syscall(SYS_write, 2, msg, sizeof(msg) - 1);

		(void)r;
		abort();	/* what the C library's __read_chk does */
	}
	return read(fd, buf, n);
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t sum = 0;
	int i;

	for (i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

IO_BLOCKING(ssize_t, readv, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n), "fd %d iovcnt %d count %zu",
	    (fd, n, iov_bytes(iov, n)), "fd %d result %zd", (fd, ret),
	    ret < 0)
IO_BLOCKING(ssize_t, writev, (int fd, const struct iovec *iov, int n),
	    (fd, iov, n), "fd %d iovcnt %d count %zu",
	    (fd, n, iov_bytes(iov, n)), "fd %d result %zd", (fd, ret),
	    ret < 0)
IO_BLOCKING(int, fsync, (int fd), (fd), "fd %d", (fd), "fd %d result %d",
	    (fd, ret), ret < 0)
IO_BLOCKING(int, fdatasync, (int fd), (fd), "fd %d", (fd),
	    "fd %d result %d", (fd, ret), ret < 0)

/* ---- sockets -------------------------------------------------------- */

#define ADDR(sa, len) \
	tracer__wrap_sockaddr((sa), (unsigned)(len), ab, sizeof(ab))
#define PEER(sa, lenp) \
	((sa) && (lenp) && ret >= 0 ? ADDR((sa), *(lenp)) : "-")

/*
 * Descriptors of the kernel's own objects: an epoll instance, an event
 * counter, a memory file (its name as given), a timer, a signal queue, an
 * inotify instance. (signalfd() with a descriptor changes that one's mask
 * and returns it.)
 */
IO_CALL(int, epoll_create, (int size), (size), "size %d fd %d", (size, ret),
	ret < 0)
IO_CALL(int, epoll_create1, (int flags), (flags), "flags %#x fd %d",
	(flags, ret), ret < 0)
IO_CALL(int, eventfd, (unsigned initval, int flags), (initval, flags),
	"initval %u flags %#x fd %d", (initval, flags, ret), ret < 0)
IO_CALL(int, memfd_create, (const char *name, unsigned flags),
	(name, flags), "name %s flags %#x fd %d", (name, flags, ret), ret < 0)
IO_CALL(int, timerfd_create, (int clock, int flags), (clock, flags),
	"clock %d flags %#x fd %d", (clock, flags, ret), ret < 0)
IO_CALL(int, signalfd, (int fd, const sigset_t *mask, int flags),
	(fd, mask, flags), "fd %d flags %#x result %d", (fd, flags, ret),
	ret < 0)
IO_CALL(int, inotify_init, (void), (), "fd %d", (ret), ret < 0)
IO_CALL(int, inotify_init1, (int flags), (flags), "flags %#x fd %d",
	(flags, ret), ret < 0)

IO_CALL(int, socket, (int domain, int type, int protocol),
	(domain, type, protocol), "domain %d type %#x protocol %d fd %d",
	(domain, type, protocol, ret), ret < 0)
IO_CALL(int, listen, (int fd, int backlog), (fd, backlog),
	"fd %d backlog %d result %d", (fd, backlog, ret), ret < 0)

WRAP_DEFINE_REAL(int, bind, (int fd, const struct sockaddr *sa,
			     socklen_t len), (fd, sa, len))
WRAP_API int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	char ab[WRAP_ADDRBUF];
	const char *as = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:bind", "fd %d addr %s result %d",
		    fd, as, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(bind)(fd, sa, len);
	ret = WRAP_REAL(bind)(fd, sa, len);
	en = WRAP_ERRNO(ret < 0);
	as = ADDR(sa, len);
	WRAP_EMIT_E(cs, en, fd, as, ret);
	return ret;
}

WRAP_DEFINE_REAL(int, connect, (int fd, const struct sockaddr *sa,
				socklen_t len), (fd, sa, len))
WRAP_API int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	char ab[WRAP_ADDRBUF];
	const char *as = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE(in, 0, "libc:connect_entry", "fd %d addr %s", fd, as);
	WRAP_SITE_E(out, 0, "libc:connect_exit", "fd %d result %d",
		    fd, ret);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(connect)(fd, sa, len);
	if (WRAP_ON(in)) {
		as = ADDR(sa, len);
		WRAP_EMIT(in, fd, as);
	}
	ret = WRAP_REAL(connect)(fd, sa, len);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(out, en, fd, ret);
	}
	return ret;
}

/* accept and accept4: the peer's address when the caller asked for it. */
#define ACCEPT_BODY(call) \
	char ab[WRAP_ADDRBUF]; \
	const char *ps = ""; \
	int64_t en = 0; \
	int ret = 0; \
	WRAP_SITE(in, 0, "libc:accept_entry", "fd %d", fd); \
	WRAP_SITE_E(out, 0, "libc:accept_exit", "fd %d result %d peer %s", \
		    fd, ret, ps); \
	if (tracer_likely(!WRAP_ON2(in, out))) \
		return call; \
	if (WRAP_ON(in)) \
		WRAP_EMIT(in, fd); \
	ret = call; \
	if (WRAP_ON(out)) { \
		en = WRAP_ERRNO(ret < 0); \
		ps = PEER(sa, len); \
		WRAP_EMIT_E(out, en, fd, ret, ps); \
	} \
	return ret

WRAP_DEFINE_REAL(int, accept, (int fd, struct sockaddr *sa, socklen_t *len),
		 (fd, sa, len))
WRAP_API int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	ACCEPT_BODY(WRAP_REAL(accept)(fd, sa, len));
}

WRAP_DEFINE_REAL(int, accept4, (int fd, struct sockaddr *sa, socklen_t *len,
				int flags), (fd, sa, len, flags))
WRAP_API int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	ACCEPT_BODY(WRAP_REAL(accept4)(fd, sa, len, flags));
}

IO_BLOCKING(ssize_t, send, (int fd, const void *buf, size_t n, int flags),
	    (fd, buf, n, flags), "fd %d count %zu flags %#x", (fd, n, flags),
	    "fd %d result %zd", (fd, ret), ret < 0)
IO_BLOCKING(ssize_t, recv, (int fd, void *buf, size_t n, int flags),
	    (fd, buf, n, flags), "fd %d count %zu flags %#x", (fd, n, flags),
	    "fd %d result %zd", (fd, ret), ret < 0)
IO_BLOCKING(ssize_t, sendmsg, (int fd, const struct msghdr *m, int flags),
	    (fd, m, flags), "fd %d count %zu flags %#x",
	    (fd, m ? iov_bytes(m->msg_iov, (int)m->msg_iovlen) : 0, flags),
	    "fd %d result %zd", (fd, ret), ret < 0)
IO_BLOCKING(ssize_t, recvmsg, (int fd, struct msghdr *m, int flags),
	    (fd, m, flags), "fd %d count %zu flags %#x",
	    (fd, m ? iov_bytes(m->msg_iov, (int)m->msg_iovlen) : 0, flags),
	    "fd %d result %zd", (fd, ret), ret < 0)

WRAP_DEFINE_REAL(ssize_t, sendto, (int fd, const void *buf, size_t n,
				   int flags, const struct sockaddr *sa,
				   socklen_t len), (fd, buf, n, flags, sa, len))
WRAP_API ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			const struct sockaddr *sa, socklen_t len)
{
	char ab[WRAP_ADDRBUF];
	const char *as = "";
	int64_t en = 0;
	ssize_t ret = 0;
	WRAP_SITE(in, 0, "libc:sendto_entry", "fd %d count %zu flags %#x to %s",
		  fd, n, flags, as);
	WRAP_SITE_E(out, 0, "libc:sendto_exit", "fd %d result %zd",
		    fd, ret);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(sendto)(fd, buf, n, flags, sa, len);
	if (WRAP_ON(in)) {
		as = sa ? ADDR(sa, len) : "-";
		WRAP_EMIT(in, fd, n, flags, as);
	}
	ret = WRAP_REAL(sendto)(fd, buf, n, flags, sa, len);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(out, en, fd, ret);
	}
	return ret;
}

WRAP_DEFINE_REAL(ssize_t, recvfrom, (int fd, void *buf, size_t n, int flags,
				     struct sockaddr *sa, socklen_t *len),
		 (fd, buf, n, flags, sa, len))
WRAP_API ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			  struct sockaddr *sa, socklen_t *len)
{
	char ab[WRAP_ADDRBUF];
	const char *ps = "";
	int64_t en = 0;
	ssize_t ret = 0;
	WRAP_SITE(in, 0, "libc:recvfrom_entry", "fd %d count %zu flags %#x",
		  fd, n, flags);
	WRAP_SITE_E(out, 0, "libc:recvfrom_exit", "fd %d result %zd from %s",
		    fd, ret, ps);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(recvfrom)(fd, buf, n, flags, sa, len);
	if (WRAP_ON(in))
		WRAP_EMIT(in, fd, n, flags);
	ret = WRAP_REAL(recvfrom)(fd, buf, n, flags, sa, len);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret < 0);
		ps = PEER(sa, len);
		WRAP_EMIT_E(out, en, fd, ret, ps);
	}
	return ret;
}

/* ---- waiting for descriptors ---------------------------------------- */

/*
 * The kernel restarts none of these after a signal handler: each resumes a
 * wait that only the update signal cut short, with the time it has left
 * (resume.h). Their events frame the whole wait, resumed or not.
 */

static long long ts_ms(const struct timespec *t)
{
	return t ? (long long)t->tv_sec * 1000 + t->tv_nsec / 1000000 : -1;
}

static long long tv_ms(const struct timeval *t)
{
	return t ? (long long)t->tv_sec * 1000 + t->tv_usec / 1000 : -1;
}

/*
 * IO_WAITING(T, name, (params), (args), "entry fmt", (entry values),
 * "exit fmt", (exit values)): IO_BLOCKING around name_wait(args), the
 * resuming call; failed when ret < 0.
 */
#define IO_WAITING(T, name, params, args, efmt, evalues, xfmt, xvalues) \
IO_PAIR(T, name, params, name##_wait args, efmt, evalues, xfmt, xvalues, \
	ret < 0)

WRAP_DEFINE_REAL(int, poll, (struct pollfd *fds, nfds_t n, int timeout),
		 (fds, n, timeout))
static int poll_wait(struct pollfd *fds, nfds_t n, int timeout)
{
	int ret;

	TRACER__RESUMING_MS(ret, WRAP_REAL(poll)(fds, n, timeout), timeout);
	return ret;
}

WRAP_DEFINE_REAL(int, ppoll, (struct pollfd *fds, nfds_t n,
			      const struct timespec *t, const sigset_t *mask),
		 (fds, n, t, mask))
static int ppoll_wait(struct pollfd *fds, nfds_t n, const struct timespec *t,
		      const sigset_t *mask)
{
	int ret;

	TRACER__RESUMING_TS(ret, WRAP_REAL(ppoll)(fds, n, t, mask), t);
	return ret;
}

/*
 * select(): the timeout is the program's, and Linux writes the time left
 * into it; a resumed call is given the time left (rounded up to the
 * microsecond), and writes it too. Microseconds past a second count as
 * seconds (the C library's normalisation).
 */
static bool tv_positive(const struct timeval *t)
{
	return t && t->tv_sec >= 0 && t->tv_usec >= 0 &&
	       (t->tv_sec > 0 || t->tv_usec > 0);
}

static struct timespec tv_ts(const struct timeval *t)
{
	struct timespec ts = { t->tv_sec, 0 };

	if (t->tv_sec < TRACER__FOREVER) {
		ts.tv_sec += t->tv_usec / 1000000;
		ts.tv_nsec = t->tv_usec % 1000000 * 1000;
	}
	return ts;
}

static void tv_left(struct timeval *t, const struct timespec *d)
{
	struct timespec l = tracer__deadline_left(d);

	t->tv_sec = l.tv_sec;
	t->tv_usec = (l.tv_nsec + 999) / 1000;
	if (t->tv_usec == 1000000) {
		t->tv_sec++;
		t->tv_usec = 0;
	}
}

WRAP_DEFINE_REAL(int, select, (int n, fd_set *rd, fd_set *wr, fd_set *ex,
			       struct timeval *t), (n, rd, wr, ex, t))
static int select_wait(int n, fd_set *rd, fd_set *wr, fd_set *ex,
		       struct timeval *t)
{
	struct tracer__resume r;
	struct timespec d = { 0, 0 };
	bool timed = tv_positive(t);
	int ret;

	tracer__resume_begin(&r);
	if (timed) {
		struct timespec rel = tv_ts(t);

		tracer__deadline_after(&d, &rel);
	}
	/* The sets are left as they were when the call fails. */
	while ((ret = WRAP_REAL(select)(n, rd, wr, ex, t)) < 0 &&
	       tracer__resume_again(&r, errno))
		if (timed)
			tv_left(t, &d);
	return ret;
}

WRAP_DEFINE_REAL(int, pselect, (int n, fd_set *rd, fd_set *wr, fd_set *ex,
				const struct timespec *t, const sigset_t *mask),
		 (n, rd, wr, ex, t, mask))
static int pselect_wait(int n, fd_set *rd, fd_set *wr, fd_set *ex,
			const struct timespec *t, const sigset_t *mask)
{
	int ret;

	TRACER__RESUMING_TS(ret, WRAP_REAL(pselect)(n, rd, wr, ex, t, mask), t);
	return ret;
}

WRAP_DEFINE_REAL(int, epoll_wait, (int ep, struct epoll_event *ev, int max,
				   int timeout), (ep, ev, max, timeout))
static int epoll_wait_wait(int ep, struct epoll_event *ev, int max,
			   int timeout)
{
	int ret;

	TRACER__RESUMING_MS(ret, WRAP_REAL(epoll_wait)(ep, ev, max, timeout),
			    timeout);
	return ret;
}

WRAP_DEFINE_REAL(int, epoll_pwait, (int ep, struct epoll_event *ev, int max,
				    int timeout, const sigset_t *mask),
		 (ep, ev, max, timeout, mask))
static int epoll_pwait_wait(int ep, struct epoll_event *ev, int max,
			    int timeout, const sigset_t *mask)
{
	int ret;

	TRACER__RESUMING_MS(ret,
			    WRAP_REAL(epoll_pwait)(ep, ev, max, timeout, mask),
			    timeout);
	return ret;
}

WRAP_DEFINE_REAL(int, epoll_pwait2, (int ep, struct epoll_event *ev, int max,
				     const struct timespec *t,
				     const sigset_t *mask),
		 (ep, ev, max, t, mask))
static int epoll_pwait2_wait(int ep, struct epoll_event *ev, int max,
			     const struct timespec *t, const sigset_t *mask)
{
	int ret;

	TRACER__RESUMING_TS(ret, WRAP_REAL(epoll_pwait2)(ep, ev, max, t, mask),
			    t);
	return ret;
}

IO_WAITING(int, poll, (struct pollfd *fds, nfds_t n, int timeout),
	   (fds, n, timeout), "nfds %lu timeout_ms %d",
	   ((unsigned long)n, timeout), "nfds %lu result %d",
	   ((unsigned long)n, ret))
IO_WAITING(int, ppoll, (struct pollfd *fds, nfds_t n,
			const struct timespec *t, const sigset_t *mask),
	   (fds, n, t, mask), "nfds %lu timeout_ms %lld",
	   ((unsigned long)n, ts_ms(t)), "nfds %lu result %d",
	   ((unsigned long)n, ret))
IO_WAITING(int, select, (int n, fd_set *rd, fd_set *wr, fd_set *ex,
			 struct timeval *t),
	   (n, rd, wr, ex, t), "nfds %d timeout_ms %lld", (n, tv_ms(t)),
	   "nfds %d result %d", (n, ret))
IO_WAITING(int, pselect, (int n, fd_set *rd, fd_set *wr, fd_set *ex,
			  const struct timespec *t, const sigset_t *mask),
	   (n, rd, wr, ex, t, mask), "nfds %d timeout_ms %lld", (n, ts_ms(t)),
	   "nfds %d result %d", (n, ret))
IO_WAITING(int, epoll_wait, (int ep, struct epoll_event *ev, int max,
			     int timeout),
	   (ep, ev, max, timeout), "epfd %d maxevents %d timeout_ms %d",
	   (ep, max, timeout), "epfd %d result %d", (ep, ret))
IO_WAITING(int, epoll_pwait, (int ep, struct epoll_event *ev, int max,
			      int timeout, const sigset_t *mask),
	   (ep, ev, max, timeout, mask), "epfd %d maxevents %d timeout_ms %d",
	   (ep, max, timeout), "epfd %d result %d", (ep, ret))
IO_WAITING(int, epoll_pwait2, (int ep, struct epoll_event *ev, int max,
			       const struct timespec *t, const sigset_t *mask),
	   (ep, ev, max, t, mask), "epfd %d maxevents %d timeout_ms %lld",
	   (ep, max, ts_ms(t)), "epfd %d result %d", (ep, ret))

/*
 * The fortified poll() and ppoll() of a program built with
 * _FORTIFY_SOURCE, given the size of the array: the C library's check,
 * then the wrapper.
 */
extern void __chk_fail(void) __attribute__((noreturn));
WRAP_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			size_t fdslen);
WRAP_API int __ppoll_chk(struct pollfd *fds, nfds_t n,
			 const struct timespec *t, const sigset_t *mask,
			 size_t fdslen);

WRAP_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

WRAP_API int __ppoll_chk(struct pollfd *fds, nfds_t n,
			 const struct timespec *t, const sigset_t *mask,
			 size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return ppoll(fds, n, t, mask);
}

/* ---- copies between descriptors ---------------------------------------- */

IO_BLOCKING(ssize_t, copy_file_range, (int in, off_t *in_off, int out,
				       off_t *out_off, size_t n,
				       unsigned flags),
	    (in, in_off, out, out_off, n, flags), "fd_in %d fd_out %d count %zu",
	    (in, out, n), "fd_in %d fd_out %d result %zd", (in, out, ret),
	    ret < 0)
IO_BLOCKING(ssize_t, sendfile, (int out, int in, off_t *off, size_t n),
	    (out, in, off, n), "fd_out %d fd_in %d count %zu", (out, in, n),
	    "fd_out %d fd_in %d result %zd", (out, in, ret), ret < 0)
WRAP_API ssize_t sendfile64(int out, int in, off_t *off, size_t n)
	__attribute__((alias("sendfile")));
IO_BLOCKING(ssize_t, splice, (int in, off_t *in_off, int out, off_t *out_off,
			      size_t n, unsigned flags),
	    (in, in_off, out, out_off, n, flags), "fd_in %d fd_out %d count %zu",
	    (in, out, n), "fd_in %d fd_out %d result %zd", (in, out, ret),
	    ret < 0)

/* ---- stdio streams ----------------------------------------------------- */

/*
 * A stream's opening, with the descriptor under it, and its closing (its
 * reads and writes: wrap_stdio.c).
 */
int tracer__wrap_stream_fd(FILE *f)
{
	int err = errno;
	int fd = f ? fileno_unlocked(f) : -1;

	errno = err;	/* EBADF for a stream on memory */
	return fd;
}

#define STREAM_FD(f)	tracer__wrap_stream_fd(f)

IO_CALL(FILE *, fopen, (const char *path, const char *mode), (path, mode),
	"path %s mode %s fd %d", (path, mode, STREAM_FD(ret)), ret == NULL)
WRAP_API FILE *fopen64(const char *path, const char *mode)
	__attribute__((alias("fopen")));
IO_CALL(FILE *, fdopen, (int fd, const char *mode), (fd, mode),
	"fd %d mode %s result %p", (fd, mode, ret), ret == NULL)
IO_CALL(FILE *, freopen, (const char *path, const char *mode, FILE *f),
	(path, mode, f), "path %s mode %s fd %d", (path, mode, STREAM_FD(ret)),
	ret == NULL)
WRAP_API FILE *freopen64(const char *path, const char *mode, FILE *f)
	__attribute__((alias("freopen")));

WRAP_DEFINE_REAL(int, fclose, (FILE *f), (f))
WRAP_API int fclose(FILE *f)
{
	int64_t en = 0;
	int ret = 0, fd = -1;
	WRAP_SITE_E(cs, 0, "libc:fclose", "fd %d result %d", fd, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(fclose)(f);
	fd = STREAM_FD(f);
	ret = WRAP_REAL(fclose)(f);
	en = WRAP_ERRNO(ret != 0);
	WRAP_EMIT_E(cs, en, fd, ret);
	return ret;
}
