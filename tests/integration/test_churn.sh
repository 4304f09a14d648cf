#!/bin/bash
# Thread churn and the pool: 5,000 short-lived threads, 16 alive at a time
# (CHURN_TOTAL, CHURN_ALIVE),
# with tracerd's default settings: every event is in the trace, and
# tracerd's own memory stays flat; the same through the spill (files made
# after the drain, as on a slow file system); a pool that must grow doubles up to its
# memory cap, and every event is either in the trace or counted as lost.
. "$(dirname "$0")/lib.sh"

TOTAL=${CHURN_TOTAL:-5000}	# tests/stress/stress_churn.sh: 100,000
ALIVE=${CHURN_ALIVE:-16}	# and 64
# Small buffers for the growth test: 16 KiB x 4 default channel.
GEOM="--subbuf-size 16K --subbuf-count 4"

# whole_trace VIEW N: the checks of a churn of N threads, each with its 3
# test:churn events, in the trace of session directory $dir viewed in VIEW.
whole_trace() {
	local n files
	awk -v N="$2" '
		/ test:churn: / { seen[$(NF - 2)]++ }
		END {
			for (t = 0; t < N; t++) if (seen[t] != 3) { bad++; if (bad < 5) print "thread " t ": " seen[t] + 0 " events" }
			exit bad != 0
		}' "$1" >"$1.check"
	ok $? "every one of the $2 threads has its 3 events in the trace"
	sed 's/^/# /' "$1.check"
	n=$(grep -c ' tracer:thread_start: ' "$1")
	check "and its start in the vital channel ($n of $(($2 + 1)) with main)" \
		[ "$n" -eq $(($2 + 1)) ]
	n=$(grep -cE ' tracer:lost(_unbuffered)?: ' "$1")
	check "no loss told anywhere ($n)" [ "$n" -eq 0 ]
	files=$(ls "$dir"/*/ | grep -c '^default-')
	check "one channel file per thread ($files), no spill file left" \
		bash -c "[ $files -eq $2 ] && ! ls -A '$dir'/*/ | grep -q spill"
}

# Default settings: the pool grows ahead of the churn (threads ask for it
# when few FREE buffers have room in their rings, and tracerd serves the
# request between packets), whatever tracerd's files cost to create.
check "tracerd starts (default settings)" start_daemon
dir=$(session_cmd start --events "$OWN_EVENTS")
mkfifo "$T/in"
"$TRACEE" churn $TOTAL $ALIVE $((TOTAL / 2)) <"$T/in" >"$T/tracee.out" & pid=$!
exec 3>"$T/in"
timeout 60 tail -f "$T/tracee.out" | grep -q -m1 paused
rss_half=$(awk '/^RssAnon/ { print $2 }' "/proc/$DPID/status")
echo go >&3
exec 3>&-
wait $pid
check "the churning program exits 0" [ $? -eq 0 ]
status=$("$TRACECTL" status)
rss_end=$(awk '/^RssAnon/ { print $2 }' "/proc/$DPID/status")
session_cmd stop >/dev/null

echo "# tracerd RssAnon: ${rss_half} KiB after $((TOTAL / 2)) threads, ${rss_end} KiB after $TOTAL"
# Under AddressSanitizer, RSS counts its shadow memory and its allocator's
# quarantine and caches: tracerd grew 0.1-6 MiB there, where the plain
# build stays within a page (leaks are LeakSanitizer's, at tracerd's exit).
if under_asan; then
	ok 0 "# SKIP tracerd's memory: RSS under AddressSanitizer is its own"
else
	check "tracerd's memory stays flat (grew $((rss_end - rss_half)) KiB)" \
		[ $((rss_end - rss_half)) -lt 1024 ]
fi

"$TRACECTL" view "$dir" >"$T/view"
whole_trace "$T/view" "$TOTAL"
# Twice as many files as threads; view holds a few open at a time.
(ulimit -n 64 && exec "$TRACECTL" view "$dir") >"$T/view64" 2>"$T/view64.err"
check "view allowed 64 descriptors: the same trace, no error ($(head -c 200 "$T/view64.err"))" \
	bash -c "cmp -s '$T/view' '$T/view64' && ! [ -s '$T/view64.err' ]"

# A burst: 64 threads alive at once, each recording its 10 events at once,
# in a pool of 11 buffers that tracerd has not grown yet: the threads that
# find no free buffer keep their events (libtracer's stash) and write them
# out when a buffer is free, or another thread does after they ended.
dir=$(session_cmd start --events "$OWN_EVENTS")
"$TRACEE" burst 64 >"$T/burst.out"
check "the bursting program exits 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
"$TRACECTL" view "$dir" >"$T/burst.view"
n=$(grep -c ' test:burst: ' "$T/burst.view")
check "all 640 events of the burst are in the trace ($n)" [ "$n" -eq 640 ]
burst_ok() {
	awk '/ test:burst: / { if ($NF != next_of[$(NF - 2)]++) bad++ }
	     / tracer:thread_start: / { starts++ }
	     END { exit bad || starts != 65 }' "$T/burst.view"
}
check "each thread's events in order, 65 thread starts" burst_ok
n=$(grep -cE ' tracer:lost(_unbuffered)?: ' "$T/burst.view")
check "no loss told ($n)" [ "$n" -eq 0 ]

# A backlog of owners: 1,000 threads (8 alive) churn while tracerd is
# stopped, so each buffer's rings hold packets of a hundred owners in a
# row when it goes on; it reads such runs with one pread() and writes the
# packets from that copy, a new file at each owner (sink.c). Every thread
# still has its own files and all its events. Also through the spill
# below.
BACKLOG=1000
churn_stopped() {
	dir=$(session_cmd start --events "$OWN_EVENTS")
	mkfifo "$T/$1.in"
	"$TRACEE" churn $BACKLOG 8 8 <"$T/$1.in" >"$T/$1.out" & pid=$!
	exec 3>"$T/$1.in"
	timeout 60 tail -f "$T/$1.out" | grep -q -m1 paused
	kill -STOP "$DPID"
	echo go >&3
	exec 3>&-
	wait $pid
	check "the program churning while tracerd is stopped exits 0" [ $? -eq 0 ]
	kill -CONT "$DPID"
	session_cmd stop >/dev/null
	"$TRACECTL" view "$dir" >"$T/$1.view"
	whole_trace "$T/$1.view" "$BACKLOG"
}
churn_stopped backlog

# status accounts for every thread that recorded: 200 threads record at
# once and wait, in a pool of 11 buffers at first; those that found none
# keep their events in the process (the stash) until their next event, and
# status counts them on a line of their own.
dir=$(session_cmd start --events "$OWN_EVENTS")
mkfifo "$T/in4"
"$TRACEE" hold 200 <"$T/in4" >"$T/tracee4.out" & pid=$!
exec 3>"$T/in4"
timeout 60 tail -f "$T/tracee4.out" | grep -q -m1 holding
"$TRACECTL" status >"$T/status4"
"$TRACECTL" status --json >"$T/status4.json"
echo go >&3
exec 3>&-
wait $pid
session_cmd stop >/dev/null
listed=$(awk -v pid="$pid" '$1 == pid { on = 1; next }
			     $1 ~ /^[0-9]+$/ { on = 0 }
			     on && $1 == "tid" { n++ } END { print n + 0 }' "$T/status4")
stashed=$(sed -n 's/^ *\([0-9]*\) more thread(s) without a buffer: .*/\1/p' "$T/status4")
echo "# status: $listed threads with a buffer, ${stashed:-0} without"
check "status accounts for all 201 threads that recorded ($listed with a buffer + ${stashed:-0} waiting in the stash)" \
	[ $((listed + ${stashed:-0})) -eq 201 ]
check "status --json counts the same (threads_stashed)" \
	grep -q "\"threads_stashed\": *${stashed:-0}\b" "$T/status4.json"
n=$("$TRACECTL" view "$dir" | grep -c ' test:hold: ')
check "and every one of their 2000 events is in the trace ($n)" [ "$n" -eq 2000 ]

# The same churn through the spill (tracerd(8): TRACERD_SPILL_ALWAYS, the
# path a file system that makes files slowly takes): every thread's files
# are made after the drain, in full; the process's end goes into its main
# thread's vital file through the spill too; the stop is answered only
# once every file is there.
spill_daemon() {
	TRACERD_SPILL_ALWAYS=1 start_daemon
}
SPILLED=2000
stop_daemon
check "tracerd starts, every new thread held back in the spill" spill_daemon
dir=$(session_cmd start --events "$OWN_EVENTS")
"$TRACEE" churn $SPILLED 16 >"$T/tracee3.out"
check "the churning program exits 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
check "tracerd said it held packets back" \
	grep -q 'holding packets back on disk' "$LOG"
"$TRACECTL" view "$dir" >"$T/view3"
whole_trace "$T/view3" "$SPILLED"
check "the process's end is its last event" \
	bash -c "tail -n 1 '$T/view3' | grep -q ' tracer:process_exit: '"
churn_stopped backlog-spill

# The process is gone from status once it exited; its pool was reported
# while alive through the log. Check the pool of a live process instead:
# hold 48 threads at once in a pool that starts at 2 buffers and is capped.
stop_daemon
check "tracerd restarts (2 buffers, cap 6 MiB)" \
	start_daemon $GEOM --buffers 2 --max-memory 6M
dir=$(session_cmd start --events "$OWN_EVENTS")
mkfifo "$T/in2"
"$TRACEE" hold 48 <"$T/in2" >"$T/tracee2.out" & pid=$!
exec 3>"$T/in2"
timeout 60 tail -f "$T/tracee2.out" | grep -q -m1 holding
status=$("$TRACECTL" status)
echo go >&3
exec 3>&-
wait $pid
session_cmd stop >/dev/null
echo "$status" | sed 's/^/# /'
line=$(echo "$status" | awk '$1 == "'$pid'"')
buffers=$(echo "$line" | awk '{ print $3 }')
pool_kib=$(echo "$line" | awk '{ print $5 }')
lost=$(echo "$line" | awk '{ print $7 }')
check "the pool grew past its 3 initial buffers ($buffers)" [ "$buffers" -gt 3 ]
check "the pool stays under its 6 MiB cap (${pool_kib} KiB)" [ "$pool_kib" -le 6144 ]
"$TRACECTL" view "$dir" >"$T/view2"
n=$(grep -c ' test:hold: ' "$T/view2")
# What could not be kept is told in the trace: events dropped without a
# buffer or a stash (tracer:lost, tracer:lost_unbuffered), and the losses
# of the small rings into which the stashes were written out (the loss
# markers of the default channel).
told=$(awk '/ tracer:lost(_unbuffered)?: [0-9]+ events / {
	for (i = 1; i < NF; i++) if ($i ~ /^tracer:lost/) { s += $(i + 1); break } }
	END { print s + 0 }' "$T/view2")
check "recorded ($n) + told as lost in the trace ($told) = the 480 events produced" \
	[ $((n + told)) -eq 480 ]
check "status counted no loss the trace does not tell ($lost <= $told)" \
	[ "$lost" -le "$told" ]

finish
