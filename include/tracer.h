/*
 * tracer.h: public interface of libtracer, a Linux userspace tracer.
 *
 * Link with -ltracer (or `pkg-config --cflags --libs tracer`), or run an
 * unmodified program with LD_PRELOAD=libtracer.so.
 *
 *   tracer_record("myapp:request", "id %d took %.3f ms", id, ms);
 *   tracer_record_vital("myapp:config", "loaded %s", path);
 *
 * Each call site is described once, at compile time, by a static
 * descriptor (name, format, argument types, file, line) that libtracer
 * registers when the program or library that contains it is loaded; an
 * event then carries only the call site's id, a timestamp and the argument
 * values. The message is formatted when the trace is read, exactly as
 * printf would have formatted it. See tracer_record(3).
 *
 * tracer_record() needs C11 (_Generic) or C++11.
 */

#ifndef TRACER_H
#define TRACER_H

#include <stdint.h>

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

/* At most this many arguments after the format. */
#define TRACER_MAX_ARGS		8
/* A string argument is copied up to this many bytes, its NUL included;
 * a longer one is stored cut, ending with "...". */
#define TRACER_STRING_MAX	512

/* How an argument is stored (doc/session-files.md). */
#define TRACER_ARG_SIGNED	'i'	/* signed integers: int64_t */
#define TRACER_ARG_UNSIGNED	'u'	/* unsigned integers: uint64_t */
#define TRACER_ARG_DOUBLE	'd'	/* float, double: double */
#define TRACER_ARG_LDOUBLE	'D'	/* long double */
#define TRACER_ARG_POINTER	'p'	/* other pointers: the address */
#define TRACER_ARG_STRING	's'	/* char *: the bytes, bounded */
/* The errno a call of the library's wrappers failed with (0: none), an
 * int64_t after the values its format reads: readers show its name. */
#define TRACER_ARG_ERRNO	'e'

/* One argument value, as passed from a call site to libtracer. */
union tracer_arg {
	int64_t i;
	uint64_t u;
	double d;
	unsigned char ld[sizeof(long double)];	/* the long double's bytes */
	const char *s;
	const void *p;
};

#define TRACER_CALLSITE_ABI	1

/*
 * A call site's descriptor, one static object per tracer_record() in the
 * section "tracer_callsites". Written by libtracer (id, enabled) only.
 */
struct tracer_callsite {
	uint32_t id;		/* event id, set at registration; 0 before */
	uint32_t enabled;	/* nonzero: record; maintained by libtracer */
	uint16_t abi;		/* TRACER_CALLSITE_ABI */
	uint8_t nargs;
	uint8_t vital;		/* tracer_record_vital() */
	uint32_t line;
	const char *name;	/* "provider:event" */
	const char *format;	/* printf format */
	const char *file;
	char types[TRACER_MAX_ARGS + 1];	/* TRACER_ARG_* letters */
};

/*
 * Implementation interfaces used by the macros below; call the macros
 * instead. tracer_record_emit() writes one event of call site cs with the
 * argument values args (cs->nargs of them); tracer_record_emit0() to
 * tracer_record_emit8(), which the macros call, do the same for a call
 * site of that many values, with the copy of the values and the size of
 * the record fixed at compile time (a call site whose nargs differs is
 * written as tracer_record_emit() writes it). tracer_register_callsites()
 * and tracer_unregister_callsites() are called by the constructor and
 * destructor that <tracer.h> adds to every module, with the bounds of the
 * module's "tracer_callsites" section.
 */
TRACER_API void tracer_record_emit(const struct tracer_callsite *cs,
				   const union tracer_arg *args);
