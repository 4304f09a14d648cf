#!/bin/bash
# make check-stress: 50 programs killed with SIGKILL at random points while
# they record, each checked event by event (test_crash.sh).
CRASH_TRIALS=${CRASH_TRIALS:-50} exec bash \
	"$(dirname "$0")/../integration/test_crash.sh"
