#!/usr/bin/env python3
"""crash_check.py VIEW PID PROGRESS THREADS END [LIMIT]

Check what `tracectl view` printed (file VIEW) for a crashee process PID
that died: for each of THREADS threads, the numbered events are exactly
0..K-1 where K is what the thread had counted (PROGRESS, one uint64 per
thread) or one more (killed between recording and counting), except for
events view reports lost (dropped while tracerd was behind, on a loaded
machine): those may be missing, the thread's last ones included (its
buffer was full when the program died), and no others; the last event of the
process matches the regular expression END. With LIMIT, thread 0
stopped at exactly LIMIT events. Prints what is wrong and exits 1.
"""
import re
import struct
import sys


def main():
    view, pid, prog, nthreads, end = sys.argv[1:6]
    limit = int(sys.argv[6]) if len(sys.argv) > 6 else None
    nthreads = int(nthreads)
    with open(prog, 'rb') as f:
        counted = struct.unpack('<%dQ' % nthreads, f.read(8 * nthreads))
    seqs = {t: [] for t in range(nthreads)}
    tid_of = {}
    lost_by_tid = {}
    last = None
    ev = re.compile(r' crash:ev: thread (\d+) seq (\d+)$')
    lost_re = re.compile(r' tracer:lost: (\d+) events? lost')
    with open(view, errors='replace') as f:
        for line in f:
            parts = line.split(' ', 4)
            if len(parts) < 5 or parts[2] != pid:
                continue
            last = line.rstrip('\n')
            m = ev.search(line)
            if m:
                seqs[int(m.group(1))].append(int(m.group(2)))
                tid_of[int(m.group(1))] = parts[3]
            m = lost_re.search(line)
            if m:
                lost_by_tid[parts[3]] = (lost_by_tid.get(parts[3], 0) +
                                         int(m.group(1)))
    bad = []
    for t in range(nthreads):
        got = seqs[t]
        k = len(got)
        # Events dropped because tracerd fell behind (a loaded machine)
        # are counted, and view says so: they may be missing, nothing else.
        lost = lost_by_tid.get(tid_of.get(t), 0)
        if lost == 0 and got != list(range(k)):
            bad.append('thread %d: events not 0..%d in order' % (t, k - 1))
        if lost and any(b <= a for a, b in zip(got, got[1:])):
            bad.append('thread %d: events out of order' % t)
        top = got[-1] + 1 if got else 0
        # The last ones may be among those lost (a full buffer when the
        # program died), never more than were lost.
        low = counted[t] - lost if lost else counted[t]
        if not low <= top <= counted[t] + 1 or k + lost < counted[t]:
            bad.append('thread %d: %d events in the trace (+%d lost), '
                       '%d committed' % (t, k, lost, counted[t]))
        if t == 0 and limit is not None and top != limit:
            bad.append('thread 0: %d events, expected %d' % (k, limit))
    if last is None or not re.search(end, last):
        bad.append('last event of pid %s: %r' % (pid, last))
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
