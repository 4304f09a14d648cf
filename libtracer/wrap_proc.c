/*
 * wrap_proc.c - the life of a process, recorded as proc:* events (wrap.h
 * explains the wrappers):
 *
 *   proc:start       pid 4242 ppid 4200 exe /usr/bin/app argv app -v 'a b' ''
 *   proc:fork        child 4243
 *   proc:spawn       path /bin/true argv true pid 4244
 *   proc:exec        path /usr/bin/app argv app next
 *   proc:exec_failed path /nonexistent errno ENOENT
 *   proc:exit        status 3
 *
 * proc:start is recorded once per process and session, next to
 * tracer:process_start (record_start() in tracer.c, which may run in a
 * signal handler): the executable (/proc/self/exe) and the command line
 * are read when the library is loaded, from the arguments the C library
 * gives ELF constructors, so recording them reads memory only. A new
 * program image (exec) loads the library anew, and reads its own.
 *
 * Every argv recorded (proc:start, proc:exec, proc:spawn) is written as a
 * POSIX shell would need it to get the same arguments back (quote_argv):
 * separated by spaces, an argument of only [A-Za-z0-9_@%+=:,./-] as it
 * is, any other in single quotes (a quote in it as '\''), an empty one
 * as ''. One longer than the string limit is cut, and its end marked
 * (TRACER__STRING_CUT, common/event_format.h).
 *
 * proc:exit is recorded by exit(), _exit() and _Exit(), and when main()
 * returns: __libc_start_main() is wrapped and given a trampoline for main
 * that records main's return value (an unversioned definition in a
 * preloaded library also serves programs linked against
 * __libc_start_main@GLIBC_2.34: the dynamic linker accepts an unversioned
 * definition for a versioned reference). quick_exit(), a fatal signal and
 * exit_group from elsewhere are not seen here (tracerd records how the
 * process ended).
 *
 * proc:fork is recorded in the parent once fork() returned (the child's
 * events go to its own pool: the fork handlers in tracer.c registered it
 * before fork() returned there). vfork() is not wrapped: its child runs
 * on the parent's stack until it execs, so a wrapper's frame, returned
 * from in the child, would be the parent's clobbered one; and while it
 * borrows the parent's memory a vfork child records nothing (an exec or
 * _exit() there would otherwise be recorded in its parent's buffers as
 * the parent's: the pid is checked against the process's own). The C
 * library's own posix_spawn(), system() and popen() children exec without
 * coming here; posix_spawn() and posix_spawnp() called by the program
 * record proc:spawn.
 *
 * proc:start, proc:exec and proc:exit are vital (the thread's vital
 * channel): they frame everything else the process recorded.
 */
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrap.h"

/* ---- what proc:start says ---------------------------------------------- */

static char proc_argv[TRACER_STRING_MAX];
static pid_t proc_pid;		/* ours; another in a vfork child */

/* Text written into buf[0..size), size > 0; what does not fit is
 * dropped (len stays size - 1). */
struct text {
	char *buf;
	size_t size, len;
};

static void put(struct text *t, char c)
{
	if (t->len + 1 < t->size)
		t->buf[t->len++] = c;
}

static void put_str(struct text *t, const char *s)
{
	for (; *s && t->len + 1 < t->size; s++)
		t->buf[t->len++] = *s;
}

/* Can a shell read a as a word as it is? */
static bool plain_word(const char *a)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_@%+=:,./-";

	return *a && a[strspn(a, safe)] == '\0';
}

/* One argument, quoted for a shell if it needs to be. */
static void put_arg(struct text *t, const char *a)
{
	if (plain_word(a)) {
		put_str(t, a);
		return;
	}
	put(t, '\'');
	for (; *a && t->len + 1 < t->size; a++) {
		if (*a == '\'')
			put_str(t, "'\\''");
		else
			put(t, *a);
	}
	put(t, '\'');
}

/*
 * argv (NULL: none) as a shell command line into buf (size bytes, > 0):
 * words separated by spaces, quoted where needed. What does not fit is
 * cut at size - 1 bytes, which the string store marks as cut
 * (tracer__store_string()). Reads memory only: no allocation (vfork
 * children, constructors).
 */
static void quote_argv(char *const argv[], char *buf, size_t size)
{
	struct text t = { buf, size, 0 };
	int i;

	for (i = 0; argv && argv[i] && t.len + 1 < size; i++) {
		if (i > 0)
			put(&t, ' ');
		put_arg(&t, argv[i]);
	}
	buf[t.len] = '\0';
}

static void __attribute__((constructor(101)))
proc_init(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc > 0)
		quote_argv(argv, proc_argv, sizeof(proc_argv));
	proc_pid = getpid();
}

void tracer__proc_fork_child(void)
{
	proc_pid = getpid();
}

pid_t tracer__proc_pid(void)
{
	return __atomic_load_n(&proc_pid, __ATOMIC_RELAXED);
}

void tracer__proc_record_start(void)
{
	tracer_record_vital("proc:start", "pid %d ppid %d exe %s argv %s",
			    (int)getpid(), (int)getppid(), tracer__modules_exe(),
			    proc_argv);
}

