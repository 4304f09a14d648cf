#!/usr/bin/env python3
"""damage.py FILE N: damage channel FILE (doc/session-files.md) in place.

  magic N      overwrite the magic of packet N (counting from 0)
  size N       make packet N's packet_size point past the end of the file
  truncate N   cut the file in the middle of packet N

Prints the file offset of packet N, the number of records in it, and the
number in the packets after it (which `tracectl view` must still show,
except after a truncation).
"""
import struct
import sys

import rb_record

path, how, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(path, "rb").read())


def packets(buf):
    off = 0
    while off + 80 <= len(buf):
        # struct tracer_rb_packet (common/rb_layout.h)
        (begin,) = struct.unpack_from("<Q", buf, off + 32)
        content, size = struct.unpack_from("<QQ", buf, off + 48)
        recs = sum(1 for _ in rb_record.records(buf, off + 80,
                                                off + content // 8, begin))
        yield off, size // 8, recs
        off += size // 8


pk = list(packets(data))
off, size, recs = pk[n]
after = sum(p[2] for p in pk[n + 1:])
if how == "magic":
    struct.pack_into("<I", data, off, 0xDEADBEEF)
elif how == "size":
    struct.pack_into("<Q", data, off + 56, (len(data) - off + 4096) * 8)
elif how == "truncate":
    data = data[:off + size // 2]
open(path, "wb").write(data)
print(off, recs, after)
