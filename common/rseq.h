/*
 * rseq.h - the C library's restartable sequence area, for the write path's
 * reservation (rb_write.h).
 *
 * Linux aborts a restartable sequence (rseq(2)) that a signal or a
 * preemption interrupts: before the handler runs, or before the thread
 * runs again, it moves the thread from inside the sequence to the
 * sequence's abort address. A reservation written as one can therefore
 * use plain loads and stores where it used a compare-and-swap: a handler
 * that could reserve in the middle of it never finds it half done.
 *
 * The C library (glibc 2.35 and later) registers an area for every thread
 * it starts, at __rseq_offset from the thread pointer; __rseq_size is 0
 * when it did not (a kernel without rseq, a seccomp filter refusing it,
 * GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind). A thread stores the
 * address of its sequence's descriptor in the area's rseq_cs field right
 * before the sequence's first instruction; the kernel clears the field
 * when it finds the thread outside the sequence.
 *
 * x86-64 with <sys/rseq.h> only; elsewhere the reservation keeps its
 * compare-and-swap. libtracer then needs glibc 2.35 (__rseq_offset,
 * __rseq_size) where it was built with it.
 *
 * What it assumes: the descriptors stay mapped (libtracer is linked
 * -z nodelete: the kernel reads the descriptor of the last sequence a
 * thread ran at its next preemption). Where the kernel does not protect
 * a sequence although the thread runs them (a vfork child, on its
 * parent's thread state without a registration of its own; a program
 * that unregistered the C library's area), libtracer's signal trampoline
 * does what the kernel would, for every handler it runs (signal.c): a
 * thread it finds inside a sequence goes to the sequence's abort address
 * before anything of the handler's records. Only a handler installed by a
 * raw system call, in such a thread, is not covered. The abort addresses
 * have no unwind information: a backtrace taken in a handler that
 * interrupted a sequence stops there.
 */
#ifndef TRACER_RSEQ_H
#define TRACER_RSEQ_H

#include <stddef.h>
#include <stdint.h>

/* The sequence is an asm goto with outputs: GCC 11, clang 11 on. */
#if defined(__clang__)
# define TRACER_RSEQ_CC	(__clang_major__ >= 11)
#elif defined(__GNUC__)
# define TRACER_RSEQ_CC	(__GNUC__ >= 11)
#else
# define TRACER_RSEQ_CC	0
#endif

#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_include) && \
	TRACER_RSEQ_CC
# if __has_include(<sys/rseq.h>)
#  include <sys/rseq.h>
#  ifdef RSEQ_SIG
#   define TRACER_HAVE_RSEQ	1
#  endif
# endif
#endif
#ifndef TRACER_HAVE_RSEQ
# define TRACER_HAVE_RSEQ	0
#endif

#if TRACER_HAVE_RSEQ
/* The calling thread's area, registered or not. */
static inline struct rseq *tracer__rseq_area(void)
{
	char *tp;

	__asm__("movq %%fs:0, %0" : "=r"(tp));	/* the thread pointer */
	return (struct rseq *)(void *)(tp + __rseq_offset);
}
#endif

/*
 * Where the calling thread's rseq_cs field is, as an offset from its
 * thread pointer (%fs on x86-64): nonzero when the C library registered
 * the thread's area with the kernel, 0 when it did not (no restartable
 * sequence then: its field would never be read). For the thread itself
 * to call: the answer is its own.
 */
static inline int64_t tracer__rseq_slot(void)
{
#if TRACER_HAVE_RSEQ
	const struct rseq *area;

	/* 0: not registered in this process; 20 (glibc 2.36) or 32: the
	 * fields up to rseq_cs (16 bytes) at least. */
	if (__rseq_size < 16)
		return 0;
	area = tracer__rseq_area();
	/* cpu_id: the kernel's once registered; the C library leaves -1
	 * (not yet) or -2 (refused) otherwise. */
	if ((int32_t)__atomic_load_n(&area->cpu_id, __ATOMIC_RELAXED) < 0)
		return 0;
	return (int64_t)__rseq_offset + (int64_t)offsetof(struct rseq, rseq_cs);
#else
	return 0;
#endif
}

#endif /* TRACER_RSEQ_H */
