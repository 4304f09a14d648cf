/* nextalloc.c and allocee.c: the watched block's size and the
 * descriptors its calls close. */
#ifndef NEXTALLOC_H
#define NEXTALLOC_H

#define NEXTALLOC_SIZE	777777
#define NEXTALLOC_TAKEN	(-7001)
#define NEXTALLOC_GIVEN	(-7002)

#endif
