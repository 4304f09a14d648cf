#!/bin/bash
# tracer_record() misused in a program (issue 19): more arguments than
# TRACER_MAX_ARGS, or in C++ an argument it cannot record (std::string,
# enum class, struct), or in C a struct, union or complex argument, does
# not compile, and the compiler says why in the words of <tracer.h> (not
# an undefined TRACER__REC_9 or "no match for operator+"); the uses it
# takes still compile without a warning. With the compilers configure
# found ($CC and $CXX, else the build's Makefile), and gcc, g++, clang and
# clang++ when installed.
. "$(dirname "$0")/lib.sh"

INC=$(dirname "$0")/../../include

# The build's compiler for LANG (CC or CXX): $CC / $CXX, else the
# Makefile's, else DEFAULT.
build_compiler() {
	local v=${!1:-}

	[ -n "$v" ] || v=$(sed -n "s/^$1 = //p" Makefile 2>/dev/null)
	echo "${v:-$2}"
}

# compilers BUILD OTHERS...: BUILD (a command, with options perhaps),
# then those of OTHERS installed and not already named; one a line.
compilers() {
	local list=" $1 " c
	echo "$1"
	shift
	for c in "$@"; do
		case $list in
		*" $c "*) continue ;;
		esac
		command -v "$c" >/dev/null 2>&1 && echo "$c"
	done
}

mapfile -t CCS < <(compilers "$(build_compiler CC cc)" gcc clang)
mapfile -t CXXS < <(compilers "$(build_compiler CXX c++)" g++ clang++)

# compile COMPILER FLAGS... FILE: compile FILE to an object; the
# compiler's output in $T/out.
compile() {
	local cc=$1
	shift
	# $cc unquoted: CC may hold options ("gcc -m32").
	$cc -I"$INC" "$@" -c -o "$T/obj.o" >"$T/out" 2>&1
}

show_out() {
	sed -n '1,15s/^/# /p' "$T/out"
}

# The diagnostics <tracer.h> gave before: an implicit TRACER__REC_a (9
# arguments), no unary + for a class or an enum class, a struct passed to
# tracer__a_p().
OLD='TRACER__REC_a|operator\+|unary|tracer__a_p'

# refused DESCRIPTION COMPILER FLAGS FILE MESSAGE: FILE does not compile,
# the output has MESSAGE, and none of the errors of before ($OLD).
refused() {
	local desc=$1 cc=$2 flags=$3 src=$4 msg=$5

	# shellcheck disable=SC2086 # $flags: one or more options
	if compile "$cc" $flags "$src"; then
		ok 1 "$cc: $desc: does not compile"
		show_out
	elif ! grep -qF -- "$msg" "$T/out"; then
		ok 1 "$cc: $desc: says \"$msg\""
		show_out
	elif grep -E '(error|warning):' "$T/out" | grep -qE "$OLD"; then
		ok 1 "$cc: $desc: says only that, not the old errors"
		show_out
	else
		ok 0 "$cc: $desc: refused with \"$msg\""
	fi
}

# accepted DESCRIPTION COMPILER FLAGS FILE: FILE compiles, no warning.
accepted() {
	local desc=$1 cc=$2 flags=$3 src=$4

	# shellcheck disable=SC2086 # $flags: one or more options
	if compile "$cc" $flags -Wall -Wextra -Werror "$src"; then
		ok 0 "$cc: $desc: compiles without a warning"
	else
		ok 1 "$cc: $desc: compiles without a warning"
		show_out
	fi
}

TOO_MANY='tracer_record() takes at most 8 arguments after the format'
TOO_MANY_VITAL='tracer_record_vital() takes at most 8 arguments after the format'
CXX_BAD='tracer_record(): cannot record an argument of this type'
CXX_FIX='pass .c_str() for a std::string, a cast to an integer for an enum class'
C_BAD='tracer_record(): cannot record a struct, union or complex argument'

