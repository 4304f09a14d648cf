/*
 * fuzz_format.c - libFuzzer target: the printf formatter of tracectl view
 * and export (common/format.c) on any format string, argument types and
 * payload a trace may hold. Input: one byte N (types, N % 9 of them), N
 * bytes mapped to type letters, a format string up to a NUL, the payload.
 */
#include <stdint.h>
#include <string.h>

#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char letters[] = "iudDps";
	char types[9], format[512], out[1024];
	size_t n, i, flen, written;

	if (size < 1)
		return 0;
	n = data[0] % 9u;
	if (size < 1 + n)
		return 0;
	for (i = 0; i < n; i++)
		types[i] = letters[data[1 + i] % (sizeof(letters) - 1)];
	types[n] = '\0';
	data += 1 + n;
	size -= 1 + n;
	flen = strnlen((const char *)data, size);
	if (flen >= sizeof(format))
		flen = sizeof(format) - 1;
	memcpy(format, data, flen);
	format[flen] = '\0';
	if (flen < size)
		flen++;		/* past the NUL */
	tracer__format_event(out, sizeof(out), format, types, data + flen,
			     size - flen, &written);
	if (written >= sizeof(out))
		__builtin_trap();	/* the output must fit what was given */
	tracer__format_event(out, 7, format, types, data + flen, size - flen,
			     &written);
	return 0;
}
