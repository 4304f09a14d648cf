/*
 * rb_internal.h - declarations shared by the ring-buffer source files only.
 */
#ifndef TRACER_RB_INTERNAL_H
#define TRACER_RB_INTERNAL_H

#include "rb.h"

/*
 * Check the channel header of region[0..size) and copy its immutable line
 * into *copy; fill *geo from it.
 * Returns 0, -EINVAL (bad magic, sizes, mode, geometry or offsets), -EPROTO
 * (layout version), -ENOSPC (region smaller than the header says).
 */
int tracer__rb_check_header(const void *region, uint64_t size,
			    struct tracer_rb_header *copy,
			    struct tracer_rb_geometry *geo, const char **why);

#endif /* TRACER_RB_INTERNAL_H */
