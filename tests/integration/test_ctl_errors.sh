#!/bin/bash
# tracectl's command line: usage mistakes (exit 2, one line on stderr),
# --help, values checked before anything is sent, misspelled patterns
# warned about (exit status unchanged), failures (exit 1, one line),
# requests without a session, status/list --json, and record with the
# shared tracerd and with a private one.
. "$(dirname "$0")/lib.sh"

CMDS="start stop filter switch snapshot status list record"

# run ARGS...: run tracectl; sets rc, out, err and nerr (stderr lines).
# The sanitizer runtime (lib.sh) is preloaded only for record, below.
runtime=$RECORD_PRELOAD
RECORD_PRELOAD=
run() {
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" "$@" >"$T/stdout" \
		2>"$T/stderr" </dev/null
	rc=$?
	out=$(cat "$T/stdout")
	err=$(cat "$T/stderr")
	nerr=$(wc -l <"$T/stderr")
}

# report DESCRIPTION CONDITION...: one TAP line; on failure show the run.
report() {
	local desc=$1
	shift
	if "$@"; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		echo "# rc=$rc stderr: $err" | head -n 5
		echo "# stdout: $out" | head -n 5
	fi
}

one_line() { [ "$rc" -eq "$1" ] && [ "$nerr" -eq 1 ] && [ -z "$out" ]; }

# fails STATUS 'LINE' ARGS...: exit STATUS, exactly LINE on stderr.
fails() {
	local want=$1 line=$2
	shift 2
	run "$@"
	report "tracectl $*: exit $want, '$line'" \
		eval 'one_line $want && [ "$err" = "$line" ]'
}

# usage ARGS...: a usage mistake: exit 2, one line naming the command.
usage() {
	local cmd=$1
	run "$@"
	report "tracectl $*: usage mistake, one line" \
		eval 'one_line 2 && [[ $err == "tracectl: $cmd: "* ]]'
}

# lists_all: stdout (tracectl --help) has a line for every command.
lists_all() {
	local c
	for c in $CMDS view export timeline; do
		grep -q "^  $c " "$T/stdout" || return 1
	done
}

# last_dir: the last line of stdout is an existing directory.
last_dir() { dir=$(tail -n 1 "$T/stdout"); [ -n "$dir" ] && [ -d "$dir" ]; }
# rec_dir: record named an existing trace directory on stderr.
rec_dir() { dir=$(record_dir "$T/stderr"); [ -n "$dir" ] && [ -d "$dir" ]; }

unreachable="No such file or directory"

## Without tracerd ###########################################################

fails 2 "tracectl: no command given (see 'tracectl --help')"
fails 2 "tracectl: unknown command 'frob' (see 'tracectl --help')" frob
fails 2 "tracectl: unknown option '--frob' (see 'tracectl --help')" --frob
fails 2 "tracectl: option '--socket' needs a value (see 'tracectl --help')" \
	--socket
fails 2 "tracectl: option '--version' takes no value (see 'tracectl --help')" \
	--version=1
for h in --help -h; do
	run $h
	report "tracectl $h lists every command" eval \
		'[ $rc -eq 0 ] && [ -z "$err" ] && lists_all'
done
run --version
report "tracectl --version" eval '[ $rc -eq 0 ] && [[ $out == "tracectl "* ]]'

for c in $CMDS; do
	fails 2 "tracectl: $c: unknown option '--frob' (see 'tracectl $c --help')" \
		$c --frob
	for h in --help -h; do
		run $c $h
		report "tracectl $c $h: usage on stdout, exit 0" eval \
			'[ $rc -eq 0 ] && [ -z "$err" ] &&
			 [[ $out == "usage: tracectl $c"* ]]'
	done
	run help $c
	report "tracectl help $c is tracectl $c --help" eval \
		'[ $rc -eq 0 ] && [[ $out == "usage: tracectl $c"* ]]'
done

