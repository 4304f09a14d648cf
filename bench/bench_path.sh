#!/bin/bash
# bench_path.sh - the event write path at a glance: one table with the
# floor of a record, the clock reads, tracer_record() with one and two
# threads in a session while a private tracerd drains, the call sites
# that do not record (no session, filtered out, no tracerd), the C
# library wrappers (a traced malloc+free pair), the bytes an event takes
# on disk, and the same loop under LTTng-UST when it is installed.
#
# tracerd runs with its default clock; where the CPU has an invariant TSC
# that the default does not use (a kernel keeping time with another
# clocksource, as in many VMs), the rows that depend on the clock are
# measured again with tracerd --clock tsc, against the rdtsc floor.
# The floor an event is held to is a call (one the compiler can neither
# inline nor look into, as tracer_record() calls into libtracer) that
# reads the clock and stores a 32-byte record; the same stores inline
# are shown above it. A traced malloc+free pair is held to the same
# floor twice over: bench_wrap floor, the pairs each followed by such a
# call, with the clock of the tracerd it is compared with.
#
# ns per event are thread CPU time where a thread records (its CPU time
# over its events: what the event costs it, not the time it waited for a
# CPU), and wall time for the single-threaded floors and loops; best
# (median) of RUNS runs of EVENTS events, after a warm-up of 1M. The
# traced malloc+free pair records into 4 MiB x 8 rings, as bench_wrap.sh
# does: events dropped while tracerd is behind would make it look cheaper.
#
# LTTng-UST: when `pkg-config lttng-ust` finds its headers and lttng,
# lttng-sessiond and babeltrace2 are installed (Debian: liblttng-ust-dev,
# lttng-tools, babeltrace2), bench_lttng.c and its tracepoint provider
# (bench_lttng_tp.h: the same two 64-bit integers) are built here, and
# timed in a session of a private lttng-sessiond (LTTNG_HOME in a
# temporary directory; per-UID buffers, LTTng's defaults); bytes per
# event come from a shorter run in a session of its own, counted with
# babeltrace2. The malloc+free row uses LTTng's libc wrapper
# (liblttng-ust-libc-wrapper.so.1) with lttng_ust_libc:malloc and :free
# on. Without LTTng these rows say why they are missing.
#
# Run from the build directory, after make:
#
#   cd build && ../bench/bench_path.sh
#
# Settings from the environment: EVENTS (10000000), IDLE_EVENTS
# (200000000: a run of 0.16 s, which an interrupt or a busy moment
# cannot make the best of three), RUNS (3), PAIRS (5000000 malloc+free pairs), TMPDIR (where
# both tracers write). Measures and prints; fails only when something
# does not run.

TRACERD=./tracerd/tracerd
TRACECTL=./tracectl/tracectl
BENCH=./bench/bench_tracer
WRAP=./bench/bench_wrap
SRC=$(cd "$(dirname "$0")" && pwd)
. "$SRC/bench_lib.sh"

EVENTS=${EVENTS:-10000000}
IDLE_EVENTS=${IDLE_EVENTS:-200000000}
RUNS=${RUNS:-3}
PAIRS=${PAIRS:-5000000}
LTTNG_WRAPPER=/usr/lib/$(gcc -print-multiarch 2>/dev/null)/liblttng-ust-libc-wrapper.so.1

T=
DPID=
LTTNG_PIDS=	# the lttng-sessiond started here (not one already running)

die() {
	echo "bench_path.sh: $*" >&2
	exit 1
}

cleanup() {
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null &&
			tail --pid="$DPID" -f /dev/null
	fi
	lttng destroy --all >/dev/null 2>&1
	if [ -n "$LTTNG_PIDS" ]; then
		kill -TERM $LTTNG_PIDS 2>/dev/null
		for p in $LTTNG_PIDS; do
			tail --pid="$p" -f /dev/null
		done
	fi
	[ -n "$T" ] && rm -rf "$T"
}

# run OUT CMD...: CMD's output in OUT, or die.
run() {
	local out=$1
	shift
	"$@" >"$out" 2>"$out.err" || die "'$*' failed: $(cat "$out.err")"
}

# start_tracerd [OPTIONS]: a private tracerd; its clock line in
# $T/clock (once the TSC is calibrated, when it is the clock).
start_tracerd() {
	local i
	"$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
		--log "$T/tracerd.log" --daemonize "$@" ||
		die "tracerd did not start"
	DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')
	[ -n "$DPID" ] || die "tracerd does not answer"
	for i in $(seq 100); do
		"$TRACECTL" status | grep '^clock' >"$T/clock"
		grep -q 'until the TSC is calibrated' "$T/clock" || break
		sleep 0.05	# polling status for the calibration
	done
}

