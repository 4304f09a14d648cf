#!/bin/bash
# make check-stress: `tracectl view` of a 3 GB trace in constant memory.
VIEW_STREAM_MB=${VIEW_STREAM_MB:-3072} exec bash \
	"$(dirname "$0")/../integration/test_view_stream.sh"
