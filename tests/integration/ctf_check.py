#!/usr/bin/env python3
"""ctf_check.py - checks for test_ctf.sh: what babeltrace2 prints against
the channel files themselves (doc/session-files.md) and against what the
traced program says it recorded. Problems go to stderr; the exit status is 1
when there is one.

  ctf_check.py events PROCESS_DIR BT_OUT [PROGRAM_OUT]
      The records of PROCESS_DIR's channel files and the events of BT_OUT
      (babeltrace2 --clock-seconds --no-delta) are the same: thread, call
      site name, and time (babeltrace2's = CLOCK_MONOTONIC + clock_offset
      of process.meta, to the nanosecond). With PROGRAM_OUT (ctf_tracee
      types), every event the program printed is, thread by thread and in
      order, an event of BT_OUT with the same name, field names and values
      (nothing more: no padding field). Every event's packet context is
      only its thread (`tid`): none of the ring buffer's bookkeeping.
      Prints the number of events.
  ctf_check.py counters DIR [WANT_LOST]
      Every channel file under DIR: packet_seq_num 0, 1, 2, ...;
      events_discarded never decreasing; one thread and stream instance.
      Prints "files F packets P most M lost L": L sums the last
      events_discarded of every file, M is the most packets with records
      in one file. Fails if WANT_LOST is given and is not L.
  ctf_check.py discarded BT_ERR
      Prints the sum of the counts of babeltrace2's "discarded N events"
      warnings; fails on anything else in BT_ERR.
  ctf_check.py count BT_OUT NAME
      Prints how many events NAME BT_OUT has.
  ctf_check.py sum BT_OUT NAME FIELD
      Prints the sum of the integer field FIELD of the events NAME.
"""
import os
import collections
import re
import struct
import sys

import rb_record

# struct tracer_rb_packet (common/rb_layout.h, session format 3)
PACKET = struct.Struct('<IIQIIQQQQQQQ')
Header = collections.namedtuple('Header', 'magic stream_id instance tid '
                                'reserved slot_records begin end '
                                'content_size packet_size seq discarded')
CTF_MAGIC = 0xC1FC1FC1
CHANNEL = re.compile(r'^(default|vital)-\d+(\.\d+)?$')
problems = []


def problem(msg):
    if len(problems) < 20:
        print('ctf_check: ' + msg, file=sys.stderr)
    problems.append(msg)


def read_text(path):
    with open(path, 'rb') as f:
        return f.read().decode('utf-8', 'surrogateescape')


def as_bytes(s):
    return s.encode('utf-8', 'surrogateescape')


# ----------------------------------------------------------------------
# The trace as tracerd wrote it

def unpercent(field):
    if field == '%':
        return ''
    return re.sub('%([0-9A-F]{2})', lambda m: chr(int(m.group(1), 16)),
                  field)


def read_meta(pdir):
    """Call sites {id: (name, types)} and clock_offset of process.meta."""
    sites, offset = {}, None
    for line in read_text(os.path.join(pdir, 'tracer', 'process.meta')).splitlines():
        w = line.split(' ')
        if w[0] == 'clock_offset':
            offset = int(w[1])
        elif w[0] == 'callsite':
            sites[int(w[1])] = (unpercent(w[6]), '' if w[3] == '-' else w[3])
    return sites, offset


def packets(path):
    """(header tuple, records [(id, timestamp)]) of each packet."""
    with open(path, 'rb') as f:
        data = f.read()
    off = 0
    while off < len(data):
        h = Header._make(PACKET.unpack_from(data, off))
        if (h.magic != CTF_MAGIC or h.packet_size < PACKET.size * 8 or
                h.packet_size % 64):
            problem('%s: bad packet at offset %d' % (path, off))
            return
        end = off + h.content_size // 8
        recs = [(rid, ts) for rid, size, ts in
                rb_record.records(data, off + PACKET.size, end, h.begin)]
        yield h, recs
        off += h.packet_size // 8


def channel_files(top):
    """Every channel file under top."""
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if CHANNEL.match(name) and not os.path.islink(path):
                yield path


# ----------------------------------------------------------------------
# babeltrace2's text

