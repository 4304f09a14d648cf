/*
 * emit.h - the fast path of an event, shared by tracer.c (the entries of
 * tracer_record() and of the C library wrappers) and by the allocator
 * wrappers (wrap_mem.c), which inline it: a traced malloc+free pair then
 * makes no call and copies no value array into libtracer's entry, 3.5 ns
 * of the pair's 56 on the machine of the README's table. The other
 * wrappers call an entry (tracer__wrap_emitN()), which keeps each of
 * the 200 of them small: most make a system call, which costs far more
 * than the call.
 *
 * What the fast path reads and writes, and why it needs no lock: the top
 * of tracer.c and common/rb_write.h.
 */
#ifndef TRACER_LIBTRACER_EMIT_H
#define TRACER_LIBTRACER_EMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "wrap.h"

/* The calling thread's state (tracer.c). */
extern __thread struct tracer__thread tracer__tls
	__attribute__((tls_model("initial-exec"))) TRACER_HIDDEN;

/*
 * The fast path of an event: the thread acted on the control page in
 * force, and cs's word says "on, by the enable table in force, every
 * value 8 bytes" (a word the registration sets only for a call site
 * whose number of values is valid: callsites.c; the library's own call
 * sites may have it before their id, and id 0 is left to the slow path).
 * An id too large for a compact header goes there too: one unsigned
 * comparison tests both ends, and tracer__rb_write_words() then knows
 * the id fits (0.5 ns an event: its own test, and the registers it
 * needed, are gone). nargs: the values the caller's entry copies (a
 * constant in tracer_record_emitN()), which must be cs's (a descriptor
 * not made by the macros may say otherwise). Calls nothing that may
 * reach a wrapper, a lock or errno. Returns false, having done nothing,
 * for the slow path (tracer.c) to take the event.
 */
static tracer_always_inline bool
tracer__emit_fast(struct tracer__thread *t, const struct tracer_callsite *cs,
		  const union tracer_arg *args, uint32_t nargs)
{
	uint32_t en = __atomic_load_n(&cs->enabled, __ATOMIC_RELAXED);
	uint32_t id = cs->id;
	struct tracer_rb_writer *w;

	if (tracer_unlikely(cs->nargs != nargs ||
			    TRACER_READ_ONCE(tracer__control->epoch) !=
			    t->epoch ||
			    en != TRACER__CS_WORD(TRACER_READ_ONCE(
				    tracer__filter_gen), TRACER__CS_FIXED) ||
			    id - 1 >= TRACER_RB_ID_EXTENDED - 1))
		return false;
	w = &t->ch[cs->vital & 1];
	/* One register for w, rather than its address computed again from
	 * the thread pointer after every barrier. */
	__asm__("" : "+r"(w));
	tracer__rb_write_words(w, id, args, sizeof(*args), nargs);
	return true;
}


/*
 * A wrapper's event that tracer__emit_fast() did not take: the slow path,
 * with the guard (and for an allocator's event, tracer__wrap_alloc)
 * raised around it (tracer.c).
 */
void tracer__wrap_emit_slow(const struct tracer_callsite *cs,
			    const union tracer_arg *args, unsigned alloc)
	TRACER_HIDDEN;

/*
 * A wrapper's event of n values (a constant): none while the guard is
 * raised (the tracer's own calls, a wrapper's slow path); the fast path
 * is the same for every event. alloc: 1 for an allocator's event.
 */
static tracer_always_inline void
tracer__wrap_emit_inline(const struct tracer_callsite *cs,
			 const union tracer_arg *args, unsigned alloc,
			 uint32_t n)
{
	if (tracer__wrap_guard)
		return;
	if (tracer_likely(tracer__emit_fast(&tracer__tls, cs, args, n)))
		return;
	tracer__wrap_emit_slow(cs, args, alloc);
}

#endif /* TRACER_LIBTRACER_EMIT_H */
