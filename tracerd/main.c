/*
 * main.c - tracerd: options, the socket and output locations, running in
 * the foreground or as a daemon, clean shutdown on SIGTERM/SIGINT.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>
#include <unistd.h>

#include "paths.h"
#include "tracerd.h"
#include "relay.h"
#include "spill.h"

static bool use_syslog;
static bool detached;
static FILE *log_file;

/* One line in one write: "tracerd: " MESSAGE "\n", cut at 1 KiB. */
static size_t log_line(char *buf, size_t size, const char *fmt, va_list ap)
{
	static const char prefix[] = "tracerd: ";
	size_t n = sizeof(prefix) - 1;
	int m;

	memcpy(buf, prefix, n);
	m = vsnprintf(buf + n, size - n - 1, fmt, ap);
	if (m > 0)
		n += (size_t)m < size - n - 1 ? (size_t)m : size - n - 2;
	buf[n++] = '\n';
	return n;
}

void tracerd_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	if (use_syslog && !(log_file && detached)) {
		va_list copy;

		va_copy(copy, ap);
		vsyslog(LOG_INFO, fmt, copy);
		va_end(copy);
	}
	n = log_line(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_file) {
		fwrite(line, 1, n, log_file);
		fflush(log_file);
		if (detached)
			return;
	}
	if (!use_syslog)
		fwrite(line, 1, n, stderr);
}

static void usage(FILE *f)
{
	fputs("usage: tracerd [--socket PATH] [--output DIR] [--daemonize]\n"
	      "               [--buffers N] [--max-memory SIZE]\n"
	      "               [--max-total-memory SIZE] [--max-site-memory SIZE]\n"
	      "               [--max-total-site-memory SIZE] [--max-clients N]\n"
	      "               [--max-clients-per-user N] [--silent-timeout MS]\n"
	      "               [--subbuf-size SIZE] [--subbuf-count N]\n"
	      "               [--scan-ms MS] [--log FILE] [--ready-fd FD]\n"
	      "               [--world-readable] [--no-start-pools]\n"
	      "               [--clock auto|tsc|monotonic] [--nice N]\n"
	      "               [--relay net://HOST[:CTRL[:DATA]]]"
	      " [--relay-backlog SIZE]\n", f);
}

/* "64K", "4M", "1G" or plain bytes. Returns 0 or -EINVAL. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (*s < '0' || *s > '9')	/* no sign, no blanks */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && *end == 'i' && end[1] == 'B')
		end += 2;
	else if (shift && *end == 'B')
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int bad_option(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "tracerd: invalid %s '%s': %s\n", opt, val, why);
	usage(stderr);
	return 2;
}

/* auto, tsc or monotonic into *clock. Returns 0 or 2 (a bad value). */
static int parse_clock(const char *opt, const char *arg, int *clock)
{
	static const char *const names[] = { "auto", "tsc", "monotonic" };
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(arg, names[i]) == 0) {
			*clock = i;	/* TRACERD_CLOCK_*, in this order */
			return 0;
		}
	return bad_option(opt, arg, "not auto, tsc nor monotonic");
}

/* A number (sizes may take a K, M or G suffix) within [min, max]. */
static int parse_number(const char *opt, const char *val, uint64_t min,
			uint64_t max, uint64_t *out, bool size)
{
	char why[64], *end;
	bool bad;

	if (size) {
		bad = parse_size(val, out) != 0;
	} else {
		errno = 0;
		*out = strtoull(val, &end, 10);
		bad = *val < '0' || *val > '9' || errno || *end;
	}
	if (bad || *out < min || *out > max) {
		snprintf(why, sizeof(why), "expected a %s from %llu to %llu",
			 size ? "size" : "number", (unsigned long long)min,
			 (unsigned long long)max);
		return bad_option(opt, val, why);
	}
	return 0;
}

/* --nice: -20 to 19, signed. Returns 0 or 2 (told). */
static int parse_nice(const char *val, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < -20 || v > 19)
		return bad_option("--nice", val,
				  "expected a number from -20 to 19");
	*out = (int)v;
	return 0;
}

struct options {
	char socket[TRACER_PATH_MAX];
	char output[PATH_MAX];
	bool daemonize;
	int ready_fd;			/* --ready-fd, -1: none */
	int nice;			/* --nice, 0: left as it is */
};

/* --relay: the sessions' default relay ("none": none). */
static int parse_relay(const char *s, const char **out)
{
	char why[300];

	if (strcmp(s, "none") && tracerd_relay_check_url(s, why, sizeof(why)))
		return bad_option("--relay", s, "not net://HOST[:CONTROL_PORT"
				  "[:DATA_PORT]]");
	*out = strcmp(s, "none") ? s : NULL;
	return 0;
}

