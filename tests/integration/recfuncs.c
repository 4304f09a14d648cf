/*
 * recfuncs.c - the C half of a program built with -finstrument-functions
 * that calls tracer_record() with every kind of argument, for
 * test_symbols.sh (the C++ half and main() are in recfuncs_cxx.cpp). The
 * trace must hold func:entry and func:exit of the program's functions
 * only: none of <tracer.h>'s helpers (argument conversion, the
 * constructor and destructor that register the call sites).
 */
#include <stdbool.h>
#include <stdint.h>

#include <tracer.h>

/* Called from recfuncs_cxx.cpp; an instrumented function of its own. */
int c_values(int n);

__attribute__((noinline)) int c_values(int n)
{
	long double ld = n / 4.0L;
	unsigned char uc = (unsigned char)n;
	const char *s = "c";
	bool b = n & 1;

	tracer_record("test:c_values", "char %c int %d unsigned %u long %ld "
		      "ull %llu double %f long double %Lf", 'x', n,
		      (unsigned)n, (long)n, (unsigned long long)n, n / 2.0, ld);
	tracer_record("test:c_more", "string %s pointer %p bool %d", s,
		      (void *)&n, b);
	tracer_record_vital("test:c_vital", "byte %hhu short %hd", uc,
			    (short)n);
	tracer_record("test:c_none", "no values");
	return n + 1;
}
