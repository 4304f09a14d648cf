#!/bin/bash
# Programs from Debian, unmodified, run with LD_PRELOAD=libtracer.so
# (tracectl record): their output is byte for byte what it is untraced,
# and the trace holds what they did.
. "$(dirname "$0")/lib.sh"

check "tracerd starts" start_daemon

# record NAME [START OPTIONS] -- CMD...: trace CMD (stdout in $T/NAME.out)
# and view the session into $T/NAME.view.
record() {
	local name=$1 dir st
	shift
	trace_run "$name" "$@"
	st=$?
	"$TRACECTL" view --no-symbols --no-fd-names "$dir" >"$T/$name.view" || st=1
	return $st
}

# sum_results VIEW EVENT FD: the sum of the results of EVENT on FD.
sum_results() {
	awk -v ev="$2:" -v fd="$3" '$5 == ev && $7 == fd && $9 >= 0 { s += $9 }
		END { print s + 0 }' "$1"
}

# An input of a few megabytes with repeated and unsorted lines.
python3 -c '
import random
random.seed(7)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
with open("'"$T"'/input.txt", "w") as f:
    for i in range(200000):
        f.write("%s %d %s\n" % (random.choice(words), random.randrange(10**6), random.choice(words)))
'
size=$(stat -c %s "$T/input.txt")

# cat FILE into a pipe: an open of FILE, and reads that sum to its size.
record cat -- sh -c "cat '$T/input.txt' | cat > '$T/cat.copy'"
check "cat: traced run exits 0" [ $? -eq 0 ]
check "cat: the copy is byte-identical" cmp -s "$T/input.txt" "$T/cat.copy"
fd=$(awk -v p="$T/input.txt" '$5 == "libc:open:" && $7 == p { print $NF }' "$T/cat.view" | head -n 1)
check "cat: libc:open of the file recorded (fd ${fd:-none})" [ -n "$fd" ] && [ "$fd" -ge 0 ]
pid=$(awk -v p="$T/input.txt" '$5 == "libc:open:" && $7 == p { print $3 }' "$T/cat.view" | head -n 1)
got=$(awk -v ev="libc:read_exit:" -v fd="$fd" -v pid="$pid" \
	'$3 == pid && $5 == ev && $7 == fd && $9 >= 0 { s += $9 } END { print s + 0 }' "$T/cat.view")
check "cat: its reads of fd $fd sum to the file's size ($got of $size)" [ "$got" -eq "$size" ]

# sort, with threads: same output; the input stream's opening is there.
sort --parallel=2 -S 2M "$T/input.txt" >"$T/sort.plain"
record sort -- sort --parallel=2 -S 2M "$T/input.txt"
check "sort: traced run exits 0" [ $? -eq 0 ]
check "sort: the output is byte-identical" cmp -s "$T/sort.plain" "$T/sort.out"
fd=$(awk -v p="$T/input.txt" '$5 == "libc:open:" && $7 == p { print $NF }' "$T/sort.view" | head -n 1)
check "sort: the input's libc:open recorded (fd ${fd:-none})" [ -n "$fd" ]
# sort reads through a stdio stream: its reads happen inside the C
# library, what is seen is the stream's opening on that descriptor.
check "sort: the stream opened on it (libc:fdopen fd ${fd:-none} mode r)" \
	grep -q " libc:fdopen: fd ${fd:--1} mode r result 0x" "$T/sort.view"

# cp: both files opened, the bytes moved sum to the size.
record cp -- cp "$T/input.txt" "$T/cp.copy"
check "cp: traced run exits 0" [ $? -eq 0 ]
check "cp: the copy is byte-identical" cmp -s "$T/input.txt" "$T/cp.copy"
check "cp: the source's opening recorded" \
	grep -q " libc:open: path $T/input.txt flags" "$T/cp.view"
check "cp: the destination's opening recorded" \
	grep -Eq " libc:open(at)?: .*path $T/cp.copy flags" "$T/cp.view"
moved=$(awk '$5 == "libc:copy_file_range_exit:" && $11 > 0 { s += $11 }
	$5 == "libc:write_exit:" && $9 > 0 { s += $9 } END { print s + 0 }' "$T/cp.view")
check "cp: the bytes written sum to the size ($moved of $size)" [ "$moved" -eq "$size" ]

# gzip: same compressed bytes; reads of the input, writes of the output.
# (Binary output goes to a file: record's own lines go to its stdout.)
gzip -c "$T/input.txt" >"$T/gzip.plain"
record gzip -- sh -c "exec gzip -c '$T/input.txt' > '$T/gzip.traced'"
check "gzip: traced run exits 0" [ $? -eq 0 ]
check "gzip: the compressed output is byte-identical" \
	cmp -s "$T/gzip.plain" "$T/gzip.traced"
# gzip opens its input's directory, then the file relative to it.
fd=$(awk -v p="$T/input.txt" '$5 ~ /^libc:open(at)?:$/ {
	for (i = 6; i < NF; i++)
		if ($i == "path" && ($(i + 1) == p || $5 == "libc:openat:" && $(i + 1) == "input.txt"))
			print $NF }' "$T/gzip.view" | head -n 1)
got=$(sum_results "$T/gzip.view" libc:read_exit "${fd:--1}")
check "gzip: its reads of the input sum to its size ($got of $size)" [ "$got" -eq "$size" ]
out=$(stat -c %s "$T/gzip.plain")
got=$(sum_results "$T/gzip.view" libc:write_exit 1)
check "gzip: its writes to stdout sum to the output's size ($got of $out)" [ "$got" -eq "$out" ]

# python3 with threads: each thread's file is opened by that thread.
mkdir -p "$T/py"
cat >"$T/threads.py" <<PY
import threading
def work(i):
    with open("$T/py/out-%d" % i, "w") as f:
        f.write("thread %d\n" % i * 1000)
ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print(sum(len(open("$T/py/out-%d" % i).read()) for i in range(3)))
PY
python3 "$T/threads.py" >"$T/py.plain"
record py -- python3 "$T/threads.py"
check "python3: traced run exits 0" [ $? -eq 0 ]
check "python3: same output" cmp -s "$T/py.plain" "$T/py.out"
tids=$(for i in 0 1 2; do
	awk -v p="$T/py/out-$i" '$5 == "libc:open:" && $7 == p && $3 != $4 { print $4 }' "$T/py.view" | head -n 1
done | sort -u | wc -l)
check "python3: each of its 3 threads opened its own file ($tids threads)" [ "$tids" -eq 3 ]
n=$(grep -c ' pthread:create: thread 0x[0-9a-f]* tid [1-9][0-9]* start 0x[0-9a-f]* result 0$' "$T/py.view")
check "python3: its 3 threads' creation recorded ($n pthread:create)" [ "$n" -ge 3 ]
started=$(awk '$5 == "pthread:start:" && $3 != $4 { print $4 }' "$T/py.view" | sort -u | wc -l)
check "python3: 3 threads recorded their start ($started)" [ "$started" -ge 3 ]

finish
