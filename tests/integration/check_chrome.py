"""check_chrome.py - checks a Chrome trace written by `tracectl export`
(tests/unit/test_export.c, tests/integration/test_export.sh).

usage: check_chrome.py FILE

Reads FILE as strict UTF-8 JSON (the JSON object format), checks it, and
prints what it holds, one "KEY VALUE" line each:

  events     trace events
  processes  process_name metadata events
  threads    threads named by thread_name metadata events
  slices     B events (each closed by an E: checked)
  depth      the deepest nesting seen
  instants   ph "i" events other than tracer:lost
  unmatched  instants that are an end without a begin
  lost       tracer:lost instants
  lost_sum   the events they say were lost
  unclosed   E events that close a slice without its end event
  SLICE-NAME=N  slices per name ("slice func=12"), sorted
  process PID NAME [| LABELS]
             one line per process, by pid: its process_name, and its
             process_labels if it has some (a later image of a pid:
             "pid P, image N")

Checks (exit status 1, with the reason on stderr): the top-level fields;
every event has ph, name, pid, tid, and ts (a number, except metadata);
per thread (pid, tid) the B and E events nest (an E has the name of the
innermost open B, and is not before it) and none stays open; a thread
that has events has a thread_name (one more at each rename), a process
one process_name.
"""
import collections
import json
import sys


def fail(msg):
    sys.stderr.write("check_chrome.py: %s\n" % msg)
    sys.exit(1)


def check_event(e):
    for key in ("ph", "name", "pid", "tid"):
        if key not in e:
            fail("an event without %r: %r" % (key, e))
    if e["ph"] != "M" and not isinstance(e.get("ts"), (int, float)):
        fail("an event without a numeric ts: %r" % e)
    if e["ph"] == "i" and e.get("s") != "t":
        fail("an instant that is not thread-scoped: %r" % e)


def main(argv):
    with open(argv[1], encoding="utf-8", errors="strict") as f:
        doc = json.load(f)
    if doc.get("displayTimeUnit") != "ns":
        fail("displayTimeUnit is not 'ns'")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents array")
    stacks = collections.defaultdict(list)
    named = collections.Counter()
    procs = collections.Counter()
    pnames, plabels = {}, {}
    used, pids = set(), set()
    n = collections.Counter()
    per_name = collections.Counter()
    depth = 0
    for e in events:
        check_event(e)
        key = (e["pid"], e["tid"])
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "thread_name":
                named[key] += 1
            elif e["name"] == "process_name":
                procs[e["pid"]] += 1
                pnames[e["pid"]] = e["args"]["name"]
            elif e["name"] == "process_labels":
                plabels[e["pid"]] = e["args"]["labels"]
            continue
        used.add(key)
        pids.add(e["pid"])
        st = stacks[key]
        if ph == "B":
            st.append(e)
            n["slices"] += 1
            per_name[e["name"]] += 1
            depth = max(depth, len(st))
        elif ph == "E":
            if not st:
                fail("an E without a B on %r: %r" % (key, e))
            b = st.pop()
            if b["name"] != e["name"] or e["ts"] < b["ts"]:
                fail("E %r does not close B %r" % (e, b))
            if "unclosed" in e.get("args", {}):
                n["unclosed"] += 1
        elif ph == "i" and e["name"] == "tracer:lost":
            n["lost"] += 1
            n["lost_sum"] += e["args"]["lost"]
        elif ph == "i":
            n["instants"] += 1
            if "unmatched" in e.get("args", {}):
                n["unmatched"] += 1
        else:
            fail("unexpected ph %r" % ph)
    for key, st in stacks.items():
        if st:
            fail("%d slices left open on %r" % (len(st), key))
    for key in used:
        if named[key] < 1:
            fail("no thread_name event for %r" % (key,))
    for pid in pids:
        if procs[pid] != 1:
            fail("%d process_name events for pid %r" % (procs[pid], pid))
    print("events %d" % len(events))
    print("processes %d" % len(procs))
    print("threads %d" % len(named))
    for key in ("slices", "instants", "unmatched", "lost", "lost_sum",
                "unclosed"):
        print("%s %d" % (key, n[key]))
    print("depth %d" % depth)
    for name in sorted(per_name):
        print("slice %s=%d" % (name, per_name[name]))
    for pid in sorted(pnames):
        print("process %d %s%s" % (pid, pnames[pid],
              " | " + plabels[pid] if pid in plabels else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
