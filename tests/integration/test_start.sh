#!/bin/bash
# A program's start, traced: its start events are timed before main()
# runs, and its end (tracerd's tracer:process_exit) closes its main
# thread's vital file, no file of its own; started while a session
# records, it records without a listener thread until tracerd writes to
# it (a filter) or dies, and then follows at its next event; started
# while no session records, it does not even connect (status lists it as
# waiting), and still follows a session started later from its first
# event, with that session's filter, also after tracerd was restarted.
# tracerd runs with its default settings.
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

# opens_after NAME PREFIX: NAME opens PREFIX-1..3 (PREFIX-0 it opened
# before), then the session stops; how many of the four opens its trace
# holds.
opens_after() {
	local pid i
	eval "pid=\$${1}_pid"
	for i in 1 2 3; do cmd "$1" "o $2-$i" >/dev/null; done
	session_cmd stop >/dev/null
	view "$dir" | grep -c " $pid .*libc:open: path $2-[0123] "
}

# kill_daemon: tracerd killed (SIGKILL), and gone.
kill_daemon() {
	kill -KILL "$DPID"
	tail --pid="$DPID" -f /dev/null
	DPID=
}

# ---- start events at the start ------------------------------------------

dir=$(session_cmd start)
spawn s env LD_PRELOAD="$LIB" "$STARTER" one 'two three'
main=$(cmd s t)
cmd s "o $T/s.out" >/dev/null
quit s
session_cmd stop >/dev/null
view "$dir" >"$T/s.view"
check "started in a session: its arguments are in process.meta" \
	grep -qx "argv $STARTER one two%20three" \
		"$dir/starter-$s_pid/tracer/process.meta"
check "its end (tracer:process_exit) is its last event" \
	bash -c "awk -v pid=$s_pid '\$3 == pid { e = \$5 } END { print e }' '$T/s.view' |
		grep -qx tracer:process_exit:"
check "... and goes into its main thread's vital file, none of its own (one vital file: $(ls "$dir/starter-$s_pid" | tr '\n' ' '))" \
	[ "$(ls "$dir/starter-$s_pid" | grep -c '^vital-')" -eq 1 ]
