#!/bin/bash
# Function entry and exit, and the names of addresses: tests/integration/
# funcs (built with -finstrument-functions) calls functions of a known
# nesting in two threads and in a module it loads with dlopen() and
# unloads, and prints what it called; traced with `tracectl record`, and
# read after it exited:
#   - proc:module names the executable at its base, proc:dlopen and
#     proc:dlclose the module, a failed dlopen() its error (which the
#     program still got from dlerror());
#   - in `tracectl view`, func:entry and func:exit nest per thread, and
#     the functions they name (fn 0x... <name>) are the ones the program
#     called, in order, the module's too (it is gone by then);
#   - `tracectl export` has one slice per call, named by the function,
#     nested per thread; so has `tracectl timeline`.
# And tests/integration/recfuncs, built with -finstrument-functions too,
# which calls tracer_record() in C and C++: its trace has func:entry and
# func:exit of its own three functions, none of <tracer.h>'s (argument
# helpers, the constructor that registers the call sites).
. "$(dirname "$0")/lib.sh"

FUNCS=./tests/integration/funcs
MODULE=$PWD/tests/integration/.libs/funcmod.so
DEPTH=5

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	rm -rf "$T"
	exit 0
fi

check "tracerd starts" start_daemon
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$FUNCS" "$MODULE" $DEPTH \
	>"$T/prog" 2>"$T/err"
check "the traced program exits 0" [ $? -eq 0 ]
sed 's/^/# /' "$T/err"
dir=$(record_dir "$T/err")
read -r _ exe base < <(grep '^exe ' "$T/prog")
module=$(sed -n 's/^module //p' "$T/prog")
ok $([ -n "$exe" ] && [ -n "$base" ] && [ -n "$module" ]; echo $?) \
	"the program says where it is and what it loaded"
check "dlerror() still tells the program why dlopen() failed" \
	grep -qx "dlerror ok" "$T/prog"

"$TRACECTL" view "$dir" >"$T/view" 2>"$T/view.err"
ok $([ $? -eq 0 ] && [ ! -s "$T/view.err" ]; echo $?) \
	"view reads the trace, no complaint"
grep -q " proc:module: path $exe base $base\$" "$T/view"
ok $? "proc:module: the executable at its base ($base)"
grep -q " proc:module: path .*/libc\.so[.0-9]* base 0x" "$T/view"
ok $? "proc:module: the C library"
grep -q " proc:dlopen: path $module flags 0x2 base 0x[0-9a-f]* handle 0x[0-9a-f]*\$" "$T/view"
ok $? "proc:dlopen: the module's path, base and handle"
grep -q " proc:dlclose: handle 0x[0-9a-f]* path $module result 0\$" "$T/view"
ok $? "proc:dlclose: the module's handle and path"
grep -q " proc:dlopen: path /nonexistent/funcs-nosuch.so flags 0x2 base (nil) handle (nil) error .*funcs-nosuch.so: " "$T/view"
ok $? "proc:dlopen of a missing file: its error"

# Per thread: entries and exits nest, exits name the function entered,
# and the functions entered are those the program says it called.
python3 - "$T/view" "$T/prog" >"$T/nest" 2>&1 <<'PY'
import re, sys
stacks, calls, bad = {}, {}, []
for line in open(sys.argv[1]):
    f = line.split(" ", 5)
    if len(f) < 6 or f[4] not in ("func:entry:", "func:exit:"):
        continue
    m = re.match(r"fn 0x[0-9a-f]+ <([^>+]+)> caller 0x[0-9a-f]+", f[5])
    if not m:
        bad.append("unnamed: " + line.strip())
        continue
    tid, name = f[3], m.group(1)
    st = stacks.setdefault(tid, [])
    if f[4] == "func:entry:":
        st.append(name)
        calls.setdefault(tid, []).append(name)
    elif not st or st.pop() != name:
        bad.append("exit of %s does not close the innermost entry" % name)
for tid, st in stacks.items():
    if st:
        bad.append("thread %s: %s never exited" % (tid, st))
want = {}
for line in open(sys.argv[2]):
    if line.startswith("calls "):
        w = line.split()
        want[w[1]] = w[2:]
if not want or want != calls:
    bad.append("called %r, traced %r" % (want, calls))
print("\n".join(bad) if bad else "threads %d" % len(calls))
sys.exit(1 if bad else 0)
PY
ok $? "func:entry/exit nest per thread and name the functions the program called"
sed 's/^/# /' "$T/nest"
grep -q " func:entry: fn 0x[0-9a-f]* <funcmod_inner> caller 0x[0-9a-f]* <funcmod_work+[0-9]*>\$" "$T/view"
ok $? "a function of the unloaded module, and its caller, named"

