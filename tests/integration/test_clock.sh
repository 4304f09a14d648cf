#!/bin/bash
# The trace clock (common/clock.h, doc/clock.md):
#   - tracerd --clock tsc, on a CPU with an invariant TSC: status names the
#     clock, its frequency and why, and whether records are stamped in
#     ticks that tracerd converts (a TSC above 1.1 GHz: every check below
#     then reads converted times, and status counts the packets); the
#     CTF metadata describes it
#     (tracer_clock "tsc", tracer_tsc_frequency); every clock:sample stamp
#     lies within 1 us of the CLOCK_MONOTONIC values the program read just
#     before and after it, for 40 samples spread over 4 s (new anchors
#     taken meanwhile); babeltrace2's clock values are view's stamps to the
#     nanosecond; a signal storm (a timer's handler recording into the
#     thread's buffer between its records) keeps every stamp in order; a
#     tracerd killed with SIGKILL and started again goes on with the line
#     the killed one left (no step for the processes); a session already
#     recording while a new tracerd calibrates keeps every stamp within
#     1 us as its threads move from CLOCK_MONOTONIC to the TSC (ticks);
#     a program registered after the calibration (its pool made ahead,
#     before it) stamps ticks from its first event: every packet of it
#     converted; one that records before tracerd's reply (its own
#     segment, the state page's clock) has every stamp right too;
#   - TRACER_CLOCK=monotonic in one program's environment under that
#     tracerd: its metadata says "monotonic", its stamps lie between the
#     values it read, exactly;
#   - tracerd --clock monotonic: status says so and why; stamps exact;
#   - tracerd's default: the TSC only where the kernel's clocksource is
#     'tsc'; otherwise status says which clocksource it is;
#   - a bad --clock or TRACER_CLOCK: one line naming it, exit status 2.
. "$(dirname "$0")/lib.sh"

CLOCKEE=./tests/integration/clockee
CHECK="python3 $(dirname "$0")/clock_check.py"

# The one process directory of session directory $1 whose name starts $2.
pdir() {
	local d=("$1"/"$2"-[0-9]*/)
	[ -d "${d[0]}" ] && echo "${d[0]%/}"
}

# run_clockee NAME ROUNDS PERIOD_MS [ENV...]: a session around clockee;
# view's output in $T/NAME.view, the session directory in $T/NAME.dir.
run_clockee() {
	local name=$1 rounds=$2 period=$3 dir
	shift 3
	dir=$(session_cmd start --events 'clock:*')
	env "$@" "$CLOCKEE" "$rounds" "$period" || return 1
	session_cmd stop >/dev/null
	echo "$dir" >"$T/$name.dir"
	"$TRACECTL" view "$dir" >"$T/$name.view"
}

# clock_ok NAME TOL [BT]: clock_check.py on NAME's view (and babeltrace2's
# output), its complaints as TAP comments, its summary in $T/NAME.sum.
clock_ok() {
	$CHECK "$T/$1.view" "$2" ${3:+"$3"} >"$T/$1.sum" 2>"$T/$1.bad"
	local rc=$?
	sed 's/^/# /' "$T/$1.bad" | head -n 20
	return $rc
}

usable=yes
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo ||
	usable=no
[ "$(uname -m)" = x86_64 ] || usable=no
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)

