#!/bin/bash
# Descriptors named as strace -y names them (issue 19): `tracectl view`,
# `export` and `timeline` follow each process's descriptors through the
# recorded opens, pipes, sockets, dups and closes, a fork child starting
# with its parent's, an exec dropping the close-on-exec ones, and print
# "fd 3</path>"; --no-fd-names prints them bare.
. "$(dirname "$0")/lib.sh"
FDNAMER=$(pwd)/tests/integration/fdnamer

check "tracerd starts" start_daemon

# record NAME -- CMD...: trace CMD (output in $T/NAME.out), view the
# session into $T/NAME.view (and $T/NAME.bare without names); the session
# directory in $T/NAME.dir.
record() {
	local name=$1 dir st
	shift
	trace_run "$name" "$@"
	st=$?
	echo "$dir" >"$T/$name.dir"
	"$TRACECTL" view --no-symbols "$dir" >"$T/$name.view" || st=1
	"$TRACECTL" view --no-symbols --no-fd-names "$dir" \
		>"$T/$name.bare" || st=1
	return $st
}

# has NAME PATTERN: a line of NAME's view matches the extended regex.
has() {
	grep -Eq -- "$2" "$T/$1.view"
}

# ---- a C program: fork, inherited descriptor, dup2, close, reuse, exec --

D=$T/files
mkdir -p "$D"
echo aaa >"$D/a.txt"
echo bbb >"$D/b.txt"
echo ccc >"$D/c.txt"
record c -- "$FDNAMER" "$D"
check "fdnamer runs traced" [ $? -eq 0 -a "$(cat "$T/c.out")" = ok ]
parent=$(awk '$5 == "libc:open:" && $7 == "'"$D"'/a.txt" { print $3; exit }' \
	"$T/c.view")
child=$(awk -v p="$parent" '$3 == p && $5 == "proc:fork:" { print $7; exit }' \
	"$T/c.view")
check "the parent ($parent) and its child ($child) are in the trace" \
	[ -n "$parent" -a -n "$child" ]
check "the open names its descriptor" \
	has c " $parent .* libc:open: path $D/a.txt .* fd 3<$D/a.txt>\$"
check "the child's read of the inherited fd 3 names it" \
	has c " $child .* libc:read_entry: fd 3<$D/a.txt> count 1\$"
check "dup2 names both descriptors" \
	has c " $child .* libc:dup2: fd 3<$D/a.txt> newfd 7<$D/a.txt> result 7\$"
check "close names what it closes" \
	has c " $child .* libc:close: fd 3<$D/a.txt> result 0\$"
check "fd 3 opened again has its new name" \
	has c " $child .* libc:open: path $D/b.txt .* fd 3<$D/b.txt>\$"
check "a read of the reused fd 3 names the new file" \
	has c " $child .* libc:read_exit: fd 3<$D/b.txt> result 1\$"
check "the dup keeps the old file" \
	has c " $child .* libc:read_entry: fd 7<$D/a.txt> count 1\$"
check "a pipe's ends are named" \
	has c " $parent .* libc:pipe: fds ([0-9]+)<pipe:\[r\]> ([0-9]+)<pipe:\[w\]> result 0\$"
check "a write to the pipe names it" \
	has c " $parent .* libc:write_entry: fd [0-9]+<pipe:\[w\]> count 1\$"
check "a unix socket is named with its bound address" \
	has c " $parent .* libc:close: fd [0-9]+<socket:\[unix $D/sock\]> result 0\$"
c_fd=$(awk '$5 == "libc:open:" && $7 == "'"$D"'/c.txt" { print $NF; exit }' \
	"$T/c.view")
c_fd=${c_fd%%<*}
check "the O_CLOEXEC open is named (fd ${c_fd:-none})" \
	has c " $parent .* libc:open: path $D/c.txt flags 0x80000 .* fd $c_fd<$D/c.txt>\$"
check "after exec, the inherited fd 3 is still named" \
	has c " $parent .* libc:read_entry: fd 3<$D/a.txt> count 1\$"
check "after exec, the close-on-exec descriptor is bare" \
	has c " $parent .* libc:read_entry: fd $c_fd count 1\$"
check "--no-fd-names: no descriptor named" \
	[ "$(grep -Ec 'fds? -?[0-9]+<' "$T/c.bare")" -eq 0 ]
check "--no-fd-names: the reads as recorded" \
	grep -q " $child .* libc:read_entry: fd 3 count 1\$" "$T/c.bare"
check "names without the open events shown (--events libc:read*)" \
	sh -c "'$TRACECTL' view --no-symbols --events 'libc:read*' \
		'$(cat "$T/c.dir")' | grep -q ' $child .* libc:read_entry: fd 3<$D/a.txt> count 1\$'"

