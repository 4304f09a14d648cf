#!/bin/bash
# stdio at the FILE level (issue 19), read back as a user reads it: every
# fread, fgets, getline, getdelim (entry/exit pairs), fwrite, fputs, puts
# and printf-family call (one event) of stdiouser (preloaded, built with
# _FORTIFY_SOURCE=2: plain, unlocked and fortified entry points) is in the
# trace with the stream's descriptor, the size asked, the result, " eof"
# or the errno of a read that came up short and the errno of a failing
# call; the printf family's results add up to the bytes the program wrote;
# its output is byte for byte the untraced one. Real programs: md5sum's
# reads add up to the file's size, its printf calls to its digest's
# digits, and its digest is unchanged; seq's fwrite calls add up to what
# it printed.
. "$(dirname "$0")/lib.sh"
STDIOUSER=./tests/integration/stdiouser

check "tracerd starts" start_daemon

# record NAME -- CMD...: trace CMD; its output in $T/NAME.out and
# $T/NAME.err, the session view in $T/NAME.view.
record() {
	local name=$1 st
	shift
	trace_run "$name" "$@"
	st=$?
	"$TRACECTL" view --no-symbols "$dir" >"$T/$name.view" \
		2>"$T/$name.verr" || st=1
	return $st
}

# events VIEW: the stdio events as "name: message", with "fd N" of a
# file stdiouser opened written "fd NAME" (DATA, WO: the file's name in
# capitals, from the libc:fopen before), as its number may vary; tracectl
# view's "<path>" after a descriptor left out.
events() {
	sed -E 's/( fd -?[0-9]+)<[^>]*>/\1/g' "$1" | awk '
	$5 == "libc:fopen:" {
		p = $7; sub(/.*\//, "", p); name[$NF] = toupper(p) }
	$5 ~ /^libc:(fread|fgets|getline|getdelim)_(entry|exit):$/ ||
	$5 ~ /^libc:(fwrite|fputs|puts|printf|fprintf|dprintf):$/ {
		if ($6 == "fd" && ($7 in name)) $7 = name[$7]
		m = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", m); print m }'
}

# sum VIEW EVENT FIELD [FD]: the sum of FIELD's values in EVENT's events
# (of descriptor FD only, when given; FD without its "<path>").
sum() {
	awk -v e="$2:" -v f="$3" -v fd="$4" '$5 == e {
		d = ""; v = 0
		for (i = 6; i < NF; i++) {
			if ($i == "fd") { d = $(i + 1); sub(/<.*/, "", d) }
			if ($i == f) v = $(i + 1)
		}
		if (fd == "" || d == fd) s += v
	} END { print s + 0 }' "$1"
}

# ---- stdiouser: every wrapped call, its values, its failures ----------------
mkdir -p "$T/plain" "$T/traced"
"$STDIOUSER" "$T/plain" >"$T/plain.out" 2>"$T/plain.err"
check "stdiouser runs untraced" [ $? -eq 0 ]
record user -- "$STDIOUSER" "$T/traced"
check "stdiouser runs traced" [ $? -eq 0 ]
check "its standard output is byte for byte the untraced one" \
	cmp "$T/plain.out" "$T/user.out"
check "its standard error has its own line as untraced" \
	bash -c "grep -qx 'to stderr 2' '$T/plain.err' &&
		 grep -qx 'to stderr 2' '$T/user.err'"
check "the file it wrote is the same" cmp "$T/plain/data" "$T/traced/data"
check "its failing calls failed as untraced (EBADF, EINVAL)" \
	grep -qx 'getline_null -1 errno EINVAL' "$T/user.out"

# The stdio events but the program's report lines (libc:printf on fd 1:
# checked by their sum below), in order.
events "$T/user.view" | grep -v '^libc:printf: fd 1 ' >"$T/user.events"
cat >"$T/user.expected" <<'EOF'
libc:fwrite: fd DATA size 1 count 12 result 12
libc:fwrite: fd DATA size 2 count 5 result 5
libc:fputs: fd DATA length 9 result 1
libc:fputs: fd DATA length 11 result 1
libc:fprintf: fd DATA result 10
libc:fread_entry: fd DATA size 1 count 8
libc:fread_exit: fd DATA result 8
libc:fread_entry: fd DATA size 4 count 2
libc:fread_exit: fd DATA result 2
libc:fread_entry: fd DATA size 4 count 1
libc:fread_exit: fd DATA result 1
libc:fread_entry: fd DATA size 4 count 100
libc:fread_exit: fd DATA result 8 eof
libc:fgets_entry: fd DATA size 64
libc:fgets_exit: fd DATA bytes 12
libc:fgets_entry: fd DATA size 64
libc:fgets_exit: fd DATA bytes 19
libc:fgets_entry: fd DATA size 64
libc:fgets_exit: fd DATA bytes 11
libc:getdelim_entry: fd DATA delim 61
libc:getdelim_exit: fd DATA result 7
libc:getdelim_entry: fd DATA delim 10
libc:getdelim_exit: fd DATA result 3
libc:getdelim_entry: fd DATA delim 10
libc:getdelim_exit: fd DATA result -1 eof
libc:fgets_entry: fd DATA size 64
libc:fgets_exit: fd DATA bytes 0 eof
libc:fgets_entry: fd DATA size 64
libc:fgets_exit: fd DATA bytes 12
libc:fread_entry: fd WO size 1 count 16
libc:fread_exit: fd WO result 0 errno EBADF
libc:fputs: fd DATA length 4 result -1 errno EBADF
libc:getline_entry: fd DATA
libc:getline_exit: fd DATA result -1 errno EINVAL
libc:dprintf: fd 99 result -1 errno EBADF
libc:puts: fd 1 length 11 result 12
libc:fprintf: fd 1 result 12
libc:fprintf: fd 1 result 15
libc:fprintf: fd 1 result 13
libc:dprintf: fd 1 result 14
libc:dprintf: fd 1 result 12
libc:dprintf: fd 1 result 15
libc:dprintf: fd 1 result 13
libc:fprintf: fd 2 result 12
EOF
check "every read, write and formatted output is recorded with its values" \
	diff -u "$T/user.expected" "$T/user.events"
diff -u "$T/user.expected" "$T/user.events" | head -n 30 | sed 's/^/# /'
# printf, __printf_chk, vprintf and __vprintf_chk print 42 to 45 bytes,
# longer than any report line.
events "$T/user.view" |
	sed -n 's/^libc:printf: fd 1 result \(4[2-9]\|[5-9][0-9]\)$/\1/p' |
	tr '\n' ' ' >"$T/user.long"
check "libc:printf: the printf family's four forms, each with its size" \
	[ "$(cat "$T/user.long")" = "42 43 44 45 " ]
printed=$(($(sum "$T/user.view" libc:printf result 1) +
	   $(sum "$T/user.view" libc:fprintf result 1) +
	   $(sum "$T/user.view" libc:dprintf result 1) +
	   $(sum "$T/user.view" libc:puts result 1)))
check "its output events on fd 1 add up to its output ($printed bytes)" \
	[ "$printed" -eq "$(wc -c <"$T/user.out")" ]

# The library's own messages are not recorded (TRACER_VERBOSE: it says
# things on stderr, with vfprintf and fputs, in the traced process).
TRACER_VERBOSE=1 record verbose -- "$STDIOUSER" "$T/traced"
check "stdiouser runs traced with TRACER_VERBOSE" [ $? -eq 0 ]
check "its output is still byte for byte the untraced one" \
	cmp "$T/plain.out" "$T/verbose.out"
check "the library said things on its standard error" \
	grep -q '^libtracer: ' "$T/verbose.err"
check "only its own writes to stderr are recorded (one fprintf)" \
	[ "$(events "$T/verbose.view" | grep -c ' fd 2\b')" -eq 1 ]

# ---- real programs ----------------------------------------------------------
# md5sum reads with fread_unlocked (gnulib's unlocked-io), 32 KiB at a time.
head -c 3000017 /dev/urandom >"$T/blob"
size=$(stat -c %s "$T/blob")
md5sum "$T/blob" >"$T/md5-plain.out"
record md5 -- md5sum "$T/blob"
check "md5sum runs traced" [ $? -eq 0 ]
check "md5sum's digest is unchanged" cmp "$T/md5-plain.out" "$T/md5.out"
blob_fd=$(awk '$5 == "libc:fread_entry:" {
	d = $7; sub(/<.*/, "", d); print d; exit }' "$T/md5.view")
read_sum=$(sum "$T/md5.view" libc:fread_exit result "$blob_fd")
check "md5sum's FILE reads add up to the file's size ($read_sum of $size)" \
	[ "$read_sum" -eq "$size" ]
check "md5sum reads bytes (size 1) and ends at eof" \
	bash -c "! awk '\$5 == \"libc:fread_entry:\" && \$9 != 1' \
			'$T/md5.view' | grep -q . &&
		 grep -q 'libc:fread_exit: .* eof\$' '$T/md5.view'"

# md5sum prints its digest with printf (__printf_chk), two digits a call.
hex=$(sum "$T/md5.view" libc:printf result 1)
check "md5sum's printf events add up to its digest's 32 digits ($hex)" \
	[ "$hex" -eq 32 ]

# seq writes its numbers with fwrite.
seq 1000 >"$T/seq-plain.out"
record seq -- seq 1000
check "seq's output is unchanged traced" cmp "$T/seq-plain.out" "$T/seq.out"
written=$(awk '$5 == "libc:fwrite:" { d = $7; sub(/<.*/, "", d)
		if (d == 1) s += $9 * $13 } END { print s + 0 }' "$T/seq.view")
check "seq's fwrite events add up to its output ($written bytes)" \
	[ "$written" -eq "$(wc -c <"$T/seq.out")" ]
finish
