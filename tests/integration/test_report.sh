#!/bin/bash
# tracectl report (issue 19) on real traces: tests/integration/reportee
# (known calls, errors, durations, functions, recursion and mutex
# contention) recorded by `tracectl record` with the real tracerd and
# preloaded library. Every number of `report --json` is compared with a
# summary computed here, independently, from `tracectl view`'s lines
# (p99 within the documented 1/32); the tables say the same; the filters,
# --sort and --top; usage mistakes and damaged traces; and the memory of a
# report does not grow with the number of events.
. "$(dirname "$0")/lib.sh"

REPORTEE=./tests/integration/reportee
ROUNDS=150
LOCKS=5			# reportee.c

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	rm -rf "$T"
	exit 0
fi

# record DIR ARGS...: the program recorded into DIR with a private tracerd.
record() {
	local dir=$1
	shift
	LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -o "$dir" -- \
		"$REPORTEE" "$@" >"$T/record.out" 2>"$T/record.err"
}

check "reportee recorded by tracectl record exits 0" record "$T/tr" $ROUNDS
dir=$T/tr
"$TRACECTL" view "$dir" >"$T/view"
check "view reads the trace" [ $? -eq 0 ]
"$TRACECTL" report "$dir" --json >"$T/report.json" 2>"$T/report.err"
rc=$?
ok $([ $rc -eq 0 ] && [ ! -s "$T/report.err" ]; echo $?) \
	"report --json exits 0, nothing on stderr"
python3 -m json.tool "$T/report.json" >/dev/null
ok $? "report --json is one JSON document (python3 -m json.tool)"

# The reference: the same summary from view's lines, and the checks of
# report --json against it and against what reportee.c does.
cat >"$T/check.py" <<'EOF'
import json, math, re, sys
view, report, rounds, locks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rep = json.load(open(report))
fails = 0
def check(cond, what):
    global fails
    print(("ok" if cond else "not ok") + " - " + what)
    fails += not cond
def ns(t):
    s, f = t.split(".")
    return int(s) * 10**9 + int(f)
def is_error(name, msg):
    if re.search(r"(^| )errno [^ ]", msg):
        return True
    m = re.search(r"(^| )result (-?\d+)", msg)
    return name.startswith("pthread:") and bool(m) and int(m.group(2)) != 0
events, calls, funcs, mutexes, threads = {}, {}, {}, {}, {}
stacks = {}
def timed(d, key, dur, err=False):
    r = d.setdefault(key, {"n": 0, "errors": 0, "durs": []})
    r["n"] += 1; r["errors"] += err; r["durs"].append(dur)
for line in open(view):
    ts, proc, pid, tid, name, msg = (line.rstrip("\n").split(" ", 5) + [""])[:6]
    name = name.rstrip(":")
    if name == "tracer:lost":
        continue
    t = ns(ts); key = (int(pid), int(tid))
    err = is_error(name, msg)
    e = events.setdefault(name, [0, 0]); e[0] += 1; e[1] += err
    th = threads.setdefault(key, {"events": 0, "errors": 0, "calls": 0, "busy": 0})
    th["events"] += 1; th["errors"] += err
    st = stacks.setdefault(key, [])
    m = re.match(r"(.+?)(_entry|_begin|:entry|:begin)$", name)
    if m:
        fn = re.match(r"fn 0x[0-9a-f]+ <([^>+]+)>", msg) if name == "func:entry" else None
        st.append([m.group(1), fn.group(1) if fn else None, t, 0])
        continue
    m = re.match(r"(.+?)(_exit|_end|:exit|:end)$", name)
    if m and not name.startswith(("tracer:", "proc:exit", "pthread:exit")):
        base, begin_fn, t0, child = st.pop()
        assert base == m.group(1), line
        dur = t - t0
        th["calls"] += 1
        if not st:
            th["busy"] += dur
        if begin_fn:
            f = funcs.setdefault(begin_fn, {"n": 0, "incl": 0, "excl": 0, "durs": []})
            f["n"] += 1; f["durs"].append(dur)
            f["excl"] += dur - child
            if begin_fn not in [s[1] for s in st]:
                f["incl"] += dur
            for s in reversed(st):
                if s[1]:
                    s[3] += dur
                    break
        else:
            timed(calls, base, dur, err)
        continue
    m = re.search(r"(?:^| )[^ ]+_ns (\d+)", msg)
    if m:
        dur = int(m.group(1))
        timed(calls, name, dur, err)
        th["calls"] += 1
        if not st:
            th["busy"] += dur
        if name == "pthread:mutex_wait":
            timed(mutexes, (int(pid), msg.split()[1]), dur, err)
