/*
 * slicer.h - the pairing of begin and end events into slices, per thread,
 * with a stack of the slices still open ("the slicer"): what `tracectl
 * export` and `tracectl timeline` draw (export.h), and `tracectl report`'s
 * pairs.
 *
 * Pairing rules. An event is a begin or an end by the end of its name:
 *
 *   begin       end        separator S before the word
 *   -----       ---        -----------------------------
 *   begin       end        ':' '_' '-' '.'   (x:begin, myapp:work_begin)
 *   entry       exit       ':' '_'           (func:entry, db:query_exit)
 *
 * with a non-empty BASE before S ("BASE S WORD"), and not for the library's
 * own events (tracer:*) nor for its single events whose names end so
 * (proc:exit, pthread:exit: TRACER_PAIR_SINGLES). A begin and an end pair
 * when they are on the same thread (of the same process image: pid and
 * tid), have the same BASE and S, and words of the same row (begin/end,
 * entry/exit). The slice is named BASE ("myapp:work",
 * "func"). Events are taken in time order:
 *
 *   - a begin opens a slice on top of its thread's stack (at most
 *     TRACER_SLICE_MAX_DEPTH deep; a begin beyond is shown as an instant);
 *   - an end closes the innermost open slice it pairs with; slices opened
 *     above that one and still open are closed first, at the same time
 *     ("cut"), so slices always nest;
 *   - an end that pairs with no open slice is shown as an instant
 *     ("unmatched");
 *   - slices still open when the trace ends are closed at the time of the
 *     last item of the trace ("open"), innermost first.
 *
 * Every other event is an instant.
 *
 * Process images. A pid can stand for several processes in a trace: the
 * images before and after an exec, or a pid the kernel gave again; each
 * has a process directory of its own (struct tracer_merge_proc), and the
 * slicer keeps them apart: a lane is a thread of one process image, and
 * the images of a pid are numbered 1, 2, ... in the order of their first
 * item (tracer_lane.image).
 *
 * Functions. func:entry and func:exit events whose first value is a
 * pointer (the function: libtracer's -finstrument-functions hooks record
 * "fn %p caller %p") pair only when they name the same function, and the
 * slice is named by the function's symbol when the slicer has symbols
 * (symbols.h), "func" otherwise.
 */
#ifndef TRACER_SLICER_H
#define TRACER_SLICER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols.h"
#include "trace_merge.h"

/* ----------------------------------------------------------------------
 * Pairing.
 */

#define TRACER_SLICE_MAX_DEPTH	65536

enum tracer_pair_role {
	TRACER_PAIR_NONE,
	TRACER_PAIR_BEGIN,
	TRACER_PAIR_END,
};

/* The library's events whose names look like ends but that have no begin:
 * they never pair. */
#define TRACER_PAIR_SINGLES	{ "proc:exit", "pthread:exit" }

/* What an event name says about pairing. */
struct tracer_pair {
	enum tracer_pair_role role;
	int family;			/* 0 begin/end, 1 entry/exit */
	size_t key_len;			/* BASE and S: they must be equal */
};

/* Classify an event name by the rules above. */
void tracer__pair_classify(const char *name, struct tracer_pair *p);

/* Why an item is shown the way it is (flags of the callbacks). */
#define TRACER_SLICE_UNMATCHED	1u	/* an end that closed nothing */
#define TRACER_SLICE_TOO_DEEP	2u	/* a begin over the depth limit */
#define TRACER_SLICE_CUT	4u	/* closed by an enclosing end */
#define TRACER_SLICE_OPEN	8u	/* still open when the trace ended */

/* An open slice. */
struct tracer_open {
	const char *name;		/* its begin event's name */
	size_t key_len;			/* BASE and S */
	const char *label;		/* the slice's name: BASE, or the */
	size_t label_len;		/* function's */
	uint64_t fn;			/* func:entry's function, or 0 */
	int family;
	uint64_t ts;			/* of the begin */
	char *msg;			/* a copy of the begin's message, if */
	size_t msg_len;			/* the slicer keeps them */
};

