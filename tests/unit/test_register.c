/*
 * test_register.c - libtracer registers only the call-site descriptors
 * whose values it can store: one type letter per argument, each one of
 * event_format.h's. A descriptor not made by <tracer.h>'s macros (built
 * by hand, or damaged) with another letter, or fewer letters than
 * arguments, is left out (its id stays 0, so it never records), and the
 * others of the section are registered as usual.
 */
#include <stdint.h>
#include <string.h>

#define TRACER_NO_AUTO_REGISTER	/* the sections below are registered here */
#include "tracer.h"
#include "tap.h"

static struct tracer_callsite sites[] = {
	{ .abi = TRACER_CALLSITE_ABI, .nargs = 2, .name = "t:good",
	  .format = "%d %s", .file = __FILE__, .types = "is" },
	{ .abi = TRACER_CALLSITE_ABI, .nargs = 1, .name = "t:letter",
	  .format = "%d", .file = __FILE__, .types = "q" },
	{ .abi = TRACER_CALLSITE_ABI, .nargs = 2, .name = "t:short",
	  .format = "%d %d", .file = __FILE__, .types = "i" },
	{ .abi = TRACER_CALLSITE_ABI, .nargs = 0, .name = "t:none",
	  .format = "", .file = __FILE__, .types = "" },
};

int main(void)
{
	plan(3);
	tracer_register_callsites(sites, sites + 4);
	ok(sites[0].id != 0 && sites[3].id != 0 && sites[0].id != sites[3].id,
	   "descriptors with one known letter per argument get ids "
	   "(%u, %u)", sites[0].id, sites[3].id);
	ok(sites[1].id == 0 && sites[1].enabled == 0,
	   "an unknown letter: left out, never enabled");
	ok(sites[2].id == 0 && sites[2].enabled == 0,
	   "fewer letters than arguments: left out, never enabled");
	tracer_unregister_callsites(sites, sites + 4);
	return done();
}
