#!/bin/bash
# Programs that die badly while 4 threads record numbered events: killed
# with SIGKILL at random moments, SIGSEGV and abort() from a recording
# thread and from a signal handler. Every event a thread had recorded
# (it counts them in shared memory the kill does not undo) is in the
# trace, in order, and the process's last event says how it died. Then
# threads that end through the raw exit system call: tracerd notices,
# salvages their buffers and hands them to later threads of a pool too
# small to work without that.
# CRASH_TRIALS (default 5) sets the number of SIGKILL trials.
. "$(dirname "$0")/lib.sh"

CRASHEE=./tests/integration/crashee
CHECK="python3 $(dirname "$0")/crash_check.py"
TRIALS=${CRASH_TRIALS:-5}
THREADS=4
# Sanitizers would turn a crash into an exit with their report: let the
# signals kill, as they do in a normal build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}handle_segv=0:handle_abort=0"

check "tracerd starts" start_daemon --scan-ms 20
dir=$(session_cmd start --events "$OWN_EVENTS")

# kill -9 after a random number of events (1,000 to 150,000 per thread).
pids=()
for i in $(seq "$TRIALS"); do
	k=$(( (RANDOM * 32768 + RANDOM) % 149001 + 1000 ))
	"$CRASHEE" run "$T/p.kill$i" $THREADS &
	pid=$!
	TRACER_SOCKET=/nonexistent "$CRASHEE" wait "$T/p.kill$i" $THREADS $k 60000
	ok $? "trial $i: the $THREADS threads record $k events each"
	kill -KILL "$pid"
	wait "$pid"
	check "trial $i: the program died of SIGKILL" [ $? -eq 137 ]
	pids+=("$pid")
done

# Deaths from inside, after 20,000 events of thread 0: mode, exit status,
# signal.
LIMIT=20000
deaths=("segv 139 11 SIGSEGV" "abort 134 6 SIGABRT"
	"segv-handler 139 11 SIGSEGV" "abort-handler 134 6 SIGABRT")
dpids=()
for d in "${deaths[@]}"; do
	set -- $d
	"$CRASHEE" "$1" "$T/p.$1" $THREADS $LIMIT &
	pid=$!
	wait "$pid"
	check "$1: the program died of $4" [ $? -eq "$2" ]
	dpids+=("$pid")
done

start=$(now_ms)
last=$(timeout 60 "$TRACECTL" stop | tail -n 1)
check "stop returns after the deaths (in $(($(now_ms) - start)) ms)" \
	[ "$last" = "$dir" ]
"$TRACECTL" view "$dir" >"$T/view"
check "view reads the whole trace without an error" [ $? -eq 0 ]

for i in $(seq "$TRIALS"); do
	$CHECK "$T/view" "${pids[$((i - 1))]}" "$T/p.kill$i" $THREADS \
		'tracer:process_killed: pid [0-9]+ killed by signal 9 \(SIGKILL\)' \
		>"$T/check.out"
	ok $? "trial $i: every committed event is in the trace; the last one says SIGKILL"
	sed 's/^/# /' "$T/check.out" | head -n 5
done

n=0
for d in "${deaths[@]}"; do
	set -- $d
	pid=${dpids[$n]}
	n=$((n + 1))
	$CHECK "$T/view" "$pid" "$T/p.$1" $THREADS \
		"tracer:process_killed: pid $pid killed by signal $3 \\($4\\)" \
		$LIMIT >"$T/check.out"
	ok $? "$1: every committed event is in the trace; the last one says $4"
	sed 's/^/# /' "$T/check.out" | head -n 5
	case $1 in
	*-handler)
		grep -q "^[0-9.]* crashee $pid [0-9]* crash:handler: dying in a handler\$" "$T/view"
		ok $? "$1: the handler's own event is there too" ;;
	esac
done

# Nothing is left stuck: the next session records normally.
dir=$(session_cmd start --events "$OWN_EVENTS")
"$TRACEE" print 50 >/dev/null
last=$(timeout 60 "$TRACECTL" stop | tail -n 1)
n=$("$TRACECTL" view "$dir" | grep -c ' test:print: line [0-9]* of 50$')
check "a later session records normally (50 of 50 events)" [ "$n" -eq 50 ]

# Threads ending through the raw exit system call, one after the other,
# in a pool of 2 buffers that cannot grow: without salvage, the third
# thread would find no buffer. AddressSanitizer's own thread bookkeeping
# breaks on a thread that skips pthread's exit or is cancelled at any
# instruction, so neither runs in sanitizer builds.
if [ -n "$RECORD_PRELOAD" ]; then
	echo "ok $((tap_n + 1)) # SKIP raw-exit and cancelled threads: not under AddressSanitizer"
	tap_n=$((tap_n + 1))
	finish
