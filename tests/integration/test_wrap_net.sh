#!/bin/bash
# Socket options, socket pairs, epoll registrations, name lookups, signals
# sent, children waited for and sleeps, as a user reads them in the trace
# (issue 19): netuser (not linked with libtracer, preloaded) makes each
# call, some failing on purpose; every event holds the call's arguments,
# result and errno; the waits name the child and its status decoded; a
# sleep's entry/exit pair spans at least the time asked; netuser's own
# results are the same untraced. Then a real program: a shell's wait for
# its background child.
. "$(dirname "$0")/lib.sh"
NETUSER=./tests/integration/netuser

check "tracerd starts" start_daemon

# record NAME CMD...: trace CMD (every event); stdout in $T/NAME.out,
# stderr in $T/NAME.err, the view in $T/NAME.view; rc in $rc.
record() {
	local name=$1
	shift
	trace_run "$name" --events '*' -- "$@"
	rc=$?
	"$TRACECTL" view --no-symbols "$dir" >"$T/$name.view" 2>"$T/$name.verr"
}
# msgs VIEW EVENT: the messages of EVENT (pid tid message), in order,
# without the view's notes on descriptors ("fd 6<socket:[inet]>").
msgs() {
	awk -v e="$2:" '$5 == e { m = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", m);
		print $3, $4, m }' "$1" | sed -E 's/([0-9])<[^>]*>/\1/g'
}
# has VIEW EVENT MESSAGE: process $pid recorded EVENT with MESSAGE.
has() {
	msgs "$1" "$2" | awk -v p="$pid" '$1 == p' | cut -d" " -f3- |
		grep -qxF -- "$3"
}

"$NETUSER" run "$T/plain.vars" >"$T/plain.out" 2>&1
check "netuser passes its own checks untraced" [ $? -eq 0 ]
record net "$NETUSER" run "$T/net.vars"
check "netuser passes its own checks traced (results and errno right)" \
	eval '[ $rc -eq 0 ] && [ -n "$dir" ]'
check "netuser prints the same traced and untraced" \
	cmp -s "$T/plain.out" "$T/net.out"
var() { sed -n "s/^$1 //p" "$T/net.vars"; }
pid=$(var self)
V=$T/net.view
read -r sv0 sv1 <<<"$(var socketpair)"

# ---- sockets ------------------------------------------------------------------
check "socketpair: domain, type, protocol, both fds, the result" \
	has "$V" libc:socketpair "domain 1 type 0x1 protocol 0 fds $sv0 $sv1 result 0"
check "a failing socketpair: fds -1, errno EOPNOTSUPP" \
	has "$V" libc:socketpair "domain 2 type 0x1 protocol 0 fds -1 -1 result -1 errno EOPNOTSUPP"
check "setsockopt SO_SNDBUF: level, optname, its name, the int value" \
	has "$V" libc:setsockopt "fd $sv0 level 1 optname 7 option SO_SNDBUF optlen 4 value 65536 result 0"
check "getsockopt SO_TYPE: the value the call gave back" \
	has "$V" libc:getsockopt "fd $sv0 level 1 optname 3 option SO_TYPE optlen 4 value 1 result 0"
check "setsockopt TCP_NODELAY (level IPPROTO_TCP)" \
	has "$V" libc:setsockopt "fd $(var tcp) level 6 optname 1 option TCP_NODELAY optlen 4 value 1 result 0"
check "a failing setsockopt: errno EBADF" \
	has "$V" libc:setsockopt "fd -1 level 1 optname 2 option SO_REUSEADDR optlen 4 value 1 result -1 errno EBADF"
check "a failing getsockopt: errno ENOTSOCK, no value" \
	has "$V" libc:getsockopt "fd $(var pipe) level 1 optname 3 option SO_TYPE optlen 0 value 0 result -1 errno ENOTSOCK"
ep=$(var epoll)
check "epoll_ctl ADD, MOD, DEL with the events mask, in order" \
	eval '[ "$(msgs "$V" libc:epoll_ctl | cut -d" " -f3- | head -n 3)" = \
"epfd $ep op ADD fd $sv0 events 0x1 result 0
epfd $ep op MOD fd $sv0 events 0x5 result 0
epfd $ep op DEL fd $sv0 events 0 result 0" ]'
check "a failing epoll_ctl: errno ENOENT" \
	has "$V" libc:epoll_ctl "epfd $ep op DEL fd $sv0 events 0 result -1 errno ENOENT"

# ---- name lookups -------------------------------------------------------------
check "getaddrinfo_entry: node and service" \
	has "$V" libc:getaddrinfo_entry "node localhost service 8080"
check "getaddrinfo_exit: result 0 and the first address" \
	has "$V" libc:getaddrinfo_exit "result 0 error - addr 127.0.0.1:8080"
