#!/bin/bash
# tracectl record (issue 14), with a tracerd on default settings:
#   - standard output is the program's: `record -- gzip -c FILE > OUT.gz`
#     gives FILE back byte for byte; `record -- yes | head -n 3` prints
#     three "y" and ends as the untraced pipeline does, without a word
#     about the broken pipe; record's own lines are on stderr, the trace
#     directory in "tracectl: session N stopped; trace directory: DIR";
#   - its exit status is the program's (7; 143 when SIGTERM killed it);
#   - a program that cannot run: 127 or 126 and one line, before any
#     session starts (no session directory) or any private tracerd;
#   - -o DIR: the session directory is DIR (relative to the current
#     directory, created if missing; refused if it holds anything, or
#     when asked by another user than tracerd's: with a `tracing` group),
#     for `tracectl start -o DIR` too;
#   - a daemonizing program (daemonee daemon: it exits at once, its
#     grandchild after setsid() works later) is followed until the daemon
#     exits: its late events and its proc:exit are in the trace, and the
#     status is the program's; --no-follow returns at the program's exit;
#     SIGHUP while record follows ends the wait;
#   - SIGTERM to record reaches the program, and the trace is readable;
#   - tracerd killed with -9 while record waits (the shared one, then a
#     private one): record exits with the program's status and one
#     warning line.
# Synchronisation is by FIFOs, never by sleeping.
. "$(dirname "$0")/lib.sh"

DAEMONEE=./tests/integration/daemonee

# rec ARGS...: tracectl record ARGS, its stderr in $T/err.
rec() {
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record "$@" 2>"$T/err"
}

# rec_bg ARGS...: the same in the background (pid in rec_pid), its
# stderr through a FIFO read by until_line and wait_rec.
rec_bg() {
	rm -f "$T/err" "$T/errpipe"
	mkfifo "$T/errpipe"
	exec {efd}<>"$T/errpipe"
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record "$@" 2>"$T/errpipe" &
	rec_pid=$!
}

# until_line GLOB: copy record's stderr to $T/err up to the first line
# GLOB matches; fails at a "stopped" line first, or after 30 s without a
# line.
until_line() {
	local line
	while read -r -t 30 line <&"$efd"; do
		echo "$line" >>"$T/err"
		# shellcheck disable=SC2053
		[[ $line == $1 ]] && return 0
		[[ $line == *" stopped; trace directory: "* ]] && return 1
	done
	return 1
}

# wait_rec: wait until the background record exits (killed after 60 s);
# rc its exit status; the rest of its stderr into $T/err.
wait_rec() {
	local line
	timeout 60 tail -s 0.05 --pid="$rec_pid" -f /dev/null
	kill -KILL "$rec_pid" 2>/dev/null
	wait "$rec_pid"
	rc=$?
	while read -r -t 0 <&"$efd" && read -r line <&"$efd"; do
		echo "$line" >>"$T/err"
	done
	exec {efd}<&-
	sed 's/^/# stderr: /' "$T/err"
}

# fifo_line FIFO: the first line written to FIFO (waits at most 30 s).
fifo_line() {
	local fd line
	exec {fd}<>"$1"
	read -r -t 30 line <&"$fd"
	exec {fd}<&-
	echo "$line"
}

# fifo_put FIFO LINE: write LINE to FIFO once a reader opens it (30 s).
fifo_put() {
	timeout 30 bash -c 'echo "$2" >"$1"' _ "$1" "$2"
}

# fifos NAME...: fresh FIFOs $T/NAME.
fifos() {
	local f
	for f in "$@"; do
		rm -f "$T/$f"
		mkfifo "$T/$f"
	done
}

# Sessions tracerd started so far.
started() { grep -c 'session [0-9]* started' "$LOG"; }

# Lines of $T/err that are not record's session lines.
other_lines() { grep -v '^tracectl: session [0-9]* [^;]*; trace directory: ' "$T/err"; }

check "tracerd starts" start_daemon

## Standard output is the program's ##########################################

seq 1 50000 >"$T/input"
rec -- gzip -c "$T/input" >"$T/input.gz"
ok $? "record -- gzip -c FILE > OUT.gz: exit 0"
check "OUT.gz decompresses to FILE, byte for byte" \
	eval 'gunzip -c "$T/input.gz" | cmp -s - "$T/input"'
dir=$(record_dir "$T/err")
check "stderr names the trace directory, which has gzip's events" \
	eval '[ -d "$dir" ] && "$TRACECTL" view "$dir" | grep -q " gzip [0-9]* [0-9]* libc:"'
check "stderr: the started and stopped lines only" \
	eval '[ "$(wc -l <"$T/err")" -eq 2 ] && [ -z "$(other_lines)" ]'

yes | head -n 3 >/dev/null
want=${PIPESTATUS[0]}
LD_PRELOAD=$RECORD_PRELOAD timeout 60 "$TRACECTL" record -- yes 2>"$T/err" |
	head -n 3 >"$T/yes.out"
got=${PIPESTATUS[0]}
check "record -- yes | head -n 3: exactly three y on stdout" \
	eval '[ "$(cat "$T/yes.out")" = "$(printf "y\ny\ny")" ]'
