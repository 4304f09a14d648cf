#!/bin/bash
# Process, thread, lock and signal events of a program that knows nothing
# of the tracer (tests/integration/procee.c, libtracer preloaded by
# tracectl record): proc:start/exit/fork/spawn/exec/signal and
# pthread:create/start/exit/setname/mutex_wait/cond_wait_*, and what the
# program sees of its signal handlers, errno and results is what it sees
# untraced; under a signal storm the wrappers still give right answers
# and a readable trace.
. "$(dirname "$0")/lib.sh"
PROCEE=./tests/integration/procee
# Every process of the test registers before its first event, however
# loaded the machine (the exec'd images and children too).
export TRACER_REGISTER_TIMEOUT_MS=30000
self=$(cd "$(dirname "$PROCEE")" && pwd)/procee

check "tracerd starts" start_daemon

"$PROCEE" main "$T/plain.out"
rc_plain=$?
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$PROCEE" main \
	"$T/traced.out" >"$T/record.out" 2>"$T/record.err"
rc=$?
dir=$(record_dir "$T/record.err")
"$TRACECTL" view --no-symbols "$dir" >"$T/view" 2>"$T/view.err"
"$TRACECTL" view "$dir" >"$T/view.named" 2>/dev/null
rc_view=$?

# Results, signal handlers' effects, sigaction()'s answers and errno
# values: identical traced and untraced (the '#' lines hold pids and
# addresses), while the handlers ran through libtracer's trampoline
# (proc:signal) and the wrappers recorded.
through() {
	grep -q " proc:signal: signal 10 (SIGUSR1) " "$T/view" &&
		grep -q " pthread:mutex_wait: " "$T/view"
}
diff <(grep -v '^#' "$T/plain.out") <(grep -v '^#' "$T/traced.out") \
	>"$T/diff"
check "the program's results are the same traced and untraced" \
	eval '[ -s "$T/traced.out" ] && [ ! -s "$T/diff" ] && through'
sed 's/^/# /' "$T/diff" | head -n 20
check "sigaction() reports the program's handlers, not the trampoline" \
	eval '[ "$(grep -c "^query .* handler h_" "$T/traced.out")" -eq 4 ] &&
	      ! grep -q "handler unknown" "$T/traced.out" && through'
check "errno is kept by successful wrapped calls, set by failed ones" \
	eval 'through && grep -q "^install SIGUSR1 0 errno 1234$" "$T/traced.out" &&
	      grep -q "^after raise errno 1234$" "$T/traced.out" &&
	      grep -q "^fork errno 1234$" "$T/traced.out" &&
	      grep -q "^setname worker-a 0 errno 1234$" "$T/traced.out" &&
	      grep -q "^execv nonexistent -1 errno ENOENT$" "$T/traced.out" &&
	      grep -q "^install SIGKILL -1 errno EINVAL$" "$T/traced.out" &&
	      ! grep -q "mutex changed errno" "$T/traced.out"'

# The values the program printed: var NAME... -> the value after them.
var() {
	awk -v k="# $*" 'index($0, k " ") == 1 { print substr($0, length(k) + 2) }' \
		"$T/traced.out"
}
pid=$(var pid | awk '{ print $1 }')
ppid=$(var pid | awk '{ print $3 }')
# msgs PID EVENT: the messages of EVENT recorded by process PID.
msgs() {
	awk -v p="$1" -v e="$2:" '$3 == p && $5 == e {
		sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, ""); print }' "$T/view"
}

# ---- processes ----
check "proc:start: pid, ppid, executable and command line, once" \
	[ "$(msgs "$pid" proc:start)" = \
	  "pid $pid ppid $ppid exe $self argv $PROCEE main $T/traced.out" ]
check "exits 3 traced and untraced; proc:exit status 3 (exit()) in its trace" \
	eval '[ $rc_plain -eq 3 -a $rc -eq 3 -a $rc_view -eq 0 ] &&
	      [ "$(msgs "$pid" proc:exit)" = "status 3" ]'
xc=$(var exec child) ec=$(var exit child) sp=$(var spawned)
check "proc:fork: the two children's pids" \
	[ "$(msgs "$pid" proc:fork | tr '\n' ' ')" = "child $xc child $ec " ]
bad=0
for c in $xc $ec; do
	n=$(msgs "$c" proc:start | grep -c "^pid $c ppid $pid exe $self argv $PROCEE main ")
	[ "$n" -ge 1 ] || { echo "# child $c: no proc:start"; bad=1; }
