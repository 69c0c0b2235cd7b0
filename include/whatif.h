/* whatif.h: progress points for the whatif causal profiler.
 * Binary-compatible with Coz's coz.h: programs built against either work with either profiler.
 * Without the profiler loaded the macros cost one well-predicted branch; define WHATIF_DISABLE to
 * compile them away entirely. */
#ifndef WHATIF_H
#define WHATIF_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COZ_COUNTER_TYPE_THROUGHPUT 1
#define COZ_COUNTER_TYPE_BEGIN 2
#define COZ_COUNTER_TYPE_END 3

/* Weak so that programs need not link libdl. */
void* dlsym(void* handle, const char* symbol) __attribute__((weak));

typedef struct {
  size_t count;   /* visits, incremented atomically by the macros */
  size_t backoff; /* reserved (Coz ABI) */
} coz_counter_t;

typedef coz_counter_t* (*coz_get_counter_t)(int, const char*);

/* Resolves the runtime's _coz_get_counter once; NULL when no profiler is loaded. */
static coz_counter_t* _call_coz_get_counter(int type, const char* name) {
  static unsigned char _initialized = 0;
  static coz_get_counter_t fn;
  if (!_initialized) {
    if (dlsym) {
      void* p = dlsym(RTLD_DEFAULT, "_coz_get_counter");
      memcpy(&fn, &p, sizeof(p));
    }
    _initialized = 1;
  }
  return fn ? fn(type, name) : 0;
}

#ifdef WHATIF_DISABLE
#define COZ_INCREMENT_COUNTER(type, name) do { } while (0)
#else
#define COZ_INCREMENT_COUNTER(type, name)                       \
  if (1) {                                                      \
    static unsigned char _initialized = 0;                      \
    static coz_counter_t* _counter = 0;                         \
    if (!_initialized) {                                        \
      _counter = _call_coz_get_counter(type, name);             \
      _initialized = 1;                                         \
    }                                                           \
    if (_counter) {                                             \
      __atomic_add_fetch(&_counter->count, 1, __ATOMIC_RELAXED); \
    }                                                           \
  }
#endif

#define WHATIF_STR2(x) #x
#define WHATIF_STR(x) WHATIF_STR2(x)

/** Throughput progress point named after this source line. */
#define COZ_PROGRESS COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_THROUGHPUT, __FILE__ ":" WHATIF_STR(__LINE__))
/** Throughput progress point with a name. */
#define COZ_PROGRESS_NAMED(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_THROUGHPUT, name)
/** Start and end of a transaction: their difference gives latency by Little's law. */
#define COZ_BEGIN(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_BEGIN, name)
#define COZ_END(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_END, name)

/* Custom synchronisation (Coz ABI): call around a blocking operation the runtime cannot see.
 * _coz_pre_block before blocking; _coz_post_block(1) after being woken by another thread,
 * _coz_post_block(0) after a timeout or I/O; _coz_add_delays before waking another thread. */
void _coz_pre_block(void) __attribute__((weak));
void _coz_post_block(int skip_delays) __attribute__((weak));
void _coz_add_delays(void) __attribute__((weak));

#define COZ_PRE_BLOCK() do { if (_coz_pre_block) _coz_pre_block(); } while (0)
#define COZ_POST_BLOCK(skip) do { if (_coz_post_block) _coz_post_block(skip); } while (0)
#define COZ_CATCH_UP() do { if (_coz_add_delays) _coz_add_delays(); } while (0)

#ifdef __cplusplus
}
#endif

#endif /* WHATIF_H */
