#!/bin/bash
# bench_drain.sh - libtracer and tracerd benchmarks with the real library
# and a private tracerd (bench/bench_tracer.c has the details):
#
#   first   cost of a thread's first event (taking a buffer from the pool)
#           against its later events
#   record  ns per tracer_record() with two int arguments, 1 and 2
#           threads, in a session while tracerd drains; with no session;
#           and with libtracer not registered (no tracerd); against the
#           floor (clock read + 32-byte store)
#   drain   tracerd's drain rate: 1 and 2 writers flat out, then paced,
#           DRAIN_SECONDS each; what tracerd wrote and what was lost
#   backlog tracerd alone: one writer records BACKLOG_SECONDS into a 1 GiB
#           ring (tracerd --subbuf-count 65536) while tracerd is stopped
#           (SIGSTOP); then tracerd writes it out: bytes over the wall
#           time until status counts them written, and over tracerd's CPU
#           time, next to dd of the same volume (its rate with the
#           writers out of the way: on 2 CPUs they cannot make what it
#           writes with one); until the files hold nearly all, their
#           sizes are polled, not status, which walks the ring's 65,536
#           commit slots
#   churn   thread churn at tracerd's defaults: CHURN cases "TOTAL ALIVE"
#           (default "5000 16" and "100000 64"), threads that record 10
#           events each and exit, ALIVE at a time: thread starts per
#           second, events made and in the trace, thread exits in the
#           trace, the process's peak RSS and tracerd's RSS before and
#           after
#   filter  event filters (bench_tracer disabled and filter-record):
#           - ns per call of a call site the filter disables, in a session
#             started with --events=-bench:off (bench_tracer checks that
#             its `enabled` word is 0), against an empty loop of the same
#             shape;
#           - ns per event of the enabled record (as record, 1 thread,
#             while tracerd drains) under the default filter '*' and under
#             a list of FILTER_PATTERNS patterns (FILTER_PATTERNS - 2 globs
#             that match nothing, nomatch<i>:*, then bench:* and
#             -bench:off), in one process: FILTER_ROUNDS sessions, each
#             started with one filter (alternately) and switched to the
#             other by `tracectl filter`, a phase under each; bench_tracer
#             checks before and after each phase that bench:off is as the
#             filter says;
#           - ms that `tracectl filter` takes end to end (it returns once
#             the process confirmed) to switch that process, idle in a
#             session of its own, to the long list and back to '*':
#             best and median of FILTER_APPLIES switches each way
#
# Run from the build directory, after make (or after building
# bench/bench_tracer by hand, see bench/bench.am):
#
#   cd build && ../bench/bench_drain.sh [first] [record] [drain] [backlog]
#        [churn] [filter]
#
# No argument runs all six (about a minute on 2 CPUs). Settings from the
# environment: EVENTS (10000000), IDLE_EVENTS (20000000), RUNS (3),
# FIRST_THREADS (300), DRAIN_SECONDS (2), BACKLOG_SECONDS (0.8),
# PACED_MBPS (50; a list such as
# "50 200" adds a pair of paced rows per rate), FILTER_PATTERNS (1000),
# FILTER_APPLIES (5), FILTER_ROUNDS (4: sessions, each with a record
# phase under each filter), CHURN ("5000 16 100000 64": pairs TOTAL
# ALIVE), TRACERD (the tracerd to run: A/B of two builds). TMPDIR picks
# the file system tracerd writes to
# (default /tmp). Measures and prints; fails only when something does not
# run (or a call site is not in the state a filter row says).

. "$(dirname "$0")/bench_lib.sh"

TRACERD=${TRACERD:-./tracerd/tracerd}
TRACECTL=./tracectl/tracectl
BENCH=./bench/bench_tracer

