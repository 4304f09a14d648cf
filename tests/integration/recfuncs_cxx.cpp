/*
 * recfuncs_cxx.cpp - the C++ half of recfuncs (see recfuncs.c): records
 * with every kind of argument through <tracer.h>'s C++ overloads and
 * templates, then calls the C half. Prints "calls NAME..." (the
 * program's instrumented functions, in the order called) for
 * test_symbols.sh.
 *
 * usage: recfuncs N
 */
#include <cstdio>
#include <cstdlib>

#include <tracer.h>

extern "C" int c_values(int n);

enum colour { RED, GREEN };

__attribute__((noinline)) static int cxx_values(int n)
{
	long double ld = n / 4.0L;
	const char *cs = "const";
	char buf[] = "mutable";
	short sh = (short)n;
	colour c = GREEN;

	tracer_record("test:cxx_values", "int %d unsigned %u long %ld ull %llu "
		      "short %hd char %c enum %d", n, (unsigned)n, (long)n,
		      (unsigned long long)n, sh, 'y', c);
	tracer_record("test:cxx_more", "float %f double %f long double %Lf "
		      "const %s mutable %s pointer %p bool %d",
		      (float)n, n / 2.0, ld, cs, buf, (void *)&n, n > 0);
	return n * 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 3;
	int r = cxx_values(n) + c_values(n);

	std::printf("calls main cxx_values c_values\n");
	return r > 0 ? 0 : 1;
}
