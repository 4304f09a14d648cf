/*
 * fsuser.c - file system calls for test_wrap_fs.sh, run preloaded with
 * libtracer (not linked with it): looks files up, creates, renames and
 * removes them, truncates them, takes fcntl() locks, calls ioctl() and
 * lists directories, each call once successfully and once failing.
 *
 *   fsuser DIR     (DIR: an empty directory)
 *
 * Prints one line per call: its name, its result and errno's name when it
 * failed, the same traced as untraced; "# NAME VALUE" lines give the
 * test what it checks the trace against. Exit 0, or 1 when a call did not
 * do what it must (whatever the tracer).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* The names a program built before glibc 2.33 calls. */
int __xstat(int ver, const char *path, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);

static int failures;

/* Print what the call did; count it when it did not do as expected. */
static void say(const char *what, long ret, int err, int want_fail)
{
	if (ret < 0)
		printf("%s %ld %s\n", what, ret, strerrorname_np(err));
	else
		printf("%s %ld\n", what, ret);
	if ((ret < 0) != want_fail) {
		fprintf(stderr, "fsuser: %s: unexpected %s\n", what,
			ret < 0 ? strerror(err) : "success");
		failures++;
	}
}

#define OK(what, call)		do { long r_ = (call); say(what, r_, errno, 0); } while (0)
#define FAILS(what, call)	do { long r_ = (call); say(what, r_, errno, 1); } while (0)

static char *in(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		exit(2);
	return p;
}

static void looking_up(const char *dir, int dfd)
{
	struct stat st;
	struct stat64 st64;
	struct statx sx;
	int fd;

	fd = open(in(dir, "f"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "hello", 5) != 5)
		exit(2);
	printf("# fd %d\n", fd);
	OK("stat", stat(in(dir, "f"), &st));
	printf("# stat size %lld mode %#o\n", (long long)st.st_size,
	       (unsigned)st.st_mode);
	FAILS("stat missing", stat(in(dir, "missing"), &st));
	OK("stat64", stat64(in(dir, "f"), &st64));
	if (symlink("f", in(dir, "link")) < 0)
		exit(2);
	OK("lstat", lstat(in(dir, "link"), &st));
	printf("# lstat mode %#o size %lld\n", (unsigned)st.st_mode,
	       (long long)st.st_size);
	FAILS("lstat missing", lstat(in(dir, "missing"), &st));
	OK("fstat", fstat(fd, &st));
	FAILS("fstat bad", fstat(999, &st));
	OK("fstatat", fstatat(dfd, "f", &st, AT_SYMLINK_NOFOLLOW));
	FAILS("fstatat missing", fstatat(dfd, "missing", &st, 0));
	OK("statx", statx(dfd, "f", 0, STATX_BASIC_STATS, &sx));
	FAILS("statx missing", statx(dfd, "missing", 0, STATX_SIZE, &sx));
	OK("__xstat", __xstat(1, in(dir, "f"), &st));
	FAILS("__fxstatat missing", __fxstatat(1, dfd, "xmissing", &st, 0));

	OK("access", access(in(dir, "f"), R_OK | W_OK));
	FAILS("access missing", access(in(dir, "missing"), F_OK));
	FAILS("faccessat", faccessat(dfd, "f", X_OK, 0));
	OK("euidaccess", euidaccess(in(dir, "f"), R_OK));
	FAILS("eaccess missing", eaccess(in(dir, "missing"), R_OK));

	OK("truncate", truncate(in(dir, "f"), 3));
	FAILS("truncate missing", truncate(in(dir, "missing"), 3));
	OK("ftruncate", ftruncate(fd, 10));
	FAILS("ftruncate bad", ftruncate(999, 10));
	OK("ftruncate64", ftruncate64(fd, 7));
	close(fd);
}

static void changing(const char *dir, int dfd)
{
	OK("mkdir", mkdir(in(dir, "sub"), 0750));
	FAILS("mkdir again", mkdir(in(dir, "sub"), 0750));
	OK("mkdirat", mkdirat(dfd, "sub2", 0700));
	FAILS("mkdirat missing", mkdirat(dfd, "missing/sub", 0700));
	OK("rename", rename(in(dir, "f"), in(dir, "g")));
	FAILS("rename missing", rename(in(dir, "missing"), in(dir, "x")));
	OK("renameat", renameat(dfd, "g", dfd, "h"));
	FAILS("renameat2 noreplace",
	      renameat2(dfd, "h", dfd, "link", RENAME_NOREPLACE));
	OK("renameat2", renameat2(dfd, "h", dfd, "i", 0));
	OK("unlink", unlink(in(dir, "link")));
	FAILS("unlink missing", unlink(in(dir, "missing")));
	OK("unlinkat dir", unlinkat(dfd, "sub2", AT_REMOVEDIR));
	FAILS("unlinkat missing", unlinkat(dfd, "missing", 0));
	FAILS("rmdir missing", rmdir(in(dir, "missing")));
}

