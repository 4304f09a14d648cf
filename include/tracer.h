/*
 * tracer.h: public interface of libtracer, a Linux userspace tracer.
 *
 * Link with -ltracer (or `pkg-config --cflags --libs tracer`).
 */

#ifndef TRACER_H
#define TRACER_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * TRACER_API marks the symbols exported by libtracer. The library is built
 * with -fvisibility=hidden, so anything not marked stays internal.
 */
#if defined(__GNUC__) && __GNUC__ >= 4
# define TRACER_API __attribute__((visibility("default")))
#else
# define TRACER_API
#endif

/*
 * Version of the headers. Kept in sync with the version in configure.ac;
 * tests/unit/test_header_c.c checks that tracer_version() agrees.
 */
#define TRACER_VERSION_MAJOR 0
#define TRACER_VERSION_MINOR 1
#define TRACER_VERSION_PATCH 0
#define TRACER_VERSION_STRING "0.1.0"

/*
 * Returns the version of the library that the program runs with, as a
 * static NUL-terminated string such as "0.1.0". It can differ from
 * TRACER_VERSION_STRING, the version of the headers the program was built
 * with, when the shared library was upgraded separately.
 */
TRACER_API const char *tracer_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACER_H */