EVENTS=${EVENTS:-10000000}
IDLE_EVENTS=${IDLE_EVENTS:-20000000}
RUNS=${RUNS:-3}
FIRST_THREADS=${FIRST_THREADS:-300}
DRAIN_SECONDS=${DRAIN_SECONDS:-2}
BACKLOG_SECONDS=${BACKLOG_SECONDS:-0.8}
PACED_MBPS=${PACED_MBPS:-50}
REC=24		# bytes of bench_tracer's record: compact header, two values
FILTER_PATTERNS=${FILTER_PATTERNS:-1000}
FILTER_APPLIES=${FILTER_APPLIES:-5}
FILTER_ROUNDS=${FILTER_ROUNDS:-4}
CHURN=${CHURN:-5000 16 100000 64}

T=
DPID=
BPID=

die() {
	echo "bench_drain.sh: $*" >&2
	if [ -n "$T" ] && [ -s "$T/tracerd.log" ]; then
		echo "tracerd log:" >&2
		sed 's/^/  /' "$T/tracerd.log" >&2
	fi
	exit 1
}

# Stop tracerd with SIGTERM and wait until it has exited.
stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null && tail --pid="$DPID" -f /dev/null
	DPID=
}

cleanup() {
	if [ -n "$BPID" ]; then
		kill "$BPID" 2>/dev/null
		wait "$BPID" 2>/dev/null
	fi
	exec 3>&- 4<&-
	stop_daemon
	[ -n "$T" ] && rm -rf "$T"
}

# Start tracerd in the background (with OPTIONS...); returns once it
# listens.
start_daemon() {
	"$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
		--log "$T/tracerd.log" --daemonize "$@" ||
		die "tracerd did not start"
	DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')
	[ -n "$DPID" ] || die "tracerd does not answer"
}

# session_start [START OPTIONS]: start a session; prints its directory
# (the last line).
session_start() {
	local out

	out=$("$TRACECTL" start "$@") || return 1
	echo "${out##*$'\n'}"
}

# Stop the session, once all is on disk.
session_stop() {
	"$TRACECTL" stop >/dev/null || die "tracectl stop failed"
}

# run OUT CMD...: run CMD with its output in OUT, or die.
run() {
	local out=$1
	shift
	"$@" >"$out" || die "'$*' failed: $(cat "$out")"
}

# Print OUT's lines but the "@ key=value" ones.
show() {
	grep -v '^@ ' "$1"
}

# stats: "best median" of the numbers on stdin, one a line.
stats() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print v[1], m }'
}

# vals KEY FILE: every value of KEY on FILE's "@" lines, one a line.
vals() {
	awk -v k="$1" '$1 == "@" { for (i = 2; i <= NF; i++) {
		n = index($i, "="); if (substr($i, 1, n - 1) == k)
		print substr($i, n + 1) } }' "$2"
}

# tracerd's CPU time so far, in ms.
daemon_cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" \
		'{ printf "%d\n", ($14 + $15) * 1000 / hz }' "/proc/$DPID/stat"
}

# ---------------------------------------------------------------------
# first: a thread's first event against its later ones.

bench_first() {
	local dir

	echo "== first event of a thread: $FIRST_THREADS threads created one" \
	     "after another, each times its events =="
	dir=$(session_start) || die "tracectl start failed"
	run "$T/first.out" "$BENCH" first-event "$FIRST_THREADS"
	session_stop
	run "$T/fcount.out" "$BENCH" count "$dir"
	rm -rf "$dir"
	show "$T/first.out"
	awk -v p="$(val produced "$T/first.out")" \
	    -v e="$(val events "$T/fcount.out")" 'BEGIN {
		m = "dropped events are cheaper: the figures are off"
		if (p == e)
			m = "none dropped"
		printf "in the trace: %d of %d events (%d lost, %s)\n", e, p,
		       p - e, m }'
	echo
}

# ---------------------------------------------------------------------
# record: ns per event, against the floor.

# record_case THREADS: one `record` run in its own session; its row, and
# its lost count in $T/lost.THREADS.
record_case() {
	local n=$1 dir produced events
	dir=$(session_start) || die "tracectl start failed"
	run "$T/record$n.out" "$BENCH" record "$n" "$EVENTS" "$RUNS"
	session_stop
	run "$T/count$n.out" "$BENCH" count "$dir"
	rm -rf "$dir"
	show "$T/record$n.out"
	produced=$(val produced "$T/record$n.out")
	events=$(val events "$T/count$n.out")
	echo "$((produced - events)) $produced" \
		"$(val lost_exit "$T/count$n.out")" >"$T/lost.$n"
}

