#!/bin/bash
# bench_loop.sh - a shell loop of short programs in a session: how long the
# loop takes, and how much of tracerd's CPU each registration costs.
#
#   cd build && ../bench/bench_loop.sh [-n COUNT] [--output-dir DIR]
#        [--tracerd PATH]...
#
# Runs `bash -c 'for i in $(seq COUNT); do /bin/true; done'` (300 by
# default) untraced, then preloaded with libtracer in a session of a
# tracerd of its own (default settings, session files under DIR, $TMPDIR
# by default), once per --tracerd given (./tracerd/tracerd if none), in
# turn. Each iteration registers twice: the forked bash and the exec'd
# /bin/true. tracerd's CPU (utime + stime from /proc) is read after the
# session stopped, so that it includes writing everything out.
set -u
count=300 outdir=${TMPDIR:-/tmp} daemons=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) count=$2; shift 2 ;;
	--output-dir) outdir=$2; shift 2 ;;
	--tracerd) daemons+=("$2"); shift 2 ;;
	-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
	*) echo "bench_loop.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ ${#daemons[@]} -gt 0 ] || daemons=(./tracerd/tracerd)
[ -x ./tracectl/tracectl ] ||
	{ echo "bench_loop.sh: run it from a build directory (make first)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-loop.XXXXXX")
trap 'pkill -f "tracerd --socket $T" 2>/dev/null; rm -rf "$T"' EXIT
cp libtracer/.libs/libtracer.so "$T/libtracer.so"
loop="for i in \$(seq $count); do /bin/true; done"

seconds() { # COMMAND...: its wall time in seconds
	local t0 t1
	t0=$(date +%s%N)
	"$@"
	t1=$(date +%s%N)
	echo "scale=2; ($t1 - $t0) / 1000000000" | bc
}

printf '%-40s %8s %s\n' case loop "tracerd CPU per registration"
printf '%-40s %7.2fs\n' untraced "$(seconds bash -c "$loop")"
n=0
for d in "${daemons[@]}"; do
	n=$((n + 1))
	sock=$T/s$n.sock out=$outdir/bench-loop-$$-$n
	"$d" --socket "$sock" --output "$out" --log "$T/$n.log" --daemonize ||
		exit 1
	export TRACER_SOCKET=$sock
	./tracectl/tracectl start >/dev/null || exit 1
	pid=$(./tracectl/tracectl status | sed -n 's/^tracerd pid //p')
	a=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	s=$(seconds env LD_PRELOAD="$T/libtracer.so" bash -c "$loop")
	./tracectl/tracectl stop >/dev/null
	b=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	tick=$(getconf CLK_TCK)
	printf '%-40s %7.2fs %6d us\n' "$d" "$s" \
		$(( (b - a) * 1000000 / tick / (2 * count) ))
	kill "$pid"
	rm -rf "$out"
done
