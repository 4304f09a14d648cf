#!/usr/bin/env python3
"""wrap_check.py MODE VIEW REPORT: checks a `tracectl view` of wrapee
(test_wrap_io.sh) against the values wrapee reported on its standard
error. Prints one line per problem; exits 1 if there was any."""
import re
import sys

mode, view_path, report_path = sys.argv[1:4]
events = []          # (tid, name, fields dict, message)
for line in open(view_path, errors="replace"):
    parts = line.rstrip("\n").split(" ", 5)
    if len(parts) < 6 or not parts[4].endswith(":"):
        continue
    name, msg = parts[4][:-1], parts[5]
    fields = dict(re.findall(r"(\w+) (\S+)", msg))
    events.append((parts[3], name, fields, msg, parts[2]))
reports = [l.split()[1:] for l in open(report_path) if l.startswith("report ")]
rep = {r[0]: r[1:] for r in reports}
problems = []


def named(name, **want):
    return [e for e in events if e[1] == name and
            all(e[2].get(k) == str(v) for k, v in want.items())]


def need(cond, what):
    if not cond:
        problems.append(what)


if mode == "io":
    fd = rep["open_fd"][0]
    need(any(e[3].startswith("path ") and e[3].endswith("a.txt flags 0x242 mode 0640 fd " + fd)
             for e in named("libc:open")), "libc:open of a.txt with O_CREAT|O_RDWR|O_TRUNC, 0640, fd " + fd)
    for call, count in (("write", 29), ("read", 7), ("pread", 5), ("pwrite", 5),
                        ("readv", 30), ("writev", 10)):
        need(named("libc:%s_entry" % call, fd=fd, count=count),
             "libc:%s_entry fd %s count %d" % (call, fd, count))
    need(named("libc:write_exit", fd=fd, result=29), "libc:write_exit result 29")
    need(named("libc:readv_exit", fd=fd, result=29), "libc:readv_exit result 29")
    need(named("libc:lseek", fd=fd, offset=0, result=0), "libc:lseek")
    need(named("libc:fsync_exit", fd=fd, result=0), "libc:fsync_exit")
    need(named("libc:fdatasync_exit", fd=fd, result=0), "libc:fdatasync_exit")
    need(named("libc:dup", fd=fd), "libc:dup")
    need(named("libc:dup2", fd=fd) and named("libc:dup3", fd=fd), "libc:dup2, dup3")
    need(any(e[3].startswith("dirfd ") and "path b.txt" in e[3] and
             e[3].endswith("fd " + rep["openat_fd"][0]) for e in named("libc:openat")),
         "libc:openat of b.txt, fd " + rep["openat_fd"][0])
    need(named("libc:creat"), "libc:creat")
    need(named("libc:sendfile_exit", result=10), "libc:sendfile_exit result 10")
    need(named("libc:copy_file_range_exit", result=12), "libc:copy_file_range_exit 12")
    need(named("libc:close", fd=fd, result=0), "libc:close of fd " + fd)
    need([e for e in named("libc:open") if "/nonexistent/wrapee" in e[3]
          and e[3].endswith("fd -1 errno ENOENT")], "failed open: errno ENOENT")
    need([e for e in named("libc:read_exit", fd=-1) if e[3].endswith("errno EBADF")],
         "failed read: errno EBADF")
    need([e for e in named("libc:close", fd=-1) if e[3].endswith("errno EBADF")],
         "failed close: errno EBADF")
    need(named("libc:pipe", fds=rep["pipe_read"][0]), "libc:pipe with its descriptors")
    need(named("libc:pipe2"), "libc:pipe2")
    for call in ("poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait",
                 "splice", "connect", "accept", "send", "recv", "sendmsg", "recvmsg",
                 "sendto", "recvfrom"):
        need(named("libc:%s_entry" % call) and named("libc:%s_exit" % call),
             "libc:%s_entry and _exit" % call)
    need(named("libc:poll_exit", result=1), "libc:poll_exit result 1")
    need([e for e in named("libc:bind") if "addr unix:/" in e[3] and "/sock result 0" in e[3]],
         "libc:bind with the socket's path")
    need([e for e in named("libc:connect_exit") if e[3].endswith("errno ECONNREFUSED")],
         "refused connect: errno ECONNREFUSED")
    need([e for e in named("libc:connect_entry") if "addr unix:@nowhere" in e[3]],
         "abstract address shown as unix:@nowhere")
    need([e for e in named("libc:sendto_entry")
          if e[3].endswith("to 127.0.0.1:" + rep["udp_port"][0])],
         "libc:sendto_entry to 127.0.0.1:" + rep["udp_port"][0])
    need(named("libc:socket") and named("libc:listen", backlog=4), "libc:socket, listen")
    # Blocking calls: every entry of a thread is followed by its exit.
    open_calls = {}
    for tid, name, f, msg, pid in events:
        m = re.match(r"libc:(\w+)_(entry|exit)$", name)
        if not m:
            continue
        if m.group(2) == "entry":
            need(tid not in open_calls, "%s inside %s" % (name, open_calls.get(tid)))
            open_calls[tid] = m.group(1)
        else:
            need(open_calls.pop(tid, None) == m.group(1), "%s without its entry" % name)
elif mode == "mem":
    for size, ptr in ([r[1], r[2]] for r in reports if r[0] == "malloc"):
        need(named("libc:malloc", size=size, ptr=ptr), "libc:malloc size %s ptr %s" % (size, ptr))
        need(named("libc:free", ptr=ptr), "libc:free ptr " + ptr)
    need(named("libc:calloc", nmemb=3, size=100, ptr=rep["calloc"][0]), "libc:calloc")
    need(named("libc:realloc", ptr=rep["realloc"][0], size=1000, result=rep["realloc"][1]),
         "libc:realloc")
    need(named("libc:posix_memalign", alignment=64, size=100, result=0), "libc:posix_memalign")
    need(named("libc:aligned_alloc", alignment=128, size=256), "libc:aligned_alloc")
    need(named("libc:memalign", alignment=256, size=10), "libc:memalign")
    need(named("libc:mmap", length=8192, result=rep["mmap"][0]), "libc:mmap")
    need(named("libc:munmap", addr=rep["mmap"][0], length=8192, result=0), "libc:munmap")
    need([e for e in named("libc:malloc", ptr="(nil)")], "failed malloc: ptr (nil)")
elif mode == "storm":
    fd, n = rep["storm_fd"][0], int(sys.argv[4])
    main_tid = [e[0] for e in events if e[0] == e[4]][0]
    writes = [e for e in named("libc:write_exit", fd=fd, result=16) if e[0] == main_tid]
    need(len(writes) == n, "%d of the main thread's %d writes recorded" % (len(writes), n))
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