static int parse_args(int argc, char **argv, struct tracerd_config *cfg,
		      struct options *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "daemonize", no_argument, NULL, 'd' },
		{ "buffers", required_argument, NULL, 'b' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "max-total-memory", required_argument, NULL, 'M' },
		{ "max-site-memory", required_argument, NULL, 'c' },
		{ "max-total-site-memory", required_argument, NULL, 'C' },
		{ "max-clients", required_argument, NULL, 'k' },
		{ "max-clients-per-user", required_argument, NULL, 'u' },
		{ "silent-timeout", required_argument, NULL, 'i' },
		{ "subbuf-size", required_argument, NULL, 'S' },
		{ "subbuf-count", required_argument, NULL, 'N' },
		{ "scan-ms", required_argument, NULL, 't' },
		{ "log", required_argument, NULL, 'l' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "world-readable", no_argument, NULL, 'w' },
		{ "no-start-pools", no_argument, NULL, 'P' },
		{ "nice", required_argument, NULL, 'n' },
		{ "clock", required_argument, NULL, 'K' },
		{ "relay", required_argument, NULL, 'R' },
		{ "relay-backlog", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *clock = getenv("TRACER_CLOCK");
	uint64_t v;
	int ch, ret = 0;

	/* The environment's clock, unless --clock says otherwise. */
	if (clock && *clock)
		ret = parse_clock("TRACER_CLOCK", clock, &cfg->clock);
	opterr = 0;
	while (!ret && (ch = getopt_long(argc, argv, ":h", longopts,
					 NULL)) != -1) {
		switch (ch) {
		case 's':
			if (strlen(optarg) >= sizeof(o->socket))
				return bad_option("--socket", optarg,
						  "longer than 107 bytes");
			strcpy(o->socket, optarg);
			break;
		case 'o':
			snprintf(o->output, sizeof(o->output), "%s", optarg);
			break;
		case 'w':
			cfg->world_readable = true;
			break;
		case 'P':
			cfg->no_start_pools = true;
			break;
		case 'n':
			ret = parse_nice(optarg, &o->nice);
			break;
		case 'K':
			ret = parse_clock("--clock", optarg, &cfg->clock);
			break;
		case 'R':
			ret = parse_relay(optarg, &cfg->relay);
			break;
		case 'B':
			ret = parse_number("--relay-backlog", optarg, 1 << 20,
					   UINT64_MAX, &cfg->relay_backlog,
					   true);
			break;
		case 'd':
			o->daemonize = true;
			break;
		case 'b':
			ret = parse_number("--buffers", optarg, 1, 65536, &v,
					   false);
			cfg->buffers = (uint32_t)v;
			break;
		case 'm':
			ret = parse_number("--max-memory", optarg, 1 << 20,
					   UINT64_MAX, &cfg->max_memory, true);
			break;
		case 'M':
			ret = parse_number("--max-total-memory", optarg,
					   1 << 20, UINT64_MAX,
					   &cfg->max_total_memory, true);
			break;
		case 'c':
			ret = parse_number("--max-site-memory", optarg,
					   64 << 10, UINT64_MAX,
					   &cfg->max_site_memory, true);
			break;
		case 'C':
			ret = parse_number("--max-total-site-memory", optarg,
					   64 << 10, UINT64_MAX,
					   &cfg->max_total_site_memory, true);
			break;
		case 'k':
			ret = parse_number("--max-clients", optarg, 2, 1 << 20,
					   &v, false);
			cfg->max_clients = (uint32_t)v;
			break;
		case 'u':
			ret = parse_number("--max-clients-per-user", optarg, 1,
					   1 << 20, &v, false);
			cfg->max_clients_per_user = (uint32_t)v;
			break;
		case 'i':
			ret = parse_number("--silent-timeout", optarg, 100,
					   3600000, &v, false);
			cfg->silent_ms = (uint32_t)v;
			break;
		case 'S':
			ret = parse_number("--subbuf-size", optarg, 4096,
					   1 << 30, &cfg->subbuf_size[0],
					   true);
			break;
		case 'N':
			ret = parse_number("--subbuf-count", optarg, 2, 65536,
					   &cfg->subbuf_count[0], false);
			break;
		case 't':
			ret = parse_number("--scan-ms", optarg, 1, 60000, &v,
					   false);
			cfg->scan_ms = (uint32_t)v;
			break;
		case 'r':
			ret = parse_number("--ready-fd", optarg, 0, INT_MAX, &v,
					   false);
			o->ready_fd = (int)v;
			break;
		case 'l':
			log_file = fopen(optarg, "ae");
			if (!log_file) {
				fprintf(stderr, "tracerd: cannot open log "
					"'%s': %s\n", optarg, strerror(errno));
				return 1;
			}
			setvbuf(log_file, NULL, _IOLBF, 0);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("tracerd %s\n", PACKAGE_VERSION);
			exit(0);
		case ':':
			fprintf(stderr, "tracerd: option '%s' needs a value\n",
				argv[optind - 1]);
			usage(stderr);
			return 2;
		default:
			fprintf(stderr, "tracerd: unknown option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (!ret && optind < argc) {
		fprintf(stderr, "tracerd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	return ret;
}

/* Refuse a channel geometry the ring buffer would refuse, up front. */
static int check_geometry(const struct tracerd_config *cfg)
{
	struct tracer_rb_geometry g;
	const char *why;

	if (tracer__rb_geometry(&g, cfg->subbuf_size[0], cfg->subbuf_count[0],
				&why)) {
		fprintf(stderr, "tracerd: invalid --subbuf-size/--subbuf-count"
			" (%llu x %llu): %s\n",
			(unsigned long long)cfg->subbuf_size[0],
			(unsigned long long)cfg->subbuf_count[0], why);
		return 2;
	}
	if (g.region_size > (1ULL << 31)) {
		fprintf(stderr, "tracerd: --subbuf-size x --subbuf-count is more"
			" than 2 GiB per thread\n");
		return 2;
	}
	if (cfg->max_memory < 2 * g.region_size + (2ULL << 20)) {
		fprintf(stderr, "tracerd: --max-memory %llu cannot hold even one"
			" buffer of this size\n",
			(unsigned long long)cfg->max_memory);
		return 2;
	}
	if (cfg->max_total_memory < 2 * g.region_size + (2ULL << 20)) {
		fprintf(stderr, "tracerd: --max-total-memory %llu cannot hold "
			"even one buffer of this size\n",
			(unsigned long long)cfg->max_total_memory);
		return 2;
	}
	return 0;
}

/* Socket and output paths: options, then environment, then defaults. */
static int resolve_paths(struct options *o)
{
	char cwd[PATH_MAX], out[PATH_MAX];

	if (!o->socket[0] && tracer__socket_path(o->socket,
						 sizeof(o->socket))) {
		fprintf(stderr, "tracerd: socket path from $%s is too long\n",
			TRACER_SOCKET_ENV);
		return 1;
	}
	if (!o->output[0] && tracer__default_output(o->output,
						    sizeof(o->output))) {
		fprintf(stderr, "tracerd: no default output directory "
			"($HOME is not set): use --output\n");
		return 1;
	}
	if (o->socket[0] != '/') {	/* the daemon changes to / */
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(out, sizeof(out), "%s/%s", cwd, o->socket) >=
		    (int)sizeof(o->socket)) {
			fprintf(stderr, "tracerd: socket path too long\n");
			return 1;
		}
		strcpy(o->socket, out);
	}
	if (o->output[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(out, sizeof(out), "%s/%s", cwd, o->output) >=
		    (int)sizeof(out)) {
			fprintf(stderr, "tracerd: output path too long\n");
			return 1;
		}
		strcpy(o->output, out);
	}
	return 0;
}

/*
 * --daemonize: the parent waits until the child listens (or failed), so
 * that `tracerd --daemonize && tracectl start` works. Returns in the child
 * with the write end of the readiness pipe.
 */
static int daemonize(void)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe2(pipefd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "tracerd: cannot daemonize: %s\n",
			strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(pipefd[1]);
		exit(read(pipefd[0], &c, 1) == 1 && c == 'y' ? 0 : 1);
	}
	close(pipefd[0]);
	setsid();
	return pipefd[1];
}

static void detach(int ready_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	detached = true;
	use_syslog = !log_file;
	if (use_syslog)
		openlog("tracerd", LOG_PID, LOG_DAEMON);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
	if (chdir("/") < 0)
		(void)0;
	if (write(ready_fd, "y", 1) < 0)
		(void)0;
	close(ready_fd);
}

/* --ready-fd: one byte once tracerd listens, for whoever started it. */
static void signal_ready(int fd)
{
	if (write(fd, "y", 1) < 0)
		tracerd_log("--ready-fd %d: %s", fd, strerror(errno));
	close(fd);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	static struct tracerd d;
	struct options o = { .daemonize = false, .ready_fd = -1,
			     .nice = -10 };
	int ret, ready_fd = -1, prio;
	const char *spill_env;

	tracerd_config_defaults(&d.cfg);
	ret = parse_args(argc, argv, &d.cfg, &o);
	if (!ret)
		ret = check_geometry(&d.cfg);
	if (!ret)
		ret = resolve_paths(&o);
	if (ret)
		return ret;
	d.cfg.socket_path = o.socket;
	d.cfg.output_dir = o.output;
	/* Traces hold the programs' arguments, paths and data: the owner's
	 * (and, for root, the tracing group's: session.c), unless asked. */
	umask(d.cfg.world_readable ? 022 : geteuid() == 0 ? 027 : 077);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (o.daemonize)
		ready_fd = daemonize();
	prio = tracerd_priority_init(&d, o.nice);  /* in its own session */
	spill_env = getenv("TRACERD_SPILL_ALWAYS");	/* tests: tracerd(8) */
	d.spill.always = spill_env && strcmp(spill_env, "1") == 0;
	if (tracerd_open(&d, uv_default_loop(), true))
		return 1;
	if (ready_fd >= 0)
		detach(ready_fd);
	if (o.ready_fd >= 0)
		signal_ready(o.ready_fd);
	tracerd_log("listening on '%s', writing to '%s'", o.socket, o.output);
	if (prio)
		tracerd_log("cannot raise its priority to nice %d: %s; writers "
			    "that keep every CPU busy may lose events "
			    "(tracerd(8), --nice)", o.nice, strerror(-prio));
	uv_run(d.loop, UV_RUN_DEFAULT);
	tracerd_close(&d);
	tracerd_log("exited cleanly");
	return 0;
}
