/*
 * test_header_c.c: <tracer.h> compiles as strict C99 and tracer_version()
 * matches the headers. Prints TAP.
 */

#include <stdio.h>
#include <string.h>

#include <tracer.h>

int main(void)
{
	const char *v = tracer_version();
	int failed = 0;

	printf("1..2\n");

	if (v != NULL) {
		printf("ok 1 - tracer_version() is not NULL\n");
	} else {
		printf("not ok 1 - tracer_version() is not NULL\n");
		failed = 1;
	}

	if (v != NULL && strcmp(v, TRACER_VERSION_STRING) == 0) {
		printf("ok 2 - tracer_version() equals TRACER_VERSION_STRING (%s)\n",
		       TRACER_VERSION_STRING);
	} else {
		printf("not ok 2 - tracer_version() \"%s\" equals "
		       "TRACER_VERSION_STRING \"%s\"\n",
		       v != NULL ? v : "(null)", TRACER_VERSION_STRING);
		failed = 1;
	}

	return failed;
}
