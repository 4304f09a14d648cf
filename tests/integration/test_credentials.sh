#!/bin/bash
# Who may connect (SO_PEERCRED): a daemon serves its own user; a root
# daemon also serves members of the `tracing` group. Needs root and
# setpriv to run processes as another user; skipped otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null ||
   ! id nobody >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root, setpriv and a 'nobody' user"
	rm -rf "$T"
	exit 0
fi
chmod 755 "$T"
as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
}

check "root tracerd starts" start_daemon
dir=$(session_cmd start)
out=$(as_nobody "$TRACEE" print 3); rc=$?
ok $([ $rc -eq 0 ] && [ "$(echo "$out" | wc -l)" -eq 3 ]; echo $?) \
	"a refused program still runs normally"
check "root tracerd refused the other user's process" \
	grep -q "refused a client (pid [0-9]*, uid $(id -u nobody))" "$LOG"
"$TRACEE" print 3 >/dev/null
session_cmd stop >/dev/null
check "only root's process was traced" [ "$(ls "$dir" | wc -l)" -eq 1 ]

# A refused user connecting in a loop does not flood the log: at most 10
# lines of it every 10 s, the next one saying how many were left out. The
# loop may meet the end of the window the refusal above opened, and a
# slow machine (ASan in CI: 300 connections took more than 10 s) passes
# into further windows: 10 lines for each window it reached.
before=$(grep -c 'refused a client' "$LOG")
t0=$(now_ms)
for i in $(seq 300); do
	as_nobody "$TRACECTL" status >/dev/null 2>&1
done
windows=$(( ($(now_ms) - t0) / 10000 + 2 ))
n=$(( $(grep -c 'refused a client' "$LOG") - before ))
check "300 refused connections: $n log lines ($windows windows of 10 s reached: at most 10 each)" \
	[ "$n" -le $((10 * windows)) ]

# Traces hold the programs' arguments, paths and data: private to root
# (and the tracing group) unless tracerd runs with --world-readable.
nobody_reads() {
	as_nobody cat "$1" >/dev/null 2>&1
}
nobody_cannot_read() {
	! nobody_reads "$1"
}
f=$(find "$dir" -type f -name 'default-*' | head -n 1)
check "the trace is private: nobody cannot read ${f##*/}" nobody_cannot_read "$f"
n=$(find "$dir" -perm /o=rwx | wc -l)
check "no file or directory of the session is open to others ($n)" [ "$n" -eq 0 ]

if getent group tracing >/dev/null; then
	out=$(setpriv --reuid=nobody --regid="$(id -g nobody)" \
		--groups="$(getent group tracing | cut -d: -f3)" \
		"$TRACECTL" status 2>&1)
	ok $? "a member of the tracing group may connect"
fi
stop_daemon
check "root tracerd starts with --world-readable" \
	start_daemon --world-readable --output "$T/open"
dir=$(session_cmd start)
"$TRACEE" print 3 >/dev/null
session_cmd stop >/dev/null
f=$(find "$dir" -type f -name 'default-*' | head -n 1)
check "then nobody can read ${f##*/}" nobody_reads "$f"
stop_daemon

# A daemon of another user refuses root.
mkdir -p "$T/nobody" && chown nobody "$T/nobody"
export TRACER_SOCKET=$T/nobody/sock
as_nobody "$TRACERD" --socket "$TRACER_SOCKET" --output "$T/nobody/out" \
	--log "$T/nobody/log" --daemonize
ok $? "tracerd starts as nobody"
DPID=$(as_nobody "$TRACECTL" status | sed -n 's/^tracerd pid //p')
out=$("$TRACECTL" status 2>&1); rc=$?
ok $([ $rc -eq 1 ] && echo "$out" | grep -q '^tracectl: permission denied: tracerd serves only its own user'; echo $?) \
	"nobody's tracerd refuses root with a clear error"
echo "# $out"
check "and says why" grep -q "refused a client (pid [0-9]*, uid 0)" "$T/nobody/log"

finish
