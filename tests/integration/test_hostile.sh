#!/bin/bash
# A hostile or broken client cannot hurt tracerd, other programs or other
# users (tracerd(8), THREAT MODEL). Each attack is carried out by a raw
# client (hostile.c) against tracerd with its default settings; after each,
# tracerd answers `status` within a second, and a well-behaved program
# traced at the same time has all its events.
. "$(dirname "$0")/lib.sh"

HOSTILE=./tests/integration/hostile

# tracerd answers a status request within a second.
responsive() {
	timeout 1 "$TRACECTL" status >/dev/null
}

# attack WHAT CASE [ARGS...]: a program records 2 x 20,000 events while
# the attack is carried out; the attack's answer, then tracerd and the
# program's trace after it.
attack() {
	local what=$1 out dir n pid
	shift
	dir=$(session_cmd start --events "$OWN_EVENTS")
	"$TRACEE" threads 2 20000 >/dev/null & pid=$!
	out=$("$HOSTILE" "$TRACER_SOCKET" "$@" 2>&1)
	check "$1: $what ($(echo "$out" | grep -m1 -E 'refused|adopted|accepted'))" \
		bash -c "echo '$out' | grep -q '^refused: '"
	wait $pid
	check "$1: tracerd still answers within a second" responsive
	session_cmd stop >/dev/null
	n=$("$TRACECTL" view "$dir" | grep -c ' test:seq: ')
	check "$1: a program traced meanwhile has all its events ($n of 40000)" \
		[ "$n" -eq 40000 ]
}

check "tracerd starts (default settings)" start_daemon

# 1. A pool handed over in a memfd the client can still shrink: tracerd
#    would fault (SIGBUS) on its next look at the pages.
attack "a pool in an unsealed memfd is refused" adopt-unsealed
# 3. A pool whose rings claim huge sub-buffers: tracerd would allocate as
#    much to read one.
attack "a pool with 128 MiB sub-buffers is refused" adopt-huge
#    Anything but a memfd.
attack "a pipe as a pool is refused" adopt-pipe
#    A pool whose header the client rewrites while tracerd checks it: a
#    value read again after the check could be another (a buffer count
#    past the segment: tracerd read beyond its mapping). tracerd checks
#    and uses a copy.
dir=$(session_cmd start --events "$OWN_EVENTS")
"$TRACEE" threads 2 20000 >/dev/null & pid=$!
out=$("$HOSTILE" "$TRACER_SOCKET" adopt-flip 100 2>&1)
wait $pid
check "adopt-flip: 100 hand-overs of a pool whose buffer count flips ($(echo "$out" | grep -c '^adopted') adopted, $(echo "$out" | grep -c '^refused') refused)" \
	bash -c "echo '$out' | grep -q '^handed over 100 times'"
check "adopt-flip: tracerd still answers within a second" responsive
session_cmd stop >/dev/null
n=$("$TRACECTL" view "$dir" | grep -c ' test:seq: ')
check "adopt-flip: a program traced meanwhile has all its events ($n of 40000)" \
	[ "$n" -eq 40000 ]
check "the log says why each was refused" bash -c "
	grep -q 'refused: not a memfd sealed against shrinking and growing' '$LOG' &&
	grep -q 'refused: sub-buffers of 134217728 bytes' '$LOG' &&
	grep -q 'refused: not a regular file' '$LOG'"

# 4. Call sites without end: 20,000 with 4 KiB strings (240 MB) are
#    refused past 32 MiB a process; tracerd's memory stays bounded.
rss() {
	awk '/^RssAnon/ { print $2 }' "/proc/$DPID/status"
}
rss0=$(rss)
attack "20,000 call sites of 12 KiB are refused" sites 20000 4096
rss1=$(rss)
if under_asan; then
	# AddressSanitizer keeps freed memory in quarantine (256 MiB): the
	# decoded messages alone exceed the bound.
	ok 0 "tracerd's memory grew by $(( (rss1 - rss0) / 1024 )) MiB # SKIP AddressSanitizer's quarantine"
else
	check "tracerd's memory grew by $(( (rss1 - rss0) / 1024 )) MiB (at most 64)" \
		[ $((rss1 - rss0)) -le 65536 ]
fi
check "status shows the refused registration" bash -c \
	"'$TRACECTL' status | grep -q '^refused 1 registration(s); last: pid [0-9]*: call sites take more memory'"

