#!/bin/bash
# The README's demo (scripts/demo) records examples/hanoi with 4 disks and
# shows the 15 recorded moves, which are the 15 printed ones. Also:
# tracerd's option errors.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

"$top/scripts/demo" . "$T/demo" >"$T/demo.out" 2>&1
ok $? "scripts/demo runs"
dir=$(ls -d "$T"/demo/session-*)
"$TRACECTL" view "$dir" --events hanoi:move | sed 's/^.* hanoi:move: //' \
	>"$T/viewed"
grep '^Move disk ' "$T/demo.out" | head -n 15 >"$T/printed"
check "the demo trace holds the 15 moves" [ "$(wc -l <"$T/viewed")" -eq 15 ]
check "the recorded moves are the printed ones" cmp -s "$T/viewed" "$T/printed"
check "the demo shows them" \
	[ "$(grep -c ' hanoi:move: Move disk ' "$T/demo.out")" -eq 15 ]
check "the demo says so" grep -q "15 moves, .* events in $dir" "$T/demo.out"

out=$("$TRACERD" --buffers 0 2>&1); rc=$?
ok $([ $rc -eq 2 ] && [ "$(echo "$out" | head -n 1)" = "tracerd: invalid --buffers '0': expected a number from 1 to 65536" ]; echo $?) \
	"tracerd: an out-of-range option value is named, exit 2"
out=$("$TRACERD" --subbuf-size 12K 2>&1); rc=$?
ok $([ $rc -eq 2 ] && echo "$out" | grep -q "sub-buffer size is not a power of two"; echo $?) \
	"tracerd: a bad geometry is refused before starting"
out=$("$TRACERD" --frob 2>&1); rc=$?
ok $([ $rc -eq 2 ] && echo "$out" | head -n 1 | grep -q "unknown option '--frob'"; echo $?) \
	"tracerd: unknown option, exit 2"

finish
