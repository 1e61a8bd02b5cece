/* core_config.c -- parse MEMTOP_* environment variables for libmemtop.so.
 *
 * Runs inside the target during initialisation, possibly before main, so
 * it reads the environment array directly, with hand-rolled number parsing only: no allocation, no
 * locale.  Each bad value produces exactly one warning and the default.
 */
#include "core_config.h"

#include "byte_count.h"

#include "core_log.h"
#include "core_common.h"
#include "shm_layout.h"
#include "table_trace.h"

#include <stdlib.h>
#include <string.h>

/* The environment to read: libc's environ normally; the envp our
 * constructor received when environ is not set up yet (a .preinit_array
 * function allocated before libc initialised it). */
static char **g_env;

static const char *env_get(const char *name)
{
    size_t n = strlen(name);
    for (char **e = g_env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

bool mt_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static uint64_t env_number(const char *name, uint64_t lo, uint64_t hi, uint64_t def)
{
    const char *s = env_get(name);
    uint64_t v;
    if (!s)
        return def;
    if (mt_parse_u64(s, lo, hi, &v))
        return v;
    mt_log(MT_LOG_WARN, "warning: %s='%.64s' is not a whole number from %llu to %llu; using %llu",
           name, s, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)def);
    return def;
}

/* MEMTOP_SAMPLE: a byte count (byte_count.h: like 512k, 1M) of at most
 * 1 TiB; unset, empty or 0: exact. */
static uint64_t env_sample(void)
{
    const char *s = env_get("MEMTOP_SAMPLE");
    uint64_t v;
    if (!s || !*s)
        return 0;
    if (mt_parse_byte_count(s, MT_SAMPLE_MAX_BYTES, &v))
        return v;
    mt_log(MT_LOG_WARN,
           "warning: MEMTOP_SAMPLE='%.64s' is not a byte count (like 512k, 1M) up to 1T; "
           "tracking every allocation",
           s);
    return 0;
}

static int env_log_level(void)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *s = env_get("MEMTOP_LOG");
    if (!s)
        return MT_LOG_WARN;
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    mt_log(MT_LOG_WARN,
           "warning: MEMTOP_LOG='%.64s' is not one of error, warn, info, debug; using warn", s);
    return MT_LOG_WARN;
}

static int env_unwind(void)
{
    static const char *const names[] = {"auto", "libunwind", "check"};
    const char *s = env_get("MEMTOP_UNWIND");
    if (!s)
        return MT_UNWIND_AUTO;
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    mt_log(MT_LOG_WARN,
           "warning: MEMTOP_UNWIND='%.64s' is not one of auto, libunwind, check; using auto", s);
    return MT_UNWIND_AUTO;
}

/* MEMTOP_MALLINFO: paced (default) or off (core_allocator_figures.c). */
static bool env_mallinfo_off(void)
{
    const char *s = env_get("MEMTOP_MALLINFO");
    if (!s || strcmp(s, "paced") == 0)
        return false;
    if (strcmp(s, "off") == 0)
        return true;
    mt_log(MT_LOG_WARN, "warning: MEMTOP_MALLINFO='%.64s' is not paced or off; using paced", s);
    return false;
}

static bool env_disabled(void)
{
    const char *s = env_get("MEMTOP_DISABLE");
    if (!s || !*s || strcmp(s, "0") == 0)
        return false;
    if (strcmp(s, "1") == 0)
        return true;
    mt_log(MT_LOG_WARN, "warning: MEMTOP_DISABLE='%.64s' is not 0 or 1; tracking stays enabled", s);
    return false;
}

void mt_config_load(mt_config *cfg, char **envp)
{
    g_env = envp;
    /* Warnings about bad values go to stderr: logging is set up last. */
    cfg->log_level = env_log_level();
    cfg->log_file = env_get("MEMTOP_LOG_FILE");
    cfg->disabled = env_disabled();
    cfg->sample_rate = env_sample();
    cfg->depth = (uint32_t)env_number("MEMTOP_DEPTH", 1, MT_MAX_DEPTH, MT_DEFAULT_DEPTH);
    cfg->temporary_ns =
        env_number("MEMTOP_TEMP_MS", 0, 86400000ull, MT_DEFAULT_TEMP_MS) * 1000000ull;
    cfg->interval_ms =
        (uint32_t)env_number("MEMTOP_INTERVAL_MS", 10, 60000, MT_DEFAULT_INTERVAL_MS);
    cfg->start_ms = (uint32_t)env_number("MEMTOP_START_MS", 0, 3600000, MT_DEFAULT_START_MS);
    const char *dir = env_get("MEMTOP_SHM_DIR");
    if (!dir || !*dir || strlen(dir) >= sizeof cfg->shm_dir) {
        if (dir && *dir)
            mt_log(MT_LOG_WARN, "warning: MEMTOP_SHM_DIR is too long; using %s",
                   MT_SHM_DEFAULT_DIR);
        dir = MT_SHM_DEFAULT_DIR;
    }
    memcpy(cfg->shm_dir, dir, strlen(dir) + 1);
    const char *keep = env_get("MEMTOP_KEEP_PID");
    uint64_t kp = 0;
    cfg->keep_pid = (keep && mt_parse_u64(keep, 1, 0x7fffffff, &kp)) ? (int)kp : 0;
    cfg->unwind = env_unwind();
    cfg->mallinfo_off = env_mallinfo_off();
    cfg->max_traces = (uint32_t)env_number("MEMTOP_MAX_TRACES", MT_TRACE_MAX_MIN, MT_TRACE_MAX,
                                           MT_TRACE_MAX_DEFAULT);
    cfg->test_write_delay_us = (uint32_t)env_number("MEMTOP_TEST_WRITE_DELAY_US", 0, 1000000, 0);
    cfg->test_writer_stall_ms = (uint32_t)env_number("MEMTOP_TEST_WRITER_STALL_MS", 0, 10000, 0);
    cfg->test_writer_spin_ms = (uint32_t)env_number("MEMTOP_TEST_WRITER_SPIN_MS", 0, 10000, 0);
    cfg->test_handover = env_number("MEMTOP_TEST_HANDOVER", 0, 1, 0) == 1;
    cfg->test_je_hook_api = env_number("MEMTOP_TEST_JE_HOOK_API", 0, 1, 0) == 1;
    cfg->test_scan_loader_wait_ms =
        (uint32_t)env_number("MEMTOP_TEST_SCAN_LOADER_WAIT_MS", 0, 10000, 0);
    cfg->test_scan_hold_ms = (uint32_t)env_number("MEMTOP_TEST_SCAN_HOLD_MS", 0, 10000, 0);
    cfg->test_loader_hold_us = (uint32_t)env_number("MEMTOP_TEST_LOADER_HOLD_US", 0, 1000000, 0);
    cfg->test_defer_signal = (int)env_number("MEMTOP_TEST_DEFER_SIGNAL", 0, 64, 0);
    cfg->lease_ms =
        (uint32_t)env_number("MEMTOP_TEST_LEASE_MS", 100, 3600000, MT_REC_LEASE_MS_DEFAULT);
    mt_log_setup(cfg->log_level, cfg->log_file);
}
