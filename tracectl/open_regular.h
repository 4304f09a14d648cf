/*
 * open_regular.h - open a file of a trace only if it is a regular file.
 *
 * Everything tracectl reads is named by a trace: channel files,
 * process.meta, and the module paths a traced program recorded (which it
 * chooses). open(2) of a FIFO blocks until a writer comes, and a device
 * may do anything: open with O_NONBLOCK, check with fstat, and only then
 * read, blocking again.
 */
#ifndef TRACER_OPEN_REGULAR_H
#define TRACER_OPEN_REGULAR_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Returns the fd of path (*st: its status), or the negative errno of
 * open/fstat/fcntl, or -EINVAL: not a regular file.
 */
static inline int tracer__open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		ret = -errno;
	else if (!S_ISREG(st->st_mode))
		ret = -EINVAL;
	else if (fcntl(fd, F_SETFL, 0) < 0)
		ret = -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

#endif
