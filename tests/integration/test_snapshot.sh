#!/bin/bash
# A flight-recorder snapshot holds what the flight recorder holds: the
# rings of the running processes and the last events of those that ended
# (exited, killed) since the session started or the last snapshot, each
# with its end event; with nothing to hold, it says so, exits 1 and
# creates nothing. tracerd runs with its default settings.
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee

# last_seq DIR PID: the last test:burst number of PID in DIR's view.
last_seq() {
	"$TRACECTL" view "$1" 2>/dev/null |
		awk -v p="$2" '$3 == p && $5 == "test:burst:" { s = $7 } END { print s }'
}

# await_end PID: until tracerd logged the end of PID (10 s at most).
await_end() {
	await_line "pid $1 ([^)]*) is gone"
}

# holds SNAP PID LAST END WHAT: checks that snapshot SNAP holds PID's
# events up to number LAST, and its end event (a view line matching END).
holds() {
	local last
	last=$(last_seq "$1" "$2")
	check "it holds the $5's last events ($last)" [ "$last" = "$3" ]
	check "and the $5's end ($4)" \
		bash -c "'$TRACECTL' view '$1' | grep -q ' $2 .*$4'"
}

# snap OUT: tracectl snapshot, its standard output into OUT; its status.
snap() {
	"$TRACECTL" snapshot >"$1" 2>"$1.err"
}

check "tracerd starts" start_daemon
dir=$(session_cmd start --mode flight)

snap "$T/s0"
rc=$?
check "nothing to snapshot yet: exit 1 and one line" \
	[ "$rc:$(cat "$T/s0.err")" = "1:tracectl: nothing to snapshot: no traced process since the session started" ]
check "... and no snapshot directory made" \
	bash -c "! ls -d '$dir'/snapshot-* 2>/dev/null"

# A program that ends normally, then a snapshot.
spawn a "$CONTROLEE" burst
cmd a "r 5000" >/dev/null
quit a
check "the first program ended (tracerd saw it)" await_end "$a_pid"
snap "$T/s1"
check "a snapshot after it ended succeeds" [ $? -eq 0 ]
holds "$(tail -n 1 "$T/s1")" "$a_pid" 4999 \
	"tracer:process_exit: pid $a_pid exited with status 0" "exited one"

# One killed, one running: both in the next snapshot, the first not again.
spawn b "$CONTROLEE" burst
cmd b "r 3000" >/dev/null
spawn c "$CONTROLEE" burst
cmd c "r 700" >/dev/null
kill -KILL "$b_pid"
check "the second program was killed (tracerd saw it)" await_end "$b_pid"
snap "$T/s2"
check "a snapshot after a SIGKILL succeeds" [ $? -eq 0 ]
s2=$(tail -n 1 "$T/s2")
holds "$s2" "$b_pid" 2999 \
	"tracer:process_killed: pid $b_pid killed by signal 9 (SIGKILL)" \
	"killed one"
check "and the running one's events ($(last_seq "$s2" "$c_pid"))" \
	[ "$(last_seq "$s2" "$c_pid")" = 699 ]
check "the one that ended before the last snapshot is not there again" \
	bash -c "! ls -d '$s2'/controlee-$a_pid 2>/dev/null"
check "the snapshot says how many processes it holds" \
	grep -q '^snapshot of 2 process(es)' "$T/s2"
quit c
await_end "$c_pid" >/dev/null

snap "$T/s3"
check "the last one ended: a snapshot holds it" \
	[ "$(last_seq "$(tail -n 1 "$T/s3")" "$c_pid")" = 699 ]
snap "$T/s4"
rc=$?
check "then nothing new: exit 1, one line, nothing made" \
	[ "$rc:$(cat "$T/s4.err"):$(ls -d "$dir"/snapshot-* | wc -l)" = "1:tracectl: nothing to snapshot: no traced process since the last snapshot:3" ]
session_cmd stop >/dev/null

finish