done
ok $bad "each child's proc:start has the pid proc:fork gave, and its ppid"
check "proc:exit status 9 in the child that called _exit()" \
	[ "$(msgs "$ec" proc:exit)" = "status 9" ]
msgs "$xc" proc:exec >"$T/execs"
printf 'path %s argv %s exec %d\n' "$self" "$self" 3 "$self" "$self" 2 \
	"$self" "$self" 1 "$self" "$self" 0 >"$T/execs.want"
diff "$T/execs.want" "$T/execs" | sed 's/^/# /'
check "proc:exec: execv, execl, execlp, execle in turn, path and argv" \
	cmp -s "$T/execs.want" "$T/execs"
check "proc:start of each image has its own command line" \
	[ "$(msgs "$xc" proc:start | grep -c " argv $self exec [0-3]$")" -eq 4 ]
check "proc:exit status 5 when main() returns (the last image)" \
	[ "$(msgs "$xc" proc:exit)" = "status 5" ]
check "proc:exec_failed: path and errno of the exec that returned" \
	[ "$(msgs "$pid" proc:exec_failed)" = "path /nonexistent/prog errno ENOENT" ]
check "proc:spawn: path, argv and pid; the spawned program's own proc:start" \
	eval '[ "$(msgs "$pid" proc:spawn)" = "path /bin/true argv true pid $sp" ] &&
	      msgs "$sp" proc:start | grep -q "^pid $sp ppid $pid exe .*/true argv true$"'

# ---- signals ----
h1=$(var handler h_usr1) h2=$(var handler h_usr2) hw=$(var handler h_winch)
hh=$(var handler h_hup) hi=$(var handler h_int)
msgs "$pid" proc:signal >"$T/signals"
printf '%s\n' "signal 10 (SIGUSR1) handler $h1" "signal 10 (SIGUSR1) handler $h1" \
	"signal 12 (SIGUSR2) handler $h2" "signal 28 (SIGWINCH) handler $hw" \
	"signal 1 (SIGHUP) handler $hh" "signal 2 (SIGINT) handler $hi" \
	>"$T/signals.want"
diff "$T/signals.want" "$T/signals" | sed 's/^/# /'
check "proc:signal for each signal a handler ran for (none for SIG_IGN or SA_RESETHAND's default)" \
	cmp -s "$T/signals.want" "$T/signals"

# ---- threads ----
ha=$(var start holder) hc=$(var start contender) hwt=$(var start waiter)
# A sanitizer runtime's pthread_create() starts threads in a routine of
# its own, and calls libtracer's with that one.
if [ -n "$RECORD_PRELOAD" ]; then
	ha='0x[0-9a-f]*' hc=$ha hwt=$ha
