#!/usr/bin/env python3
"""clock_check.py VIEW_OUTPUT TOLERANCE_NS [BABELTRACE_CYCLES_OUTPUT]

Checks the stamps of clockee's events in `tracectl view` output: each
clock:sample must lie in [m1 - TOL, m2 + TOL], m1 being the CLOCK_MONOTONIC
value it carries and m2 the one of the clock:after that follows it in the
same thread. Prints "samples N worst W" (W: the largest distance outside
[m1, m2], ns). With babeltrace2's --clock-cycles output, its clock values
must be view's stamps, to the nanosecond: the same multiset of values.
Exit status 0 when every check holds; what is wrong goes to stderr.
"""
import re
import sys

LINE = re.compile(r'^(\d+)\.(\d{9}) \S+ (\d+) (\d+) (clock:sample|clock:after): '
                  r'round (\d+) m[12] (\d+)$')


def stamps(path):
    out, all_ts = [], []
    with open(path) as f:
        for line in f:
            m = re.match(r'^(\d+)\.(\d{9}) ', line)
            if m:
                all_ts.append(int(m.group(1)) * 10**9 + int(m.group(2)))
            m = LINE.match(line.rstrip('\n'))
            if m:
                ts = int(m.group(1)) * 10**9 + int(m.group(2))
                out.append((int(m.group(4)), m.group(5), int(m.group(6)),
                            ts, int(m.group(7))))
    return out, all_ts


def main():
    view, tol = sys.argv[1], int(sys.argv[2])
    events, all_ts = stamps(view)
    pending, n, worst, bad = {}, 0, 0, 0
    for tid, name, rnd, ts, value in events:
        if name == 'clock:sample':
            pending[tid] = (rnd, ts, value)
            continue
        if tid not in pending or pending[tid][0] != rnd:
            print(f'round {rnd}: clock:after without its sample',
                  file=sys.stderr)
            bad += 1
            continue
        _, ts1, m1 = pending.pop(tid)
        n += 1
        off = m1 - ts1 if ts1 < m1 else ts1 - value if ts1 > value else 0
        worst = max(worst, off)
        if off > tol:
            print(f'round {rnd}: stamp {ts1} outside [{m1}, {value}] '
                  f'by {off} ns', file=sys.stderr)
            bad += 1
    print(f'samples {n} worst {worst}')
    if n == 0:
        print('no clock:sample events', file=sys.stderr)
        bad += 1
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            bt = [int(m.group(1)) for m in
                  (re.match(r'^\[(\d+)\]', l) for l in f) if m]
        if sorted(bt) != sorted(all_ts):
            print(f'babeltrace2: {len(bt)} clock values, view: '
                  f'{len(all_ts)} stamps; not the same values',
                  file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
