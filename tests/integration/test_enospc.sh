#!/bin/bash
# The output file system fills up (a small tmpfs): tracerd says so once,
# keeps serving, counts what it cannot write as lost (status and the trace),
# leaves no half-written packet, and writes again once there is room.

# A private mount namespace for the tmpfs: as root, or as a user in a user
# namespace of its own.
if [ -z "$TRACER_TEST_MOUNTNS" ]; then
	if [ "$(id -u)" -eq 0 ]; then ns=(unshare -m --propagation private)
	else ns=(unshare -rm --propagation private); fi
	if "${ns[@]}" true 2>/dev/null; then
		TRACER_TEST_MOUNTNS=1 exec "${ns[@]}" "$BASH" "$0" "$@"
	fi
	echo "1..0 # SKIP no private mount namespace (${ns[*]} failed)"
	exit 0
fi

. "$(dirname "$0")/lib.sh"
CHECK="python3 $(dirname "$0")/ctf_check.py"
CONTROLEE=./tests/integration/controlee

OUT=$T/small
mkdir -p "$OUT"
if ! mount -t tmpfs -o size=6m tracer-test "$OUT" 2>"$T/mount.err"; then
	echo "1..0 # SKIP cannot mount a tmpfs: $(head -n 1 "$T/mount.err")"
	rm -rf "$T"
	exit 0
fi

"$TRACERD" --socket "$TRACER_SOCKET" --output "$OUT" --log "$LOG" \
	--daemonize || exit 1
DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')
check "tracerd starts, writing to a 6 MiB tmpfs" [ -n "$DPID" ]

# Only the program's numbered events: the counts below are of them (its
# stdio calls, recorded by default, would be lost with them).
dir=$(session_cmd start --events 'test:*')
spawn prog "$CONTROLEE" burst
produced=0

# record N: the program records N numbered events, and they are written
# out (or found unwritable) before it returns.
record() {
	local r
	r=$(cmd prog "r $1") && produced=$((produced + $1)) &&
	[ "$r" = "ok $produced" ] && "$TRACECTL" switch >/dev/null
}

full_lines() { grep -c "cannot write to '$dir/" "$LOG"; }
again_lines() { grep -c "writing to '$dir/[^']*' again" "$LOG"; }

# Until the file system is full (a bound: 100 x 400 KB is well past 6 MiB).
for i in $(seq 1 100); do
	record 10000 || break
	[ "$(full_lines)" -ge 1 ] && break
done
check "tracerd logs that it cannot write, naming the directory" \
	grep -q "cannot write to '$dir/[^']*': No space left on device" "$LOG"
for i in 1 2 3; do record 10000; done

status=$("$TRACECTL" status --json); rc=$?
lost_status() {
	python3 -c '
import json, sys
s = json.loads(sys.argv[1])
p = [p for p in s["processes"] if p["pid"] == int(sys.argv[2])][0]
t = sum(t.get("events_lost", 0) for t in p.get("threads", []))
print(p.get("events_lost_session", 0), t)' "$1" "$prog_pid"
}
read -r plost tlost <<<"$(lost_status "$status")"
ok $([ $rc -eq 0 ] && [ "${plost:-0}" -gt 0 ] && [ "${tlost:-0}" -eq "$plost" ]; echo $?) \
	"tracerd still answers; status counts $plost events lost, all the thread's"
check "the full disk is logged once" [ "$(full_lines)" -eq 1 ]

"$TRACECTL" view "$dir" >"$T/view1.out" 2>"$T/view1.err"; rc=$?
rec1=$(grep -c ' test:burst: ' "$T/view1.out")
ok $([ $rc -eq 0 ] && [ ! -s "$T/view1.err" ] && [ "$rec1" -gt 0 ] &&
     [ $((rec1 + plost)) -eq $produced ]; echo $?) \
	"the trace reads without error while full: $rec1 recorded + $plost lost == $produced produced"

