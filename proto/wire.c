/*
 * wire.c - frames on tracerd's Unix socket: encode, decode, and the
 * blocking send/receive used by clients. tracerd reads frames itself,
 * without blocking, and uses the encode/decode halves (tracerd/client.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

struct wire_header {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint32_t length;
};

_Static_assert(sizeof(struct wire_header) == TRACER_WIRE_HEADER,
	       "frame header size");

static int fail(const char **why, const char *msg, int err)
{
	if (why)
		*why = msg;
	return err;
}

void tracer__wire_header(void *hdr, uint32_t len)
{
	struct wire_header h = {
		.magic = TRACER_WIRE_MAGIC,
		.version = TRACER_WIRE_VERSION,
		.flags = 0,
		.length = len,
	};

	memcpy(hdr, &h, sizeof(h));
}

int tracer__wire_check_header(const void *hdr, uint32_t *len,
			      const char **why)
{
	struct wire_header h;

	memcpy(&h, hdr, sizeof(h));
	if (h.magic != TRACER_WIRE_MAGIC)
		return fail(why, "not a tracer frame (bad magic)", -EBADMSG);
	if (h.version != TRACER_WIRE_VERSION)
		return fail(why, "unsupported protocol version",
			    -EPROTONOSUPPORT);
	if (h.flags != 0)
		return fail(why, "unknown frame flags", -EBADMSG);
	if (h.length > TRACER_WIRE_MAX)
		return fail(why, "frame larger than 1 MiB", -EMSGSIZE);
	*len = h.length;
	return 0;
}

/* A frame for a message of len bytes, its header written; *size set.
 * Returns it or NULL (errno: EMSGSIZE, ENOMEM). */
static uint8_t *new_frame(size_t len, size_t *size)
{
	uint8_t *buf;

	if (len > TRACER_WIRE_MAX) {
		errno = EMSGSIZE;
		return NULL;
	}
	buf = malloc(TRACER_WIRE_HEADER + len);
	if (!buf)
		return NULL;
	tracer__wire_header(buf, (uint32_t)len);
	*size = TRACER_WIRE_HEADER + len;
	return buf;
}

int tracer__wire_pack(const tracer_msg *msg, void **frame, size_t *size)
{
	uint8_t *buf = new_frame(tracer__message__get_packed_size(msg), size);

	if (!buf)
		return -errno;
	tracer__message__pack(msg, buf + TRACER_WIRE_HEADER);
	*frame = buf;
	return 0;
}

/* ---- CallSites, encoded directly ---------------------------------------- */

/*
 * Protocol Buffers wire format (tag = field << 3 | wire type; varints;
 * wire type 2 is a length-delimited field), for the message every program
 * sends at its start: the generic packer walks the descriptors twice per
 * field and costs several times more. Fields at their default value are
 * left out, as protobuf-c's proto3 packer does.
 */
enum { WT_VARINT = 0, WT_LEN = 2 };

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The lengths of a call site's strings, each measured once. */
struct site_lens {
	size_t types, file, name, format;
	size_t one;	/* the encoded CallSite */
};

static size_t slen(const char *s)
{
	return s ? strlen(s) : 0;
}

static size_t str_len(size_t n)
{
	return n ? 1 + varint_len(n) + n : 0;
}

static uint8_t *put_str(uint8_t *p, unsigned field, const char *s, size_t n)
{
	if (!n)
		return p;
	*p++ = (uint8_t)(field << 3 | WT_LEN);
	p = put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

static size_t site_len(const struct tracer_wire_site *s,
		       struct site_lens *l)
{
	l->types = slen(s->types);
	l->file = slen(s->file);
	l->name = slen(s->name);
	l->format = slen(s->format);
	l->one = (s->id ? 1 + varint_len(s->id) : 0) + (s->vital ? 2 : 0) +
		 str_len(l->types) + (s->line ? 1 + varint_len(s->line) : 0) +
		 str_len(l->file) + str_len(l->name) + str_len(l->format);
	return l->one;
}

/* CallSite fields 1..7 (tracer.proto). */
static uint8_t *put_site(uint8_t *p, const struct tracer_wire_site *s,
			 const struct site_lens *l)
{
	if (s->id) {
		*p++ = 1 << 3 | WT_VARINT;
		p = put_varint(p, s->id);
	}
	if (s->vital) {
		*p++ = 2 << 3 | WT_VARINT;
		*p++ = 1;
	}
	p = put_str(p, 3, s->types, l->types);
	if (s->line) {
		*p++ = 4 << 3 | WT_VARINT;
		p = put_varint(p, s->line);
	}
	p = put_str(p, 5, s->file, l->file);
	p = put_str(p, 6, s->name, l->name);
	return put_str(p, 7, s->format, l->format);
}

int tracer__wire_pack_sites(const struct tracer_wire_site *sites, size_t n,
			    void **frame, size_t *size)
{
	struct site_lens *lens = malloc((n ? n : 1) * sizeof(*lens));
	size_t inner = 0, len, i;
	uint8_t *buf, *p;

	if (!lens)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t one = site_len(&sites[i], &lens[i]);

		inner += 1 + varint_len(one) + one;	/* CallSites.sites */
	}
	len = 1 + varint_len(inner) + inner;	/* Message.call_sites = 4 */
	buf = new_frame(len, size);
	if (!buf) {
		int err = errno;

		free(lens);
		return -err;
	}
	p = buf + TRACER_WIRE_HEADER;
	*p++ = 4 << 3 | WT_LEN;
	p = put_varint(p, inner);
	for (i = 0; i < n; i++) {
		*p++ = 1 << 3 | WT_LEN;
		p = put_varint(p, lens[i].one);
		p = put_site(p, &sites[i], &lens[i]);
	}
	free(lens);
	*frame = buf;
	return 0;
}

