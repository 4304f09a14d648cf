/*
 * emit_stub.h - an event entry that does nothing, for the unit tests that
 * compile callers of libtracer's entries without linking libtracer
 * (test_elfsites: tracer_record_emitN(); test_wrap_boot: wrap.h's).
 */
#ifndef TRACER_TEST_EMIT_STUB_H
#define TRACER_TEST_EMIT_STUB_H

#define EMIT_STUB(fn) \
void fn(const struct tracer_callsite *cs, const union tracer_arg *args); \
void fn(const struct tracer_callsite *cs, const union tracer_arg *args) \
{ \
	(void)cs; \
	(void)args; \
}

#endif
