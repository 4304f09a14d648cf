/*
 * wrap_net.c - socket options, socket pairs, epoll registrations and name
 * lookups, recorded as libc:* events (wrap.h explains the wrappers,
 * wrap_io.c the events' shape):
 *
 *   libc:socketpair  domain 1 type 0x1 protocol 0 fds 3 4 result 0
 *   libc:setsockopt  fd 3 level 6 optname 1 option TCP_NODELAY optlen 4
 *                    value 1 result 0
 *   libc:epoll_ctl   epfd 5 op ADD fd 3 events 0x1 result 0
 *   libc:getaddrinfo_entry  node localhost service http
 *   libc:getaddrinfo_exit   result 0 error - addr 127.0.0.1:80
 *
 * Option values are recorded as an int when the option's length is that
 * of an int (most are), 0 otherwise. getaddrinfo() can wait for DNS: an
 * entry/exit pair; its error is the EAI_* name from a table of ours
 * (gai_strerror() may allocate and translate), and the first address of
 * the answer is shown like the other socket addresses.
 *
 * The C library's own calls inside getaddrinfo() (opening /etc/hosts, the
 * DNS socket ...) are the program's too: recorded when they go through
 * the wrappers (the name service modules call them so; libc's internal
 * calls do not).
 */
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "wrap.h"

/* A string argument that may be NULL, as recorded. */
#define STR(s)	((s) ? (s) : "-")

/* ---- socketpair ----------------------------------------------------- */

IO_CALL(int, socketpair, (int domain, int type, int protocol, int fds[2]),
	(domain, type, protocol, fds),
	"domain %d type %#x protocol %d fds %d %d result %d",
	(domain, type, protocol, ret ? -1 : fds[0], ret ? -1 : fds[1], ret),
	ret < 0)

/* ---- socket options ------------------------------------------------- */

struct opt_name {
	int level;
	int optname;
	const char *name;
};

/* The common options by name (a table: some share a number per arch). */
#define OPT(level, name)	{ level, name, #name }
static const struct opt_name opt_names[] = {
	OPT(SOL_SOCKET, SO_DEBUG),
	OPT(SOL_SOCKET, SO_REUSEADDR),
	OPT(SOL_SOCKET, SO_TYPE),
	OPT(SOL_SOCKET, SO_ERROR),
	OPT(SOL_SOCKET, SO_DONTROUTE),
	OPT(SOL_SOCKET, SO_BROADCAST),
	OPT(SOL_SOCKET, SO_SNDBUF),
	OPT(SOL_SOCKET, SO_RCVBUF),
	OPT(SOL_SOCKET, SO_SNDBUFFORCE),
	OPT(SOL_SOCKET, SO_RCVBUFFORCE),
	OPT(SOL_SOCKET, SO_KEEPALIVE),
	OPT(SOL_SOCKET, SO_OOBINLINE),
	OPT(SOL_SOCKET, SO_PRIORITY),
	OPT(SOL_SOCKET, SO_LINGER),
	OPT(SOL_SOCKET, SO_REUSEPORT),
	OPT(SOL_SOCKET, SO_PASSCRED),
	OPT(SOL_SOCKET, SO_PEERCRED),
	OPT(SOL_SOCKET, SO_RCVLOWAT),
	OPT(SOL_SOCKET, SO_SNDLOWAT),
	OPT(SOL_SOCKET, SO_RCVTIMEO),
	OPT(SOL_SOCKET, SO_SNDTIMEO),
	OPT(SOL_SOCKET, SO_BINDTODEVICE),
	OPT(SOL_SOCKET, SO_ACCEPTCONN),
	OPT(SOL_SOCKET, SO_PROTOCOL),
	OPT(SOL_SOCKET, SO_DOMAIN),
	OPT(SOL_SOCKET, SO_MARK),
	OPT(IPPROTO_TCP, TCP_NODELAY),
	OPT(IPPROTO_TCP, TCP_MAXSEG),
	OPT(IPPROTO_TCP, TCP_CORK),
	OPT(IPPROTO_TCP, TCP_KEEPIDLE),
	OPT(IPPROTO_TCP, TCP_KEEPINTVL),
	OPT(IPPROTO_TCP, TCP_KEEPCNT),
	OPT(IPPROTO_TCP, TCP_LINGER2),
	OPT(IPPROTO_TCP, TCP_DEFER_ACCEPT),
	OPT(IPPROTO_TCP, TCP_INFO),
	OPT(IPPROTO_TCP, TCP_QUICKACK),
	OPT(IPPROTO_TCP, TCP_CONGESTION),
	OPT(IPPROTO_TCP, TCP_USER_TIMEOUT),
	OPT(IPPROTO_TCP, TCP_FASTOPEN),
	OPT(IPPROTO_TCP, TCP_NOTSENT_LOWAT),
};
#undef OPT

