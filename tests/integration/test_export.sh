#!/bin/bash
# tracectl export on a real trace: tests/integration/pairs records nested
# func:entry/func:exit inside test:work_begin/test:work_end in several
# threads, under the real tracerd; the Chrome trace must parse, hold one
# thread_name per thread, and as many properly nested slices as the pairs
# the program recorded (counted with tracectl view), at the same times, and
# one instant per other event (tests/integration/check_chrome.py).
# Then, with every event of the library: its single events proc:exit and
# pthread:exit are instants, not ends without a begin; and the three
# process images of one pid (tests/integration/forker forkexec: a child
# that execs itself, twice) are three processes, each with its own events.
. "$(dirname "$0")/lib.sh"

PAIRS=./tests/integration/pairs
FORKER=./tests/integration/forker
CHECK_CHROME=$(dirname "$0")/check_chrome.py
THREADS=4
ROUNDS=300
DEPTH=5

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	rm -rf "$T"
	exit 0
fi

check "tracerd starts" start_daemon
dir=$(session_cmd start --events "$OWN_EVENTS")
"$PAIRS" $THREADS $ROUNDS $DEPTH
check "the traced program exits 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]

"$TRACECTL" view "$dir" >"$T/view"
check "view reads the trace" [ $? -eq 0 ]
count() { grep -c " $1: " "$T/view"; }
work=$(count test:work_begin)
entries=$(count func:entry)
pairs=$((THREADS * ROUNDS))
ok $([ "$work" -eq $pairs ] && [ "$(count test:work_end)" -eq $pairs ] &&
	[ "$entries" -eq $((pairs * DEPTH)) ] &&
	[ "$(count func:exit)" -eq $((pairs * DEPTH)) ]; echo $?) \
	"the trace holds every pair recorded ($((pairs * (DEPTH + 1))) per end)"
others=$(grep -vc -e ' test:work_begin: ' -e ' test:work_end: ' \
	-e ' func:entry: ' -e ' func:exit: ' -e ' tracer:lost: ' "$T/view")
threads=$(awk '{ print $3, $4 }' "$T/view" | sort -u | wc -l)

"$TRACECTL" export "$dir" -o "$T/trace.json"; rc=$?
"$TRACECTL" export --format chrome "$dir" >"$T/stdout.json"
ok $([ $rc -eq 0 ] && cmp -s "$T/trace.json" "$T/stdout.json"; echo $?) \
	"export -o FILE and export to stdout write the same trace, exit 0"

python3 "$CHECK_CHROME" "$T/trace.json" >"$T/summary" 2>&1
ok $? "the trace is strict UTF-8 JSON, B/E nest per thread, one thread_name per thread"
sed 's/^/# /' "$T/summary"
has() { grep -qx "$1" "$T/summary"; }
ok $(has "threads $threads"; echo $?) \
	"one thread_name per thread of the trace ($threads)"
ok $(has "slices $((work + entries))" && has "slice func=$entries" &&
	has "slice test:work=$work" && has "unclosed 0" && has "unmatched 0";
	echo $?) "one slice per recorded pair ($((work + entries))), each closed by its end"
ok $(has "depth $((DEPTH + 1))"; echo $?) "slices nest $((DEPTH + 1)) deep"
ok $(has "instants $others"; echo $?) "one instant per other event ($others)"

