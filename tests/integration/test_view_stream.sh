#!/bin/bash
# `tracectl view` streams a large trace: constant memory, first lines at
# once (tests/integration/view_stream.py). VIEW_STREAM_MB sets the size of
# the trace: 128 MB in make check, several GB in make check-stress.
. "$(dirname "$0")/lib.sh"

python3 "$(dirname "$0")/view_stream.py" "$TRACECTL" \
	./tests/integration/gen_trace "$T" "${VIEW_STREAM_MB:-128}" >"$T/tap"
status=$?
while read -r line; do
	case $line in
	"ok "*) ok 0 "${line#ok * - }" ;;
	"not ok "*) ok 1 "${line#not ok * - }" ;;
	*) echo "$line" ;;
	esac
done <"$T/tap"
ok $status "the streaming checks ran to the end"
finish
