#!/bin/bash
# dlopen() of a bare name by a library with its own DT_RUNPATH: the C
# library searches the caller's run path, found from the return address;
# libtracer's dlopen() must leave that search as it is untraced (the
# library loads), and record the loads it can see.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}

mkdir -p "$T/lib/sub"
cat >"$T/inner.c" <<'C'
int inner(void) { return 42; }
C
cat >"$T/outer.c" <<'C'
#include <dlfcn.h>
int outer(void)
{
	void *h = dlopen("libinner.so", RTLD_NOW);
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "inner") : 0;
	return f ? f() : -1;
}
C
cat >"$T/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : 0;
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "outer") : 0;
	printf("outer %d\n", f ? f() : -2);
	return 0;
}
C
$CC -shared -fPIC -o "$T/lib/sub/libinner.so" "$T/inner.c" &&
$CC -shared -fPIC -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/sub' \
	-o "$T/lib/libouter.so" "$T/outer.c" -ldl &&
$CC -o "$T/main" "$T/main.c" -ldl
check "the test programs build" [ $? -eq 0 ]
check "untraced, the library finds its neighbour through its run path" \
	[ "$("$T/main" "$T/lib/libouter.so")" = "outer 42" ]

check "tracerd starts" start_daemon
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$T/main" "$T/lib/libouter.so" \
	>"$T/record.out" 2>"$T/record.err"
dir=$(record_dir "$T/record.err")
if under_asan; then
	# AddressSanitizer's own dlopen() interceptor makes itself the caller:
	# the library is not found even untraced with it preloaded.
	ok 0 "# SKIP traced, the same: AddressSanitizer changes the caller"
else
	check "traced, the same: its dlopen() searched the caller's run path" \
		grep -qx "outer 42" "$T/record.out"
fi
"$TRACECTL" view --no-symbols "$dir" >"$T/view"
check "the program's own dlopen() of a path is recorded" \
	grep -q " proc:dlopen: path $T/lib/libouter.so flags 0x2 base 0x" "$T/view"
finish
