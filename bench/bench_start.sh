#!/bin/bash
# bench_start.sh - how long a preloaded program takes to start and exit
# (LD_PRELOAD=libtracer.so /bin/true by default) with no tracerd, with a
# healthy one (without and with a session), and with one stopped by
# SIGSTOP; and the registration round trip as libtracer measures it
# (TRACER_VERBOSE's "registered in N us", waiting up to 1 s for it),
# with the share of starts that a given wait would have covered.
#
#   cd build && ../bench/bench_start.sh [-n RUNS] [--load] [PROGRAM ARGS...]
#
# --load runs one busy loop per CPU meanwhile. Prints, per case, the
# median, 90th percentile and maximum in milliseconds. Run it from a build
# directory (a sanitizer build's libtracer gets its runtime preloaded
# first).
set -u
runs=200 load=
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	--load) load=1; shift ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- /bin/true
[ -x ./tracerd/tracerd ] || { echo "bench_start.sh: run it from a build directory" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/bench-start.XXXXXX")
export TRACER_SOCKET=$T/sock
lib=$(pwd)/libtracer/.libs/libtracer.so
pre=$(ldd "$lib" | awk '/lib(asan|ubsan)/ { printf "%s:", $3 }')
preload=$pre$lib
DPID= LOADPIDS=
cleanup() {
	[ -n "$DPID" ] && kill -CONT "$DPID" 2>/dev/null && kill "$DPID" 2>/dev/null
	[ -n "$LOADPIDS" ] && kill $LOADPIDS 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# measure NAME [ENV...]: start the program $runs times, print the figures.
measure() {
	local name=$1
	shift
	python3 - "$runs" "$name" "$@" -- "${PROG[@]}" <<'PY'
import os, subprocess, sys, time
runs, name = int(sys.argv[1]), sys.argv[2]
rest = sys.argv[3:]
cut = rest.index('--')
env = dict(os.environ)
for kv in rest[:cut]:
    k, v = kv.split('=', 1)
    env[k] = v
prog = rest[cut + 1:]
t = []
for _ in range(runs):
    a = time.perf_counter()
    subprocess.run(prog, env=env, stdout=subprocess.DEVNULL, check=True)
    t.append((time.perf_counter() - a) * 1000)
t.sort()
print('%-44s %8.2f %8.2f %8.2f' % (name, t[len(t) // 2], t[int(len(t) * 0.9)], t[-1]))
PY
}

# roundtrip NAME: registration round trips of $runs starts.
roundtrip() {
	local i
	for i in $(seq "$runs"); do
		LD_PRELOAD="$preload" TRACER_VERBOSE=1 \
		TRACER_REGISTER_TIMEOUT_MS=1000 "${PROG[@]}" 2>&1 >/dev/null |
			sed -n 's/^libtracer: registered in \([0-9]*\) us$/\1/p'
	done | python3 -c '
import sys
name = sys.argv[1]
t = sorted(int(l) / 1000 for l in sys.stdin)
if not t:
    sys.exit("no round trip measured")
q = lambda f: t[min(len(t) - 1, int(len(t) * f))]
within = " ".join("%d:%.1f%%" % (w, 100 * sum(x <= w for x in t) / len(t))
                  for w in (2, 5, 10, 20))
print("%-30s %7.2f %7.2f %7.2f %7.2f   %s" % (name, q(0.5), q(0.9), q(0.99), t[-1], within))
' "$1"
}

PROG=("$@")
if [ -n "$load" ]; then
	for i in $(seq "$(nproc)"); do
		(while :; do :; done) &
		LOADPIDS="$LOADPIDS $!"
	done
fi
echo "== start of '$*' ($runs runs${load:+, one busy loop per CPU}), ms =="
printf '%-44s %8s %8s %8s\n' case median p90 max
measure "no libtracer"
measure "libtracer, no tracerd" LD_PRELOAD="$preload"
./tracerd/tracerd --socket "$TRACER_SOCKET" --output "$T/out" --log "$T/log" --daemonize
DPID=$(./tracectl/tracectl status | sed -n 's/^tracerd pid //p')
measure "libtracer, tracerd (default wait)" LD_PRELOAD="$preload"
measure "libtracer, tracerd, waiting for the reply" LD_PRELOAD="$preload" TRACER_REGISTER_TIMEOUT_MS=1000
./tracectl/tracectl start >/dev/null
measure "libtracer, tracerd + session, waiting" LD_PRELOAD="$preload" TRACER_REGISTER_TIMEOUT_MS=1000
./tracectl/tracectl stop >/dev/null
kill -STOP "$DPID"
measure "libtracer, tracerd stopped (SIGSTOP)" LD_PRELOAD="$preload"
kill -CONT "$DPID"

echo
echo "== registration round trip, ms (within W ms: share of starts) =="
printf '%-30s %7s %7s %7s %7s   %s\n' case median p90 p99 max within
roundtrip "no session"
./tracectl/tracectl start >/dev/null
roundtrip "session (directory, metadata)"
./tracectl/tracectl stop >/dev/null
