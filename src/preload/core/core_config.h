/* core_config.h -- libmemtop.so settings, read once from MEMTOP_* variables. */
#ifndef MT_CONFIG_H
#define MT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* MEMTOP_UNWIND: who unwinds (unwind_backtrace.c). */
enum {
    MT_UNWIND_AUTO = 0,  /* memtop's own walker, libunwind where it cannot */
    MT_UNWIND_LIBUNWIND, /* libunwind only (the behaviour before the own walker) */
    MT_UNWIND_CHECK,     /* both for every allocation, mismatches counted */
};

typedef struct mt_config {
    bool disabled;         /* MEMTOP_DISABLE=1 */
    uint64_t sample_rate;  /* MEMTOP_SAMPLE: mean bytes between samples; 0 = exact */
    uint32_t depth;        /* MEMTOP_DEPTH, frames kept per backtrace */
    uint64_t temporary_ns; /* MEMTOP_TEMP_MS */
    uint32_t interval_ms;  /* MEMTOP_INTERVAL_MS */
    uint32_t start_ms;     /* MEMTOP_START_MS: publishing starts this late (publish_thread.h) */
    int log_level;         /* MEMTOP_LOG */
    const char *log_file;  /* MEMTOP_LOG_FILE (points into environ) */
    char shm_dir[4096];    /* MEMTOP_SHM_DIR, copied: a process may overwrite
                            * its environ (perl's $0, setproctitle) */
    int keep_pid;          /* MEMTOP_KEEP_PID, 0 if unset */
    int unwind;            /* MEMTOP_UNWIND: MT_UNWIND_* */
    bool mallinfo_off;     /* MEMTOP_MALLINFO=off: never call glibc's mallinfo2 */
    uint32_t max_traces;   /* MEMTOP_MAX_TRACES: trace table bound (table_trace.h) */
    /* MEMTOP_TEST_WRITE_DELAY_US, for tests: the recording writer sleeps
     * this long before each write to the file (a disk that cannot keep up). */
    uint32_t test_write_delay_us;
    /* MEMTOP_TEST_WRITER_STALL_MS, for tests: the recording writer thread
     * sleeps this long after each pass, outside any write (a writer that
     * sleeps: hooks at their bound wait the 1 s cap, then drop). */
    uint32_t test_writer_stall_ms;
    /* MEMTOP_TEST_WRITER_SPIN_MS, for tests: the writer thread spins this
     * long after each pass (a writer that works, or waits for a core: hooks
     * at their bound wait for it past the 1 s cap, up to 5 s). */
    uint32_t test_writer_spin_ms;
    /* MEMTOP_TEST_HANDOVER=1, for tests: a START that finds a writer thread
     * still running and that writer's decision to leave or stay wait for
     * each other (record_thread.c), the worst case of the hand-over. */
    bool test_handover;
    /* MEMTOP_TEST_JE_HOOK_API=1, for tests: a jemalloc is hooked through
     * its hook API, never redirected (alloc_scan.c), as where the redirect
     * is refused. */
    bool test_je_hook_api;
    /* MEMTOP_TEST_SCAN_LOADER_WAIT_MS, for tests: the publisher's allocator
     * scan sleeps this long where it waits for the loader's lock (as if a
     * dlopen in another thread held it that long: alloc_scan.c). */
    uint32_t test_scan_loader_wait_ms;
    /* MEMTOP_TEST_SCAN_HOLD_MS, for tests: the publisher's allocator scan
     * that lists a new module sleeps this long holding the scan's lock (a
     * scan slower than a dlsym's patience: alloc_scan.c). */
    uint32_t test_scan_hold_ms;
    /* MEMTOP_TEST_LOADER_HOLD_US, for tests: memtop's own dl_iterate_phdr
     * calls outside the publish lock nap this long holding the loader's
     * lock (core_loader_gate.c), so that a fork meets such a hold. */
    uint32_t test_loader_hold_us;
    /* MEMTOP_TEST_DEFER_SIGNAL, for tests: a signal handler's free inside
     * a hook finds its block's shard busy (hook_nested.c: it waits in the
     * deferral queue when it can), and this signal is raised between a
     * slot's take and its write (0: none). */
    int test_defer_signal;
    /* MEMTOP_TEST_LEASE_MS, for tests: the bound after which a recording
     * a viewer started and stopped renewing ends (record_control.c), in
     * place of MT_REC_LEASE_MS_DEFAULT (a test would wait 10 s). */
    uint32_t lease_ms;
} mt_config;

/* Fills cfg from the environment array envp (NULL: no variables, all
 * defaults).  A bad value yields one warning on stderr and the default.
 * Never allocates. */
void mt_config_load(mt_config *cfg, char **envp);

/* Parses a whole decimal number in [lo, hi].  Returns false on anything
 * else (empty, sign, junk, overflow). */
bool mt_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

#endif
