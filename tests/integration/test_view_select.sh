#!/bin/bash
# What view, export and timeline select (issue 19), on a real trace of two
# processes started one after the other: +TIME counts from the first event
# of the whole trace whatever --pid or --tid select (the same +T is the
# same instant); a selection that matches nothing is said (one line, exit
# 1); --until before --since is an error before anything is shown; a
# misspelled --events pattern is warned about.
. "$(dirname "$0")/lib.sh"

check "tracerd starts" start_daemon
dir=$(session_cmd start --events 'test:*')
"$TRACEE" print 3 >/dev/null &
pid_a=$!
wait $pid_a
check "the first program exits 0" [ $? -eq 0 ]
"$TRACEE" print 3 >/dev/null &
pid_b=$!
wait $pid_b
check "the second program exits 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]

# ns TIME: SECONDS.NANOSECONDS as view prints it, in nanoseconds.
ns() { echo $((10#${1/./})); }

# sel ARGS...: tracectl view "$dir" ARGS... into $T/o and $T/e; rc.
sel() {
	"$TRACECTL" view "$dir" "$@" >"$T/o" 2>"$T/e"
	rc=$?
}

"$TRACECTL" view "$dir" >"$T/all"
first=$(ns "$(head -n 1 "$T/all" | cut -d' ' -f1)")
start_b=$(ns "$(awk -v p="$pid_b" '$3 == p { print $1; exit }' "$T/all")")
# The instant of B's second line, +T from the first event of the trace.
at=$(awk -v p="$pid_b" '$3 == p && / test:print: line 1 of 3$/ { print $1 }' \
	"$T/all")
rel=$(($(ns "$at") - first))
echo "# first event $first, B's first $start_b, B's line 1 at $at: +${rel}ns"
check "B starts after the trace's first event" [ "$start_b" -gt "$first" ]

# Without --pid, what +T selects of B.
awk -v p="$pid_b" '$3 == p' <("$TRACECTL" view "$dir" --since +${rel}ns) \
	>"$T/b_since"
awk -v p="$pid_b" '$3 == p' <("$TRACECTL" view "$dir" --until +${rel}ns) \
	>"$T/b_until"
check "--since +T (no --pid): B's events from its line 1" \
	grep -q ' test:print: line 1 of 3$' <(head -n 1 "$T/b_since")
for opt in --pid --tid; do
	sel $opt "$pid_b" --since +${rel}ns
	check "$opt B --since +T: the same instant as without $opt" \
		eval '[ $rc -eq 0 ] && [ ! -s "$T/e" ] && cmp -s "$T/o" "$T/b_since"'
	sel $opt "$pid_b" --until +${rel}ns
	check "$opt B --until +T: up to the same instant as without $opt" \
		eval '[ $rc -eq 0 ] && cmp -s "$T/o" "$T/b_until" &&
		      tail -n 1 "$T/o" | grep -q " test:print: line 1 of 3$"'
done
"$TRACECTL" export "$dir" --pid "$pid_b" --since +${rel}ns -o "$T/b.json"
check "export --pid B --since +T: from B's line 1 too" \
	eval '[ $? -eq 0 ] && grep -q "line 1 of 3" "$T/b.json" &&
	      ! grep -q "line 0 of 3" "$T/b.json"'

# A selection that matches nothing: one line, exit 1, nothing shown.
none=2147483647
for c in view export timeline; do
	o=()
	[ $c = view ] || o=(-o "$T/none.$c")
	"$TRACECTL" $c "$dir" --tid $none "${o[@]}" >"$T/o" 2>"$T/e"
	rc=$?
	check "$c --tid of no thread: exit 1, one line saying so" \
		eval '[ $rc -eq 1 ] && [ ! -s "$T/o" ] &&
		      [ "$(cat "$T/e")" = "tracectl: no events of thread $none in '\''$dir'\''" ]'
done
# 1 ns after A's last event: tracerd stamps A's process_exit when it sees
# the death, which may come after B has started.
a_end=$(ns "$(awk -v p="$pid_a" '$3 == p { t = $1 } END { print t }' "$T/all")")
after_a=$(printf '%d.%09d' $(((a_end + 1) / 1000000000)) \
	$(((a_end + 1) % 1000000000)))
sel --pid "$pid_a" --since "$after_a"
check "--pid A --since after A's end: exit 1, said" \
	eval '[ $rc -eq 1 ] && [ ! -s "$T/o" ] &&
	      [ "$(cat "$T/e")" = "tracectl: no events of process $pid_a from $after_a in '\''$dir'\''" ]'
[ $rc -eq 1 ] || sed 's/^/# /' "$T/o" "$T/e" | head -n 5
sel --since +${rel}ns --until "$(head -n 1 "$T/all" | cut -d' ' -f1)"
check "--until TIME before --since +T: exit 1, said, nothing shown" \
	eval '[ $rc -eq 1 ] && [ ! -s "$T/o" ] &&
	      [ "$(cat "$T/e")" = "tracectl: --until $(head -n 1 "$T/all" | cut -d" " -f1) is before --since $at" ]'
sel --since +2s --until +1s
check "--until +T before --since +T: usage error, exit 2" \
	eval '[ $rc -eq 2 ] && [ ! -s "$T/o" ] &&
	      [ "$(cat "$T/e")" = "tracectl: view: --until is before --since (see '\''tracectl view --help'\'')" ]'

# Misspelled --events patterns: a warning each, the exit status as before.
sel --pid "$pid_b" --events 'test:print,test:prnit'
check "--events with a misspelled name: warned about, the rest shown" \
	eval '[ $rc -eq 0 ] && [ "$(grep -c " test:print: " "$T/o")" -eq 3 ] &&
	      [ "$(cat "$T/e")" = "tracectl: warning: --events: '\''test:prnit'\'' matches no event of '\''$dir'\'' (did you mean '\''test:print'\''?)" ]'
sel --events 'test:prnit'
check "--events that select nothing: the warning, then said, exit 1" \
	eval '[ $rc -eq 1 ] && [ ! -s "$T/o" ] && [ "$(wc -l <"$T/e")" -eq 2 ] &&
	      [ "$(tail -n 1 "$T/e")" = "tracectl: no events matching '\''test:prnit'\'' in '\''$dir'\''" ]'

finish
