"""check_filter.py - checks the events of one process recorded while its
filter changed (tests/integration/test_control.sh).

usage: check_filter.py EVENTS PHASES W0 W1 [W0 W1 ...] END

EVENTS  lines "thread seq name" (name test:a for even seq, test:b odd),
        and "thread lost N" for a thread whose events were dropped
PHASES  Python literal: list of sets of names ('a', 'b') each filter lets
        through, one more than there are windows
W0 W1   per-thread counters read before and after each filter command
        (space-separated, one number per thread)
END     counters read before the session stopped (one per thread)

Discard mode may drop events tracerd could not keep up with, so only the
events present are judged: outside the windows each must be allowed by
the filter then in force, and each filter must let through every name it
allows (in every thread; in some thread, if the thread missing a name
had events dropped: a phase can be shorter than a gap in discard mode;
a phase may miss a name altogether only when every thread had events
dropped, and at most MAX_EXCUSED phases; no name it forbids may be there);
inside a window, per thread, no event allowed only by the old filter may
follow one allowed only by the new (a clean cut).
"""
import ast
import sys

# Phases that may miss names for drops: a filter that wrongly drops
# everything after a change would empty four of test_control.sh's.
MAX_EXCUSED = 2


def main(argv):
    path, phases = argv[1], ast.literal_eval(argv[2])
    counters = [list(map(int, c.split())) for c in argv[3:]]
    windows, end = counters[:-1], counters[-1]
    got, lost = {}, {}
    for line in open(path):
        t, s, name = line.split()
        if s == 'lost':
            lost[int(t)] = int(name)
            continue
        got.setdefault(int(t), []).append((int(s), name[5:]))
    bad, seen_all = [], [set() for _ in phases]
    for t in range(len(end)):
        seen = [set() for _ in phases]
        bad += check_thread(t, sorted(got.get(t, [])), phases, windows,
                            seen)
        for k, want in enumerate(phases):
            seen_all[k] |= seen[k]
            if seen[k] == want:
                continue
            msg = (f'thread {t} phase {k}: names {sorted(seen[k])}, '
                   f'expected {sorted(want)}')
            if lost.get(t):
                print(f'# {msg} ({lost[t]} of its events dropped: judged '
                      'with the other threads)')
            else:
                bad.append(msg)
    all_lost = all(lost.get(t) for t in range(len(end)))
    excused = 0
    for k, want in enumerate(phases):
        if seen_all[k] == want:
            continue
        msg = (f'phase {k}: names {sorted(seen_all[k])} in all threads, '
               f'expected {sorted(want)}')
        if all_lost and seen_all[k] < want and excused < MAX_EXCUSED:
            excused += 1
            print(f'# {msg} (every thread had events dropped)')
        else:
            bad.append(msg)
    for msg in bad[:10]:
        print(msg)
    return 1 if bad else 0


def check_thread(t, ev, phases, windows, seen):
    bad = []
    cuts = [(windows[2 * i][t], windows[2 * i + 1][t] + 1)
            for i in range(len(windows) // 2)]
    for s, n in ev:
        inside = [i for i, (b0, b1) in enumerate(cuts) if b0 <= s <= b1]
        if inside:
            i = inside[0]
            if n not in phases[i] | phases[i + 1]:
                bad.append(f'thread {t} seq {s} {n}: allowed by neither '
                           f'filter around change {i}')
            continue
        k = sum(1 for (b0, b1) in cuts if s > b1)
        seen[k].add(n)
        if n not in phases[k]:
            bad.append(f'thread {t} seq {s} {n}: filtered out in phase {k}')
    for i, (b0, b1) in enumerate(cuts):
        old, new = phases[i], phases[i + 1]
        cut = [(s, n) for s, n in ev if b0 <= s <= b1]
        last_old = max([s for s, n in cut if n in old - new], default=-1)
        first_new = min([s for s, n in cut if n in new - old],
                        default=1 << 62)
        if last_old > first_new:
            bad.append(f'thread {t} change {i}: {last_old} (old filter '
                       f'only) after {first_new} (new filter only)')
    return bad


if __name__ == '__main__':
    sys.exit(main(sys.argv))
