/*
 * wrap_fs.c - the C library's file system calls, recorded as libc:*
 * events (wrap.h explains the wrappers, wrap_io.c the shape of the
 * events): what a program looks up, creates, removes and renames, its
 * descriptors' fcntl() and ioctl() calls, and the directories it lists.
 *
 *   libc:stat      path /etc/hosts mode 0100644 size 187 result 0
 *   libc:unlinkat  dirfd -100 path tmp/x flags 0 result -1 errno ENOENT
 *   libc:readdir   fd 3 result 1 name hosts
 *
 * One event after the call, but for the two fcntl() commands that wait
 * for a lock (F_SETLKW, F_OFD_SETLKW): libc:fcntl_lock_entry before,
 * libc:fcntl_lock_exit after. The large-file names (stat64, readdir64,
 * truncate64, fcntl64 ...) and the names a program built with a C library
 * older than 2.33 calls (__xstat, __fxstatat ...) record the same events
 * as the plain call. On the 64-bit systems libtracer is built for, the
 * large-file structures (struct stat64, struct dirent64) are the plain
 * ones: the large-file names are aliases, as in the C library.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wrap.h"

/* A large-file name: the same function under a second symbol name (its
 * declaration in the C library's headers has other types), with the
 * attributes of the first (nonnull ...). */
