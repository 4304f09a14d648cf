/*
 * test_header_cxx.cpp: <tracer.h> compiles as strict C++11 and
 * tracer_version() links with C linkage and matches the headers.
 * Prints TAP.
 */

#include <cstdio>
#include <cstring>

#include <tracer.h>

int main()
{
	const char *v = tracer_version();
	int failed = 0;

	std::printf("1..2\n");

	if (v != nullptr) {
		std::printf("ok 1 - tracer_version() is not NULL\n");
	} else {
		std::printf("not ok 1 - tracer_version() is not NULL\n");
		failed = 1;
	}

	if (v != nullptr && std::strcmp(v, TRACER_VERSION_STRING) == 0) {
		std::printf("ok 2 - tracer_version() equals TRACER_VERSION_STRING (%s)\n",
			    TRACER_VERSION_STRING);
	} else {
		std::printf("not ok 2 - tracer_version() \"%s\" equals "
			    "TRACER_VERSION_STRING \"%s\"\n",
			    v != nullptr ? v : "(null)", TRACER_VERSION_STRING);
		failed = 1;
	}

	return failed;
}
