/*
 * fdnames.h - descriptors named in messages, as strace -y names them:
 * "fd 5</etc/services>", "fds 3<pipe:[r]> 4<pipe:[w]>".
 *
 * A table of descriptors per process is kept from the events a merge
 * reads, in time order (tracer__merge_set_watch(): the events --events
 * leaves out count too):
 *
 *   - libc:open, openat, creat, fopen, freopen (any event with a "path"
 *     string and, after it, an "fd"): fd names the path as the program
 *     gave it (relative paths stay relative);
 *   - libc:socket: "socket:[inet]" (unix, inet6, netlink, packet, or
 *     "domain N"); libc:bind adds the local address, libc:connect_entry
 *     the peer ("socket:[inet 10.0.0.1:5000->1.2.3.4:80]"; a failed
 *     connect, other than EINPROGRESS, forgets the peer again);
 *     libc:accept_exit names its result "socket:[inet LOCAL->PEER]"
 *     after the listening socket;
 *   - any event with "fds A B" whose name has "pipe": "pipe:[r]" and
 *     "pipe:[w]"; "socketpair": "socket:[unix]" both;
 *   - any event with "fd" and "newfd" (dup, dup2, dup3): newfd takes fd's
 *     name (replacing what it had; forgotten when fd has none); so does
 *     the result of libc:fcntl's F_DUPFD and F_DUPFD_CLOEXEC ("cmdname"),
 *     and its F_SETFD sets or clears close-on-exec;
 *   - libc:close, libc:fclose, libc:close_range, libc:closefrom remove
 *     them (after their own message named them);
 *   - O_CLOEXEC (0x80000) in "flags" or "type", or 'e' in an fopen mode,
 *     marks a descriptor close-on-exec; close_range with
 *     CLOSE_RANGE_CLOEXEC too;
 *   - proc:fork in the parent and proc:start in the child (its ppid),
 *     whichever comes first, give the child a copy of the parent's table;
 *     proc:spawn a copy without the close-on-exec ones; proc:exec then the
 *     new image's proc:start drop the close-on-exec ones (not after
 *     proc:exec_failed); proc:exit forgets the process.
 *
 * Every integer value of a message whose field name (the word before it,
 * "fd 5") is "fd", "fds", ends in "fd" (newfd, epfd, dirfd, but not lowfd)
 * or begins with "fd_" is followed by "<NAME>" when its process's table
 * names it, and so is the result of accept_exit. An unknown descriptor
 * prints as it was recorded. Bytes of a name below 0x20 or 0x7f print as
 * '?'; a name is cut at 200 bytes.
 *
 * Memory is bounded: at most 1024 processes (the least recently seen one
 * forgotten to make room), 1024 descriptors per process and 65536 in all
 * (beyond, new descriptors stay unnamed).
 */
#ifndef TRACECTL_FDNAMES_H
#define TRACECTL_FDNAMES_H

#include "trace_merge.h"

struct tracer_fdnames;

/* A new, empty set of tables. Returns 0 or -ENOMEM. */
int tracer__fdnames_new(struct tracer_fdnames **f);

/* Follow the records m reads from now on (the merge must not outlive
 * the watch: tracer__merge_close() it, or detach with
 * tracer__merge_set_watch(m, NULL, NULL), before tracer__fdnames_free()). */
void tracer__fdnames_attach(struct tracer_fdnames *f, struct tracer_merge *m);

/*
 * The merge's note after %p values (trace_merge.h), so that the messages
 * are measured as the merge formats them (NULL: none).
 */
void tracer__fdnames_set_note(struct tracer_fdnames *f,
			      tracer_merge_note_fn fn, void *ctx);

/*
 * Name the descriptors of it's message: it->msg and it->msg_len are
 * replaced by a copy with the names, valid until the next call, when
 * there is any to add (else, or when out of memory, left as they are).
 * Call it for the item tracer__merge_next() just handed out.
 */
void tracer__fdnames_item(struct tracer_fdnames *f, struct tracer_item *it);

void tracer__fdnames_free(struct tracer_fdnames *f);

#endif /* TRACECTL_FDNAMES_H */