/* In a vfork child (the parent's memory and thread state): not ours. */
static int borrowed(void)
{
	return getpid() != __atomic_load_n(&proc_pid, __ATOMIC_RELAXED);
}

/* ---- the next definitions ----------------------------------------------- */

/*
 * Looked up when the library is loaded: exec and _exit must not call
 * dlsym() in a vfork child or a signal handler. (A call before that, from
 * an earlier constructor, looks up on the way.)
 */
typedef void (*exit_fn)(int);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static exit_fn real_exit, real__exit, real__Exit;
static execve_fn real_execve, real_execvpe;
static execv_fn real_execv, real_execvp;
static fexecve_fn real_fexecve;

#define NEXT(var, name) \
	(__atomic_load_n(&(var), __ATOMIC_RELAXED) ? (var) : \
	 ((var) = (__typeof__(var))tracer__wrap_next(name)))

static void __attribute__((constructor(101))) proc_resolve(void)
{
	(void)NEXT(real_exit, "exit");
	(void)NEXT(real__exit, "_exit");
	(void)NEXT(real__Exit, "_Exit");
	(void)NEXT(real_execve, "execve");
	(void)NEXT(real_execvpe, "execvpe");
	(void)NEXT(real_execv, "execv");
	(void)NEXT(real_execvp, "execvp");
	(void)NEXT(real_fexecve, "fexecve");
}

/* ---- exit ---------------------------------------------------------------- */

static void record_exit(int status)
{
	if (borrowed())
		return;
	tracer__callsites_exiting();
	WRAP_RECORD(1, "proc:exit", "status %d", status);
}

WRAP_API void exit(int status)
{
	record_exit(status);
	NEXT(real_exit, "exit")(status);
	__builtin_unreachable();
}

/* The image ends: the call sites still queued for tracerd go to it. */
static void image_flush(void)
{
	WRAP_GUARD_ENTER();
	tracer__client_flush();
	WRAP_GUARD_EXIT();
}

/* _exit() and _Exit() skip our destructor: the image's end is here. */
static void record_quick_exit(int status)
{
	record_exit(status);
	if (borrowed())
		return;
	tracer__image_end();
	image_flush();
}

WRAP_API void _exit(int status)
{
	record_quick_exit(status);
	NEXT(real__exit, "_exit")(status);
	__builtin_unreachable();
}

WRAP_API void _Exit(int status)
{
	record_quick_exit(status);
	NEXT(real__Exit, "_Exit")(status);
	__builtin_unreachable();
}

/* main()'s return: the C library calls its own exit() with it, not ours. */
typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void),
			     void (*)(void), void (*)(void), void *);

static main_fn app_main;

static int main_trampoline(int argc, char **argv, char **envp)
{
	int status = app_main(argc, argv, envp);

	record_exit(status);
	return status;
}

WRAP_API int __libc_start_main(main_fn main_, int argc, char **argv,
			       void (*init)(void), void (*fini)(void),
			       void (*rtld_fini)(void), void *stack_end);
WRAP_API int __libc_start_main(main_fn main_, int argc, char **argv,
			       void (*init)(void), void (*fini)(void),
			       void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn real =
		(start_main_fn)tracer__wrap_next("__libc_start_main");

	app_main = main_;
	return real(main_trampoline, argc, argv, init, fini, rtld_fini,
		    stack_end);
}

/* ---- fork and posix_spawn ------------------------------------------------ */

WRAP_DEFINE_REAL(pid_t, fork, (void), ())

WRAP_API pid_t fork(void)
{
	int64_t en = 0;
	pid_t ret = 0;
	WRAP_SITE_E(cs, 0, "proc:fork", "child %d", ret);

	if (tracer_likely(!WRAP_ON(cs)))
		return WRAP_REAL(fork)();
	ret = WRAP_REAL(fork)();
	if (ret != 0) {		/* the parent */
		en = WRAP_ERRNO(ret < 0);
		WRAP_EMIT_E(cs, en, ret);
	}
	return ret;
}

typedef int (*spawn_fn)(pid_t *, const char *,
			const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[],
			char *const[]);

/* posix_spawn's result is the error number (errno is not set). */
static int record_spawn(spawn_fn real, pid_t *pid, const char *path,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[])
{
	char args[TRACER_STRING_MAX];
	int64_t en = 0;
	int ret = 0, child = -1;
	pid_t p = -1;
	WRAP_SITE_E(cs, 0, "proc:spawn", "path %s argv %s pid %d", path, args,
		    child);

	if (tracer_likely(!WRAP_ON(cs)))
		return real(pid, path, fa, attr, argv, envp);
	/* Before the call, as the program passed it. */
	quote_argv(argv, args, sizeof(args));
	ret = real(pid ? pid : &p, path, fa, attr, argv, envp);
	child = ret ? -1 : (int)(pid ? *pid : p);
	en = (ret != 0) ? (int64_t)ret : 0;
	WRAP_EMIT_E(cs, en, path, args, child);
	return ret;
}

