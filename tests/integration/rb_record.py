"""rb_record.py: the record headers of a channel file's packets, read as
common/rb_record.h reads them (layout: common/rb_layout.h), for the test
scripts that look into channel files themselves.

  for rid, size, ts in records(data, at, end, timestamp_begin): ...
"""
import struct

COMPACT, EXTENDED = 8, 24
ID_EXTENDED = 4095
TIME_BITS = 32
EXT = struct.Struct('<IIIIQ')  # tag, size, id, lap, time


def header(data, at, end, clock):
    """(id, size, time) of the record at `at`, the time before it in
    `clock`; None when it cannot be a record."""
    if end - at < COMPACT:
        return None
    (w,) = struct.unpack_from('<Q', data, at)
    rid = w & 0xfff
    if rid != ID_EXTENDED:
        size = ((w >> 12) & 0xfff) * 8
        if size < COMPACT or at + size > end:
            return None
        mask = (1 << TIME_BITS) - 1
        return rid, size, clock + (((w >> 32) - clock) & mask)
    if end - at < EXTENDED:
        return None
    tag, size, rid, lap, ts = EXT.unpack_from(data, at)
    if lap > 0xff or size < EXTENDED or size % 8 or at + size > end:
        return None
    return rid, size, ts


def records(data, at, end, begin):
    """(id, size, time) of each record from `at` to `end`, the packet's
    timestamp_begin in `begin`; stops at one that cannot be a record."""
    clock = begin
    while at < end:
        h = header(data, at, end, clock)
        if h is None:
            return
        yield h
        clock = h[2]
        at += h[1]