fi
stop_daemon
check "tracerd starts with a pool of 2 buffers" start_daemon --scan-ms 10 \
	--buffers 2 --max-memory 3M --subbuf-size 4096 --subbuf-count 4
# Only the test's own events: the main thread's C library calls (its
# open(), say) would hold one of the 2 buffers for the whole run.
dir=$(session_cmd start --events 'crash:*')
VANISH=6
spawn van "$CRASHEE" rawexit "$T/p.van" $VANISH 300
check "the program starts" [ $? -eq 0 ]
for i in $(seq 0 $((VANISH - 1))); do
	read -r -t 30 line <&"$van_out"
	[ "$line" = "vanished $i" ] || break
	want=$((i + 1))
	deadline=$(($(now_ms) + 20000))
	while [ "$(grep -c 'ended without its exit path' "$LOG")" -lt $want ] &&
	      [ "$(now_ms)" -lt $deadline ]; do
		sleep 0.01	# polling the log, not waiting it out
	done
	(echo go >&"$van_in") 2>/dev/null
done
got=$(grep -c 'ended without its exit path' "$LOG")
check "tracerd noticed each of the $VANISH threads ($got)" [ "$got" -eq $VANISH ]
wait "$van_pid"
check "the program exits 0" [ $? -eq 0 ]
"$TRACECTL" stop >/dev/null
"$TRACECTL" view "$dir" >"$T/view2"
awk -v N=$VANISH -v K=300 '
	/ crash:ev: thread / { t = $(NF - 2); s = $NF
		if (s != next_seq[t] + 0) bad++; next_seq[t] = s + 1 }
	/ tracer:thread_vanished: / { vanished++ }
	END { for (t = 0; t < N; t++) if (next_seq[t] != K) bad++
	      exit bad != 0 || vanished != N }' "$T/view2"
ok $? "all $VANISH threads' 300 events are in the trace, each followed by tracer:thread_vanished"

# Threads cancelled asynchronously, often in the middle of a record: a
# thread that leaves a torn record keeps its buffer at exit, and tracerd
# salvages and frees it once the thread is gone. In the same pool of 2,
# every cancelled thread's buffer comes back, and a last thread records
# all its events.
CANCEL=20
# buffers_in_use PID: buffers of process PID held by a thread.
buffers_in_use() {
	"$TRACECTL" status --json | python3 -c '
import json, sys
ps = [p for p in json.load(sys.stdin)["processes"] if p["pid"] == int(sys.argv[1])]
print(ps[0]["buffers_in_use"] if ps else -1)' "$1"
}
dir=$(session_cmd start --events 'crash:*')
spawn can "$CRASHEE" cancel "$T/p.can" $CANCEL 300
check "the cancelling program starts" [ $? -eq 0 ]
# The main thread's own buffer, taken at the start (proc:start), counted
# before any other thread starts (a cancelled one may keep its buffer
# until tracerd reclaims it: counted then, it would be taken for the
# main thread's).
base=$(buffers_in_use "$can_pid")
(echo go >&"$can_in") 2>/dev/null
freed=0
for i in $(seq 0 $((CANCEL - 1))); do
	read -r -t 30 line <&"$can_out"
	[ "$line" = "cancelled $i" ] || break
	deadline=$(($(now_ms) + 20000))
	until [ "$(buffers_in_use "$can_pid")" = "$base" ] ||
	      [ "$(now_ms)" -gt $deadline ]; do
		sleep 0.01	# polling status, not waiting it out
	done
	[ "$(buffers_in_use "$can_pid")" = "$base" ] && freed=$((freed + 1))
	(echo go >&"$can_in") 2>/dev/null
done
check "every one of the $CANCEL cancelled threads' buffers came back ($freed)" \
	[ $freed -eq $CANCEL ]
wait "$can_pid"
check "the program exits 0" [ $? -eq 0 ]
"$TRACECTL" stop >/dev/null
"$TRACECTL" view "$dir" >"$T/view3"
n=$(grep -c ' crash:final: seq [0-9]*$' "$T/view3")
check "the last thread's 300 events are all in the trace ($n)" [ "$n" -eq 300 ]
torn=$(grep -c ' tracer:thread_vanished: ' "$T/view3")
echo "# $torn of $CANCEL cancelled threads left a torn record"
finish
