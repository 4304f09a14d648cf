#!/bin/bash
# The file system calls a user looks for in a trace (issue 19): stat and
# its kin, access, unlink, rename, mkdir, rmdir, truncate, fcntl (locks
# too, as sqlite3 takes them), ioctl and directory listing, each recorded
# with its paths, arguments, result and errno, on an unmodified program
# (fsuser, preloaded) whose results and errno are those of an untraced
# run; then real tools (mkdir -p, mv, ls -l, rm -r) whose events name the
# paths they worked on.
. "$(dirname "$0")/lib.sh"
FSUSER=./tests/integration/fsuser

check "tracerd starts" start_daemon

# record NAME CMD...: trace CMD; stdout in $T/NAME.txt, its events'
# messages without the paths the view adds to descriptors, one a line
# ("libc:stat: path ..."), in $T/NAME.msgs.
record() {
	local name=$1 dir
	shift
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$@" \
		>"$T/$name.txt" 2>"$T/$name.err"
	rc=$?
	dir=$(record_dir "$T/$name.err")
	"$TRACECTL" view --no-symbols "$dir" >"$T/$name.view" 2>"$T/$name.verr"
	cut -d' ' -f5- "$T/$name.view" | sed 's/\(fd -\{0,1\}[0-9]*\)<[^>]*>/\1/g' \
		>"$T/$name.msgs"
}
# has NAME LINE...: every LINE is a message of NAME's trace, whole.
has() {
	local name=$1 l missing=0
	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$T/$name.msgs" || { echo "# missing: $l"; missing=1; }
	done
	return $missing
}

# ---- fsuser: every call, successful and failing ------------------------------
mkdir "$T/plain" "$T/d"
"$FSUSER" "$T/plain" >"$T/plain.txt" 2>"$T/plain.err"
check "fsuser passes its own checks untraced" [ $? -eq 0 ]
record fs "$FSUSER" "$T/d"
check "fsuser passes its own checks traced (results and errno as untraced)" \
	[ $rc -eq 0 ]
check "fsuser prints the same traced and untraced" \
	cmp -s "$T/plain.txt" "$T/fs.txt"
var() { sed -n "s/^# $1 //p" "$T/fs.txt"; }
D=$T/d
dfd=$(var dfd)
fd=$(var fd)

check "stat, stat64 and __xstat: path, mode, size, result; errno on failure" \
	eval '[ "$(grep -c "^libc:stat: path $D/f mode 0100644 size 5 result 0$" "$T/fs.msgs")" -eq 3 ] &&
	      has fs "libc:stat: path $D/missing mode 0 size 0 result -1 errno ENOENT"'
check "lstat: the link itself (mode 0120777)" \
	has fs "libc:lstat: path $D/link mode 0120777 size 1 result 0" \
	       "libc:lstat: path $D/missing mode 0 size 0 result -1 errno ENOENT"
check "fstat and fstatat (and __fxstatat): fd or dirfd, path, flags" \
	has fs "libc:fstat: fd $fd mode 0100644 size 5 result 0" \
	       "libc:fstat: fd 999 mode 0 size 0 result -1 errno EBADF" \
	       "libc:fstatat: dirfd $dfd path f flags 0x100 mode 0100644 size 5 result 0" \
	       "libc:fstatat: dirfd $dfd path missing flags 0 mode 0 size 0 result -1 errno ENOENT" \
	       "libc:fstatat: dirfd $dfd path xmissing flags 0 mode 0 size 0 result -1 errno ENOENT"
check "statx: the mask asked, the mode and size answered" \
	has fs "libc:statx: dirfd $dfd path f flags 0 mask 0x7ff mode 0100644 size 5 result 0" \
	       "libc:statx: dirfd $dfd path missing flags 0 mask 0x200 mode 0 size 0 result -1 errno ENOENT"
check "access, faccessat, euidaccess, eaccess: the mode asked" \
	has fs "libc:access: path $D/f mode 6 result 0" \
	       "libc:access: path $D/missing mode 0 result -1 errno ENOENT" \
	       "libc:faccessat: dirfd $dfd path f mode 1 flags 0 result -1 errno EACCES" \
	       "libc:euidaccess: path $D/f mode 4 result 0" \
	       "libc:euidaccess: path $D/missing mode 4 result -1 errno ENOENT"
check "truncate, ftruncate, ftruncate64: path or fd, length" \
	has fs "libc:truncate: path $D/f length 3 result 0" \
	       "libc:truncate: path $D/missing length 3 result -1 errno ENOENT" \
	       "libc:ftruncate: fd $fd length 10 result 0" \
	       "libc:ftruncate: fd 999 length 10 result -1 errno EBADF" \
	       "libc:ftruncate: fd $fd length 7 result 0"