# --- the TSC, forced -----------------------------------------------------
if [ $usable = yes ]; then
	check "tracerd --clock tsc starts" start_daemon --clock tsc
	await_clock
	check "status: clock tsc, its frequency and why" \
		grep -qE "^clock   tsc \([0-9]+ Hz, -?[0-9]+ ns off CLOCK_MONOTONIC at the last anchor\): invariant TSC, clocksource '.*' \(forced\)(; records stamped in ticks, converted by tracerd)?$" "$T/st"
	sed 's/^/# /' "$T/st" | grep '# clock'
	# Above 1.1 GHz the writers leave the conversion to tracerd; the
	# stamps below then come from it.
	hz=$(sed -n 's/^clock   tsc (\([0-9]*\) Hz.*/\1/p' "$T/st")
	if [ "${hz:-0}" -gt 1100000000 ]; then
		check "status: a $hz Hz TSC, so records are stamped in ticks and converted by tracerd" \
			grep -q "; records stamped in ticks, converted by tracerd$" "$T/st"
	else
		check "status: a ${hz:-0} Hz TSC, so writers convert to ns themselves" \
			eval '! grep -q "records stamped in ticks" "$T/st"'
	fi
	run_clockee tsc 40 100
	check "clockee under the TSC clock exits 0" [ $? -eq 0 ]
	# Converted by tracerd, so written in ticks by clockee: status
	# counts the packets (none where writers convert themselves).
	"$TRACECTL" status >"$T/st2" 2>&1
	sed 's/^/# /' "$T/st2" | grep '# clock'
	conv=$(sed -n 's/^clock .* (\([0-9]*\) packets so far)$/\1/p' "$T/st2")
	if [ "${hz:-0}" -gt 1100000000 ]; then
		check "clockee wrote its records in ticks: tracerd converted ${conv:-0} packets" [ "${conv:-0}" -gt 0 ]
	else
		check "no packet converted from ticks at ${hz:-0} Hz" [ -z "$conv" ]
	fi
	d=$(cat "$T/tsc.dir")
	p=$(pdir "$d" clockee)
	check "the metadata describes the TSC clock and its frequency" \
		eval 'grep -q "tracer_clock = \"tsc\";" "$p/metadata" &&
		      grep -qE "tracer_tsc_frequency = [0-9]{6,};" "$p/metadata" &&
		      grep -q "description = \"CLOCK_MONOTONIC nanoseconds, from the TSC" "$p/metadata"'
	bt=
	if command -v babeltrace2 >/dev/null; then
		babeltrace2 --clock-cycles --no-delta "$p" >"$T/tsc.bt" 2>"$T/tsc.bterr"
		check "babeltrace2 reads the TSC-stamped trace" \
			eval '[ $? -eq 0 ] && [ ! -s "$T/tsc.bterr" ]'
		bt=$T/tsc.bt
	else
		ok 0 "# SKIP babeltrace2 is not installed (scripts/bootstrap)"
	fi
	clock_ok tsc 1000 "$bt"
	ok $? "every TSC stamp within 1 us of CLOCK_MONOTONIC around it, over 4 s ($(cat "$T/tsc.sum"))${bt:+; babeltrace2's clock values are view's to the ns}"

	run_clockee forced 5 10 TRACER_CLOCK=monotonic
	p=$(pdir "$(cat "$T/forced.dir")" clockee)
	check "TRACER_CLOCK=monotonic in a program: its metadata says monotonic" \
		eval 'grep -q "tracer_clock = \"monotonic\";" "$p/metadata" &&
		      grep -q "description = \"CLOCK_MONOTONIC (clock_gettime)" "$p/metadata"'
	clock_ok forced 0
	ok $? "and its stamps lie between the values it read, exactly ($(cat "$T/forced.sum"))"

	# The storm: 20,000 events of a thread, a timer's handler recording
	# in between (tracee signals).
	dir=$(session_cmd start --events 'test:*')
	handled=$("$TRACEE" signals 20000)
	session_cmd stop >/dev/null
	"$TRACECTL" view "$dir" >"$T/storm.view"
	awk -v N=20000 '
		{ split($1, s, "."); t = s[1] * 1000000000 + s[2]
		  if (t < last) { bad++; print "back in time at line " NR }
		  last = t }
		/ test:main: main / { if ($NF != m) bad++; m++ }
		END { if (m != N) { print "main " m " of " N; bad++ }
		      exit bad != 0 }' "$T/storm.view" >"$T/storm.check"
	ok $? "a signal storm under the TSC clock ($handled handler runs): every stamp in order, every event of the thread there"
	sed 's/^/# /' "$T/storm.check" | head -n 5
	# Killed and started again: the new tracerd goes on with the line
	# the old one left on the state page, so processes see no step.
	kill -KILL "$DPID" && tail --pid="$DPID" -f /dev/null
	DPID=
	check "tracerd --clock tsc started again after SIGKILL" start_daemon --clock tsc
	check "it keeps the line the killed one left (log)" \
		grep -q "trace clock: TSC at [0-9]* Hz, the line the previous tracerd left (no step)" "$LOG"
	run_clockee again 10 50
	clock_ok again 1000
	ok $? "and its stamps are within 1 us of CLOCK_MONOTONIC ($(cat "$T/again.sum"))"
	stop_daemon
	# A session already recording when a new tracerd (no line left)
	# calibrates: the threads start on CLOCK_MONOTONIC, take the TSC
	# at their next event after the calibration, ticks above 1.1 GHz.
	rm -f "$TRACER_SOCKET.state"
	check "a new tracerd with no line to keep starts" start_daemon --clock tsc
	run_clockee calib 30 10
	clock_ok calib 1000
	ok $? "a session across its calibration: every stamp within 1 us of CLOCK_MONOTONIC, before and after the change ($(cat "$T/calib.sum"))"
	check "all 30 samples there" grep -q "^samples 30 " "$T/calib.sum"
	"$TRACECTL" status >"$T/st3" 2>&1
	conv=$(sed -n 's/^clock .* (\([0-9]*\) packets so far)$/\1/p' "$T/st3")
	if [ "${hz:-0}" -gt 1100000000 ]; then
		check "and the later ones in ticks: tracerd converted ${conv:-0} packets" [ "${conv:-0}" -gt 0 ]
	else
		check "no packet converted from ticks at ${hz:-0} Hz" [ -z "$conv" ]
	fi
	check "the calibration came while the session recorded (log: between its start and its stop)" \
		eval 'sed -n "/^tracerd: session [0-9]* started/,/^tracerd: session [0-9]* stopped/p" "$LOG" |
		      grep -q "trace clock: TSC at [0-9]* Hz$"'
	stop_daemon
	# A program that registers after the calibration takes a pool made
	# ahead, before it (tracerd/stock.c): its control page must carry
	# the line published since, so that the program stamps ticks from
	# its first event rather than at tracerd's next anchor.
	rm -f "$TRACER_SOCKET.state"
	calibrated=$(grep -c "trace clock: TSC at [0-9]* Hz$" "$LOG")
	check "tracerd --clock tsc starts afresh" start_daemon --clock tsc
	check "it calibrates (log)" \
		[ "$(await_log "trace clock: TSC at [0-9]* Hz$" $((calibrated + 1)))" -gt "$calibrated" ]
	run_clockee late 5 10
	clock_ok late 1000
	ok $? "a program started after the calibration: its stamps within 1 us of CLOCK_MONOTONIC ($(cat "$T/late.sum"))"
	"$TRACECTL" status >"$T/st4" 2>&1
	conv=$(sed -n 's/^clock .* (\([0-9]*\) packets so far)$/\1/p' "$T/st4")
	pk=$(python3 "$(dirname "$0")/ctf_check.py" counters "$(cat "$T/late.dir")" |
	     sed -n 's/^files [0-9]* packets \([0-9]*\) .*/\1/p')
	if [ "${hz:-0}" -gt 1100000000 ]; then
		# Every packet but the one tracerd writes itself (its end).
		[ "${conv:-0}" -gt 0 ] && [ "$((conv + 1))" = "${pk:-0}" ]
		ok $? "and every packet it wrote in ticks: tracerd converted ${conv:-0} of ${pk:-0} packets, all but the end tracerd wrote"
	else
		check "no packet converted from ticks at ${hz:-0} Hz" [ -z "$conv" ]
	fi
	# A program that records before tracerd's reply (a segment of its
	# own, the state page's clock: libtracer/client.c, PENDING), then
	# on its control page's: every stamp right across the two. (Only
	# a session of the default events lets a program record at once.)
	dir=$(session_cmd start)
	env -u TRACER_REGISTER_TIMEOUT_MS TRACER_VERBOSE=1 "$CLOCKEE" 20 5 \
		2>"$T/early.err"
	session_cmd stop >/dev/null
	"$TRACECTL" view "$dir" >"$T/early.view"
	check "a program that does not wait for tracerd's reply records at once (its log)" \
		grep -q 'recording at once into a segment of its own' "$T/early.err"
	clock_ok early 1000
	ok $? "its stamps, before the reply and after, within 1 us of CLOCK_MONOTONIC ($(cat "$T/early.sum"))"
	check "all 20 samples there" grep -q "^samples 20 " "$T/early.sum"
	stop_daemon