check "a failing getaddrinfo: its EAI_ name, no address" \
	eval 'has "$V" libc:getaddrinfo_entry "node not-a-number service -" &&
	      has "$V" libc:getaddrinfo_exit "result -2 error EAI_NONAME addr -"'

# ---- signals and children -------------------------------------------------------
k=$(var killed)
check "kill: pid, signal number and name, result" \
	has "$V" libc:kill "pid $k signal 9 (SIGKILL) result 0"
check "a failing kill: errno EINVAL; the probe signal 0" \
	eval 'has "$V" libc:kill "pid $pid signal 999 (SIG999) result -1 errno EINVAL" &&
	      has "$V" libc:kill "pid $pid signal 0 (0) result 0"'
check "waitpid WNOHANG with nothing to report: result 0, status -" \
	eval 'has "$V" libc:waitpid_entry "pid $k options 0x1" &&
	      has "$V" libc:waitpid_exit "pid $k result 0 status -"'
check "waitpid of the killed child: its pid, killed SIGKILL" \
	eval 'has "$V" libc:waitpid_entry "pid $k options 0" &&
	      has "$V" libc:waitpid_exit "pid $k result $k status killed SIGKILL"'
e=$(var exited)
check "wait4 of a child that exited 3: exited 3" \
	eval 'has "$V" libc:wait4_entry "pid $e options 0" &&
	      has "$V" libc:wait4_exit "pid $e result $e status exited 3"'
w=$(var waitid)
check "waitid P_PID: the child's pid and exited 5" \
	eval 'has "$V" libc:waitid_entry "idtype 1 id $w options 0x4" &&
	      has "$V" libc:waitid_exit "result 0 pid $w status exited 5"'
check "wait(NULL): the status is recorded all the same (exited 7)" \
	has "$V" libc:wait_exit "pid -1 result $(var wait) status exited 7"
check "a failing waitpid: errno ECHILD" \
	has "$V" libc:waitpid_exit "pid -1 result -1 status - errno ECHILD"

# ---- sleeps ---------------------------------------------------------------------
# at EVENT MESSAGE: the time of netuser's first EVENT with MESSAGE, in ns.
at() {
	awk -v e="$1:" -v p="$pid" -v m="$2" '$5 == e && $3 == p {
		s = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", s)
		if (s == m) { split($1, t, "."); print t[1] t[2]; exit } }' "$V"
}
check "nanosleep: entry with the time asked in ns, exit with result 0" \
	eval 'has "$V" libc:nanosleep_entry "request_ns 20000000" &&
	      has "$V" libc:nanosleep_exit "result 0 remaining_ns 0"'
t0=$(at libc:nanosleep_entry "request_ns 20000000")
t1=$(awk -v p="$pid" -v t0="$t0" '$5 == "libc:nanosleep_exit:" && $3 == p {
	split($1, t, "."); if (t[1] t[2] > t0) { print t[1] t[2]; exit } }' "$V")
check "the pair spans at least the 20 ms asked ($(( (${t1:-0} - ${t0:-0}) / 1000 )) us)" \
	eval '[ -n "$t0" ] && [ -n "$t1" ] && [ $((t1 - t0)) -ge 20000000 ]'
check "clock_nanosleep, relative: clock, flags 0, the time asked" \
	eval 'has "$V" libc:clock_nanosleep_entry "clock 1 flags 0 request_ns 10000000" &&
	      has "$V" libc:clock_nanosleep_exit "clock 1 result 0 remaining_ns 0"'
check "clock_nanosleep, absolute (TIMER_ABSTIME): the deadline on the clock" \
	has "$V" libc:clock_nanosleep_entry "clock 1 flags 0x1 request_ns $(var abs_ns)"
check "usleep records the nanosleep it is made of" \
	has "$V" libc:nanosleep_entry "request_ns 3000000"
check "failing sleeps: errno EINVAL (clock_nanosleep: the error it returned)" \
	eval 'has "$V" libc:nanosleep_exit "result -1 remaining_ns 0 errno EINVAL" &&
	      has "$V" libc:clock_nanosleep_exit "clock 1 result 22 remaining_ns 0 errno EINVAL"'
check "a sleep the program's SIGALRM cut short: EINTR and the time left it was given" \
	eval 'has "$V" libc:nanosleep_entry "request_ns 5000000000" &&
	      has "$V" libc:nanosleep_exit "result -1 remaining_ns $(var rem_ns) errno EINTR"'
n_in=$(msgs "$V" libc:nanosleep_entry | awk -v p="$pid" '$1 == p' | wc -l)
n_out=$(msgs "$V" libc:nanosleep_exit | awk -v p="$pid" '$1 == p' | wc -l)
check "one nanosleep pair per call (4 calls: $n_in entries, $n_out exits)" \
	eval '[ "$n_in" -eq 4 ] && [ "$n_out" -eq 4 ]'