check "mkdir, mkdirat: path and mode" \
	has fs "libc:mkdir: path $D/sub mode 0750 result 0" \
	       "libc:mkdir: path $D/sub mode 0750 result -1 errno EEXIST" \
	       "libc:mkdirat: dirfd $dfd path sub2 mode 0700 result 0" \
	       "libc:mkdirat: dirfd $dfd path missing/sub mode 0700 result -1 errno ENOENT"
check "rename, renameat, renameat2: both paths (and the flags)" \
	has fs "libc:rename: oldpath $D/f newpath $D/g result 0" \
	       "libc:rename: oldpath $D/missing newpath $D/x result -1 errno ENOENT" \
	       "libc:renameat: olddirfd $dfd oldpath g newdirfd $dfd newpath h result 0" \
	       "libc:renameat2: olddirfd $dfd oldpath h newdirfd $dfd newpath link flags 0x1 result -1 errno EEXIST" \
	       "libc:renameat2: olddirfd $dfd oldpath h newdirfd $dfd newpath i flags 0 result 0"
check "unlink, unlinkat, rmdir: path (and the flags)" \
	has fs "libc:unlink: path $D/link result 0" \
	       "libc:unlink: path $D/missing result -1 errno ENOENT" \
	       "libc:unlinkat: dirfd $dfd path sub2 flags 0x200 result 0" \
	       "libc:unlinkat: dirfd $dfd path missing flags 0 result -1 errno ENOENT" \
	       "libc:rmdir: path $D/missing result -1 errno ENOENT" \
	       "libc:rmdir: path $D/sub result 0"

# fcntl: i is opened twice (descriptors lfd and lfd2) after dfd was.
lfd=$((fd)) lfd2=$((fd + 1))
check "fcntl: the command by number and name, its argument (none for F_GETFL)" \
	has fs "libc:fcntl: fd $lfd cmd 3 cmdname F_GETFL arg 0 result 32770" \
	       "libc:fcntl: fd $lfd cmd 4 cmdname F_SETFL arg 0x800 result 0" \
	       "libc:fcntl: fd $lfd cmd 2 cmdname F_SETFD arg 0x1 result 0" \
	       "libc:fcntl: fd $lfd cmd 1030 cmdname F_DUPFD_CLOEXEC arg 0x32 result 50" \
	       "libc:fcntl: fd 999 cmd 1 cmdname F_GETFD arg 0 result -1 errno EBADF" \
	       "libc:fcntl: fd $lfd cmd 12345 cmdname ? arg 0 result -1 errno EINVAL"
check "fcntl locks as sqlite3 takes them: type, whence, start, len; F_OFD_GETLK answers the lock in the way" \
	has fs "libc:fcntl_lock: fd $lfd cmd F_SETLK type F_WRLCK whence 0 start 1073741824 len 1 result 0" \
	       "libc:fcntl_lock: fd $lfd2 cmd F_OFD_GETLK type F_WRLCK whence 0 start 1073741824 len 1 result 0" \
	       "libc:fcntl_lock: fd $lfd2 cmd F_OFD_SETLK type F_RDLCK whence 0 start 1073741824 len 1 result -1 errno EAGAIN" \
	       "libc:fcntl_lock: fd $lfd cmd F_SETLK type F_WRLCK whence 0 start 0 len 0 result -1 errno EAGAIN"
check "F_SETLKW and F_OFD_SETLKW, which may wait: an entry and an exit event" \
	eval 'grep -A1 -xF "libc:fcntl_lock_entry: fd $lfd cmd F_SETLKW type F_UNLCK whence 0 start 1073741824 len 1" "$T/fs.msgs" |
	      grep -qxF "libc:fcntl_lock_exit: fd $lfd result 0" &&
	      grep -A1 -xF "libc:fcntl_lock_entry: fd $lfd2 cmd F_OFD_SETLKW type F_WRLCK whence 0 start 0 len 0" "$T/fs.msgs" |
	      grep -qxF "libc:fcntl_lock_exit: fd $lfd2 result 0"'
check "ioctl: the request by number and name, the argument, errno" \
	eval 'grep -Eqx "libc:ioctl: fd [0-9]+ request 0x541b reqname FIONREAD arg 0x[0-9a-f]+ result 0" "$T/fs.msgs" &&
	      grep -Eqx "libc:ioctl: fd $lfd request 0x5401 reqname TCGETS arg 0x[0-9a-f]+ result -1 errno ENOTTY" "$T/fs.msgs" &&
	      grep -Eqx "libc:ioctl: fd 999 request 0x5421 reqname FIONBIO arg 0x[0-9a-f]+ result -1 errno EBADF" "$T/fs.msgs"'
