#!/bin/bash
# bench_wrap.sh - what the C library wrappers cost an unmodified program.
#
#   cd build && ../bench/bench_wrap.sh [malloc] [programs]
#
# malloc:   a malloc+free pair (bench/bench_wrap), untraced, preloaded with
#           the memory events off (the default filter: one branch each),
#           and preloaded with libc:malloc and libc:free recorded; and
#           its floor: the pairs, each call followed by a call that reads
#           tracerd's clock (rdtsc or clock_gettime) and stores a
#           32-byte record.
# lttng:    the same pair under LTTng-UST's libc wrapper with its
#           lttng_ust_libc:malloc and :free events on, for comparison
#           (needs Debian's lttng-tools and liblttng-ust1; not run by
#           default).
# programs: wall time of `sort` of a 100 MB file and `gzip` of it,
#           untraced and traced with the default events (best of 3), and
#           their ratio.
# Runs a private tracerd. Run it from a build directory.
set -u
[ -x ./tracerd/tracerd ] || { echo "bench_wrap.sh: run it from a build directory" >&2; exit 2; }
[ $# -gt 0 ] || set -- malloc programs

T=$(mktemp -d "${TMPDIR:-/tmp}/bench-wrap.XXXXXX")
export TRACER_SOCKET=$T/sock
export TRACER_REGISTER_TIMEOUT_MS=2000
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && tail --pid="$DPID" -f /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
./tracerd/tracerd --socket "$T/sock" --output "$T/out" --log "$T/log" \
	--daemonize || exit 1
DPID=$(./tracectl/tracectl status | sed -n 's/^tracerd pid //p')
lib=$(pwd)/libtracer/.libs/libtracer.so

bench_malloc() {
	local n=5000000
	echo "malloc+free pair ($n pairs, best of 5 rounds):"
	printf '  %-34s %s\n' "untraced" "$(./bench/bench_wrap malloc $n)"
	# The floor reads the clock tracerd stamps with.
	local clock=monotonic
	./tracectl/tracectl status | grep -q '^clock   tsc' && clock=tsc
	printf '  %-34s %s\n' "floor, 2 x ($clock + 32 B) by call" \
		"$(./bench/bench_wrap floor $n $clock)"
	printf '  %-34s %s\n' "preloaded, memory events off" \
		"$(./tracectl/tracectl record -- ./bench/bench_wrap malloc $n \
			2>/dev/null)"
	printf '  %-34s %s\n' "preloaded, libc:malloc+free on" \
		"$(./tracectl/tracectl record --events 'libc:malloc,libc:free' \
			--subbuf-size 4M --subbuf-count 8 -- \
			./bench/bench_wrap malloc $n 2>/dev/null)"
}

# best3 CMD...: the best wall time of 3 runs, in seconds.
best3() {
	python3 - "$@" <<'PY'
import subprocess, sys, time
best = None
for _ in range(3):
    t = time.monotonic()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    t = time.monotonic() - t
    best = t if best is None or t < best else best
print("%.3f" % best)
PY
}

bench_lttng() {
	local wrapper=/usr/lib/x86_64-linux-gnu/liblttng-ust-libc-wrapper.so.1
	local n=5000000
	if [ ! -e "$wrapper" ] || ! command -v lttng >/dev/null; then
		echo "bench_wrap.sh: lttng: needs lttng-tools and liblttng-ust1" >&2
		return 1
	fi
	export LTTNG_HOME=$T
	lttng-sessiond --daemonize >/dev/null 2>&1
	lttng create bench --output="$T/lttng" >/dev/null &&
	lttng enable-event -u 'lttng_ust_libc:malloc,lttng_ust_libc:free' >/dev/null &&
	lttng start >/dev/null || return 1
	printf '  %-34s %s\n' "LTTng-UST libc wrapper, on" \
		"$(LD_PRELOAD=$wrapper ./bench/bench_wrap malloc $n)"
	lttng destroy >/dev/null
	pkill -f "lttng-sessiond.*" -U "$(id -u)" 2>/dev/null
}

bench_programs() {
	python3 -c '
import random
random.seed(1)
with open("'"$T"'/big.txt", "w") as f:
    while f.tell() < 100 * 1024 * 1024:
        f.write("%08x %d %s\n" % (random.getrandbits(32), random.randrange(10**9), "x" * random.randrange(40)))
'
	echo "programs on a 100 MB file (best of 3 wall times):"
	for cmd in "sort $T/big.txt" "gzip -c $T/big.txt"; do
		local a b
		# shellcheck disable=SC2086
		a=$(best3 $cmd)
		# shellcheck disable=SC2086
		b=$(best3 ./tracectl/tracectl record -- $cmd)
		printf '  %-28s untraced %6.3f s  traced %6.3f s  ratio %.3f\n' \
			"$cmd" "$a" "$b" "$(echo "$b / $a" | bc -l)" | sed "s|$T/||"
	done
}

for what in "$@"; do
	case $what in
	malloc) bench_malloc ;;
	lttng) bench_lttng ;;
	programs) bench_programs ;;
	*) echo "bench_wrap.sh: unknown benchmark '$what'" >&2; exit 2 ;;
	esac
done