# 2. A process with 65,530 call sites grows its pool to 176 buffers and
#    dies with each half through a sub-buffer of records of its last call
#    site: salvage looks each up by table, not by scanning (this status
#    took 2 s before).
dir=$(session_cmd start)
out=$("$HOSTILE" "$TRACER_SOCKET" salvage 65530)
echo "# $out"
check "a dead process's $(echo "$out" | awk '{ print $2 }') buffers salvaged: tracerd answers within a second" \
	responsive
session_cmd stop >/dev/null
want=$(echo "$out" | awk '{ print $5 }')
n=$("$TRACECTL" view "$dir" 2>/dev/null | grep -c ' h:65529: ')
check "every committed record is in the trace ($n of $want)" [ "$n" -eq "$want" ]

# paced_meanwhile CASE WHAT...: `tracee paced` records 200,000 events of
# 250 bytes a second (50 MB/s) while hostile CASE 48 runs (HOSTILE_N
# instead of 48; the session started with START_OPTS too; LABEL names the
# checks, instead of CASE); once it is
# over (WHAT: the shell words that wait for it), tracerd answers, and the
# paced program has all its events.
all_of() { [ "$1" -gt 0 ] && [ "$1" -eq "${2:-0}" ]; }
paced_meanwhile() {
	local case=$1 dir ppid hpid pfd n want
	shift
	# shellcheck disable=SC2086 # START_OPTS: words
	dir=$(session_cmd start --events "$OWN_EVENTS" ${START_OPTS:-})
	rm -f "$T/paced.in"
	mkfifo "$T/paced.in"
	"$TRACEE" paced 200000 <"$T/paced.in" >"$T/paced.out" & ppid=$!
	exec {pfd}>"$T/paced.in"
	timeout 60 tail -f "$T/paced.out" | grep -q -m1 recording
	"$HOSTILE" "$TRACER_SOCKET" "$case" "${HOSTILE_N:-48}" \
		>"$T/$case.out" & hpid=$!
	wait $hpid
	echo "# $(cat "$T/$case.out")"
	"$@" "$hpid"
	check "${LABEL:-$case}: tracerd answers within a second" responsive
	exec {pfd}>&-
	wait $ppid
	want=$(sed -n 's/^recorded //p' "$T/paced.out")
	session_cmd stop >/dev/null
	n=$("$TRACECTL" view "$dir/tracee-$ppid" 2>/dev/null |
		grep -c ' test:paced: ')
	check "${LABEL:-$case}: a program recording meanwhile has all its events ($n of $want)" \
		all_of "$n" "$want"
	rm -rf "$dir"
}

# Until tracerd's log says the process PID is gone.
gone_in_log() {
	timeout 60 tail -f "$LOG" | grep -q -m1 "pid $1 (hostile) is gone"
}

# 2b. A process dies with every ring of 48 buffers full (192 MiB; each
#    ring's first record committed last, so tracerd could read none of
#    them before): tracerd writes them out a part per loop turn, so that
#    a program recording 50 MB/s meanwhile is drained in between and
#    loses nothing (written at once, the end held the loop for 0.1-0.2 s
#    here: 300-33,000 of that program's events lost).
paced_meanwhile flood gone_in_log
# 2c. A live process whose 48 buffers name a thread that has ended, their
#    rings full but for a first record never committed: tracerd salvages
#    a vanished thread's buffer and gives it back, a few per scan (all in
#    one scan, the program recording meanwhile lost 7,500-9,000 events).
#    hostile waits until all 48 are back.
all_back() {
	grep -q '^reclaimed \([0-9][0-9]*\) of \1 in ' "$T/vanished.out"
}
paced_meanwhile vanished true
check "vanished: every buffer came back" all_back
# 2d. The same with rings of 16 MiB (sub-buffers of 64 KiB), 6 of them: a
#    vanished thread's buffer larger than 8 MiB is read in steps, a part
#    per loop turn, between the drains of the program recording meanwhile.
#    tracerd runs at its defaults; the session asks for the larger rings,
#    as a user may (`tracectl start --subbuf-size`): the default 4 MiB
#    ring never reaches the stepwise path this case is about.
LABEL="vanished, 16 MiB rings" START_OPTS="--subbuf-size 65536" HOSTILE_N=6 \
	paced_meanwhile vanished true
