/*
 * funcmod.c - a module built with -finstrument-functions, loaded by
 * tests/integration/funcs with dlopen(): funcmod_work() calls a function
 * of the module's own, each noting its name with the program's note().
 */
#if defined(__clang__)
# define KEEP	__attribute__((noinline, used))
#else
# define KEEP	__attribute__((noipa, used))
#endif

int funcmod_work(int x, void (*note)(const char *));

static KEEP int funcmod_inner(int x, void (*note)(const char *))
{
	note(__func__);
	return x + 1;
}

int funcmod_work(int x, void (*note)(const char *))
{
	note(__func__);
	return funcmod_inner(x, note) * 2;
}