fi
# lines FILE PATTERNS...: FILE's lines, sorted, match the patterns, sorted.
lines() {
	local f=$1
	shift
	[ "$(sort "$f" | wc -l)" -eq $# ] &&
		paste -d '\n' <(sort "$f") <(printf '%s\n' "$@" | sort) |
		awk 'NR % 2 == 1 { l = $0; next } l !~ "^" $0 "$" { bad = 1 }
		     END { exit bad }'
}
msgs "$pid" pthread:create | awk '{ print $6, $8 }' >"$T/create"
check "pthread:create: three threads, their start routines, result 0" \
	lines "$T/create" "$ha 0" "$hc 0" "$hwt 0"
# Without --no-symbols, view names the handlers and start routines.
# (Under a sanitizer, the start routine libtracer sees is the runtime's.)
check "view names the signal handler and the start routines" \
	eval 'grep -q " proc:signal: signal 10 (SIGUSR1) handler $h1 <h_usr1>" "$T/view.named" &&
	      { [ -n "$RECORD_PRELOAD" ] ||
		grep -q " pthread:create: thread 0x[0-9a-f]* tid [0-9]* start $ha <[a-z_]*>" "$T/view.named"; }'
# (Its pthread_t, then its start routine: test_records.sh checks the first.)
msgs "$pid" pthread:start | sed -n 's/^thread 0x[0-9a-f]* //p' >"$T/start"
check "pthread:start in each new thread" \
	lines "$T/start" "start $ha" "start $hc" "start $hwt"
check "pthread:exit: returned 0x41, pthread_exit(0x42), returned NULL" \
	[ "$(msgs "$pid" pthread:exit | sort | tr '\n' ' ')" = \
	  "retval (nil) retval 0x41 retval 0x42 " ]
check "pthread:setname: the names, and ERANGE for a long one" \
	eval '[ "$(msgs "$pid" pthread:setname | awk "{ print \$4, \$6 }" | tr "\n" " ")" = \
	       "worker-a 0 worker-b 0 waiter 0 a-name-longer-than-15-bytes 34 " ]'
cm=$(var mutex contended) qm=$(var mutex quiet) cv=$(var cond)
check "pthread:mutex_wait for the contended mutex" \
	eval 'msgs "$pid" pthread:mutex_wait | grep -q "^mutex $cm waited_ns [0-9]* result 0$"'
check "no pthread:mutex_wait for the uncontended one, no pthread:mutex_lock (default)" \
	eval 'msgs "$pid" pthread:mutex_wait | grep -q "^mutex $cm " &&
	      ! msgs "$pid" pthread:mutex_wait | grep -q "^mutex $qm " &&
	      ! grep -q " pthread:mutex_lock: " "$T/view"'
wtid=$(awk -v c="$cv" '$5 == "pthread:cond_wait_entry:" && $7 == c && $3 != $4 { print $4; exit }' "$T/view")
check "pthread:cond_wait_entry then _exit (result 0) in the waiting thread" \
	eval '[ -n "$wtid" ] && [ "$(awk -v t="$wtid" "\$4 == t && \$5 ~ /^pthread:cond_wait_/ { print \$5, \$NF }" "$T/view" | tr "\n" " ")" = \
	      "pthread:cond_wait_entry: $(var mutex cmu) pthread:cond_wait_exit: 0 " ]'
check "pthread:cond_wait_exit result ETIMEDOUT for a deadline in the past" \
	eval 'awk -v p=$pid "\$3 == p && \$4 == p" "$T/view" | grep -q " pthread:cond_wait_exit: cond $cv result 110$"'

# Every lock call recorded when the filter asks for them.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record --events '*' -- "$PROCEE" main \
	"$T/all.out" >"$T/record.out" 2>"$T/record.err"
rc=$?
dir=$(record_dir "$T/record.err")
qm=$(awk '$2 == "mutex" && $3 == "quiet" { print $4 }' "$T/all.out")
"$TRACECTL" view --no-symbols "$dir" >"$T/all.view"
check "--events '*': pthread:mutex_lock and _unlock for every call" \
	eval '[ $rc -eq 3 ] &&
	      [ "$(grep -c " pthread:mutex_lock: mutex $qm result 0$" "$T/all.view")" -eq 10 ] &&
	      [ "$(grep -c " pthread:mutex_unlock: mutex $qm result 0$" "$T/all.view")" -eq 11 ] &&
	      grep -q " pthread:mutex_trylock: mutex $qm result 16$" "$T/all.view"'

# ---- a signal storm ----
"$PROCEE" storm 5000 "$T/storm.plain"
rc_plain=$?
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record --events '*' -- "$PROCEE" \
	storm 5000 "$T/storm.out" >"$T/record.out" 2>"$T/record.err"
rc=$?
sed 's/^/# /' "$T/storm.out"
dir=$(record_dir "$T/record.err")
"$TRACECTL" view --no-symbols "$dir" >"$T/storm.view" 2>"$T/storm.err"
rc_view=$?
handled=$(sed -n 's/^# sent [0-9]* handled //p' "$T/storm.out")
n=$(grep -c " proc:signal: signal 10 (SIGUSR1) " "$T/storm.view")
hw=$(grep -c " libc:write_entry: fd [0-9]*</dev/null> count 1$" "$T/storm.view")
lost=$(grep -c " tracer:lost: " "$T/storm.view")
echo "# $handled handled, $n proc:signal and $hw of the handler's writes recorded, $lost lost reports"
check "storm, every event on: exits 0 with right results and errno (as untraced)" \
	eval '[ $rc_plain -eq 0 -a $rc -eq 0 ] && [ "$n" -gt 0 ] &&
	      grep -q "^storm ok$" "$T/storm.plain" &&
	      grep -q "^storm ok$" "$T/storm.out"'
check "its trace is readable, with the handlers' and wrappers' events" \
	eval '[ $rc_view -eq 0 ] && [ "$n" -gt 0 ] &&
	      grep -q " pthread:mutex_trylock: " "$T/storm.view"'
check "proc:signal for every signal handled (or events reported lost)" \
	eval '[ "$n" -gt 0 ] && { [ "$n" -eq "$handled" ] || [ "$lost" -gt 0 ]; }'
check "and the handler's own write for each (or events reported lost)" \
	eval '[ "$hw" -gt 0 ] && { [ "$hw" -eq "$handled" ] || [ "$lost" -gt 0 ]; }'

finish
