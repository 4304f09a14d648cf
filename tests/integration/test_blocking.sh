#!/bin/bash
# A traced program's blocking calls behave as untraced while tracectl
# start/filter/stop changes rain update signals on it: no call fails with
# EINTR or returns before its time because of the tracer, and the
# program's own SIGALRM (a handler without SA_RESTART) still interrupts
# them exactly as it does untraced. blockee (not linked with libtracer,
# preloaded) makes each call once per round and prints one line per call:
# its result, errno and whether it returned early; every traced round must
# print the lines of the untraced one.
. "$(dirname "$0")/lib.sh"
BLOCKEE=./tests/integration/blockee
LIB=$(pwd)/libtracer/.libs/libtracer.so
CHANGES=100

# round NAME FILE: one round of the spawned blockee NAME, its lines in FILE.
round() {
	local fin fout line
	eval "fin=\$${1}_in fout=\$${1}_out"
	echo r >&"$fin"
	: >"$2"
	while read -r -t 120 line <&"$fout"; do
		[ "$line" = end ] && return 0
		echo "$line" >>"$2"
	done
	return 1
}

# storm: start, filter, stop, ... until $T/storm.stop exists; the count
# of changes made so far in $T/storm.count.
storm() {
	local n=0
	while [ ! -e "$T/storm.stop" ]; do
		"$TRACECTL" start >/dev/null && n=$((n + 1))
		"$TRACECTL" filter '*' >/dev/null && n=$((n + 1))
		"$TRACECTL" stop >/dev/null && n=$((n + 1))
		echo "$n" >"$T/storm.count.new"
		mv "$T/storm.count.new" "$T/storm.count"
	done
}

changes() {
	cat "$T/storm.count" 2>/dev/null || echo 0
}

check "tracerd starts" start_daemon

# --- Untraced: what every call does -----------------------------------------
check "blockee starts untraced" spawn u "$BLOCKEE"
round u "$T/plain"
check "an untraced round completes" [ $? -eq 0 ]
quit u
check "untraced, no call returns before its time" \
	bash -c "! grep -q ' early 1' '$T/plain'"
sed 's/^/# untraced: /' "$T/plain"

# --- Traced, under a storm of changes ---------------------------------------
PRELOAD=$RECORD_PRELOAD${RECORD_PRELOAD:+:}$LIB
check "blockee starts preloaded" spawn b env LD_PRELOAD="$PRELOAD" "$BLOCKEE"
storm &
storm_pid=$!
rounds=0
probes=
# Every round runs while the storm does; rounds go on until it made
# $CHANGES changes (10 rounds at most).
while [ "$rounds" -lt 10 ]; do
	probes="$probes$(cmd b p) "
	round b "$T/traced.$rounds" || break
	probes="$probes$(cmd b p) "
	rounds=$((rounds + 1))
	[ "$(changes)" -ge "$CHANGES" ] && break
done
made=$(changes)
touch "$T/storm.stop"
wait "$storm_pid"
quit b
check "blockee exits normally" [ $? -eq 0 ]
echo "# $rounds traced round(s) under $made changes; probes: $probes"
check "the storm made at least $CHANGES changes during the rounds ($made)" \
	[ "$made" -ge "$CHANGES" ]
# The probe blocks in raw ppoll system calls (no wrapper) until one fails
# with EINTR: before and after every round, update signals reached the
# thread while it was blocked.
check "update signals reached the blocked thread before and after each round" \
	eval '[ -n "$probes" ] && ! echo "$probes" | grep -q "interrupted 0"'

# Every line of the untraced round, in every traced round.
while read -r line; do
	bad=
	for ((i = 0; i < rounds; i++)); do
		got=$(grep "^${line%% *} " "$T/traced.$i")
		[ "$got" = "$line" ] || bad="$bad [round $i: ${got:-nothing}]"
	done
	check "traced as untraced: $line" [ "$rounds" -gt 0 -a -z "$bad" ]
	[ -z "$bad" ] || echo "# traced:$bad"
done <"$T/plain"

finish
