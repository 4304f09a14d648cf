#!/bin/bash
# tracectl view --follow: the events already written, then new ones as the
# program records them, each once, in time order, while the session runs;
# the same lines a later `tracectl view` prints. Mistakes: --lag without
# --follow, a directory that is not there.
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee

check "tracerd starts" start_daemon
dir=$(session_cmd start --events "$OWN_EVENTS" --live-interval 100)
spawn c "$CONTROLEE" burst
cmd c "r 5" >/dev/null
"$TRACECTL" view --follow --lag 500 "$dir" >"$T/follow.out" \
	2>"$T/follow.err" &
fpid=$!
# Record in rounds while it follows; after each, until it has printed
# the round's last event (polled, 10 s at most a round).
n=5 bad=0
for round in 1 2 3 4 5; do
	cmd c "r 100" >/dev/null
	n=$((n + 100))
	for i in $(seq 200); do
		grep -q " test:burst: seq $((n - 1)) " "$T/follow.out" && break
		sleep 0.05	# polling its output, not waiting it out
	done
	grep -q " test:burst: seq $((n - 1)) " "$T/follow.out" || bad=$((bad + 1))
done
check "view --follow prints each round of events while the program runs" \
	[ "$bad" -eq 0 ]
check "view --follow is still running" kill -0 $fpid
quit c
session_cmd stop >/dev/null
kill $fpid
wait $fpid 2>/dev/null
grep ' test:burst: ' "$T/follow.out" >"$T/f.burst"
awk '{ s = $7 + 0; if (s != NR - 1) { bad++; if (bad < 5) print "line " NR ": seq " s } }
	END { exit bad != 0 }' "$T/f.burst" >"$T/f.check"
check "every event once, in order ($(wc -l <"$T/f.burst") of $n)" \
	eval '[ $? -eq 0 ] && [ "$(wc -l <"$T/f.burst")" -eq $n ]'
sed 's/^/# /' "$T/f.check" | head -n 5
"$TRACECTL" view "$dir" | grep ' test:burst: ' >"$T/v.burst"
check "the same lines as view prints afterwards" cmp -s "$T/f.burst" "$T/v.burst"
check "nothing on its error stream" [ ! -s "$T/follow.err" ]
sed 's/^/# /' "$T/follow.err" | head -n 3

"$TRACECTL" view "$dir" --lag 100 >"$T/o" 2>"$T/e"
rc=$?
check "--lag without --follow: usage error, exit 2" \
	eval '[ $rc -eq 2 ] && [ "$(head -n 1 "$T/e")" = "tracectl: view: --lag without --follow (see '"'tracectl view --help'"')" ]'
sed 's/^/# /' "$T/e" | head -n 2
"$TRACECTL" view "$dir" --follow --since +1s >"$T/o" 2>"$T/e"
rc=$?
check "--follow with --since +TIME: usage error, exit 2" \
	eval '[ $rc -eq 2 ] && [ "$(head -n 1 "$T/e")" = "tracectl: view: --follow takes --since and --until as times, not +TIME (see '"'tracectl view --help'"')" ]'
sed 's/^/# /' "$T/e" | head -n 2
timeout 10 "$TRACECTL" view --follow "$T/nowhere" >"$T/o" 2>"$T/e"
rc=$?
check "--follow on a missing directory: exit 1 at once, one line" \
	eval '[ $rc -eq 1 ] && [ "$(wc -l <"$T/e")" -eq 1 ]'
sed 's/^/# /' "$T/e" | head -n 2

finish
