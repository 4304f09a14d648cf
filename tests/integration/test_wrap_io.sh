#!/bin/bash
# The C library wrappers on an unmodified program (wrapee, not linked with
# libtracer, run with LD_PRELOAD): every file, socket, polling and memory
# call it makes is in the trace with its arguments and result, errno is
# what the C library left, the output is the same as untraced, memory
# events are off by default, the tracer's own calls are never recorded,
# and a signal storm, a daemon's start and a shell's fork+exec loop keep
# working.
. "$(dirname "$0")/lib.sh"
WRAPEE=./tests/integration/wrapee
CHECK="python3 $(dirname "$0")/wrap_check.py"

check "tracerd starts" start_daemon

# record NAME [--events P] -- CMD...: trace CMD; output in $T/NAME.out,
# stderr in $T/NAME.err, the session view in $T/NAME.view, the session
# directory in $dir.
record() {
	local name=$1 st
	shift
	trace_run "$name" "$@"
	st=$?
	"$TRACECTL" view --no-symbols --no-fd-names "$dir" >"$T/$name.view" 2>"$T/$name.verr" || st=1
	return $st
}

mkdir -p "$T/plain" "$T/traced"
"$WRAPEE" io "$T/plain" >"$T/io-plain.out" 2>/dev/null
check "wrapee io passes its own checks untraced" [ $? -eq 0 ]
record io -- "$WRAPEE" io "$T/traced"
check "wrapee io passes its own checks traced (errno kept, results right)" [ $? -eq 0 ]
check "wrapee io prints the same traced and untraced" \
	cmp -s "$T/io-plain.out" "$T/io.out"
$CHECK io "$T/io.view" "$T/io.err" >"$T/io.check"
ok $? "the trace holds every call with its arguments, result and errno"
sed 's/^/# /' "$T/io.check" | head -n 20
check "no memory event by default" \
	bash -c "! grep -q ' libc:\(malloc\|free\|mmap\):' '$T/io.view'"

# The tracer's own socket traffic and locks are never recorded: `true`
# makes no socket call, and every libc event is on for it.
record true --events 'libc:*,pthread:*' -- /bin/true
check "/bin/true traced with every libc event" [ $? -eq 0 ]
check "none of the tracer's own calls is recorded (sendmsg, recvmsg, poll)" \
	bash -c "! grep -q ' libc:\(sendmsg\|recvmsg\|poll\|socket\|connect\|eventfd\)' '$T/true.view'"

seq 1 10 >"$T/numbers.in"

# tracectl list shows the C library's events of a running program, the
# memory ones as not recorded.
mkfifo "$T/fifo"
LD_PRELOAD=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$(pwd)/libtracer/.libs/libtracer.so \
	cat "$T/fifo" >/dev/null &
cat_pid=$!
exec 7>"$T/fifo"	# cat runs until this closes
deadline=$(($(date +%s) + 20))
until "$TRACECTL" list >"$T/list" 2>/dev/null && grep -q '^libc:read_entry ' "$T/list" ||
      [ "$(date +%s)" -gt $deadline ]; do
	sleep 0.05	# polling the list, not waiting it out
done
exec 7>&-
wait $cat_pid
check "tracectl list shows libc:read_entry as recorded" \
	grep -Eq '^libc:read_entry +1 yes +fd \(int\), count \(size_t\)$' "$T/list"
check "tracectl list shows libc:malloc as not recorded by default" \
	grep -Eq '^libc:malloc +1 no ' "$T/list"

# Memory events, when the filter names them. (A sanitizer build preloads
# AddressSanitizer, whose allocator comes first: nothing of libtracer's
# is tested there.)
if under_asan; then
	for what in "wrapee mem passes its own checks traced" \
		    "wrapee mem prints the same traced and untraced" \
		    "every allocation and free is recorded"; do
		ok 0 "# SKIP $what: the allocator is AddressSanitizer's here"
	done
else
	"$WRAPEE" mem 100 >"$T/mem-plain.out" 2>/dev/null
	record mem --events 'libc:*' -- "$WRAPEE" mem 100
	check "wrapee mem passes its own checks traced" [ $? -eq 0 ]
	check "wrapee mem prints the same traced and untraced" \
		cmp -s "$T/mem-plain.out" "$T/mem.out"
	$CHECK mem "$T/mem.view" "$T/mem.err" >"$T/mem.check"
	ok $? "every allocation and free is recorded with its size and address"
	sed 's/^/# /' "$T/mem.check" | head -n 10
fi

# A program linked with an allocator that comes after libtracer (as
# libjemalloc would): libtracer's wrappers call it, and stamp an
# allocation after the allocator handed the block out, a free before it
# gets the block back (the moments another thread could get it), so that
# a block's free comes before its next allocation in the merged trace.
# The allocator closes descriptor -7001 when it hands the block out and
# -7002 when it gets it back (nextalloc.c).
if under_asan; then
	ok 0 "# SKIP an allocator after libtracer: AddressSanitizer's comes first here"
	ok 0 "# SKIP libc:malloc stamped after the allocator handed the block out"
	ok 0 "# SKIP libc:free stamped before the allocator got the block back"
