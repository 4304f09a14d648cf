/*
 * fuzz_view.c - libFuzzer target: the trace reader of tracectl view and
 * export (tracectl/trace_dir.c) on any channel file or process.meta.
 * Input: byte 0 even: the rest is a channel file, of session format 2
 * (the older packet layout) when bit 1 is set, else of today's format;
 * odd: a process.meta.
 * Every record must be within the file; nothing may crash, hang or leak.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[64];

static void remove_file(void)
{
	if (path[0])
		unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(remove_file);
	return 0;
}

/* The input in a file of its own (the reader takes a path). */
static int put_file(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz_view.%d", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static void read_channel(uint64_t size, unsigned format)
{
	struct tracer_chan c;
	struct tracer_chan_record rec;
	char err[512];
	int ret, n;

	if (tracer__chan_open(&c, path, format, err, sizeof(err))) {
		tracer__chan_close(&c);
		return;
	}
	/* Each call returns a record or moves past at least a packet
	 * header: bounded by the file's size. */
	for (n = 0; n < 100000; n++) {
		ret = tracer__chan_next(&c, &rec, err, sizeof(err));
		if (ret == 1 && rec.packet_offset >= size)
			abort();
		if (ret == 0 || (ret < 0 && ret != -EBADMSG))
			break;
	}
	tracer__chan_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tracer_meta m;
	char err[512];

	if (size < 1 || put_file(data + 1, size - 1))
		return 0;
	if (data[0] % 2 == 0)
		read_channel(size - 1, data[0] & 2 ? 2 : TRACER__SESSION_FORMAT);
	else if (tracer__meta_load(&m, path, err, sizeof(err)) == 0)
		tracer__meta_free(&m);
	return 0;
}
