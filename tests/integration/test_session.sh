#!/bin/bash
# Sessions from the command line: errors without a daemon, start/stop/status,
# events recorded only while a session is started, a traced program that
# cannot reach tracerd, SIGTERM writing everything out.
. "$(dirname "$0")/lib.sh"

# No daemon yet.
out=$("$TRACECTL" status 2>&1); rc=$?
ok $([ $rc -eq 1 ] && [ "$out" = "tracectl: cannot reach tracerd at '$TRACER_SOCKET': No such file or directory" ]; echo $?) \
	"tracectl without tracerd: one-line error naming the socket, exit 1"

"$TRACEE" print 50 >"$T/untraced.out"; rc=$?
seq 0 49 | awk '{ printf "line %d of 50\n", $1 }' >"$T/expected.out"
ok $([ $rc -eq 0 ] && cmp -s "$T/untraced.out" "$T/expected.out"; echo $?) \
	"traced program without tracerd exits 0 with its normal output"

out=$("$TRACECTL" frobnicate 2>&1); rc=$?
ok $([ $rc -eq 2 ] && echo "$out" | head -n 1 | grep -q "unknown command 'frobnicate'"; echo $?) \
	"unknown command: usage error, exit 2"

check "tracerd starts on a private socket" start_daemon

out=$("$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out2" 2>&1); rc=$?
ok $([ $rc -ne 0 ] && echo "$out" | grep -q "another tracerd is already running on '$TRACER_SOCKET'"; echo $?) \
	"a second tracerd on the same socket refuses to start"

out=$("$TRACECTL" stop 2>&1); rc=$?
ok $([ $rc -eq 1 ] && [ "$out" = "tracectl: no session is started" ]; echo $?) \
	"stop without a session fails clearly"

"$TRACEE" print 3 >/dev/null	# before the session: not recorded
dir=$(session_cmd start)
ok $([ -d "$dir" ] && case $dir in "$T"/out/session-*) true;; *) false;; esac; echo $?) \
	"start prints the new session directory last"

out=$("$TRACECTL" start 2>&1); rc=$?
ok $([ $rc -eq 1 ] && [ "$out" = "tracectl: a session is already started: '$dir'" ]; echo $?) \
	"a second start fails and names the running session"

"$TRACEE" print 20 >"$T/traced.out"
seq 0 19 | awk '{ printf "line %d of 20\n", $1 }' >"$T/expected20.out"
check "traced program output unchanged while recording" cmp -s "$T/traced.out" "$T/expected20.out"

status=$("$TRACECTL" status)
check "status shows the running session" grep -q "^session [0-9]* recording into $dir" <<<"$status"

dir2=$(session_cmd stop)
check "stop prints the same directory" [ "$dir2" = "$dir" ]

nproc=$(ls -d "$dir"/*/ | wc -l)
check "only the process traced during the session has a directory" [ "$nproc" -eq 1 ]

"$TRACECTL" view "$dir" >"$T/view.out"; rc=$?
n=$(grep -c ' test:print: line [0-9]* of 20$' "$T/view.out")
ok $([ $rc -eq 0 ] && [ "$n" -eq 20 ]; echo $?) "view shows the 20 recorded events"
awk '/ test:print: /{ split($0, a, ": "); print a[2] }' "$T/view.out" >"$T/msgs"
check "view messages are formatted as printf would" cmp -s "$T/msgs" "$T/expected20.out"

"$TRACEE" print 5 >/dev/null	# after the session: not recorded
check "nothing recorded after stop" [ "$(ls -d "$dir"/*/ | wc -l)" -eq 1 ]

# Every argument type, formatted exactly as printf.
dir=$(session_cmd start)
"$TRACEE" types
session_cmd stop >/dev/null
"$TRACECTL" view "$dir" | sed -n 's/^.* test:[a-z]*: //p' >"$T/types.out"
long=$(head -c 508 /dev/zero | tr '\0' x)...	# cut, marked
printf '%s\n' "-5 65535 -42 -1 1099511627776 4000000000 abc Z" \
	"3.142 1.000000e-300 2.5 0x1234 str|(null)" \
	"   ab|7     |+8|%|2000" "$long" "no arguments" \
	"1 2 3" "1 2 3" "1 2 3" >"$T/types.expected"
check "every argument type is recorded and formatted like printf" \
	cmp "$T/types.out" "$T/types.expected"

# Call sites with ids past the compact header's (4094) record through
# the same entries, in extended headers; registered a moment before the
# image ends, more of them than the socket takes at once, their
# descriptions still reach tracerd (exit, _exit, exec), so that their
# events can be read.
printf '%s\n' "test:many0 0 0" "test:many4197 4197 -4197" \
	"test:many4198 4198 -4198" "test:many4199 4199 -4199" >"$T/many.expected"
for end in exit _exit exec; do
	dir=$(session_cmd start)
	"$TRACEE" many 4200 "$end" >"$T/many.out"
	session_cmd stop >/dev/null
	last=$(awk '/^ids/ { print $3 }' "$T/many.out")
	"$TRACECTL" view "$dir" 2>"$T/many.err" |
		sed -n 's/^.* \(test:many[0-9]*\): /\1 /p' >"$T/many.view"
	check "4200 call sites, then $end: the last ones' ids past the compact range (${last:-none})" \
		[ "${last:-0}" -gt 4094 ]
	check "their events are read with their values, and view says nothing on stderr" \
		eval 'cmp "$T/many.view" "$T/many.expected" && [ ! -s "$T/many.err" ]'
done

# SIGTERM: everything committed is written before tracerd exits.
dir=$(session_cmd start)
"$TRACEE" threads 3 20000
stop_daemon
n=$("$TRACECTL" view "$dir" | grep -c ' test:seq: ')
check "SIGTERM writes every recorded event before exiting" [ "$n" -eq 60000 ]
check "tracerd says it exited cleanly" grep -q "exited cleanly" "$LOG"

finish
