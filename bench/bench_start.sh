#!/bin/bash
# bench_start.sh - what tracing adds to a program's start and exit
# (LD_PRELOAD=libtracer.so /bin/true by default), measured spawn to exit
# by bench_spawn, the cases in turn so that the machine's other work
# weighs on each alike:
#
#   untraced                   no libtracer
#   empty library preloaded    a library with nothing in it (the floor of
#                              any preloaded library: the loader's work)
#   no tracerd                 libtracer, nothing answers on the socket
#   tracerd, no session        not connected: waits for a session
#   tracerd, session           registered, start events (the process
#                              records into a segment of its own at
#                              once; tracerd adopts it: no reply waited)
#   session, --no-start-pools  the same, the reply awaited (tracerd
#                              --no-start-pools: its pool from tracerd)
#   tracerd stopped (SIGSTOP)  no session on its state page: no wait
#
# Each traced case has its own tracerd (default settings), with its
# output in a directory of its own: --output-dir DIR puts the session's
# there (a tmpfs, say: creating a process's files is most of what tracerd
# does per start, and ext4 on a busy disk makes it slow).
#
#   cd build && ../bench/bench_start.sh [-n RUNS] [--load]
#        [--output-dir DIR] [PROGRAM ARGS...]
#
# --load runs one busy loop per CPU meanwhile. Prints, per case, the
# median and 90th percentile in milliseconds and the median's difference
# from the untraced start. Run it from a build directory (a sanitizer
# build's libtracer gets its runtime preloaded first).
set -u
runs=300 load= outdir=
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	--load) load=1; shift ;;
	--output-dir) outdir=$2; shift 2 ;;
	-h|--help) sed -n '2,30p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- /bin/true
[ -x ./tracerd/tracerd ] && [ -x ./bench/bench_spawn ] ||
	{ echo "bench_start.sh: run it from a build directory (make first)" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/bench-start.XXXXXX")
lib=$(pwd)/libtracer/.libs/libtracer.so
pre=$(ldd "$lib" | awk '/lib(asan|ubsan)/ { printf "%s:", $3 }')
preload=$pre$lib
PIDS= LOADPIDS=
cleanup() {
	[ -n "$LOADPIDS" ] && kill $LOADPIDS 2>/dev/null
	for p in $PIDS; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

# daemon NAME [OUTPUT [OPTIONS...]]: a tracerd on $T/NAME.sock; its pid
# in $dpid.
daemon() {
	local name=$1 out=${2:-$T/$1.out}

	shift $(($# < 2 ? $# : 2))
	./tracerd/tracerd --socket "$T/$name.sock" --output "$out" \
		--log "$T/$name.log" --daemonize "$@" || exit 1
	dpid=$(TRACER_SOCKET=$T/$name.sock ./tracectl/tracectl status |
		sed -n 's/^tracerd pid //p')
	PIDS="$PIDS $dpid"
}

# The floor: an empty library, preloaded (skipped without a compiler).
empty=
if printf 'int bench_start_empty;\n' |
	${CC:-cc} -shared -fPIC -o "$T/empty.so" -x c - 2>/dev/null; then
	empty="empty library preloaded|LD_PRELOAD=$T/empty.so"
fi

daemon idle
daemon session "${outdir:+$outdir/bench-start-$$}"
TRACER_SOCKET=$T/session.sock ./tracectl/tracectl start >/dev/null
daemon waiting "${outdir:+$outdir/bench-start-w$$}" --no-start-pools
TRACER_SOCKET=$T/waiting.sock ./tracectl/tracectl start >/dev/null
daemon stopped
kill -STOP "$dpid"

if [ -n "$load" ]; then
	for i in $(seq "$(nproc)"); do
		(while :; do :; done) &
		LOADPIDS="$LOADPIDS $!"
	done
fi
echo "== start and exit of '$*' ($runs runs each${load:+, one busy loop per CPU}), ms =="
./bench/bench_spawn -n "$runs" \
	-c "untraced|" \
	${empty:+-c "$empty"} \
	-c "no tracerd|LD_PRELOAD=$preload TRACER_SOCKET=$T/none.sock" \
	-c "tracerd, no session|LD_PRELOAD=$preload TRACER_SOCKET=$T/idle.sock" \
	-c "tracerd, session|LD_PRELOAD=$preload TRACER_SOCKET=$T/session.sock" \
	-c "session, --no-start-pools|LD_PRELOAD=$preload TRACER_SOCKET=$T/waiting.sock" \
	-c "tracerd stopped (SIGSTOP)|LD_PRELOAD=$preload TRACER_SOCKET=$T/stopped.sock" \
	-- "$@"
TRACER_SOCKET=$T/session.sock ./tracectl/tracectl stop >/dev/null
TRACER_SOCKET=$T/waiting.sock ./tracectl/tracectl stop >/dev/null
[ -z "$outdir" ] || rm -rf "$outdir/bench-start-$$" "$outdir/bench-start-w$$"
