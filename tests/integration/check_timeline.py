"""check_timeline.py - checks the data of a page written by
`tracectl timeline` (tests/unit/test_export.c, tests/integration/
test_timeline.sh).

usage: check_timeline.py FILE.html

Reads FILE.html as strict UTF-8, takes its two data blocks (<script
type="application/json"> "tl-events" and "tl-meta"), checks them, and
prints "KEY VALUE" lines:

  lanes      lanes (threads)
  items      items embedded (meta)
  truncated  0 or 1
  instants   instant records (unmatched ends included)
  unmatched  of them, ends without a begin
  slices     slice records
  unclosed   of them, closed without their end event
  lost       lost records
  depth      the deepest nesting
  names      distinct names
  scripts    <script> elements in the page
  lane PID TID PROCESS / THREAD [formerly NAME, NAME...]
             one line per lane (THREAD its last name; a renamed thread
             also the names it had before, oldest first)

Checks (exit status 1, reason on stderr): no '<' inside a data block (so
nothing can close the script element early); both blocks are JSON; every
record has a known kind, lane and name, and sane times; slices of a lane
nest (a slice at depth d+1 lies inside one at depth d); records are
counted per item: instants + lost + 2 * slices - unclosed == items (a
slice stands for its begin and end, or its begin alone).
"""
import bisect
import collections
import json
import re
import sys


def fail(msg):
    sys.stderr.write("check_timeline.py: %s\n" % msg)
    sys.exit(1)


def block(page, name):
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>'
                  % name, page, re.S)
    if not m:
        fail("no %s block" % name)
    if "<" in m.group(1):
        fail("a '<' inside the %s block" % name)
    return json.loads(m.group(1))


def check_record(r, nlanes, nnames, n):
    kind, lane = r[0], r[1]
    if not 0 <= lane < nlanes:
        fail("bad lane in %r" % r)
    if kind == 0:
        if len(r) != 6 or not 0 <= r[3] < nnames or r[2] < 0:
            fail("bad instant %r" % r)
        n["instants"] += 1
        n["unmatched"] += 1 if r[5] & 1 else 0
    elif kind == 1:
        if len(r) != 9 or not 0 <= r[3] < nnames or r[5] < 0 or r[2] < 0:
            fail("bad slice %r" % r)
        n["slices"] += 1
        n["unclosed"] += 1 if r[8] & 12 else 0
    elif kind == 2:
        if len(r) != 6 or r[4] < 1:
            fail("bad lost record %r" % r)
        n["lost"] += 1
    else:
        fail("bad kind in %r" % r)


def check_nesting(slices):
    """slices: per lane, (start, end, depth). Each slice at depth d > 0
    lies within a slice at depth d - 1 (the last one starting before it:
    slices of one depth do not overlap)."""
    depth = 0
    for lane, lst in slices.items():
        by_depth = collections.defaultdict(list)
        for s, e, d in lst:
            by_depth[d].append((s, e))
            depth = max(depth, d + 1)
        for d in by_depth:
            by_depth[d].sort()
        for d, inner in by_depth.items():
            outer = by_depth.get(d - 1, [])
            starts = [s for s, e in outer]
            for s, e in inner if d else []:
                i = bisect.bisect_right(starts, s) - 1
                if i < 0 or e > outer[i][1]:
                    fail("slice [%d, %d] at depth %d of lane %d is in no "
                         "slice at depth %d" % (s, e, d, lane, d - 1))
    return depth


def main(argv):
    with open(argv[1], encoding="utf-8", errors="strict") as f:
        page = f.read()
    events, meta = block(page, "tl-events"), block(page, "tl-meta")
    nlanes, nnames = len(meta["lanes"]), len(meta["names"])
    n = collections.Counter()
    slices = collections.defaultdict(list)
    for r in events:
        check_record(r, nlanes, nnames, n)
        if r[0] == 1:
            slices[r[1]].append((r[2], r[2] + r[5], r[6]))
    depth = check_nesting(slices)
    # A slice stands for its begin and end items, or for its begin alone
    # when it was closed without its end.
    got = n["instants"] + n["lost"] + 2 * n["slices"] - n["unclosed"]
    if got != meta["items"]:
        fail("records for %d items, meta says %d" % (got, meta["items"]))
    print("lanes %d" % nlanes)
    print("items %d" % meta["items"])
    print("truncated %d" % (1 if meta["truncated"] else 0))
    for key in ("instants", "unmatched", "slices", "unclosed", "lost"):
        print("%s %d" % (key, n[key]))
    print("depth %d" % depth)
    print("names %d" % nnames)
    print("scripts %d" % len(re.findall(r"<script\b", page)))
    for lane in meta["lanes"]:
        if len(lane) != 5 or not isinstance(lane[4], list):
            fail("bad lane %r" % lane)
        pid, tid, pname, tname, former = lane
        print("lane %d %d %s / %s%s" % (pid, tid, pname, tname,
              " formerly " + ", ".join(former) if former else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
