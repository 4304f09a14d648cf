#!/bin/bash
# fork() while the listener thread changes the filter: a child never
# inherits libtracer's locks held, so every child exits (a shell preloaded
# with libtracer forks a subshell per iteration while filters change as
# fast as tracectl can send them).
. "$(dirname "$0")/lib.sh"
lib=$(cd libtracer/.libs && pwd)/libtracer.so

check "tracerd starts" start_daemon
session_cmd start >/dev/null
# The sanitizer runtime first, in sanitizer builds. The timeout catches a
# child that hangs: under AddressSanitizer on a slow day only 1070 of
# the 1500 rounds ran in 120 s (2 processes a round, each registered).
LD_PRELOAD="${RECORD_PRELOAD:+$RECORD_PRELOAD:}$lib" timeout 600 bash -c '
	for i in $(seq 1 1500); do (exit 0); x=$(echo $i); done; echo done' \
	>"$T/shell.out" 2>"$T/shell.err" &
shell=$!
n=0
while kill -0 "$shell" 2>/dev/null && [ $n -lt 400 ]; do
	"$TRACECTL" filter "test:$n,-x:*" >/dev/null 2>&1
	n=$((n + 1))
done
wait "$shell"
rc=$?
echo "# $n filter changes while the shell forked"
check "every forked child exited: the shell finished (status $rc)" \
	[ $rc -eq 0 -a "$(cat "$T/shell.out")" = done ]
session_cmd stop >/dev/null
finish
