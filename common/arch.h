/*
 * arch.h - CPU-local read-modify-write operations and barriers.
 *
 * Model
 * -----
 * A per-thread ring buffer has exactly one writer thread. The only code that
 * can run concurrently with that thread *on the same buffer* is a signal
 * handler that interrupts it, on the same CPU, and runs to completion before
 * the interrupted code resumes (strict LIFO nesting). A signal is delivered
 * only between two instructions, so a read-modify-write that is a *single
 * instruction* is atomic with respect to it, without the LOCK prefix that
 * makes an instruction atomic with respect to other CPUs (and costs a
 * bus/cache lock, ~20 cycles).
 *
 *   tracer__local_cas64()  one "cmpxchgq" without LOCK: reservation
 *   tracer__local_add64()  one "addq"     without LOCK: commit counters
 *   tracer__local_inc64()  one "incq"     without LOCK: lost/record counters
 *
 * Another CPU (the consumer) may read these words at any time: aligned 8-byte
 * stores are never torn, and x86 (TSO) makes every store visible in program
 * order, so a consumer that observes a commit counter also observes the
 * record bytes stored before it.
 *
 * On other architectures the fallbacks use relaxed __atomic builtins (LL/SC
 * or LSE instructions, which do not lock a bus) plus explicit fences.
 *
 * Barriers
 * --------
 *   tracer__barrier()         compiler-only barrier.
 *   tracer__wmb_local()       orders earlier stores before later stores as
 *                             seen by another CPU (x86: compiler barrier).
 *   tracer__rmb()             orders earlier loads before later loads
 *                             (x86: compiler barrier).
 */
#ifndef TRACER_ARCH_H
#define TRACER_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#define tracer__barrier()	__asm__ __volatile__("" ::: "memory")

#define TRACER_READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define TRACER_WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define tracer__load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define tracer__store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

#if defined(__x86_64__)

#define tracer__wmb_local()	tracer__barrier()
#define tracer__rmb()		tracer__barrier()

/*
 * Compare *p with *expected; if equal store desired and return true, else
 * load *p into *expected and return false. Atomic against signal handlers of
 * the calling thread only. Full compiler barrier.
 */
static inline bool tracer__local_cas64(uint64_t *p, uint64_t *expected,
				       uint64_t desired)
{
	bool ok;

	__asm__ __volatile__("cmpxchgq %3, %1"
			     : "=@ccz"(ok), "+m"(*p), "+a"(*expected)
			     : "r"(desired)
			     : "memory");
	return ok;
}

/* *p += v, atomic against signal handlers of the calling thread only. */
static inline void tracer__local_add64(uint64_t *p, uint64_t v)
{
	__asm__ __volatile__("addq %1, %0" : "+m"(*p) : "er"(v) : "memory");
}

/* ++*p, atomic against signal handlers of the calling thread only. */
static inline void tracer__local_inc64(uint64_t *p)
{
	__asm__ __volatile__("incq %0" : "+m"(*p) : : "memory");
}

#else /* generic */

#define tracer__wmb_local()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define tracer__rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)

static inline bool tracer__local_cas64(uint64_t *p, uint64_t *expected,
				       uint64_t desired)
{
	return __atomic_compare_exchange_n(p, expected, desired, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static inline void tracer__local_add64(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline void tracer__local_inc64(uint64_t *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

#endif

#endif /* TRACER_ARCH_H */
