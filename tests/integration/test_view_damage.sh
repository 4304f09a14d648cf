#!/bin/bash
# `tracectl view` on a real trace damaged after the fact: a bad magic, a
# packet size pointing past the end, a truncated file, garbage in a
# process.meta. Each problem is one line naming the file and offset (or
# line), and everything else is still shown, exit status 1.
. "$(dirname "$0")/lib.sh"
DAMAGE="python3 $(dirname "$0")/damage.py"

check "tracerd starts" start_daemon
dir=$(session_cmd start --subbuf-size 4096)
"$TRACEE" threads 3 3000 >/dev/null
ok $? "a program records 3 x 3000 events"
"$TRACEE" print 10 >/dev/null
session_cmd stop >/dev/null
"$TRACECTL" view "$dir" >"$T/before" 2>"$T/before.err"
ok $? "the intact trace views cleanly"

# The three largest channel files of the threads program, and the other
# process's directory.
mapfile -t files < <(ls -S "$dir"/tracee-*/default-* | head -n 3)
check "the threads wrote several packets each" [ "${#files[@]}" -eq 3 ]
read -r off1 recs1 after1 < <($DAMAGE "${files[0]}" magic 1)
read -r off2 recs2 after2 < <($DAMAGE "${files[1]}" size 2)
read -r off3 recs3 after3 < <($DAMAGE "${files[2]}" truncate 1)
other=$(grep -l "^argv .* print" "$dir"/*/tracer/process.meta)
printf 'tracer-process 3\npid 12\001garbage\n' >"$other"

"$TRACECTL" view "$dir" >"$T/after" 2>"$T/after.err"
check "exit status 1" [ $? -eq 1 ]
sed 's/^/# /' "$T/after.err"
check "the bad magic is named with its file and offset, reading resumes" \
	grep -qx "tracectl: ${files[0]}: packet at offset $off1: bad magic 0xdeadbeef (reading resumes at offset [0-9]*)" "$T/after.err"
check "the size past the end is named with its file and offset" \
	grep -q "^tracectl: ${files[1]}: packet at offset $off2: truncated file: packet of [0-9]* bytes, [0-9]* bytes left" "$T/after.err"
check "the truncated file is named with its offset" \
	grep -q "^tracectl: ${files[2]}: packet at offset $off3: truncated file" "$T/after.err"
check "the garbage process.meta is named with its line" \
	grep -q "^tracectl: $other:2: " "$T/after.err"
check "four problems, four lines" [ "$(wc -l <"$T/after.err")" -eq 4 ]

# What must be gone: the damaged packets (and after the truncation, the
# rest of that file; after the size, reading resumes at the next packet),
# and the process whose metadata is garbage.
pid_other=$(basename "$(dirname "$(dirname "$other")")")
pid_other=${pid_other##*-}
lost=$((recs1 + recs2 + recs3 + after3))
want=$(($(awk -v p="$pid_other" '$3 != p' "$T/before" | wc -l) - lost))
check "every other event is shown ($want)" [ "$(wc -l <"$T/after")" -eq "$want" ]
check "and each is a line of the intact view" \
	[ -z "$(comm -13 <(sort "$T/before") <(sort "$T/after"))" ]

# FIFOs where a trace has files (an untrusted trace may hold anything): a
# channel file and a process.meta that are FIFOs are reported as not
# regular files, and never opened for reading (that would block until a
# writer came).
dir=$(session_cmd start)
"$TRACEE" print 5 >/dev/null
"$TRACEE" print 7 >/dev/null
session_cmd stop >/dev/null
mapfile -t procs < <(ls -d "$dir"/tracee-*)
mkfifo "${procs[0]}/default-99999"
rm "${procs[1]}/tracer/process.meta"
mkfifo "${procs[1]}/tracer/process.meta"
timeout 20 "$TRACECTL" view "$dir" >"$T/fifo" 2>"$T/fifo.err"
ret=$?
sed 's/^/# /' "$T/fifo.err"
check "view does not wait on FIFOs (exit $ret)" [ "$ret" -eq 1 ]
check "the FIFO channel file is named: not a regular file" \
	grep -qx "tracectl: cannot open '${procs[0]}/default-99999': not a regular file" "$T/fifo.err"
check "the FIFO process.meta is named: not a regular file" \
	grep -q "^tracectl: cannot open '${procs[1]}/tracer/process.meta': not a regular file" "$T/fifo.err"
n=$(grep -c ' test:print: ' "$T/fifo")
one_process() {
	[ "$n" -eq 5 ] || [ "$n" -eq 7 ]
}
check "the events of the process with a readable process.meta are shown ($n)" \
	one_process
finish
