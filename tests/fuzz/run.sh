#!/bin/bash
# run.sh - build the libFuzzer targets of tests/fuzz with clang and run each
# for SECONDS from its committed seed corpus (tests/fuzz/corpus/TARGET; new
# inputs go to BUILDDIR/fuzz/corpus-TARGET), after replaying the inputs that
# once crashed it (tests/fuzz/regress/TARGET: regression tests).
#
#   tests/fuzz/run.sh SRCDIR BUILDDIR SECONDS [TARGET...]
#
# `make fuzz` runs it (FUZZ_SECONDS, 60 by default, per target); CI runs it
# from the ASan build with 12 s per target. A crash leaves its input in
# BUILDDIR/fuzz/TARGET-crash-* and the script exits 1: copy the input into
# tests/fuzz/regress/TARGET once fixed. FUZZ_CC picks the compiler (clang).
set -u
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) secs=$3
shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wire format view rb daemon)
cc=${FUZZ_CC:-clang}
out=$build/fuzz
mkdir -p "$out"

if ! command -v "$cc" >/dev/null; then
	echo "fuzz: no $cc (Debian: apt-get install clang libclang-rt-dev)" >&2
	exit 1
fi
[ -f "$build/proto/tracer.pb-c.c" ] ||
	{ echo "fuzz: build first (make), in $build" >&2; exit 1; }

flags=(-g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -D_GNU_SOURCE
       -I"$build" -I"$src" -I"$src/include" -I"$src/common" \
       -I"$src/tracectl")

# tracerd's files take config.h as the build does (TRACER_CPPFLAGS).
extra() {
	case $1 in
	daemon) echo "-include $build/config.h" ;;
	esac
}

# The sources each target is made of, besides its own file.
sources() {
	case $1 in
	wire) echo "$src/proto/wire.c $build/proto/tracer.pb-c.c" ;;
	format) echo "$src/common/format.c" ;;
	view) echo "$src/tracectl/trace_dir.c $src/common/format.c" ;;
	rb) echo "$src/common/rb_backend.c $src/common/rb_read.c" \
		 "$src/common/rb_salvage.c $src/common/rb_write.c" \
		 "$src/common/clock.c $src/common/clock_history.c" ;;
	daemon) find "$src/tracerd" -name '*.c' ! -name main.c | sort
		echo "$src/common/rb_backend.c $src/common/rb_read.c" \
		     "$src/common/rb_salvage.c $src/common/rb_write.c" \
		     "$src/common/format.c $src/common/ctf_meta.c" \
		     "$src/common/paths.c $src/common/pattern.c" \
		     "$src/common/pool_make.c $src/common/clock.c" \
		     "$src/common/clock_history.c" \
		     "$src/common/relay_proto.c" \
		     "$src/proto/wire.c $build/proto/tracer.pb-c.c" ;;
	esac
}

libs() {
	case $1 in
	wire) pkg-config --libs libprotobuf-c ;;
	daemon) pkg-config --libs libuv liburcu libprotobuf-c ;;
	esac
}

failed=0
for t in "${targets[@]}"; do
	bin=$out/fuzz_$t
	# shellcheck disable=SC2046
	if ! "$cc" "${flags[@]}" $(extra "$t") -o "$bin" \
		"$src/tests/fuzz/fuzz_$t.c" \
		$(sources "$t") $(libs "$t") 2>"$out/fuzz_$t.build.log"; then
		echo "not ok - fuzz_$t: does not build ($out/fuzz_$t.build.log)"
		cat "$out/fuzz_$t.build.log" >&2
		failed=1
		continue
	fi
	mkdir -p "$out/corpus-$t"
	regress=()
	if [ -d "$src/tests/fuzz/regress/$t" ]; then
		mapfile -t regress < <(find "$src/tests/fuzz/regress/$t" -type f)
	fi
	if [ ${#regress[@]} -gt 0 ] &&
	   ! "$bin" "${regress[@]}" >"$out/fuzz_$t.regress.log" 2>&1; then
		echo "not ok - fuzz_$t: a regression input crashes it ($out/fuzz_$t.regress.log)"
		failed=1
		continue
	fi
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$out/$t-" -print_final_stats=1 \
		"$out/corpus-$t" "$src/tests/fuzz/corpus/$t" \
		>"$out/fuzz_$t.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$t.log")
		echo "ok - fuzz_$t: ${runs:-?} inputs in ${secs} s, ${#regress[@]} regression input(s)"
	else
		echo "not ok - fuzz_$t: crashed ($out/fuzz_$t.log; input in $out/$t-*)"
		tail -n 30 "$out/fuzz_$t.log" >&2
		failed=1
	fi
done
exit $failed