#if defined(__has_attribute)
#if __has_attribute(copy)
#define FS_COPY(name)	__attribute__((copy(name)))
#endif
#endif
#ifndef FS_COPY
#define FS_COPY(name)
#endif
#define FS_ALIAS(T, sym, name, params) \
	WRAP_API T tracer__fs_##sym params __asm__(#sym) \
		__attribute__((alias(#name))) FS_COPY(name);

/* ---- looking files up ------------------------------------------------ */

/* The file's mode and size from a successful call's answer; 0 else. */
#define ST_MODE(st)	(ret == 0 ? (unsigned)(st)->st_mode : 0u)
#define ST_SIZE(st)	(ret == 0 ? (long long)(st)->st_size : 0LL)

/* Before 2.33, stat() and its kin were inline calls of these. */
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);

WRAP_DEFINE_REAL(int, stat, (const char *p, struct stat *s), (p, s))
WRAP_DEFINE_REAL(int, __xstat, (int v, const char *p, struct stat *s),
		 (v, p, s))
WRAP_DEFINE_REAL(int, lstat, (const char *p, struct stat *s), (p, s))
WRAP_DEFINE_REAL(int, __lxstat, (int v, const char *p, struct stat *s),
		 (v, p, s))
WRAP_DEFINE_REAL(int, fstat, (int fd, struct stat *s), (fd, s))
WRAP_DEFINE_REAL(int, __fxstat, (int v, int fd, struct stat *s), (v, fd, s))
WRAP_DEFINE_REAL(int, fstatat, (int d, const char *p, struct stat *s, int f),
		 (d, p, s, f))
WRAP_DEFINE_REAL(int, __fxstatat, (int v, int d, const char *p,
				   struct stat *s, int f), (v, d, p, s, f))

/*
 * Each event's call site, shared by the plain and the __x name: a static
 * function's static variable is one object, wherever it is inlined.
 */
#define ST_VARS \
	const char *path = ""; \
	unsigned mode = 0; \
	long long size = 0; \
	int fd = 0, dirfd = 0, flags = 0, ret = 0; \
	(void)path; (void)fd; (void)dirfd; (void)flags

static inline struct tracer_callsite *stat_site(void)
{
	ST_VARS;
	WRAP_SITE_E(cs, 0, "libc:stat", "path %s mode %#o size %lld result %d",
		    path, mode, size, ret);
	return &cs;
}

static inline struct tracer_callsite *lstat_site(void)
{
	ST_VARS;
	WRAP_SITE_E(cs, 0, "libc:lstat", "path %s mode %#o size %lld result %d",
		    path, mode, size, ret);
	return &cs;
}

static inline struct tracer_callsite *fstat_site(void)
{
	ST_VARS;
	WRAP_SITE_E(cs, 0, "libc:fstat", "fd %d mode %#o size %lld result %d",
		    fd, mode, size, ret);
	return &cs;
}

static inline struct tracer_callsite *fstatat_site(void)
{
	ST_VARS;
	WRAP_SITE_E(cs, 0, "libc:fstatat",
		    "dirfd %d path %s flags %#x mode %#o size %lld result %d",
		    dirfd, path, flags, mode, size, ret);
	return &cs;
}

/*
 * The recording, out of line (the wrapper off is a load, a branch and a
 * jump): ver < 0 for the plain call, else the __x call's version.
 */
__attribute__((noinline))
static int record_stat(int ver, const char *path, struct stat *st)
{
	int64_t en;
	int ret;

	ret = ver < 0 ? WRAP_REAL(stat)(path, st)
		      : WRAP_REAL(__xstat)(ver, path, st);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(*stat_site(), en, path, ST_MODE(st), ST_SIZE(st), ret);
	return ret;
}

__attribute__((noinline))
static int record_lstat(int ver, const char *path, struct stat *st)
{
	int64_t en;
	int ret;

	ret = ver < 0 ? WRAP_REAL(lstat)(path, st)
		      : WRAP_REAL(__lxstat)(ver, path, st);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(*lstat_site(), en, path, ST_MODE(st), ST_SIZE(st), ret);
	return ret;
}

__attribute__((noinline))
static int record_fstat(int ver, int fd, struct stat *st)
{
	int64_t en;
	int ret;

	ret = ver < 0 ? WRAP_REAL(fstat)(fd, st)
		      : WRAP_REAL(__fxstat)(ver, fd, st);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(*fstat_site(), en, fd, ST_MODE(st), ST_SIZE(st), ret);
	return ret;
}

__attribute__((noinline))
static int record_fstatat(int ver, int dirfd, const char *path,
			  struct stat *st, int flags)
{
	int64_t en;
	int ret;

	ret = ver < 0 ? WRAP_REAL(fstatat)(dirfd, path, st, flags)
		      : WRAP_REAL(__fxstatat)(ver, dirfd, path, st, flags);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(*fstatat_site(), en, dirfd, path, flags, ST_MODE(st),
		  ST_SIZE(st), ret);
	return ret;
}

#define ST_OFF(site)	tracer_likely(!WRAP_ON(*site()))

WRAP_API int stat(const char *path, struct stat *st)
{
	if (ST_OFF(stat_site))
		return WRAP_REAL(stat)(path, st);
	return record_stat(-1, path, st);
}

WRAP_API int lstat(const char *path, struct stat *st)
{
	if (ST_OFF(lstat_site))
		return WRAP_REAL(lstat)(path, st);
	return record_lstat(-1, path, st);
}

WRAP_API int fstat(int fd, struct stat *st)
{
	if (ST_OFF(fstat_site))
		return WRAP_REAL(fstat)(fd, st);
	return record_fstat(-1, fd, st);
}

WRAP_API int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (ST_OFF(fstatat_site))
		return WRAP_REAL(fstatat)(dirfd, path, st, flags);
	return record_fstatat(-1, dirfd, path, st, flags);
}

WRAP_API int __xstat(int ver, const char *path, struct stat *st)
{
	if (ST_OFF(stat_site))
		return WRAP_REAL(__xstat)(ver, path, st);
	return record_stat(ver, path, st);
}

WRAP_API int __lxstat(int ver, const char *path, struct stat *st)
{
	if (ST_OFF(lstat_site))
		return WRAP_REAL(__lxstat)(ver, path, st);
	return record_lstat(ver, path, st);
}

WRAP_API int __fxstat(int ver, int fd, struct stat *st)
{
	if (ST_OFF(fstat_site))
		return WRAP_REAL(__fxstat)(ver, fd, st);
	return record_fstat(ver, fd, st);
}

WRAP_API int __fxstatat(int ver, int dirfd, const char *path,
			struct stat *st, int flags)
{
	if (ST_OFF(fstatat_site))
		return WRAP_REAL(__fxstatat)(ver, dirfd, path, st, flags);
	return record_fstatat(ver, dirfd, path, st, flags);
}

FS_ALIAS(int, stat64, stat, (const char *path, struct stat *st))
FS_ALIAS(int, lstat64, lstat, (const char *path, struct stat *st))
FS_ALIAS(int, fstat64, fstat, (int fd, struct stat *st))
FS_ALIAS(int, fstatat64, fstatat, (int dirfd, const char *path,
				   struct stat *st, int flags))
FS_ALIAS(int, __xstat64, __xstat, (int ver, const char *path,
				   struct stat *st))
FS_ALIAS(int, __lxstat64, __lxstat, (int ver, const char *path,
				     struct stat *st))
FS_ALIAS(int, __fxstat64, __fxstat, (int ver, int fd, struct stat *st))
FS_ALIAS(int, __fxstatat64, __fxstatat, (int ver, int dirfd,
					 const char *path, struct stat *st,
					 int flags))

/* statx(): the mask asked for, and the mode and size it answered. */
IO_CALL(int, statx, (int dirfd, const char *path, int flags, unsigned mask,
		     struct statx *st), (dirfd, path, flags, mask, st),
	"dirfd %d path %s flags %#x mask %#x mode %#o size %lld result %d",
	(dirfd, path, flags, mask,
	 ret == 0 ? (unsigned)st->stx_mode : 0u,
	 ret == 0 ? (long long)st->stx_size : 0LL, ret), ret < 0)

/* access() and its kin: the mode asked (R_OK 4, W_OK 2, X_OK 1, F_OK 0). */
IO_CALL(int, access, (const char *path, int mode), (path, mode),
	"path %s mode %d result %d", (path, mode, ret), ret < 0)
IO_CALL(int, faccessat, (int dirfd, const char *path, int mode, int flags),
	(dirfd, path, mode, flags), "dirfd %d path %s mode %d flags %#x result %d",
	(dirfd, path, mode, flags, ret), ret < 0)
IO_CALL(int, euidaccess, (const char *path, int mode), (path, mode),
	"path %s mode %d result %d", (path, mode, ret), ret < 0)
WRAP_API int eaccess(const char *path, int mode)
	__attribute__((alias("euidaccess")));

/* ---- creating, removing and renaming ------------------------------------ */

IO_CALL(int, unlink, (const char *path), (path), "path %s result %d",
	(path, ret), ret < 0)
IO_CALL(int, unlinkat, (int dirfd, const char *path, int flags),
	(dirfd, path, flags), "dirfd %d path %s flags %#x result %d",
	(dirfd, path, flags, ret), ret < 0)
IO_CALL(int, rename, (const char *from, const char *to), (from, to),
	"oldpath %s newpath %s result %d", (from, to, ret), ret < 0)
IO_CALL(int, renameat, (int fromfd, const char *from, int tofd,
			const char *to), (fromfd, from, tofd, to),
	"olddirfd %d oldpath %s newdirfd %d newpath %s result %d",
	(fromfd, from, tofd, to, ret), ret < 0)
IO_CALL(int, renameat2, (int fromfd, const char *from, int tofd,
			 const char *to, unsigned flags),
	(fromfd, from, tofd, to, flags),
	"olddirfd %d oldpath %s newdirfd %d newpath %s flags %#x result %d",
	(fromfd, from, tofd, to, flags, ret), ret < 0)
IO_CALL(int, mkdir, (const char *path, mode_t mode), (path, mode),
	"path %s mode %#o result %d", (path, (unsigned)mode, ret), ret < 0)
IO_CALL(int, mkdirat, (int dirfd, const char *path, mode_t mode),
	(dirfd, path, mode), "dirfd %d path %s mode %#o result %d",
	(dirfd, path, (unsigned)mode, ret), ret < 0)
IO_CALL(int, rmdir, (const char *path), (path), "path %s result %d",
	(path, ret), ret < 0)
IO_CALL(int, truncate, (const char *path, off_t len), (path, len),
	"path %s length %lld result %d", (path, (long long)len, ret), ret < 0)
IO_CALL(int, ftruncate, (int fd, off_t len), (fd, len),
	"fd %d length %lld result %d", (fd, (long long)len, ret), ret < 0)
WRAP_API int truncate64(const char *path, off_t len)
	__attribute__((alias("truncate")));
WRAP_API int ftruncate64(int fd, off_t len)
	__attribute__((alias("ftruncate")));

/* ---- fcntl() ------------------------------------------------------------ */

/* What fcntl()'s third argument is, by command. */
enum fcntl_kind {
	FCNTL_NONE,	/* no argument: none is read */
	FCNTL_INT,	/* an int */
	FCNTL_LOCK,	/* a struct flock *, the call does not wait */
	FCNTL_LOCKW,	/* a struct flock *, the call waits for the lock */
	FCNTL_WORD,	/* a pointer, or a command unknown here: passed on */
};

static enum fcntl_kind fcntl_kind(int cmd)
{
	switch (cmd) {
	case F_GETFD: case F_GETFL: case F_GETOWN: case F_GETSIG:
	case F_GETLEASE: case F_GETPIPE_SZ: case F_GET_SEALS:
		return FCNTL_NONE;
	case F_DUPFD: case F_DUPFD_CLOEXEC: case F_SETFD: case F_SETFL:
	case F_SETOWN: case F_SETSIG: case F_SETLEASE: case F_NOTIFY:
	case F_SETPIPE_SZ: case F_ADD_SEALS:
		return FCNTL_INT;
	case F_GETLK: case F_SETLK: case F_OFD_GETLK: case F_OFD_SETLK:
		return FCNTL_LOCK;
	case F_SETLKW: case F_OFD_SETLKW:
		return FCNTL_LOCKW;
	default:
		return FCNTL_WORD;
	}
}

/* The name of a common command; "?" for the others. */
static const char *fcntl_name(int cmd)
{
	switch (cmd) {
	case F_DUPFD: return "F_DUPFD";
	case F_DUPFD_CLOEXEC: return "F_DUPFD_CLOEXEC";
	case F_GETFD: return "F_GETFD";
	case F_SETFD: return "F_SETFD";
	case F_GETFL: return "F_GETFL";
	case F_SETFL: return "F_SETFL";
	case F_GETLK: return "F_GETLK";
	case F_SETLK: return "F_SETLK";
	case F_SETLKW: return "F_SETLKW";
	case F_OFD_GETLK: return "F_OFD_GETLK";
	case F_OFD_SETLK: return "F_OFD_SETLK";
	case F_OFD_SETLKW: return "F_OFD_SETLKW";
	case F_GETOWN: return "F_GETOWN";
	case F_SETOWN: return "F_SETOWN";
	case F_GETOWN_EX: return "F_GETOWN_EX";
	case F_SETOWN_EX: return "F_SETOWN_EX";
	case F_GETSIG: return "F_GETSIG";
	case F_SETSIG: return "F_SETSIG";
	case F_GETLEASE: return "F_GETLEASE";
	case F_SETLEASE: return "F_SETLEASE";
	case F_NOTIFY: return "F_NOTIFY";
	case F_GETPIPE_SZ: return "F_GETPIPE_SZ";
	case F_SETPIPE_SZ: return "F_SETPIPE_SZ";
	case F_ADD_SEALS: return "F_ADD_SEALS";
	case F_GET_SEALS: return "F_GET_SEALS";
	default: return "?";
	}
}

static const char *lock_type(const struct flock *fl)
{
	if (!fl)
		return "?";
	switch (fl->l_type) {
	case F_RDLCK: return "F_RDLCK";
	case F_WRLCK: return "F_WRLCK";
	case F_UNLCK: return "F_UNLCK";
	default: return "?";
	}
}

#define LOCK_WHENCE(fl)	((fl) ? (int)(fl)->l_whence : -1)
#define LOCK_START(fl)	((fl) ? (long long)(fl)->l_start : 0LL)
#define LOCK_LEN(fl)	((fl) ? (long long)(fl)->l_len : 0LL)

WRAP_DEFINE_REAL(int, fcntl, (int fd, int cmd, void *arg), (fd, cmd, arg))

/* Any command but the lock ones: libc:fcntl, arg the int or pointer. */
static int fcntl_plain(int fd, int cmd, void *arg, enum fcntl_kind kind)
{
	const char *name = "";
	int64_t en = 0;
	unsigned long a = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:fcntl",
		    "fd %d cmd %d cmdname %s arg %#lx result %d",
		    fd, cmd, name, a, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(fcntl)(fd, cmd, arg);
	ret = WRAP_REAL(fcntl)(fd, cmd, arg);
	en = WRAP_ERRNO(ret < 0);
	name = fcntl_name(cmd);
	a = kind == FCNTL_INT ? (unsigned long)(unsigned)(uintptr_t)arg :
	    kind == FCNTL_NONE ? 0 : (unsigned long)(uintptr_t)arg;
	WRAP_EMIT_E(cs, en, fd, cmd, name, a, ret);
	return ret;
}

/* F_GETLK, F_SETLK and the OFD ones: the lock after the call (for the
 * GETLK ones, the lock in the way, or F_UNLCK). */
static int fcntl_lock(int fd, int cmd, struct flock *fl)
{
	const char *name = "", *type = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:fcntl_lock",
		    "fd %d cmd %s type %s whence %d start %lld len %lld result %d",
		    fd, name, type, LOCK_WHENCE(fl), LOCK_START(fl), LOCK_LEN(fl),
		    ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(fcntl)(fd, cmd, fl);
	ret = WRAP_REAL(fcntl)(fd, cmd, fl);
	en = WRAP_ERRNO(ret < 0);
	name = fcntl_name(cmd);
	type = lock_type(fl);
	WRAP_EMIT_E(cs, en, fd, name, type, LOCK_WHENCE(fl), LOCK_START(fl),
		  LOCK_LEN(fl), ret);
	return ret;
}

/*
 * F_SETLKW and F_OFD_SETLKW, which wait for the lock: an entry and an
 * exit event. The update signal does not cut the wait short (the kernel
 * restarts it: SA_RESTART).
 */
static int fcntl_lockw(int fd, int cmd, struct flock *fl)
{
	const char *name = "", *type = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE(in, 0, "libc:fcntl_lock_entry",
		  "fd %d cmd %s type %s whence %d start %lld len %lld",
		  fd, name, type, LOCK_WHENCE(fl), LOCK_START(fl), LOCK_LEN(fl));
	WRAP_SITE_E(out, 0, "libc:fcntl_lock_exit", "fd %d result %d",
		    fd, ret);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(fcntl)(fd, cmd, fl);
	if (WRAP_ON(in)) {
		name = fcntl_name(cmd);
		type = lock_type(fl);
		WRAP_EMIT(in, fd, name, type, LOCK_WHENCE(fl), LOCK_START(fl),
			  LOCK_LEN(fl));
	}
	ret = WRAP_REAL(fcntl)(fd, cmd, fl);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(out, en, fd, ret);
	}
	return ret;
}

