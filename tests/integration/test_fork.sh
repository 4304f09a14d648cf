#!/bin/bash
# fork() without exec: a child of a traced process is a traced process of
# its own (its own directory, pool and events), and never writes into the
# parent's buffers, whether libtracer is linked or preloaded; a hung or
# absent tracerd delays a fork by the registration timeout at most.
. "$(dirname "$0")/lib.sh"
FORKER=./tests/integration/forker
# Events recorded before a process's registration completes are not
# recorded: wait for it as long as a loaded machine (sanitizers, tests in
# parallel) may need, not the default 100 ms, so that every event counts.
export TRACER_REGISTER_TIMEOUT_MS=30000
lib=$(cd libtracer/.libs && pwd)/libtracer.so

WORKERS=3
CHILDREN=10
EVENTS=2000

check "tracerd starts" start_daemon

# The main thread and worker 0 fork while three workers record.
threaded_fork() {
	dir=$(session_cmd start)
	"$FORKER" fork $WORKERS $CHILDREN $EVENTS >"$T/fork.out"
	check "the forking program and its $((CHILDREN + 1)) children exit 0" [ $? -eq 0 ]
	session_cmd stop >/dev/null
	ppid=$(awk '$1 == "parent" { print $2 }' "$T/fork.out")
	children=$(awk '$1 == "child" { print $2 }' "$T/fork.out")
	check "$((CHILDREN + 1)) children listed" \
		[ "$(echo "$children" | wc -w)" -eq $((CHILDREN + 1)) ]

	# Parent: every numbered event of every thread, consecutive, all with its
	# pid; none of its children's.
	pdir=$dir/forker-$ppid
	"$TRACECTL" view "$pdir" >"$T/parent.view"
	forker_parent_check "$ppid" "$T/fork.out" "$T/parent.view" test:child \
		>"$T/parent.check"
	ok $? "parent: all its numbered events, consecutive, and nothing else"
	sed 's/^/# /' "$T/parent.check" | head -n 10

	# Children: each in its own directory NAME-PID, with its pid, both its
	# threads' events all there, in order; its ppid recorded.
	bad=0
	for c in $children; do
		cdir=$dir/forker-$c
		if [ ! -f "$cdir/tracer/process.meta" ]; then
			echo "# child $c: no directory"; bad=$((bad + 1)); continue
		fi
		grep -q "^ppid $ppid\$" "$cdir/tracer/process.meta" ||
			{ echo "# child $c: ppid not $ppid"; bad=$((bad + 1)); }
		"$TRACECTL" view "$cdir" | awk -v pid="$c" -v N=$EVENTS '
			$3 != pid { bad++; print "child " pid ": foreign pid " $3 }
			/ test:(seq|main): / { bad++; print "child " pid ": parent event " $0 }
			/ test:child: / { if ($7 != pid) { bad++; print "child " pid ": recorded as " $7 }
				t = $9; s = $NF
				if (s != next_seq[t] + 0) { bad++; print "child " pid " thread " t ": got " s }
				next_seq[t] = s + 1 }
			END { if (next_seq[0] != N || next_seq[1] != N) { bad++; print "child " pid ": " next_seq[0] + 0 " and " next_seq[1] + 0 " events" }
				exit bad != 0 }' | head -n 3 | sed 's/^/# /' | grep . && bad=$((bad + 1))
	done
	check "every child: its own directory, its ppid, its $((2 * EVENTS)) events" \
		[ $bad -eq 0 ]
	ndirs=$(ls -d "$dir"/forker-* | wc -l)
	check "one directory per process ($ndirs)" [ "$ndirs" -eq $((CHILDREN + 2)) ]
	lost=$(cat "$T/parent.view" | grep -c ' tracer:thread_exit: .* lost [1-9]')
	check "no thread of the parent lost events" [ "$lost" -eq 0 ]
}

# GCC 12's AddressSanitizer takes no lock of its allocator around fork():
# a child forked while a thread of the parent allocates inherits the lock
# held, and its first allocation waits for ever (seen here with gdb: the
# child's threads in SizeClassAllocator64::GetFromAllocator, once in some
# ten runs). The unsanitized build runs this part.
if under_asan; then
	for i in 1 2 3 4 5 6; do
		tap_n=$((tap_n + 1))
		echo "ok $tap_n # SKIP fork while threads run: not under AddressSanitizer (its allocator is not fork-safe)"
	done
else
	threaded_fork
fi

# Preloaded (the sanitizer runtime first in sanitizer builds): a shell's
# subshells, forked without exec, register as processes of their own.
dir=$(session_cmd start)
LD_PRELOAD="${RECORD_PRELOAD:+$RECORD_PRELOAD:}$lib" bash -c '
	echo $$ >"$1/shell"
	( echo $BASHPID >"$1/sub1" )
	( echo $BASHPID >"$1/sub2"; ( echo $BASHPID >"$1/sub3" ) )' \
	bash "$T"
rc=$?
session_cmd stop >/dev/null
sh=$(cat "$T/shell") s1=$(cat "$T/sub1") s2=$(cat "$T/sub2") s3=$(cat "$T/sub3")
meta() { cat "$dir/bash-$1/tracer/process.meta" 2>/dev/null; }
check "preloaded shell: exits 0, registered" \
	eval '[ $rc -eq 0 ] && meta $sh | grep -q "^pid $sh\$"'
check "its subshells have their own directories with their ppids" \
	eval 'meta $s1 | grep -q "^ppid $sh\$" && meta $s2 | grep -q "^ppid $sh\$" &&
	      meta $s3 | grep -q "^ppid $s2\$"'

# No tracerd: forking costs nothing noticeable and the children run.
start=$(now_ms)
TRACER_SOCKET=$T/nothing "$FORKER" bomb 50 10 >/dev/null
rc=$?
took=$(($(now_ms) - start))
check "no tracerd: 50 children run untraced (${took} ms)" \
	[ $rc -eq 0 -a $took -lt 5000 ]

# A hung tracerd (stopped): each child waits the registration timeout at
# most (100 ms here), never more, then runs untraced.
kill -STOP "$DPID"
start=$(now_ms)
TRACER_REGISTER_TIMEOUT_MS=100 timeout 60 "$FORKER" bomb 10 10 >/dev/null
rc=$?
took=$(($(now_ms) - start))
kill -CONT "$DPID"
check "hung tracerd: 10 children still run, within the timeouts (${took} ms)" \
	[ $rc -eq 0 -a $took -lt 5000 ]
check "tracerd serves again" eval '"$TRACECTL" status >/dev/null'

finish