else
	record order --events 'libc:*' -- ./tests/integration/allocee
	st=$?
	check "a program with an allocator after libtracer runs traced" \
		eval '[ $st -eq 0 ] && grep -q "^block 777777 bytes ptr " "$T/order.out"'
	# The view's line numbers of the four events.
	order() {
		awk -v p="$(awk '{ print $NF }' "$T/order.out")" '
			!taken && / libc:close: fd -7001 / { taken = NR }
			!given && / libc:close: fd -7002 / { given = NR }
			!malloc && $5 == "libc:malloc:" && $9 == p { malloc = NR }
			!free && $5 == "libc:free:" && $7 == p { free = NR }
			END { printf "taken %d malloc %d free %d given %d\n",
			      taken, malloc, free, given }' "$T/order.view"
	}
	order >"$T/order.lines"
	read -r _ taken _ malloc _ free _ given <"$T/order.lines"
	check "libc:malloc stamped after the allocator handed the block out ($(cat "$T/order.lines"))" \
		eval '[ "$taken" -gt 0 ] && [ "$malloc" -gt "$taken" ]'
	check "libc:free stamped before the allocator got the block back" \
		eval '[ "$free" -gt "$malloc" ] && [ "$given" -gt "$free" ]'
fi

# A program with its own malloc: it keeps it, and works as untraced.
if under_asan; then
	ok 0 "# SKIP a program's own malloc: AddressSanitizer's comes first here"
	ok 0 "# SKIP its other calls recorded"
else
	./tests/integration/ownmalloc "$T/numbers.in" >"$T/own-plain.out"
	record own --events '*' -- ./tests/integration/ownmalloc "$T/numbers.in"
	check "a program with its own malloc runs as untraced (and uses its own)" \
		eval 'cmp -s "$T/own-plain.out" "$T/own.out" &&
		      grep -q "own allocations: yes" "$T/own.out"'
	check "its other calls are recorded, no libc:malloc (its own served)" \
		eval 'grep -q " libc:fopen: path $T/numbers.in mode r fd " "$T/own.view" &&
		      ! grep -q " libc:malloc: " "$T/own.view"'
fi

# A signal storm: the handler writes and allocates while the main thread
# is inside the wrappers; nothing of the main thread's is lost.
N=20000
record storm --subbuf-size 1M -- "$WRAPEE" storm $N
check "wrapee storm copies every byte under SIGUSR1" [ $? -eq 0 ]
handled=$(awk '$1 == "report" && $2 == "handled" { print $3 }' "$T/storm.err")
check "the handler ran (${handled:-0} times)" [ "${handled:-0}" -gt 0 ]
$CHECK storm "$T/storm.view" "$T/storm.err" $N >"$T/storm.check"
ok $? "all $N of the main thread's writes are recorded"
sed 's/^/# /' "$T/storm.check" | head -n 5

# The same storm where the C library registers no restartable sequence
# area (libtracer's reservations are compare-and-swaps then: rseq.h).
GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.pthread.rseq=0 \
	record storm-cas -- "$WRAPEE" storm $N
check "with no rseq area, wrapee storm copies every byte" [ $? -eq 0 ]
$CHECK storm "$T/storm-cas.view" "$T/storm-cas.err" $N >"$T/storm-cas.check"
ok $? "with no rseq area, all $N of the main thread's writes are recorded"

# A daemon's start: it closes every descriptor (the tracer's too) and
# calls setsid, then goes on working.
seq 1 20000 >"$T/numbers"
record closeall -- "$WRAPEE" closeall "$T/numbers"
check "a program that closes every descriptor keeps working" \
	cmp -s "$T/numbers" "$T/closeall.out"
fd=$(awk -v p="$T/numbers" '$5 == "libc:open:" && $7 == p { print $NF }' "$T/closeall.view")
got=$(awk -v fd="${fd:--1}" '$5 == "libc:read_exit:" && $7 == fd && $9 > 0 { s += $9 }
	END { print s + 0 }' "$T/closeall.view")
check "and its reads after closing them all are recorded ($got of $(stat -c %s "$T/numbers") bytes)" \
	[ "$got" -eq "$(stat -c %s "$T/numbers")" ]

# A shell that forks and execs in a loop.
record loop -- /bin/sh -c 'i=0; while [ $i -lt 30 ]; do /bin/echo $i; i=$((i + 1)); done'
seq 0 29 >"$T/loop.want"
check "a shell's fork+exec loop prints the same" cmp -s "$T/loop.want" "$T/loop.out"
n=$(find "$dir" -maxdepth 1 -name 'echo-*' | wc -l)
check "each of the 30 echo processes was traced ($n directories)" [ "$n" -eq 30 ]
n=$(grep -c ' libc:fclose: fd 1 result 0$' "$T/loop.view")
check "each of the 30 echo processes closed its output ($n libc:fclose)" [ "$n" -eq 30 ]

finish
