#!/bin/bash
# Two processes traced at once: each has its own pool and its own
# directory, and neither sees the other's events; forty at once cost
# tracerd little memory each.
. "$(dirname "$0")/lib.sh"

check "tracerd starts" start_daemon
dir=$(session_cmd start)

# Both processes alive at once: each pauses halfway until told to go on.
mkfifo "$T/in1" "$T/in2"
"$TRACEE" churn 40 4 20 <"$T/in1" >"$T/out1" & p1=$!
"$TRACEE" churn 60 4 30 <"$T/in2" >"$T/out2" & p2=$!
exec 3>"$T/in1" 4>"$T/in2"
# Wait until both printed "paused" (tail -f follows the files as they grow).
timeout 30 tail -f "$T/out1" | grep -q -m1 paused
timeout 30 tail -f "$T/out2" | grep -q -m1 paused

status=$("$TRACECTL" status)
nproc=$(echo "$status" | sed -n 's/^processes //p')
check "status lists both processes" [ "$nproc" -eq 2 ]
pools=$(echo "$status" | awk '$1 == "'$p1'" || $1 == "'$p2'" { print $3 }' | wc -l)
check "status shows a pool for each" [ "$pools" -eq 2 ]
inodes() { awk '/memfd:tracer-pool/ { print $5 }' "/proc/$1/maps" | sort -u; }
inodes $p1 >"$T/i1"
inodes $p2 >"$T/i2"
check "the two pools are different shared-memory objects" \
	[ -s "$T/i1" ] && [ -s "$T/i2" ] && [ -z "$(comm -12 "$T/i1" "$T/i2")" ]
echo go >&3
echo go >&4
exec 3>&- 4>&-
wait $p1; r1=$?
wait $p2; r2=$?
check "both programs exit 0" [ "$r1" -eq 0 -a "$r2" -eq 0 ]
session_cmd stop >/dev/null

d1=$(ls -d "$dir"/*-$p1)
d2=$(ls -d "$dir"/*-$p2)
check "one directory per process" [ -d "$d1" -a -d "$d2" -a "$d1" != "$d2" ]

n1=$("$TRACECTL" view "$d1" | grep -c ' test:churn: ')
n2=$("$TRACECTL" view "$d2" | grep -c ' test:churn: ')
check "first process: its 120 events only" [ "$n1" -eq 120 ]
check "second process: its 180 events only" [ "$n2" -eq 180 ]
pids=$("$TRACECTL" view "$d1" | awk '{ print $3 }' | sort -u)
check "first directory holds one pid" [ "$pids" = "$p1" ]

# tracerd's memory does not grow with the number of processes it drains:
# 40 processes alive at once, each with 40,000 events (1.3 MB) written
# out, cost tracerd their bookkeeping, not a buffer for their packets each
# (one scratch buffer serves them all; 40 of them were 20 MiB and more).
N=40
rss() { awk '/^RssAnon/ { print $2 }' "/proc/$DPID/status"; }
dir=$(session_cmd start --events "$OWN_EVENTS")
rss0=$(rss)
hold_start $N 40000
rss1=$(rss)
held=$("$TRACECTL" status | awk '$2 == "tracee"' | wc -l)
hold_end
session_cmd stop >/dev/null
check "$N processes alive at once, each wrote its events ($held in status), all exit 0" \
	[ "$held" -eq $N -a "$HOLD_BAD" -eq 0 ]
echo "# tracerd RssAnon: $rss0 KiB before, $rss1 KiB with $N processes drained"
if under_asan; then
	ok 0 "tracerd's memory grew by $((rss1 - rss0)) KiB # SKIP AddressSanitizer's quarantine"
else
	check "tracerd's memory grew by less than 8 MiB ($((rss1 - rss0)) KiB)" \
		[ $((rss1 - rss0)) -lt 8192 ]
fi

finish
