#!/bin/bash
# Bad clients: garbage bytes, an oversize frame, another protocol version,
# a message that does not decode, a message a client may not send, and a
# traced process that scribbles over its own shared memory. tracerd tells
# each what is wrong, keeps running, and another process's trace is intact.
. "$(dirname "$0")/lib.sh"

# seq_check DESCRIPTION: the well-behaved process (the session $dir's
# directory that is not the scribbler's, $sp) has its 200000 test:seq
# events. If not, what it has instead, for a failure seen once in CI:
# the directories taken, each thread's count, its repeated sequence
# numbers and where its sequence first breaks, every other event (losses
# among them) and what view said on its standard error.
seq_check() {
	local good n

	good=$(ls -d "$dir"/*/ | grep -v -- "-$sp/$")
	"$TRACECTL" view $good >"$T/good.view" 2>"$T/good.err"
	n=$(grep -c ' test:seq: ' "$T/good.view")
	check "$1 (200000 events, $n)" [ "$n" -eq 200000 ]
	[ "$n" -eq 200000 ] && return
	echo "# directories:" $good
	awk '/ test:seq: / { t = $(NF - 2); s = $NF; n[t]++
			if ((t, s) in seen) dup[t]++
			seen[t, s] = 1
			if (!(t in gap) && s != next_seq[t] + 0)
				gap[t] = "expected " next_seq[t] + 0 ", got " s
			next_seq[t] = s + 1 }
		END { for (t in n) print "# thread " t ": " n[t] " events, " \
			dup[t] + 0 " repeated, first break: " \
			(t in gap ? gap[t] : "none") }' "$T/good.view"
	grep -v ' test:seq: ' "$T/good.view" | sed 's/^/# /'
	sed 's/^/# view: /' "$T/good.err"
}

check "tracerd starts" start_daemon
dir=$(session_cmd start)

for case in garbage oversize version undecodable unexpected; do
	out=$("$WIRE_CLIENT" "$TRACER_SOCKET" $case 2>&1); rc=$?
	ok $([ $rc -eq 0 ] && echo "$out" | grep -q '^disconnected$'; echo $?) \
		"$case: an error reply, then disconnected"
	echo "$out" | sed 's/^/# /'
done
check "garbage: the error says it is not a tracer frame" \
	grep -q "not a tracer frame (bad magic); disconnecting" "$LOG"
check "oversize: the error names the size limit" \
	grep -q "frame larger than 1 MiB; disconnecting" "$LOG"
check "version: the error names the protocol version" \
	grep -q "unsupported protocol version; disconnecting" "$LOG"
check "undecodable: the error says so" \
	grep -q "message does not decode; disconnecting" "$LOG"
"$TRACECTL" status >/dev/null
ok $? "tracerd still answers"

# A scribbler and a well-behaved process at the same time.
"$TRACEE" scribble >"$T/scribble.out" & sp=$!
"$TRACEE" threads 4 50000; rc=$?
wait $sp; src=$?
check "the well-behaved process exits 0" [ $rc -eq 0 ]
check "the scribbler found its shared memory and survived" \
	[ $src -eq 0 ] && grep -q scribbled "$T/scribble.out"
"$TRACECTL" status >/dev/null
ok $? "tracerd survives the scribbler"
session_cmd stop >/dev/null

seq_check "the other process's trace is intact"
check "tracerd reported the corrupt buffers of the scribbler" \
	grep -q "pid $sp buffer [0-9]* .* channel: " "$LOG"
grep "pid $sp" "$LOG" | head -n 3 | sed 's/^/# /'

# The same at once: the segment a process made at its start (libtracer
# records before tracerd answers) scribbled, most often before tracerd
# took it in: tracerd refuses it in one line (or, when it was quicker,
# reports the damaged buffers as above) and goes on; the other process's
# trace is whole.
dir=$(session_cmd start)
"$TRACEE" scribble-early >"$T/early.out" & sp=$!
"$TRACEE" threads 4 50000; rc=$?
wait $sp; src=$?
both_exit_0() { [ "$rc" -eq 0 ] && [ "$src" -eq 0 ]; }
check "scribbled early: both processes exit 0 ($rc, $src)" both_exit_0
"$TRACECTL" status >/dev/null
ok $? "tracerd survives the early scribbler"
check "tracerd refused its pool in one line, or reported its damage" \
	grep -qE "pid $sp(: pool segment 0 refused: | buffer [0-9]* .* channel: )" "$LOG"
session_cmd stop >/dev/null
seq_check "scribbled early: the other process's trace is intact"

finish
