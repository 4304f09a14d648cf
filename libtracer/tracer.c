/*
 * tracer.c: libtracer entry points.
 */

#include "config.h"

#include "tracer.h"

const char *tracer_version(void)
{
	return PACKAGE_VERSION;
}
