#!/bin/bash
# SIGTERM while four threads record flat out in discard mode: when tracerd
# has exited, every record the threads committed is in the channel files or
# counted there as lost, each numbered event once and in order.
. "$(dirname "$0")/lib.sh"

check "tracerd starts" start_daemon
dir=$(session_cmd start)

"$TRACEE" flat 4 >"$T/flat.out" 2>"$T/flat.err" &
tpid=$!

# Wait until all four threads have written something (bounded).
written() {
	"$TRACECTL" status 2>/dev/null | awk -v pid="$tpid" '
		$1 == pid { p = 1; next }
		p && $1 == "tid" && $7 + 0 > 0 { n++ }
		p && $1 != "tid" { p = 0 }
		END { print n + 0 }'
}
for i in $(seq 1 500); do
	[ "$(written)" -ge 4 ] && break
	kill -0 "$tpid" 2>/dev/null || break
done
check "four threads are recording" [ "$(written)" -ge 4 ]

kill -TERM "$DPID"
tail --pid="$DPID" -f /dev/null
DPID=
check "tracerd exited cleanly" grep -q "exited cleanly" "$LOG"

# The threads stop once the control page says the session stopped.
wait "$tpid"; rc=$?
ok $([ $rc -eq 0 ] && [ "$(wc -l <"$T/flat.out")" -eq 4 ]; echo $?) \
	"the program ran to its end and reported its four threads' calls"
[ $rc -eq 0 ] || { echo "# exit status $rc"; sed 's/^/# /' "$T/flat.err"; }

"$TRACECTL" view "$dir" >"$T/view.out"; rc=$?
check "view reads the trace without error" [ "$rc" -eq 0 ]

# Per thread: the sequence numbers only go up, the gaps between them add
# up to no more than the losses the trace reports for the thread (the rest
# were lost after its last record), and recorded + lost is what the
# program committed: its calls, or one less (the last call may have found
# the session stopped).
awk '
	FILENAME ~ /flat.out$/ { calls[$2] = $4; next }
	$5 == "test:flat:" {
		t = $7; s = $9
		if (!(t in tid)) tid[t] = $4
		if ($4 != tid[t]) { print "thread " t " on two tids"; bad = 1 }
		if (s < next_seq[t]) {
			print "thread " t ": seq " s " after " next_seq[t] - 1
			bad = 1
		}
		rec[t]++; next_seq[t] = s + 1
		next
	}
	$5 == "tracer:lost:" && /in the default channel/ { lost[$4] += $6 }
	END {
		for (t in calls) {
			l = lost[tid[t]] + 0; n = rec[t] + l
			gaps = next_seq[t] - rec[t]
			if (rec[t] == 0 || gaps > l ||
			    (n != calls[t] && n != calls[t] - 1)) {
				print "thread " t ": " rec[t] " recorded, " \
				      gaps " missing before the last, " l \
				      " lost, " calls[t] " calls"
				bad = 1
			}
		}
		exit bad
	}' "$T/flat.out" "$T/view.out" >"$T/check.out"; rc=$?
sed 's/^/# /' "$T/check.out" | head -n 20
ok $([ $rc -eq 0 ] && [ -s "$T/flat.out" ]; echo $?) \
	"per thread: numbered events once and in order, recorded + lost == committed"

awk '{ c += $4 } END { print "# " c " calls in all" }' "$T/flat.out"
awk '$5 == "test:flat:" { r++ } $5 == "tracer:lost:" && /default/ { l += $6 }
	END { print "# " r " recorded, " l " lost" }' "$T/view.out"

finish
