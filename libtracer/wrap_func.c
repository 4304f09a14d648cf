/*
 * wrap_func.c - the hooks of GCC's and Clang's -finstrument-functions: a
 * program (or library) built with it calls __cyg_profile_func_enter() at
 * the start of each of its functions and __cyg_profile_func_exit() before
 * each return, with the function's address and the address its caller
 * returns to. libtracer defines them (the C library's do nothing), and
 * records
 *
 *   func:entry  fn 0x55d0c3a1b139 caller 0x55d0c3a1b2f0
 *   func:exit   fn 0x55d0c3a1b139 caller 0x55d0c3a1b2f0
 *
 * which tracectl names by symbol (<main+9>) and turns into nested slices.
 *
 * Cost when the events are off: one load and one branch, like every
 * wrapper (wrap.h). The guard keeps the tracer's own calls out: a function
 * of an instrumented program called while libtracer records (an allocator
 * of the program's own, say) records nothing. The hooks themselves are
 * never instrumented.
 */
#include "wrap.h"

#define NO_INSTRUMENT	__attribute__((no_instrument_function))

WRAP_API void __cyg_profile_func_enter(void *fn, void *site) NO_INSTRUMENT;
WRAP_API void __cyg_profile_func_exit(void *fn, void *site) NO_INSTRUMENT;

WRAP_API void __cyg_profile_func_enter(void *fn, void *site)
{
	WRAP_SITE(cs, 0, "func:entry", "fn %p caller %p", fn, site);

	if (tracer_likely(!WRAP_ON(cs)))
		return;
	WRAP_EMIT(cs, fn, site);
}

WRAP_API void __cyg_profile_func_exit(void *fn, void *site)
{
	WRAP_SITE(cs, 0, "func:exit", "fn %p caller %p", fn, site);

	if (tracer_likely(!WRAP_ON(cs)))
		return;
	WRAP_EMIT(cs, fn, site);
}