# The listing of D: ., .., i and sub, in the file system's order.
names=$(awk '/^libc:opendir: path / && $3 == D { on = 1; next }
	     on && /^libc:readdir: / && $5 == 1 { print $7 } on && /^libc:closedir: / { exit }' \
	     D="$D" "$T/fs.msgs" | sort | tr '\n' ' ')
check "opendir: path and the DIR's fd; failing: errno" \
	has fs "libc:opendir: path $D fd $(var dirfd)" \
	       "libc:opendir: path $D/missing fd -1 errno ENOENT"
check "readdir: every entry's name, then the end (result 0) ($names)" \
	eval '[ "$names" = ". .. i sub " ] &&
	      has fs "libc:readdir: fd $(var dirfd) result 0 name " "libc:closedir: fd $(var dirfd) result 0"'
check "fdopendir and readdir64; a failing readdir and closedir: errno" \
	eval 'has fs "libc:fdopendir: fd 999 result -1 errno EBADF" \
	             "libc:readdir: fd $(var dirfd) result -1 name  errno EBADF" \
	             "libc:closedir: fd $(var dirfd) result -1 errno EBADF" &&
	      grep -q "^libc:fdopendir: fd [0-9]* result 0$" "$T/fs.msgs"'

# ---- real tools -------------------------------------------------------------------
W=$T/w
mkdir "$W"
echo hello >"$W/f1"
record mkdir mkdir -p "$W/a/b/c"
check "mkdir -p: a mkdir for each level, EEXIST for the ones already there" \
	eval '[ $rc -eq 0 ] && [ -d "$W/a/b/c" ] &&
	      has mkdir "libc:mkdir: path w mode 0777 result -1 errno EEXIST" \
	                "libc:mkdir: path a mode 0777 result 0" \
	                "libc:mkdir: path b mode 0777 result 0" \
	                "libc:mkdir: path c mode 0777 result 0"'
record mv mv "$W/f1" "$W/a/f2"
check "mv: the rename names both paths" \
	eval '[ $rc -eq 0 ] && [ -f "$W/a/f2" ] &&
	      grep -Eqx "libc:rename(at2?: olddirfd -100|:) oldpath $W/f1 (newdirfd -100 )?newpath $W/a/f2( flags 0x[0-9a-f]+)? result 0" "$T/mv.msgs"'
ls -l "$W/a" >"$T/ls-plain.txt"
record ls ls -l "$W/a"
check "ls -l prints the same traced" cmp -s "$T/ls-plain.txt" "$T/ls.txt"
lsfd=$(sed -n "s|^libc:opendir: path $W/a fd \([0-9]*\)$|\1|p; s|^libc:fdopendir: fd \([0-9]*\) result 0$|\1|p" \
	"$T/ls.msgs" | head -n 1)
check "ls -l: it opens the directory and lists it (b, f2, then the end)" \
	eval '[ -n "$lsfd" ] &&
	      has ls "libc:readdir: fd $lsfd result 1 name b" \
	             "libc:readdir: fd $lsfd result 1 name f2" \
	             "libc:readdir: fd $lsfd result 0 name "'
check "ls -l: it looks up each entry (path, directory or file mode, size)" \
	eval 'grep -Eq "^libc:(statx: dirfd -100|l?stat:|fstatat: dirfd -100) path $W/a/f2 .*mode 0100644 size 6 result 0$" "$T/ls.msgs" &&
	      grep -Eq "^libc:(statx: dirfd -100|l?stat:|fstatat: dirfd -100) path $W/a/b .*mode 040[0-7]+ size [0-9]+ result 0$" "$T/ls.msgs"'
record rm rm -r "$W/a"
check "rm -r: each entry removed by name, the top one by its path" \
	eval '[ $rc -eq 0 ] && [ ! -e "$W/a" ] &&
	      grep -Eq "^libc:unlinkat: dirfd [0-9]+ path f2 flags 0 result 0$" "$T/rm.msgs" &&
	      grep -Eq "^libc:unlinkat: dirfd [0-9]+ path c flags 0x200 result 0$" "$T/rm.msgs" &&
	      grep -Eq "^libc:(unlinkat: dirfd -100 path $W/a flags 0x200|rmdir: path $W/a) result 0$" "$T/rm.msgs"'

finish
