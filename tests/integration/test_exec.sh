#!/bin/bash
# exec, vfork and posix_spawn from traced programs: each new program image
# is a process of its own for tracerd, in a directory of its own even with
# the same name and pid as the image before it, with its parent's pid and
# its command line; the parent's trace is intact.
. "$(dirname "$0")/lib.sh"
FORKER=./tests/integration/forker
# Events recorded before a process's registration completes are not
# recorded: wait for it as long as a loaded machine (sanitizers, tests in
# parallel) may need, not the default 100 ms, so that every event counts.
export TRACER_REGISTER_TIMEOUT_MS=30000
self=$(cd "$(dirname "$FORKER")" && pwd)/forker

EVENTS=1000

check "tracerd starts" start_daemon
dir=$(session_cmd start)

# $1: a process directory; prints how many test:image events of pid $2,
# generation $3 it holds, checking that each of its two threads has
# 0..N-1 in order (prints -1 otherwise).
image_events() {
	"$TRACECTL" view "$1" | awk -v pid="$2" -v gen="$3" '
		$3 != pid { bad++ }
		/ test:image: / { if ($7 != gen || $9 != pid) bad++
			t = $11; s = $NF
			if (s != next_seq[t] + 0) bad++
			next_seq[t] = s + 1; n++ }
		END { if (next_seq[0] != next_seq[1]) bad++
			print bad ? -1 : n + 0 }'
}
meta() { cat "$1/tracer/process.meta" 2>/dev/null; }

# fork, then exec: the child records, execs itself (same name, same pid),
# and that image execs itself again: three images of one pid.
"$FORKER" forkexec $EVENTS >"$T/fe.out"
check "fork-then-exec program exits 0" [ $? -eq 0 ]
c=$(awk '$1 == "child" { print $2 }' "$T/fe.out")
p=$(awk '$1 == "parent" { print $2 }' "$T/fe.out")
n=$("$TRACECTL" view "$dir/forker-$c" | grep -c " $c $c test:prexec: ")
check "the forked child, before exec: forker-$c, $EVENTS events" \
	[ "$n" -eq $EVENTS ]
check "the exec'd image: forker-$c.1, a distinct directory, same pid" \
	eval 'meta "$dir/forker-$c.1" | grep -q "^pid $c\$"'
check "its ppid and command line are recorded" \
	eval 'meta "$dir/forker-$c.1" | grep -q "^ppid $p\$" &&
	      meta "$dir/forker-$c.1" | grep -q "^argv $self image 1 $EVENTS 1\$"'
check "its events are complete ($((2 * EVENTS)))" \
	[ "$(image_events "$dir/forker-$c.1" $c 1)" -eq $((2 * EVENTS)) ]
check "the next image: forker-$c.2, its own command line and events" \
	eval 'meta "$dir/forker-$c.2" | grep -q "^argv $self image 2 $EVENTS 0\$" &&
	      [ "$(image_events "$dir/forker-$c.2" $c 2)" -eq $((2 * EVENTS)) ]'
n=$("$TRACECTL" view "$dir/forker-$p" | grep -c ' test:main: ')
check "the parent's directory has its own 2 events only" \
	eval '[ $n -eq 2 ] && ! "$TRACECTL" view "$dir/forker-$p" | grep -q " test:\(image\|prexec\):"'
session_cmd stop >/dev/null

# exec while the old image's connection stays open (its sockets are kept
# across exec): tracerd registers the new image of the same pid before it
# ever sees the old one hang up; a new registration of a pid means its old
# image is gone, so tracerd reads the old image's buffers to their end and
# forgets it, and requests about that pid go to the new image.
dir=$(session_cmd start)
spawn keep "$FORKER" image 1 $EVENTS 2 keep
pid=$keep_pid
n=$("$TRACECTL" status | awk -v pid=$pid '$1 == pid' | wc -l)
check "one registration of pid $pid: the live image's" [ "$n" -eq 1 ]
"$TRACECTL" filter 'test:*' >"$T/filter.out" 2>&1
rc=$?
sed 's/^/# /' "$T/filter.out"
check "a filter is confirmed by the live image at once (no warning)" \
	eval '[ $rc -eq 0 ] && ! grep -q "did not confirm" "$T/filter.out"'
quit keep
check "exec keeping the old connections: exits 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
ok=0
for d in "forker-$pid 1" "forker-$pid.1 2" "forker-$pid.2 3"; do
	set -- $d
	n=$(image_events "$dir/$1" $pid $2)
	echo "# $1: $n events of generation $2"
	[ "$n" -eq $((2 * EVENTS)) ] || ok=1
done
ok $ok "three images of pid $pid, three directories, every event"
ok=0
for d in "forker-$pid" "forker-$pid.1"; do
	"$TRACECTL" view "$dir/$d" | tail -n 1 |
		grep -q " tracer:process_gone: pid $pid replaced its program (exec)\$" ||
		ok=1
done
ok $ok "the two old images end with their exec"

# posix_spawn and vfork+exec from a program whose threads record at the
# same time: the parent's events intact, every child its own directory.
WORKERS=3
COUNT=4
dir=$(session_cmd start)
"$FORKER" spawn $WORKERS $COUNT $EVENTS >"$T/spawn.out"
check "spawning program and its $((2 * COUNT)) children exit 0" [ $? -eq 0 ]
session_cmd stop >/dev/null
p=$(awk '$1 == "parent" { print $2 }' "$T/spawn.out")
"$TRACECTL" view "$dir/forker-$p" >"$T/parent.view"
forker_parent_check "$p" "$T/spawn.out" "$T/parent.view" test:image \
	>"$T/parent.check"
ok $? "parent: every numbered event of its $WORKERS workers and main thread, nothing else"
sed 's/^/# /' "$T/parent.check" | head -n 10
lost=$(grep -c ' tracer:thread_exit: .* lost [1-9]' "$T/parent.view")
check "no thread of the parent lost events" [ "$lost" -eq 0 ]
bad=0
for c in $(awk '$1 == "child" { print $2 }' "$T/spawn.out"); do
	if ! meta "$dir/forker-$c" | grep -q "^ppid $p\$" ||
	   [ "$(image_events "$dir/forker-$c" $c 1)" -ne $((2 * EVENTS)) ]; then
		echo "# child $c: directory, ppid or events missing"
		bad=$((bad + 1))
	fi
done
check "$((2 * COUNT)) spawned children (posix_spawn, vfork): own directories, ppid, events" \
	[ $bad -eq 0 -a "$(grep -c '^child ' "$T/spawn.out")" -eq $((2 * COUNT)) ]

finish
