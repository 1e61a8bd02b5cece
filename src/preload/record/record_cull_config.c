/* record_cull_config.c -- which kind of recording the next session makes
 * (record_cull.h): from the environment (MEMTOP_RECORD_MODE=full|culled,
 * MEMTOP_CULL_SECS, MEMTOP_CULL_BLOCKS) for MEMTOP_RECORD, and from the
 * control channel's start argument ("cull[=SECS] /abs/path": the viewer's
 * choice; a plain absolute path is a full recording).  Bad values: one
 * warning, the default.  Recording control only (publisher or init).
 */
#define _GNU_SOURCE
#include "record_cull.h"

#include "core_log.h"
#include "dat_format.h"

#include <stdlib.h>
#include <string.h>

static uint32_t g_blocks = MT_CULL_BLOCKS_DEFAULT; /* MEMTOP_CULL_BLOCKS, for every session */

/* Seconds with up to 3 decimals, > 0 and within the format's limit, as
 * milliseconds; 0 if bad.  *end: the first byte not read. */
static uint64_t parse_secs(const char *s, const char **end)
{
    uint64_t ms = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9' && ms <= MT_DAT_CULL_MS_MAX; p++)
        ms = ms * 10 + (uint64_t)(*p - '0');
    if (p == s)
        return 0;
    ms *= 1000;
    if (*p == '.') {
        uint64_t scale = 100;
        for (p++; *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
            ms += (uint64_t)(*p - '0') * scale;
    }
    *end = p;
    return ms <= MT_DAT_CULL_MS_MAX ? ms : 0;
}

static uint64_t env_secs(const char *v)
{
    const char *end = v;
    uint64_t ms = v ? parse_secs(v, &end) : 0;
    if (v && (!ms || *end)) {
        mt_log(MT_LOG_WARN,
               "warning: MEMTOP_CULL_SECS='%.64s' is not a number of seconds above 0 (at "
               "most a week); using %u",
               v, MT_DAT_CULL_MS_DEFAULT / 1000u);
        ms = 0;
    }
    return ms ? ms : MT_DAT_CULL_MS_DEFAULT;
}

void mt_cull_env(const char *mode, const char *secs, const char *blocks)
{
    if (blocks) {
        char *end;
        unsigned long long n = strtoull(blocks, &end, 10);
        if (*blocks && !*end && n >= MT_CULL_BLOCKS_MIN && n <= (1u << 26))
            g_blocks = (uint32_t)n;
        else
            mt_log(MT_LOG_WARN,
                   "warning: MEMTOP_CULL_BLOCKS='%.64s' is not a whole number from %u to %u; "
                   "using %u",
                   blocks, MT_CULL_BLOCKS_MIN, 1u << 26, g_blocks);
    }
    bool culled = mode && strcmp(mode, "culled") == 0;
    if (mode && !culled && strcmp(mode, "full") != 0)
        mt_log(MT_LOG_WARN, "warning: MEMTOP_RECORD_MODE='%.64s' is not full or culled; using full",
               mode);
    mt_cull_configure(culled, env_secs(secs), g_blocks);
}

const char *mt_cull_cmd(const char *arg)
{
    if (strncmp(arg, "cull", 4) != 0) {
        mt_cull_configure(false, MT_DAT_CULL_MS_DEFAULT, g_blocks);
        return arg;
    }
    const char *p = arg + 4;
    uint64_t ms = MT_DAT_CULL_MS_DEFAULT;
    if (*p == '=' && !(ms = parse_secs(p + 1, &p)))
        return NULL;
    if (*p != ' ')
        return NULL;
    mt_cull_configure(true, ms, g_blocks);
    return p + 1;
}
