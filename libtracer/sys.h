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
 * errno is left alone (it is the program's). Elsewhere than on x86-64 and
 * AArch64 (64-bit), whose calling conventions and struct stat are known
 * here, the C library's wrappers make the calls, errno saved around them.
 */
#ifndef TRACER_SYS_H
#define TRACER_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(TRACER_SYS_LIBC)
/* (tests: the C library's wrappers wherever this runs) */
#elif defined(__x86_64__) && defined(__LP64__)
#define TRACER_SYS_RAW 1

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

#elif defined(__aarch64__) && defined(__LP64__)
#define TRACER_SYS_RAW 1

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

#endif

#ifdef TRACER_SYS_RAW

/* openat(AT_FDCWD, path, flags): a descriptor or a negative errno. */
static inline int tracer__sys_open(const char *path, int flags)
{
	return (int)tracer__sys6(SYS_openat, AT_FDCWD, (long)path, flags, 0,
				 0, 0);
}

/* fstat(): on these two the kernel's struct stat is the C library's. */
static inline int tracer__sys_fstat(int fd, struct stat *st)
{
	return (int)tracer__sys6(SYS_fstat, fd, (long)st, 0, 0, 0, 0);
}

/* A mapping, or a negative errno as a pointer: tracer__sys_failed(). */
static inline void *tracer__sys_mmap(void *addr, size_t len, int prot,
				     int flags, int fd, off_t off)
{
	return (void *)tracer__sys6(SYS_mmap, (long)addr, (long)len, prot,
				    flags, fd, (long)off);
}

static inline int tracer__sys_close(int fd)
{
	return (int)tracer__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
}

static inline int tracer__sys_kill(pid_t pid, int sig)
{
	return (int)tracer__sys6(SYS_kill, pid, sig, 0, 0, 0, 0);
}

#else

/* r, or -errno when r says it failed; errno back as it was. */
static inline long tracer__sys_ret(long r, int saved)
{
	if (r == -1)
		r = -errno;
	errno = saved;
	return r;
}

static inline int tracer__sys_open(const char *path, int flags)
{
	int saved = errno;

	return (int)tracer__sys_ret(open(path, flags), saved);
}

static inline int tracer__sys_fstat(int fd, struct stat *st)
{
	int saved = errno;

	return (int)tracer__sys_ret(fstat(fd, st), saved);
}

static inline void *tracer__sys_mmap(void *addr, size_t len, int prot,
				     int flags, int fd, off_t off)
{
	int saved = errno;
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		p = (void *)(long)-errno;
	errno = saved;
	return p;
}

static inline int tracer__sys_close(int fd)
{
	int saved = errno;

	return (int)tracer__sys_ret(close(fd), saved);
}

static inline int tracer__sys_kill(pid_t pid, int sig)
{
	int saved = errno;

	return (int)tracer__sys_ret(kill(pid, sig), saved);
}

#endif

/* Is p, from tracer__sys_mmap(), an error (or NULL: no mapping)? */
static inline int tracer__sys_failed(const void *p)
{
	return p == NULL || (unsigned long)p > -4096UL;
}

#endif /* TRACER_SYS_H */
