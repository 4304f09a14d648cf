#!/bin/bash
# bench_relay.sh - streaming to lttng-relayd on the loopback, next to
# writing locally only: one writer records flat out for SECONDS
# (bench_tracer drain), with tracerd's default settings; then, with the
# relay, until tracerd logs that the relay session is streamed.
#
#   mode    local: the session writes its files only; relay: the files,
#           and everything streamed to a private lttng-relayd (127.0.0.1);
#           "relay N": the writer paced at N MB/s
#   made    events the writer made; lost: the writer's losses (%)
#   local   MB tracerd wrote into the files, MB/s over the recording
#   relay   MB tracerd sent to relayd (packets, indexes not counted), MB/s
#           from the start to the relay session's end (the stop included)
#   cpu     tracerd's CPU time over that same span, % of one core
#   relayd  lttng-relayd's CPU time, % of one core
#
# Run from the build directory, after make:
#   cd build && ../bench/bench_relay.sh
# Settings from the environment: SECONDS_REC (2), RUNS (3), PACED_MBPS
# ("50 200": rows with the writer paced at these MB/s). Needs
# lttng-relayd (Debian lttng-tools: scripts/bootstrap installs it).

. "$(dirname "$0")/bench_lib.sh"

TRACERD=${TRACERD:-./tracerd/tracerd}
TRACECTL=./tracectl/tracectl
BENCH=./bench/bench_tracer
SECONDS_REC=${SECONDS_REC:-2}
PACED_MBPS=${PACED_MBPS:-50 200}
RUNS=${RUNS:-3}
DPID= RPID= T=

die() {
	echo "bench_relay.sh: $*" >&2
	exit 1
}

cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null &&
		tail --pid="$DPID" -f /dev/null
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	[ -n "$T" ] && rm -rf "$T"
}
trap cleanup EXIT

command -v lttng-relayd >/dev/null || die "lttng-relayd is not installed"
[ -x "$BENCH" ] || die "run from the build directory after make"
bench_tmp bench-relay

read -r CP DP LP < <(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
URL=net://127.0.0.1:$CP:$DP
LTTNG_HOME=$T lttng-relayd -C tcp://127.0.0.1:$CP -D tcp://127.0.0.1:$DP \
	-L tcp://127.0.0.1:$LP -o "$T/relay" >"$T/relayd.log" 2>&1 &
RPID=$!
for i in $(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/$CP) 2>/dev/null && break
	sleep 0.05
done
"$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
	--log "$T/tracerd.log" --daemonize || die "tracerd did not start"
DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')

cpu_ms() {	# PID: its CPU time so far, ms
	awk -v hz="$(getconf CLK_TCK)" \
		'{ printf "%d\n", ($14 + $15) * 1000 / hz }' "/proc/$1/stat"
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# run_case MODE [MBPS]: one row (the writer paced at MBPS).
run_case() {
	local mode=$1 mbps=${2:-} dir c0 r0 t0 t1 c1 r1 streamed=0 nlog opts=()

	nlog=$(grep -c 'relay: session streamed' "$T/tracerd.log")
	c0=$(cpu_ms "$DPID") r0=$(cpu_ms "$RPID") t0=$(now_ms)
	[ "$mode" = relay ] && opts=(--relay "$URL")
	dir=$("$TRACECTL" start --events='bench:*' "${opts[@]}" | tail -n 1) ||
		die "tracectl start failed"
	"$BENCH" drain 1 "$SECONDS_REC" ${mbps:+"$mbps"} >"$T/drain.out" ||
		die "drain failed"
	"$TRACECTL" stop >/dev/null || die "tracectl stop failed"
	if [ "$mode" = relay ]; then
		for i in $(seq 1200); do
			[ "$(grep -c 'relay: session streamed' \
				"$T/tracerd.log")" -gt "$nlog" ] && break
			sleep 0.05	# polling the log
		done
		streamed=$(grep 'relay: session streamed' "$T/tracerd.log" |
			tail -n 1 | sed 's/.*packets, \([0-9]*\) bytes.*/\1/')
	fi
	t1=$(now_ms) c1=$(cpu_ms "$DPID") r1=$(cpu_ms "$RPID")
	"$BENCH" count "$dir" >"$T/count.out" || die "count failed"
	awk -v mode="$mode${mbps:+ $mbps}" -v made="$(val produced "$T/drain.out")" \
	    -v lost="$(val lost_exit "$T/count.out")" \
	    -v bytes="$(val bytes "$T/count.out")" -v sent="$streamed" \
	    -v s="$SECONDS_REC" -v wall="$((t1 - t0))" \
	    -v cpu="$((c1 - c0))" -v rcpu="$((r1 - r0))" 'BEGIN {
		w = wall / 1000
		printf "%-9s %10d %6.2f%% %9.1f %9.1f %9.1f %9.1f %6.0f%% %6.0f%%\n",
		       mode, made, 100 * lost / made, bytes / 1e6,
		       bytes / s / 1e6, sent / 1e6, sent / w / 1e6,
		       cpu / 10 / w, rcpu / 10 / w }'
	rm -rf "$dir" "$T/relay"
}

echo "== streaming to lttng-relayd on 127.0.0.1, one writer flat out for" \
     "$SECONDS_REC s (MB = 10^6 bytes) =="
machine_line
printf "%-9s %10s %7s %9s %9s %9s %9s %7s %7s\n" mode made lost \
	"local MB" "MB/s" "relay MB" "MB/s" cpu relayd
for r in $(seq "$RUNS"); do
	run_case local
	run_case relay
	for m in $PACED_MBPS; do
		run_case relay "$m"
	done
done
