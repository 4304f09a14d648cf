/*
 * fuzz_wire.c - libFuzzer target: what tracerd does first with the bytes a
 * client sends (server.c consume()): a frame header, then the protobuf
 * body; a body that decodes is encoded again (as tracerd does to answer)
 * and decoded. Nothing may crash or leak. (Decoding what was encoded may
 * fail: protobuf-c keeps unknown fields, and keeps a field number 0 given
 * as a non-minimal varint, which it then encodes minimally and refuses.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const tracer_msg *m)
{
	const char *why = NULL;
	tracer_msg *again = NULL;
	void *frame;
	size_t n;

	if (tracer__wire_pack(m, &frame, &n))
		return;		/* too large for a frame: refused, fine */
	if (tracer__wire_unpack((char *)frame + TRACER_WIRE_HEADER,
				n - TRACER_WIRE_HEADER, &again, &why) == 0) {
		if (again->body_case != m->body_case)
			abort();	/* read back as another message */
		tracer__wire_free(again);
	}
	free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	tracer_msg *m = NULL;
	uint32_t len;

	if (size >= TRACER_WIRE_HEADER &&
	    tracer__wire_check_header(data, &len, &why) == 0 &&
	    len <= size - TRACER_WIRE_HEADER &&
	    tracer__wire_unpack(data + TRACER_WIRE_HEADER, len, &m, &why) == 0) {
		round_trip(m);
		tracer__wire_free(m);
	}
	if (tracer__wire_unpack(data, size, &m, &why) == 0) {
		round_trip(m);
		tracer__wire_free(m);
	}
	return 0;
}
