#!/bin/bash
# Flight-recorder triggers (tracectl trigger): tracerd, at its default
# settings, takes exactly one snapshot when a traced program records a
# matching event (and not for one recorded before the trigger was
# added), one when a traced program crashes, one for an event recorded
# just before the program exits; --pid limits a trigger to one process;
# the snapshot holds the events before the one that fired it and names
# its trigger; list and remove work; every mistake is one line and a
# non-zero exit.
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee
CRASHEE=./tests/integration/crashee
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}handle_segv=0"

# usage_error EXPECTED ARGS...: exit 2, one line on stderr naming it.
usage_error() {
	local want=$1 err rc
	shift
	err=$("$TRACECTL" trigger "$@" 2>&1 >/dev/null); rc=$?
	[ "$rc" -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] &&
		echo "$err" | grep -qF -- "$want" ||
		{ echo "# rc $rc: $err"; return 1; }
}

# field ID KEY: that value of trigger ID in `trigger list --json`.
field() {
	"$TRACECTL" trigger list --json | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["id"] == int(sys.argv[1]):
        print(t[sys.argv[2]])' "$1" "$2"
}

check "no action: usage error" usage_error "missing the action"
check "unknown action: usage error" usage_error "unknown action 'frob'" frob
check "add without --on: usage error" usage_error "missing --on" \
	add --snapshot
check "add without --snapshot: usage error" usage_error "missing the action: --snapshot" \
	add --on app:error
check "a bad interval: usage error" usage_error "--interval: '0s'" \
	add --on app:error --interval 0s --snapshot
check "remove without ID: usage error" usage_error "missing ID" remove
out=$(TRACER_SOCKET=$T/none "$TRACECTL" trigger list 2>&1); rc=$?
check "no tracerd: one line naming the socket, exit 1 ($rc)" \
	eval '[ $rc -eq 1 ] && [ "$out" = "tracectl: cannot reach tracerd at '"'$T/none'"': No such file or directory" ]'

check "tracerd starts" start_daemon
out=$("$TRACECTL" trigger list)
check "no triggers at first" [ "$out" = "no triggers" ]
out=$("$TRACECTL" trigger add --on app:error --pid 999999 --snapshot 2>&1); rc=$?
check "a pid tracerd does not trace: exit 1 ($out)" \
	eval '[ $rc -eq 1 ] && [ "$out" = "tracectl: no traced process has pid 999999" ]'
out=$("$TRACECTL" trigger remove 42 2>&1); rc=$?
check "removing an unknown trigger: exit 1 ($out)" \
	eval '[ $rc -eq 1 ] && [ "$out" = "tracectl: no trigger 42" ]'

# Trigger 1 fires at every vital event: the tests' way to know that
# tracerd has looked at the rings since.
out=$("$TRACECTL" trigger add --on test:vital --interval 1ms --snapshot)
check "add prints the trigger ($out)" \
	eval '[[ "$out" == "added trigger 1: on '"'test:vital'"': snapshot at most every 1 ms; 0 match(es), 0 snapshot(s)" ]]'
dir=$(session_cmd start --mode flight)
spawn c "$CONTROLEE" burst
c_pid_=$c_pid
cmd c "r 500" >/dev/null
cmd c e >/dev/null		# before trigger 2 exists
"$TRACECTL" trigger add --on 'test:err*' --snapshot >/dev/null
cmd c v >/dev/null
check "a vital event fires trigger 1" \
	await_line "trigger 1 on 'test:vital': test:vital pid $c_pid"
check "an event recorded before trigger 2 was added does not fire it" \
	[ "$(field 2 matched)" = 0 ]

cmd c "r 1000" >/dev/null
cmd c e >/dev/null
cmd c e >/dev/null
cmd c e >/dev/null
cmd c "r 10" >/dev/null
check "the event fires trigger 2" \
	await_line "trigger 2 on 'test:err\*': test:error pid $c_pid"
cmd c v >/dev/null
check "a second vital event fires trigger 1 again" \
	eval '[ "$(await_log "trigger 1 on '"'test:vital'"'" 2)" -eq 2 ]'