check "record ends with the status of the untraced yes ($want)" [ "$got" = "$want" ]
check "and writes nothing but its session lines (no EPIPE)" \
	eval '[ -z "$(other_lines)" ] && [ -n "$(record_dir "$T/err")" ]'

## Exit status ################################################################

rec -- sh -c 'exit 7'
check "record -- sh -c 'exit 7': exit 7" [ $? -eq 7 ]
rec -- sh -c 'kill -TERM $$'
check "a program killed by SIGTERM: 143, as the shell says" [ $? -eq 143 ]

## A program that cannot run ##################################################

printf 'echo hello\n' >"$T/plain"
chmod 644 "$T/plain"
n=$(started)
nout=$(ls "$T/out" | wc -l)
# cannot NAME ERRNO-TEXT STATUS ARGS...
cannot() {
	local name=$1 why=$2 want=$3
	shift 3
	rec "$@" >"$T/stdout"
	rc=$?
	check "record $*: exit $want, one line" \
		eval '[ $rc -eq $want ] && [ ! -s "$T/stdout" ] &&
		[ "$(cat "$T/err")" = "tracectl: cannot run '\''$name'\'': $why" ]'
}
cannot /nonexistent "No such file or directory" 127 -- /nonexistent
cannot no-such-program-here "No such file or directory" 127 -- \
	no-such-program-here a b
cannot "$T/plain" "Permission denied" 126 -- "$T/plain"
cannot "$T" "Permission denied" 126 --mode flight -- "$T"
check "no session was started for them, no directory made" \
	eval '[ "$(started)" -eq "$n" ] && [ "$(ls "$T/out" | wc -l)" -eq "$nout" ]'

## -o DIR #####################################################################

rec -o "$T/mine" -- "$TRACEE" print 3 >/dev/null
rc=$?
check "record -o DIR: exit 0, DIR named as the trace directory" \
	eval '[ $rc -eq 0 ] && [ "$(record_dir "$T/err")" = "$T/mine" ]'
check "tracectl view DIR shows the program's events" \
	eval '[ "$("$TRACECTL" view "$T/mine" | grep -c " test:print: ")" -eq 3 ]'
(cd "$T" && LD_PRELOAD=$RECORD_PRELOAD "$OLDPWD/$TRACECTL" record \
	--output rel/trace -- "$OLDPWD/$TRACEE" print 2 >/dev/null 2>"$T/err")
check "--output DIR relative to the current directory, parents made" \
	eval '[ "$(record_dir "$T/err")" = "$T/rel/trace" ] &&
	[ "$("$TRACECTL" view "$T/rel/trace" | grep -c " test:print: ")" -eq 2 ]'
mkdir "$T/empty"
rec -o"$T/empty" -- true
rc=$?
check "-oDIR: an existing empty directory will do" \
	eval '[ $rc -eq 0 ] && [ "$(record_dir "$T/err")" = "$T/empty" ] &&
	[ -n "$(ls "$T/empty")" ]'
rm -f "$T/ran"
rec -o "$T/mine" -- touch "$T/ran"
rc=$?
check "-o DIR that holds files: exit 1, one line, program not run" \
	eval '[ $rc -eq 1 ] && [ ! -e "$T/ran" ] &&
	[ "$(cat "$T/err")" = "tracectl: session directory '\''$T/mine'\'' exists and is not empty" ]'
check "tracectl start -o DIR, stop: the session is DIR" \
	eval '[ "$(session_cmd start -o "$T/started")" = "$T/started" ] &&
	[ "$(session_cmd stop)" = "$T/started" ]'
# Another user may connect to a root tracerd (the tracing group), but may
# not choose the directory it writes to.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
   id nobody >/dev/null 2>&1 && getent group tracing >/dev/null; then
	chmod 755 "$T"
	out=$(setpriv --reuid=nobody --regid="$(id -g nobody)" \
		--groups="$(getent group tracing | cut -d: -f3)" \
		"$TRACECTL" start -o "$T/theirs" 2>&1)
	rc=$?
	check "-o DIR from another user: exit 1, one line, nothing made" \
		eval '[ $rc -eq 1 ] && [ ! -e "$T/theirs" ] &&
		[ "$out" = "tracectl: a session directory of your choice is only for tracerd'\''s own user (uid 0), not uid $(id -u nobody)" ]'
fi

## Descendants ################################################################

fifos ready go late
rec_bg -- "$DAEMONEE" daemon "$T/ready" "$T/go" "$T/late"
dpid=$(fifo_line "$T/ready")
check "daemonee: the daemon runs" [ -n "$dpid" ]
until_line "tracectl: '*daemonee' exited with status 3; waiting for the processes it left running*"
ok $? "the program exited (3): record says it waits for what it left running"
check "record still runs" kill -0 "$rec_pid"
fifo_put "$T/go" go
check "the daemon works after the program has gone" \
	[ "$(fifo_line "$T/late")" = "late $dpid" ]
wait_rec
check "record exits with the program's status (3), not the daemon's (9)" \
	[ "$rc" -eq 3 ]
