#!/bin/bash
# Signal handlers record into the buffer of the thread they interrupt, in
# the middle of its own records: every event of both is in the trace, in
# order, nothing torn. A handler that leaves by siglongjmp() is over for
# libtracer too. And libtracer preloaded into a program that does not
# know it.
. "$(dirname "$0")/lib.sh"

# 100,000 events of 24 bytes fit in the default 4 MiB channel, so none may
# be lost whatever tracerd's speed.
N=100000
check "tracerd starts" start_daemon
# storm NAME N [unregister]: tracee signals N in a session of the test's
# events only (the handler's proc:signal, libtracer's signal trampoline,
# would be dropped and counted with them); every event of the thread and
# of its handler must be there, in order.
storm() {
	local name=$1 N=$2 dir handled st
	shift 2
	dir=$(session_cmd start --events 'test:*')
	handled=$("$TRACEE" signals $N "$@")
	st=$?
	session_cmd stop >/dev/null
	if [ $st -eq 4 ]; then
		for what in "exits 0" "interrupted" "view" "all events"; do
			ok 0 "# SKIP $name: $what: no restartable sequence area to unregister here"
		done
		return
	fi
	check "$name: the program exits 0" [ $st -eq 0 ]
	check "$name: the timer interrupted it ($handled times)" [ "${handled:-0}" -gt 20 ]
	"$TRACECTL" view "$dir" >"$T/$name.view"
	check "$name: view reads the trace without error" [ $? -eq 0 ]
	# A handler that interrupts the thread while it takes its buffer
	# cannot record: its events are counted, and reported by tracer:lost
	# ("N events dropped before this thread had a buffer"); every other
	# one is there.
	awk -v N=$N -v H="$handled" '
		BEGIN { last = -1 }
		/ test:main: main / { if ($NF != m) { bad++; print "main: " $NF " after " m - 1 } m++ }
		/ test:signal: handler / {
			if ($NF <= last) { bad++; print "handler: " $NF " after " last }
			gaps += $NF - last - 1; last = $NF; h++
		}
		/ tracer:lost: [0-9]+ events dropped before / { dropped += $6 }
		/ lost [1-9]/ { bad++; print }
		END {
			gaps += H - 1 - last
			if (m != N || h + gaps != H || gaps != dropped) {
				print "main " m " of " N ", handler " h " of " H ", " gaps " missing, " dropped " reported dropped"; bad++
			}
			exit bad != 0
		}' "$T/$name.view" >"$T/$name.check"
	ok $? "$name: all $N events of the thread and all $handled of its handler, each in order (or counted as dropped)"
	sed "s/^/# /" "$T/$name.check"
	grep -E "lost [1-9]" "$T/$name.view" | sed "s/^/# /"
}
storm timer $N
# The same after the program unregistered the C library's restartable
# sequence area (some runtimes do, and a vfork child has none): the
# kernel no longer abandons a reservation a signal interrupts; libtracer's
# signal trampoline does it for the handlers it runs (common/rseq.h). The
# timer at 100 kHz: about one handler event for three of the loop's.
storm unregistered 30000 unregister

# A handler that runs while its thread takes in tracerd's update (here a
# switch, as for the clock's anchor every second): its events are
# recorded, not dropped, and the program lives. controlee's seccomp filter
# turns libtracer's wake-up of tracerd (an 8-byte write when the switch
# closes a vital sub-buffer) into SIGSYS, whose handler records test:sys
# and makes the write itself, as sandboxes do. The thread takes the switch
# in at its next event (TRACER_SIGNAL=none), or in the update signal's
# handler (the default), which once blocked SIGSYS too: the kernel then
# killed the program ("Bad system call").
CONTROLEE=./tests/integration/controlee
# no_sigsys CHECK...: controlee sigsys did not start; only x86-64 has it.
no_sigsys() {
	local what
	quit s
	for what in "$@"; do
		if [ "$(uname -m)" = x86_64 ]; then
			ok 1 "$what: controlee sigsys did not start"
		else
			ok 0 "# SKIP $what: no seccomp filter here (x86-64 only)"
		fi
	done
}
update_sigsys() {
	local how=$1 trapped sys sig rc
	if ! spawn s "$CONTROLEE" sigsys; then
		no_sigsys "$how: a handler in the update records" \
			"$how: the program lives"
		return
	fi
	dir=$(session_cmd start)
	[ "$(cmd s v)" = "ok vital" ] || echo "# the first event failed"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$TRACECTL" switch >/dev/null
		cmd s v >/dev/null
	done
	trapped=$(cmd s c)
	session_cmd stop >/dev/null
	quit s; rc=$?
	"$TRACECTL" view "$dir" >"$T/sys.view" 2>&1
	sys=$(grep -c " test:sys: syscall 1 " "$T/sys.view")
	sig=$(grep -c " proc:signal: signal 31 (SIGSYS) " "$T/sys.view")
	echo "# $how: $trapped handlers in the thread's update, $sys test:sys and $sig proc:signal recorded, exit $rc"
	check "$how: a handler in the update records (test:sys and proc:signal, each ${trapped:-0} times), nothing told lost" \
		eval '[ "${trapped:-0}" -gt 0 ] && [ "$sys" -eq "$trapped" ] &&
		      [ "$sig" -eq "$trapped" ] &&
		      ! grep -q " tracer:lost: " "$T/sys.view"'
	check "$how: the program lives, and exits 0" [ "$rc" -eq 0 ]
}
TRACER_SIGNAL=none update_sigsys "at the next event"
update_sigsys "in the update signal's handler"

