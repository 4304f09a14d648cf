#!/usr/bin/env python3
"""view_stream.py TRACECTL GEN_TRACE TMPDIR MEGABYTES

`tracectl view` streams: on a synthetic trace of MEGABYTES (gen_trace.c),
its memory does not grow with the trace, the first lines come out before
it has read more than a sliver of the trace, and the lines are right.
Prints TAP lines (no plan: the calling script counts them).
"""
import os
import resource
import subprocess
import sys

tracectl, gen, tmp, mb = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
n = 0


def ok(cond, desc):
    global n
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, desc), flush=True)


def gen_trace(name, megabytes):
    d = os.path.join(tmp, name)
    subprocess.run([gen, d, str(megabytes)], check=True)
    return d


def max_rss_kb(args):
    """Run args (output discarded); the child's peak RSS in KiB."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execv(args[0], args)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


def proc_field(pid, name, key):
    with open("/proc/%d/%s" % (pid, name)) as f:
        for line in f:
            if line.startswith(key):
                return line.split()
    return None


small = gen_trace("small", 4)
big = gen_trace("big", mb)
big_bytes = sum(os.path.getsize(os.path.join(big, "gen-1", f))
                for f in os.listdir(os.path.join(big, "gen-1")))

rc_s, rss_s = max_rss_kb([tracectl, "view", small])
rc_b, rss_b = max_rss_kb([tracectl, "view", big])
print("# peak RSS: %d KiB for 4 MB, %d KiB for %d MB" % (rss_s, rss_b, mb))
ok(rc_s == 0 and rc_b == 0, "view reads both traces without a problem")
ok(rss_b <= rss_s + 4096,
   "constant memory: %d MB need no more than 4 MB do, +4 MiB (%d vs %d KiB)"
   % (mb, rss_b, rss_s))

# First lines at once: read one line, stop reading; once view blocks
# writing into the full pipe, it has read only a sliver of the trace.
p = subprocess.Popen([tracectl, "view", big], stdout=subprocess.PIPE)
first = p.stdout.readline().decode()
blocked = False
for _ in range(2000000):
    try:
        with open("/proc/%d/wchan" % p.pid) as f:
            wchan = f.read()
        with open("/proc/%d/stat" % p.pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        break
    if state == "S" and "pipe" in wchan:
        blocked = True
        break
rchar = int(proc_field(p.pid, "io", "rchar:")[1]) if blocked else -1
print("# first line: %s# view blocked on the pipe after reading %d of %d bytes"
      % (first, rchar, big_bytes))
ok(first == "0.000000001 gen 1 1 gen:tick: tick 0 of thread 0\n",
   "the first line is the earliest event, formatted")
ok(blocked and 0 <= rchar < big_bytes // 20,
   "the first lines come before view has read 5 percent of the trace")

# The whole output, streamed and counted (not stored).
lines = 0
last = ""
bad = 0
for raw in p.stdout:
    line = raw.decode()
    lines += 1
    last = line
p.wait()
RECORD = 24  # gen_trace.c: a compact header and two values
records = big_bytes // 65536 * ((65536 - 80) // RECORD)
ok(p.returncode == 0 and lines + 1 == records,
   "every one of the %d events is printed (%d)" % (records, lines + 1))
per_thread = records // 4
ok(last.endswith("tick %d of thread 3\n" % (per_thread - 1)),
   "the last line is the latest event")
