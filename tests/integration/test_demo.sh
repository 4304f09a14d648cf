#!/bin/bash
# The README's demo (scripts/demo) records the two Hanoi threads: 7 + 15
# moves, in two per-thread files. Also: tracerd's option errors.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

"$top/scripts/demo" . "$T/demo" >"$T/demo.out" 2>&1
ok $? "scripts/demo runs"
dir=$(ls -d "$T"/demo/session-*)
moves=$("$TRACECTL" view "$dir" | grep -c ' hanoi:move: ')
check "the demo trace holds the 22 moves" [ "$moves" -eq 22 ]
check "one file per solving thread" [ "$(ls "$dir"/*/ | grep -c '^default-')" -eq 2 ]
check "the demo says so" grep -q "events from 2 threads in $dir" "$T/demo.out"

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