# The commands that read a trace: the same parser, the same usage lines,
# and --help; they take no --socket.
for c in view export timeline report; do
	fails 2 "tracectl: $c: unknown option '--frob' (see 'tracectl $c --help')" \
		$c --frob
	fails 2 "tracectl: $c: unknown option '--socket' (see 'tracectl $c --help')" \
		$c "$T" --socket /tmp/x
	fails 2 "tracectl: $c: unknown option '--socket' (see 'tracectl $c --help')" \
		--socket /tmp/x $c "$T"
	fails 2 "tracectl: $c: option '--no-symbols' takes no value (see 'tracectl $c --help')" \
		$c "$T" --no-symbols=yes
	fails 2 "tracectl: $c: option '--pid' needs a value (see 'tracectl $c --help')" \
		$c "$T" --pid
	fails 2 "tracectl: $c: missing DIR (see 'tracectl $c --help')" $c
	fails 2 "tracectl: $c: --since: 'soon' is not a time (SECONDS[.FRACTION] as view prints them, or +SECONDS from the first event; units s, ms, us, ns) (see 'tracectl $c --help')" \
		$c "$T" --since soon
	fails 2 "tracectl: $c: --until is before --since (see 'tracectl $c --help')" \
		$c "$T" --since +2s --until +1500ms
	for h in --help -h; do
		run $c $h
		report "tracectl $c $h: usage on stdout, exit 0" eval \
			'[ $rc -eq 0 ] && [ -z "$err" ] && [[ $out == "usage: tracectl $c"* ]]'
	done
done

for c in stop switch snapshot status; do
	fails 2 "tracectl: $c: unexpected argument 'x' (see 'tracectl $c --help')" \
		$c x
done
fails 2 "tracectl: list: unexpected argument 'x' (see 'tracectl list --help')" \
	list x
fails 2 "tracectl: start: unexpected argument 'x' (see 'tracectl start --help')" \
	start x
fails 2 "tracectl: stop: option '--help' takes no value (see 'tracectl stop --help')" \
	stop --help=yes
fails 2 "tracectl: filter: missing PATTERNS" filter
fails 2 "tracectl: filter: missing PATTERNS" filter --pid 12
fails 2 "tracectl: filter: missing PATTERNS" filter ''
fails 2 "tracectl: record: missing PROGRAM" record
fails 2 "tracectl: record: missing PROGRAM" record --mode flight --

# Values, for start and for record (which takes the same options).
for c in start record; do
	prog=()
	[ $c = record ] && prog=(-- touch "$T/ran")
	fails 2 "tracectl: $c: option '--mode' needs a value (see 'tracectl $c --help')" \
		$c --mode
	fails 2 "tracectl: $c: --mode must be 'discard' or 'flight', not 'x'" \
		$c --mode x "${prog[@]}"
	fails 2 "tracectl: $c: --subbuf-size: '3000' is not a power of two" \
		$c --subbuf-size 3000 "${prog[@]}"
	for v in 2K 2G 8M5 64Q -4K 99999999999999999999 '' 0x1000 ' 4096'; do
		usage $c --subbuf-size "$v" "${prog[@]}"
	done
	for v in 3 1 0 131072 -2 abc 4K 99999999999999999999; do
		usage $c --subbuf-count "$v" "${prog[@]}"
	done
	fails 2 "tracectl: $c: --subbuf-size 1G with --subbuf-count 65536: channel larger than 1 TiB" \
		$c --subbuf-size 1G --subbuf-count 65536 "${prog[@]}"
	for v in 0 3600001 -1 1.5 1s 99999999999999999999; do
		usage $c --live-interval "$v" "${prog[@]}"
	done
	fails 1 "tracectl: bad pattern 'x[': unbalanced '[' in pattern" \
		$c --events 'x[' "${prog[@]}"
	fails 2 "tracectl: $c: option '-o' needs a value (see 'tracectl $c --help')" \
		$c -o
	fails 2 "tracectl: $c: --output needs a non-empty DIR" \
		$c --output '' "${prog[@]}"
	for v in tcp://h net:// 'net://h:0' 'net://h:1:65536' 'net://h:x' \
		 'net://h/dir' 'net://[::1' 'net://h:1:2:3'; do
		fails 2 "tracectl: $c: --relay must be net://HOST[:CONTROL_PORT[:DATA_PORT]] or none, not '$v'" \
			$c --relay "$v" "${prog[@]}"
	done
done
fails 2 "tracectl: start: unknown option '--no-follow' (see 'tracectl start --help')" \
	start --no-follow
fails 2 "tracectl: record: option '--no-follow' takes no value (see 'tracectl record --help')" \
	record --no-follow=1 -- true
check "record ran nothing after a mistake" [ ! -e "$T/ran" ]
fails 2 "tracectl: start: --subbuf-size: '2K' is out of range (4K to 1G)" \
	start --subbuf-size 2K
fails 2 "tracectl: start: --subbuf-count: '3' is not a power of two" \
	start --subbuf-count 3