def p99_ok(got, durs):
    exact = sorted(durs)[math.ceil(len(durs) * 0.99) - 1]
    return abs(got - exact) <= exact / 32 + 1
def same_stats(r, d, what, total=None):
    durs = d["durs"]
    check(r["min_ns"] == min(durs) and r["max_ns"] == max(durs) and
          r["total_ns"] == (sum(durs) if total is None else total) and
          r["avg_ns"] == sum(durs) // len(durs),
          what + ": total, avg, min, max as computed from view")
    check(r["min_ns"] <= r["avg_ns"] <= r["max_ns"], what + ": min <= avg <= max")
    check(p99_ok(r["p99_ns"], durs) and r["min_ns"] <= r["p99_ns"] <= r["max_ns"],
          what + ": p99 %d within 1/32 of the exact one" % r["p99_ns"])

got = {e["name"]: (e["count"], e["errors"]) for e in rep["events"]}
check(got == {k: tuple(v) for k, v in events.items()},
      "events: every name's count and errors as view has them (%d names)" % len(events))
check(rep["events_total"] == sum(v[0] for v in events.values()) and
      rep["errors_total"] == sum(v[1] for v in events.values()),
      "events_total and errors_total")
for name in ("rep:tick", "rep:work_begin", "rep:work_end"):
    check(got.get(name) == (rounds, 0), "%s: %d events, no error" % (name, rounds))
check(got.get("libc:read_exit") == (2 * rounds, rounds),
      "libc:read_exit: %d events, %d errors (EBADF)" % (2 * rounds, rounds))

rc = {c["name"]: c for c in rep["calls"]}
check(set(rc) == set(calls), "calls: the same calls as view's pairs and *_ns events")
check(rc["rep:work"]["calls"] == rounds and rc["rep:work"]["errors"] == 0,
      "rep:work: %d calls, no error" % rounds)
check(rc["libc:read"]["calls"] == 2 * rounds and rc["libc:read"]["errors"] == rounds,
      "libc:read: %d calls, %d errors" % (2 * rounds, rounds))
check(rc["rep:work"]["min_ns"] >= 200000, "rep:work lasts at least its 200 us sleep")
for name in sorted(calls):
    check(rc[name]["calls"] == calls[name]["n"] and
          rc[name]["errors"] == calls[name]["errors"], name + ": calls and errors")
    same_stats(rc[name], calls[name], name)

rf = {f["name"]: f for f in rep["functions"]}
check(set(rf) == set(funcs) == {"parent", "child", "recurse"},
      "functions: parent, child, recurse, by their symbols")
check(rf["parent"]["calls"] == rounds and rf["child"]["calls"] == 2 * rounds and
      rf["recurse"]["calls"] == 3 * rounds, "functions: calls as made")
for name, f in funcs.items():
    r = rf[name]
    check(r["inclusive_ns"] == f["incl"] and r["exclusive_ns"] == f["excl"],
          name + ": inclusive and exclusive time as computed from view")
    check(r["exclusive_ns"] <= r["inclusive_ns"], name + ": exclusive <= inclusive")
    same_stats(r, f, name, f["incl"])
check(rf["parent"]["exclusive_ns"] ==
      rf["parent"]["inclusive_ns"] - rf["child"]["inclusive_ns"],
      "parent's exclusive time is its inclusive time less child's")
check(rf["child"]["exclusive_ns"] == rf["child"]["inclusive_ns"] and
      rf["child"]["inclusive_ns"] >= 2 * rounds * 50000,
      "child: exclusive = inclusive (calls nothing), >= its sleeps")
check(rf["recurse"]["inclusive_ns"] == rf["recurse"]["exclusive_ns"] and
      rf["recurse"]["inclusive_ns"] < sum(funcs["recurse"]["durs"]),
      "recurse: inner calls not counted twice in the inclusive time")

