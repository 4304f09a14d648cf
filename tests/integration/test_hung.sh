#!/bin/bash
# A hung tracerd (SIGSTOP) while a session records: programs start and
# run as usual, a module loaded with dlopen() does not wait for it, and
# once tracerd runs again the processes are traced and it knows every
# call site. (Without a session, a program does not even connect: see
# test_start.sh.)
. "$(dirname "$0")/lib.sh"
DLOPENER=./tests/integration/dlopener
DLMOD=$(pwd)/tests/integration/.libs/dlmod.so
LIB=$(pwd)/libtracer/.libs/libtracer.so
PRELOAD=${RECORD_PRELOAD:+$RECORD_PRELOAD:}$LIB
# The default registration wait: the one a hung tracerd meets.
unset TRACER_REGISTER_TIMEOUT_MS

# in_status PID: wait (bounded) until tracectl status lists PID among the
# registered processes.
in_status() {
	local i
	for i in $(seq 1 200); do
		"$TRACECTL" status | awk -v p="$1" '/^waiting / { exit !f } $1 == p { f = 1 } END { exit !f }' &&
			return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

check "tracerd starts" start_daemon
session_cmd start >/dev/null
kill -STOP "$DPID"

# A preloaded program that knows nothing of libtracer.
out=$(LD_PRELOAD=$PRELOAD seq 3 | tr '\n' ' '); rc=${PIPESTATUS[0]}
ok $([ $rc -eq 0 ] && [ "$out" = "1 2 3 " ]; echo $?) \
	"tracerd stopped: a preloaded program runs, its output unchanged"

# A long-lived one is traced once tracerd runs again.
spawn sh env LD_PRELOAD="$PRELOAD" bash -c \
	'echo ready; while read -r l; do [ "$l" = q ] && exit 0; echo "ok $l"; done'
r=$(cmd sh hello)
check "tracerd stopped: a preloaded shell starts and answers" [ "$r" = "ok hello" ]
kill -CONT "$DPID"
check "tracerd running again: the shell registers (late reply handled)" in_status "$sh_pid"
quit sh

# A module with 2048 call sites (more than a socket buffer holds) loaded
# while tracerd is stopped.
spawn dl "$DLOPENER"
check "dlopener registers" in_status "$dl_pid"
kill -STOP "$DPID"
r=$(cmd dl "d $DLMOD")
check "tracerd stopped: dlopen() of a module with 2048 call sites completes" \
	[ "$r" = "ok 2048" ]
r=$(cmd dl "d $DLMOD")
check "and the program goes on" [ "$r" = "ok 2048" ]
kill -CONT "$DPID"

# tracerd gets every call site, on an intact connection.
dl_events() {
	"$TRACECTL" list --pid "$dl_pid" 2>/dev/null | grep -c '^dl:event'
}
for i in $(seq 1 200); do
	[ "$(dl_events)" -eq 2048 ] && break
	sleep 0.05
done
n=$(dl_events)
check "tracerd running again: it knows the module's 2048 call sites ($n)" \
	[ "$n" -eq 2048 ]
check "the process is still traced" in_status "$dl_pid"
quit dl
check "tracerd logged no protocol error" bash -c "! grep -qi 'protocol\|malformed\|bad frame' '$LOG'"
session_cmd stop >/dev/null

finish
