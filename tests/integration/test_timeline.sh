#!/bin/bash
# tracectl timeline on a real multi-thread trace (examples/hanoi_traced 3 4:
# main and two solving threads; tests/integration/pairs: nested pairs in
# three more), opened in headless Chromium: the page runs without a
# JavaScript error, says it drew (data-status="ok"), has one lane per
# thread of the trace (counted with tracectl view) and the number of events
# view prints, and a screenshot shows coloured marks and slices.
# Then `sh -c 'exec tl_poll'` (tracectl record): two process images of one
# pid, each with a lane of its own, labelled by its program; tl_poll waits
# twice in poll() for 1 s, each time just after a short read(): the
# legend gives libc:poll's colour, and at the zoom that shows the whole
# trace both long slices are drawn (their pixels in a screenshot), even
# though each starts in the pixel of a short slice.
# Skipped only where Chromium is not installed ($CHROMIUM names it).
. "$(dirname "$0")/lib.sh"

HANOI=${HANOI_TRACED:-./examples/hanoi_traced}
PAIRS=./tests/integration/pairs
TL_POLL=$(cd ./tests/integration && pwd)/tl_poll
SRC=$(dirname "$0")
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser ||
	command -v google-chrome)}

if [ -z "$CHROMIUM" ]; then
	echo "1..0 # SKIP chromium not installed"
	rm -rf "$T"
	exit 0
fi

# chromium OUTPUT ERRORS ARGS... FILE: headless, private profile and HOME,
# no network, at most 60 s; in its own process group, killed whole after.
chromium() {
	local out=$1 err=$2 rc
	shift 2
	HOME=$T/home setsid timeout -k 5 60 "$CHROMIUM" --headless \
		--no-sandbox --disable-gpu --disable-dev-shm-usage \
		--user-data-dir="$T/profile" --no-first-run \
		--disable-extensions --disable-background-networking \
		--disable-component-update --disable-sync \
		--host-resolver-rules='MAP * ~NOTFOUND' \
		--virtual-time-budget=10000 --enable-logging=stderr --v=0 \
		"$@" >"$out" 2>"$err" </dev/null &
	local pid=$!
	wait $pid
	rc=$?
	kill -KILL -- -$pid 2>/dev/null
	return $rc
}

mkdir -p "$T/home"
check "tracerd starts" start_daemon
dir=$(session_cmd start)
"$HANOI" 3 4 >/dev/null && "$PAIRS" 3 1000 5
check "the traced programs exit 0" [ $? -eq 0 ]
check "stop returns the session directory" [ "$(session_cmd stop)" = "$dir" ]

"$TRACECTL" view "$dir" >"$T/view"
check "view reads the trace" [ $? -eq 0 ]
awk '{ print $3, $4 }' "$T/view" | sort -u >"$T/threads"
threads=$(wc -l <"$T/threads")
events=$(wc -l <"$T/view")
check "the trace has the threads of both programs" [ "$threads" -ge 6 ]

"$TRACECTL" timeline "$dir" -o "$T/timeline.html"
check "timeline writes the page" [ $? -eq 0 ]
python3 "$SRC/check_timeline.py" "$T/timeline.html" >"$T/data" 2>&1
ok $([ $? -eq 0 ] && grep -qx "lanes $threads" "$T/data" &&
	grep -qx "items $events" "$T/data"; echo $?) \
	"its data: one lane per thread ($threads), every event ($events), slices nested"
sed 's/^/# /' "$T/data" | head -n 12
ok $(! grep -Eq '(src|href)="|https?:|//[a-z]' "$T/timeline.html"; echo $?) \
	"the page refers to nothing outside itself"

chromium "$T/dom.html" "$T/dom.err" --dump-dom "file://$T/timeline.html"
check "chromium loads the page (--dump-dom)" [ $? -eq 0 -a -s "$T/dom.html" ]
body=$(grep -o '<body[^>]*>' "$T/dom.html")
echo "# $body"
errors=$(grep -E 'Uncaught|:CONSOLE|console' "$T/dom.err")
ok $(echo "$body" | grep -q 'data-errors=""' && [ -z "$errors" ]; echo $?) \
	"no JavaScript error (data-errors empty, none logged)"
[ -z "$errors" ] || sed 's/^/# /' <<<"$errors"
ok $(echo "$body" | grep -q 'data-status="ok"'; echo $?) \
	"the page says it drew (data-status=\"ok\")"
