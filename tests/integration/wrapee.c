/*
 * wrapee - an uninstrumented program (no <tracer.h>, not linked with
 * libtracer) that makes the C library calls libtracer wraps, for
 * test_wrap_io.sh, which runs it with and without LD_PRELOAD=libtracer.so.
 *
 *   wrapee io DIR       every file, socket and polling call once, the
 *                       failing ones too; checks errno across each
 *   wrapee mem N        N malloc/free pairs of sizes 1..N, then calloc,
 *                       realloc, posix_memalign, aligned_alloc, memalign,
 *                       mmap, munmap
 *   wrapee storm N      the main thread writes N records through a pipe
 *                       while another thread sends it SIGUSR1 as fast as
 *                       it can; the handler itself writes and allocates
 *   wrapee closeall F   a daemon's start: close every descriptor, setsid,
 *                       then copy F to standard output
 *
 * Standard output is the same traced or not (it names no descriptor
 * numbers and no addresses); "report" lines on standard error give the
 * values the test looks for in the trace.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static int failures;

/* errno must be what the call left: set a marker a successful call keeps. */
#define MARK	12345

static void expect(int cond, const char *what)
{
	printf("%s %s\n", what, cond ? "ok" : "FAILED");
	if (!cond)
		failures++;
}

static void report(const char *what, long long v)
{
	fprintf(stderr, "report %s %lld\n", what, v);
}

static void files(const char *dir)
{
	char path[4096], path2[4096], buf[64];
	struct iovec iov[2] = { { buf, 10 }, { buf + 10, 20 } };
	int fd, fd2, dfd, r;

	snprintf(path, sizeof(path), "%s/a.txt", dir);
	snprintf(path2, sizeof(path2), "%s/b.txt", dir);
	errno = MARK;
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0640);
	expect(fd >= 0 && errno == MARK, "open creates, errno kept");
	report("open_fd", fd);
	errno = MARK;
	expect(write(fd, "hello, world, this is wrapee\n", 29) == 29 &&
	       errno == MARK, "write 29, errno kept");
	expect(pwrite(fd, "HELLO", 5, 0) == 5, "pwrite 5");
	expect(lseek(fd, 0, SEEK_SET) == 0, "lseek 0");
	expect(read(fd, buf, 7) == 7 && memcmp(buf, "HELLO, ", 7) == 0,
	       "read 7");
	expect(pread(fd, buf, 5, 7) == 5 && memcmp(buf, "world", 5) == 0,
	       "pread 5");
	expect(lseek(fd, 0, SEEK_SET) == 0, "lseek back");
	expect(readv(fd, iov, 2) == 29, "readv 29 of 30");
	expect(writev(fd, iov, 1) == 10, "writev 10");
	expect(fsync(fd) == 0 && fdatasync(fd) == 0, "fsync, fdatasync");
	fd2 = dup(fd);
	expect(fd2 >= 0, "dup");
	expect(dup2(fd, fd2) == fd2, "dup2");
	expect(dup3(fd, fd2, O_CLOEXEC) == fd2, "dup3");
	expect(close(fd2) == 0, "close the copy");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fd2 = openat(dfd, "b.txt", O_CREAT | O_WRONLY, 0600);
	expect(fd2 >= 0, "openat");
	report("openat_fd", fd2);
	expect(sendfile(fd2, fd, &(off_t){ 0 }, 10) == 10, "sendfile 10");
	close(fd2);
	close(dfd);
	fd2 = creat(path2, 0600);
	expect(fd2 >= 0, "creat");
	expect(copy_file_range(fd, &(off_t){ 0 }, fd2, NULL, 12, 0) == 12,
	       "copy_file_range 12");
	close(fd2);
	expect(close(fd) == 0, "close");

	errno = 0;
	r = open("/nonexistent/wrapee", O_RDONLY);
	expect(r == -1 && errno == ENOENT, "open of a missing file: ENOENT");
	errno = 0;
	expect(read(-1, buf, 1) == -1 && errno == EBADF, "read -1: EBADF");
	errno = 0;
	expect(close(-1) == -1 && errno == EBADF, "close -1: EBADF");
}