fails 2 "tracectl: start: --live-interval: '0' is out of range (1 to 3600000)" \
	start --live-interval 0
fails 2 "tracectl: start: --subbuf-size: '-4K' is negative" \
	start --subbuf-size -4K
fails 2 "tracectl: start: --subbuf-size: '99999999999999999999' is too large" \
	start --subbuf-size 99999999999999999999

for c in filter list; do
	for v in 0 -3 abc 12x 99999999999999999999 2147483648; do
		usage $c --pid "$v" '*'
	done
	fails 2 "tracectl: $c: option '--pid' needs a value (see 'tracectl $c --help')" \
		$c --pid
done
fails 2 "tracectl: filter: --pid: 'abc' is not a number" filter --pid abc '*'
for p in 'x[' '-' 'a\' $'a\001b' "$(head -c 256 /dev/zero | tr '\0' a)"; do
	run filter "$p"
	report "filter: bad pattern rejected before contacting tracerd" \
		eval 'one_line 1 && [[ $err == "tracectl: bad pattern "* ]]'
done
fails 1 "tracectl: bad pattern 'x[': unbalanced '[' in pattern" \
	filter 'libc:*' 'x['

# Valid values get as far as connecting.
cant="tracectl: cannot reach tracerd at '$TRACER_SOCKET': $unreachable"
fails 1 "$cant" start --mode flight --events 'libc:*,-libc:malloc' \
	--subbuf-size 64K --subbuf-count 4 --live-interval 3600000
fails 1 "$cant" start --mode=discard --subbuf-size 1G --subbuf-count 2
fails 1 "$cant" start --subbuf-size 4096 --subbuf-count 65536
fails 1 "$cant" filter -libc:malloc
fails 1 "$cant" filter --pid 1 'libc:*' -libc:malloc
# Misspelled patterns of the library's providers: a warning each (git
# style), before the request; a program's own provider ('app') is not
# checked.
run start --events 'libc:opne,app:*,-pthread:mutex_lcok'
report "start --events: a warning per misspelled library pattern" eval \
	'[ $rc -eq 1 ] && [ "$nerr" -eq 3 ] &&
	 [ "$(sed -n 1p "$T/stderr")" = "tracectl: warning: '\''libc:opne'\'' matches no event of the library (did you mean '\''libc:open'\''?)" ] &&
	 [ "$(sed -n 2p "$T/stderr")" = "tracectl: warning: '\''-pthread:mutex_lcok'\'' matches no event of the library (did you mean '\''-pthread:mutex_lock'\''?)" ] &&
	 [ "$(sed -n 3p "$T/stderr")" = "$cant" ]'
for c in start stop switch snapshot status list; do
	fails 1 "$cant" $c
	fails 1 "tracectl: cannot reach tracerd at '$T/other': $unreachable" \
		--socket "$T/other" $c
	fails 1 "tracectl: cannot reach tracerd at '$T/other': $unreachable" \
		$c --socket "$T/other"
	fails 1 "tracectl: cannot reach tracerd at '$T/other': $unreachable" \
		--socket "$T/elsewhere" $c --socket="$T/other"
done
fails 1 "tracectl: cannot reach tracerd at '$T/other': $unreachable" \
	filter '*' --socket "$T/other"

## With tracerd, no session ##################################################

check "tracerd starts on a private socket" start_daemon
fails 1 "tracectl: no session is started" stop
run switch
report "switch without a session: exit 1, one line" one_line 1
run snapshot
report "snapshot without a session: exit 1, one line" one_line 1
run filter '*'
report "filter '*' without a session: exit 1, one line" one_line 1

run status
report "status: 'tracerd pid' first, then no session" eval \
	'[ $rc -eq 0 ] && [ "$(sed -n 1p "$T/stdout")" = "tracerd pid $DPID" ] &&
	 grep -q "^session none" "$T/stdout"'
run status --json
report "status --json is valid JSON" \
	python3 -m json.tool "$T/stdout" /dev/null
report "status --json has the status fields" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("pid", "socket", "output", "session_id", "session_directory",
          "processes", "mode", "filter", "live_interval_ms", "max_memory",
          "subbuf_size", "subbuf_count", "version"):
    assert k in d, k