static struct flock lk(short type, off_t start, off_t len)
{
	struct flock l;

	memset(&l, 0, sizeof(l));
	l.l_type = type;
	l.l_whence = SEEK_SET;
	l.l_start = start;
	l.l_len = len;
	return l;
}

/* What sqlite3 does with its database file, and more. */
static void locking(const char *dir)
{
	int fd = open(in(dir, "i"), O_RDWR), fd2 = open(in(dir, "i"), O_RDWR);
	int p[2], n = -1, one = 1;
	struct flock l;
	struct termios t;

	if (fd < 0 || fd2 < 0 || pipe(p) < 0 || write(p[1], "abc", 3) != 3)
		exit(2);
	OK("fcntl F_GETFL", fcntl(fd, F_GETFL));
	OK("fcntl F_SETFL", fcntl(fd, F_SETFL, O_NONBLOCK));
	OK("fcntl F_SETFD", fcntl(fd, F_SETFD, FD_CLOEXEC));
	OK("fcntl F_DUPFD_CLOEXEC", fcntl(fd, F_DUPFD_CLOEXEC, 50));
	FAILS("fcntl F_GETFD bad", fcntl(999, F_GETFD));
	FAILS("fcntl unknown", fcntl(fd, 12345, 0));
	l = lk(F_WRLCK, 1073741824, 1);		/* sqlite3's pending byte */
	OK("fcntl F_SETLK", fcntl(fd, F_SETLK, &l));
	l = lk(F_RDLCK, 1073741824, 1);
	OK("fcntl F_OFD_GETLK", fcntl(fd2, F_OFD_GETLK, &l));
	printf("# getlk type %d\n", l.l_type);
	l = lk(F_RDLCK, 1073741824, 1);
	FAILS("fcntl F_OFD_SETLK", fcntl(fd2, F_OFD_SETLK, &l));
	l = lk(F_UNLCK, 1073741824, 1);
	OK("fcntl F_SETLKW", fcntl(fd, F_SETLKW, &l));
	l = lk(F_WRLCK, 0, 0);
	OK("fcntl F_OFD_SETLKW", fcntl(fd2, F_OFD_SETLKW, &l));
	l = lk(F_WRLCK, 0, 0);
	FAILS("fcntl F_SETLK busy", fcntl(fd, F_SETLK, &l));

	OK("ioctl FIONREAD", ioctl(p[0], FIONREAD, &n));
	printf("# fionread %d\n", n);
	FAILS("ioctl TCGETS", ioctl(fd, TCGETS, &t));
	FAILS("ioctl bad", ioctl(999, FIONBIO, &one));
	close(p[0]);
	close(p[1]);
	close(fd);
	close(fd2);
}

static void listing(const char *dir)
{
	struct dirent *e;
	int n = 0, fd;
	DIR *d;

	FAILS("opendir missing", opendir(in(dir, "missing")) ? 0 : -1);
	d = opendir(dir);
	OK("opendir", d ? 0 : -1);
	if (!d)
		exit(2);
	printf("# dirfd %d\n", dirfd(d));
	while ((e = readdir(d)))
		n++;
	printf("readdir %d entries\n", n);
	errno = ENOTSUP;	/* the end leaves errno alone */
	e = readdir(d);
	printf("readdir end %s errno %s\n", e ? "no" : "yes",
	       strerrorname_np(errno));
	OK("closedir", closedir(d));

	fd = open(in(dir, "sub"), O_RDONLY | O_DIRECTORY);
	d = fdopendir(fd);
	OK("fdopendir", d ? 0 : -1);
	n = 0;
	while (d && readdir64(d))
		n++;
	printf("readdir64 %d entries\n", n);
	if (d)
		closedir(d);
	FAILS("fdopendir bad", fdopendir(999) ? 0 : -1);

	/* A directory whose descriptor was closed under it. */
	d = opendir(dir);
	if (!d)
		exit(2);
	close(dirfd(d));
	FAILS("readdir closed", readdir(d) ? 0 : -1);
	FAILS("closedir closed", closedir(d));
	OK("rmdir", rmdir(in(dir, "sub")));
}

int main(int argc, char **argv)
{
	int dfd;

	if (argc != 2) {
		fprintf(stderr, "usage: fsuser DIR\n");
		return 2;
	}
	umask(022);
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		perror(argv[1]);
		return 2;
	}
	printf("# dfd %d\n", dfd);
	looking_up(argv[1], dfd);
	changing(argv[1], dfd);
	locking(argv[1]);
	listing(argv[1]);
	close(dfd);
	return failures ? 1 : 0;
}
