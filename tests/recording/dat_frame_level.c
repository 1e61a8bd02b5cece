/* dat_frame_level.c -- which of the writer's two zstd settings compressed
 * frame INDEX of a .dat file (record_zstd.c set_level): its content is
 * compressed again with each and compared to the frame's bytes (zstd is
 * deterministic for the same library and parameters).  Prints the frame's
 * content size and "fast", "strong", "both" (a small frame that either
 * setting gives) or "other". */
#include "record_zstd_params.h"

#include <zstd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 32u /* MT_DAT_HEADER_BYTES */
#define MAX_BYTES (64u << 20)

/* The frame compressed again with the writer's fast or strong parameters
 * (record_zstd_params.h) equals frame[0, n)? */
static int same_as(const void *raw, size_t rn, const void *frame, size_t n, int strong)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound(rn);
    void *re = malloc(cap);
    if (!c || !re)
        exit(2);
    const mt_recw_zparams *p = strong ? &mt_recw_zsmall : &mt_recw_zfast;
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, p->level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, p->window_log);
    ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, p->hash_log);
    ZSTD_CCtx_setParameter(c, ZSTD_c_chainLog, p->chain_log);
    ZSTD_CCtx_setParameter(c, ZSTD_c_searchLog, p->search_log);
    ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, p->min_match);
    ZSTD_CCtx_setParameter(c, ZSTD_c_strategy, p->strategy);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t k = ZSTD_compress2(c, re, cap, raw, rn);
    int same = !ZSTD_isError(k) && k == n && memcmp(re, frame, n) == 0;
    free(re);
    ZSTD_freeCCtx(c);
    return same;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dat_frame_level FILE INDEX\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    unsigned char *buf = malloc(MAX_BYTES);
    size_t n = f && buf ? fread(buf, 1, MAX_BYTES, f) : 0;
    if (f)
        fclose(f);
    size_t off = HEADER_BYTES, fs = 0;
    for (long i = atol(argv[2]); off < n; i--, off += fs) {
        fs = ZSTD_findFrameCompressedSize(buf + off, n - off);
        if (ZSTD_isError(fs))
            break;
        if (i > 0)
            continue;
        unsigned long long cs = ZSTD_getFrameContentSize(buf + off, fs);
        if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR || cs > MAX_BYTES)
            break;
        void *raw = malloc(cs ? cs : 1);
        size_t rn = raw ? ZSTD_decompress(raw, cs, buf + off, fs) : 0;
        if (!raw || ZSTD_isError(rn))
            break;
        /* a small frame may come out the same both ways: "both" */
        int fast = same_as(raw, rn, buf + off, fs, 0), strong = same_as(raw, rn, buf + off, fs, 1);
        const char *what = fast && strong ? "both" : fast ? "fast" : strong ? "strong" : "other";
        printf("%zu %s\n", rn, what);
        return 0;
    }
    fprintf(stderr, "dat_frame_level: %s: no such frame with a known content size\n", argv[1]);
    return 1;
}