/* A process image the slicer met (in the order of their first items). */
struct tracer_image {
	const struct tracer_merge_proc *proc;
	uint32_t pid;
	uint32_t image;			/* 1, 2, ...: its rank among the
					   images of its pid */
};

/*
 * The exported ids of the threads of image N > 1 of a pid (the Chrome
 * trace's pid and tid, which viewers take as keys) are the real ones plus
 * (N - 1) * TRACER_IMAGE_STRIDE: above any pid or tid Linux gives
 * (PID_MAX_LIMIT), so they are apart from every real one.
 */
#define TRACER_IMAGE_STRIDE	(UINT64_C(1) << 22)

/* A thread of a process image of the trace: a lane of the timeline. */
struct tracer_lane {
	uint32_t pid;
	uint32_t tid;
	uint32_t index;			/* order of first appearance */
	const struct tracer_merge_proc *proc;
	uint32_t image;			/* its process's tracer_image.image */
	uint32_t proc_index;		/* ... and index in slicer.images */
	bool proc_first;		/* the first lane of its process */
	const char *thread_name;	/* its name now; NULL: none known */
	const char **former;		/* the names it had before, oldest
					   first (a thread renamed) */
	size_t nformer, former_cap;
	struct tracer_open *stack;
	size_t depth, cap;
};

/* What the slicer makes of the items; any of them may be NULL. */
struct tracer_slice_ops {
	/* The first item of a thread, before it is handled. */
	void (*lane)(void *ctx, const struct tracer_lane *l,
		     const struct tracer_item *it);
	/* An event shown as an instant (flags: UNMATCHED, TOO_DEEP). */
	void (*instant)(void *ctx, const struct tracer_lane *l,
			const struct tracer_item *it, unsigned flags);
	/* A slice opened by it, at depth l->depth - 1. */
	void (*begin)(void *ctx, const struct tracer_lane *l,
		      const struct tracer_open *o,
		      const struct tracer_item *it);
	/* The slice o at depth closes at ts: by its end event it, or
	 * (it NULL) for the reason in flags (CUT, OPEN). */
	void (*end)(void *ctx, const struct tracer_lane *l,
		    const struct tracer_open *o, size_t depth,
		    const struct tracer_item *it, uint64_t ts,
		    unsigned flags);
	/* A lost item. */
	void (*lost)(void *ctx, const struct tracer_lane *l,
		     const struct tracer_item *it);
	/* The thread of l was renamed at ts: l->thread_name is its new
	 * name, the last of l->former its name before. */
	void (*rename)(void *ctx, const struct tracer_lane *l, uint64_t ts);
};

struct tracer_slicer {
	const struct tracer_slice_ops *ops;
	void *ctx;
	size_t keep_msg;		/* keep begin messages up to so many
					   bytes (0: none) */
	struct tracer_syms *syms;	/* names functions (NULL: none) */
	struct tracer_lane *lanes;	/* in order of first appearance */
	size_t nlanes, lanes_cap;
	uint32_t *hash;			/* lane index + 1; 0: free */
	size_t hash_size;
	struct tracer_image *images;	/* in order of first appearance */
	size_t nimages, images_cap;
	uint32_t *ihash;		/* image index + 1, by pid; 0: free */
	size_t ihash_size;
	uint64_t last_ts;		/* of the last item */
};

/* Start slicing; keep_msg as above, syms may be NULL (and outlives s). */
void tracer__slicer_init(struct tracer_slicer *s,
			 const struct tracer_slice_ops *ops, void *ctx,
			 size_t keep_msg, struct tracer_syms *syms);

/* Take the next item (in time order). Returns 0 or -ENOMEM. */
int tracer__slicer_item(struct tracer_slicer *s, const struct tracer_item *it);

/*
 * The end of the items: the renames of m no item took (NULL: none) go to
 * the lanes, and the slices still open close at the time of the last
 * item.
 */
void tracer__slicer_finish(struct tracer_slicer *s,
			   const struct tracer_merge *m);

void tracer__slicer_free(struct tracer_slicer *s);

#endif /* TRACER_SLICER_H */