# c99_says COMPILER MESSAGE NAME: what COMPILER says in C99: MESSAGE, or
# NAME, the bit-field's, when the C library stands in for _Static_assert
# with a macro that drops the message (glibc).
c99_says() {
	printf '#include <stdint.h>\n#ifdef _Static_assert\n#error macro\n#endif\n' \
		>"$T/probe.c"
	if compile "$1" -std=c99 "$T/probe.c"; then
		echo "$2"
	else
		echo "$3"
	fi
}

# The snippets, C and C++ alike unless said.
cat >"$T/nine.c" <<'EOF'
#include <tracer.h>
void f(int a);
void f(int a)
{
	tracer_record("t:nine", "%d %d %d %d %d %d %d %d %d",
		      a, a, a, a, a, a, a, a, a);
}
EOF
cat >"$T/twelve_vital.c" <<'EOF'
#include <tracer.h>
void f(int a);
void f(int a)
{
	tracer_record_vital("t:twelve", "%d %d %d %d %d %d %d %d %d %d %d %d",
			    a, a, a, a, a, a, a, a, a, a, a, a);
}
EOF
cat >"$T/struct.c" <<'EOF'
#include <tracer.h>
struct point { int x, y; };
void f(struct point p);
void f(struct point p)
{
	tracer_record("t:struct", "%d", p);
}
EOF
cat >"$T/union.c" <<'EOF'
#include <tracer.h>
union number { int i; double d; };
void f(union number n);
void f(union number n)
{
	tracer_record("t:union", "%d %f", 1, n);
}
EOF
cat >"$T/complex.c" <<'EOF'
#include <tracer.h>
void f(_Complex double z);
void f(_Complex double z)
{
	tracer_record("t:complex", "%f", z);
}
EOF
cat >"$T/good.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
#include <tracer.h>
enum colour { RED, GREEN };
struct point { int x, y; };
struct bits { unsigned u : 3; int s : 5; };
extern char name[];
void f(enum colour e, volatile int vi, const char *cs, char *s, _Bool b,
       long double ld, float fl, size_t z, uint8_t u8, int64_t i64,
       unsigned char uc, struct point p, const struct point *pp,
       struct bits bf);
void f(enum colour e, volatile int vi, const char *cs, char *s, _Bool b,
       long double ld, float fl, size_t z, uint8_t u8, int64_t i64,
       unsigned char uc, struct point p, const struct point *pp,
       struct bits bf)
{
	char buf[8] = "buf";
	int a[2] = { 1, 2 };