# The slices begin and end where view says the pairs do, on their thread;
# the worker threads are named as they named themselves.
python3 - "$T/trace.json" "$T/view" $THREADS >"$T/times" 2>&1 <<'EOF'
import json, sys
trace = json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
def us(t):
    s, ns = t.split(".")
    return "%d.%03d" % (int(s) * 1000000 + int(ns) // 1000, int(ns) % 1000)
want = {"B": [], "E": []}
for line in open(sys.argv[2]):
    f = line.split(" ")
    name = f[4].rstrip(":")
    ph = {"test:work_begin": "B", "func:entry": "B",
          "test:work_end": "E", "func:exit": "E"}.get(name)
    if ph:
        want[ph].append((us(f[0]), int(f[3])))
got = {"B": [], "E": []}
names = set()
for e in trace:
    if e["ph"] in got:
        got[e["ph"]].append(("%.3f" % e["ts"], e["tid"]))
    if e["ph"] == "M" and e["name"] == "thread_name":
        names.add(e["args"]["name"])
for ph in "BE":
    if sorted(got[ph]) != sorted(want[ph]):
        print("%s events differ: %d vs %d" % (ph, len(got[ph]), len(want[ph])))
        sys.exit(1)
workers = set("pairs-%d" % i for i in range(int(sys.argv[3])))
if not workers <= names:
    print("thread names %r" % sorted(names))
    sys.exit(1)
EOF
ok $? "B and E events at the times and threads of the recorded pairs; workers named"
sed 's/^/# /' "$T/times"

# One thread alone.
tid=$(awk '/ test:work_begin: thread 1 round 0$/ { print $4 }' "$T/view")
"$TRACECTL" export "$dir" --tid "$tid" -o "$T/one.json" &&
	python3 "$CHECK_CHROME" "$T/one.json" >"$T/one" 2>&1
ok $([ $? -eq 0 ] && grep -qx "threads 1" "$T/one" &&
	grep -qx "slices $((ROUNDS * (DEPTH + 1)))" "$T/one"; echo $?) \
	"export --tid: that thread's $((ROUNDS * (DEPTH + 1))) slices only"

# Only the work pairs: the func events are filtered out, work slices stay.
"$TRACECTL" export "$dir" --events 'test:*' -o "$T/work.json" &&
	python3 "$CHECK_CHROME" "$T/work.json" >"$T/work" 2>&1
ok $([ $? -eq 0 ] && grep -qx "slices $work" "$T/work" &&
	grep -qx "depth 1" "$T/work"; echo $?) \
	"export --events 'test:*': the $work work slices, not nested"

out=$("$TRACECTL" export --format=perfetto "$dir" 2>&1); rc=$?
ok $([ $rc -eq 2 ] && [ "$out" = "tracectl: export: unknown format 'perfetto' (see 'tracectl export --help')" ]; echo $?) \
	"an unknown format: one-line usage error, exit 2"

# Every event of the library, and three images of one pid. (The forker's
# child records from its first event: wait for its registration as long
# as a loaded machine may need.)
IMAGE_EVENTS=100
dir=$(session_cmd start)
"$PAIRS" 2 10 2 && TRACER_REGISTER_TIMEOUT_MS=30000 "$FORKER" forkexec \
	$IMAGE_EVENTS >"$T/fe.out"
check "the traced programs exit 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]
"$TRACECTL" view "$dir" >"$T/view.all"
singles=$(grep -c -e ' proc:exit: ' -e ' pthread:exit: ' "$T/view.all")
"$TRACECTL" export "$dir" -o "$T/all.json"
check "export exits 0" [ $? -eq 0 ]
python3 "$CHECK_CHROME" "$T/all.json" >"$T/all" 2>&1
ok $? "the trace of every event is valid and nests"
grep -E '^(processes|threads|slices|unmatched|process) ' "$T/all" | sed 's/^/# /'
ok $([ "$singles" -ge 3 ] && grep -qx "unmatched 0" "$T/all"; echo $?) \
	"proc:exit and pthread:exit ($singles) are no ends without a begin"

c=$(awk '$1 == "child" { print $2 }' "$T/fe.out")
python3 - "$T/all.json" "$c" $IMAGE_EVENTS >"$T/images" 2>&1 <<'EOF2'
import collections, json, sys
trace = json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
pid, n, stride = int(sys.argv[2]), int(sys.argv[3]), 1 << 22
names, labels, got = {}, {}, collections.Counter()
for e in trace:
    if e["ph"] == "M" and e["name"] == "process_name":
        names[e["pid"]] = e["args"]["name"]
    elif e["ph"] == "M" and e["name"] == "process_labels":
        labels[e["pid"]] = e["args"]["labels"]
    elif e["name"] in ("test:prexec", "test:image"):
        got[e["pid"], e["name"]] += 1
want = {(pid, "test:prexec"): n, (pid + stride, "test:image"): 2 * n,
        (pid + 2 * stride, "test:image"): 2 * n}
ids = [pid, pid + stride, pid + 2 * stride]
print("names %r labels %r events %r" % ([names.get(i) for i in ids],
      [labels.get(i) for i in ids], sorted(got.items())))
ok = (dict(got) == want and all(names.get(i) == "forker" for i in ids) and
      pid not in labels and labels.get(ids[1]) == "pid %d, image 2" % pid and
      labels.get(ids[2]) == "pid %d, image 3" % pid)
sys.exit(0 if ok else 1)
EOF2
ok $? "pid $c before and after two execs: three 'forker' processes, each with its own events"
sed 's/^/# /' "$T/images"

finish
