/*
 * sitetext.c - the text of a call site in a session's files, kept
 *
 * Every process writes two descriptions of each call site: a line of
 * process.meta and an event class of the CTF metadata. Most of them are
 * the same from one process to the next (libtracer's own 113 call sites,
 * those of a program started again and again by a script), and formatting
 * them was a quarter of tracerd's work per process start. So the text of
 * a call site is kept in a small table, keyed by all of the site's fields
 * and compared in full on a hit: what a process sends can only ever reuse
 * the text of a site equal to its own.
 *
 * The table is bounded (SLOTS entries, none larger than MAX_TEXT) and
 * emptied when it is full, so a process sending many different sites costs
 * what it did before, and at most SLOTS * MAX_TEXT bytes stay kept.
 * The percent-encoding of process.meta's fields (tracerd_put_field()) is
 * here too; session.c uses it for the rest of the file.
 *
 * Single-threaded: tracerd's loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctf_meta.h"
#include "tracerd.h"

#define SLOTS		1024u	/* power of two */
#define MAX_FILL	(SLOTS / 4 * 3)
#define MAX_TEXT	8192u

struct text {
	uint64_t hash;
	uint32_t id, line;
	bool vital;
	const char *types, *file, *name, *format;	/* in buf */
	size_t meta_len, ctf_len;			/* in buf after them */
	char buf[];
};

static struct text *table[SLOTS];
static unsigned filled;

/* Percent-encode s (doc/session-files.md) onto f; "%" for empty. */
void tracerd_put_field(FILE *f, const char *s)
{
	if (!s || !*s) {
		fputc('%', f);
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch == '%' || ch == 0x7f)
			fprintf(f, "%%%02X", ch);
		else
			fputc(ch, f);
	}
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;	/* FNV-1a */
	return h;
}

static uint64_t site_hash(const struct tracer__site *cs)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *s[4] = { cs->types, cs->file, cs->name, cs->format };
	unsigned i;

	h = mix(h, &cs->id, sizeof(cs->id));
	h = mix(h, &cs->line, sizeof(cs->line));
	h = mix(h, &cs->vital, sizeof(cs->vital));
	for (i = 0; i < 4; i++)
		h = mix(h, s[i] ? s[i] : "", strlen(s[i] ? s[i] : "") + 1);
	return h;
}

static bool same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool same_site(const struct text *t, uint64_t hash,
		      const struct tracer__site *cs)
{
	return t->hash == hash && t->id == cs->id && t->line == cs->line &&
	       t->vital == cs->vital && same_str(t->types, cs->types) &&
	       same_str(t->file, cs->file) && same_str(t->name, cs->name) &&
	       same_str(t->format, cs->format);
}

/* The process.meta line of cs (field syntax: tracerd_put_field()). */
static void put_meta(FILE *f, const struct tracer__site *cs)
{
	fprintf(f, "callsite %" PRIu32 " %d %s %" PRIu32 " ", cs->id,
		cs->vital ? 1 : 0, cs->types && cs->types[0] ? cs->types : "-",
		cs->line);
	tracerd_put_field(f, cs->file);
	fputc(' ', f);
	tracerd_put_field(f, cs->name);
	fputc(' ', f);
	tracerd_put_field(f, cs->format);
	fputc('\n', f);
}

static int put_ctf(FILE *f, const struct tracer__site *cs)
{
	struct tracer_ctf_event e = {
		.id = cs->id, .name = cs->name, .format = cs->format,
		.types = cs->types, .stream_id = cs->vital ?
		TRACER_CTF_STREAM_VITAL : TRACER_CTF_STREAM_DEFAULT,
	};

	return tracer__ctf_write_event(f, &e);
}

static char *copy_str(char **at, const char *s)
{
	char *d = *at;
	size_t n = strlen(s ? s : "") + 1;

	memcpy(d, s ? s : "", n);
	*at += n;
	return d;
}

/* Format cs into a new entry. Returns it, or NULL (no memory, too large,
 * or the CTF writer refused the site: -EINVAL in *err). */
static struct text *render(const struct tracer__site *cs, uint64_t hash,
			   int *err)
{
	char *meta = NULL, *ctf = NULL, *at;
	size_t meta_len = 0, ctf_len = 0, strs;
	FILE *fm = open_memstream(&meta, &meta_len);
	FILE *fc = open_memstream(&ctf, &ctf_len);
	struct text *t = NULL;

	*err = -ENOMEM;
	if (fm && fc) {
		put_meta(fm, cs);
		*err = put_ctf(fc, cs);
	}
	if (fm && fclose(fm))
		*err = -ENOMEM;
	if (fc && fclose(fc))
		*err = -ENOMEM;
	if (!fm || !fc)
		*err = -ENOMEM;
	strs = strlen(cs->types ? cs->types : "") + strlen(cs->file ? cs->file : "") +
	       strlen(cs->name ? cs->name : "") +
	       strlen(cs->format ? cs->format : "") + 4;
	if (!*err)
		t = malloc(sizeof(*t) + strs + meta_len + ctf_len);
	if (t) {
		*t = (struct text){ .hash = hash, .id = cs->id,
				    .line = cs->line, .vital = cs->vital,
				    .meta_len = meta_len, .ctf_len = ctf_len };
		at = t->buf;
		t->types = copy_str(&at, cs->types);
		t->file = copy_str(&at, cs->file);
		t->name = copy_str(&at, cs->name);
		t->format = copy_str(&at, cs->format);
		memcpy(at, meta, meta_len);
		memcpy(at + meta_len, ctf, ctf_len);
	} else if (!*err) {
		*err = -ENOMEM;
	}
	free(meta);
	free(ctf);
	return t;
}

static void empty_table(void)
{
	unsigned i;

	for (i = 0; i < SLOTS; i++) {
		free(table[i]);
		table[i] = NULL;
	}
	filled = 0;
}

/* Keep t if there is room and it is small enough; else it is the
 * caller's (returns false). */
static bool keep(struct text *t, unsigned slot)
{
	if (t->meta_len + t->ctf_len > MAX_TEXT)
		return false;
	if (filled >= MAX_FILL) {
		empty_table();
		slot = (unsigned)t->hash & (SLOTS - 1);
	}
	while (table[slot])
		slot = (slot + 1) & (SLOTS - 1);
	table[slot] = t;
	filled++;
	return true;
}

/* Write cs's text to meta and/or ctf (either may be NULL). */
int tracerd_site_text_write(const struct tracer__site *cs, FILE *meta,
			    FILE *ctf)
{
	uint64_t hash = site_hash(cs);
	unsigned slot = (unsigned)hash & (SLOTS - 1);
	struct text *t;
	bool kept;
	int err = 0;

	while ((t = table[slot]) && !same_site(t, hash, cs))
		slot = (slot + 1) & (SLOTS - 1);
	kept = t != NULL;
	if (!t)
		t = render(cs, hash, &err);
	if (!t) {		/* written as it comes, not kept */
		if (meta)
			put_meta(meta, cs);
		return ctf ? put_ctf(ctf, cs) : 0;
	}
	if (meta)
		fwrite(t->format + strlen(t->format) + 1, 1, t->meta_len, meta);
	if (ctf)
		fwrite(t->format + strlen(t->format) + 1 + t->meta_len, 1,
		       t->ctf_len, ctf);
	if (!kept && !keep(t, slot))
		free(t);
	return ctf && ferror(ctf) ? -EIO : 0;
}

void tracerd_site_text_free(void)
{
	empty_table();
}