check "the daemon has exited (record reaped it)" eval '! kill -0 "$dpid" 2>/dev/null'
dir=$(record_dir "$T/err")
"$TRACECTL" view "$dir" >"$T/daemon.view" 2>&1
check "the daemon's late events are in the trace" \
	grep -q " $dpid $dpid libc:open: path $T/late " "$T/daemon.view"
check "and its proc:exit (status 9), after them" \
	eval '[ "$(grep " $dpid $dpid " "$T/daemon.view" |
	grep -o -e "libc:open: path $T/late " -e "proc:exit: status 9$" |
	tr "\n" "|")" = "libc:open: path $T/late |proc:exit: status 9|" ]'
check "the program, its child and the daemon: 3 traced processes" \
	[ "$(ls -d "$dir"/daemonee-* | wc -l)" -eq 3 ]

fifos ready go late
rec_bg --no-follow -- "$DAEMONEE" daemon "$T/ready" "$T/go" "$T/late"
dpid=$(fifo_line "$T/ready")
wait_rec
check "--no-follow: record returns at the program's exit (3), the daemon runs" \
	eval '[ "$rc" -eq 3 ] && kill -0 "$dpid"'
fifo_put "$T/go" go
fifo_line "$T/late" >/dev/null
dir=$(record_dir "$T/err")
check "--no-follow: the daemon's late events are not in the trace" \
	eval '! "$TRACECTL" view "$dir" 2>/dev/null |
	grep -q " libc:open: path $T/late "'

fifos ready go late
rec_bg -- "$DAEMONEE" daemon "$T/ready" "$T/go" "$T/late"
dpid=$(fifo_line "$T/ready")
until_line "*waiting for the processes it left running*"
ok $? "record follows the daemon"
kill -HUP "$rec_pid"
wait_rec
check "SIGHUP: record stops waiting, exits 3 and says so; the daemon runs" \
	eval '[ "$rc" -eq 3 ] && kill -0 "$dpid" &&
	grep -q "^tracectl: not waiting for the processes .* left running$" "$T/err"'
fifo_put "$T/go" go
fifo_line "$T/late" >/dev/null

## Signals ####################################################################

fifos ready
rm -f "$T/termout"
rec_bg -- "$DAEMONEE" term "$T/ready" "$T/termout"
pid=$(fifo_line "$T/ready")
kill -TERM "$rec_pid"
wait_rec
check "SIGTERM to record: the program gets it, record exits 143" \
	eval '[ "$rc" -eq 143 ] && grep -qx "got SIGTERM" "$T/termout"'
dir=$(record_dir "$T/err")
check "the session was stopped; the trace is readable, with what the program did after the signal" \
	eval 'grep -q " stopped; trace directory: " "$T/err" &&
	"$TRACECTL" view "$dir" | grep -q " $pid $pid libc:open: path $T/termout "'

## tracerd killed while record waits ###########################################

# gate: the program reports its pid on $T/ready, waits for $T/go, exits 5.
gate=(sh -c 'echo $$ >"$1"; read -r x <"$2"; exit 5' sh "$T/ready" "$T/go")
fifos ready go
rec_bg -- "${gate[@]}"
fifo_line "$T/ready" >/dev/null	# the program runs
kill -KILL "$DPID"
tail -s 0.05 --pid="$DPID" -f /dev/null
DPID=
fifo_put "$T/go" go
wait_rec
check "tracerd killed: record exits with the program's status (5)" [ "$rc" -eq 5 ]
check "and one warning line" \
	eval '[ "$(other_lines | wc -l)" -eq 1 ] &&
	other_lines | grep -q "^tracectl: warning: cannot stop session [0-9]*: .*; the trace in .* may lack its end$"'
check "tracerd starts again" start_daemon

## Without tracerd: a private one ##############################################

stop_daemon
mkdir -p "$T/tmp"
export TMPDIR=$T/tmp TRACER_SOCKET=$T/none/tracerd.sock
private_gone() {
	! pgrep -f -- "--socket $T/tmp/" >/dev/null && [ -z "$(ls -A "$T/tmp")" ]
}
cannot /nonexistent "No such file or directory" 127 -- /nonexistent
check "no private tracerd was started, nothing left in \$TMPDIR" private_gone
cannot "$T/plain" "Permission denied" 126 -- "$T/plain"
check "no private tracerd was started, nothing left in \$TMPDIR" private_gone

fifos ready go
rec_bg -o "$T/private" -- "${gate[@]}"
fifo_line "$T/ready" >/dev/null	# the program runs
tpid=$(pgrep -f -- "--socket $T/tmp/")
check "a private tracerd runs" [ -n "$tpid" ]
kill -KILL $tpid
fifo_put "$T/go" go
wait_rec
check "private tracerd killed: record exits 5 with one warning line" \
	eval '[ "$rc" -eq 5 ] && [ "$(other_lines | wc -l)" -eq 1 ] &&
	other_lines | grep -q "^tracectl: warning: tracerd killed by signal 9 (Killed) before session 1 was stopped; the trace in '\''$T/private'\'' may lack its end$"'
check "its socket directory is removed" private_gone

finish
