#!/bin/bash
# Every process directory is a CTF 1.8 trace that babeltrace2 reads
# (doc/session-files.md): events of every argument type from several
# threads, compared event by event with what the program recorded and with
# the channel files (names, field names, values, wall-clock times); losses
# in discard mode counted exactly (babeltrace2's discarded events, the
# channel files' counters, tracectl status and the thread's own count);
# an open sub-buffer written in parts; a flight-mode snapshot; a trace
# whose tracerd was killed with SIGKILL.
. "$(dirname "$0")/lib.sh"

CTF_TRACEE=./tests/integration/ctf_tracee
CHECK="python3 $(dirname "$0")/ctf_check.py"

if ! command -v babeltrace2 >/dev/null; then
	echo "1..0 # SKIP babeltrace2 is not installed (scripts/bootstrap)"
	rm -rf "$T"
	exit 0
fi

# bt NAME DIR: babeltrace2 on DIR into $T/bt-NAME.out and $T/bt-NAME.err.
bt() {
	babeltrace2 --clock-seconds --no-delta "$2" >"$T/bt-$1.out" 2>"$T/bt-$1.err"
}

# The one process directory of a session or snapshot directory.
process_dir() {
	local dirs=("$1"/*-[0-9]*/)
	[ ${#dirs[@]} -eq 1 ] && [ -d "${dirs[0]}" ] && echo "${dirs[0]%/}"
}

# checker NAME ARGS...: run ctf_check.py, its output in $T/NAME.check,
# what it found wrong shown as TAP comments.
checker() {
	local name=$1 rc
	shift
	$CHECK "$@" >"$T/$name.check" 2>"$T/$name.problems"
	rc=$?
	sed 's/^/# /' "$T/$name.problems"
	return $rc
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds, at most SECONDS.
wait_for() {
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.01
	done
}

# view_has DIR NAME N: tracectl view shows at least N events NAME.
view_has() {
	[ "$("$TRACECTL" view "$1" 2>/dev/null | grep -c " $2: ")" -ge "$3" ]
}

# plain_ctf PROCESS_DIR: the directory holds only what a CTF reader takes
# for the trace (metadata, channel files), and subdirectories.
plain_ctf() {
	local f
	for f in "$1"/*; do
		case ${f##*/} in
		metadata|default-*|vital-*) ;;
		*) [ -d "$f" ] || return 1 ;;
		esac
	done
}

# Events lost in this session by the traced processes (tracectl status).
session_lost() {
	"$TRACECTL" status --json | python3 -c '
import json, sys
print(sum(p["events_lost_session"] for p in json.load(sys.stdin)["processes"]))'
}

check "tracerd starts on a private socket" start_daemon

# --- Every argument type, three threads.
dir=$(session_cmd start --events "$OWN_EVENTS")
"$CTF_TRACEE" types >"$T/types.prog"; rc=$?
session_cmd stop >/dev/null
pdir=$(process_dir "$dir")
ok $([ $rc -eq 0 ] && [ -n "$pdir" ] && [ -s "$T/types.prog" ]; echo $?) \
	"the program records into one process directory"
ok $([ "$(head -n 1 "$pdir/metadata" 2>/dev/null)" = "/* CTF 1.8 */" ]; echo $?) \
	"its metadata is TSDL text starting with /* CTF 1.8 */"
check "the process directory is a plain CTF trace (tracer's own files in tracer/)" \
	plain_ctf "$pdir"
bt types "$dir"; rc=$?
ok $([ $rc -eq 0 ] && [ -s "$T/bt-types.out" ] && [ ! -s "$T/bt-types.err" ]; echo $?) \
	"babeltrace2 reads the session directory: exit 0, nothing on stderr"