/*
 * The third argument is read only for the commands that take one; a
 * command unknown here gets the word the caller passed, as the C
 * library's fcntl() does for every command.
 */
WRAP_API int fcntl(int fd, int cmd, ...)
{
	enum fcntl_kind kind = fcntl_kind(cmd);
	void *arg = NULL;
	va_list ap;

	if (kind != FCNTL_NONE) {
		va_start(ap, cmd);
		arg = kind == FCNTL_INT ? (void *)(uintptr_t)va_arg(ap, int)
					: va_arg(ap, void *);
		va_end(ap);
	}
	if (kind == FCNTL_LOCK)
		return fcntl_lock(fd, cmd, arg);
	if (kind == FCNTL_LOCKW)
		return fcntl_lockw(fd, cmd, arg);
	return fcntl_plain(fd, cmd, arg, kind);
}

WRAP_API int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

/* ---- ioctl() ------------------------------------------------------------ */

/* The name of a common request; "?" for the others. */
static const char *ioctl_name(unsigned long req)
{
	switch (req) {
	case TCGETS: return "TCGETS";
	case TCSETS: return "TCSETS";
	case TCSETSW: return "TCSETSW";
	case TCSETSF: return "TCSETSF";
	case TCSBRK: return "TCSBRK";
	case TCXONC: return "TCXONC";
	case TCFLSH: return "TCFLSH";
	case TIOCSCTTY: return "TIOCSCTTY";
	case TIOCNOTTY: return "TIOCNOTTY";
	case TIOCGPGRP: return "TIOCGPGRP";
	case TIOCSPGRP: return "TIOCSPGRP";
	case TIOCGSID: return "TIOCGSID";
	case TIOCOUTQ: return "TIOCOUTQ";
	case TIOCSTI: return "TIOCSTI";
	case TIOCGWINSZ: return "TIOCGWINSZ";
	case TIOCSWINSZ: return "TIOCSWINSZ";
	case TIOCGPTN: return "TIOCGPTN";
	case TIOCSPTLCK: return "TIOCSPTLCK";
	case FIONREAD: return "FIONREAD";
	case FIONBIO: return "FIONBIO";
	case FIOASYNC: return "FIOASYNC";
	case FIOCLEX: return "FIOCLEX";
	case FIONCLEX: return "FIONCLEX";
	case FICLONE: return "FICLONE";
	case FICLONERANGE: return "FICLONERANGE";
	case FIGETBSZ: return "FIGETBSZ";
	case FS_IOC_GETFLAGS: return "FS_IOC_GETFLAGS";
	case FS_IOC_SETFLAGS: return "FS_IOC_SETFLAGS";
	case BLKGETSIZE64: return "BLKGETSIZE64";
	default: return "?";
	}
}

