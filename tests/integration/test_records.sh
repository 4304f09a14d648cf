#!/bin/bash
# What the library records of processes and threads (issue 19), read back
# as a user reads them: every command line (proc:start, proc:spawn,
# proc:exec) keeps its arguments apart, empty ones and ones with spaces or
# quotes included (shell-quoted); a string cut at the limit says so
# (tracectl view and babeltrace2); pthread:create names the new thread's
# kernel id, the one its own events carry; tracectl list shows each
# event's fields by name and type, not its printf format.
# (tests/integration/procee.c records: threads, posix_spawnp, execv.)
. "$(dirname "$0")/lib.sh"
PROCEE=./tests/integration/procee
export TRACER_REGISTER_TIMEOUT_MS=30000
self=$(cd "$(dirname "$PROCEE")" && pwd)/procee

check "tracerd starts" start_daemon

# record NAME ARG...: procee records, under tracectl record; its view in
# $T/NAME.view, its session directory in $dir.
record() {
	local name=$1
	shift
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$PROCEE" records \
		"$T/$name.txt" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	dir=$(record_dir "$T/$name.err")
	"$TRACECTL" view --no-symbols "$dir" >"$T/$name.view" 2>"$T/$name.verr"
}
# msgs VIEW EVENT: the messages of EVENT (pid tid message).
msgs() {
	awk -v e="$2:" '$5 == e { m = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", m);
		print $3, $4, m }' "$1"
}

# ---- command lines -----------------------------------------------------------
record args 'a b' '' "it's" x '$HOME'
pid=$(msgs "$T/args.view" proc:start | awk 'NR == 1 { print $1 }')
# var NAME: what procee wrote after "# NAME ".
var() { sed -n "s/^# $1 //p" "$T/args.txt"; }
args="'a b' '' 'it'\\''s' x '\$HOME'"
check "procee records runs traced (exit 0, a session directory)" \
	eval '[ $rc -eq 0 ] && [ -n "$dir" ] && [ -n "$pid" ]'
check "proc:start: empty and spaced arguments kept apart (shell-quoted)" \
	[ "$(msgs "$T/args.view" proc:start | awk -v p="$pid" '$1 == p' | head -n 1)" = \
	  "$pid $pid pid $pid ppid $(var ppid) exe $self argv $PROCEE records $T/args.txt $args" ]
sp=$(var spawned)
check "proc:spawn: the argv posix_spawnp() was given, then the pid" \
	[ "$(msgs "$T/args.view" proc:spawn)" = \
	  "$pid $pid path true argv true $args pid $sp" ]
check "proc:exec: the argv execv() was given" \
	[ "$(msgs "$T/args.view" proc:exec)" = \
	  "$pid $pid path /bin/true argv true $args" ]
check "the spawned and exec'd programs' proc:start: the same argv" \
	eval '[ "$(msgs "$T/args.view" proc:start | grep -cF " argv true $args")" -eq 2 ]'
# What the shell reads back from a recorded argv is the argv itself.
eval "back=($(msgs "$T/args.view" proc:exec | sed 's/^.* argv //'))"
check "a shell reads the recorded argv back as the program's arguments" \
	eval '[ ${#back[@]} -eq 6 ] && [ "${back[0]}" = true ] &&
	      [ "${back[1]}" = "a b" ] && [ -z "${back[2]}" ] &&
	      [ "${back[3]}" = "it'\''s" ] && [ "${back[4]}" = x ] &&
	      [ "${back[5]}" = "\$HOME" ]'

# ---- pthread:create names the new thread ----------------------------------
read -r _ _ _ jth jtid < <(grep "^# thread joinable " "$T/args.txt")
read -r _ _ _ dth dtid < <(grep "^# thread detached " "$T/args.txt")
create() { msgs "$T/args.view" pthread:create | grep " thread $1 "; }
check "pthread:create of a joinable thread: its pthread_t and its tid" \
	eval 'create "$jth" | grep -q "^$pid $pid thread $jth tid $jtid start 0x[0-9a-f]* result 0$"'
check "that tid is the one the new thread's events carry (pthread:start)" \
	eval '[ "$(msgs "$T/args.view" pthread:start | grep " thread $jth " | cut -d" " -f2)" = "$jtid" ]'
check "a detached thread: tid 0 on pthread:create, its pthread:start (in thread $dtid) names its pthread_t" \
	eval 'create "$dth" | grep -q " tid 0 start " &&
	      [ "$(msgs "$T/args.view" pthread:start | grep " thread $dth " | cut -d" " -f2)" = "$dtid" ]'