# ---- update signals: a resumed sleep is still one pair --------------------------
# coreutils sleep (preloaded) sleeps 0.6 s in nanosleep while tracectl
# filter changes, each of which sends it the update signal, rain on it.
LIB=${TRACER_LIB:-$(pwd)/libtracer/.libs/libtracer.so}
"$TRACECTL" start --events 'libc:nanosleep_entry,libc:nanosleep_exit' \
	>"$T/storm.start" 2>&1
LD_PRELOAD=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$LIB sleep 0.6 &
spid=$!
changes=0
while kill -0 $spid 2>/dev/null && [ $changes -lt 500 ]; do
	extra=; [ $((changes % 2)) -eq 0 ] && extra=,libc:read_entry
	"$TRACECTL" filter "libc:nanosleep_entry,libc:nanosleep_exit$extra" \
		>/dev/null 2>&1 && changes=$((changes + 1))
done
wait $spid
src=$?
"$TRACECTL" stop >"$T/storm.stop" 2>&1
"$TRACECTL" view --no-symbols "$(tail -n 1 "$T/storm.start")" >"$T/storm.view" \
	2>"$T/storm.verr"
pid=$spid
check "sleep 0.6 exits 0 under $changes filter changes" \
	eval '[ $src -eq 0 ] && [ $changes -ge 3 ]'
check "its nanosleep is one pair: result 0, nothing left" \
	eval '[ "$(msgs "$T/storm.view" libc:nanosleep_entry | cut -d" " -f3-)" = "request_ns 600000000" ] &&
	      [ "$(msgs "$T/storm.view" libc:nanosleep_exit | cut -d" " -f3-)" = "result 0 remaining_ns 0" ]'
t0=$(awk '$5 == "libc:nanosleep_entry:" { split($1, t, "."); print t[1] t[2] }' "$T/storm.view")
t1=$(awk '$5 == "libc:nanosleep_exit:" { split($1, t, "."); print t[1] t[2] }' "$T/storm.view")
check "the pair spans the whole 0.6 s ($(( (${t1:-0} - ${t0:-0}) / 1000 )) us)" \
	eval '[ -n "$t0" ] && [ -n "$t1" ] && [ $((t1 - t0)) -ge 600000000 ]'

# ---- a real program: a shell waits for its children ---------------------------
script='bash -c "exit 3" & echo $!; sleep 10 & echo $!; kill -KILL $!; wait; echo $?'
bash -c "$script" >"$T/sh-plain.out" 2>"$T/sh-plain.err"
record sh bash -c "$script"
check "the shell exits 0 traced ($rc)" [ "$rc" -eq 0 ]
check "it prints two pids and wait's 0, as untraced ($(tr '\n' ' ' <"$T/sh.out"), $(tr '\n' ' ' <"$T/sh-plain.out"))" \
	eval '[ "$(sed -n 3p "$T/sh.out")" = 0 ] &&
	      [ "$(sed -n 3p "$T/sh-plain.out")" = 0 ] &&
	      [ "$(wc -l <"$T/sh.out")" -eq 3 ]'
# (Whether bash says "Killed" of the sleep is its own race: untraced, it
# did in 3 runs of 6 here; the trace below shows the kill and its status.)
read -r c3 ck < <(head -n 2 "$T/sh.out" | tr '\n' ' ')
pid=$(msgs "$T/sh.view" proc:start | awk 'NR == 1 { print $1 }')
check "the shell's kill of its background sleep: pid $ck, SIGKILL" \
	has "$T/sh.view" libc:kill "pid $ck signal 9 (SIGKILL) result 0"
check "its wait: waitpid names the killed child and its signal" \
	has "$T/sh.view" libc:waitpid_exit "pid -1 result $ck status killed SIGKILL"
check "its wait: waitpid names the child that exited 3" \
	has "$T/sh.view" libc:waitpid_exit "pid -1 result $c3 status exited 3"
n_in=$(msgs "$T/sh.view" libc:waitpid_entry | awk -v p="$pid" '$1 == p' | wc -l)
n_out=$(msgs "$T/sh.view" libc:waitpid_exit | awk -v p="$pid" '$1 == p' | wc -l)
check "every waitpid_entry of the shell has its exit ($n_in, $n_out)" \
	eval '[ "$n_in" -ge 2 ] && [ "$n_in" -eq "$n_out" ]'

# ---- the tracer's own calls are not recorded ------------------------------------
record true /bin/true
check "/bin/true traced: none of the tracer's own setsockopt, kill or waits" \
	eval '[ $rc -eq 0 ] && [ -s "$T/true.view" ] &&
	      ! grep -Eq " libc:(setsockopt|getsockopt|kill|tgkill|wait[a-z0-9]*_(entry|exit)|nanosleep_entry):" "$T/true.view"'
finish
