#!/bin/sh
# test_hanoi.sh - the moves read back from the ring buffer are the moves.
#
# For N = 1..10, `hanoi --print N` (the moves printed while solving) and
# `hanoi --moves N` (the moves recorded into the ring buffer, then read and
# formatted at dump time) must be byte for byte identical, and there must be
# 2^N - 1 of them. TAP output, one test per N.
#
# HANOI names the program; the default is relative to the build directory,
# where automake runs the tests.

HANOI=${HANOI:-./examples/hanoi}

echo "1..10"
if [ ! -x "$HANOI" ]; then
	echo "Bail out! $HANOI is not an executable file (set HANOI)"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_hanoi.XXXXXX") || {
	echo "Bail out! cannot create a temporary directory"
	exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# check N: prints nothing, returns 0 or 1 with diagnostics in $why.
check() {
	"$HANOI" --print "$1" >"$tmp/print" 2>"$tmp/print.err" ||
		{ why="--print $1 exited with $?"; return 1; }
	"$HANOI" --moves "$1" >"$tmp/moves" 2>"$tmp/moves.err" ||
		{ why="--moves $1 exited with $?"; return 1; }
	cmp -s "$tmp/print" "$tmp/moves" ||
		{ why="--print $1 and --moves $1 differ"; return 1; }
	count=$(wc -l <"$tmp/moves")
	count=$((count + 0))
	want=$(((1 << $1) - 1))
	[ "$count" -eq "$want" ] ||
		{ why="$count moves, expected $want"; return 1; }
	return 0
}

n=1
while [ "$n" -le 10 ]; do
	why=
	if check "$n"; then
		echo "ok $n - hanoi --print $n and --moves $n agree ($want moves)"
	else
		echo "not ok $n - hanoi --print $n and --moves $n"
		echo "# $why"
		for f in "$tmp/print.err" "$tmp/moves.err"; do
			[ -f "$f" ] && sed 's/^/# /' "$f"
		done
		if [ -f "$tmp/moves" ] && [ -f "$tmp/print" ]; then
			diff "$tmp/print" "$tmp/moves" | head -n 10 |
				sed 's/^/# /'
		fi
	fi
	rm -f "$tmp"/*
	n=$((n + 1))
done
exit 0