int tracer__wire_unpack(const void *body, size_t len, tracer_msg **msg,
			const char **why)
{
	*msg = tracer__message__unpack(NULL, len, body);
	if (!*msg)
		return fail(why, "message does not decode", -EBADMSG);
	return 0;
}

void tracer__wire_free(tracer_msg *msg)
{
	if (msg)
		tracer__message__free_unpacked(msg, NULL);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline (-1: none). Returns 0 or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int left = -1, n;

	if (deadline >= 0) {
		int64_t d = deadline - now_ms();

		left = d < 0 ? 0 : (int)d;
	}
	n = poll(&p, 1, left);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

int tracer__wire_connect(const char *path, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	int fd, ret;

	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

ssize_t tracer__wire_sendmsg(int fd, const void *buf, size_t len,
			     const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * TRACER_WIRE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds < 0 || nfds > TRACER_WIRE_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	return n < 0 ? -errno : n;
}

int tracer__wire_send(int fd, const tracer_msg *msg, const int *fds, int nfds,
		      int timeout_ms)
{
	int64_t deadline = deadline_of(timeout_ms);
	size_t size, done = 0;
	void *frame;
	int ret;

	if (nfds < 0 || nfds > TRACER_WIRE_MAX_FDS)
		return -EINVAL;
	ret = tracer__wire_pack(msg, &frame, &size);
	if (ret)
		return ret;
	while (done < size) {
		ssize_t n = tracer__wire_sendmsg(fd, (char *)frame + done,
						 size - done, done ? NULL : fds,
						 done ? 0 : nfds);

		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (n != -EAGAIN && n != -EINTR) {
			ret = (int)n;
			break;
		}
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret)
			break;
	}
	free(frame);
	return done == size ? 0 : ret;
}

/* Keep the descriptors of one control message, or close them. */
static void take_fds(struct msghdr *mh, int *fds, int *nfds)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t i, n;
		int one;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
			if (fds && *nfds < TRACER_WIRE_MAX_FDS)
				fds[(*nfds)++] = one;
			else
				close(one);
		}
	}
}

/* Read exactly n bytes into p, collecting descriptors. */
static int recv_exact(int fd, char *p, size_t n, int *fds, int *nfds,
		      int64_t deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * TRACER_WIRE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	size_t done = 0;

	while (done < n) {
		struct iovec iov = { .iov_base = p + done,
				     .iov_len = n - done };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		ssize_t got = recvmsg(fd, &mh, MSG_DONTWAIT |
				      MSG_CMSG_CLOEXEC);
		int ret;

		if (got > 0) {
			take_fds(&mh, fds, nfds);
			done += (size_t)got;
			continue;
		}
		if (got == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

static void close_fds(int *fds, int *nfds)
{
	while (fds && *nfds > 0)
		close(fds[--*nfds]);
}

int tracer__wire_recv(int fd, tracer_msg **msg, int *fds, int *nfds,
		      int timeout_ms, const char **why)
{
	int64_t deadline = deadline_of(timeout_ms);
	char hdr[TRACER_WIRE_HEADER];
	uint32_t len;
	char *body;
	int ret, local = 0;

	if (!nfds)
		nfds = &local;
	*nfds = 0;
	ret = recv_exact(fd, hdr, sizeof(hdr), fds, nfds, deadline);
	if (!ret)
		ret = tracer__wire_check_header(hdr, &len, why);
	if (ret)
		goto fail;
	body = malloc(len ? len : 1);
	if (!body) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = recv_exact(fd, body, len, fds, nfds, deadline);
	if (!ret)
		ret = tracer__wire_unpack(body, len, msg, why);
	free(body);
	if (!ret)
		return 0;
fail:
	close_fds(fds, nfds);
	return ret;
}