/* The option's name ("SO_REUSEADDR", "TCP_NODELAY"), "-" when unknown. */
static const char *opt_name(int level, int optname)
{
	size_t i;

	for (i = 0; i < sizeof(opt_names) / sizeof(opt_names[0]); i++)
		if (opt_names[i].level == level &&
		    opt_names[i].optname == optname)
			return opt_names[i].name;
	return "-";
}

/* The value as an int when it is one (len of an int, a buffer), else 0. */
static int opt_int(const void *val, socklen_t len)
{
	int v = 0;

	if (val && len == sizeof(int))
		memcpy(&v, val, sizeof(v));
	return v;
}

WRAP_DEFINE_REAL(int, setsockopt, (int fd, int level, int optname,
				   const void *val, socklen_t len),
		 (fd, level, optname, val, len))
WRAP_API int setsockopt(int fd, int level, int optname, const void *val,
			socklen_t len)
{
	const char *on = "";
	int64_t en = 0;
	int ret = 0, v = 0;
	WRAP_SITE_E(cs, 0, "libc:setsockopt",
		    "fd %d level %d optname %d option %s optlen %u value %d "
		    "result %d", fd, level, optname, on, len, v, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(setsockopt)(fd, level, optname, val, len);
	ret = WRAP_REAL(setsockopt)(fd, level, optname, val, len);
	en = WRAP_ERRNO(ret < 0);
	on = opt_name(level, optname);
	v = opt_int(val, len);
	WRAP_EMIT_E(cs, en, fd, level, optname, on, len, v, ret);
	return ret;
}

/* The length and value the call gave back (0 and 0 when it failed). */
WRAP_DEFINE_REAL(int, getsockopt, (int fd, int level, int optname,
				   void *val, socklen_t *lenp),
		 (fd, level, optname, val, lenp))
WRAP_API int getsockopt(int fd, int level, int optname, void *val,
			socklen_t *lenp)
{
	const char *on = "";
	int64_t en = 0;
	int ret = 0, v = 0;
	socklen_t len = 0;
	WRAP_SITE_E(cs, 0, "libc:getsockopt",
		    "fd %d level %d optname %d option %s optlen %u value %d "
		    "result %d", fd, level, optname, on, len, v, ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(getsockopt)(fd, level, optname, val, lenp);
	ret = WRAP_REAL(getsockopt)(fd, level, optname, val, lenp);
	en = WRAP_ERRNO(ret < 0);
	on = opt_name(level, optname);
	if (ret == 0 && lenp) {
		len = *lenp;
		v = opt_int(val, len);
	}
	WRAP_EMIT_E(cs, en, fd, level, optname, on, len, v, ret);
	return ret;
}

/* ---- epoll_ctl ------------------------------------------------------ */

static const char *epoll_op(int op)
{
	switch (op) {
	case EPOLL_CTL_ADD:
		return "ADD";
	case EPOLL_CTL_MOD:
		return "MOD";
	case EPOLL_CTL_DEL:
		return "DEL";
	default:
		return "?";
	}
}

IO_CALL(int, epoll_ctl, (int epfd, int op, int fd, struct epoll_event *ev),
	(epfd, op, fd, ev), "epfd %d op %s fd %d events %#x result %d",
	(epfd, epoll_op(op), fd, ev ? (unsigned)ev->events : 0u, ret),
	ret < 0)

/* ---- getaddrinfo ---------------------------------------------------- */

/* EAI_* by name: gai_strerror() may allocate and translate. */
static const char *eai_name(int err)
{
	switch (err) {
	case 0:
		return "-";
	case EAI_BADFLAGS:
		return "EAI_BADFLAGS";
	case EAI_NONAME:
		return "EAI_NONAME";
	case EAI_AGAIN:
		return "EAI_AGAIN";
	case EAI_FAIL:
		return "EAI_FAIL";
	case EAI_FAMILY:
		return "EAI_FAMILY";
	case EAI_SOCKTYPE:
		return "EAI_SOCKTYPE";
	case EAI_SERVICE:
		return "EAI_SERVICE";
	case EAI_MEMORY:
		return "EAI_MEMORY";
	case EAI_SYSTEM:
		return "EAI_SYSTEM";
	case EAI_OVERFLOW:
		return "EAI_OVERFLOW";
#ifdef EAI_NODATA
	case EAI_NODATA:
		return "EAI_NODATA";
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
		return "EAI_ADDRFAMILY";
#endif
#ifdef EAI_INPROGRESS
	case EAI_INPROGRESS:
		return "EAI_INPROGRESS";
	case EAI_CANCELED:
		return "EAI_CANCELED";
	case EAI_NOTCANCELED:
		return "EAI_NOTCANCELED";
	case EAI_ALLDONE:
		return "EAI_ALLDONE";
	case EAI_INTR:
		return "EAI_INTR";
#endif
#ifdef EAI_IDN_ENCODE
	case EAI_IDN_ENCODE:
		return "EAI_IDN_ENCODE";
#endif
	default:
		return "?";
	}
}

/*
 * libc:getaddrinfo_entry node, service ("-" for NULL);
 * libc:getaddrinfo_exit the result, its EAI_* name ("-" for 0), the first
 * address of the answer ("-" when none) and, for EAI_SYSTEM, errno.
 */
WRAP_DEFINE_REAL(int, getaddrinfo, (const char *node, const char *service,
				    const struct addrinfo *hints,
				    struct addrinfo **res),
		 (node, service, hints, res))
WRAP_API int getaddrinfo(const char *node, const char *service,
			 const struct addrinfo *hints, struct addrinfo **res)
{
	char ab[WRAP_ADDRBUF];
	const char *ns = "", *ss = "", *ename = "", *as = "";
	int64_t en = 0;
	int ret = 0;
	WRAP_SITE(in, 0, "libc:getaddrinfo_entry", "node %s service %s",
		  ns, ss);
	WRAP_SITE_E(out, 0, "libc:getaddrinfo_exit",
		    "result %d error %s addr %s", ret, ename, as);

	if (tracer_likely(!WRAP_ON2(in, out)))
		return WRAP_REAL(getaddrinfo)(node, service, hints, res);
	if (WRAP_ON(in)) {
		ns = STR(node);
		ss = STR(service);
		WRAP_EMIT(in, ns, ss);
	}
	ret = WRAP_REAL(getaddrinfo)(node, service, hints, res);
	if (WRAP_ON(out)) {
		en = WRAP_ERRNO(ret == EAI_SYSTEM);
		ename = eai_name(ret);
		as = ret == 0 && res && *res ?
		     tracer__wrap_sockaddr((*res)->ai_addr,
					   (unsigned)(*res)->ai_addrlen, ab,
					   sizeof(ab)) : "-";
		WRAP_EMIT_E(out, en, ret, ename, as);
	}
	return ret;
}
