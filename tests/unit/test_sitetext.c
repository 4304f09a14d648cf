/*
 * test_sitetext.c - the texts tracerd keeps of call sites (tracerd/
 * sitetext.c): what it writes from its table is what it writes without it,
 * for the same site again, for sites that differ in one field only (the
 * id, the line, the channel, the types, the file, the name, the format),
 * for a site too large to keep, and after the table was emptied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctf_meta.h"
#include "tracerd/tracerd.h"
#include "tap.h"

struct out {
	char *meta, *ctf;
	size_t meta_len, ctf_len;
};

/* What tracerd_site_text_write() writes for cs. */
static int write_site(const struct tracer__site *cs, struct out *o)
{
	FILE *m = open_memstream(&o->meta, &o->meta_len);
	FILE *c = open_memstream(&o->ctf, &o->ctf_len);
	int ret;

	if (!m || !c)
		bail_out("open_memstream");
	ret = tracerd_site_text_write(cs, m, c);
	fclose(m);
	fclose(c);
	return ret;
}

/* The same, formatted directly (the text the table must reproduce). */
static void expected(const struct tracer__site *cs, struct out *o)
{
	FILE *m = open_memstream(&o->meta, &o->meta_len);
	FILE *c = open_memstream(&o->ctf, &o->ctf_len);
	struct tracer_ctf_event e = {
		.id = cs->id, .name = cs->name, .format = cs->format,
		.types = cs->types, .stream_id = cs->vital ?
		TRACER_CTF_STREAM_VITAL : TRACER_CTF_STREAM_DEFAULT,
	};

	if (!m || !c)
		bail_out("open_memstream");
	fprintf(m, "callsite %u %d %s %u ", cs->id, cs->vital ? 1 : 0,
		cs->types[0] ? cs->types : "-", cs->line);
	tracerd_put_field(m, cs->file);
	fputc(' ', m);
	tracerd_put_field(m, cs->name);
	fputc(' ', m);
	tracerd_put_field(m, cs->format);
	fputc('\n', m);
	tracer__ctf_write_event(c, &e);
	fclose(m);
	fclose(c);
}

static bool same_out(const struct out *a, const struct out *b)
{
	return a->meta_len == b->meta_len && a->ctf_len == b->ctf_len &&
	       !memcmp(a->meta, b->meta, a->meta_len) &&
	       !memcmp(a->ctf, b->ctf, a->ctf_len);
}

static void free_out(struct out *o)
{
	free(o->meta);
	free(o->ctf);
}

/* Write cs twice (the second from the table): both as formatted. */
static void check_site(struct tracer__site *cs, const char *what)
{
	struct out want = { 0 }, first = { 0 }, again = { 0 };
	int r1 = write_site(cs, &first), r2 = write_site(cs, &again);

	expected(cs, &want);
	ok(r1 == 0 && r2 == 0 && same_out(&first, &want) &&
	   same_out(&again, &want), "%s: written as formatted, twice", what);
	free_out(&want);
	free_out(&first);
	free_out(&again);
}

int main(void)
{
	char types[] = "ii", file[] = "prog.c", name[] = "app:pair";
	char format[] = "a=%d b=%d", big[20000];
	struct tracer__site base = { .id = 200, .vital = false,
		.types = types, .file = file, .name = name, .format = format,
		.line = 42 };
	struct tracer__site cs;
	char buf[64];
	int i;

	plan(12);
	check_site(&base, "a site");
	cs = base; cs.id = 201;
	check_site(&cs, "another id");
	cs = base; cs.line = 43;
	check_site(&cs, "another line");
	cs = base; cs.vital = true;
	check_site(&cs, "the vital channel");
	cs = base; cs.types = (char *)"iu";
	check_site(&cs, "other types");
	cs = base; cs.file = (char *)"other.c";
	check_site(&cs, "another file");
	cs = base; cs.name = (char *)"app:pear";
	check_site(&cs, "another name");
	cs = base; cs.format = (char *)"a=%d c=%d";
	check_site(&cs, "another format (its field names)");
	cs = base; cs.format = (char *)"a b%%";
	cs.types = (char *)"";
	check_site(&cs, "no argument, an escape");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cs = base; cs.format = big; cs.types = (char *)"";
	check_site(&cs, "a site too large to keep");
	/* More different sites than the table keeps: it is emptied. */
	for (i = 0; i < 3000; i++) {
		struct out o = { 0 };

		snprintf(buf, sizeof(buf), "app:e%d", i);
		cs = base;
		cs.name = buf;
		write_site(&cs, &o);
		free_out(&o);
	}
	check_site(&cs, "the last of 3000 sites");
	check_site(&base, "the first site after the table was emptied");
	tracerd_site_text_free();
	return done();
}
