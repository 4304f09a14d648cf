# lib.sh - sourced by the integration scripts: TAP output and a private
# tracerd (own socket, output directory and log) for each script.
# Scripts run from the build directory (make check).

TRACERD=./tracerd/tracerd
TRACECTL=./tracectl/tracectl
TRACEE=./tests/integration/tracee
WIRE_CLIENT=./tests/integration/wire_client

# The traced programs of the tests record from their first event, which
# needs the registration to complete before main(): give it the time a
# loaded machine (sanitizers, make -j) may need, rather than the default
# few milliseconds (test_hung.sh checks the default).
export TRACER_REGISTER_TIMEOUT_MS=2000

# The events of the programs' own tracer_record() calls and the tracer's,
# without the C library wrappers' (libc:*, pthread:*, proc:*): for the
# tests that count every event and buffer of a thread
# ("session_cmd start --events "$OWN_EVENTS"").
OWN_EVENTS='-libc:*,-pthread:*,-proc:*'

T=$(mktemp -d "${TMPDIR:-/tmp}/tracer-test.XXXXXX")
export TRACER_SOCKET=$T/sock
LOG=$T/tracerd.log
DPID=
tap_n=0
tap_failed=0

# A sanitizer build of libtracer needs its runtime loaded first: `tracectl
# record` keeps the LD_PRELOAD it is given ahead of libtracer. Give it only
# to tracectl record ("LD_PRELOAD=$RECORD_PRELOAD $TRACECTL record ..."),
# not to the tools the checks use.
RECORD_PRELOAD=$(ldd ./libtracer/.libs/libtracer.so 2>/dev/null |
	awk '/lib(asan|ubsan)/ { printf "%s:", $3 }')
RECORD_PRELOAD=${RECORD_PRELOAD%:}

# Is this a build with AddressSanitizer (its allocator comes first)?
under_asan() {
	case $RECORD_PRELOAD in
	*libasan*) return 0 ;;
	esac
	return 1
}

# ok STATUS DESCRIPTION: one TAP line; STATUS 0 passes.
ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=1
	fi
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok 0 "$desc"; else ok 1 "$desc"; fi
}

# Sanitizer builds: GCC 12's AddressSanitizer takes no lock of its
# allocator around fork(), so a child forked while another thread of a
# traced program allocates (libtracer's listener, starting or handling a
# message) can inherit a locked allocator and hang in its exit-time leak
# check (seen with gdb: LockAllocator against a thread in realloc). Traced
# programs run without the leak check; tracerd, which forks only while it
# has one thread, keeps it (start_daemon).
TRACERD_ASAN_OPTIONS=${ASAN_OPTIONS-}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# Start tracerd in the background; returns once it listens. Its standard
# error is /dev/null (--daemonize): a sanitizer's report goes to
# $T/tracerd-san.PID instead, which finish() shows.
start_daemon() {
	ASAN_OPTIONS="${TRACERD_ASAN_OPTIONS:+$TRACERD_ASAN_OPTIONS:}log_path=$T/tracerd-san" \
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/tracerd-san" \
		"$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
		--log "$LOG" --daemonize "$@" || return 1
	DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')
	[ -n "$DPID" ]
}

# Stop tracerd with SIGTERM and wait until it has exited.
stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null && tail --pid="$DPID" -f /dev/null
	DPID=
}

# Kill tracerd with SIGKILL and wait until it is gone.
kill_daemon() {
	[ -n "$DPID" ] || return 0
	kill -KILL "$DPID" && tail --pid="$DPID" -f /dev/null
	DPID=
}

# await_line PATTERN: until a line of tracerd's log matches PATTERN (10 s
# at most, polling); its status says whether one did.
await_line() {
	local deadline=$(($(now_ms) + 10000))

	while ! grep -q "$1" "$LOG" && [ "$(now_ms)" -lt $deadline ]; do
		sleep 0.02	# polling the log, not waiting it out
	done
	grep -q "$1" "$LOG"
}

# The session directory printed by tracectl start/stop (last line).
session_cmd() {
	"$TRACECTL" "$@" | tail -n 1
}

# record_dir FILE: the trace directory `tracectl record` named on its
# standard error, saved in FILE: from its "stopped" line, else from its
# "started" line.
record_dir() {
	sed -n 's/^tracectl: session [0-9]* [^;]*; trace directory: //p' "$1" |
		tail -n 1
}

# trace_run NAME ARG...: `tracectl record ARG...` with the tests' preload,
# its output in $T/NAME.out and $T/NAME.err, its session directory in
# $dir; its status is record's.
trace_run() {
	local name=$1 st
	shift
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record "$@" >"$T/$name.out" \
		2>"$T/$name.err"
	st=$?
	dir=$(record_dir "$T/$name.err")
	return $st
}

# await_log PATTERN N: until tracerd's log has N lines matching PATTERN
# (polling what tracerd writes, 15 s at most); prints how many it has.
await_log() {
	local i n
	for i in $(seq 300); do
		n=$(grep -c "$1" "$LOG")
		[ "$n" -ge "$2" ] && break
		sleep 0.05	# polling the log, not waiting it out
	done
	echo "$n"
}