/*
 * The default versions (GLIBC_2.15 on x86_64): those programs link today;
 * an unversioned definition also takes the calls of programs linked
 * against the old one, which differed only in reporting a failed exec as
 * an exit status 127 rather than an error number.
 */
WRAP_DEFINE_REAL(int, posix_spawn, (pid_t *pid, const char *path,
				    const posix_spawn_file_actions_t *fa,
				    const posix_spawnattr_t *attr,
				    char *const argv[], char *const envp[]),
		 (pid, path, fa, attr, argv, envp))
WRAP_DEFINE_REAL(int, posix_spawnp, (pid_t *pid, const char *path,
				     const posix_spawn_file_actions_t *fa,
				     const posix_spawnattr_t *attr,
				     char *const argv[], char *const envp[]),
		 (pid, path, fa, attr, argv, envp))

WRAP_API int posix_spawn(pid_t *pid, const char *path,
			 const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[],
			 char *const envp[])
{
	return record_spawn(WRAP_REAL(posix_spawn), pid, path, fa, attr, argv,
			    envp);
}

WRAP_API int posix_spawnp(pid_t *pid, const char *file,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	return record_spawn(WRAP_REAL(posix_spawnp), pid, file, fa, attr,
			    argv, envp);
}

/* ---- exec --------------------------------------------------------------- */

/* proc:exec before the real call: the image that records it is going. */
static void record_exec(const char *path, char *const argv[])
{
	char args[TRACER_STRING_MAX];
	WRAP_SITE(cs, 1, "proc:exec", "path %s argv %s", path, args);

	if (borrowed())
		return;
	tracer__client_exec(false);
	if (tracer_likely(WRAP_ON(cs))) {
		quote_argv(argv, args, sizeof(args));
		WRAP_EMIT(cs, path, args);
	}
	tracer__image_end();
	image_flush();
}

/* It returned: it failed (ret -1, errno set). Returns ret. */
static int record_exec_failed(const char *path, int ret)
{
	int64_t en;
	WRAP_SITE_E(cs, 1, "proc:exec_failed", "path %s", path);

	if (!borrowed())
		tracer__client_exec(true);
	if (tracer_unlikely(WRAP_ON(cs)) && !borrowed()) {
		en = WRAP_ERRNO(1);
		WRAP_EMIT_E(cs, en, path);
	}
	return ret;
}

/* The calls themselves, also for execl, execlp and execle. */
static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	record_exec(path, argv);
	return record_exec_failed(path, NEXT(real_execve, "execve")(path, argv,
								   envp));
}

static int do_execv(const char *path, char *const argv[])
{
	record_exec(path, argv);
	return record_exec_failed(path, NEXT(real_execv, "execv")(path, argv));
}

static int do_execvp(const char *file, char *const argv[])
{
	record_exec(file, argv);
	return record_exec_failed(file, NEXT(real_execvp, "execvp")(file,
								   argv));
}

WRAP_API int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

WRAP_API int execv(const char *path, char *const argv[])
{
	return do_execv(path, argv);
}

WRAP_API int execvp(const char *file, char *const argv[])
{
	return do_execvp(file, argv);
}

WRAP_API int execvpe(const char *file, char *const argv[],
		     char *const envp[])
{
	record_exec(file, argv);
	return record_exec_failed(file, NEXT(real_execvpe, "execvpe")(file,
						argv, envp));
}

/* fexecve: the path the descriptor was opened with, if it has one. */
WRAP_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	char link[32], path[TRACER_STRING_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		snprintf(path, sizeof(path), "fd %d", fd);
	else
		path[n] = '\0';
	record_exec(path, argv);
	return record_exec_failed(path, NEXT(real_fexecve, "fexecve")(fd, argv,
								     envp));
}

/*
 * execl, execlp, execle: the arguments go into a stack array (no
 * allocation: these run in vfork children) for the real execv, execvp,
 * execve. More than EXECL_MAX arguments: E2BIG.
 */
#define EXECL_MAX	1024

/* arg0, then *ap's up to the NULL, into argv; -1 (E2BIG) if too many. */
static int collect(const char *arg0, va_list *ap, char *argv[EXECL_MAX])
{
	int n = 0;

	argv[n] = (char *)arg0;
	while (argv[n]) {
		if (++n == EXECL_MAX) {
			errno = E2BIG;
			return -1;
		}
		argv[n] = va_arg(*ap, char *);
	}
	return n;
}

WRAP_API int execl(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect(arg, &ap, argv);
	va_end(ap);
	return n < 0 ? -1 : do_execv(path, argv);
}

WRAP_API int execlp(const char *file, const char *arg, ...)
{
	char *argv[EXECL_MAX];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect(arg, &ap, argv);
	va_end(ap);
	return n < 0 ? -1 : do_execvp(file, argv);
}

WRAP_API int execle(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX], **envp = NULL;
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect(arg, &ap, argv);
	if (n >= 0)
		envp = va_arg(ap, char **);
	va_end(ap);
	return n < 0 ? -1 : do_execve(path, argv, envp);
}