else
	for i in $(seq 26); do
		ok 0 "# SKIP no invariant TSC on this machine"
	done
fi

# --- CLOCK_MONOTONIC, asked for ------------------------------------------
check "tracerd --clock monotonic starts" start_daemon --clock monotonic
"$TRACECTL" status >"$T/st" 2>&1
check "status: clock monotonic, asked for" \
	grep -qx "clock   monotonic: asked for (--clock monotonic)" "$T/st"
run_clockee mono 5 10
p=$(pdir "$(cat "$T/mono.dir")" clockee)
check "its metadata says monotonic" grep -q 'tracer_clock = "monotonic";' "$p/metadata"
clock_ok mono 0
ok $? "stamps between the values the program read, exactly ($(cat "$T/mono.sum"))"
stop_daemon

# --- the default -----------------------------------------------------------
check "tracerd starts with the default clock" start_daemon
await_clock
sed 's/^/# /' "$T/st" | grep '# clock'
if [ "$usable/$cs" = yes/tsc ]; then
	check "the default is the TSC where the kernel keeps time with it" \
		grep -qE "^clock   tsc \(.*\): invariant TSC, clocksource 'tsc'(; records stamped in ticks, converted by tracerd)?$" "$T/st"
elif [ $usable = yes ]; then
	check "the default is CLOCK_MONOTONIC where the clocksource is '$cs', and status says so" \
		grep -qx "clock   monotonic: the kernel's clocksource is '$cs', not 'tsc'" "$T/st"
else
	check "the default is CLOCK_MONOTONIC without an invariant TSC, and status says why" \
		grep -q "^clock   monotonic: " "$T/st"
fi
stop_daemon

# --- mistakes --------------------------------------------------------------
"$TRACERD" --socket "$T/x" --output "$T/xo" --clock sundial >"$T/o" 2>"$T/e"
rc=$?
check "--clock sundial: exit 2 and a line naming it" \
	eval '[ $rc -eq 2 ] && [ ! -s "$T/o" ] && head -n 1 "$T/e" | grep -qx "tracerd: invalid --clock '"'sundial'"': not auto, tsc nor monotonic"'
TRACER_CLOCK=fast "$TRACERD" --socket "$T/x" --output "$T/xo" >"$T/o" 2>"$T/e"
rc=$?
check "TRACER_CLOCK=fast: exit 2 and a line naming it" \
	eval '[ $rc -eq 2 ] && head -n 1 "$T/e" | grep -qx "tracerd: invalid TRACER_CLOCK '"'fast'"': not auto, tsc nor monotonic"'

finish
