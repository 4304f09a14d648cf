#!/bin/bash
# How tracerd keeps up with the writers: its scheduling priority (--nice,
# -10 by default, taken only while a drain finds a ring 1/8 full and given
# back a second after; its autogroup's too when it leads its session;
# never with --nice 0; a bad value refused in one line), and the wake-up
# a default-channel writer sends only once its ring holds 1/64 unread: a
# thread that filled fewer sub-buffers than that and then waits still has
# them written out while it runs (by tracerd's timer), and a thread that
# fills more gets them written out as well.
# tracerd runs with its default settings.
. "$(dirname "$0")/lib.sh"

HOSTILE=./tests/integration/hostile

# nice_of PID: its nice value (field 19 of /proc/PID/stat; the command
# name, field 2, holds no blank here).
nice_of() {
	awk '{ print $19 }' /proc/"$1"/stat
}

# autogroup_nice PID: the nice of its autogroup, empty without autogroups.
autogroup_nice() {
	sed -n 's/.* nice \(-*[0-9]*\)$/\1/p' /proc/"$1"/autogroup 2>/dev/null
}

# await_nice PID NICE: until PID runs at NICE (polling, 10 s at most);
# prints the nice it has then.
await_nice() {
	local i
	for i in $(seq 200); do
		[ "$(nice_of "$1")" = "$2" ] && break
		sleep 0.05	# polling tracerd's state, not waiting it out
	done
	nice_of "$1"
}

# flood: a client whose two buffers' rings are full when tracerd first
# sees them (hostile.c): tracerd's drain finds them far behind.
flood() {
	local dir
	dir=$(session_cmd start --events="$OWN_EVENTS")
	"$HOSTILE" "$TRACER_SOCKET" flood 2 >/dev/null
	echo "$dir"
}

# ---- --nice ---------------------------------------------------------

base=$(nice_of $$)
check "tracerd starts" start_daemon
check "idle, tracerd runs at the nice it was started with ($(nice_of "$DPID"))" \
	[ "$(nice_of "$DPID")" = "$base" ]
# May we go down to -10? (nice(1) runs the command even when it may not:
# the nice it reports tells.)
if [ "$(nice -n -30 nice 2>/dev/null)" -le -10 ]; then
	check "... saying nothing about its priority in its log" \
		bash -c "! grep -q 'cannot raise' '$LOG'"
	dir=$(flood)
	n=$(await_nice "$DPID" -10)
	ag=$(autogroup_nice "$DPID")
	check "a drain far behind: tracerd takes nice -10 ($n)" [ "$n" = -10 ]
	check "... and its own autogroup too (${ag:-no autogroups})" \
		[ -z "$ag" -o "$ag" = -10 ]
	session_cmd stop >/dev/null
	n=$(await_nice "$DPID" "$base")
	ag=$(autogroup_nice "$DPID")
	check "caught up, it gives the priority back ($n)" [ "$n" = "$base" ]
	check "... its autogroup's too (${ag:-no autogroups})" \
		[ -z "$ag" -o "$ag" = 0 ]
else
	check "not allowed to raise its priority, tracerd says so in one line" \
		grep -q "cannot raise its priority to nice -10: .*--nice)$" "$LOG"
	dir=$(flood)
	session_cmd stop >/dev/null
	check "... and a drain far behind leaves it at its nice" \
		[ "$(nice_of "$DPID")" = "$base" ]
fi
stop_daemon

# (The stop is answered once the flood is written out; a priority taken
# for it would be held a second longer.)
check "tracerd --nice 0 starts" start_daemon --nice 0
dir=$(flood)
session_cmd stop >/dev/null
check "with --nice 0 a drain far behind leaves its priority as it was" \
	[ "$(nice_of "$DPID")" = "$base" ]
ag=$(autogroup_nice "$DPID")
check "... and its autogroup's too (${ag:-no autogroups})" \
	[ -z "$ag" -o "$ag" = 0 ]
stop_daemon

out=$("$TRACERD" --nice 20 2>&1); rc=$?
check "--nice 20 is refused (exit $rc) in one line naming the range" \
	[ $rc -eq 2 -a "$(echo "$out" | head -n 1)" = \
		"tracerd: invalid --nice '20': expected a number from -20 to 19" ]
out=$("$TRACERD" --nice -3x 2>&1); rc=$?
check "--nice -3x is refused (exit $rc)" \
	[ $rc -eq 2 -a "$(echo "$out" | head -n 1)" = \
		"tracerd: invalid --nice '-3x': expected a number from -20 to 19" ]

# ---- below and above the wake-up mark -------------------------------

check "tracerd starts again with its defaults" start_daemon

# file_bytes DIR PID: bytes in the default-channel files of process PID.
file_bytes() {
	cat "$1"/tracee-"$2"/default-* 2>/dev/null | wc -c
}

# await_bytes DIR PID MIN: until those files hold MIN bytes (polling what
# tracerd writes, 10 s at most); prints what they hold.
await_bytes() {
	local i n
	for i in $(seq 200); do
		n=$(file_bytes "$1" "$2")
		[ "$n" -ge "$3" ] && break
		sleep 0.05	# polling the files, not waiting it out
	done
	echo "$n"
}

# held EVENTS MIN WHAT: one thread records EVENTS events and waits; its
# closed sub-buffers (at least MIN bytes) reach its files meanwhile.
held() {
	local pid n
	hold_start 1 "$1"
	pid=${HOLD_PIDS# }
	n=$(await_bytes "$dir" "$pid" "$2")
	check "$3, waiting: its closed sub-buffers are written out while it runs ($n bytes)" \
		[ "$n" -ge "$2" ]
	hold_end
	check "... and it exits 0" [ "$HOLD_BAD" -eq 0 ]
}

dir=$(session_cmd start --events="$OWN_EVENTS")
# 1,500 events of 24 bytes: two closed sub-buffers of 16 KiB (32,768
# bytes of packets) and an open one, 36 KB of a 4 MiB ring, below the
# 64 KiB that wakes tracerd.
held 1500 32000 "a thread below the wake-up mark"
# 40,000 events: about 59 sub-buffers, well past the mark.
held 40000 900000 "a thread past the mark"
session_cmd stop >/dev/null
n=$("$TRACECTL" view --no-symbols "$dir" | grep -c ' test:hold: ')
check "every event of both is in the trace ($n of 41500)" [ "$n" -eq 41500 ]

finish