check "vanished, 16 MiB rings: every buffer came back" all_back

# 7. A client that keeps its ring full of packets that make no sense for
#    3 s: tracerd reports and skips each, in a few log lines (one line a
#    packet before: 1.8 M lines in 12 s), and says at the client's end how
#    many it left out.
damage_lines() {
	bad_lines=$(grep -c "pid $1 buffer [0-9]* default channel: " "$LOG")
	hpid_bad=$1
}
HOSTILE_N=3000 paced_meanwhile bad-packets damage_lines
wrote=$(sed -n 's/^wrote \([0-9]*\) bad packets$/\1/p' "$T/bad-packets.out")
few_lines() {
	[ "${wrote:-0}" -gt 100 ] && [ "$bad_lines" -ge 1 ] &&
	[ "$bad_lines" -le 20 ]
}
check "bad-packets: $wrote bad packets reported in $bad_lines log lines (at most 20)" \
	few_lines
told_rest() {
	grep -q "pid $hpid_bad: [0-9]* more log line(s) like the last not logged" \
		"$LOG"
}
check "and the rest counted at the client's end" told_rest

# 9. A session no process could join is refused at its start, in one line.
out=$("$TRACECTL" start --subbuf-count 65536 2>&1)
ret=$?
want="tracectl: sub-buffers: 65536 x 16384 bytes make a thread's buffer (1029 MiB) larger than tracerd's --max-memory (1024 MiB)"
refused_start() {
	[ "$ret" -eq 1 ] && [ "$out" = "$want" ]
}
check "start --subbuf-count 65536: exit $ret, one line saying why" \
	refused_start
echo "# $out"
check "and no session started" bash -c \
	"'$TRACECTL' status | grep -q '^session none'"

# cpu_ticks PID: its user + system time so far, in clock ticks.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# 5. Connections that never say anything whole hold every slot: programs
#    and tracectl are still served (the oldest silent one gives its slot
#    up), and silent ones are closed after a while anyway.
coproc IDLE { "$HOSTILE" "$TRACER_SOCKET" idle 4200; }
read -r line <&"${IDLE[0]}"
echo "# $line of 4200 idle connections taken"
check "4200 idle connections: tracerd still answers within a second" \
	responsive
dir=$(session_cmd start --events "$OWN_EVENTS")
"$TRACEE" threads 2 20000 >/dev/null
session_cmd stop >/dev/null
n=$("$TRACECTL" view "$dir" | grep -c ' test:seq: ')
check "and a program traced meanwhile has all its events ($n of 40000)" \
	[ "$n" -eq 40000 ]
exec {IDLE[1]}>&-
wait $IDLE_PID
check "the log says so a few times, not 4200 ($(grep -c 'sent nothing whole' "$LOG"))" \
	[ "$(grep -c 'sent nothing whole' "$LOG")" -le 10 ]

# 7. A client that sends malformed frames again and again: each is
#    refused, and the log has at most 10 lines of it every 10 s.
before=$(grep -c 'disconnecting' "$LOG")
out=$("$HOSTILE" "$TRACER_SOCKET" garbage 2000)
n=$(( $(grep -c 'disconnecting' "$LOG") - before ))
check "2000 malformed clients ($out): $n log lines" [ "$n" -le 10 ]
check "tracerd still answers within a second" responsive
stop_daemon

# 6. Out of descriptors: tracerd refuses what it cannot take and pauses
#    accepting, instead of spinning on a socket that stays readable.
(ulimit -Sn 96 && ulimit -Hn 96 &&
	exec "$TRACERD" --socket "$TRACER_SOCKET" --output "$T/out" \
	--log "$LOG" --daemonize)
DPID=$("$TRACECTL" status | sed -n 's/^tracerd pid //p')
check "tracerd starts with 96 descriptors" [ -n "$DPID" ]
coproc IDLE { "$HOSTILE" "$TRACER_SOCKET" idle 150; }
read -r line <&"${IDLE[0]}"
echo "# $line of 150 idle connections taken"
a=$(cpu_ticks "$DPID")
sleep 1	# a measurement window, not a wait for something
b=$(cpu_ticks "$DPID")
check "out of descriptors, tracerd does not spin ($((b - a)) ticks in 1 s)" \
	[ $((b - a)) -le 20 ]