rm = rep["mutexes"]
check(len(rm) == 1 and rm[0]["name"] == "rep_lock",
      "mutexes: one, named by its symbol rep_lock")
mk = list(mutexes)
check(len(mk) == 1 and rm[0]["address"] == mk[0][1] and rm[0]["pid"] == mk[0][0] and
      rm[0]["waits"] == mutexes[mk[0]]["n"] and 1 <= rm[0]["waits"] <= locks,
      "mutexes: its address, pid and waits (%s)" % rm[0]["waits"])
same_stats(rm[0], mutexes[mk[0]], "rep_lock")
check(rm[0]["max_ns"] >= 2000000, "rep_lock: a wait of the 2 ms main held it")

rt = {(t["pid"], t["tid"]): t for t in rep["threads"]}
check(set(rt) == set(threads), "threads: every thread of view")
for k, t in threads.items():
    r = rt[k]
    check(r["events"] == t["events"] and r["errors"] == t["errors"] and
          r["calls"] == t["calls"] and r["in_calls_ns"] == t["busy"],
          "thread %d/%d (%s): events, errors, calls, time in calls" % (k + (r["name"],)))
worker = [t for t in rep["threads"] if t["name"] == "rep-worker"]
check(len(worker) == 1 and events["rep:beat"][0] == rounds and
      worker[0]["events"] == sum(1 for l in open(view) if " %d %d " % (worker[0]["pid"], worker[0]["tid"]) in l),
      "the worker thread goes by its name, rep-worker")
rp = rep["processes"]
check(len(rp) == 1 and rp[0]["events"] == rep["events_total"] and rp[0]["threads"] == 2 and
      rp[0]["calls"] == sum(t["calls"] for t in threads.values()) and rp[0]["name"] == "reportee",
      "processes: one, with every event, call and its 2 threads")
check(rep["lost"] == {"default": 0, "vital": 0} and
      all(t["lost"] == 0 for t in rep["threads"]), "lost: none")
sys.exit(1 if fails else 0)
EOF

# run_py SCRIPT ARGS...: a Python check, its TAP lines ours.
run_py() {
	python3 "$@" >"$T/py.out" 2>&1
	local status=$? line
	while read -r line; do
		case $line in
		"ok - "*) ok 0 "${line#ok - }" ;;
		"not ok - "*) ok 1 "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <"$T/py.out"
	ok $status "the python checks ran to the end: $1"
}
run_py "$T/check.py" "$T/view" "$T/report.json" $ROUNDS $LOCKS