# Threads that return at once: some end before pthread_create() returns
# (the kernel has cleared their id in their descriptor by then; the
# trampoline keeps it): every create names its thread's tid.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$PROCEE" quick 300 \
	>"$T/quick.out" 2>"$T/quick.err"
"$TRACECTL" view --no-symbols "$(record_dir "$T/quick.err")" >"$T/quick.view" \
	2>"$T/quick.verr"
msgs "$T/quick.view" pthread:create | awk '{ print $6 }' | sort -n >"$T/quick.c"
msgs "$T/quick.view" pthread:start | awk '{ print $2 }' | sort -n >"$T/quick.s"
check "300 threads that end at once: each pthread:create names its tid ($(grep -c '^0$' "$T/quick.c") zero)" \
	eval '[ "$(wc -l <"$T/quick.c")" -eq 300 ] && ! grep -q "^0$" "$T/quick.c" &&
	      cmp -s "$T/quick.c" "$T/quick.s"'

# ---- a string cut at the limit says so --------------------------------------
ys() { printf 'y%.0s' $(seq "$1"); }
# "true " and 505 bytes: 510, the longest string kept whole.
record edge "$(ys 505)"
check "a string of 510 bytes is recorded whole, without a marker" \
	eval '[ "$(msgs "$T/edge.view" proc:spawn | sed "s/^.* argv //")" = \
	        "true $(ys 505) pid $(sed -n "s/^# spawned //p" "$T/edge.txt")" ]'
record long "$(ys 600)"
start=$(msgs "$T/long.view" proc:start | head -n 1 | sed 's/^.* argv //')
spawn=$(msgs "$T/long.view" proc:spawn | sed 's/^.* argv //')
check "a cut string ends with '...', 511 bytes in all (proc:start)" \
	eval '[ ${#start} -eq 511 ] && [ "${start: -4}" = "y..." ] &&
	      [[ $start == "$PROCEE records $T/long.txt yyy"* ]]'
check "the same in the middle of a message (proc:spawn)" \
	eval '[ "$spawn" = "true $(ys 503)... pid $(sed -n "s/^# spawned //p" "$T/long.txt")" ]'
if command -v babeltrace2 >/dev/null; then
	babeltrace2 "$dir" >"$T/long.bt" 2>"$T/long.bterr"
	check "babeltrace2 shows the cut string with its '...'" \
		grep -q 'proc:start:.*argv = "[^"]*yyy\.\.\."' "$T/long.bt"
else
	ok 0 "babeltrace2 shows the cut string # SKIP babeltrace2 is not installed"
fi

# ---- tracectl list: fields by name and type --------------------------------
mkfifo "$T/fifo"
LD_PRELOAD=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$(pwd)/libtracer/.libs/libtracer.so \
	cat "$T/fifo" >/dev/null &
cat_pid=$!
exec 7>"$T/fifo"	# cat runs until this closes
deadline=$(($(date +%s) + 20))
until "$TRACECTL" list --pid $cat_pid >"$T/list" 2>"$T/list.err" &&
      grep -q '^proc:spawn ' "$T/list" || [ "$(date +%s)" -gt $deadline ]; do
	sleep 0.05	# polling the list, not waiting it out
done
"$TRACECTL" list --pid $cat_pid --json >"$T/list.json" 2>>"$T/list.err"
exec 7>&-
wait $cat_pid
field_line() { grep -E "^$1 +1 (yes|no) +$2\$" "$T/list"; }
check "list: a FIELDS column" grep -Eq '^NAME +PROCESSES RECORDED FIELDS$' "$T/list"
check "list: proc:spawn's fields by name and type" \
	field_line proc:spawn 'path \(string\), argv \(string\), pid \(int\), errno \(errno\)'
check "list: pthread:create's, tid among them" \
	field_line pthread:create 'thread \(unsigned long\), tid \(int\), start \(pointer\), result \(int\)'
check "list: a length modifier is the C type (size_t of %zu)" \
	field_line libc:read_entry 'fd \(int\), count \(size_t\)'
check "list: no format string in the list (no %)" \
	eval '[ -s "$T/list" ] && ! grep -q % "$T/list"'
check "list --json: the fields, with the format" \
	python3 -c '
import json, sys
ev = {e["name"]: e for e in json.load(open(sys.argv[1]))}
c = ev["pthread:create"]
assert c["format"] == "thread %#lx tid %d start %p result %d", c["format"]
assert [(f["name"], f["type"]) for f in c["fields"]] == [
    ("thread", "unsigned long"), ("tid", "int"), ("start", "pointer"),
    ("result", "int")], c["fields"]
' "$T/list.json"

finish