TRACER_API void tracer_record_emit0(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit1(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit2(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit3(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit4(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit5(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit6(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit7(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_record_emit8(const struct tracer_callsite *cs,
				    const union tracer_arg *args);
TRACER_API void tracer_register_callsites(struct tracer_callsite *begin,
					  struct tracer_callsite *end);
TRACER_API void tracer_unregister_callsites(struct tracer_callsite *begin,
					    struct tracer_callsite *end);

/*
 * The control page libtracer acts on, opaque here. Its 64-bit word at
 * byte TRACER__CONTROL_EPOCH is 0 while no session records in this
 * process (and no news waits for it), so that a call site looks at it
 * inline and calls nothing then. Written by libtracer only.
 */
extern TRACER_API const void *volatile tracer_control_page;
#define TRACER__CONTROL_EPOCH	64

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------
 * The macros. Nothing below is interface except tracer_record() and
 * tracer_record_vital().
 */

/*
 * tracer_record(NAME, FORMAT, ...) records an event: NAME a string literal
 * "provider:event", FORMAT a printf format string literal, then up to 8
 * arguments of integer, floating-point, pointer or C string type. The
 * format is checked against the arguments at compile time like printf's;
 * more arguments, or one of another type (a struct; in C++ a std::string
 * or an enum class), is a compile-time error that says so (see
 * tracer_record(3), "Compile-time checking").
 * A call site that does not record (the filter leaves it out, no session
 * records, or no tracerd runs) calls nothing and evaluates no argument:
 * it loads its enabled word and the epoch of the control page in force,
 * and branches once on both (see TRACER__BODY).
 */
#define tracer_record(...)		TRACER__RECORD(0, __VA_ARGS__)
/* Same, to the thread's vital channel: rare events that must survive. */
#define tracer_record_vital(...)	TRACER__RECORD(1, __VA_ARGS__)

#define TRACER__CAT_(a, b)	a##b
#define TRACER__CAT(a, b)	TRACER__CAT_(a, b)
#define TRACER__STR_(x)		#x
#define TRACER__STR(x)		TRACER__STR_(x)
#define TRACER__NTH(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, \
		    _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, \
		    _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, \
		    _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, \
		    _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, \
		    _57, _58, _59, _60, _61, _62, _63, _64, N, ...) N
/*
 * Number of arguments after the format (the format is the first one):
 * 0 to 8, or X for 9 to 63 (TRACER__REC_X: a readable error).
 */
#define TRACER__NARGS(...) \
	TRACER__NTH(__VA_ARGS__, X, X, X, X, X, X, X, X, X, X, X, X, X, X, \
		    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, \
		    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, \
		    X, X, X, 8, 7, 6, 5, 4, 3, 2, 1, 0, _)

#define TRACER__RECORD(vital, name, ...) \
	TRACER__CAT(TRACER__REC_, TRACER__NARGS(__VA_ARGS__))(vital, name, \
							      __VA_ARGS__)

/*
 * TRACER__NOINSTR: every function of this header is left out of
 * -finstrument-functions, so that a program built with it records
 * func:entry and func:exit of its own functions only, not of the
 * argument helpers its tracer_record() calls use, nor of the constructor
 * that registers its call sites.
 */
#if defined(__GNUC__)
# define TRACER__SECTION \
	__attribute__((section("tracer_callsites"), used, aligned(8)))
# define TRACER__UNLIKELY(x)	__builtin_expect(!!(x), 0)
# define TRACER__PRINTF(f, a)	__attribute__((format(printf, f, a)))
# define TRACER__NOINSTR	__attribute__((no_instrument_function))
# define TRACER__INLINE		__attribute__((always_inline))
#else
# define TRACER__SECTION
# define TRACER__UNLIKELY(x)	(x)
# define TRACER__PRINTF(f, a)
# define TRACER__NOINSTR
# define TRACER__INLINE
#endif

/* Compile-time check of the format against the arguments; never called. */
static inline void tracer__check_format(const char *format, ...)
	TRACER__PRINTF(1, 2) TRACER__NOINSTR;
static inline void tracer__check_format(const char *format, ...)
{
	(void)format;
}

#ifdef __cplusplus
# define TRACER__CS_INIT(v_, nm_, fm_, n_, ...) \
	{ 0, 0, TRACER_CALLSITE_ABI, n_, v_, __LINE__, nm_, fm_, \
	  __FILE__, { __VA_ARGS__ } }
#else
# define TRACER__CS_INIT(v_, nm_, fm_, n_, ...) \
	{ .id = 0, .enabled = 0, .abi = TRACER_CALLSITE_ABI, .nargs = n_, \
	  .vital = v_, .line = __LINE__, .name = nm_, .format = fm_, \
	  .file = __FILE__, .types = { __VA_ARGS__ } }
#endif

/* Does a session record in this process? (tracer_control_page) */
#define TRACER__RECORDING() \
	(*(const volatile uint64_t *)(const void *) \
	 ((const char *)tracer_control_page + TRACER__CONTROL_EPOCH) != 0)

/*
 * The statement behind every arity; ARGS: the union initialisers.
 * The two tests are joined with '&', not '&&': both words are read (they
 * are on lines every call site shares, hot in the cache) and one branch,
 * never taken unless the event records, decides. With '&&' compilers put
 * the second test out of line, and whichever case falls through, the
 * other takes two taken branches: 1.2 ns against 0.8 on the reference VM
 * (GCC and clang alike; an empty loop iteration costs 0.4). n_, a
 * literal from 0 to 8, names the entry that takes that many values.
 */
#define TRACER__BODY(v_, nm_, fm_, n_, types_, check_, ...) do { \
	static struct tracer_callsite tracer__cs TRACER__SECTION = \
		TRACER__CS_INIT(v_, "" nm_ "", "" fm_ "", n_, \
				TRACER__UNPAREN types_); \
	if (0) \
		tracer__check_format check_; \
	if (TRACER__UNLIKELY((unsigned)(tracer__cs.enabled != 0) & \
			     (unsigned)TRACER__RECORDING())) { \
		const union tracer_arg tracer__args[] = { __VA_ARGS__ }; \
		TRACER__CAT(tracer_record_emit, n_)(&tracer__cs, \
						    tracer__args); \
	} \
} while (0)
#define TRACER__UNPAREN(...)	__VA_ARGS__

/*
 * More arguments than TRACER_MAX_ARGS: a compile-time error that says so
 * (v: 0 or 1, which macro was called).
 */
#define TRACER__NAME_0		"tracer_record"
#define TRACER__NAME_1		"tracer_record_vital"
#define TRACER__TOO_MANY(v) \
	TRACER__CAT(TRACER__NAME_, v) "() takes at most " \
	TRACER__STR(TRACER_MAX_ARGS) " arguments after the format " \
	"(TRACER_MAX_ARGS)"
#ifdef __cplusplus
# define TRACER__REC_X(v, ...) \
	do { static_assert(false, TRACER__TOO_MANY(v)); } while (0)
#else
# define TRACER__REC_X(v, ...) do { \
	(void)__extension__ sizeof(struct { TRACER__C_ASSERT(0, \
		TRACER__TOO_MANY(v), TRACER__CAT(TRACER__CAT( \
		tracer_record_takes_at_most_, TRACER_MAX_ARGS), \
		_arguments_after_the_format)) }); \
} while (0)
#endif

#define TRACER__REC_0(v, n, f) \
	TRACER__BODY(v, n, f, 0, (0), (f), { 0 })
#define TRACER__REC_1(v, n, f, a) \
	TRACER__BODY(v, n, f, 1, (TRACER__T(a)), (f, a), TRACER__A(a))
#define TRACER__REC_2(v, n, f, a, b) \
	TRACER__BODY(v, n, f, 2, (TRACER__T(a), TRACER__T(b)), (f, a, b), \
		     TRACER__A(a), TRACER__A(b))
#define TRACER__REC_3(v, n, f, a, b, c) \
	TRACER__BODY(v, n, f, 3, (TRACER__T(a), TRACER__T(b), TRACER__T(c)), \
		     (f, a, b, c), TRACER__A(a), TRACER__A(b), TRACER__A(c))
#define TRACER__REC_4(v, n, f, a, b, c, d) \
	TRACER__BODY(v, n, f, 4, (TRACER__T(a), TRACER__T(b), TRACER__T(c), \
		     TRACER__T(d)), (f, a, b, c, d), TRACER__A(a), \
		     TRACER__A(b), TRACER__A(c), TRACER__A(d))
#define TRACER__REC_5(v, n, f, a, b, c, d, e) \
	TRACER__BODY(v, n, f, 5, (TRACER__T(a), TRACER__T(b), TRACER__T(c), \
		     TRACER__T(d), TRACER__T(e)), (f, a, b, c, d, e), \
		     TRACER__A(a), TRACER__A(b), TRACER__A(c), TRACER__A(d), \
		     TRACER__A(e))
#define TRACER__REC_6(v, n, f, a, b, c, d, e, g) \
	TRACER__BODY(v, n, f, 6, (TRACER__T(a), TRACER__T(b), TRACER__T(c), \
		     TRACER__T(d), TRACER__T(e), TRACER__T(g)), \
		     (f, a, b, c, d, e, g), TRACER__A(a), TRACER__A(b), \
		     TRACER__A(c), TRACER__A(d), TRACER__A(e), TRACER__A(g))
#define TRACER__REC_7(v, n, f, a, b, c, d, e, g, h) \
	TRACER__BODY(v, n, f, 7, (TRACER__T(a), TRACER__T(b), TRACER__T(c), \
		     TRACER__T(d), TRACER__T(e), TRACER__T(g), TRACER__T(h)), \
		     (f, a, b, c, d, e, g, h), TRACER__A(a), TRACER__A(b), \
		     TRACER__A(c), TRACER__A(d), TRACER__A(e), TRACER__A(g), \
		     TRACER__A(h))
#define TRACER__REC_8(v, n, f, a, b, c, d, e, g, h, i) \
	TRACER__BODY(v, n, f, 8, (TRACER__T(a), TRACER__T(b), TRACER__T(c), \
		     TRACER__T(d), TRACER__T(e), TRACER__T(g), TRACER__T(h), \
		     TRACER__T(i)), (f, a, b, c, d, e, g, h, i), \
		     TRACER__A(a), TRACER__A(b), TRACER__A(c), TRACER__A(d), \
		     TRACER__A(e), TRACER__A(g), TRACER__A(h), TRACER__A(i))

/* Argument conversion: type letter (constant) and value. */
#ifndef __cplusplus

/*
 * TRACER__C_ASSERT(c, message, name): struct members that make the
 * compilation fail with message unless c, an integer constant, is
 * nonzero: sizeof(struct { TRACER__C_ASSERT(...) }) asserts in an
 * expression. Before C11, glibc's <sys/cdefs.h> stands in for
 * _Static_assert with a macro that drops the message: the error then
 * names a bit-field, name, instead.
 */
#ifdef _Static_assert
# define TRACER__C_ASSERT(c, message, name)	int name : (c) ? 1 : -1;
#else
# define TRACER__C_ASSERT(c, message, name) \
	_Static_assert(c, message); char tracer__ok;
#endif

/*
 * A struct, union or complex argument is an error that says so (the
 * _Generic selections below would take it for a pointer). 9, 12, 13:
 * the complex, record and union classes of __builtin_classify_type(),
 * the same in GCC and clang. The argument is not evaluated here.
 */
#if defined(__GNUC__)
# define TRACER__C_RECORDABLE(x) \
	(__builtin_classify_type(x) != 9 && \
	 __builtin_classify_type(x) != 12 && __builtin_classify_type(x) != 13)
/* x itself; a null pointer instead of one that cannot be recorded. */
# define TRACER__C_VALUE(x) \
	__builtin_choose_expr(TRACER__C_RECORDABLE(x), (x), (void *)0)
#else
# define TRACER__C_RECORDABLE(x)	1
# define TRACER__C_VALUE(x)		(x)
#endif
#define TRACER__C_BAD_ARG \
	"tracer_record(): cannot record a struct, union or complex " \
	"argument; pass one of its members, or its address for %p"
#define TRACER__C_CHECK(x) \
	(0 * sizeof(struct { TRACER__C_ASSERT(TRACER__C_RECORDABLE(x), \
		TRACER__C_BAD_ARG, \
		tracer_record_cannot_record_a_struct_union_or_complex) }))

/* The value of an argument of each kind (TRACER__A picks one). */
#define TRACER__CONV	static inline TRACER__NOINSTR union tracer_arg

TRACER__CONV tracer__a_i(int64_t v)
{ union tracer_arg a; a.i = v; return a; }
TRACER__CONV tracer__a_u(uint64_t v)
{ union tracer_arg a; a.u = v; return a; }
TRACER__CONV tracer__a_d(double v)
{ union tracer_arg a; a.d = v; return a; }
TRACER__CONV tracer__a_ld(long double v)
{ union tracer_arg a; __builtin_memcpy(a.ld, &v, sizeof(v)); return a; }
TRACER__CONV tracer__a_s(const char *v)
{ union tracer_arg a; a.s = v; return a; }
TRACER__CONV tracer__a_p(const volatile void *v)
{ union tracer_arg a; a.p = (const void *)(uintptr_t)v; return a; }

#define TRACER__CHAR_T	((char)-1 < 0 ? TRACER_ARG_SIGNED : TRACER_ARG_UNSIGNED)

/*
 * GCC gives a bit-field a type of its own, which no association names:
 * its promoted type (that of `0 ? x : x`) picks signed or unsigned, and
 * anything else (a pointer) other.
 */
#define TRACER__BITFIELD(x, signed_, unsigned_, other) _Generic(0 ? (x) : (x), \
	int: signed_, unsigned int: unsigned_, \
	long: signed_, unsigned long: unsigned_, \
	long long: signed_, unsigned long long: unsigned_, \
	default: other)

#define TRACER__T(x) __extension__ (TRACER__C_CHECK(x) + _Generic((x), \
	_Bool: TRACER_ARG_UNSIGNED, char: TRACER__CHAR_T, \
	signed char: TRACER_ARG_SIGNED, unsigned char: TRACER_ARG_UNSIGNED, \
	short: TRACER_ARG_SIGNED, unsigned short: TRACER_ARG_UNSIGNED, \
	int: TRACER_ARG_SIGNED, unsigned int: TRACER_ARG_UNSIGNED, \
	long: TRACER_ARG_SIGNED, unsigned long: TRACER_ARG_UNSIGNED, \
	long long: TRACER_ARG_SIGNED, \
	unsigned long long: TRACER_ARG_UNSIGNED, \
	float: TRACER_ARG_DOUBLE, double: TRACER_ARG_DOUBLE, \
	long double: TRACER_ARG_LDOUBLE, \
	char *: TRACER_ARG_STRING, const char *: TRACER_ARG_STRING, \
	default: TRACER__BITFIELD(x, TRACER_ARG_SIGNED, TRACER_ARG_UNSIGNED, \
				  TRACER_ARG_POINTER)))

#define TRACER__A(x) __extension__ _Generic((x), \
	_Bool: tracer__a_u, \
	char: tracer__a_i, \
	signed char: tracer__a_i, unsigned char: tracer__a_u, \
	short: tracer__a_i, unsigned short: tracer__a_u, \
	int: tracer__a_i, unsigned int: tracer__a_u, \
	long: tracer__a_i, unsigned long: tracer__a_u, \
	long long: tracer__a_i, unsigned long long: tracer__a_u, \
	float: tracer__a_d, double: tracer__a_d, long double: tracer__a_ld, \
	char *: tracer__a_s, const char *: tracer__a_s, \
	default: TRACER__BITFIELD(x, tracer__a_i, tracer__a_u, \
				  tracer__a_p))(TRACER__C_VALUE(x))

#else /* C++11 */

#include <type_traits>
#include <utility>

#define TRACER__BAD_ARG \
	"tracer_record(): cannot record an argument of this type (only " \
	"integers, plain enums, floating-point numbers, pointers and C " \
	"strings); pass .c_str() for a std::string, a cast to an integer " \
	"for an enum class, a member or the address of a struct"

/*
 * What a call site records of an argument of type T: +v, its value after
 * integer promotion (of integers, plain enums and bit-fields; arrays and
 * functions become pointers), when that is a number or a pointer; type
 * is its type. Anything else (a class without a conversion to one, an
 * enum class) is an error that says so (TRACER__BAD_ARG), and nothing
 * more: type is then tracer__bad<T>, which the letter and value accept.
 */
template <typename T>
struct tracer__bad {
	tracer__bad() {}
	template <typename U> tracer__bad(const U &) {}
};
template <typename T>
struct tracer__is_bad : std::false_type {};
template <typename T>
struct tracer__is_bad<tracer__bad<T> > : std::true_type {};

template <typename T, typename = void>
struct tracer__promote {
	typedef tracer__bad<T> type;
	static TRACER__NOINSTR TRACER__INLINE type get(const T &)
	{ return type(); }
};
template <typename T>
struct tracer__promote<T, decltype(void(+std::declval<const T &>()))> {
	typedef typename std::decay<decltype(+std::declval<const T &>())>::type
		P;
	static const bool ok = std::is_arithmetic<P>::value ||
			       std::is_pointer<P>::value;
	typedef typename std::conditional<ok, P, tracer__bad<T> >::type type;
	static TRACER__NOINSTR TRACER__INLINE type get(const T &v)
	{ return +v; }
};
/* nullptr (no unary +): a null pointer, %p. */
template <>
struct tracer__promote<decltype(nullptr), void> {
	typedef const void *type;
	static TRACER__NOINSTR TRACER__INLINE type get(decltype(nullptr))
	{ return nullptr; }
};

/* The recorded value of v (a bit-field binds to a copy). */
template <typename T>
TRACER__NOINSTR TRACER__INLINE inline typename tracer__promote<T>::type
tracer__promoted(const T &v)
{
	static_assert(!tracer__is_bad<typename tracer__promote<T>::type>::value,
		      TRACER__BAD_ARG);
	return tracer__promote<T>::get(v);
}

template <typename T>
struct tracer__type {
	typedef typename std::decay<T>::type D;
	static const char value =
		std::is_same<D, char *>::value ||
		std::is_same<D, const char *>::value ? TRACER_ARG_STRING :
		std::is_same<D, long double>::value ? TRACER_ARG_LDOUBLE :
		std::is_floating_point<D>::value ? TRACER_ARG_DOUBLE :
		std::is_integral<D>::value ?
			(std::is_signed<D>::value ? TRACER_ARG_SIGNED
						  : TRACER_ARG_UNSIGNED) :
		TRACER_ARG_POINTER;
};

#define TRACER__T(x)	tracer__type<decltype(tracer__promoted(x))>::value
#define TRACER__A(x)	tracer__arg(tracer__promoted(x))

/* The value of an argument of each kind (overloads pick one). */
#define TRACER__CONV	TRACER__NOINSTR inline union tracer_arg

template <typename T>
TRACER__NOINSTR inline typename std::enable_if<
	std::is_integral<T>::value && std::is_signed<T>::value,
	union tracer_arg>::type
tracer__arg(T v) { union tracer_arg a; a.i = v; return a; }
template <typename T>
TRACER__NOINSTR inline typename std::enable_if<
	std::is_integral<T>::value && !std::is_signed<T>::value,
	union tracer_arg>::type
tracer__arg(T v) { union tracer_arg a; a.u = v; return a; }
TRACER__CONV tracer__arg(double v)
{ union tracer_arg a; a.d = v; return a; }
TRACER__CONV tracer__arg(float v)
{ union tracer_arg a; a.d = v; return a; }
TRACER__CONV tracer__arg(long double v)
{ union tracer_arg a; __builtin_memcpy(a.ld, &v, sizeof(v)); return a; }
TRACER__CONV tracer__arg(const char *v)
{ union tracer_arg a; a.s = v; return a; }
TRACER__CONV tracer__arg(char *v)
{ union tracer_arg a; a.s = v; return a; }
template <typename T>
TRACER__CONV tracer__arg(T *v)
{ union tracer_arg a; a.p = (const void *)(uintptr_t)v; return a; }
/* Not recorded: tracer__promoted() has said why. */
template <typename T>
TRACER__CONV tracer__arg(tracer__bad<T>)
{ union tracer_arg a; a.u = 0; return a; }

#endif /* __cplusplus */

/*
 * Every module (program or shared library) that includes <tracer.h>
 * registers its call sites when it is loaded and unregisters them when it
 * is unloaded. The linker defines the section bounds in each module that
 * has call sites; elsewhere they are null and nothing happens.
 */
#if defined(__GNUC__) && !defined(TRACER_NO_AUTO_REGISTER)
#ifdef __cplusplus
extern "C" {
#endif
extern struct tracer_callsite __start_tracer_callsites[]
	__attribute__((weak, visibility("hidden")));
extern struct tracer_callsite __stop_tracer_callsites[]
	__attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif

static void tracer__register_module(void)
	__attribute__((constructor(101), used)) TRACER__NOINSTR;
static void tracer__register_module(void)
{
	if (&__start_tracer_callsites[0] != &__stop_tracer_callsites[0])
		tracer_register_callsites(__start_tracer_callsites,
					  __stop_tracer_callsites);
}

static void tracer__unregister_module(void)
	__attribute__((destructor(101), used)) TRACER__NOINSTR;
static void tracer__unregister_module(void)
{
	if (&__start_tracer_callsites[0] != &__stop_tracer_callsites[0])
		tracer_unregister_callsites(__start_tracer_callsites,
					    __stop_tracer_callsites);
}
#endif

#endif /* TRACER_H */