# export and timeline: the same names in the messages.
"$TRACECTL" export --no-symbols "$(cat "$T/c.dir")" -o "$T/c.json"
check "export exits 0" [ $? -eq 0 ]
check "export: the message of the child's dup2 names both" \
	grep -Fq "\"msg\":\"fd 3<$D/a.txt> newfd 7<$D/a.txt> result 7\"" \
	"$T/c.json"
check "export: the child's read_entry/exit slice names fd 3" \
	grep -Fq "\"msg\":\"fd 3<$D/b.txt> count 1\"" "$T/c.json"
"$TRACECTL" export --no-symbols --no-fd-names "$(cat "$T/c.dir")" \
	-o "$T/c-bare.json"
check "export --no-fd-names: bare" \
	sh -c "! grep -q 'fd 3<' '$T/c-bare.json' &&
	       grep -Fq '\"msg\":\"fd 3 newfd 7 result 7\"' '$T/c-bare.json'"
"$TRACECTL" timeline --no-symbols "$(cat "$T/c.dir")" -o "$T/c.html"
check "timeline: the messages name the descriptors ('<' as \\u003c)" \
	grep -Fq 'fd 3\u003c'"$D/a.txt"'> newfd 7\u003c'"$D/a.txt"'> result 7' \
	"$T/c.html"

# ---- a shell script: exec 3<, a closed and reused number, a pipeline ----

cat >"$T/script.sh" <<EOF
exec 3</etc/hostname
read -r line <&3
exec 3<&-
exec 3<"$D/b.txt"
read -r line <&3
exec 3<&-
echo hello | cat >"$D/out.txt"
EOF
record sh -- bash "$T/script.sh"
check "the script runs traced" [ $? -eq 0 ] && grep -q hello "$D/out.txt"
check "bash: exec 3</etc/hostname names fd 3" \
	has sh " bash .* libc:dup2: fd [0-9]+</etc/hostname> newfd 3</etc/hostname> result 3\$"
check "bash: the read (through fd 0) names /etc/hostname" \
	has sh " bash .* libc:read_entry: fd 0</etc/hostname> count "
check "bash: exec 3<&- names what it closes" \
	has sh " bash .* libc:close: fd 3</etc/hostname> result 0\$"
check "bash: fd 3 reopened has the other file's name" \
	has sh " bash .* libc:open: path $D/b.txt .* fd 3<$D/b.txt>\$"
check "bash: the second read names the other file" \
	has sh " bash .* libc:read_entry: fd 0<$D/b.txt> count "
check "bash: the redirection's open is named" \
	has sh " libc:open: path $D/out.txt .* fd [0-9]+<$D/out.txt>\$"
check "bash: the pipeline's pipe is named" \
	has sh " bash .* libc:pipe: fds [0-9]+<pipe:\[r\]> [0-9]+<pipe:\[w\]> result 0\$"
check "bash: cat's standard input is the pipe (inherited through fork)" \
	has sh " cat .* libc:read_entry: fd 0<pipe:\[r\]> count "
check "bash: cat's standard output is the file" \
	has sh " cat .* libc:write_entry: fd 1<$D/out.txt> count 6\$"

# ---- descriptors of the kernel's own objects --------------------------------
record k -- "$FDNAMER" kernel
check "fdnamer kernel runs traced" [ $? -eq 0 -a "$(cat "$T/k.out")" = ok ]
check "epoll_create1, eventfd, memfd_create, timerfd_create, inotify_init1 recorded with their fd" \
	eval 'has k " libc:epoll_create1: flags 0x80000 fd 3<anon_inode:\[eventpoll\]>\$" &&
	      has k " libc:eventfd: initval 0 flags 0 fd 4<anon_inode:\[eventfd\]>\$" &&
	      has k " libc:memfd_create: name scratch flags 0x1 fd 5</memfd:scratch>\$" &&
	      has k " libc:timerfd_create: clock 1 flags 0 fd 6<anon_inode:\[timerfd\]>\$" &&
	      has k " libc:inotify_init1: flags 0 fd 7<anon_inode:inotify>\$"'
check "signalfd(-1) names the descriptor it returns (the next call on it)" \
	eval 'has k " libc:signalfd: fd -1 flags 0x80000 result 8\$" &&
	      has k " libc:signalfd: fd 8<anon_inode:\[signalfd\]> flags 0 result 8\$"'
check "epoll_ctl names the epoll instance and the eventfd" \
	has k " libc:epoll_ctl: epfd 3<anon_inode:\[eventpoll\]> op ADD fd 4<anon_inode:\[eventfd\]> "
check "the eventfd's write and the memfd's ftruncate name them" \
	eval 'has k " libc:write_entry: fd 4<anon_inode:\[eventfd\]> count 8\$" &&
	      has k " libc:ftruncate: fd 5</memfd:scratch> length 4096 "'
finish
