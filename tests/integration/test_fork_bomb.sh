#!/bin/bash
# 200 children forked at once, each recording a few numbered events and
# exiting: 200 process directories, each with all its child's events.
. "$(dirname "$0")/lib.sh"
FORKER=./tests/integration/forker

CHILDREN=200
EVENTS=20

check "tracerd starts" start_daemon
dir=$(session_cmd start)
# 200 registrations arrive at once, and tracerd sets up a pool for each
# (about a millisecond each here, more under sanitizers): the children
# wait for theirs longer than the default 100 ms, so that no child runs
# its first events before its registration completes.
TRACER_REGISTER_TIMEOUT_MS=30000 timeout 300 \
	"$FORKER" bomb $CHILDREN $EVENTS >"$T/bomb.out"
check "the program and its $CHILDREN children exit 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
p=$(awk '$1 == "parent" { print $2 }' "$T/bomb.out")
ndirs=$(ls -d "$dir"/forker-* | wc -l)
check "$CHILDREN child directories and the parent's ($ndirs)" \
	[ "$ndirs" -eq $((CHILDREN + 1)) ]

bad=0
for c in $(awk '$1 == "child" { print $2 }' "$T/bomb.out"); do
	"$TRACECTL" view "$dir/forker-$c" | awk -v pid="$c" -v N=$EVENTS '
		$3 != pid { bad++ }
		/ test:bomb: / { if ($7 != pid) bad++
			if ($NF != n) bad++
			n++ }
		END { if (n != N) bad++; exit bad != 0 }' ||
		{ bad=$((bad + 1)); echo "# child $c: events missing or foreign"; }
	grep -q "^ppid $p\$" "$dir/forker-$c/tracer/process.meta" 2>/dev/null ||
		{ bad=$((bad + 1)); echo "# child $c: ppid not $p"; }
done
check "every child: its $EVENTS numbered events, in order, and its ppid" \
	[ $bad -eq 0 -a "$(grep -c '^child ' "$T/bomb.out")" -eq $CHILDREN ]
n=$("$TRACECTL" view "$dir/forker-$p" | grep -c ' test:bomb: ')
check "none of them in the parent's directory" [ "$n" -eq 0 ]

finish