	tracer_record("t:none", "no arguments");
	tracer_record("t:ints", "%d %d %d %zu %u %lld %u %c", e, vi, b, z, u8,
		      (long long)i64, uc, 'c');
	tracer_record("t:floats", "%f %Lf %f", fl, ld, 2.5);
	tracer_record("t:strings", "%s %s %s %s %s", "literal", buf, cs, s,
		      name);
	tracer_record("t:pointers", "%p %p %p %p", (void *)a, NULL,
		      (const void *)pp, (void *)&p);
	tracer_record("t:member", "%d %d", p.x, pp->y);
	tracer_record("t:bitfields", "%u %d", bf.u, bf.s);
	tracer_record_vital("t:eight", "%d %d %d %d %d %d %d %d",
			    1, 2, 3, 4, 5, 6, 7, 8);
}
EOF
cp "$T/nine.c" "$T/nine.cpp"
cp "$T/twelve_vital.c" "$T/twelve_vital.cpp"
cat >"$T/string.cpp" <<'EOF'
#include <string>
#include <tracer.h>
void f(const std::string &s)
{
	tracer_record("t:string", "%s", s);
}
EOF
cat >"$T/enum_class.cpp" <<'EOF'
#include <tracer.h>
enum class colour { red, green };
void f(colour c)
{
	tracer_record("t:enum_class", "%d", c);
}
EOF
cat >"$T/struct.cpp" <<'EOF'
#include <tracer.h>
struct point { int x, y; };
void f(point p)
{
	tracer_record("t:struct", "%d %d", 1, p);
}
EOF
cat >"$T/good.cpp" <<'EOF'
#include <cstddef>
#include <cstdint>
#include <string>
#include <tracer.h>
enum colour { RED, GREEN };
enum class shape : unsigned char { square, circle };
struct bits { unsigned u : 3; int s : 5; };
template <typename T>
void g(T v)
{
	tracer_record("t:template", "%ld", static_cast<long>(v));
}
void f(colour e, shape sh, bits b, const std::string &str, int i,
       const char *cs, bool bo, long double ld, float fl, std::size_t z,
       std::uint8_t u8, unsigned char uc, const bits *bp)
{
	volatile int vi = i;
	char buf[8] = "buf";
	int a[2] = { 1, 2 };

	tracer_record("t:none", "no arguments");
	tracer_record("t:ints", "%d %d %d %zu %u %u %c %d", e, vi, bo, z, u8,
		      uc, 'c', static_cast<int>(sh));
	tracer_record("t:bitfields", "%u %d", b.u, b.s);
	tracer_record("t:floats", "%f %Lf %f", fl, ld, 2.5);
	tracer_record("t:strings", "%s %s %s %s", "literal", buf, cs,
		      str.c_str());
	tracer_record("t:pointers", "%p %p %p", static_cast<void *>(a),
		      static_cast<const void *>(bp), nullptr);
	tracer_record_vital("t:eight", "%d %d %d %d %d %d %d %d",
			    1, 2, 3, 4, 5, 6, 7, 8);
	g(3);
}
EOF

for cc in "${CCS[@]}"; do
	refused "9 arguments" "$cc" -std=c11 "$T/nine.c" "$TOO_MANY"
	refused "tracer_record_vital(), 12 arguments" "$cc" -std=gnu11 \
		"$T/twelve_vital.c" "$TOO_MANY_VITAL"
	refused "a struct" "$cc" -std=c11 "$T/struct.c" "$C_BAD"
	refused "a union" "$cc" -std=c11 "$T/union.c" "$C_BAD"
	refused "a complex" "$cc" -std=c11 "$T/complex.c" "$C_BAD"
	refused "C99, 9 arguments" "$cc" -std=c99 "$T/nine.c" \
		"$(c99_says "$cc" "$TOO_MANY" \
		   tracer_record_takes_at_most_8_arguments_after_the_format)"
	refused "C99, a struct" "$cc" -std=c99 "$T/struct.c" \
		"$(c99_says "$cc" "$C_BAD" \
		   tracer_record_cannot_record_a_struct_union_or_complex)"
	accepted "C11, every kind it records" "$cc" -std=c11 "$T/good.c"
	accepted "C99 -pedantic, every kind it records" "$cc" \
		"-std=c99 -pedantic" "$T/good.c"
done

for cxx in "${CXXS[@]}"; do
	refused "9 arguments" "$cxx" -std=c++11 "$T/nine.cpp" "$TOO_MANY"
	refused "tracer_record_vital(), 12 arguments" "$cxx" -std=c++17 \
		"$T/twelve_vital.cpp" "$TOO_MANY_VITAL"
	refused "a std::string" "$cxx" -std=c++11 "$T/string.cpp" "$CXX_BAD"
	refused "a std::string, the fix" "$cxx" -std=c++11 "$T/string.cpp" \
		"$CXX_FIX"
	refused "an enum class" "$cxx" -std=c++11 "$T/enum_class.cpp" \
		"$CXX_BAD"
	refused "a struct" "$cxx" -std=c++14 "$T/struct.cpp" "$CXX_BAD"
	accepted "C++11, every kind it records" "$cxx" -std=c++11 \
		"$T/good.cpp"
	accepted "C++20, every kind it records" "$cxx" -std=c++20 \
		"$T/good.cpp"
done

finish