stop_tracerd() {
	kill -TERM "$DPID" && tail --pid="$DPID" -f /dev/null
	DPID=
}

# in_session OUT [START OPTIONS] -- CMD...: CMD in a session of its own;
# the session's directory in $T/dir.
in_session() {
	local out=$1 dir
	shift
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	dir=$("$TRACECTL" start "${opts[@]}" | tail -n 1) ||
		die "tracectl start failed"
	run "$out" "$@"
	"$TRACECTL" stop >/dev/null || die "tracectl stop failed"
	echo "$dir" >"$T/dir"
}

# The rows that depend on the clock, again with tracerd --clock tsc
# (where the CPU has an invariant TSC but the kernel keeps time with
# another clocksource, as in many VMs, the default is CLOCK_MONOTONIC).
tsc_rows() {
	grep -q '^clock   tsc' "$T/clock" && return 0
	grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo ||
		return 0
	stop_tracerd
	start_tracerd --clock tsc
	grep -q '^clock   tsc' "$T/clock" || die "tracerd --clock tsc: $(cat "$T/clock")"
	cp "$T/clock" "$T/clock.tsc"
	in_session "$T/rec1.tsc" -- "$BENCH" record 1 "$EVENTS" "$RUNS"
	rm -rf "$(cat "$T/dir")"
	in_session "$T/rec2.tsc" -- "$BENCH" record 2 "$EVENTS" "$RUNS"
	rm -rf "$(cat "$T/dir")"
	run "$T/wrap.tsc" "$TRACECTL" record --events 'libc:malloc,libc:free' \
		--subbuf-size 4M --subbuf-count 8 \
		-- "$WRAP" malloc "$PAIRS"
	run "$T/pairfloor.tsc" "$WRAP" floor "$PAIRS" tsc
}

tracer_rows() {
	TRACER_SOCKET=$T/none run "$T/floor" "$BENCH" floor "$EVENTS" "$RUNS"
	in_session "$T/rec1" -- "$BENCH" record 1 "$EVENTS" "$RUNS"
	run "$T/count1" "$BENCH" count "$(cat "$T/dir")"
	rm -rf "$(cat "$T/dir")"
	in_session "$T/rec2" -- "$BENCH" record 2 "$EVENTS" "$RUNS"
	rm -rf "$(cat "$T/dir")"
	run "$T/idle" "$BENCH" idle "$IDLE_EVENTS" "$RUNS"
	[ "$(val enabled "$T/idle")" = 1 ] ||
		die "bench_tracer did not register with tracerd"
	in_session "$T/off" --events=-bench:off -- \
		"$BENCH" disabled "$IDLE_EVENTS" "$RUNS"
	rm -rf "$(cat "$T/dir")"
	TRACER_SOCKET=$T/none run "$T/unreg" "$BENCH" idle "$IDLE_EVENTS" \
		"$RUNS"
	run "$T/wrap" "$TRACECTL" record --events 'libc:malloc,libc:free' \
		--subbuf-size 4M --subbuf-count 8 \
		-- "$WRAP" malloc "$PAIRS"
	run "$T/untraced" "$WRAP" malloc "$PAIRS"
	run "$T/pairfloor" "$WRAP" floor "$PAIRS" "$(clock_of "$T/clock")"
}

# Why LTTng rows cannot be made, or nothing.
lttng_missing() {
	pkg-config --exists lttng-ust 2>/dev/null ||
		{ echo "no LTTng-UST headers (pkg-config lttng-ust)"; return; }
	local c
	for c in lttng lttng-sessiond babeltrace2 cc; do
		command -v "$c" >/dev/null || { echo "no $c"; return; }
	done
}

lttng_session() {
	lttng create "$1" --output="$T/lttng-$1" >/dev/null &&
	lttng enable-event -u "$2" >/dev/null &&
	lttng start >/dev/null
}

lttng_end() {
	lttng stop >/dev/null && lttng destroy >/dev/null
}

# The bytes of a trace's stream files (not metadata, not indexes).
stream_bytes() {
	find "$1" -type f -name 'channel*' -printf '%s\n' |
		awk '{ n += $1 } END { print n + 0 }'
}