assert d["pid"] == int(sys.argv[2]) and d["session_id"] == 0
' "$T/stdout" "$DPID"
run list --json
report "list --json is valid JSON" python3 -m json.tool "$T/stdout" /dev/null
run list
report "list: a header" eval '[ $rc -eq 0 ] && [[ $out == "NAME "* ]]'

## With a session ############################################################

run start --mode flight --events 'test:*' --subbuf-size 64K \
	--subbuf-count 4 --live-interval 500
report "start with options: 'started (flight)', directory last" eval \
	'[ $rc -eq 0 ] && last_dir &&
	 [[ $out == "session "[0-9]*" started (flight); trace directory:"* ]]'
sdir=$dir
run start
report "a second start: exit 1, one line" one_line 1
run status --json
report "status --json: the session's settings" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["session_directory"] == sys.argv[2], "directory"
assert d["mode"] == "flight", "mode"
assert d["filter"] == "test:*", "filter"
assert d["live_interval_ms"] == 500, "live interval"
assert (d["subbuf_size"], d["subbuf_count"]) == (65536, 4), "geometry"
' "$T/stdout" "$sdir"
fails 2 "tracectl: status: unexpected argument 'x' (see 'tracectl status --help')" \
	status --json x
run filter 'test:*' -test:seq
report "filter: 'filter PATTERNS applied to N process(es)'" eval \
	'[ $rc -eq 0 ] && [[ $out == "filter '\''test:*,-test:seq'\'' applied to "[0-9]*" process(es)" ]]'
run filter 'lib:*' 'proc:*'
report "filter 'lib:*': warned about (one line), applied, exit 0" eval \
	'[ $rc -eq 0 ] && [ "$nerr" -eq 1 ] &&
	 [ "$err" = "tracectl: warning: '\''lib:*'\'' matches no event of the library (did you mean '\''libc:*'\''?)" ] &&
	 [[ $out == "filter '\''lib:*,proc:*'\'' applied to "* ]]'
run snapshot
report "snapshot with nothing to hold: exit 1, one line, no directory" eval \
	'one_line 1 && [[ $err == "tracectl: nothing to snapshot: "* ]] &&
	 ! ls -d "$sdir"/snapshot-* 2>/dev/null'
run record -- touch "$T/ran"
report "record while a session is started: exit 1, program not run" eval \
	'one_line 1 && [ ! -e "$T/ran" ]'
run stop
report "stop: 'session N stopped', same directory last" eval \
	'[ $rc -eq 0 ] && last_dir && [ "$dir" = "$sdir" ]'

run start
report "start: 'started (discard)' by default" eval \
	'[ $rc -eq 0 ] && last_dir &&
	 [[ $out == "session "[0-9]*" started (discard); trace directory:"* ]]'
sdir=$dir
run switch
report "switch: 'switched N process(es)'" eval \
	'[ $rc -eq 0 ] && [[ $out == "switched "[0-9]*" process(es)" ]]'
run snapshot
report "snapshot in discard mode: exit 1, one line" one_line 1
run stop
report "stop: the discard session's directory last" eval \
	'[ $rc -eq 0 ] && last_dir && [ "$dir" = "$sdir" ]'

## record with the shared tracerd ############################################

RECORD_PRELOAD=$runtime
run record -- /bin/true
report "record /bin/true: exit 0, nothing on stdout, directory on stderr" eval \
	'[ $rc -eq 0 ] && rec_dir && [ -z "$out" ] && [ "$nerr" -eq 2 ]'
run record -- sh -c 'exit 3'
report "record: the program's exit status (3)" eval '[ $rc -eq 3 ] && rec_dir'
run record -- sh -c 'kill -TERM $$'
report "record: 128+N when killed by signal N" eval '[ $rc -eq 143 ] && rec_dir'
run record -- /nonexistent
report "record /nonexistent: exit 127, one line, no session" eval \
	'one_line 127 &&
	 [ "$err" = "tracectl: cannot run '\''/nonexistent'\'': No such file or directory" ]'
run record --mode flight --events 'test:*' -- sh -c \
	'echo "socket=$TRACER_SOCKET"; echo "preload=$LD_PRELOAD"; echo "arg=$0"' \
	-x
report "record: the program gets TRACER_SOCKET, LD_PRELOAD and its args" eval \
	'[ $rc -eq 0 ] && rec_dir &&
	 grep -qx "socket=$TRACER_SOCKET" "$T/stdout" &&
	 grep -q "^preload=\(.*:\)\?/.*/libtracer\.so[.0-9]*\$" "$T/stdout" &&
	 grep -qx "arg=-x" "$T/stdout" &&
	 grep -q "^tracectl: session [0-9]* started (flight)" "$T/stderr"'