checker types events "$pdir" "$T/bt-types.out" "$T/types.prog"
ok $? "babeltrace2 shows what each thread recorded (names, fields, values) and nothing of the ring's bookkeeping (no padding field; packet context: tid alone), every record at CLOCK_MONOTONIC + clock_offset"
n=$("$TRACECTL" view "$dir" | grep -vc ' tracer:lost: ')
ok $([ "$n" -gt 0 ] && [ "$n" = "$(cat "$T/types.check")" ]; echo $?) \
	"as many events as tracectl view shows ($n)"
checker types_counters counters "$dir" 0
ok $? "channel files: packet_seq_num 0, 1, 2, ...; events_discarded 0"
bt types_process "$pdir"; rc=$?
ok $([ $rc -eq 0 ] && [ ! -s "$T/bt-types_process.err" ] &&
     cmp -s "$T/bt-types.out" "$T/bt-types_process.out"; echo $?) \
	"babeltrace2 reads the process directory alone: the same events"

# --- Discard mode, 2 x 4 KiB sub-buffers: losses counted exactly. A thread
# records a burst while tracerd drains; then, tracerd stopped, the main
# thread records events that fill sub-buffers exactly: it loses events
# after closing its last sub-buffer, and no packet of its own tells them.
burst=200000 ticks=10000
dir=$(session_cmd start --events "$OWN_EVENTS" --subbuf-size 4096 --subbuf-count 2)
spawn lossy "$CTF_TRACEE" serve
r1=$(cmd lossy "b $burst")
kill -STOP "$DPID"
r2=$(cmd lossy "t $ticks")
kill -CONT "$DPID"
lost=$(session_lost)
session_cmd stop >/dev/null
ok $([ "$r1$r2" = donedone ] && [ "$lost" -gt 0 ]; echo $?) \
	"bursts into 2 x 4 KiB sub-buffers lose $lost events (status)"
bt lossy "$dir"; rc=$?
checker lossy_discarded discarded "$T/bt-lossy.err"
ok $([ $? -eq 0 ] && [ $rc -eq 0 ] && [ "$(cat "$T/lossy_discarded.check")" = "$lost" ]; echo $?) \
	"babeltrace2 reports $(cat "$T/lossy_discarded.check") discarded events, the losses, and nothing else"
checker lossy_counters counters "$dir" "$lost"
ok $? "channel files: packet_seq_num in order, events_discarded sum to the losses"
thread_lost=$($CHECK sum "$T/bt-lossy.out" tracer:thread_exit lost)
n=$($CHECK count "$T/bt-lossy.out" ctf:burst)
ok $([ $((n + thread_lost)) -eq $burst ]; echo $?) \
	"the burst: $n events shown + $thread_lost lost (the thread's tracer:thread_exit)"
n=$($CHECK count "$T/bt-lossy.out" ctf:tick)
ok $([ $((thread_lost + ticks - n)) -eq "$lost" ]; echo $?) \
	"with the main thread's $((ticks - n)) lost ticks: the session's losses"
checker lossy_events events "$(process_dir "$dir")" "$T/bt-lossy.out"
ok $? "babeltrace2 shows every record of the files at its time"

# The same process in a new session: its buffers' counters hold the first
# session's losses, which are not this session's.
dir=$(session_cmd start --events "$OWN_EVENTS")
kill -STOP "$DPID"
r=$(cmd lossy "t $ticks")
kill -CONT "$DPID"
lost=$(session_lost)
quit lossy; rc=$?
session_cmd stop >/dev/null
ok $([ $rc -eq 0 ] && [ "$r" = done ] && [ "$lost" -gt 0 ]; echo $?) \
	"next session, the main thread again: $lost lost"
bt lossy2 "$dir"; rc=$?
checker lossy2_discarded discarded "$T/bt-lossy2.err"; rc2=$?
n=$($CHECK count "$T/bt-lossy2.out" ctf:tick)
ok $([ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ $((n + lost)) -eq $ticks ] &&
     [ "$(cat "$T/lossy2_discarded.check")" = "$lost" ]; echo $?) \
	"babeltrace2: $n events and $(cat "$T/lossy2_discarded.check") discarded, this session's losses only"
