#!/bin/bash
# The update signal (SIGRTMIN+3): programs that use it themselves keep
# getting their signals and none of tracerd's; programs that block it get
# no signal queued and still follow every change at their next event; the
# signal number can be moved with TRACER_SIGNAL.
. "$(dirname "$0")/lib.sh"
CONTROLEE=./tests/integration/controlee

# burst_count DIR PID: test:burst events of PID in the trace at DIR.
burst_count() {
	"$TRACECTL" view "$1" | awk -v pid="$2" '$3 == pid && / test:burst: /' |
		wc -l
}

check "tracerd starts" start_daemon

# --- The program's own handler, installed with sigaction() and signal() ---
for how in sigaction signal; do
	spawn h "$CONTROLEE" handler $how
	dir=$(session_cmd start)
	cmd h "r 5" >/dev/null
	for i in 1 2 3; do kill -s RTMIN+3 "$h_pid"; done
	check "$how: the program's handler got its 3 signals" \
		[ "$(cmd h c)" = 3 ]
	"$TRACECTL" switch >/dev/null
	"$TRACECTL" switch >/dev/null
	check "$how: tracerd's signals never reach the program's handler" \
		[ "$(cmd h c)" = 3 ]
	cmd h "r 5" >/dev/null
	kill -s RTMIN+3 "$h_pid"
	check "$how: and the program's handler still works after them" \
		[ "$(cmd h c)" = 4 ]
	session_cmd stop >/dev/null
	check "$how: its events are recorded" [ "$(burst_count "$dir" "$h_pid")" = 10 ]
	quit h
	check "$how: it exits normally" [ $? -eq 0 ]
done

# --- No handler: the default action is the program's, as without tracer ---
spawn d "$CONTROLEE" burst
dir=$(session_cmd start)
cmd d "r 5" >/dev/null
"$TRACECTL" switch >/dev/null
check "tracerd's signals do not disturb a program without a handler" \
	[ "$(cmd d "r 1")" = "ok 6" ]
kill -s RTMIN+3 "$d_pid"
wait "$d_pid"
traced=$?
session_cmd stop >/dev/null
TRACER_SOCKET=$T/none spawn u "$CONTROLEE" burst
kill -s RTMIN+3 "$u_pid"
wait "$u_pid"
untraced=$?
check "a SIGRTMIN+3 from elsewhere ends it as it would untraced ($traced = $untraced)" \
	eval '[ "$traced" = "$untraced" ] && [ "$traced" -gt 128 ]'

# --- A program that blocks the signal ------------------------------------
spawn b "$CONTROLEE" block
dir=$(session_cmd start)
cmd b "r 10" >/dev/null
"$TRACECTL" switch >/dev/null
check "a thread blocking the signal gets none queued by tracerd" \
	[ "$(cmd b p)" = "blocked 1 pending 0" ]
check "switch still brings its events to the files" \
	[ "$(burst_count "$dir" "$b_pid")" = 10 ]
session_cmd stop >/dev/null
cmd b "r 7" >/dev/null
dir=$(session_cmd start)
cmd b "r 3" >/dev/null
session_cmd stop >/dev/null
check "it follows a stop and a new start at its next event" \
	[ "$(burst_count "$dir" "$b_pid")" = 3 ]
quit b

# --- Another signal number ------------------------------------------------
TRACER_SIGNAL=SIGRTMIN+5 spawn o "$CONTROLEE" handler sigaction
dir=$(session_cmd start)
cmd o "r 5" >/dev/null
kill -s RTMIN+3 "$o_pid"
"$TRACECTL" switch >/dev/null
got=$(cmd o c); echo "# got $got"
check "TRACER_SIGNAL=SIGRTMIN+5: tracerd uses it, SIGRTMIN+3 is the program's" \
	[ "$got" = 1 ]
check "TRACER_SIGNAL=SIGRTMIN+5: events still recorded and switched" \
	[ "$(burst_count "$dir" "$o_pid")" = 5 ]
session_cmd stop >/dev/null
quit o
TRACER_SIGNAL=none spawn n "$CONTROLEE" handler sigaction
dir=$(session_cmd start)
cmd n "r 5" >/dev/null
"$TRACECTL" switch >/dev/null
kill -s RTMIN+3 "$n_pid"
check "TRACER_SIGNAL=none: no update signal, the program's handler as usual" \
	[ "$(cmd n c)" = 1 ]
session_cmd stop >/dev/null
check "TRACER_SIGNAL=none: events recorded" [ "$(burst_count "$dir" "$n_pid")" = 5 ]
quit n

finish