/*
 * Whether a request takes an argument is the driver's business: the
 * word the caller passed is read and passed on, whatever the request,
 * as the C library's ioctl() does. One event after the call.
 */
WRAP_DEFINE_REAL(int, ioctl, (int fd, unsigned long req, void *arg),
		 (fd, req, arg))
WRAP_API int ioctl(int fd, unsigned long req, ...)
{
	const char *name = "";
	int64_t en = 0;
	void *arg;
	va_list ap;
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:ioctl",
		    "fd %d request %#lx reqname %s arg %#lx result %d",
		    fd, req, name, (unsigned long)(uintptr_t)arg, ret);

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(ioctl)(fd, req, arg);
	ret = WRAP_REAL(ioctl)(fd, req, arg);
	en = WRAP_ERRNO(ret < 0);
	name = ioctl_name(req);
	WRAP_EMIT_E(cs, en, fd, req, name, (unsigned long)(uintptr_t)arg, ret);
	return ret;
}

/* ---- directories -------------------------------------------------------- */

/* The descriptor of d, -1 for none. Not inlined: the C library declares
 * d non-null, and a caller's NULL must not reach dirfd(). */
__attribute__((noinline)) static int dir_fd(DIR *d)
{
	return d ? dirfd(d) : -1;
}
#define DIR_FD(d)	dir_fd(d)

