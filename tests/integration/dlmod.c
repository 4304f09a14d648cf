/*
 * dlmod.c - a module for dlopen() with many call sites (2048, with long
 * formats: some 450 KB of descriptions, more than a socket buffer holds),
 * for test_hung.sh. dlmod_run() records each call site once and returns
 * how many there are.
 */
#include <tracer.h>

#define E(n) tracer_record("dl:event" #n, "module event " #n " of the " \
	"dlopen test, with a format long enough that the call sites of " \
	"this module fill the socket of a tracerd that does not read: %d", \
	v);
#define E8(n) E(n##0) E(n##1) E(n##2) E(n##3) E(n##4) E(n##5) E(n##6) E(n##7)
#define E64(n) E8(n##0) E8(n##1) E8(n##2) E8(n##3) E8(n##4) E8(n##5) \
	E8(n##6) E8(n##7)
#define E512(n) E64(n##0) E64(n##1) E64(n##2) E64(n##3) E64(n##4) \
	E64(n##5) E64(n##6) E64(n##7)

int dlmod_run(int v);

int dlmod_run(int v)
{
	E512(1) E512(2) E512(3) E512(4)
	return 2048;
}