# Not a byte left: a program that starts now cannot have its directory
# and metadata; its events are counted as lost until there is room.
dd if=/dev/zero of="$OUT/filler" bs=64k >/dev/null 2>&1
spawn prog2 "$CONTROLEE" burst
r=$(cmd prog2 "r 1000"); "$TRACECTL" switch >/dev/null
lost2=$("$TRACECTL" status --json | python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin)["processes"] if p["pid"] == int(sys.argv[1])]
print(p[0]["events_lost_session"] if p else -1)' "$prog2_pid")
ok $([ "$r" = "ok 1000" ] && [ "$lost2" -ge 1000 ]; echo $?) \
	"a program started on the full disk runs; its $lost2 events are counted as lost"
check "still one full-disk line" [ "$(full_lines)" -eq 1 ]

# Room again: the events recorded from now on are written, and the second
# program gets its directory.
mount -o remount,size=64m "$OUT"
for i in 1 2; do record 10000; done
for i in $(seq 1 100); do
	[ -s "$dir/controlee-$prog2_pid/metadata" ] && break
	sleep 0.05
done
r=$(cmd prog2 "r 1000")
check "the second program's directory is written once there is room" \
	[ -s "$dir/controlee-$prog2_pid/metadata" ]
check "tracerd logs once that it writes again" [ "$(again_lines)" -eq 1 ]
check "still only one full-disk line" [ "$(full_lines)" -eq 1 ]

status=$("$TRACECTL" status --json)
read -r plost tlost <<<"$(lost_status "$status")"
quit prog
quit prog2
session_cmd stop >/dev/null

"$TRACECTL" view "$dir" >"$T/view2.out" 2>"$T/view2.err"; rc=$?
rec=$(awk -v pid="$prog_pid" '$3 == pid && $5 == "test:burst:"' "$T/view2.out" | wc -l)
vlost=$(awk -v pid="$prog_pid" '$3 == pid && $5 == "tracer:lost:" && /default channel/ { n += $6 }
	END { print n + 0 }' "$T/view2.out")
last=$(awk -v pid="$prog_pid" '$3 == pid && $5 == "test:burst:" { s = $7 } END { print s }' "$T/view2.out")
ok $([ $rc -eq 0 ] && [ ! -s "$T/view2.err" ] && [ "$last" -eq $((produced - 1)) ] &&
     [ $((rec + vlost)) -eq $produced ] && [ "$vlost" -eq "$plost" ]; echo $?) \
	"view: $rec recorded + $vlost lost (its tracer:lost lines; status: $plost) == $produced, the last one written"

awk -v pid="$prog2_pid" '$3 == pid && $5 == "test:burst:" { r++ }
	$3 == pid && $5 == "tracer:lost:" && /default channel/ { l += $6 }
	END { print r + 0, l + 0 }' "$T/view2.out" >"$T/prog2.counts"
read -r rec2 vlost2 <"$T/prog2.counts"
ok $([ "$rec2" -eq 1000 ] && [ "$vlost2" -eq 1000 ]; echo $?) \
	"the second program: $rec2 recorded, $vlost2 told lost in its trace"

pdir=$(ls -d "$dir"/*-"$prog_pid")
$CHECK counters "$pdir" "$plost" >"$T/counters.out" 2>"$T/counters.err"
ok $? "channel files: whole packets, packet_seq_num without gaps, events_discarded sum to the losses"
sed 's/^/# /' "$T/counters.err"

if command -v babeltrace2 >/dev/null; then
	babeltrace2 "$pdir" >"$T/bt.out" 2>"$T/bt.err"; rc=$?
	disc=$($CHECK discarded "$T/bt.err")
	ok $([ $rc -eq 0 ] && [ "$disc" = "$plost" ]; echo $?) \
		"babeltrace2 reads the trace and reports $disc discarded events"
	babeltrace2 "$dir" >/dev/null 2>"$T/bt-all.err"; rc=$?
	ok $rc "babeltrace2 reads the whole session, the late directory too"
else
	echo "ok $((tap_n += 1)) # SKIP babeltrace2 is not installed"
fi

grep -E "cannot write to|writing to .* again" "$LOG" | sed 's/^/# /'
stop_daemon
umount "$OUT"
finish
