"""check_timeline.py - checks the data of a page written by
`tracectl timeline` (tests/unit/test_export.c, tests/integration/
test_timeline.sh).

usage: check_timeline.py FILE.html
       check_timeline.py --color FILE.png X0 COLOR

The second form counts the pixels of a screenshot of the page (decoded
as check_png.py does) right of X0 that have COLOR, a CSS "hsl(H,S%,L%)"
as the page's legend gives it (data-color), give or take 4 per channel:
it prints "color N".

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
  procs      process images
  lane PID TID PROCESS / THREAD [formerly NAME, NAME...]
             one line per lane (THREAD its last name; a renamed thread
             also the names it had before, oldest first)
  proc PID IMAGE PROCESS DIR
             one line per process image, in order of first appearance
             (IMAGE its rank among the images of PID, DIR its process
             directory)
  image PID IMAGE TID NAME...
             the distinct event and slice names of each lane, sorted

Checks (exit status 1, reason on stderr): no '<' inside a data block (so
nothing can close the script element early); both blocks are JSON; every
record has a known kind, lane and name, and sane times; every lane names
a process image of its pid, no two lanes the same thread of the same
image, and the images of a pid are numbered 1, 2, ...; slices of a lane
nest (a slice at depth d+1 lies inside one at depth d); records are
counted per item: instants + lost + 2 * slices - unclosed == items (a
slice stands for its begin and end, or its begin alone).
"""
import bisect
import collections
import colorsys
import json
import os
import re
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_png  # noqa: E402


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


def check_images(meta):
    """The lanes and the process images they belong to."""
    procs, seen, ranks = meta.get("procs"), set(), collections.Counter()
    if not isinstance(procs, list):
        fail("no procs in tl-meta")
    for p in procs:
        if len(p) != 4 or not isinstance(p[2], str):
            fail("bad proc %r" % p)
        ranks[p[0]] += 1
        if p[3] != ranks[p[0]]:
            fail("proc %r is not image %d of its pid" % (p, ranks[p[0]]))
    for lane in meta["lanes"]:
        if len(lane) != 6 or not isinstance(lane[4], list):
            fail("bad lane %r" % lane)
        if not 0 <= lane[5] < len(procs) or procs[lane[5]][0] != lane[0] \
                or procs[lane[5]][1] != lane[2]:
            fail("lane %r is in no process image of its pid" % lane)
        if (lane[5], lane[1]) in seen:
            fail("two lanes for thread %d of image %r" % (lane[1],
                 procs[lane[5]]))
        seen.add((lane[5], lane[1]))


def main(argv):
    with open(argv[1], encoding="utf-8", errors="strict") as f:
        page = f.read()
    events, meta = block(page, "tl-events"), block(page, "tl-meta")
    nlanes, nnames = len(meta["lanes"]), len(meta["names"])
    n = collections.Counter()
    slices = collections.defaultdict(list)
    lane_names = collections.defaultdict(set)
    for r in events:
        check_record(r, nlanes, nnames, n)
        if r[0] == 1:
            slices[r[1]].append((r[2], r[2] + r[5], r[6]))
        if r[0] in (0, 1):
            lane_names[r[1]].add(meta["names"][r[3]])
    check_images(meta)
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
    print("procs %d" % len(meta["procs"]))
    for lane in meta["lanes"]:
        pid, tid, pname, tname, former, _ = lane
        print("lane %d %d %s / %s%s" % (pid, tid, pname, tname,
              " formerly " + ", ".join(former) if former else ""))
    for pid, pname, pdir, image in meta["procs"]:
        print("proc %d %d %s %s" % (pid, image, pname, pdir))
    for i, lane in enumerate(meta["lanes"]):
        print("image %d %d %d %s" % (lane[0], meta["procs"][lane[5]][3],
              lane[1], " ".join(sorted(lane_names[i]))))
    return 0


def hsl_rgb(css):
    m = re.match(r"hsl\((\d+),(\d+)%,(\d+)%\)$", css)
    if not m:
        fail("not an hsl() colour: %r" % css)
    h, s, l = (int(v) for v in m.groups())
    return [round(c * 255) for c in colorsys.hls_to_rgb(h / 360.0, l / 100.0,
                                                         s / 100.0)]


def count_color(argv):
    data = open(argv[2], "rb").read()
    x0, want = int(argv[3]), hsl_rgb(argv[4])
    idat, ihdr = b"", None
    for kind, body in check_png.chunks(data):
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    if not ihdr or ihdr[2] != 8 or ihdr[3] not in (2, 6) or ihdr[6]:
        fail("unexpected PNG %r" % (ihdr,))
    width, height, bpp = ihdr[0], ihdr[1], 3 if ihdr[3] == 2 else 4
    n = 0
    for row in check_png.unfilter(zlib.decompress(idat), width, height, bpp):
        for x in range(x0, width):
            px = row[x * bpp:x * bpp + 3]
            if all(abs(px[i] - want[i]) <= 4 for i in range(3)):
                n += 1
    print("color %d" % n)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--color":
        sys.exit(count_color(sys.argv))
    sys.exit(main(sys.argv))
