#!/bin/bash
# 8 threads x 100,000 numbered events with the default buffers: every event
# is in the trace exactly once, in its thread's own file, in order.
. "$(dirname "$0")/lib.sh"

THREADS=8
EVENTS=100000

check "tracerd starts" start_daemon
dir=$(session_cmd start)
"$TRACEE" threads $THREADS $EVENTS
check "the traced program exits 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]

# The workers, and the main thread, which records their creation
# (pthread:create) and its exit (proc:exit).
pdir=$(ls -d "$dir"/*/)
nfiles=$(ls "$pdir" | grep -c '^default-')
check "one default channel file per recording thread" \
	[ "$nfiles" -eq $((THREADS + 1)) ]

"$TRACECTL" view "$dir" >"$T/view"
check "view succeeds" [ $? -eq 0 ]

# Per thread index: sequence numbers 0..EVENTS-1, each once, in order, all
# from one tid; and that tid's file holds only that thread's events.
awk -v T=$THREADS -v N=$EVENTS '
	/ test:seq: thread / {
		t = $(NF - 2); s = $NF; tid = $4
		if (s != next_seq[t] + 0) { bad++; if (bad < 5) print "thread " t ": got " s " expected " next_seq[t] + 0 }
		next_seq[t] = s + 1
		if (t in tid_of && tid_of[t] != tid) { bad++; print "thread " t " changed tid" }
		tid_of[t] = tid
		count++
	}
	END {
		for (t = 0; t < T; t++) if (next_seq[t] != N) { bad++; print "thread " t " ends at " next_seq[t] }
		if (count != T * N) { bad++; print "count " count }
		exit bad != 0
	}' "$T/view" >"$T/check.out"
ok $? "all $((THREADS * EVENTS)) events present once, per thread, in order"
sed 's/^/# /' "$T/check.out" | head -n 10

lost=$(grep -c ' tracer:thread_exit: .* lost [1-9]' "$T/view")
check "no thread reports lost events" [ "$lost" -eq 0 ]

# Time order of the merged view.
awk '{ if ($1 < prev) bad++; prev = $1 } END { exit bad != 0 }' "$T/view"
ok $? "view output is in timestamp order"

finish
