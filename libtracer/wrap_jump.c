/*
 * wrap_jump.c - longjmp(), _longjmp(), siglongjmp() and __longjmp_chk()
 * (what fortified builds call for the first three): a jump made in a
 * signal handler leaves it without returning to libtracer's trampoline.
 * Each wrapper tells signal.c where the jump goes (the stack pointer it
 * restores: tracer__signal_jumped() drops the handlers it leaves), then
 * makes the C library's jump. No event: the cost outside a handler is one
 * thread-local load.
 *
 * The stack pointer is read from the jmp_buf where the C library's layout
 * is known: glibc on x86-64 keeps it mangled with the thread's pointer
 * guard (xor with %fs:0x30, then rotated left 17 bits). Elsewhere the
 * handlers are kept, as before a jump (the thread's events in them are
 * then treated as a handler's).
 */
/* Not fortified: the functions defined here are the C library's names,
 * which <setjmp.h> would otherwise redirect to __longjmp_chk. */
#undef _FORTIFY_SOURCE
#include <setjmp.h>
#include <stdint.h>

#include "internal.h"
#include "wrap.h"

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

enum { J_LONGJMP, J__LONGJMP, J_SIGLONGJMP, J_CHK, J_COUNT };

static const char *const names[J_COUNT] = {
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"
};
static jump_fn real[J_COUNT];

/* A handler must not look a function up: done at the library's start. */
void tracer__jump_init(void)
{
	int i;

	for (i = 0; i < J_COUNT; i++)
		__atomic_store_n(&real[i], (jump_fn)tracer__next(names[i]),
				 __ATOMIC_RELAXED);
}

/* The stack pointer a jump to env restores, or 0 if it cannot be read. */
static uintptr_t jump_sp(const struct __jmp_buf_tag *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard;	/* JB_RSP */

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << 47)) ^ guard;
#else
	(void)env;
	return 0;
#endif
}

static __attribute__((noreturn)) void jump(int which,
					   struct __jmp_buf_tag *env, int val)
{
	jump_fn f = __atomic_load_n(&real[which], __ATOMIC_RELAXED);
	uintptr_t sp;

	if (tracer__in_handler()) {
		sp = jump_sp(env);
		if (sp)
			tracer__signal_jumped(sp);
	}
	if (!f)		/* before tracer__jump_init(); aborts if none */
		f = (jump_fn)tracer__wrap_next(names[which]);
	f(env, val);
	__builtin_unreachable();
}

TRACER_API void longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(J_LONGJMP, env, val);
}

TRACER_API void _longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(J__LONGJMP, env, val);
}

TRACER_API void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(J_SIGLONGJMP, env, val);
}

TRACER_API __attribute__((noreturn)) void
__longjmp_chk(struct __jmp_buf_tag env[1], int val);

TRACER_API void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	jump(J_CHK, env, val);
}
