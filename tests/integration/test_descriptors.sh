#!/bin/bash
# A traced program's descriptors are its own: libtracer's sit at the top of
# the range, hidden from the program's close()/dup*() calls. A shell
# script writing through `exec 6>log`, a program that dup2()s onto 3..20,
# and daemons that close every descriptor (a close() loop, closefrom(),
# close_range(), dup2() over everything) behave as untraced and stay
# traced to their exit; one that closes them with the raw system call is
# traced again once libtracer reconnects; one that can no longer make a
# socket (seccomp) ends its trace saying why. tracerd runs with its
# default settings.
. "$(dirname "$0")/lib.sh"
FDEE=./tests/integration/fdee
LIB=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$(pwd)/libtracer/.libs/libtracer.so

check "tracerd starts" start_daemon

# traced CMD...: run CMD preloaded (the session is recording).
traced() {
	LD_PRELOAD=$LIB "$@"
}

# view DIR: the session's events, addresses bare.
view() {
	"$TRACECTL" view --no-symbols --no-fd-names "$1"
}

# ---- numbers the program sees -------------------------------------------

session_cmd start >/dev/null
"$FDEE" first >"$T/first.plain"
traced "$FDEE" first >"$T/first.traced"
check "the first open() returns 3 and dup() 4, as untraced" \
	cmp -s "$T/first.plain" "$T/first.traced"

printf 'exec 6>"$1"\nfor i in $(seq 5000); do echo $i >&6; done\n' \
	>"$T/six.sh"
bash "$T/six.sh" "$T/six.plain"
traced bash "$T/six.sh" "$T/six.traced"
check "bash 'exec 6>log' writing 5000 lines: the log is byte-identical" \
	cmp -s "$T/six.plain" "$T/six.traced"

"$FDEE" dup2 "$T/dup2.plain" >/dev/null
traced "$FDEE" dup2 "$T/dup2.traced" >/dev/null
check "dup2() of a file onto 3..20: the file is byte-identical" \
	cmp -s "$T/dup2.plain" "$T/dup2.traced"
dir=$(session_cmd stop)
view "$dir" >"$T/first.view"
check "bash's 5000 redirections to fd 6 are in the trace" \
	[ "$(grep -c " bash .* libc:dup2: fd 6 newfd 1 result 1$" \
		"$T/first.view")" -eq 5000 ]

# ---- daemons closing everything -----------------------------------------

# closes WAY: run `fdee close WAY` untraced and traced: the same output and
# exit status. Traced, once it has closed everything, the session's filter
# starts recording libc:open: only a process still connected gets the
# change, and then its three later opens and its exit are in the trace.
closes() {
	local way=$1 n pid st
	mkdir -p "$T/c-$way.plain" "$T/c-$way.traced"
	echo go | "$FDEE" close "$way" "$T/c-$way.plain" 3 \
		>"$T/c-$way.plain.out"
	echo "exit $?" >>"$T/c-$way.plain.out"
	sed -i "s|$T/c-$way.plain|DIR|" "$T/c-$way.plain.out"
	rm -f "$T/c.in"
	mkfifo "$T/c.in"
	session_cmd start --events 'proc:*,tracer:*,libc:close*' >/dev/null
	LD_PRELOAD=$LIB "$FDEE" close "$way" "$T/c-$way.traced" 3 \
		<"$T/c.in" >"$T/c-$way.traced.out" &
	pid=$!
	exec 7>"$T/c.in"
	wait_closed "$T/c-$way.traced.out"
	# Gone: the raw system call; dup2() over every number up to the
	# limit leaves no room to move ours to. Back once it closes them.
	case $way in raw|dup2) wait_log "pid $pid (fdee) connected again" ;; esac
	"$TRACECTL" filter 'proc:*,tracer:*,libc:close*,libc:open' \
		>"$T/c-$way.filter" 2>&1
	echo go >&7
	exec 7>&-
	wait "$pid"
	echo "exit $?" >>"$T/c-$way.traced.out"
	dir=$(session_cmd stop)
	sed -i "s|$T/c-$way.traced|DIR|" "$T/c-$way.traced.out"
	check "close by $way: the same output and exit status as untraced" \
		cmp -s "$T/c-$way.plain.out" "$T/c-$way.traced.out"
	check "close by $way: a filter change afterwards reaches it" \
		grep -qx "filter '.*' applied to 1 process(es)" "$T/c-$way.filter"
	view "$dir" >"$T/c-$way.view"
	n=$(grep -c "libc:open: path $T/c-$way.traced/after-[123] .* fd 3$" \
		"$T/c-$way.view")
	check "close by $way: its later opens ($n of 3) and its proc:exit are in the trace" \
		[ "$n" -eq 3 -a "$(grep -c " $pid .*proc:exit: status 0$" \
				  "$T/c-$way.view")" -eq 1 ]
}

# wait_line PATTERN FILE: until FILE has a line matching PATTERN (polling
# what the program or tracerd writes, 30 s at most).
wait_line() {
	for i in $(seq 300); do
		grep -q "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}
wait_closed() { wait_line '^closed$' "$1"; }
wait_log() { wait_line "$1" "$LOG"; }

for way in loop closefrom close_range dup2 raw; do
	closes "$way"
done
check "a raw close_range(3, ~0) is noticed: it connects again" \
	grep -q "(fdee) connected again" "$LOG"

# Back after a raw close, a process is waited for like any other: stopped,
# it does not confirm a filter change, and tracectl says so instead of
# "applied" (taken for the dormant process it was, whose confirmation is
# not waited for, it was told "applied" before its listener read the
# filter, and its next events missed it).
mkfifo "$T/w.in"
mkdir -p "$T/w"
session_cmd start --events 'proc:*,tracer:*,libc:close*' >/dev/null
LD_PRELOAD=$LIB "$FDEE" close raw "$T/w" 3 <"$T/w.in" >"$T/w.out" &
pid=$!
exec 7>"$T/w.in"
wait_closed "$T/w.out"
wait_log "pid $pid (fdee) connected again"
kill -STOP "$pid"
"$TRACECTL" filter 'proc:*,tracer:*,libc:close*,libc:open' >"$T/w.filter" 2>&1
kill -CONT "$pid"
check "back after a raw close and stopped: named as not confirming the filter ($(tr '\n' ' ' <"$T/w.filter"))" \
	grep -q "did not confirm the filter within .*(pid $pid)" "$T/w.filter"
echo go >&7
exec 7>&-
wait "$pid"
session_cmd stop >/dev/null

# ---- tracing made impossible ---------------------------------------------

mkfifo "$T/sec.in"
mkdir -p "$T/sec"
session_cmd start >/dev/null
LD_PRELOAD=$LIB "$FDEE" seccomp "$T/sec" <"$T/sec.in" >"$T/sec.out" &
sec_pid=$!
exec 7>"$T/sec.in"
wait_log "pid $sec_pid is not traced from here"
echo go >&7
exec 7>&-
wait "$sec_pid"
check "a program that forbids socket() and closes everything runs on (exit 0)" \
	[ $? -eq 0 -a "$(tail -n 1 "$T/sec.out")" = "after-1 fd 3" ]
dir=$(session_cmd stop)
view "$dir" >"$T/sec.view"
check "its trace ends saying why: not traced from here (Operation not permitted)" \
	bash -c "grep ' $sec_pid ' '$T/sec.view' | tail -n 1 |
		grep -q 'tracer:process_gone: pid $sec_pid is not traced from here.*(Operation not permitted)'"

finish
