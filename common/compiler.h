/*
 * compiler.h - small compiler helpers shared by libtracer, tracerd and tests.
 *
 * Internal header: not installed.
 */
#ifndef TRACER_COMPILER_H
#define TRACER_COMPILER_H

#define tracer_likely(x)	__builtin_expect(!!(x), 1)
#define tracer_unlikely(x)	__builtin_expect(!!(x), 0)

#define TRACER_CACHELINE	64
#define tracer_cacheline_aligned __attribute__((aligned(TRACER_CACHELINE)))

/* The event path's helpers: inlined even where the compiler would not
 * (a call, its saved registers and its return cost more than they do). */
#define tracer_always_inline	inline __attribute__((always_inline))

/* Symbols shared between the objects of one binary, never exported. */
#define TRACER_HIDDEN		__attribute__((visibility("hidden")))

#define TRACER_ALIGN_UP(x, a)	(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

#define TRACER_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A large zero-initialised array that a program's start without a session
 * does not touch:
 * placed after the other variables (libtracer links with
 * --sort-section=name), so that those share a few pages and a start
 * takes fewer page faults (each first touch of a .bss page costs one,
 * two for a read then a write: bench/start-results.md).
 */
#define TRACER_COLD_BSS	__attribute__((section(".bss.tracer_cold")))

#endif /* TRACER_COMPILER_H */
