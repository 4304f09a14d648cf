#!/bin/bash
# tracerd killed with SIGKILL while a program traces, then started again:
# the program never blocks, hands its buffers to the new tracerd, and
# nothing it recorded is lost: what the old tracerd wrote is in the first
# session, what it recorded while no daemon ran and after is in the next,
# and neither claims a loss (the first session goes round the ring more
# than once, so that the new tracerd reads slots the old one had read).
. "$(dirname "$0")/lib.sh"

CONTROLEE=./tests/integration/controlee
N=1000
# Before the restart: 180000 events of 24 bytes, 4.3 MB, more than the
# default ring (256 x 16 KiB), in two bursts that each fit (a switch
# between: written out before the next).
B1=100000 B2=80000
M=$((B1 + B2))

# seqs DIR: the test:burst sequence numbers in DIR, one per line.
seqs() {
	"$TRACECTL" view "$1" 2>/dev/null |
		sed -n 's/^.* test:burst: seq \([0-9]*\) check .*$/\1/p'
}

# contiguous FILE FROM TO: FILE holds exactly FROM..TO-1, in order.
contiguous() {
	[ "$(tr '\n' ' ' <"$1")" = "$(seq "$2" $(($3 - 1)) | tr '\n' ' ')" ]
}

check "tracerd starts" start_daemon
dir1=$(session_cmd start)
spawn ctl "$CONTROLEE" burst
check "the program starts" [ $? -eq 0 ]
r1=$(cmd ctl "r $B1")
"$TRACECTL" switch >/dev/null
r2=$(cmd ctl "r $B2")
check "it records $M events ($r1, $r2)" [ "$r1 $r2" = "ok $B1 ok $M" ]
"$TRACECTL" switch >/dev/null
kill_daemon

# No daemon: the program goes on, and its events go into its buffers.
check "with tracerd dead, it records $N more without blocking" \
	[ "$(cmd ctl "r $N")" = "ok $((M + N))" ]

check "tracerd starts again" start_daemon
dir2=$(session_cmd start)
# It looks for a new tracerd every 200 ms: poll the log for the adoption.
check "the new tracerd adopted its buffers" \
	await_line "pid $ctl_pid: pool adopted"
check "it records $N more" [ "$(cmd ctl "r $N")" = "ok $((M + N * 2))" ]
quit ctl
check "the program exits 0" [ $? -eq 0 ]
"$TRACECTL" stop >/dev/null

seqs "$dir1" >"$T/s1"
seqs "$dir2" >"$T/s2"
check "the first session holds events 0..$((M - 1))" contiguous "$T/s1" 0 $M
awk 'NR == 1 || NR % 500 == 0 { printf "# s2 line %d: %s\n", NR, $0 } END { printf "# s2: %d lines\n", NR }' "$T/s2"
check "the second holds $M..$((M + N * 2 - 1)): the ones recorded while no daemon ran, then the rest" \
	contiguous "$T/s2" $M $((M + N * 2))
for d in "$dir1" "$dir2"; do
	n=$("$TRACECTL" view "$d" 2>/dev/null | grep -c ' tracer:lost: ')
	check "no loss told in $(basename "$d") ($n markers): nothing was lost" \
		[ "$n" -eq 0 ]
done
# ---- tracerd dies just after its reply, before the program read it ------
# A program started in a session registers without waiting and reads
# tracerd's reply at its next event. When tracerd answered while the
# program was blocked (in read(), here) and then died, that event finds
# the reply and the hang-up together: registered, then cut off, the
# program hands its pool to the next tracerd as above.
stop_daemon
check "a third tracerd starts" start_daemon
session_cmd start >/dev/null
kill -STOP "$DPID"	# the program's Register waits in the socket
TRACER_VERBOSE=1 spawn late "$CONTROLEE" burst
kill -CONT "$DPID"
await_log "registered pid $late_pid " 1 >/dev/null
"$TRACECTL" status >/dev/null	# a later loop turn: the reply went out
kill_daemon
check "with the reply unread and tracerd dead, it records $N events" \
	[ "$(cmd late "r $N")" = "ok $N" ]
check "a fourth tracerd starts" start_daemon
dir4=$(session_cmd start)
check "the new tracerd adopted its buffers" \
	await_line "pid $late_pid: pool adopted"
check "it records $N more" [ "$(cmd late "r $N")" = "ok $((N * 2))" ]
quit late
check "the program exits 0" [ $? -eq 0 ]
"$TRACECTL" stop >/dev/null
seqs "$dir4" >"$T/s4"
check "the new session holds 0..$((N * 2 - 1))" contiguous "$T/s4" 0 $((N * 2))
finish
