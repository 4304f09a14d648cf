#!/bin/bash
# make check-stress: thread churn at tracerd's default settings, 100,000
# threads with 64 alive at a time (issue 15): every event in the trace,
# tracerd's memory flat, and the trace read back with a few descriptors.
CHURN_TOTAL=${CHURN_TOTAL:-100000} CHURN_ALIVE=${CHURN_ALIVE:-64} exec bash \
	"$(dirname "$0")/../integration/test_churn.sh"
