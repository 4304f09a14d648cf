/*
 * sys.h - system calls made without the C library's wrappers, for the
 * start of a process.
 *
 * Why: in a process that has just started, the first call of each C
 * library wrapper (open, fstat, mmap, close, kill) faults in a page of the
 * library's text, a few microseconds each: most of what the constructor
 * of a process that waits for a session spends (bench/start-results.md).
 * The instruction itself, inlined here, runs in libtracer's own pages,
 * which the constructor has touched already.
 *
 * They return the kernel's answer: a value >= 0, or a negative errno;
 * errno is left alone (it is the program's). Where this file knows no
 * calling convention (neither x86-64 nor AArch64), the C library's
 * syscall() makes the call, errno saved around it.
 */
#ifndef TRACER_SYS_H
#define TRACER_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

static inline long tracer__sys3(long n, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long tracer__sys6(long n, long a, long b, long c, long d,
				long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#elif defined(__aarch64__)

static inline long tracer__sys6(long n, long a, long b, long c, long d,
				long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
}

static inline long tracer__sys3(long n, long a, long b, long c)
{
	return tracer__sys6(n, a, b, c, 0, 0, 0);
}

#else

static inline long tracer__sys6(long n, long a, long b, long c, long d,
				long e, long f)
{
	int saved = errno;
	long ret = syscall(n, a, b, c, d, e, f);

	if (ret == -1)
		ret = -errno;
	errno = saved;
	return ret;
}

static inline long tracer__sys3(long n, long a, long b, long c)
{
	return tracer__sys6(n, a, b, c, 0, 0, 0);
}

#endif

/* openat(AT_FDCWD, path, flags): a descriptor or a negative errno. */
static inline int tracer__sys_open(const char *path, int flags)
{
	return (int)tracer__sys6(SYS_openat, AT_FDCWD, (long)path, flags, 0,
				 0, 0);
}

/* Is p, from tracer__sys_mmap(), an error (or NULL: no mapping)? */
static inline int tracer__sys_failed(const void *p)
{
	return p == NULL || (unsigned long)p > -4096UL;
}

static inline int tracer__sys_close(int fd)
{
	return (int)tracer__sys3(SYS_close, fd, 0, 0);
}

/* A mapping, or a negative errno as a pointer: tracer__sys_failed(). */
static inline void *tracer__sys_mmap(void *addr, size_t len, int prot,
				     int flags, int fd, off_t off)
{
	return (void *)tracer__sys6(SYS_mmap, (long)addr, (long)len, prot,
				    flags, fd, (long)off);
}

/* fstat(); the kernel's struct stat is the C library's on these two. */
static inline int tracer__sys_fstat(int fd, struct stat *st)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return (int)tracer__sys3(SYS_fstat, fd, (long)st, 0);
#else
	int saved = errno, ret = fstat(fd, st) ? -errno : 0;

	errno = saved;
	return ret;
#endif
}

static inline int tracer__sys_kill(pid_t pid, int sig)
{
	return (int)tracer__sys3(SYS_kill, pid, sig, 0);
}

#endif /* TRACER_SYS_H */