checker lossy2_counters counters "$dir" "$lost"
ok $? "channel files: events_discarded count this session's losses only"

# --- An open sub-buffer written in two parts (live interval).
dir=$(session_cmd start --events "$OWN_EVENTS" --live-interval 10)
spawn live "$CTF_TRACEE" serve
r1=$(cmd live "s 10")
wait_for 10 view_has "$dir" ctf:step 10; w1=$?
r2=$(cmd live "s 10")
wait_for 10 view_has "$dir" ctf:step 20; w2=$?
quit live; rc=$?
session_cmd stop >/dev/null
ok $([ $rc -eq 0 ] && [ "$r1$r2" = donedone ] && [ $w1 -eq 0 ] &&
     [ $w2 -eq 0 ]; echo $?) "live: 10 events written, then 10 more"
checker live_counters counters "$dir" 0
ok $([ $? -eq 0 ] &&
     [ "$(awk '{ print $6 }' "$T/live_counters.check")" -ge 2 ]; echo $?) \
	"the parts of one sub-buffer are packets 0, 1, ... of their file"
bt live "$dir"; rc=$?
n=$($CHECK count "$T/bt-live.out" ctf:step)
ok $([ $rc -eq 0 ] && [ ! -s "$T/bt-live.err" ] && [ "$n" -eq 20 ]; echo $?) \
	"babeltrace2 reads them: 20 events, no discarded packets or events"

# --- Flight mode: a snapshot.
dir=$(session_cmd start --events "$OWN_EVENTS" --mode flight --subbuf-size 4096 --subbuf-count 2)
spawn flight "$CTF_TRACEE" serve
r=$(cmd flight "b 5000")
snap=$("$TRACECTL" snapshot | tail -n 1)
quit flight; rc=$?
session_cmd stop >/dev/null
ok $([ $rc -eq 0 ] && [ "$r" = done ] &&
     [ -f "$(process_dir "$snap")/metadata" ]; echo $?) \
	"a snapshot directory has its metadata"
bt snap "$snap"; rc=$?
checker snap_discarded discarded "$T/bt-snap.err"; rc2=$?
lost=$(cat "$T/snap_discarded.check")
n=$($CHECK count "$T/bt-snap.out" ctf:burst)
ok $([ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$n" -gt 0 ] && [ "$lost" -gt 0 ] &&
     [ $((n + lost)) -eq 5000 ]; echo $?) \
	"babeltrace2 reads the snapshot: the last $n events, $lost overwritten"
checker snap_counters counters "$snap" "$lost"
ok $? "snapshot files: packet_seq_num in order, events_discarded sum to the overwritten"
checker snap_events events "$(process_dir "$snap")" "$T/bt-snap.out"
ok $? "babeltrace2 shows every record of the snapshot at its time"
bt flight "$dir"
ok $? "babeltrace2 reads the flight session directory, snapshot included"

# --- tracerd killed with SIGKILL: what it wrote is a trace.
dir=$(session_cmd start --events "$OWN_EVENTS")
spawn killed "$CTF_TRACEE" serve
r=$(cmd killed "s 100")
"$TRACECTL" switch >/dev/null
kill -KILL "$DPID" && tail --pid="$DPID" -f /dev/null
DPID=
bt killed "$dir"; rc=$?
n=$($CHECK count "$T/bt-killed.out" ctf:step)
ok $([ "$r" = done ] && [ $rc -eq 0 ] && [ ! -s "$T/bt-killed.err" ] &&
     [ "$n" -eq 100 ]; echo $?) \
	"a trace whose tracerd was killed opens: the 100 events written"
checker killed_events events "$(process_dir "$dir")" "$T/bt-killed.out"
ok $? "babeltrace2 shows every record of it at its time"
quit killed
ok $? "the program carries on without tracerd and exits 0"

finish