lttng_rows() {
	cc -O2 -I"$SRC" -o "$T/bench_lttng" "$SRC/bench_lttng.c" \
		$(pkg-config --cflags --libs lttng-ust) -ldl -lpthread ||
		die "cannot build bench_lttng"
	export LTTNG_HOME=$T/lttng-home
	mkdir -p "$LTTNG_HOME"
	# A root session daemon is the machine's (its run directory is
	# /var/run/lttng whatever LTTNG_HOME says): one already running is
	# used, one started here is stopped at the end.
	if ! pgrep -x -u "$(id -u)" lttng-sessiond >/dev/null; then
		lttng-sessiond --daemonize >/dev/null 2>&1 ||
			die "lttng-sessiond did not start"
		LTTNG_PIDS=$(pgrep -x -u "$(id -u)" lttng-sessiond | tr '\n' ' ')
	fi
	lttng_session rec bench_lttng:pair || die "lttng session failed"
	run "$T/lrec1" "$T/bench_lttng" record 1 "$EVENTS" "$RUNS"
	run "$T/lrec2" "$T/bench_lttng" record 2 "$EVENTS" "$RUNS"
	lttng_end || die "lttng stop failed"
	lttng_session bytes bench_lttng:pair || die "lttng session failed"
	run "$T/lbytes" "$T/bench_lttng" record 1 100000 1
	lttng_end || die "lttng stop failed"
	echo "$(stream_bytes "$T/lttng-bytes")" \
	     "$(babeltrace2 "$T/lttng-bytes" | grep -c 'bench_lttng:pair')" \
		>"$T/lbytes.count"
	if [ -e "$LTTNG_WRAPPER" ]; then
		lttng_session wrap 'lttng_ust_libc:malloc,lttng_ust_libc:free' ||
			die "lttng session failed"
		LD_PRELOAD=$LTTNG_WRAPPER run "$T/lwrap" "$WRAP" malloc "$PAIRS"
		lttng_end || die "lttng stop failed"
	fi
}

# row NAME THREADS BEST MEDIAN [FLOOR]: one line of the table.
row() {
	awk -v n="$1" -v t="$2" -v b="$3" -v m="$4" -v f="${5:-}" 'BEGIN {
		if (b == "") { printf "%-44s %-7s %s\n", n, t, "-"; exit }
		x = f != "" ? sprintf("%.2fx", b / f) : ""
		printf "%-44s %-7s %8.2f (%.2f) %8s\n", n, t, b, m, x }'
}

ns_pair() {
	sed -n 's/^\(malloc+free\|floor\) \([0-9.]*\) ns\/pair$/\2/p' "$1"
}

# tsc or monotonic: the clock of the tracerd whose `clock` file is $1.
clock_of() {
	if grep -q '^clock   tsc' "$1"; then echo tsc; else echo monotonic; fi
}

