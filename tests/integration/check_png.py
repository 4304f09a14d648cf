"""check_png.py - what a screenshot shows (tests/integration/
test_timeline.sh).

usage: check_png.py FILE.png X0

Decodes the PNG (8-bit RGB or RGBA, not interlaced: what Chromium
writes) with zlib alone and prints "KEY VALUE" lines:

  width, height  its size
  colors         distinct colours
  saturated      pixels right of X0 whose colour is far from grey
                 (max - min channel > 60): drawn events, not the page's
                 grey frame, text or background

Exit status 1 (reason on stderr) if it is not such a PNG.
"""
import struct
import sys
import zlib


def fail(msg):
    sys.stderr.write("check_png.py: %s\n" % msg)
    sys.exit(1)


def chunks(data):
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))
                       [ftype]) & 0xff
        rows.append(line)
        prev = line
    return rows


def main(argv):
    data = open(argv[1], "rb").read()
    x0 = int(argv[2])
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG")
    idat, ihdr = b"", None
    for kind, body in chunks(data):
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("unexpected PNG type %r" % (ihdr,))
    bpp = 3 if ctype == 2 else 4
    rows = unfilter(zlib.decompress(idat), width, height, bpp)
    colors, saturated = set(), 0
    for row in rows:
        for x in range(width):
            px = tuple(row[x * bpp:x * bpp + 3])
            colors.add(px)
            if x >= x0 and max(px) - min(px) > 60:
                saturated += 1
    print("width %d" % width)
    print("height %d" % height)
    print("colors %d" % len(colors))
    print("saturated %d" % saturated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