bench_record() {
	echo "== tracer_record(\"bench:ev\", \"%d %d\", i, j): ns/event," \
	     "best (median) of $RUNS runs of $EVENTS events =="
	printf "%-40s %-9s %s\n" case threads ns/event
	# No tracerd: the floors, then a call site that is not enabled.
	TRACER_SOCKET=$T/none run "$T/floor.out" "$BENCH" floor "$EVENTS" \
		"$RUNS"
	show "$T/floor.out"
	record_case 1
	record_case 2
	run "$T/nosession.out" "$BENCH" idle "$IDLE_EVENTS" "$RUNS"
	[ "$(val enabled "$T/nosession.out")" = 1 ] ||
		die "bench_tracer did not register with tracerd"
	show "$T/nosession.out"
	TRACER_SOCKET=$T/none run "$T/unreg.out" "$BENCH" idle \
		"$IDLE_EVENTS" "$RUNS"
	[ "$(val enabled "$T/unreg.out")" = 0 ] ||
		die "bench_tracer registered although no tracerd listens"
	show "$T/unreg.out"
	record_summary
	echo
}

record_summary() {
	local l1 l2

	read -r -a l1 <"$T/lost.1"
	read -r -a l2 <"$T/lost.2"
	awk -v a="${l1[0]}" -v b="${l1[1]}" -v c="${l2[0]}" -v d="${l2[1]}" \
	    -v ea="${l1[2]}" -v ec="${l2[2]}" 'BEGIN {
		printf "lost (dropped while tracerd was behind): %d of %d " \
		       "(%.2f%%, 1 thread), %d of %d (%.2f%%, 2 threads)\n",
		       a, b, 100 * a / b, c, d, 100 * c / d
		if (a != ea || c != ec)
			printf "  (thread_exit events report %d and %d)\n",
			       ea, ec }'
	awk -v f="$(val floor "$T/floor.out")" \
	    -v r1="$(val best "$T/record1.out")" \
	    -v r2="$(val best "$T/record2.out")" \
	    -v s1="$(val share "$T/record1.out")" \
	    -v s2="$(val share "$T/record2.out")" 'BEGIN {
		printf "writers'"'"' CPU share (CPU time / wall time): " \
		       "%.0f%% (1 thread), %.0f%% (2 threads)\n", 100 * s1,
		       100 * s2
		printf "ratio record / floor: %.2f (best runs)\n", r1 / f
		printf "ratio 2-thread / 1-thread record (per thread): " \
		       "%.2f\n", r2 / r1 }'
}

# ---------------------------------------------------------------------
# drain: what tracerd writes when writers record as fast as they can.

# Wait until the running bench_tracer printed "holding" (or died).
wait_holding() {
	local i

	for ((i = 0; i < 600; i++)); do
		grep -q '^holding' "$T/drain.out" 2>/dev/null && return 0
		kill -0 "$BPID" 2>/dev/null || break
		sleep 0.1
	done
	die "bench_tracer drain did not finish: $(cat "$T/drain.out")"
}