# await_clock: until tracerd's TSC calibration (100 ms after its start)
# is done, polling status (5 s at most); its last status in $T/st.
await_clock() {
	local i
	for i in $(seq 100); do
		"$TRACECTL" status >"$T/st" 2>&1
		grep -q 'until the TSC is calibrated' "$T/st" || return 0
		sleep 0.05	# polling status, not waiting it out
	done
}

# A sanitizer's report from tracerd fails the test, and is shown.
sanitizer_reports() {
	local f

	for f in "$T"/tracerd-san.*; do
		[ -e "$f" ] || continue
		ok 1 "tracerd ran without a sanitizer report ($(basename "$f"))"
		sed 's/^/# /' "$f"
	done
}

finish() {
	stop_daemon
	sanitizer_reports
	echo "1..$tap_n"
	if [ "$tap_failed" -ne 0 ]; then
		echo "# tracerd log:"
		sed 's/^/# /' "$LOG" 2>/dev/null
	fi
	if [ -n "${TRACER_TEST_KEEP:-}" ]; then
		echo "# kept $T (TRACER_TEST_KEEP)"
	else
		rm -rf "$T"
	fi
	exit "$tap_failed"
}
trap 'stop_daemon; rm -rf "$T"' INT TERM

# Programs driven over a pipe (tests/integration/controlee.c): spawn NAME
# ARGS... starts it as a coprocess whose fds are in NAME_in/NAME_out and
# pid in NAME_pid, and waits for its "ready" line.
spawn() {
	local name=$1 fin fout
	shift
	fin=$T/$name.in
	fout=$T/$name.out
	rm -f "$fin" "$fout"
	mkfifo "$fin" "$fout"
	"$@" <"$fin" >"$fout" &
	eval "${name}_pid=$!"
	exec {fd_w}>"$fin" {fd_r}<"$fout"
	eval "${name}_in=$fd_w ${name}_out=$fd_r"
	local line
	read -r -t 10 line <&"$fd_r" && [ "$line" = ready ]
}

# cmd NAME COMMAND: send one command, print its one-line answer.
cmd() {
	local fin fout line
	eval "fin=\$${1}_in fout=\$${1}_out"
	# In a subshell: if the program died, SIGPIPE ends only that.
	(echo "$2" >&"$fin") 2>/dev/null
	read -r -t 30 line <&"$fout" && echo "$line"
}

# quit NAME: ask it to exit; returns its exit status.
quit() {
	local fin pid
	eval "fin=\$${1}_in pid=\$${1}_pid"
	(echo q >&"$fin") 2>/dev/null
	wait "$pid"
}

# Milliseconds since the epoch.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# forker_parent_check PID OUT VIEW CHILD_EVENT: the parent of a forker
# test (tests/integration/forker.c) recorded every numbered event of its
# threads ("thread T N" and "main N" in OUT, its output), consecutive, all
# with its pid, and no CHILD_EVENT (its children's, "test:child" say), in
# VIEW (tracectl view of its directory). Prints what is wrong; 0 if
# nothing is.
forker_parent_check() {
	awk -v pid="$1" -v child=" $4: " '
		FILENAME == ARGV[1] { if ($1 == "thread") want[$2] = $3; if ($1 == "main") want["main"] = $2; next }
		$3 != pid || index($0, child) { bad++; if (bad < 5) print "foreign event: " $0 }
		/ test:seq: / { t = $(NF - 2); s = $NF
			if (s != next_seq[t] + 0) { bad++; if (bad < 5) print "thread " t ": got " s " expected " next_seq[t] + 0 }
			next_seq[t] = s + 1 }
		/ test:main: / { s = $NF; t = "main"
			if (s != next_seq[t] + 0) { bad++; print "main: got " s " expected " next_seq[t] + 0 }
			next_seq[t] = s + 1 }
		END {
			for (t in want) if (next_seq[t] + 0 != want[t]) { bad++; print t ": " next_seq[t] + 0 " events, recorded " want[t] }
			exit bad != 0
		}' "$2" "$3"
}

# hold_start N EVENTS: N tracee processes alive at once (`tracee hold 1
# EVENTS`: one thread records EVENTS events, then waits), each told to go
# on through a FIFO of its own; returns once every one said "holding".
# hold_end tells them to go on and waits for them: HOLD_BAD is how many
# did not exit 0.
hold_start() {
	local i fd
	HOLD_PIDS= HOLD_FDS=
	for i in $(seq "$1"); do
		mkfifo "$T/hold$i"
		"$TRACEE" hold 1 "$2" <"$T/hold$i" >"$T/hold$i.out" &
		HOLD_PIDS="$HOLD_PIDS $!"
	done
	for i in $(seq "$1"); do
		exec {fd}>"$T/hold$i"
		HOLD_FDS="$HOLD_FDS $fd"
	done
	for i in $(seq "$1"); do
		timeout 60 tail -f "$T/hold$i.out" | grep -q -m1 holding
	done
}

hold_end() {
	local fd p
	for fd in $HOLD_FDS; do
		echo go >&"$fd"
		exec {fd}>&-
	done
	HOLD_BAD=0
	for p in $HOLD_PIDS; do
		wait "$p" || HOLD_BAD=$((HOLD_BAD + 1))
	done
	rm -f "$T"/hold*
}