run record -- sh -c 'kill -INT $PPID; kill -QUIT $PPID; echo survived'
report "record: SIGINT and SIGQUIT do not stop tracectl" eval \
	'[ $rc -eq 0 ] && grep -qx survived "$T/stdout" && rec_dir'
run record -- sh -c 'kill -TERM $PPID; exec sleep 10'
report "record: SIGTERM to tracectl is passed on to the program" eval \
	'[ $rc -eq 143 ] && rec_dir'
out=$(echo through | LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- cat \
	2>/dev/null)
rc=$?
report "record: the program reads tracectl's stdin (and has its stdout)" \
	eval '[ $rc -eq 0 ] && [ "$out" = through ]'
run record --events 'libc:clsoe,test:*' -- "$TRACEE" print 5
report "record --events: the misspelled pattern warned about first" eval \
	'[ $rc -eq 0 ] && rec_dir &&
	 [ "$(head -n 1 "$T/stderr")" = "tracectl: warning: '\''libc:clsoe'\'' matches no event of the library (did you mean '\''libc:close'\''?)" ]'
run record --events 'test:*' -- "$TRACEE" print 5
report "record: a traced program's events are in the directory" eval \
	'[ $rc -eq 0 ] && rec_dir &&
	 [ "$("$TRACECTL" view "$dir" | grep -c " test:print: ")" -eq 5 ]'

## record with a private tracerd #############################################

stop_daemon
mkdir -p "$T/tmp" "$T/home"
export TMPDIR=$T/tmp HOME=$T/home TRACER_SOCKET=$T/none/tracerd.sock
# Remove a session directory a private tracerd wrote outside $T (as root:
# the system-wide output directory).
forget() { case $dir in "$T"/*) ;; */session-*) rm -rf "$dir";; esac; }

run record -- sh -c 'echo "socket=$TRACER_SOCKET"
	test -S "$TRACER_SOCKET" && echo running'
report "record without tracerd: a private one, on a socket in \$TMPDIR" eval \
	'[ $rc -eq 0 ] && rec_dir &&
	 grep -q "^socket=$T/tmp/tracectl\..*/tracerd\.sock$" "$T/stdout" &&
	 grep -qx running "$T/stdout"'
forget
check "no tracerd left running" eval '! pgrep -f -- "--socket $T/tmp/" >/dev/null'
check "its temporary directory is removed" \
	eval '[ -z "$(ls -A "$T/tmp")" ]'

python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$T/stale.sock"
run --socket "$T/stale.sock" record -- sh -c 'exit 5'
report "record on a stale socket (refused): a private tracerd" eval \
	'[ $rc -eq 5 ] && rec_dir'
forget
check "no tracerd left running" eval '! pgrep -f -- "--socket $T/tmp/" >/dev/null'

run record --events 'test:*' -- "$TRACEE" print 4
report "record with a private tracerd records the program" eval \
	'[ $rc -eq 0 ] && rec_dir &&
	 [ "$("$TRACECTL" view "$dir" | grep -c " test:print: ")" -eq 4 ]'
forget

TRACER_TRACERD=/bin/false run record -- touch "$T/ran"
report "a tracerd that exits at once: 'cannot start tracerd', exit 1" eval \
	'one_line 1 && [[ $err == "tracectl: cannot start tracerd: "* ]] &&
	 [ ! -e "$T/ran" ] && [ -z "$(ls -A "$T/tmp")" ]'
TRACER_TRACERD=$T/nonexistent run record -- touch "$T/ran"
report "no tracerd to run: 'cannot start tracerd: cannot run', exit 1" eval \
	'one_line 1 && [ ! -e "$T/ran" ] &&
	 [ "$err" = "tracectl: cannot start tracerd: cannot run '\''$T/nonexistent'\'': No such file or directory" ]'
TRACER_LIB=$T/nonexistent.so run record -- touch "$T/ran"
report "TRACER_LIB missing: exit 1, one line, nothing run" eval \
	'one_line 1 && [ ! -e "$T/ran" ] &&
	 [ "$err" = "tracectl: \$TRACER_LIB '\''$T/nonexistent.so'\'': No such file or directory" ]'
check "no tracerd left running" eval '! pgrep -f -- "--socket $T/tmp/" >/dev/null'

finish