# drain_case THREADS [MBPS]: one row of the drain table.
drain_case() {
	local n=$1 mbps=${2:-} dir cpu0 cpu1 pid st

	# Only the benchmark's events: a C library event of the writers
	# (pthread:exit, say) dropped while the channel is full would count
	# in their `lost` without being one of theirs.
	dir=$(session_start --events='bench:*') || die "tracectl start failed"
	cpu0=$(daemon_cpu_ms)
	rm -f "$T/hold"
	mkfifo "$T/hold" || die "mkfifo failed"
	"$BENCH" drain "$n" "$DRAIN_SECONDS" ${mbps:+"$mbps"} --hold \
		<"$T/hold" >"$T/drain.out" &
	BPID=$!
	exec 3>"$T/hold"
	wait_holding
	# The writers have exited; what tracerd has written by now.
	sleep 0.2
	pid=$(val pid "$T/drain.out")
	st=$("$TRACECTL" status | awk -v p="$pid" '$1 == p { print $7 }')
	echo >&3
	exec 3>&-
	wait "$BPID" || die "bench_tracer drain failed"
	BPID=
	rm -f "$T/hold"
	session_stop
	cpu1=$(daemon_cpu_ms)
	run "$T/dcount.out" "$BENCH" count "$dir"
	drain_row "$n" "${mbps:+paced $mbps MB/s}" "$((cpu1 - cpu0))" "$st"
	# dd while the trace is kept: like tracerd's, its writes need new
	# page cache pages. (After the trace is removed, it would reuse the
	# pages just freed: on this VM 3.3-4.1 GB/s against 0.35-0.55 for
	# new ones, whose first touch the hypervisor pays for.)
	[ -n "$mbps" ] || dd_row "$(val bytes "$T/dcount.out")"
	rm -rf "$dir"
}

# dd_row BYTES: dd writing as many bytes (1 MB blocks from /dev/zero) into
# a file beside the trace, just after, the trace still there: the file
# system's page cache rate for the same volume on this machine at this
# moment, and the CPU dd used for it.
dd_row() {
	local r

	r=$(dd_rate "$1") || return 0
	echo "$r" | awk '{
		printf "%-7s %-16s %9s %9s %9.1f %9s %12s %8s %10s %6.0f%%\n",
		       "dd", "same volume", "", "", $1, "", "", "", "", $2 }'
}

# dd_rate BYTES: "MB/s CPU%" of dd writing as many bytes; fails for none.
dd_rate() {
	local n=$(( ($1 + 999999) / 1000000 )) t TIMEFORMAT='%R %U %S'

	[ "$n" -gt 0 ] || return 1
	t=$({ time dd if=/dev/zero of="$T/dd.out" bs=1000000 count="$n" \
		status=none; } 2>&1) || die "dd failed: $t"
	rm -f "$T/dd.out"
	echo "$t" | awk -v mb="$n" '{ printf "%.1f %.0f\n", mb / $1,
					   100 * ($2 + $3) / $1 }'
}

# drain_row THREADS LOAD CPU_MS STATUS_LOST
drain_row() {
	awk -v n="$1" -v load="${2:-flat out}" -v cpu="$3" -v slost="$4" \
	    -v prod="$(val produced "$T/drain.out")" \
	    -v ns="$(val elapsed_ns "$T/drain.out")" \
	    -v ev="$(val events "$T/dcount.out")" \
	    -v bytes="$(val bytes "$T/dcount.out")" \
	    -v lost="$(val lost_exit "$T/dcount.out")" -v rec="$REC" 'BEGIN {
		s = ns / 1e9
		printf "%-7s %-16s %9.2f %9.1f %9.1f %9.2f %12d %7.2f%% " \
		       "%10s %6.0f%%\n", n, load, prod / s / 1e6,
		       prod * rec / s / 1e6, bytes / s / 1e6, ev / s / 1e6,
		       lost, 100 * lost / prod, slost, cpu / 10 / s
		if (prod != ev + lost)
			printf "        accounting: produced %d != " \
			       "written %d + lost %d\n", prod, ev, lost }'
}

bench_drain() {
	echo "== tracerd drain rate: writers record for ${DRAIN_SECONDS} s" \
	     "in a session ($REC-byte records; MB = 10^6 bytes) =="
	printf "%-7s %-16s %9s %9s %9s %9s %12s %8s %10s %7s\n" writers load \
		"made M/s" "made MB/s" "wrote MB/s" "wrote M/s" "lost events" \
		lost "status" "tracerd"
	printf "%-7s %-16s %9s %9s %9s %9s %12s %8s %10s %7s\n" "" "" "" "" \
		"" "" "" "" "LOST" "CPU"
	drain_case 1
	drain_case 2
	for m in $PACED_MBPS; do
		drain_case 1 "$m"
		drain_case 2 "$m"
	done
	echo "made: events recorded by the writers (tracer_record calls);" \
	     "wrote: channel files' bytes and bench events; lost: sum of the" \
	     "threads' tracer:thread_exit 'lost N'; status LOST: tracectl" \
	     "status just after the writers exited; tracerd CPU: its CPU" \
	     "time over the writers' wall time; dd: as many bytes written" \
	     "by dd just after, the trace kept (wrote MB/s, and its CPU in the" \
	     "last column)"
	echo
}

