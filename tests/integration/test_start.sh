#!/bin/bash
# A program's start, traced: its start events are timed before main()
# runs; started while no session records, it is registered without
# waiting for tracerd and without a listener thread, and still follows a
# session started later from its first event, with that session's
# filter, also after tracerd was restarted. tracerd runs with its
# default settings.
. "$(dirname "$0")/lib.sh"
STARTER=./tests/integration/starter
LIB=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$(pwd)/libtracer/.libs/libtracer.so

check "tracerd starts" start_daemon

# view DIR: the session's events.
view() {
	"$TRACECTL" view --no-symbols "$1"
}

# listens PID: does PID run libtracer's listener thread?
listens() {
	cat /proc/"$1"/task/*/comm 2>/dev/null | grep -qx tracer-listener
}

# ---- start events at the start ------------------------------------------

dir=$(session_cmd start)
spawn s env LD_PRELOAD="$LIB" "$STARTER"
main=$(cmd s t)
cmd s "o $T/s.out" >/dev/null
quit s
session_cmd stop >/dev/null
view "$dir" >"$T/s.view"
main=${main#main }
for ev in tracer:process_start proc:start; do
	t=$(awk -v pid="$s_pid" -v ev="$ev:" '$3 == pid && $5 == ev { print $1; exit }' "$T/s.view")
	check "$ev is timed before main() ($t <= $main)" \
		python3 -c "import sys; sys.exit(not (0 < float('$t') <= float('$main')))"
done

# ---- started while no session records -----------------------------------

spawn l env LD_PRELOAD="$LIB" "$STARTER"
check "a program started with no session is registered (status lists it)" \
	bash -c "'$TRACECTL' status | grep -q '^ *$l_pid '"
check "its events are known to tracerd (tracectl list --pid)" \
	bash -c "'$TRACECTL' list --pid $l_pid | grep -q '^libc:open '"
listens "$l_pid"
check "it runs no listener thread" [ $? -ne 0 ]
cmd l "o $T/before" >/dev/null
dir=$(session_cmd start --events 'libc:open,tracer:*,proc:*')
r1=$(cmd l "o $T/during-1")
r2=$(cmd l "o $T/during-2")
check "a session starts: the program goes on ($r1 $r2)" \
	[ "$r1 $r2" = "ok ok" ]
check "and runs its listener from then on" listens "$l_pid"
session_cmd stop >/dev/null
quit l
view "$dir" >"$T/l.view"
check "its opens during the session are in the trace, from the first" \
	[ "$(grep -c " $l_pid .*libc:open: path $T/during-[12] " "$T/l.view")" -eq 2 ]
check "nothing from before the session" \
	bash -c "! grep -q 'path $T/before ' '$T/l.view'"
check "the session's filter was in force from its first event (no libc:write, no libc:close)" \
	bash -c "! grep -q ' $l_pid .*libc:\(write\|close\)' '$T/l.view'"
check "its start events are there (it joined the session)" \
	grep -q " $l_pid .*proc:start: " "$T/l.view"

# ---- tracerd restarted meanwhile ------------------------------------------

spawn r env LD_PRELOAD="$LIB" "$STARTER"
check "another program starts with no session" \
	bash -c "'$TRACECTL' status | grep -q '^ *$r_pid '"
kill -KILL "$DPID"
tail --pid="$DPID" -f /dev/null
DPID=
check "tracerd is killed and starts again" start_daemon
dir=$(session_cmd start)
cmd r "o $T/after-restart-0" >/dev/null	# its first event after the restart
# Registered with the old tracerd, and again with the new one.
registrations() {
	grep -c "registered pid $r_pid " "$LOG"
}
for i in $(seq 300); do
	[ "$(registrations)" -ge 2 ] && break
	sleep 0.05	# polling the log for the registration, not waiting it out
done
check "at its first event, it registers with the new tracerd" \
	[ "$(registrations)" -eq 2 ]
for i in 1 2 3; do cmd r "o $T/after-restart-$i" >/dev/null; done
session_cmd stop >/dev/null
quit r
view "$dir" >"$T/r.view"
check "its later events are in the new tracerd's session" \
	[ "$(grep -c " $r_pid .*libc:open: path $T/after-restart-[123] " "$T/r.view")" -eq 3 ]

finish
