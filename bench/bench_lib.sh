# bench_lib.sh - what the benchmark scripts share (sourced by
# bench_drain.sh and bench_path.sh, run from the build directory).

# val KEY FILE: the last value of KEY on FILE's "@ key=value" lines (the
# results bench_tracer and bench_lttng print).
val() {
	awk -v k="$1" '$1 == "@" { for (i = 2; i <= NF; i++) {
		n = index($i, "="); if (substr($i, 1, n - 1) == k)
		v = substr($i, n + 1) } } END { print v }' "$2"
}

# bench_tmp NAME: the private directory T (TMPDIR, default /tmp) with the
# private tracerd's socket in it, and the libtracer of this build for a
# benchmark built by hand (see bench.am). The caller traps its cleanup.
bench_tmp() {
	export LD_LIBRARY_PATH=$PWD/libtracer/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	export TRACER_SOCKET=$T/sock
}

# The machine line every table starts with: CPUs, model, clock source,
# load.
machine_line() {
	echo "$(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo |
		head -n 1), clock source $(cat \
		/sys/devices/system/clocksource/clocksource0/current_clocksource \
		2>/dev/null); load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
}