table() {
	local f fc ft ftc fd pf
	f=$(val floor "$T/floor")
	fc=$(val floor_call "$T/floor")
	echo "== the event write path: ns per event, best (median) of $RUNS" \
	     "runs of $EVENTS events; x the floor of the clock used (a call" \
	     "that reads it and stores 32 bytes) =="
	echo "tracerd's default $(cat "$T/clock.default")"
	printf "%-44s %-7s %s\n" case threads "ns/event"
	row "floor: clock read + 32-byte store, inline" 1 "$f" \
		"$(val floor_median "$T/floor")"
	row "floor: the same written by a call" 1 "$fc" \
		"$(val floor_call_median "$T/floor")" "$fc"
	row "clock_gettime(CLOCK_MONOTONIC)" 1 "$(val clock "$T/floor")" \
		"$(val clock_median "$T/floor")"
	row "rdtsc" 1 "$(val rdtsc "$T/floor")" \
		"$(val rdtsc_median "$T/floor")"
	ft=$(val floor_tsc "$T/floor")
	ftc=$(val floor_tsc_call "$T/floor")
	row "floor: rdtsc + 32-byte store, inline" 1 "$ft" \
		"$(val floor_tsc_median "$T/floor")"
	row "floor: the same written by a call" 1 "$ftc" \
		"$(val floor_tsc_call_median "$T/floor")" "$ftc"
	# tracer_record against the floor of the clock it stamps with.
	fd=$fc
	grep -q '^clock   tsc' "$T/clock.default" && fd=$ftc
	row "tracer_record, 2 x int (CPU time)" 1 \
		"$(val cpu_best "$T/rec1")" "$(val cpu_median "$T/rec1")" "$fd"
	row "tracer_record, 2 x int, per thread (CPU)" 2 \
		"$(val cpu_best "$T/rec2")" "$(val cpu_median "$T/rec2")" "$fd"
	row "tracer_record, registered, no session" 1 \
		"$(val idle "$T/idle")" "$(val idle "$T/idle")"
	row "tracer_record, disabled by the filter" 1 \
		"$(val disabled "$T/off")" "$(val disabled_median "$T/off")"
	row "tracer_record, libtracer not registered" 1 \
		"$(val idle "$T/unreg")" "$(val idle "$T/unreg")"
	row "empty loop (no call site)" 1 "$(val empty "$T/unreg")" \
		"$(val empty "$T/unreg")"
	row "malloc+free pair, untraced" 1 "$(ns_pair "$T/untraced")" \
		"$(ns_pair "$T/untraced")"
	pf=$(ns_pair "$T/pairfloor")
	row "floor: the pair + 2 x (clock + 32 B), calls" 1 "$pf" "$pf"
	row "malloc+free pair, libc:malloc,free on" 1 "$(ns_pair "$T/wrap")" \
		"$(ns_pair "$T/wrap")" "$pf"
	if [ -e "$T/rec1.tsc" ]; then
		row "tracer_record, 2 x int, --clock tsc (CPU)" 1 \
			"$(val cpu_best "$T/rec1.tsc")" \
			"$(val cpu_median "$T/rec1.tsc")" "$ftc"
		row "tracer_record, per thread, --clock tsc (CPU)" 2 \
			"$(val cpu_best "$T/rec2.tsc")" \
			"$(val cpu_median "$T/rec2.tsc")" "$ftc"
		pf=$(ns_pair "$T/pairfloor.tsc")
		row "floor: the pair + 2 x (rdtsc + 32 B), calls" 1 \
			"$pf" "$pf"
		row "malloc+free pair, on, --clock tsc" 1 \
			"$(ns_pair "$T/wrap.tsc")" "$(ns_pair "$T/wrap.tsc")" \
			"$pf"
	fi
	if [ -n "$MISSING" ]; then
		echo "LTTng-UST rows: $MISSING"
	else
		row "LTTng-UST tracepoint, 2 x int (CPU time)" 1 \
			"$(val cpu_best "$T/lrec1")" \
			"$(val cpu_median "$T/lrec1")" "$fc"
		row "LTTng-UST, per thread (CPU time)" 2 \
			"$(val cpu_best "$T/lrec2")" \
			"$(val cpu_median "$T/lrec2")" "$fc"
		[ -e "$T/lwrap" ] &&
			row "malloc+free pair, LTTng-UST libc wrapper" 1 \
				"$(ns_pair "$T/lwrap")" "$(ns_pair "$T/lwrap")"
	fi
	summary
}

summary() {
	local lb=(0 0)
	[ -s "$T/lbytes.count" ] && read -r -a lb <"$T/lbytes.count"
	awk -v tb="$(val bytes "$T/count1")" -v te="$(val events "$T/count1")" \
	    -v lb="${lb[0]}" -v le="${lb[1]}" \
	    -v t1="$(val cpu_best "$T/rec1")" -v l1="$(val cpu_best "$T/lrec1" 2>/dev/null)" \
	    -v ts="$(val cpu_best "$T/rec1.tsc" 2>/dev/null)" \
	    'BEGIN {
		printf "bytes per event on disk (packet headers included): " \
		       "tracer %.1f", tb / te
		if (le > 0)
			printf ", LTTng-UST %.1f", lb / le
		printf "\n"
		if (l1 > 0)
			printf "tracer_record is %.1fx faster than LTTng-UST " \
			       "(1 thread, CPU time)\n", l1 / t1
		if (l1 > 0 && ts > 0)
			printf "with --clock tsc: %.1fx faster\n", l1 / ts }'
}

for f in "$TRACERD" "$TRACECTL" "$BENCH" "$WRAP"; do
	[ -x "$f" ] || die "$f not found: run from the build directory," \
			   "after make"
done
bench_tmp bench-path
trap cleanup EXIT
trap 'exit 130' INT TERM

machine_line
start_tracerd
cp "$T/clock" "$T/clock.default"
tracer_rows
tsc_rows
MISSING=$(lttng_missing)
[ -z "$MISSING" ] && lttng_rows
table
