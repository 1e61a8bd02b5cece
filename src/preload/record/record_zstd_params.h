/* record_zstd_params.h -- the recording writer's two sets of zstd
 * parameters, in one place: record_zstd.c sets them (set_level, which says
 * why each), and tests/recording/dat_frame_level.c compresses a frame again
 * with them to tell which set wrote it.
 *
 * fast: a fast stream's frames (EVENTS2 columns): zstd's lazy matcher,
 * every parameter stated.  small: a slow stream's small frames, which do
 * not share history: a strong level with a small window.  0 leaves a
 * parameter to the level. */
#ifndef MEMTOP_RECORD_ZSTD_PARAMS_H
#define MEMTOP_RECORD_ZSTD_PARAMS_H

#include <zstd.h>

typedef struct mt_recw_zparams {
    int level, window_log, hash_log, chain_log, search_log, min_match, strategy;
} mt_recw_zparams;

/* The windows: what a reader allocates (dat_format.h's limit). */
#define MT_RECW_WINDOW_LOG_FAST 19
#define MT_RECW_WINDOW_LOG_SMALL 18

static const mt_recw_zparams mt_recw_zfast = {6, MT_RECW_WINDOW_LOG_FAST, 15, 14, 3, 6, ZSTD_lazy};
static const mt_recw_zparams mt_recw_zsmall = {19, MT_RECW_WINDOW_LOG_SMALL, 17, 18, 0, 0, 0};

#endif