class Parser:
    """The values babeltrace2's pretty printer writes."""
    SCALAR = re.compile(r'[^,\s}\]]+')
    NAME = re.compile(r'[A-Za-z0-9_]+')
    ESCAPES = {'n': '\n', 't': '\t', 'r': '\r', 'v': '\v', 'f': '\f',
               'a': '\a', 'b': '\b', '"': '"', '\\': '\\', '0': '\0'}

    def __init__(self, text):
        self.t, self.i = text, 0

    def skip(self):
        while self.i < len(self.t) and self.t[self.i] == ' ':
            self.i += 1

    def take(self, s):
        self.skip()
        if not self.t.startswith(s, self.i):
            raise ValueError('expected %r at %d of %r' % (s, self.i, self.t))
        self.i += len(s)

    def peek(self):
        self.skip()
        return self.t[self.i] if self.i < len(self.t) else ''

    def value(self):
        c = self.peek()
        if c == '{':
            return self.struct()
        if c == '[':
            return self.array()
        if c == '"':
            return self.string()
        m = self.SCALAR.match(self.t, self.i)
        self.i = m.end()
        return m.group()

    def members(self, close, key):
        out = []
        if self.peek() == close:
            self.i += 1
            return out
        while True:
            k = key()
            self.take('=')
            out.append((k, self.value()))
            if self.peek() == ',':
                self.i += 1
                continue
            self.take(close)
            return out

    def field_name(self):
        self.skip()
        m = self.NAME.match(self.t, self.i)
        self.i = m.end()
        return m.group()

    def index(self):
        self.take('[')
        k = self.field_name()
        self.take(']')
        return k

    def struct(self):
        self.take('{')
        return self.members('}', self.field_name)

    def array(self):
        self.take('[')
        return self.members(']', self.index)

    def string(self):
        self.take('"')
        out = []
        while self.t[self.i] != '"':
            c = self.t[self.i]
            self.i += 1
            if c != '\\':
                out.append(c)
            elif self.t[self.i] == 'x':
                out.append(chr(int(self.t[self.i + 1:self.i + 3], 16)))
                self.i += 3
            else:
                out.append(self.ESCAPES[self.t[self.i]])
                self.i += 1
        self.i += 1
        return ('str', ''.join(out))


LINE = re.compile(r'^\[(\d+)\.(\d{9})\] (?:\S*:\(\d+\) )?(.*?): (\{.*)$')


def bt_events(path):
    """[(ns, name, context dict, payload list)] of babeltrace2's output."""
    out = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        m = LINE.match(line)
        if not m:
            problem('%s:%d: not an event line: %r' % (path, n, line))
            continue
        p = Parser(m.group(4))
        try:
            ctx = dict(p.struct())
            payload = []
            if p.peek() == ',':
                p.i += 1
                payload = p.struct()
        except (ValueError, KeyError, AttributeError, IndexError) as e:
            problem('%s:%d: cannot parse: %s' % (path, n, e))
            continue
        ns = int(m.group(1)) * 10**9 + int(m.group(2))
        out.append((ns, m.group(3), ctx, payload))
    return out


# ----------------------------------------------------------------------
# events

def raw_events(pdir):
    sites, offset = read_meta(pdir)
    if offset is None:
        problem('%s: no clock_offset in process.meta' % pdir)
        offset = 0
    out = []
    for path in channel_files(pdir):
        for h, recs in packets(path):
            for rid, ts in recs:
                name = sites.get(rid, ('<id %d>' % rid, ''))[0]
                out.append((h.tid, ts + offset, name))
    return out


def compare_times(pdir, bt):
    raw = sorted(raw_events(pdir))
    got = sorted((int(c.get('tid', -1)), ns, name) for ns, name, c, _ in bt)
    if len(raw) != len(got):
        problem('%d records in the channel files, %d events in babeltrace2'
                % (len(raw), len(got)))
    for want, have in zip(raw, got):
        if want != have:
            problem('record (tid, wall-clock ns, name) %r: babeltrace2 has '
                    '%r' % (want, have))
            break


def same_value(letter, want, have):
    if letter in 'iu':
        return str(int(want)) == have
    if letter == 'p':
        return int(want) == int(have, 16)
    if letter == 'd':
        return '%g' % float(want) == have
    if letter == 's':
        return (isinstance(have, tuple) and
                as_bytes(have[1]) == bytes.fromhex(want))
    if letter == 'D':
        m = dict(have) if isinstance(have, list) else {}
        return [m.get(k) for k in ('mantissa', 'exponent', 'sign')] == \
            want.split(',')
    return False