IO_CALL(DIR *, opendir, (const char *path), (path), "path %s fd %d",
	(path, DIR_FD(ret)), ret == NULL)
IO_CALL(DIR *, fdopendir, (int fd), (fd), "fd %d result %d",
	(fd, ret ? 0 : -1), ret == NULL)

/*
 * readdir(): result 1 and the entry's name, 0 and "" at the end of the
 * directory, -1 and "" with errno when it failed. The C library leaves
 * errno alone at the end: errno is cleared around the call to tell the
 * two apart, and put back when the call did not set it. Called in loops:
 * the recording is a function of its own, so that the wrapper off is a
 * load, a branch and a jump (no frame).
 */
WRAP_DEFINE_REAL(struct dirent *, readdir, (DIR *d), (d))
__attribute__((noinline))
static struct dirent *readdir_record(const struct tracer_callsite *cs,
				     DIR *d)
{
	const char *name = "";
	int64_t en = 0;
	struct dirent *ent;
	int ret = 0, saved = errno, err;

	errno = 0;
	ent = WRAP_REAL(readdir)(d);
	err = errno;
	if (ent) {
		ret = 1;
		name = ent->d_name;
	} else if (err) {
		ret = -1;
	}
	en = (ret < 0) ? (int64_t)err : 0;
	errno = err ? err : saved;
	WRAP_EMIT_E(*cs, en, DIR_FD(d), ret, name);
	return ent;
}

WRAP_API struct dirent *readdir(DIR *d)
{
	const char *name = "";
	int ret = 0;
	WRAP_SITE_E(cs, 0, "libc:readdir", "fd %d result %d name %s",
		    DIR_FD(d), ret, name);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(readdir)(d);
	return readdir_record(&cs, d);
}
FS_ALIAS(struct dirent *, readdir64, readdir, (DIR *d))

WRAP_DEFINE_REAL(int, closedir, (DIR *d), (d))
WRAP_API int closedir(DIR *d)
{
	int64_t en = 0;
	int ret = 0, fd = -1;
	WRAP_SITE_E(cs, 0, "libc:closedir", "fd %d result %d", fd, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(closedir)(d);
	fd = DIR_FD(d);
	ret = WRAP_REAL(closedir)(d);
	en = WRAP_ERRNO(ret < 0);
	WRAP_EMIT_E(cs, en, fd, ret);
	return ret;
}
