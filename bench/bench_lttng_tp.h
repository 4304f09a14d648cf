/*
 * bench_lttng_tp.h - the LTTng-UST tracepoint of bench_lttng.c: two
 * 64-bit integers, the same event as bench_tracer's bench:ev. Built by
 * bench_path.sh when LTTng-UST's headers are installed (pkg-config
 * lttng-ust), never by the project's build.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench_lttng

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench_lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || \
    defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench_lttng, pair,
	LTTNG_UST_TP_ARGS(long, a, long, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(long, a, a)
		lttng_ust_field_integer(long, b, b)
	)
)

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