static void pipes(void)
{
	int p[2], q[2], ep;
	char c = 'x';
	struct pollfd pf;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	fd_set rs;
	struct timeval tv = { 0, 0 };

	expect(pipe(p) == 0, "pipe");
	expect(pipe2(q, O_CLOEXEC) == 0, "pipe2");
	report("pipe_read", p[0]);
	report("pipe_write", p[1]);
	expect(write(p[1], &c, 1) == 1, "write to the pipe");
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	expect(poll(&pf, 1, -1) == 1, "poll: readable");
	expect(ppoll(&pf, 1, NULL, NULL) == 1, "ppoll: readable");
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	expect(select(p[0] + 1, &rs, NULL, NULL, &tv) == 1, "select");
	FD_SET(p[0], &rs);
	expect(pselect(p[0] + 1, &rs, NULL, NULL, NULL, NULL) == 1,
	       "pselect");
	ep = epoll_create1(0);
	ev.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	expect(epoll_wait(ep, &out, 1, -1) == 1, "epoll_wait");
	expect(epoll_pwait(ep, &out, 1, -1, NULL) == 1, "epoll_pwait");
	expect(splice(p[0], NULL, q[1], NULL, 1, 0) == 1, "splice");
	close(ep);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static void unix_sockets(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[16];
	struct iovec iov = { buf, 5 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int l, c, a;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	expect(l >= 0, "socket");
	expect(bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind");
	expect(listen(l, 4) == 0, "listen");
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	expect(connect(c, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	       "connect");
	a = accept(l, NULL, NULL);
	expect(a >= 0, "accept");
	expect(send(c, "ping!", 5, 0) == 5, "send");
	expect(recv(a, buf, 5, 0) == 5, "recv");
	expect(sendmsg(a, &m, 0) == 5, "sendmsg");
	expect(recvmsg(c, &m, 0) == 5, "recvmsg");
	close(a);
	close(c);
	close(l);
	sa.sun_path[0] = '\0';
	strcpy(sa.sun_path + 1, "nowhere");
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	errno = 0;
	expect(connect(c, (struct sockaddr *)&sa, sizeof(sa)) == -1 &&
	       errno == ECONNREFUSED, "connect to nobody: ECONNREFUSED");
	close(c);
}

static void inet_sockets(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET }, from;
	socklen_t len = sizeof(sa);
	char buf[8];
	int s, r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	expect(bind(r, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	       "bind udp");
	getsockname(r, (struct sockaddr *)&sa, &len);
	report("udp_port", ntohs(sa.sin_port));
	expect(sendto(s, "dgram", 5, 0, (struct sockaddr *)&sa,
		      sizeof(sa)) == 5, "sendto");
	len = sizeof(from);
	expect(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			&len) == 5, "recvfrom");
	close(s);
	close(r);
}

static int io(const char *dir)
{
	files(dir);
	pipes();
	unix_sockets(dir);
	inet_sockets();
	return failures != 0;
}

static int mem(long n)
{
	long i;
	void *p, *q;

	for (i = 1; i <= n; i++) {
		p = malloc((size_t)i);
		if (!p)
			return 1;
		fprintf(stderr, "report malloc %ld %p\n", i, p);
		*(volatile char *)p = 1;
		free(p);
	}
	p = calloc(3, 100);
	fprintf(stderr, "report calloc %p\n", p);
	fprintf(stderr, "report realloc %p", p);
	q = realloc(p, 1000);
	fprintf(stderr, " %p\n", q);
	free(q);
	expect(posix_memalign(&p, 64, 100) == 0 && ((uintptr_t)p & 63) == 0,
	       "posix_memalign 64");
	free(p);
	p = aligned_alloc(128, 256);
	expect(p && ((uintptr_t)p & 127) == 0, "aligned_alloc 128");
	free(p);
	p = memalign(256, 10);
	expect(p && ((uintptr_t)p & 255) == 0, "memalign 256");
	free(p);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	expect(p != MAP_FAILED, "mmap 8192");
	fprintf(stderr, "report mmap %p\n", p);
	expect(munmap(p, 8192) == 0, "munmap");
	errno = 0;
	p = malloc(SIZE_MAX / 2);
	expect(!p && errno == ENOMEM, "malloc too much: ENOMEM");
	return failures != 0;
}

/* ---- storm ------------------------------------------------------------ */

static int storm_pipe[2], handler_pipe[2];
static volatile sig_atomic_t handled, stop;

static void on_usr1(int sig)
{
	int saved = errno;
	void *p = malloc(32);

	(void)sig;
	if (write(handler_pipe[1], "h", 1) == 1)
		handled++;
	free(p);
	errno = saved;
}

static void *storm_sender(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;

	while (!stop)
		pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void *storm_reader(void *arg)
{
	long *got = arg;
	char buf[4096];
	ssize_t n;

	while ((n = read(storm_pipe[0], buf, sizeof(buf))) != 0)
		if (n > 0)
			*got += n;
	return NULL;
}

static int storm(long n)
{
	pthread_t self = pthread_self(), sender, reader;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long i, got = 0;
	char rec[24];

	if (pipe(storm_pipe) || pipe2(handler_pipe, O_NONBLOCK))
		return 1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&reader, NULL, storm_reader, &got);
	pthread_create(&sender, NULL, storm_sender, &self);
	for (i = 0; i < n; i++) {
		snprintf(rec, sizeof(rec), "%015ld", i);
		if (write(storm_pipe[1], rec, 16) != 16) {
			perror("wrapee: write");
			return 1;
		}
	}
	stop = 1;
	pthread_join(sender, NULL);
	close(storm_pipe[1]);
	pthread_join(reader, NULL);
	printf("storm wrote %ld bytes, read %ld\n", n * 16, got);
	fprintf(stderr, "report handled %ld\n", (long)handled);
	fprintf(stderr, "report storm_fd %d\n", storm_pipe[1]);
	return got != n * 16;
}

/* A daemon's start: every descriptor closed, a new session. */
static int closeall(const char *file)
{
	char buf[4096];
	ssize_t n;
	int fd, out;

	out = dup(1);
	for (fd = 0; fd < 1024; fd++)
		if (fd != out)
			close(fd);
	if (setsid() < 0)
		return 1;
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return 1;
	return n != 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "io"))
		return io(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "mem"))
		return mem(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "storm"))
		return storm(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "closeall"))
		return closeall(argv[2]);
	fprintf(stderr, "usage: wrapee io DIR | mem N | storm N | "
		"closeall FILE\n");
	return 2;
}
