#!/bin/bash
# Streaming to a real lttng-relayd (tracectl start --relay): relayd's copy
# holds exactly the events of the local trace (babeltrace2 on both); a live
# viewer (babeltrace2 --input-format=lttng-live) sees events while the
# program records; relayd killed mid-session and started again: the
# program goes on unaffected, the local trace stays complete, streaming
# resumes in a new relay session, and what could not be streamed within
# the backlog bound is counted (status, log) and told in the relayed trace.
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee

if ! command -v lttng-relayd >/dev/null || ! command -v babeltrace2 >/dev/null
then
	echo "1..0 # SKIP lttng-relayd or babeltrace2 missing (scripts/bootstrap installs lttng-tools and babeltrace2)"
	exit 0
fi

# Three free TCP ports on 127.0.0.1 (taken by nobody when asked).
read -r CP DP LP < <(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
URL=net://127.0.0.1:$CP:$DP
RPID=

# relayd on the private ports (options: $@), writing into $T/relay, its
# log in $T/relayd.log; returns once its control port accepts (polled,
# 10 s at most).
start_relayd() {
	LTTNG_HOME=$T/lttng-home lttng-relayd "$@" -C tcp://127.0.0.1:$CP \
		-D tcp://127.0.0.1:$DP -L tcp://127.0.0.1:$LP -o "$T/relay" \
		>>"$T/relayd.log" 2>&1 &
	RPID=$!
	local deadline=$(($(now_ms) + 10000))
	until (exec 3<>/dev/tcp/127.0.0.1/$CP) 2>/dev/null; do
		[ "$(now_ms)" -lt $deadline ] || return 1
		sleep 0.05	# polling the port, not waiting it out
	done
}

kill_relayd() {
	kill -KILL "$RPID" 2>/dev/null && tail --pid="$RPID" -f /dev/null
	RPID=
}

# The events of a trace as babeltrace2 prints them, without the times
# (the same in both copies, but shown relative to the first event of
# each): one line each, sorted.
events_of() {
	babeltrace2 "$1" 2>"$T/bt.err" | sed 's/^\[[^]]*\] ([^)]*) //' | sort
}

# The seq values of test:burst events in babeltrace2's output of $@.
burst_seqs() {
	for d in "$@"; do babeltrace2 "$d"; done 2>/dev/null |
		sed -n 's/.* test:burst: .*seq = \([0-9]*\).*/\1/p'
}

trap 'kill_relayd; stop_daemon; rm -rf "$T"' INT TERM
HOST=$(hostname)

"$TRACERD" --relay tcp://x --socket "$T/x.sock" >"$T/o" 2>"$T/e"
rc=$?
check "tracerd refuses a bad --relay: one line, exit 2" \
	eval '[ $rc -eq 2 ] && head -n 1 "$T/e" | grep -qxF "tracerd: invalid --relay '"'tcp://x'"': not net://HOST[:CONTROL_PORT[:DATA_PORT]]"'
check "lttng-relayd starts on private ports" start_relayd
check "tracerd starts" start_daemon
"$TRACECTL" start --relay-only >"$T/o" 2>"$T/e"
rc=$?
check "--relay-only without a relay is refused: exit 1, one line" \
	eval '[ $rc -eq 1 ] && [ "$(cat "$T/e")" = "tracectl: --relay-only without a relay" ]'
sed 's/^/# /' "$T/e"

# ---- 1. relayd's copy equals the local trace ----------------------------
dir=$(session_cmd start --relay "$URL" --events "$OWN_EVENTS")
name=$(basename "$dir")
spawn c "$CONTROLEE" burst
cmd c "r 3000" >/dev/null
for i in 1 2 3; do cmd c "w 700" >/dev/null; done	# threads come and go
"$TRACEE" threads 4 5000
check "the threaded program exits 0" [ $? -eq 0 ]
quit c
session_cmd stop >/dev/null
check "the relay finishes once the session stopped" \
	await_line "relay: session streamed to $URL, '$HOST/$name'"
rdir=$T/relay/$HOST/$name
events_of "$dir" >"$T/local.ev"
events_of "$rdir" >"$T/relay.ev"
n=$(grep -c ' test:' "$T/local.ev")
check "the local trace holds the events ($n)" [ "$n" -eq $((3000 + 2100 + 20000)) ]
check "relayd's copy holds exactly the local trace's events" \
	cmp -s "$T/local.ev" "$T/relay.ev"
diff "$T/local.ev" "$T/relay.ev" | head -n 5 | sed 's/^/# /'
ntr=$(ls -d "$rdir"/*/ | wc -l)
check "one trace per process on relayd's side ($ntr)" [ "$ntr" -eq 2 ]
check "every relayed stream has its index" \
	eval '[ "$(ls "$rdir"/*/index/*.idx | wc -l)" -eq "$(ls "$rdir"/*/ | grep -c -e "^default-" -e "^vital-")" ]'

# ---- 2. a live viewer sees the events as they are recorded --------------
# The viewer attaches while the program's only stream is its vital one
# (the process's start): its events then go to a stream published after
# the viewer attached, which relayd tells a viewer of only with a packet
# of a stream it knows (tracer sends idle streams an empty one). relayd
# logs (-v) when the viewer attaches.
kill_relayd
check "lttng-relayd starts again, logging its viewers" start_relayd -v
dir=$(session_cmd start --relay "$URL" --events "$OWN_EVENTS" \
	--live-interval 100)
name=$(basename "$dir")
spawn c "$CONTROLEE" burst
check "the live session streams" \
	[ "$(await_log "relay: streaming to" 2)" -ge 2 ]
for i in $(seq 200); do		# the vital stream's first packet
	"$TRACECTL" status --json >"$T/st.json"
	grep -q '"packets_sent": [1-9]' "$T/st.json" && break
	sleep 0.05	# polling status, not waiting it out
done
timeout 60 babeltrace2 --input-format=lttng-live \
	"net://127.0.0.1:$LP/host/$HOST/$name" \
	--params='session-not-found-action="end"' >"$T/live.out" 2>"$T/live.err" &
vpid=$!
LOG=$T/relayd.log await_line "Attach session ID"
check "the viewer attached before the program's events had a stream" \
	eval '! ls "$dir"/controlee-*/default-* >/dev/null 2>&1 &&
	      grep -q "Attach session ID" "$T/relayd.log"'
# Record until the viewer shows some (bounded), as a program would go on
# recording anyway; then one round more, the last.
for i in $(seq 300); do
	cmd c "r 20" >/dev/null
	grep -q ' test:burst: ' "$T/live.out" && break
	sleep 0.1	# the program's pace, not a wait for the viewer
done
check "the live viewer shows events while the program records" \
	grep -q ' test:burst: ' "$T/live.out"
last=$(($(cmd c "r 20" | sed 's/^ok //') - 1))
for i in $(seq 300); do
	grep -q " test:burst: .*seq = $last," "$T/live.out" && break
	sleep 0.1	# polling the viewer's output, not waiting it out
done
check "the live viewer shows the newest events (seq $last) before the stop" \
	grep -q " test:burst: .*seq = $last," "$T/live.out"
quit c
session_cmd stop >/dev/null
timeout 30 tail --pid=$vpid -f /dev/null
check "the live viewer ends with the session" eval '! kill -0 $vpid 2>/dev/null'
kill $vpid 2>/dev/null
# (babeltrace2 warns when two streams are idle up to the same time.)
check "the live viewer reports no error" \
	eval '! grep -qE "^ERROR|^[-0-9]+ [:.0-9]+ +[0-9]+ +[0-9]+ [EF] " "$T/live.err"'
sed 's/^/# viewer: /' "$T/live.err" | head -n 5

# ---- 3. relayd killed mid-session, started again --------------------------
stop_daemon
check "tracerd starts with a 1 MiB backlog bound" \
	start_daemon --relay "$URL" --relay-backlog 1M
dir=$(session_cmd start --events "$OWN_EVENTS" --live-interval 100)
name=$(basename "$dir")
spawn c "$CONTROLEE" burst
cmd c "r 2000" >/dev/null
# Everything streamed and acknowledged, then relayd dies.
for i in $(seq 200); do
	"$TRACECTL" status --json >"$T/st.json"
	grep -q '"backlog_bytes": 0,' "$T/st.json" &&
		grep -q '"packets_sent": [1-9]' "$T/st.json" && break
	sleep 0.05	# polling status, not waiting it out
done
kill_relayd
# 150000 events of 24 bytes: 3.4 MiB, past the 1 MiB backlog bound but
# within the thread's 4 MiB ring, so that the local trace is complete
# however little CPU tracerd gets meanwhile (a burst past the ring is
# discard mode's loss, counted: test_ctf.sh).
t0=$(now_ms)
check "the program records 150000 events while relayd is gone" \
	eval '[ "$(cmd c "r 150000")" = "ok 152000" ]'
elapsed=$(($(now_ms) - t0))
echo "# 150000 events in $elapsed ms without relayd"
check "tracerd counts what could not be streamed" \
	await_line "relay: .* events skipped"
check "lttng-relayd starts again" start_relayd
check "streaming resumes in a new relay session" \
	await_line "relay: streaming to $URL, '$HOST/$name.2'"
cmd c "r 1000" >/dev/null
quit c
check "the program exits 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
check "the second relay session finishes" \
	await_line "relay: session streamed to $URL, '$HOST/$name.2'"
total=$((2000 + 150000 + 1000))
nl=$(burst_seqs "$dir" | sort -un | wc -l)
check "the local trace is complete ($nl of $total)" [ "$nl" -eq $total ]
skipped=$(sed -n "s/.*'$HOST\/$name.2': .*, \([0-9]*\) events skipped/\1/p" "$LOG")
nr=$(burst_seqs "$T/relay/$HOST/$name" "$T/relay/$HOST/$name.2" | sort -un | wc -l)
check "the relay sessions hold every event but the ${skipped:-?} skipped ($nr)" \
	eval '[ "${skipped:-0}" -gt 0 ] && [ $((nr + skipped)) -eq $total ]'
told=$(babeltrace2 "$T/relay/$HOST/$name.2" 2>&1 >/dev/null |
	sed -n 's/.*[Tt]racer discarded \([0-9]*\) events.*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
check "the relayed trace tells the skipped events ($told)" \
	[ "$told" -eq "$skipped" ]

# ---- 4. --relay-only, threads coming and going -----------------------------
stop_daemon
check "tracerd starts with its defaults" start_daemon
dir=$(session_cmd start --relay "$URL" --relay-only --events "$OWN_EVENTS")
name=$(basename "$dir")
mkfifo "$T/churn.in"
"$TRACEE" churn 3000 16 2900 <"$T/churn.in" >"$T/churn.out" &
cpid=$!
exec {cf}>"$T/churn.in"
timeout 60 tail -f "$T/churn.out" | grep -q -m1 paused
# 2900 threads have ended: once what they wrote is streamed and
# acknowledged, tracerd holds no descriptor of theirs (polled, 10 s).
for i in $(seq 200); do
	nfd=$(ls "/proc/$DPID/fd" | wc -l)
	[ "$nfd" -lt 200 ] && break
	sleep 0.05	# polling its descriptors, not waiting it out
done
check "tracerd keeps no descriptor per ended thread ($nfd open, 2900 threads gone)" \
	[ "$nfd" -lt 200 ]
echo go >&$cf
exec {cf}>&-
wait $cpid
check "the churning program exits 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
check "the relay-only session is streamed" \
	await_line "relay: session streamed to $URL, '$HOST/$name'"
nloc=$(find "$dir" -type f | wc -l)
check "no local copy is left ($nloc files)" [ "$nloc" -eq 0 ]
nrel=$(babeltrace2 "$T/relay/$HOST/$name" 2>/dev/null | grep -c ' test:churn: ')
check "relayd's copy holds every event of the 3000 threads ($nrel)" \
	[ "$nrel" -eq 9000 ]

# ---- 5. flight mode: each snapshot, and what the stop writes ---------------
dir=$(session_cmd start --mode flight --relay "$URL" --events "$OWN_EVENTS")
name=$(basename "$dir")
spawn c "$CONTROLEE" burst
cmd c "r 500" >/dev/null
snap=$("$TRACECTL" snapshot | tail -n 1)
check "the snapshot is streamed as a relay session of its own" \
	await_line "relay: session streamed to $URL, '$HOST/$name-snapshot-1'"
events_of "$snap" >"$T/snap.ev"
events_of "$T/relay/$HOST/$name-snapshot-1" >"$T/rsnap.ev"
check "relayd's copy of the snapshot holds its events ($(grep -c ' test:burst: ' "$T/snap.ev"))" \
	eval '[ "$(grep -c " test:burst: " "$T/snap.ev")" -eq 500 ] && cmp -s "$T/snap.ev" "$T/rsnap.ev"'
cmd c "r 500" >/dev/null
quit c
session_cmd stop >/dev/null
check "what the stop wrote is streamed" \
	await_line "relay: session streamed to $URL, '$HOST/$name'"
pd=$(basename "$(ls -d "$dir"/controlee-*/ | head -n 1)")
events_of "$dir/$pd" >"$T/fl.ev"
events_of "$T/relay/$HOST/$name/$pd" >"$T/rfl.ev"
check "relayd's copy holds what the stop kept ($(grep -c ' test:burst: ' "$T/fl.ev"))" \
	eval '[ "$(grep -c " test:burst: " "$T/fl.ev")" -eq 1000 ] && cmp -s "$T/fl.ev" "$T/rfl.ev"'

kill_relayd
finish