n=$(grep -c 'cannot accept: Too many open files' "$LOG")
check "and says so a few times ($n lines)" \
	bash -c "[ $n -ge 1 ] && [ $n -le 11 ]"
exec {IDLE[1]}>&-
wait $IDLE_PID
check "once they are gone, tracerd answers within a second" responsive
stop_daemon

# The limits are tracerd's options (tracerd(8), Threat model): fewer
# connections, a shorter silence, less call-site memory than the defaults.
check "tracerd starts with --max-clients 100 --silent-timeout 500 --max-site-memory 1M" \
	start_daemon --max-clients 100 --silent-timeout 500 --max-site-memory 1M
coproc IDLE { "$HOSTILE" "$TRACER_SOCKET" idle 150; }
read -r line <&"${IDLE[0]}"
held=${line#holding }
check "150 idle connections: tracerd holds at most 100 ($held)" \
	[ "$held" -le 100 ]
check "and still answers within a second" responsive
exec {IDLE[1]}>&-
wait $IDLE_PID
out=$("$HOSTILE" "$TRACER_SOCKET" silent 20)
ms=$(echo "$out" | awk '{ print $(NF - 1) }')
silent_closed() {
	[ "$(echo "$out" | awk '{ print $2 }')" -eq 20 ] &&
		[ "$ms" -ge 400 ] && [ "$ms" -lt 5000 ]
}
check "20 silent connections closed after about 500 ms ($out)" silent_closed
out=$("$HOSTILE" "$TRACER_SOCKET" sites 1000 1024 2>&1)
check "1,000 call sites of 1 KiB strings: refused past 1 MiB ($out)" \
	bash -c "echo '$out' | grep -q '^refused: '"
stop_daemon
check "tracerd starts (default settings)" start_daemon
out=$("$HOSTILE" "$TRACER_SOCKET" sites 1000 1024 2>&1)
check "the same 1,000 call sites: accepted under the default 32 MiB ($out)" \
	[ "$out" = accepted ]
stop_daemon

# 11. Pools of many processes: all of them together stay within
#     --max-total-memory (here 200 MiB, four default first segments of
#     55 MiB do not fit); a process that would pass it is refused,
#     counted, and runs untraced; the others' events are all there.
check "tracerd starts, all pools capped at 200 MiB" \
	start_daemon --max-total-memory 200M
dir=$(session_cmd start --events "$OWN_EVENTS")
hold_start 6 1000
status=$("$TRACECTL" status)
echo "$status" | sed 's/^/# /'
# One more while they hold the pools: refused too, it runs untraced, and
# with TRACER_VERBOSE says why.
TRACER_VERBOSE=1 "$TRACEE" print 1 >"$T/refused.out" 2>"$T/refused.err"
refused_rc=$?
hold_end
sed 's/^/# /' "$T/refused.err"
says_why() {
	[ "$refused_rc" -eq 0 ] && grep -q '^line 0 of 1$' "$T/refused.out" &&
	grep -q '^libtracer: tracerd refused this process: tracerd cannot set up this process: its pool would pass what all pools may take (--max-total-memory)$' \
		"$T/refused.err"
}
check "a seventh, refused, runs untraced (exit $refused_rc) and says why under TRACER_VERBOSE" \
	says_why
session_cmd stop >/dev/null
now=$(echo "$status" | sed -n 's/^pools .* in all (\([0-9]*\) KiB now).*/\1/p')
traced=$(echo "$status" | awk '$2 == "tracee"' | wc -l)
refused=$(echo "$status" | sed -n 's/^refused \([0-9]*\) .*/\1/p')
check "the six programs exit 0, traced or not" [ "$HOLD_BAD" -eq 0 ]
check "all pools together within 200 MiB (${now:-?} KiB)" \
	[ "${now:-999999999}" -le 204800 ]
check "$traced traced, ${refused:-0} refused: all six accounted for" \
	[ "$traced" -ge 1 -a $((traced + ${refused:-0})) -eq 6 -a "${refused:-0}" -ge 1 ]
n=$("$TRACECTL" view "$dir" | grep -c ' test:hold: ')
check "every event of the $traced traced ones is in the trace ($n)" \
	[ "$n" -eq $((traced * 1000)) ]

finish