def compare_event(tid, want, have):
    name, fields = want[0], [f.split('=', 1) for f in want[1:]]
    if have[1] != name:
        problem('tid %s: event %r, babeltrace2 has %r' % (tid, name, have[1]))
        return
    names = [k for k, _ in fields]
    got = [k for k, _ in have[3]]
    if got != names:
        problem('tid %s %s: fields %r, babeltrace2 has %r'
                % (tid, name, names, got))
        return
    for (k, v), (_, hv) in zip(fields, have[3]):
        if not same_value(v[0], v[2:], hv):
            problem('tid %s %s: %s = %s (%s), babeltrace2 has %r'
                    % (tid, name, k, v[2:], v[0], hv))


def compare_program(prog_out, bt):
    want, have = {}, {}
    for line in read_text(prog_out).splitlines():
        w = line.split('\t')
        want.setdefault(w[0], []).append(w[1:])
    for ev in bt:
        if not ev[1].startswith(('tracer:', 'proc:')):
            have.setdefault(ev[2].get('tid'), []).append(ev)
    if sorted(want) != sorted(have):
        problem('threads %s recorded, babeltrace2 has %s'
                % (sorted(want), sorted(have)))
    for tid, events in want.items():
        got = have.get(tid, [])
        if len(got) != len(events):
            problem('tid %s: %d events recorded, babeltrace2 has %d'
                    % (tid, len(events), len(got)))
        for w, h in zip(events, got):
            compare_event(tid, w, h)


def context_only_tid(bt):
    for ns, name, ctx, _ in bt:
        if list(ctx) != ['tid']:
            problem('%s at %d: packet context %r, not only the thread'
                    % (name, ns, ctx))
            return


def cmd_events(pdir, bt_out, prog_out=None):
    bt = bt_events(bt_out)
    context_only_tid(bt)
    compare_times(pdir, bt)
    if prog_out:
        compare_program(prog_out, bt)
    print(len(bt))


# ----------------------------------------------------------------------
# counters, discarded, count, sum

def check_file(path):
    """(packets, packets with records, last events_discarded) of a file."""
    n = full = last = 0
    first = None
    for h, recs in packets(path):
        if h.seq != n:
            problem('%s: packet %d has packet_seq_num %d' % (path, n, h.seq))
        if h.discarded < last:
            problem('%s: packet %d: events_discarded %d after %d'
                    % (path, n, h.discarded, last))
        if first is None:
            first = (h.stream_id, h.instance, h.tid)
        elif first != (h.stream_id, h.instance, h.tid):
            problem('%s: packet %d is another stream\'s' % (path, n))
        n += 1
        full += bool(recs)
        last = h.discarded
    return n, full, last


def cmd_counters(top, want=None):
    files = total = most = lost = 0
    for path in channel_files(top):
        n, full, last = check_file(path)
        files += 1
        total += n
        most = max(most, full)
        lost += last
    if want is not None and lost != int(want):
        problem('the channel files say %d records were lost, not %s'
                % (lost, want))
    print('files %d packets %d most %d lost %d' % (files, total, most, lost))


def cmd_discarded(bt_err):
    total = 0
    for line in read_text(bt_err).splitlines():
        m = re.match(r'^WARNING: Tracer discarded (\d+) events? between ',
                     line)
        if m:
            total += int(m.group(1))
        elif line.strip():
            problem('babeltrace2 says: %s' % line)
    print(total)


def cmd_count(bt_out, name):
    print(sum(1 for ev in bt_events(bt_out) if ev[1] == name))


def cmd_sum(bt_out, name, field):
    print(sum(int(dict(ev[3])[field]) for ev in bt_events(bt_out)
              if ev[1] == name))


def main(argv):
    cmds = {'events': (cmd_events, 2, 3), 'counters': (cmd_counters, 1, 2),
            'discarded': (cmd_discarded, 1, 1), 'count': (cmd_count, 2, 2),
            'sum': (cmd_sum, 3, 3)}
    if len(argv) < 2 or argv[1] not in cmds or \
            not cmds[argv[1]][1] <= len(argv) - 2 <= cmds[argv[1]][2]:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
