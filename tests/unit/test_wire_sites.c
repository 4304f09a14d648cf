/*
 * test_wire_sites.c - the direct CallSites encoder (proto/wire.c) writes
 * the very bytes protobuf-c's packer writes, for call sites with and
 * without optional fields, one and many (multi-byte lengths and ids), and
 * tracerd's decoder reads them back field for field.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"
#include "tap.h"

#define N 300

/* The same sites through protobuf-c. */
static int pack_generic(const struct tracer_wire_site *s, size_t n,
			void **frame, size_t *size)
{
	Tracer__Message m = TRACER__MESSAGE__INIT;
	Tracer__CallSites sites = TRACER__CALL_SITES__INIT;
	Tracer__CallSite *items = calloc(n, sizeof(*items));
	Tracer__CallSite **ptrs = calloc(n, sizeof(*ptrs));
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		tracer__call_site__init(&items[i]);
		items[i].id = s[i].id;
		items[i].vital = s[i].vital;
		items[i].line = s[i].line;
		items[i].types = (char *)(s[i].types ? s[i].types : "");
		items[i].file = (char *)(s[i].file ? s[i].file : "");
		items[i].name = (char *)(s[i].name ? s[i].name : "");
		items[i].format = (char *)(s[i].format ? s[i].format : "");
		ptrs[i] = &items[i];
	}
	sites.n_sites = n;
	sites.sites = ptrs;
	m.body_case = TRACER__MESSAGE__BODY_CALL_SITES;
	m.call_sites = &sites;
	ret = tracer__wire_pack(&m, frame, size);
	free(items);
	free(ptrs);
	return ret;
}

static int same(const struct tracer_wire_site *s, size_t n)
{
	void *a, *b;
	size_t na, nb;
	int eq;

	if (tracer__wire_pack_sites(s, n, &a, &na) ||
	    pack_generic(s, n, &b, &nb))
		return 0;
	eq = na == nb && !memcmp(a, b, na);
	free(a);
	free(b);
	return eq;
}

static int decodes(const struct tracer_wire_site *s, size_t n)
{
	tracer_msg *m;
	void *f;
	size_t size, i;
	int good;

	if (tracer__wire_pack_sites(s, n, &f, &size) ||
	    tracer__wire_unpack((char *)f + TRACER_WIRE_HEADER,
				size - TRACER_WIRE_HEADER, &m, NULL))
		return 0;
	good = m->body_case == TRACER__MESSAGE__BODY_CALL_SITES &&
	       m->call_sites->n_sites == n;
	for (i = 0; good && i < n; i++) {
		const Tracer__CallSite *c = m->call_sites->sites[i];

		good = c->id == s[i].id && c->line == s[i].line &&
		       c->vital == (s[i].vital != 0) &&
		       !strcmp(c->name, s[i].name ? s[i].name : "") &&
		       !strcmp(c->format, s[i].format ? s[i].format : "") &&
		       !strcmp(c->file, s[i].file ? s[i].file : "") &&
		       !strcmp(c->types, s[i].types ? s[i].types : "");
	}
	tracer__wire_free(m);
	free(f);
	return good;
}

int main(void)
{
	static struct tracer_wire_site many[N];
	static char names[N][32], big[400];
	struct tracer_wire_site one = {
		.id = 7, .line = 12, .vital = 1, .types = "is",
		.file = "a.c", .name = "app:start", .format = "pid %d name %s",
	};
	struct tracer_wire_site bare = { .id = 1, .name = "x:y" };
	size_t i;

	plan(6);
	memset(big, 'f', sizeof(big) - 1);
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "prov:event_%zu", i);
		many[i] = (struct tracer_wire_site){
			.id = (uint32_t)(i * 977 + 1), .line = (uint32_t)i,
			.vital = (int)(i & 1), .types = i % 3 ? "iu" : "",
			.file = i % 5 ? "src/file.c" : NULL, .name = names[i],
			.format = i % 7 ? "a %d b %u" : big,
		};
	}
	ok(same(&one, 1), "one call site: the bytes protobuf-c writes");
	ok(same(&bare, 1), "default fields left out, as protobuf-c does");
	ok(same(many, N), "%d call sites, long strings, large ids: the same bytes", N);
	ok(decodes(&one, 1), "one call site decodes field for field");
	ok(decodes(many, N), "%d call sites decode field for field", N);
	ok(same(many, 0), "no call site: an empty CallSites");
	return done();
}