# A handler that runs while its thread takes a buffer cannot record (its
# events are counted and told by tracer:lost); one that runs while the
# thread records its start for a session can. The filter now traps
# prctl(PR_GET_NAME), which libtracer calls for the thread's name at both
# moments. In each of two sessions, every event of the handlers is
# recorded or told lost, and what the first told is not told again.
if spawn s "$CONTROLEE" sigsys prctl; then
	before=$(cmd s c)
	for k in 1 2; do
		dir=$(session_cmd start)
		cmd s v >/dev/null
		now=$(cmd s c)
		session_cmd stop >/dev/null
		"$TRACECTL" view "$dir" >"$T/name$k.view" 2>&1
		trapped=$((now - before)); before=$now
		sys=$(grep -c " test:sys: syscall 157 " "$T/name$k.view") # prctl
		sig=$(grep -c " proc:signal: signal 31 (SIGSYS) " "$T/name$k.view")
		told=$(awk '/ tracer:lost: [0-9]+ events dropped before / { n += $6 } END { print n + 0 }' "$T/name$k.view")
		echo "# session $k: $trapped handlers, $sys test:sys and $sig proc:signal recorded, $told told lost"
		check "session $k: each of the handlers' events recorded or told lost, once ($sys + $sig + $told = 2 x $trapped)" \
			eval '[ "$trapped" -gt 0 ] && [ "$sys" -eq "$sig" ] &&
			      [ $((sys + sig + told)) -eq $((2 * trapped)) ]'
	done
	quit s
	check "the program lives, and exits 0" [ $? -eq 0 ]
else
	no_sigsys "session 1: handlers' events" "session 2: handlers' events" \
		"the program lives"
fi

# A handler that leaves by siglongjmp() never returns to libtracer's
# trampoline: the thread is out of the handler all the same, and does
# what only a thread outside one may (here: a program started outside
# any session connects to tracerd at its first event in one).
# jumped CMD WHERE [PROGRAM]: a controlee whose handler jumps out (CMD j
# or J), then records 100 events in a session started after.
jumped() {
	local out

	spawn j "${3:-$CONTROLEE}" burst
	out=$(cmd j "$1")
	check "a program's handler leaves by siglongjmp() ($2)" \
		[ "$out" = "ok jumped" ]
	dir=$(session_cmd start --events 'test:*')
	cmd j "r 100" >/dev/null
	session_cmd stop >/dev/null
	quit j
	check "the program exits 0" [ $? -eq 0 ]
	n=$("$TRACECTL" view "$dir" 2>/dev/null | grep -c ' test:burst: ')
	check "its later events are recorded, all 100 ($n)" [ "$n" -eq 100 ]
}
jumped j "on the thread's stack"
jumped J "on an alternate signal stack"
jumped j "a fortified build: __longjmp_chk()" \
	./tests/integration/controlee_fortified

# Preloaded into a program that was not built with it.
dir=$(session_cmd start)
lib=$(cd libtracer/.libs && pwd)/libtracer.so
# A sanitizer build of the library needs its runtime preloaded first.
runtime=$(ldd "$lib" | awk '/lib(asan|ubsan)/ { printf "%s ", $3 }')
out=$(LD_PRELOAD="$runtime$lib" /bin/echo hello); rc=$?
session_cmd stop >/dev/null
check "a preloaded program runs unchanged" [ "$rc" -eq 0 -a "$out" = hello ]
meta=$(ls "$dir"/echo-*/tracer/process.meta 2>/dev/null)
check "and was registered with tracerd (process.meta)" \
	eval '[ -n "$meta" ] && grep -q "^name echo$" "$meta"'

finish
