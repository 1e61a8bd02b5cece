/* record_zstd_lib.h -- the libzstd functions a recording uses, loaded on
 * demand (record_zstd_lib.c): libmemtop.so does not depend on libzstd. */
#ifndef MT_RECORD_ZSTD_LIB_H
#define MT_RECORD_ZSTD_LIB_H

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_createCCtx_advanced */
#include <zstd.h>

#include <stdbool.h>

/* The soname of the libzstd whose header we were built with. */
#define MT_ZSTD_STR_(x) #x
#define MT_ZSTD_STR(x) MT_ZSTD_STR_(x)
#define MT_ZSTD_SONAME "libzstd.so." MT_ZSTD_STR(ZSTD_VERSION_MAJOR)

typedef struct mt_zstd_api {
    ZSTD_CCtx *(*create_cctx)(ZSTD_customMem);
    size_t (*free_cctx)(ZSTD_CCtx *);
    size_t (*cctx_reset)(ZSTD_CCtx *, ZSTD_ResetDirective);
    size_t (*set_parameter)(ZSTD_CCtx *, ZSTD_cParameter, int);
    size_t (*compress_stream2)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective);
    size_t (*out_size)(void);
    unsigned (*is_error)(size_t);
    const char *(*error_name)(size_t);
} mt_zstd_api;

/* Valid once mt_zstd_load returned true (on this thread, or on the thread
 * whose session handed the context over: under mt_w.lock). */
extern mt_zstd_api mt_zstd;

/* Loads libzstd (once; later calls are one load).  False, with one
 * warning in the process's life, if it cannot be loaded.  Never with a
 * memtop lock held (it takes the loader's lock). */
bool mt_zstd_load(void);

#endif