ok $(echo "$body" | grep -q "data-lanes=\"$threads\"" &&
	[ "$(grep -o 'class="lane-label' "$T/dom.html" | wc -l)" -eq "$threads" ]
	echo $?) "one lane and one lane label per thread ($threads)"
grep -o 'class="lane-label[^"]*" [^>]*data-pid="[0-9]*" data-tid="[0-9]*"' \
	"$T/dom.html" | sed 's/.*data-pid="\([0-9]*\)" data-tid="\([0-9]*\)"/\1 \2/' |
	sort -u >"$T/labels"
check "the lanes are the threads view shows" cmp -s "$T/labels" "$T/threads"
ok $(echo "$body" | grep -q "data-events=\"$events\""; echo $?) \
	"the page holds the $events events"

chromium "$T/shot.out" "$T/shot.err" --hide-scrollbars \
	--window-size=1400,900 --screenshot="$T/shot.png" \
	"file://$T/timeline.html"
check "chromium takes a screenshot" [ $? -eq 0 -a -s "$T/shot.png" ]
python3 "$SRC/check_png.py" "$T/shot.png" 262 >"$T/png" 2>&1
sed 's/^/# /' "$T/png"
ok $(grep -qx 'width 1400' "$T/png" && grep -qx 'height 900' "$T/png" &&
	[ "$(sed -n 's/^saturated //p' "$T/png")" -gt 2000 ]; echo $?) \
	"the screenshot is a 1400x900 PNG with coloured events drawn"

# Two images of one pid; long slices among short ones.
LD_PRELOAD=$RECORD_PRELOAD "$TRACECTL" record -- sh -c "exec $TL_POLL 1000 300" \
	>"$T/poll.out" 2>"$T/poll.err"
check "tracectl record -- sh -c 'exec tl_poll 1000 300' exits 0" [ $? -eq 0 ]
pdir=$(record_dir "$T/poll.err")
pid=$(sed -n 's/^pid //p' "$pdir"/tl_poll-*/tracer/process.meta)
echo "# $pdir: pid $pid"
"$TRACECTL" timeline "$pdir" -o "$T/poll.html"
check "timeline writes the page" [ $? -eq 0 ]
python3 "$SRC/check_timeline.py" "$T/poll.html" >"$T/poll.data" 2>&1
grep -E '^(lanes|procs|proc|slices|unmatched) ' "$T/poll.data" | sed 's/^/# /'
ok $([ -n "$pid" ] && grep -qx "procs 2" "$T/poll.data" &&
	grep -qx "proc $pid 1 sh sh-$pid" "$T/poll.data" &&
	grep -qx "proc $pid 2 tl_poll tl_poll-$pid" "$T/poll.data" &&
	grep -qx "lanes 2" "$T/poll.data"; echo $?) \
	"sh and the program it execs (pid $pid): two process images, a lane each"
ok $(grep -q "^image $pid 1 $pid .*proc:exec" "$T/poll.data" &&
	! grep "^image $pid 1 " "$T/poll.data" | grep -q "libc:poll" &&
	grep "^image $pid 2 $pid " "$T/poll.data" | grep -q " libc:poll " &&
	! grep "^image $pid 2 " "$T/poll.data" | grep -q "proc:exec"
	echo $?) "each lane holds its own program's events (sh: the exec; tl_poll: the polls)"

chromium "$T/pdom.html" "$T/pdom.err" --dump-dom "file://$T/poll.html"
check "chromium loads the page (--dump-dom)" [ $? -eq 0 -a -s "$T/pdom.html" ]
ok $(grep -q '<body data-status="ok" data-errors=""' "$T/pdom.html"; echo $?) \
	"the page draws without a JavaScript error"
ok $(grep -Fq "<span class=\"proc\">sh $pid (image 1) / </span>" "$T/pdom.html" &&
	grep -Fq "<span class=\"proc\">tl_poll $pid (image 2) / </span>" "$T/pdom.html"
	echo $?) "the lanes are labelled 'sh $pid (image 1)' and 'tl_poll $pid (image 2)'"
color=$(grep -o 'class="legend-item" data-name="libc:poll" data-color="[^"]*"' \
	"$T/pdom.html" | sed 's/.*data-color="\([^"]*\)"/\1/')
ok $([ -n "$color" ] &&
	grep -q 'class="legend-item" data-name="test:tick" data-color="hsl(' \
	"$T/pdom.html"; echo $?) "the legend gives the colour of each name (libc:poll: $color)"

chromium "$T/pshot.out" "$T/pshot.err" --hide-scrollbars \
	--window-size=1400,900 --screenshot="$T/pshot.png" \
	"file://$T/poll.html"
check "chromium takes a screenshot" [ $? -eq 0 -a -s "$T/pshot.png" ]
# Both slices: 2 s of a 2.1 s trace over the ~1140 pixels of the lanes,
# 14 pixels high: about 15000 pixels; one of them alone, under 8000.
n=$(python3 "$SRC/check_timeline.py" --color "$T/pshot.png" 262 "$color" |
	sed -n 's/^color //p')
ok $([ "${n:-0}" -ge 10000 ]; echo $?) \
	"at the zoom that shows it all, both 1 s libc:poll slices are drawn (${n:-0} pixels of their colour)"

finish