# ---------------------------------------------------------------------
# backlog: tracerd alone, writing out a full ring.

# status_done PID PRODUCED: has tracerd written out all of PID's
# PRODUCED $REC-byte records but its open sub-buffer's (512 at most)?
# (`tracectl status --json`: the process's bytes_written.)
status_done() {
	"$TRACECTL" status --json | awk -v p="$1" -v want="$((($2 - 512) * REC))" '
		/"processes"/ { in_procs = 1 }
		in_procs && $1 == "\"pid\":" { cur = $2 + 0 }
		in_procs && cur == p && $1 == "\"bytes_written\":" {
			done = $2 + 0 >= want }
		END { exit !done }'
}

# files_near DIR PID PRODUCED: do PID's default channel files in session
# DIR hold at least the bytes of its PRODUCED $REC-byte records but its open
# sub-buffer's? (They hold packet headers too: then status_done says.)
# Their sizes, not `tracectl status`, are polled while tracerd writes: a
# status walks every commit slot of the 1 GiB ring (65,536), which took
# 10% of tracerd's time when polled every 10 ms.
files_near() {
	find "$1"/*-"$2"/ -maxdepth 1 -name 'default-*' -printf '%s\n' 2>/dev/null |
		awk -v want="$((($3 - 512) * REC))" '
			{ n += $1 } END { exit !(n >= want) }'
}

bench_backlog() {
	local dir pid prod cpu0 cpu1 t0 t1 i

	stop_daemon
	start_daemon --subbuf-count 65536 --buffers 2 --max-memory 4G
	dir=$(session_start --events='bench:*') || die "tracectl start failed"
	rm -f "$T/hold"
	mkfifo "$T/hold" || die "mkfifo failed"
	"$BENCH" drain 1 "$BACKLOG_SECONDS" --ready --hold <"$T/hold" \
		>"$T/drain.out" &
	BPID=$!
	exec 3>"$T/hold"
	for ((i = 0; i < 600; i++)); do
		grep -q '^ready' "$T/drain.out" && break
		sleep 0.05
	done
	kill -STOP "$DPID"
	echo >&3
	wait_holding
	pid=$(val pid "$T/drain.out")
	prod=$(val produced "$T/drain.out")
	cpu0=$(daemon_cpu_ms)
	t0=$(date +%s%N)
	kill -CONT "$DPID"
	until files_near "$dir" "$pid" "$prod" && status_done "$pid" "$prod"
	do
		sleep 0.01	# polling what tracerd wrote, not waiting it out
	done
	t1=$(date +%s%N)
	cpu1=$(daemon_cpu_ms)
	echo >&3
	exec 3>&-
	wait "$BPID" || die "bench_tracer drain failed"
	BPID=
	session_stop
	run "$T/dcount.out" "$BENCH" count "$dir"
	echo "== tracerd alone: a ring filled while it was stopped, written" \
	     "out (1 GiB ring; MB = 10^6 bytes) =="
	printf "%-7s %-16s %9s %9s %12s %8s\n" "" "" MB "wrote MB/s" \
		"tracerd CPU" "MB/s/core"
	awk -v bytes="$(val bytes "$T/dcount.out")" -v ns=$((t1 - t0)) \
	    -v cpu=$((cpu1 - cpu0)) 'BEGIN {
		printf "%-7s %-16s %9.1f %9.1f %11.0f%% %8.0f\n", "tracerd",
		       "backlog", bytes / 1e6, bytes / ns * 1e3,
		       100 * cpu * 1e6 / ns, bytes / 1e3 / cpu }'
	dd_rate "$(val bytes "$T/dcount.out")" | awk '{
		printf "%-7s %-16s %9s %9.1f %11.0f%% %8.0f\n", "dd",
		       "same volume", "", $1, $2, $1 * 100 / $2 }'
	echo "wrote MB/s: the channel files' bytes over the time from" \
	     "SIGCONT until tracectl status counted them written;" \
	     "tracerd CPU: its CPU time over that time; dd: as many bytes" \
	     "written by dd just after, the trace kept"
	echo
	rm -rf "$dir"
	stop_daemon
	start_daemon
}

# ---------------------------------------------------------------------
# filter: a call site the filter disables; the enabled record under a
# long filter; the time a filter change takes.

# filter_disabled: the `disabled` rows, in a session that excludes
# bench:off.
filter_disabled() {
	local dir

	dir=$(session_start --events=-bench:off) ||
		die "tracectl start failed"
	run "$T/disabled.out" "$BENCH" disabled "$IDLE_EVENTS" "$RUNS"
	session_stop
	rm -rf "$dir"
	[ "$(val off_enabled "$T/disabled.out")" = 0 ] ||
		die "bench_tracer disabled did not check bench:off"
	show "$T/disabled.out"
}

# filter_patterns N: N - 2 globs that match no event, then bench:* and
# -bench:off; one argument, comma-separated.
filter_patterns() {
	{ seq -f 'nomatch%.0f:*' 0 $(($1 - 3)); echo 'bench:*'
	  echo '-bench:off'; } | paste -s -d ,
}

# apply_filter PATTERNS MSFILE: tracectl filter PATTERNS, timed end to end
# (wall ms appended to MSFILE); fails unless the bench process confirmed.
apply_filter() {
	local t0 t1

	t0=$EPOCHREALTIME
	"$TRACECTL" filter "$1" >"$T/apply.out" 2>"$T/apply.err" ||
		die "tracectl filter failed: $(cat "$T/apply.err")"
	t1=$EPOCHREALTIME
	[ ! -s "$T/apply.err" ] ||
		die "tracectl filter warned: $(cat "$T/apply.err")"
	grep -q 'applied to 1 process(es)$' "$T/apply.out" ||
		die "tracectl filter: $(tail -c 200 "$T/apply.out")"
	awk -v a="${t0/,/.}" -v b="${t1/,/.}" \
		'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$2"
}

# bench_lines: copy filter-record's output (fd 4) to $T/frec.out up to
# its next "ready"; returns 1 at its end.
bench_lines() {
	local line

	while IFS= read -r line <&4; do
		[ "$line" = ready ] && return 0
		printf '%s\n' "$line" >>"$T/frec.out"
	done
	return 1
}

# phase LINE: filter-record measures under the filter now in force.
phase() {
	echo "$1" >&3
	bench_lines || die "bench_tracer filter-record failed"
}

# filter_start: bench_tracer filter-record in the background, its stdin
# on fd 3, its stdout on fd 4; returns once it waits for a phase.
filter_start() {
	rm -f "$T/fin" "$T/fout"
	mkfifo "$T/fin" "$T/fout" || die "mkfifo failed"
	"$BENCH" filter-record "$EVENTS" "$RUNS" <"$T/fin" >"$T/fout" &
	BPID=$!
	exec 3>"$T/fin" 4<"$T/fout"
	bench_lines || die "bench_tracer filter-record did not start"
}

# filter_end: end of its input; filter-record prints its total and exits.
filter_end() {
	exec 3>&-
	! bench_lines || die "bench_tracer filter-record did not stop"
	exec 4<&-
	wait "$BPID" || die "bench_tracer filter-record failed"
	BPID=
	rm -f "$T/fin" "$T/fout"
}

# filter_applies PATTERNS: in a session of its own, while filter-record
# waits (records nothing), FILTER_APPLIES changes to PATTERNS and back to
# '*', each timed.
filter_applies() {
	local dir i

	dir=$(session_start) || die "tracectl start failed"
	for ((i = 0; i < FILTER_APPLIES; i++)); do
		apply_filter "$1" "$T/many.ms"
		apply_filter '*' "$T/star.ms"
	done
	session_stop
	rm -rf "$dir"
}

# filter_round I PATTERNS: one session (its files deleted after it, so
# that the page cache's writeback does not pile up over the rounds), a
# record phase under each filter: '*' first when I is odd, PATTERNS first
# when even. The session starts with the first filter, `tracectl filter`
# sets the second. Appends its bench:ev count in the trace to frcount.
filter_round() {
	local many="0 many $FILTER_PATTERNS patterns" star="1 star '*'" dir
	local first=('*' "$star") second=("$2" "$many")

	if (($1 % 2 == 0)); then
		first=("$2" "$many")
		second=('*' "$star")
	fi
	dir=$(session_start --events="${first[0]}") ||
		die "tracectl start failed"
	phase "${first[1]}"
	apply_filter "${second[0]}" /dev/null
	phase "${second[1]}"
	session_stop
	run "$T/frcount.out" "$BENCH" count "$dir"
	rm -rf "$dir"
	val events "$T/frcount.out" >>"$T/frcount"
}

# filter_table: one filter-record process through filter_applies, then
# FILTER_ROUNDS rounds.
filter_table() {
	local pats i

	pats=$(filter_patterns "$FILTER_PATTERNS")
	echo "${#pats}" >"$T/patbytes"
	: >"$T/frec.out"
	: >"$T/many.ms"
	: >"$T/star.ms"
	: >"$T/frcount"
	filter_start
	filter_applies "$pats"
	for ((i = 1; i <= FILTER_ROUNDS; i++)); do
		filter_round "$i" "$pats"
	done
	filter_end
	show "$T/frec.out"
}

bench_filter() {
	((FILTER_PATTERNS >= 2)) || die "FILTER_PATTERNS must be at least 2"
	echo "== event filters: one thread in a session while tracerd drains;" \
	     "ns/call, best (median) of $RUNS runs =="
	printf "%-40s %-9s %s\n" case threads ns/event
	filter_disabled
	filter_table
	filter_summary
	echo
}

filter_summary() {
	local d e s m sm mm ms ss

	d=$(val disabled "$T/disabled.out")
	e=$(val empty "$T/disabled.out")
	s=$(vals star_best "$T/frec.out" | stats | cut -d ' ' -f 1)
	m=$(vals many_best "$T/frec.out" | stats | cut -d ' ' -f 1)
	sm=$(vals star_median "$T/frec.out" | stats | cut -d ' ' -f 2)
	mm=$(vals many_median "$T/frec.out" | stats | cut -d ' ' -f 2)
	read -r -a ms < <(stats <"$T/many.ms")
	read -r -a ss < <(stats <"$T/star.ms")
	awk -v d="$d" -v e="$e" 'BEGIN {
		x = d - e
		if (x > -0.005 && x < 0.005)
			x = 0
		printf "disabled call site (enabled == 0, checked): %.2f ns " \
		       "vs empty loop %.2f ns: %+.2f ns per call\n", d, e, x }'
	awk -v s="$s" -v m="$m" -v sm="$sm" -v mm="$mm" \
	    -v n="$FILTER_PATTERNS" -v r="$FILTER_ROUNDS" 'BEGIN {
		printf "enabled record, ns, best (median of the phases'"'"' " \
		       "medians), %d phases each: %.1f (%.1f) under '"'*'"', " \
		       "%.1f (%.1f) under %d patterns: ratio %.3f\n", r, s,
		       sm, m, mm, n, m / s }'
	echo "tracectl filter, end to end (1 traced process, idle), ms, best" \
	     "(median) of $FILTER_APPLIES: $FILTER_PATTERNS patterns" \
	     "($(cat "$T/patbytes") bytes) ${ms[0]} (${ms[1]});" \
	     "'*' ${ss[0]} (${ss[1]})"
	awk -v p="$(val produced "$T/frec.out")" \
	    -v e="$(awk '{ n += $1 } END { print n }' "$T/frcount")" 'BEGIN {
		printf "in the trace: %d of the %d bench:ev events of the " \
		       "filter phases (%d dropped while tracerd was " \
		       "behind)\n", e, p, p - e }'
	filter_preempted
}

# A note when the writer did not have its CPU to itself in some phase.
filter_preempted() {
	{ vals star_share "$T/frec.out"; vals many_share "$T/frec.out"; } |
		sort -g | awk 'NR == 1 && $1 < 0.95 {
		printf "note: the writer was preempted in some phases (down " \
		       "to %.0f%% of a CPU): the machine is not quiet, " \
		       "compare the record rows with care\n", 100 * $1 }'
}

# ---------------------------------------------------------------------
# churn: short-lived threads at tracerd's defaults.

# tracerd's resident memory in KiB.
daemon_rss_kib() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$DPID/status"
}

# churn_case TOTAL ALIVE: one run in its own session; its row.
churn_case() {
	local dir r0 r1 cpu0 cpu1

	dir=$(session_start) || die "tracectl start failed"
	r0=$(daemon_rss_kib) cpu0=$(daemon_cpu_ms)
	run "$T/churn.out" "$BENCH" churn "$1" "$2" 10
	session_stop
	r1=$(daemon_rss_kib) cpu1=$(daemon_cpu_ms)
	run "$T/ccount.out" "$BENCH" count "$dir"
	rm -rf "$dir"
	printf '%-8s %5s %10s %10s %10s %7s %7s %10s %9s %13s %6s\n' "$1" \
		"$2" "$(val starts_per_s "$T/churn.out")" \
		"$(val made "$T/churn.out")" "$(val events "$T/ccount.out")" \
		"$(awk -v m="$(val made "$T/churn.out")" \
		       -v e="$(val events "$T/ccount.out")" \
		       'BEGIN { printf "%.2f%%", m ? 100 * (m - e) / m : 0 }')" \
		"$(val lost_unbuffered "$T/ccount.out")" \
		"$(val exits "$T/ccount.out")" \
		"$(val maxrss_kib "$T/churn.out")" "$r0 -> $r1" \
		"$((cpu1 - cpu0))"
}

bench_churn() {
	local total alive

	echo "== thread churn at tracerd's defaults: threads recording 10" \
	     "events each, ALIVE at a time =="
	printf '%-8s %5s %10s %10s %10s %7s %7s %10s %9s %13s %6s\n' \
		threads alive starts/s made "in trace" lost told exits \
		"peak KiB" "tracerd KiB" "cpu ms"
	set -- $CHURN
	while [ $# -ge 2 ]; do
		churn_case "$1" "$2"
		shift 2
	done
	echo "starts/s: threads started per second; lost: bench events" \
	     "made but not in the trace; told: events the trace says were" \
	     "dropped by threads that ended before they had a buffer" \
	     "(tracer:lost_unbuffered, events of every kind); peak KiB: the" \
	     "process's peak RSS; tracerd KiB: its RSS before and after the" \
	     "run; cpu ms: tracerd's CPU over the run"
	echo
}

# ---------------------------------------------------------------------

for f in "$TRACERD" "$TRACECTL" "$BENCH"; do
	[ -x "$f" ] || die "$f not found: run from the build directory," \
			   "after make"
done
for s in "$@"; do
	case $s in
	first|record|drain|backlog|churn|filter) ;;
	*) die "unknown benchmark '$s' (first, record, drain, backlog," \
	       "churn, filter)" ;;
	esac
done
[ $# -gt 0 ] || set -- first record drain backlog churn filter

bench_tmp tracer-bench
trap cleanup EXIT
trap 'exit 130' INT TERM

machine_line
echo "tracerd writes to $T ($(df --output=fstype "$T" | tail -n 1))"
echo
start_daemon
for s in "$@"; do
	"bench_$s"
done
stop_daemon