# jq-like access: json FILE EXPR (python expression on `r`).
json() {
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

# The tables say what the JSON says.
"$TRACECTL" report "$dir" >"$T/table"
rc=$?
ok $rc "report prints tables, exit 0"
row() { awk -v name="$1" '$NF == name' "$T/table"; }
want=$(json "$T/report.json" '[c for c in r["calls"] if c["name"] == "libc:read"][0]["errors"]')
ok $([ "$(row libc:read | awk '{ print $1, $2 }')" = "$((2 * ROUNDS)) $want" ]; echo $?) \
	"table: libc:read's calls and errors"
ok $([ "$(row rep:tick | awk '{ print $1, $2 }')" = "$ROUNDS 0" ]; echo $?) \
	"table: rep:tick's count and errors"
ok $(grep -q "^Trace $dir: $(json "$T/report.json" 'r["events_total"]') events, 1 process, 2 threads" "$T/table"; echo $?) \
	"table: the summary line"
ok $(grep -q "<rep_lock>$" "$T/table" && row parent | grep -q "^ *$ROUNDS "; echo $?) \
	"table: rep_lock named, parent's calls"
sections() {
	local s
	for s in Events Calls Functions 'Mutex waits' Threads Processes; do
		grep -q "^$s" "$T/table" || return 1
	done
}
check "table: a section per kind" sections

# Filters: as in view.
wtid=$(json "$T/report.json" '[t["tid"] for t in r["threads"] if t["name"] == "rep-worker"][0]')
"$TRACECTL" report "$dir" --tid "$wtid" --json >"$T/tid.json"
ok $(json "$T/tid.json" 'len(r["threads"]) == 1 and r["threads"][0]["tid"] == '"$wtid"' and r["functions"] == [] and [e["count"] for e in r["events"] if e["name"] == "rep:beat"] == ['"$ROUNDS"'] and r["events_total"] == '"$(awk -v t="$wtid" '$4 == t' "$T/view" | wc -l)" |
	grep -qx True; echo $?) "--tid: only the worker's events"
"$TRACECTL" report "$dir" --events 'rep:*' --json >"$T/ev.json"
ok $(json "$T/ev.json" 'sorted(e["name"] for e in r["events"]) == ["rep:beat", "rep:tick", "rep:work_begin", "rep:work_end"] and [c["name"] for c in r["calls"]] == ["rep:work"] and r["functions"] == []' |
	grep -qx True; echo $?) "--events 'rep:*': only those events and calls"
pid=$(json "$T/report.json" 'r["processes"][0]["pid"]')
"$TRACECTL" report "$dir" --pid $((pid + 1)) --json >"$T/pid.json" 2>/dev/null
ok $(json "$T/pid.json" 'r["events_total"]' | grep -qx 0; echo $?) \
	"--pid of another process: nothing"
since=$(grep ' rep:work_begin: round 10$' "$T/view" | cut -d' ' -f1)
until=$(grep ' rep:work_begin: round 20$' "$T/view" | cut -d' ' -f1)
"$TRACECTL" report "$dir" --since "$since" --until "$until" --json >"$T/win.json"
n=$("$TRACECTL" view "$dir" --since "$since" --until "$until" | wc -l)
ok $(json "$T/win.json" 'r["events_total"] == '"$n"' and [c["calls"] for c in r["calls"] if c["name"] == "rep:work"] == [10] and r["calls_without_end"] >= 1' |
	grep -qx True; echo $?) "--since/--until: the events view shows ($n), 10 whole rep:work calls"

# --sort and --top.
"$TRACECTL" report "$dir" --sort count --top 3 >"$T/top"
ok $(awk '/^Events/ { s = 1; next } s && /^ *count/ { next } s && /^$/ { exit } s { print }' "$T/top" >"$T/top.rows"
	[ "$(grep -vc '^(' "$T/top.rows")" -eq 3 ] && grep -q '^(.* more)$' "$T/top.rows" &&
	awk '!/^\(/ { print $1 }' "$T/top.rows" | sort -rn -c; echo $?) \
	"--sort count --top 3: 3 events, most first, '(N more)'"
cat >"$T/sort.py" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); k = sys.argv[2]
f = {"total": "total_ns", "count": "calls", "avg": "avg_ns", "max": "max_ns",
     "p99": "p99_ns", "errors": "errors"}[k]
v = [c[f] for c in r["calls"]]
t = [t[{"count": "events", "errors": "errors"}.get(k, "in_calls_ns")]
     for t in r["threads"]]
sys.exit(not (r["sort"] == k and v == sorted(v, reverse=True) and
              t == sorted(t, reverse=True)))
EOF
sorts() {
	local k
	for k in total count avg max p99 errors; do
		"$TRACECTL" report "$dir" --sort $k --json >"$T/s.json" &&
			python3 "$T/sort.py" "$T/s.json" $k || return 1
	done
}
check "--sort total|count|avg|max|p99|errors: calls and threads in order" sorts
"$TRACECTL" report "$dir" --sort name --top 2 --json >"$T/name.json"
ok $(json "$T/name.json" '[e["name"] for e in r["events"]] == sorted(e["name"] for e in r["events"]) and len(r["events"]) == 2 and r["top"] == 2' |
	grep -qx True; echo $?) "--sort name --top 2: names in order, 2 rows (JSON too)"

