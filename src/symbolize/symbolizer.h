/* symbolizer.h -- turning (module, offset) into function names, source
 * lines and inlined frames, in the viewer (never in the target).
 *
 * The module is described by what the target published (path, build-id),
 * not by /proc, so an exited process can still be symbolized; while the
 * process runs, the file it really maps is reached through /proc/PID when
 * the path no longer names it (deleted, replaced, another mount
 * namespace).  Debug info: DWARF in the file, .gnu_debugdata, build-id
 * paths under /usr/lib/debug (the target's too), .gnu_debuglink, and
 * debuginfod when DEBUGINFOD_URLS is set, bounded (debuginfod_query.h).  Results are cached per
 * (module, offset), so a refresh that asks again costs a hash lookup. */
#ifndef MEMTOP_SYMBOLIZER_H
#define MEMTOP_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mt_symbolizer mt_symbolizer;

/* A module as the target recorded it. */
typedef struct mt_sym_module {
    const char *path; /* "[vdso]" etc. for modules without a file */
    const uint8_t *build_id;
    unsigned build_id_len; /* 0: not recorded (not checked) */
    int pid;               /* the live process mapping it, as the viewer sees it; 0: none */
    uint64_t start, end;   /* where pid maps it (the range the target published) */
} mt_sym_module;

/* One source-level frame.  Strings belong to the symbolizer. */
typedef struct mt_sym_frame {
    const char *function; /* demangled; NULL if unknown */
    const char *linkage;  /* the symbol's mangled (linkage) name when it has one
                           * other than function (C++, Rust); else NULL */
    const char *file;     /* NULL if unknown */
    unsigned line;        /* 0 if unknown */
    bool inlined;         /* inlined into the next frame of the chain */
} mt_sym_frame;

/* What one address is: frames[0] is the innermost inlined function (the
 * order of `eu-addr2line -i`), frames[nframes-1] the function that was
 * really called.  nframes is at least 1.  When frames[0].function is NULL,
 * unresolved says why ("binary replaced", "file deleted", "no symbols",
 * "no file (JIT/vdso)", "bad ELF file", "file changed", "file too large to
 * copy safely", "no symbols (debuginfod timed out)"). */
typedef struct mt_sym_result {
    const mt_sym_frame *frames;
    unsigned nframes;
    const char *unresolved;
} mt_sym_result;

/* NULL only when out of memory. */
mt_symbolizer *mt_symbolizer_new(void);
void mt_symbolizer_free(mt_symbolizer *s);

/* Never NULL; valid until mt_symbolizer_free.  offset is the ELF virtual
 * address in the file (address - load bias).  Any input is safe. */
const mt_sym_result *mt_symbolize(mt_symbolizer *s, const mt_sym_module *m, uint64_t offset);

/* Any thread: stops a debuginfod query under way (and all later ones), so
 * that the thread symbolizing returns soon. */
void mt_symbolizer_cancel(mt_symbolizer *s);

/* Lookups answered from the cache / by reading debug info (for benches). */
void mt_symbolizer_stats(const mt_symbolizer *s, uint64_t *hits, uint64_t *misses);

#endif