check "three matches, one snapshot (default interval 10 s)" \
	eval '[ "$(field 2 matched)" = 3 ] && [ "$(field 2 snapshots)" = 1 ]'
snap=$(field 2 last_snapshot)
echo "# $snap: $(cat "$snap/trigger" 2>&1)"
check "the snapshot names its trigger in its file 'trigger'" \
	grep -qx "trigger 2 on 'test:err\*': test:error pid $c_pid tid $c_pid" "$snap/trigger"
n=$(grep -l "^trigger 2 " "$dir"/snapshot-*/trigger | wc -l)
check "exactly one snapshot is trigger 2's ($n)" [ "$n" -eq 1 ]
"$TRACECTL" view "$snap" >"$T/snap.txt"
n=$(sed -n 's/.* test:burst: seq \([0-9]*\) .*/\1/p' "$T/snap.txt" |
	awk '$1 < 1500' | sort -u | wc -l)
check "it holds every event before the error (1500 of test:burst: $n)" \
	[ "$n" -eq 1500 ]
check "and the error itself" grep -q ' test:error: error 1500$' "$T/snap.txt"

# --pid: another process's events do not fire it.
spawn o "$CONTROLEE" burst
out=$("$TRACECTL" trigger add --on test:error --pid "$c_pid_" \
	--interval 1ms --snapshot)
check "add --pid shows the pid" eval '[[ "$out" == *" in pid $c_pid_:"* ]]'
cmd o e >/dev/null
cmd c e >/dev/null
check "trigger 3 fires for its pid" \
	await_line "trigger 3 on 'test:error': test:error pid $c_pid_"
cmd c v >/dev/null
check "a third vital event fires trigger 1 again" \
	eval '[ "$(await_log "trigger 1 on '"'test:vital'"'" 3)" -eq 3 ]'
check "and only for it (1 match)" [ "$(field 3 matched)" = 1 ]

# Removed: no more snapshots of it.
out=$("$TRACECTL" trigger remove 3)
check "remove says so ($out)" [ "$out" = "removed trigger 3" ]
check "list no longer shows it" \
	eval '! "$TRACECTL" trigger list | grep -q "^trigger 3:"'
quit o

# An event recorded just before the program exits (no scan in between).
"$TRACECTL" trigger add --on test:error --interval 1ms --snapshot >/dev/null
cmd c e >/dev/null
quit c
check "an error right before the exit fires trigger 4" \
	await_line "trigger 4 on 'test:error': test:error pid $c_pid_"
snap=$(field 4 last_snapshot)
check "its snapshot holds the ended process's error" \
	eval '"$TRACECTL" view "$snap" | grep -q " test:error: "'

# A crash.
"$TRACECTL" trigger add --on tracer:process_killed --snapshot >/dev/null
"$CRASHEE" segv "$T/crash" 2 3000 2>/dev/null & cpid=$!
wait $cpid
check "a crash fires trigger 5" \
	await_line "trigger 5 on 'tracer:process_killed': tracer:process_killed pid $cpid"
snap=$(field 5 last_snapshot)
"$TRACECTL" view "$snap" >"$T/crash.txt"
check "its snapshot holds the crashed thread's 3000 events" \
	[ "$(grep -c " crash:ev: thread 0 seq " "$T/crash.txt")" -eq 3000 ]
check "and the crash, last" \
	eval 'tail -n 1 "$T/crash.txt" | grep -q "tracer:process_killed: pid $cpid killed by signal 11 (SIGSEGV)"'
check "one snapshot for one crash" [ "$(field 5 snapshots)" = 1 ]
check "babeltrace2 reads the snapshot" \
	eval 'babeltrace2 "$snap" >/dev/null 2>"$T/bt.err" && ! [ -s "$T/bt.err" ]'

session_cmd stop >/dev/null
out=$("$TRACECTL" trigger add --on app:rare --interval 1.5h --snapshot)
check "an interval in hours ($out)" eval '[[ "$out" == *"at most every 5400 s;"* ]]'
out=$("$TRACECTL" trigger remove --all)
check "remove --all removes the rest" \
	[ "$(echo "$out" | grep -c '^removed trigger')" -eq 5 ]
check "none left" [ "$("$TRACECTL" trigger list)" = "no triggers" ]

finish