# Mistakes: one line, git style; 2 for usage, 1 for the trace.
mistake() {
	local want=$1 desc=$2
	shift 2
	"$TRACECTL" report "$@" >"$T/m.out" 2>"$T/m.err"
	local rc=$?
	ok $([ $rc -eq "$want" ] && [ "$(wc -l <"$T/m.err")" -eq 1 ] &&
		grep -q '^tracectl: ' "$T/m.err" && [ ! -s "$T/m.out" ]; echo $?) \
		"$desc: exit $want, one line ($(cat "$T/m.err"))"
}
mistake 2 "--sort bogus" "$dir" --sort bogus
mistake 2 "--top x" "$dir" --top x
mistake 2 "--top 0" "$dir" --top 0
mistake 2 "--top without a value" "$dir" --top
mistake 2 "an unknown option" "$dir" --bogus
mistake 2 "no DIR" --json
mistake 2 "two DIRs" "$dir" "$dir"
mistake 1 "a missing directory" "$T/nowhere"
grep -q "$T/nowhere" "$T/m.err"
ok $? "the missing directory is named"
"$TRACECTL" report --help >"$T/help" 2>&1
ok $(grep -q '^usage: tracectl report DIR' "$T/help" && grep -q -- '--sort KEY' "$T/help"; echo $?) \
	"report --help"
"$TRACECTL" --help | grep -q '^  report '
ok $? "tracectl --help lists report"

# A damaged channel file: one line naming it, the rest still reported.
cp -r "$dir" "$T/bad"
victim=$(ls "$T"/bad/*/default-* | head -n 1)
printf 'XXXXXXXX' | dd of="$victim" bs=1 conv=notrunc status=none
"$TRACECTL" report "$T/bad" --json >"$T/bad.json" 2>"$T/bad.err"
rc=$?
ok $([ $rc -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
	grep -q "^tracectl: $victim: " "$T/bad.err" && python3 -m json.tool "$T/bad.json" >/dev/null &&
	[ "$(json "$T/bad.json" 'r["events_total"]')" -gt 0 ]; echo $?) \
	"a damaged trace: exit 1, one line naming the file, the rest reported"

# Lost events: the flight recorder's default ring keeps the newest 4 MiB
# of a thread's events, and 40000 rounds are more; the report counts what
# view's tracer:lost lines say, per thread and channel.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record --mode flight \
	-o "$T/lossy" -- "$REPORTEE" 40000 0 >/dev/null 2>&1
ok $? "reportee recorded in a flight recorder it overflows"
"$TRACECTL" view "$T/lossy" >"$T/lossy.view"
"$TRACECTL" report "$T/lossy" --json >"$T/lossy.json"
ok $(python3 - "$T/lossy.view" "$T/lossy.json" <<'EOF'
import json, re, sys
lost, per_tid = {"default": 0, "vital": 0}, {}
for line in open(sys.argv[1]):
    m = re.search(r" (\d+) tracer:lost: (\d+) events? lost in the (\w+) channel", line)
    if m:
        lost[m.group(3)] += int(m.group(2))
        per_tid[int(m.group(1))] = per_tid.get(int(m.group(1)), 0) + int(m.group(2))
r = json.load(open(sys.argv[2]))
got = {t["tid"]: t["lost"] for t in r["threads"] if t["lost"]}
sys.exit(not (lost["default"] > 0 and r["lost"] == lost and got == per_tid and
              r["processes"][0]["lost"] == sum(per_tid.values())))
EOF
echo $?) "lost events: as many as view tells, per channel, thread and process"

# Constant memory: 100 times the events, about the same peak RSS (GNU
# time's %M: it forks and execs from a small process).
record "$T/small" 500 0 && record "$T/big" 50000 0
ok $? "reportee recorded with 500 and 50000 rounds"
total() {
	"$TRACECTL" report "$1" --json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["events_total"])'
}
nsmall=$(total "$T/small")
nbig=$(total "$T/big")
if [ -x /usr/bin/time ]; then
	maxrss() {
		/usr/bin/time -f %M -o "$T/rss" "$TRACECTL" report "$1" >/dev/null &&
			tail -n 1 "$T/rss"
	}
	small=$(maxrss "$T/small")
	big=$(maxrss "$T/big")
	echo "# report: $nsmall events: $small KB; $nbig events: $big KB"
	ok $([ -n "$small" ] && [ -n "$big" ] && [ "$nbig" -ge $((nsmall * 50)) ] &&
		[ "$big" -le $((small * 5 / 4 + 512)) ]; echo $?) \
		"report of $nbig events peaks at $big KB, of $nsmall at $small KB: bounded"
else
	echo "ok $((tap_n += 1)) # SKIP /usr/bin/time not found: peak RSS not measured"
fi

finish
