/*
 * symbols.h - name the addresses of a trace: "0x55d0c3a1b139 <main+9>".
 *
 * Each traced process recorded where its objects were loaded: one
 * proc:module event per object at the start of a session, one proc:dlopen
 * per object loaded while it recorded (vital events: they survive what
 * the default channel loses). The module map of a process is read from
 * its vital channel files, in full, the first time one of its addresses
 * is looked up: it does not depend on which events a command shows, nor
 * on their order, and the process may be long gone. An address is then
 * in the module whose base is below it and whose ELF file's loadable
 * segments hold address - base (when several do, as when a library was
 * unloaded and another loaded in its place, the one loaded last before
 * the event); its name is the symbol of that file that holds it (elfsyms.h).
 *
 * Files are read lazily, once per path for all processes, from where the
 * process loaded them: if they changed since, the names may be wrong; if
 * they are missing, unreadable, corrupt or stripped, their addresses stay
 * plain numbers, silently.
 */
#ifndef TRACECTL_SYMBOLS_H
#define TRACECTL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_merge.h"

struct tracer_syms;

/*
 * Names for the addresses of the processes of merge m (which must outlive
 * *s). Returns 0 or -ENOMEM.
 */
int tracer__syms_new(struct tracer_syms **s, struct tracer_merge *m);

/* Have m's messages name their %p values: " <name+offset>" after them. */
void tracer__syms_attach(struct tracer_syms *s, struct tracer_merge *m);

/*
 * The name of the symbol that holds addr in process p at time ts, or NULL;
 * *offset (may be NULL) is how far into it addr is. The name lives as long
 * as s.
 */
const char *tracer__syms_lookup(struct tracer_syms *s,
				const struct tracer_merge_proc *p, uint64_t ts,
				uint64_t addr, uint64_t *offset);

/*
 * " <name+offset>" (" <name>" at offset 0) for addr into buf, at most
 * size - 1 bytes and a NUL; returns the bytes written, 0 when addr has no
 * name. The signature of a merge note (trace_merge.h), ctx s.
 */
size_t tracer__syms_note(void *s, const struct tracer_merge_proc *p,
			 uint64_t ts, uint64_t addr, char *buf, size_t size);

void tracer__syms_free(struct tracer_syms *s);

#endif /* TRACECTL_SYMBOLS_H */
