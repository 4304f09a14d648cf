#!/bin/bash
# Losses are told exactly, where they happened: a program records numbered
# events while its buffer cannot keep them all, and the trace says, at
# each gap in the numbers and nowhere else, how many events are missing
# there. Discard mode (tracerd stopped while the ring fills: the newest
# are dropped) and flight mode (small rings: the oldest are overwritten,
# all before the oldest kept). tracerd and the sessions run with their
# default settings.
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee

# told DIR PRODUCED [FROM]: walks the session's test:burst numbers (FROM,
# 0 by default, to PRODUCED - 1) and
# tracer:lost markers; passes when every gap (before the first kept event
# too, and after the last one) is told by markers right there, with its
# exact size, and no marker is anywhere else. Prints what it found.
told() {
	"$TRACECTL" view "$1" 2>/dev/null | python3 -c '
import re, sys
produced = int(sys.argv[1])
expect = int(sys.argv[2])
pending = markers = total = kept = 0
bad = []
for line in sys.stdin:
    m = re.search(r" tracer:lost: (\d+) events? lost in the default ", line)
    if m:
        pending += int(m.group(1)); markers += 1; total += int(m.group(1))
        continue
    m = re.search(r" test:burst: seq (\d+) ", line)
    if not m:
        continue
    s = int(m.group(1))
    if s - expect != pending:
        bad.append("before %d: %d missing, %d told" % (s, s - expect, pending))
    pending = 0; expect = s + 1; kept += 1
if produced - expect != pending:
    bad.append("at the end: %d missing, %d told" % (produced - expect, pending))
print("# %d kept, %d told lost in %d marker(s)%s" % (kept, total, markers,
      "".join("; " + b for b in bad[:3])))
sys.exit(1 if bad or kept + total != produced - int(sys.argv[2]) else 0)
' "$2" "${3:-0}"
}

# bt_discarded DIR: the events babeltrace2 says were discarded in DIR.
bt_discarded() {
	local d
	for d in "$1"/controlee-*/; do
		babeltrace2 "$d" 2>&1 >/dev/null
	done | python3 "$(dirname "$0")/ctf_check.py" discarded /dev/stdin
}

check "tracerd starts" start_daemon

# ---- discard: the newest dropped while tracerd is stopped ----------------
# Each session records only the program's numbered events (test:*): the
# losses counted are of them (its stdio calls would be lost with them).

dir=$(session_cmd start --events 'test:*')
spawn ctl "$CONTROLEE" burst
cmd ctl "r 10" >/dev/null
kill -STOP "$DPID"
r=$(cmd ctl "r 200000")	# 4.8 MB: more than the 4 MiB ring
kill -CONT "$DPID"
"$TRACECTL" switch >/dev/null	# drained: room again
r2=$(cmd ctl "r 1000")
check "discard: the program recorded on without blocking ($r, $r2)" \
	[ "$r $r2" = "ok 200010 ok 201010" ]
lost=$("$TRACECTL" status --json | python3 -c '
import json, sys
print(sum(p["events_lost"] for p in json.load(sys.stdin)["processes"]))')
quit ctl
session_cmd stop >/dev/null
out=$(told "$dir" 201010)
check "discard: every gap told right there, with its size; nothing else" \
	told "$dir" 201010
n=$(echo "$out" | sed -n 's/^# [0-9]* kept, \([0-9]*\) told.*/\1/p')
check "discard: status counted the same losses ($lost, told $n)" \
	[ "$lost:$((n > 0))" = "$n:1" ]
if command -v babeltrace2 >/dev/null; then
	b=$(bt_discarded "$dir")
	check "discard: babeltrace2 counts the same ($b)" [ "$b" = "$n" ]
else
	ok 0 "# SKIP babeltrace2 is not installed (scripts/bootstrap)"
fi

# ---- restart: lost while no tracerd ran, told by the next one --------------

dir=$(session_cmd start --events 'test:*')
spawn rs "$CONTROLEE" burst
cmd rs "r 10" >/dev/null
"$TRACECTL" switch >/dev/null	# the 10 written out by this tracerd
kill_daemon
r=$(cmd rs "r 200000")	# no tracerd: more than the ring holds
check "restart: tracerd killed, the program records on ($r)" \
	[ "$r" = "ok 200010" ]
check "restart: tracerd starts again" start_daemon
dir=$(session_cmd start --events 'test:*')
deadline=$(($(now_ms) + 10000))
while ! grep -q "pid $rs_pid: pool adopted" "$LOG" &&
      [ "$(now_ms)" -lt $deadline ]; do
	cmd rs "r 0" >/dev/null	# its events see the hang-up
	sleep 0.02	# polling the log, not waiting it out
done
"$TRACECTL" switch >/dev/null
r=$(cmd rs "r 1000")
quit rs
session_cmd stop >/dev/null
check "restart: the losses of the time no tracerd ran are told, at the gap" \
	told "$dir" 201010 10

# ---- flight: the oldest overwritten, all before the oldest kept ----------

dir=$(session_cmd start --mode flight --events 'test:*')
spawn fl "$CONTROLEE" burst
r=$(cmd fl "r 400000")	# 9.6 MB: the 4 MiB ring goes round twice
status_counts() {
	"$TRACECTL" status --json | python3 -c '
import json, sys
ps = json.load(sys.stdin)["processes"]
print(sum(p["events_written"] for p in ps), sum(p["events_lost"] for p in ps))'
}
read -r written lost <<<"$(status_counts)"
quit fl
session_cmd stop >/dev/null
out=$(told "$dir" 400000)
check "flight: the losses are told before the oldest kept event, once" \
	told "$dir" 400000
check "flight: in one marker" \
	bash -c "echo '$out' | grep -q 'in 1 marker(s)'"
n=$(echo "$out" | sed -n 's/^# [0-9]* kept, \([0-9]*\) told.*/\1/p')
kept=$(echo "$out" | sed -n 's/^# \([0-9]*\) kept, .*/\1/p')
check "flight: status counted the overwritten as lost before the end ($lost, told $n)" \
	[ "$lost:$((n > 0))" = "$n:1" ]
check "flight: ... and as written only what the rings held ($written >= kept $kept)" \
	test "$written" -ge "$kept" -a "$((written + lost))" -ge 400000
if command -v babeltrace2 >/dev/null; then
	b=$(bt_discarded "$dir")
	check "flight: babeltrace2 counts the same ($b, told $n)" \
		[ "$b:$((n > 0))" = "$n:1" ]
else
	ok 0 "# SKIP babeltrace2 is not installed (scripts/bootstrap)"
fi

finish
