#!/bin/bash
# bench_restart.sh - what a tracerd crash costs a traced program. Run from
# the build directory: ../bench/bench_restart.sh
#
# `tracee threads T N` (T threads, N events each) is timed, ROUNDS times
# each, median in ms:
#   untraced   no tracerd: libtracer finds none and stays out of the way
#   traced     a session records the whole run
#   restarted  a session records; tracerd is killed (SIGKILL) a third of
#              the way in and started again two thirds of the way in,
#              with a new session
# The program never waits for tracerd: "restarted" should be within noise
# of "traced".
set -u
THREADS=${THREADS:-2}
EVENTS=${EVENTS:-3000000}
ROUNDS=${ROUNDS:-5}
TRACERD=./tracerd/tracerd
TRACECTL=./tracectl/tracectl
TRACEE=./tests/integration/tracee
T=$(mktemp -d)
export TRACER_SOCKET=$T/sock
trap 'pkill -f "output $T/out" 2>/dev/null; rm -rf "$T"' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
daemon() {
	"$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
		--log "$T/log" --daemonize
}
dpid() { "$TRACECTL" status | sed -n 's/^tracerd pid //p'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

run_untraced() {
	local s=$(now_ms)
	"$TRACEE" threads "$THREADS" "$EVENTS"
	echo $(($(now_ms) - s))
}

run_traced() {
	daemon && "$TRACECTL" start >/dev/null
	local s=$(now_ms)
	"$TRACEE" threads "$THREADS" "$EVENTS"
	echo $(($(now_ms) - s))
	"$TRACECTL" stop >/dev/null
	kill "$(dpid)"; while [ -S "$TRACER_SOCKET" ]; do sleep 0.01; done
}

# The run's length (traced) sets when to kill and restart. The program's
# own wall time is measured (by a subshell around it), not the script's.
run_restarted() {
	local len=$1 p pid
	daemon && "$TRACECTL" start >/dev/null
	pid=$(dpid)
	( s=$(now_ms); "$TRACEE" threads "$THREADS" "$EVENTS"
	  echo $(($(now_ms) - s)) >"$T/elapsed" ) & p=$!
	sleep "$(awk -v l="$len" 'BEGIN { print l / 3000 }')"
	kill -KILL "$pid"
	sleep "$(awk -v l="$len" 'BEGIN { print l / 3000 }')"
	daemon && "$TRACECTL" start >/dev/null
	wait $p
	cat "$T/elapsed"
	"$TRACECTL" stop >/dev/null
	kill "$(dpid)"; while [ -S "$TRACER_SOCKET" ]; do sleep 0.01; done
}

u=$(for i in $(seq "$ROUNDS"); do run_untraced; done | median)
t=$(for i in $(seq "$ROUNDS"); do run_traced; done | median)
r=$(for i in $(seq "$ROUNDS"); do run_restarted "$t"; done | median)
echo "tracee threads $THREADS $EVENTS, median of $ROUNDS runs:"
echo "  untraced  $u ms"
echo "  traced    $t ms"
echo "  restarted $r ms (tracerd killed at 1/3, started again at 2/3)"
