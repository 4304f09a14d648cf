#!/bin/bash
# Compact record headers read back exactly, at every boundary: the real
# writer stamps records at chosen times (tests/integration/compact_trace.c:
# the first of a packet after a long gap, gaps of 2^32 - 1, 2^32 and
# 2^32 + 1 ns, low 32 bits that wrap, ids 4094, 4095 and 5000), picks
# compact or extended headers, and `tracectl view` and babeltrace2 show
# every record at its time, to the nanosecond, with its event.
. "$(dirname "$0")/lib.sh"

./tests/integration/compact_trace "$T" >"$T/want"
status=$?
if [ $status -eq 77 ]; then
	echo "1..0 # SKIP compact_trace cannot run here (no TSC line)"
	rm -rf "$T"
	exit 0
fi
check "compact_trace wrote the trace (exit $status)" [ $status -eq 0 ]

# kinds N..: the header kinds the writer chose for records N.. (1-based).
kinds() {
	local n out=
	for n in "$@"; do
		out="$out $(sed -n "${n}p" "$T/want" | cut -d' ' -f3)"
	done
	echo "${out# }"
}

check "the writer made 15 records" [ "$(wc -l <"$T/want")" -eq 15 ]
check "compact: a packet's first record, small gaps, a gap of 2^32 - 1, a wrap of the low bits, id 4094 ($(kinds 1 2 3 6 7 8 9 12 13 15))" \
	[ "$(kinds 1 2 3 6 7 8 9 12 13 15)" = \
	  "compact compact compact compact compact compact compact compact compact compact" ]
check "extended: gaps of 2^32 and 2^32 + 1, ids 4095 and 5000 ($(kinds 4 5 10 11 14))" \
	[ "$(kinds 4 5 10 11 14)" = "extended extended extended extended extended" ]

cut -d' ' -f1,2 "$T/want" >"$T/want.tn"

# tracectl view: "SECONDS.NANOSECONDS procname pid tid name: message".
"$TRACECTL" view "$T" >"$T/view" 2>"$T/view.err"
check "tracectl view reads it: exit 0, nothing on stderr" \
	[ $? -eq 0 ] && [ ! -s "$T/view.err" ]
awk '{ split($1, t, "."); sub(/:$/, "", $5);
       printf "%d%09d %s\n", t[1], t[2], $5 }' "$T/view" |
	sed 's/^0*\([0-9]\)/\1/' >"$T/view.tn"
check "tracectl view: every record at its time, to the nanosecond, with its event" \
	cmp -s "$T/want.tn" "$T/view.tn"
if ! cmp -s "$T/want.tn" "$T/view.tn"; then
	diff "$T/want.tn" "$T/view.tn" | head -20 | sed 's/^/# /'
fi

if command -v babeltrace2 >/dev/null; then
	# --clock-cycles: the clock's raw value (ns, the clock is 1 GHz).
	babeltrace2 --clock-cycles "$T" >"$T/bt" 2>"$T/bt.err"
	check "babeltrace2 reads it: exit 0, nothing on stderr" \
		[ $? -eq 0 ] && [ ! -s "$T/bt.err" ]
	sed -n 's/^\[0*\([0-9][0-9]*\)\] ([^)]*) [^ ]* \([^:]*:[^:]*\): .*$/\1 \2/p' \
		"$T/bt" >"$T/bt.tn"
	check "babeltrace2: every record at its time, to the nanosecond, with its event" \
		cmp -s "$T/want.tn" "$T/bt.tn"
	if ! cmp -s "$T/want.tn" "$T/bt.tn"; then
		diff "$T/want.tn" "$T/bt.tn" | head -20 | sed 's/^/# /'
		head -3 "$T/bt" "$T/bt.err" | sed 's/^/# /'
	fi
else
	ok 0 "# SKIP babeltrace2 is not installed (scripts/bootstrap)"
	ok 0 "# SKIP babeltrace2 is not installed (scripts/bootstrap)"
fi
finish
