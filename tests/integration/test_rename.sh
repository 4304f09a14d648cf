#!/bin/bash
# Threads renamed while traced (tests/integration/namer, libtracer
# preloaded): one names itself with prctl(PR_SET_NAME), one with
# pthread_setname_np(), the main thread names another one and itself.
# From the rename on, each thread goes by its new name:
#   - in `tracectl status` while the program runs;
#   - in process.meta (a `thread TID NAME SINCE` line per rename);
#   - in the trace: tracer:thread_name events (tid, new name), recorded
#     by the thread that renamed, also when the filter leaves pthread:*
#     out;
#   - in the timeline: the lane carries the new name, and the old one as
#     a former name;
#   - in the Chrome export: the thread's last thread_name is the new name
#     (its first, the name it had when it started).
. "$(dirname "$0")/lib.sh"

NAMER=./tests/integration/namer
SRC=$(dirname "$0")
lib=$(cd libtracer/.libs && pwd)/libtracer.so
PRELOAD=${RECORD_PRELOAD:+$RECORD_PRELOAD:}$lib
# The expected names: "TID NAME" per renamed thread.
expect() {
	printf '%s nm-main\n%s nm-prctl\n%s nm-self\n%s nm-other\n' \
		"$main" "$a" "$b" "$c"
}

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	rm -rf "$T"
	exit 0
fi

check "tracerd starts" start_daemon
dir=$(session_cmd start)
spawn n env LD_PRELOAD="$PRELOAD" "$NAMER"
check "namer starts, traced" [ $? -eq 0 ]
# Its threads start once it has read tracerd's answer to its
# registration (mapped its control page): a thread whose events all come
# before the rest of the pool is mapped keeps them in a stash, and holds
# no buffer for status to show until its next event (twice in CI: the
# thread renamed by prctl was missing). The answer is read at the
# program's next event (fgets() makes none: the C library reads without
# the wrapper): 'w' makes one, until the page is there.
for i in $(seq 200); do
	grep -q 'memfd:tracer-control' "/proc/$n_pid/maps" && break
	cmd n w >/dev/null
	sleep 0.05	# polling its mappings, not waiting it out
done
check "namer read tracerd's answer (its control page is mapped)" \
	grep -q 'memfd:tracer-control' "/proc/$n_pid/maps"
read -r word main a b c <<<"$(cmd n r)"
check "namer renames its threads" [ "$word" = renamed ]
pid=$n_pid

# status, while the renamed threads live.
"$TRACECTL" status --json >"$T/status.json"
python3 - "$T/status.json" "$pid" >"$T/status" 2>&1 <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
for p in st["processes"]:
    if p["pid"] == int(sys.argv[2]):
        for t in sorted(p["threads"], key=lambda t: t["tid"]):
            print(t["tid"], t["name"])
PY
sed 's/^/# status: /' "$T/status"
ok $(expect | while read -r tid name; do
	grep -qx "$tid $name" "$T/status" || exit 1; done; echo $?) \
	"status: every renamed thread under its new name"

quit n
check "namer exits 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]
meta=$dir/namer-$pid/tracer/process.meta
sed -n 's/^thread /# meta: thread /p' "$meta"
ok $(expect | while read -r tid name; do
	grep -Eqx "thread $tid $name [0-9]+" "$meta" || exit 1; done &&
	grep -Eqx "thread $a namer" "$meta"; echo $?) \
	"process.meta: a thread line per rename (TID NAME SINCE), after the first name"

"$TRACECTL" view "$dir" >"$T/view" 2>"$T/view.err"
ok $([ $? -eq 0 ] && [ ! -s "$T/view.err" ] &&
	[ "$(awk -v t="$a" '$4 == t && $5 == "tracer:thread_name:"' "$T/view" |
	     cut -d' ' -f6-)" = "tid $a name nm-prctl" ] &&
	[ "$(awk -v t="$b" '$4 == t && $5 == "tracer:thread_name:"' "$T/view" |
	     cut -d' ' -f6-)" = "tid $b name nm-self" ] &&
	[ "$(awk -v t="$main" '$4 == t && $5 == "tracer:thread_name:"' "$T/view" |
	     cut -d' ' -f6- | tr '\n' ,)" = "tid $c name nm-other,tid $main name nm-main," ]
	echo $?) \
	"view: tracer:thread_name by the thread that renamed (itself or another)"

# The lanes of the timeline: "lane PID TID PROCESS / THREAD formerly ...".
lanes() {
	python3 "$SRC/check_timeline.py" "$1" | sed -n 's/^lane //p'
}
"$TRACECTL" timeline "$dir" -o "$T/tl.html"
lanes "$T/tl.html" >"$T/lanes"
sed 's/^/# lane /' "$T/lanes"
ok $(expect | while read -r tid name; do
	grep -qx "$pid $tid namer / $name formerly namer" "$T/lanes" ||
		exit 1; done; echo $?) \
	"timeline: each renamed thread's lane carries its new name (formerly namer)"

"$TRACECTL" export "$dir" -o "$T/trace.json"
python3 - "$T/trace.json" "$pid" >"$T/names" 2>&1 <<'PY'
import json, sys
names = {}
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "thread_name" and \
            e["pid"] == int(sys.argv[2]):
        names.setdefault(e["tid"], []).append(e["args"]["name"])
for tid, n in sorted(names.items()):
    print(tid, n[0], n[-1])
PY
sed 's/^/# thread_name: /' "$T/names"
ok $(expect | while read -r tid name; do
	grep -qx "$tid namer $name" "$T/names" || exit 1; done; echo $?) \
	"export: a renamed thread's last thread_name is its new name"

# Without pthread:* in the filter, the names still follow.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record --events '-pthread:*' -- \
	"$NAMER" batch >"$T/batch" 2>"$T/batch.err"
check "namer batch, traced without pthread:*, exits 0" [ $? -eq 0 ]
read -r word main a b c < <(grep '^renamed ' "$T/batch")
dir2=$(record_dir "$T/batch.err")
"$TRACECTL" timeline "$dir2" -o "$T/tl2.html"
lanes "$T/tl2.html" >"$T/lanes2"
pid2=$(sed -n 's/^pid //p' "$dir2"/namer-*/tracer/process.meta)
ok $(! grep -q ' pthread:' <("$TRACECTL" view "$dir2") &&
	expect | while read -r tid name; do
	grep -qx "$pid2 $tid namer / $name formerly namer" "$T/lanes2" ||
		exit 1; done; echo $?) \
	"without pthread:* recorded, the lanes carry the new names too"

finish