main=${main#main }
for ev in tracer:process_start proc:start; do
	t=$(awk -v pid="$s_pid" -v ev="$ev:" '$3 == pid && $5 == ev { print $1; exit }' "$T/s.view")
	check "$ev is timed before main() ($t <= $main)" \
		python3 -c "import sys; sys.exit(not (0 < float('$t') <= float('$main')))"
done

# ---- started while a session records: no listener until tracerd writes --

dir=$(session_cmd start --events 'libc:open,libc:close,tracer:*,proc:*')
spawn d env LD_PRELOAD="$LIB" "$STARTER"
r1=$(cmd d "o $T/d-1")
listens "$d_pid"
nl=$?
check "a program started in a session records ($r1) without a listener thread" \
	[ "$r1 $nl" = "ok 1" ]
"$TRACECTL" filter 'libc:open,tracer:*,proc:*' >/dev/null
r2=$(cmd d "o $T/d-2")
check "tracerd sends it a filter: its next event ($r2) starts the listener" \
	listens "$d_pid"
cmd d "o $T/d-3" >/dev/null
spawn k env LD_PRELOAD="$LIB" "$STARTER"
cmd k "o $T/k-1" >/dev/null
listens "$k_pid"
check "another one, started in the session, runs no listener either" [ $? -ne 0 ]
session_cmd stop >/dev/null
quit d
view "$dir" >"$T/d.view"
check "its opens before and after the filter are all in the trace" \
	[ "$(grep -c " $d_pid .*libc:open: path $T/d-[123] " "$T/d.view")" -eq 3 ]
# last_close, then the first open after the filter: times in the view
last_close=$(awk -v pid="$d_pid" '$3 == pid && $5 == "libc:close:" { t = $1 } END { print t }' "$T/d.view")
open2=$(awk -v pid="$d_pid" -v p="$T/d-2" '$3 == pid && $5 == "libc:open:" && $7 == p { print $1 }' "$T/d.view")
check "its close before the filter is recorded, none after it ($last_close < $open2)" \
	python3 -c "import sys; sys.exit(not (0 < float('$last_close') < float('$open2')))"

# ---- tracerd dies while a program records without a listener ---------------

kill_daemon
check "tracerd is killed under a program with no listener, and starts again" \
	start_daemon
dir=$(session_cmd start)
# Its first event since: it hears the hang-up, and hands its pool over
# before going on, so that this event is the new session's too.
cmd k "o $T/k-after-0" >/dev/null
check "at its next event it hands its pool to the new tracerd" \
	[ "$(await_log "pid $k_pid: pool adopted" 1)" -eq 1 ]
n=$(opens_after k "$T/k-after")
quit k
check "that event and the later ones are in the new tracerd's session ($n of 4)" \
	[ "$n" -eq 4 ]

# ---- started while no session records -----------------------------------

# waiting PID: does status list PID among the processes that wait?
waiting() {
	"$TRACECTL" status | sed -n '/^waiting /,$p' | grep -q "^ *$1 starter$"
}

spawn l env LD_PRELOAD="$LIB" "$STARTER" 'an argument' with%percent
check "a program started with no session waits for one (status)" \
	waiting "$l_pid"
check "... alone (tracerd, which maps the page too, is not listed)" \
	[ "$("$TRACECTL" status | sed -n 's/^waiting \([0-9]*\) .*/\1/p')" = 1 ]
check "... and in status --json" \
	bash -c "'$TRACECTL' status --json | python3 -c 'import json, sys; \
		sys.exit(not any(w[\"pid\"] == $l_pid and w[\"name\"] == \"starter\" \
			for w in json.load(sys.stdin)[\"waiting\"]))'"
check "it is not connected: no descriptor of the tracer, tracerd knows nothing of it" \
	bash -c "! ls -l /proc/$l_pid/fd | grep -q 'socket:' &&
		! grep -q 'pid $l_pid' '$LOG'"
"$TRACECTL" list --pid "$l_pid" >"$T/l.list"
check "list --pid lists its events all the same (read from its files)" \
	grep -Eq '^libc:open +1 yes +path \(string\), flags \([a-z ]+\), mode \([a-z ]+\), fd \(int\)' "$T/l.list"
check "... RECORDED as the default filter says (libc:malloc: no)" \
	grep -Eq '^libc:malloc +1 no ' "$T/l.list"
check "... and so does list" \
	bash -c "'$TRACECTL' list | grep -Eq '^libc:open +1 yes '"
# The library's call sites take the default without their names matched
# (WRAP_SITE_QUIET marks those it leaves off); its verbose mode matches
# every name and counts those that differ.
TRACER_VERBOSE=1 LD_PRELOAD="$LIB" /bin/true 2>"$T/true.err"
check "each of the library's call sites is on or off as its name matches the default filter ($(tail -1 "$T/true.err"))" \
	grep -q '^libtracer: default filter in force on the library' "$T/true.err"
listens "$l_pid"
check "it runs no listener thread" [ $? -ne 0 ]
cmd l "o $T/before" >/dev/null
dir=$(session_cmd start --events 'libc:open,tracer:*,proc:*')
r1=$(cmd l "o $T/during-1")
r2=$(cmd l "o $T/during-2")
check "a session starts: the program goes on ($r1 $r2)" \
	[ "$r1 $r2" = "ok ok" ]
check "it is registered now (status lists it among the processes)" \
	bash -c "'$TRACECTL' status | sed '/^waiting /,\$d' | grep -q '^ *$l_pid '"
listens "$l_pid"
check "and still runs no listener thread" [ $? -ne 0 ]
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
check "... naming its executable and the objects it maps (built at its registration)" \
	bash -c "grep -q ' $l_pid .*proc:start: .* exe $(realpath "$STARTER") ' '$T/l.view' &&
		grep -q ' $l_pid .*proc:module: path .*libtracer.so' '$T/l.view'"
check "its arguments, given at its start, are in process.meta" \
	grep -qx "argv $STARTER an%20argument with%25percent" \
		"$dir/starter-$l_pid/tracer/process.meta"

# ---- a module loaded while it waits ---------------------------------------

# 2048 call sites (more than a socket buffer holds) loaded while no
# session records: they go with the registration when one starts.
DLOPENER=./tests/integration/dlopener
DLMOD=$(pwd)/tests/integration/.libs/dlmod.so
spawn m env LD_PRELOAD="$LIB" "$DLOPENER"
r=$(cmd m "d $DLMOD")
check "a waiting program loads a module with 2048 call sites ($r)" [ "$r" = "ok 2048" ]
check "list reads them from the module it maps" \
	[ "$("$TRACECTL" list --pid "$m_pid" | grep -c '^dl:event')" -eq 2048 ]
dir=$(session_cmd start)
r=$(cmd m "d $DLMOD")	# its first events since: it registers
check "a session starts: it goes on ($r)" [ "$r" = "ok 2048" ]
check "it is registered now" \
	bash -c "'$TRACECTL' status | sed '/^waiting /,\$d' | grep -q '^ *$m_pid '"
# The call sites go to tracerd after the registration, through the
# socket's buffer as tracerd reads it: polled until all are there (10 s).
known_sites() { "$TRACECTL" list --pid "$m_pid" | grep -c '^dl:event'; }
deadline=$(($(now_ms) + 10000))
while [ "$(known_sites)" -lt 2048 ] && [ "$(now_ms)" -lt $deadline ]; do
	sleep 0.05	# polling tracerd, not waiting it out
done
n=$(known_sites)
check "tracerd knows all 2048 (list --pid, from tracerd: $n)" [ "$n" -eq 2048 ]
# A second copy of the module: with the library's own call sites, its
# ids pass 4094, the last one a compact record header holds, so that its
# events take the extended header (the event path's fast path leaves
# them to its slow one).
cp "$DLMOD" "$T/dlmod2.so"
r=$(cmd m "d $T/dlmod2.so")
check "a second copy of the module records its 2048 events ($r)" \
	[ "$r" = "ok 2048" ]
session_cmd stop >/dev/null
quit m
"$TRACECTL" view --no-symbols "$dir" > "$T/m.view"
check "the module's events of the session are in the trace" \
	grep -q " $m_pid .*dl:event" "$T/m.view"
n=$(grep -c " $m_pid .*dl:event[0-9]*: module event" "$T/m.view")
check "both copies' events are all there, by name, ids past 4094 too ($n)" \
	[ "$n" -eq 4096 ]

# ---- renamed while it waits -------------------------------------------------

# A waiting program registers under the name its main thread has then
# (as ps shows it), not the one it had at its start.
spawn n env LD_PRELOAD="$LIB" "$STARTER"
r=$(cmd n "n renamed")
check "a waiting program renames its main thread ($r)" [ "$r" = ok ]
dir=$(session_cmd start)
cmd n "o $T/n-1" >/dev/null
session_cmd stop >/dev/null	# after the registration, in tracerd's order
quit n
check "a session starts: it registers under its new name" \
	test -d "$dir/renamed-$n_pid"

# ---- tracerd restarted meanwhile ------------------------------------------

spawn r env LD_PRELOAD="$LIB" "$STARTER"
check "another program starts with no session" waiting "$r_pid"
kill_daemon
check "tracerd is killed and starts again" start_daemon
dir=$(session_cmd start)
# Its first event after the restart: it registers with the new tracerd
# before going on, so that this event is the new session's too.
cmd r "o $T/after-restart-0" >/dev/null
check "at its first event, it registers with the new tracerd" \
	[ "$(await_log "registered pid $r_pid " 1)" -eq 1 ]
n=$(opens_after r "$T/after-restart")
quit r
check "that event and the later ones are in the new tracerd's session ($n of 4)" \
	[ "$n" -eq 4 ]

finish