"$TRACECTL" export "$dir" -o "$T/trace.json"
ok $? "export writes the trace"
python3 - "$T/trace.json" "$T/prog" $DEPTH >"$T/chrome" 2>&1 <<'PY'
import json, sys
ev = json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
depth = int(sys.argv[3])
stacks, names, bad, maxd = {}, {}, [], {}
for e in ev:
    if e["ph"] not in "BE" or e.get("cat") != "func":
        continue
    st = stacks.setdefault(e["tid"], [])
    if e["ph"] == "B":
        st.append(e["name"])
        names[e["name"]] = names.get(e["name"], 0) + 1
        maxd[e["tid"]] = max(maxd.get(e["tid"], 0), len(st))
    elif not st or st.pop() != e["name"]:
        bad.append("E %s does not close the innermost slice" % e["name"])
want = {}
for line in open(sys.argv[2]):
    if line.startswith("calls "):
        for n in line.split()[2:]:
            want[n] = want.get(n, 0) + 1
if names != want:
    bad.append("slices %r, calls %r" % (names, want))
if sorted(maxd.values()) != [depth + 1, depth + 1]:
    bad.append("depths %r" % maxd)
print("\n".join(bad) if bad else "slices %d" % sum(names.values()))
sys.exit(1 if bad else 0)
PY
ok $? "export: one slice per call, named by its function, nested per thread"
sed 's/^/# /' "$T/chrome"

"$TRACECTL" timeline "$dir" -o "$T/tl.html"
ok $([ $? -eq 0 ] && grep -q '"funcmod_inner"' "$T/tl.html" &&
	grep -q '"recurse"' "$T/tl.html"; echo $?) \
	"timeline: the slices are named by their functions"

# The names come from the files: an executable gone since prints its
# addresses plainly, quietly; the others are still named.
cp "$FUNCS" "$T/gone"
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- "$T/gone" "$MODULE" 2 \
	>"$T/prog2" 2>&1
dir2=$(record_dir "$T/prog2")
rm -f "$T/gone"
"$TRACECTL" view "$dir2" >"$T/view2" 2>"$T/view2.err"
ok $([ $? -eq 0 ] && [ ! -s "$T/view2.err" ] &&
	grep -q " func:entry: fn 0x[0-9a-f]* caller 0x[0-9a-f]*\$" "$T/view2" &&
	! grep -Eq "<main[+>]" "$T/view2" &&
	grep -q "<funcmod_inner>" "$T/view2"; echo $?) \
	"an executable gone: its addresses print plainly, no error; the module's named"

# <tracer.h>'s functions are not the program's.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- ./tests/integration/recfuncs 3 \
	>"$T/prog3" 2>"$T/err3"
check "recfuncs (tracer_record() in C and C++) exits 0" [ $? -eq 0 ]
dir3=$(record_dir "$T/err3")
"$TRACECTL" view "$dir3" >"$T/view3" 2>"$T/view3.err"
ok $([ $? -eq 0 ] && grep -q ' test:cxx_more: ' "$T/view3" &&
	grep -q ' test:c_values: ' "$T/view3"; echo $?) \
	"recfuncs: view reads its events"
# The function of each func:entry and func:exit, by name (or its address).
awk '$5 == "func:entry:" || $5 == "func:exit:" {
	n = $7; if ($8 ~ /^</) { n = $8; gsub(/[<>]/, "", n) }
	print substr($5, 6, length($5) - 6), n }' "$T/view3" >"$T/funcs3"
sed 's/^/# /' "$T/funcs3" | head -n 20
ok $(! grep -q 'tracer__' "$T/funcs3" &&
	[ "$(grep -c '^entry ' "$T/funcs3")" -eq 3 ] &&
	[ "$(grep -c '^exit ' "$T/funcs3")" -eq 3 ] &&
	grep -q '^entry main$' "$T/funcs3" &&
	grep -q '^entry c_values$' "$T/funcs3" &&
	grep -q '^entry cxx_values(int)$' "$T/funcs3"; echo $?) \
	"recfuncs: func:entry/exit of its 3 functions only, none of <tracer.h>'s; the C++ one demangled"
"$TRACECTL" export "$dir3" -o "$T/recfuncs.json" 2>"$T/export3.err"
ok $(grep -q '"cxx_values(int)"' "$T/recfuncs.json"; echo $?) \
	"recfuncs: export names the C++ function's slice demangled"

finish
