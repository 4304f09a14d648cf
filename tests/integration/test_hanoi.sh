#!/bin/bash
# The Hanoi demo (examples/hanoi.c): for 1 to 10 disks, the moves that
# `tracectl view` shows from the recording run are, line for line, the
# moves the printing run wrote; the call and recursion events are all
# there; the timing events bracket both runs.
. "$(dirname "$0")/lib.sh"
HANOI=./examples/hanoi

check "tracerd starts" start_daemon
"$HANOI" 1 2 3 4 5 6 7 8 9 10 >"$T/printed" 2>/dev/null
ok $? "hanoi 1..10 prints its moves"
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$HANOI" --quiet 1 2 3 4 5 6 7 8 9 10 \
	>"$T/record.out" 2>"$T/err"
ok $? "tracectl record -- hanoi --quiet 1..10 succeeds"
dir=$(record_dir "$T/err")
"$TRACECTL" view "$dir" >"$T/view" 2>"$T/view.err"
ok $? "tracectl view reads the trace without a problem"

# Split both by disk count: the printing run wrote 2^N - 1 lines for N;
# in the trace, the recording run of N lies between its timing events.
awk '
	/ hanoi:timing: Begin recording Hanoi with / { n = $(NF - 1) }
	/ hanoi:timing: End recording Hanoi with / { n = "" }
	n != "" && / hanoi:(move|call|recurse): / {
		kind = $5; sub(/^hanoi:/, "", kind); sub(/:$/, "", kind)
		line = $0; sub(/^[^:]*:[^:]*: /, "", line)
		print line > (dir "/" kind "." n)
	}' dir="$T" "$T/view"
start=1
for n in $(seq 1 10); do
	count=$(((1 << n) - 1))
	sed -n "${start},$((start + count - 1))p" "$T/printed" >"$T/printed.$n"
	start=$((start + count))
	touch "$T/move.$n" "$T/call.$n" "$T/recurse.$n"
	if cmp -s "$T/printed.$n" "$T/move.$n" &&
	   [ "$(wc -l <"$T/move.$n")" -eq "$count" ]; then
		ok 0 "$n disks: the $count viewed moves equal the printed ones"
	else
		ok 1 "$n disks: the viewed moves equal the printed ones"
		diff "$T/printed.$n" "$T/move.$n" | head -n 5 | sed 's/^/# /'
	fi
	check "$n disks: $count calls, $((count - 1)) recursion events" \
		[ "$(wc -l <"$T/call.$n")" -eq "$count" -a \
		  "$(wc -l <"$T/recurse.$n")" -eq $((count - 1)) ]
done
check "nothing printed after the last size" \
	[ "$(wc -l <"$T/printed")" -eq $((start - 1)) ]
check "4 timing events per size, in order" \
	[ "$(grep -c ' hanoi:timing: ' "$T/view")" -eq 40 ]
check "the first call of 3 disks is formatted with its widths" \
	grep -q ' hanoi:call: n=3, from=LEFT  , to=RIGHT , via=MIDDLE$' \
	"$T/view"
check "hanoi reports both runs' times" \
	[ "$(grep -c 'printing .* us, recording .* us' "$T/err")" -eq 10 ]

finish
