/* alloc_scan.c -- which allocators live in this process, and which of
 * them memtop sees.
 *
 * memtop hooks malloc by interposition (hook_libc.c): it sees what reaches
 * the allocator through the PLT.  An allocator linked into a module
 * (libjemalloc.a in the executable, tikv-jemallocator's _rjem_ jemalloc
 * in a Rust program, a library with its own allocator) is called
 * directly and is invisible to that; so are the extended entry points of
 * a shared allocator (jemalloc's mallocx/sdallocx, mimalloc's mi_*,
 * tcmalloc's tc_*), which memtop does not interpose on.  The first scan
 * hooks what it can: jemalloc, tcmalloc and a shared mimalloc by
 * redirecting their entry points (alloc_patch.c: alone at start, later
 * with the other threads stopped), jemalloc through its hook API
 * (alloc_jemalloc.c) where that is refused.  Numbers are
 * exact or say what they are: so every module is scanned, at tracking
 * start and after each dlopen, for allocator entry points in its .dynsym,
 * .symtab and MiniDebugInfo (alloc_elf.c), and each allocator found is
 * published (header.allocators, shm_layout.h) with whether memtop sees
 * it.  One that it does not see makes the data "NOT exact" in every view
 * and export, with a note saying why, and one warning in the target's log.
 *
 * Signatures (docs/allocators.md): jemalloc, with any prefix: a prefix P
 * for which P+mallctl, P+mallocx and P+sdallocx are all defined; mimalloc:
 * mi_malloc and mi_free; tcmalloc: tc_malloc; CPython's pymalloc:
 * PyObject_Malloc, unless PYTHONMALLOC=malloc; otherwise any module that
 * defines malloc (glibc's libc.so.6 is not read: mt_path_is_libc).  And
 * malloc itself must resolve to memtop's hook (dlsym(RTLD_DEFAULT)): an
 * executable that defines and exports malloc wins over any preload.
 *
 * Everything here runs with the thread marked inside memtop, outside
 * dl_iterate_phdr callbacks (the modules are listed first, then their
 * files read), and allocates nothing: the state is static, files are
 * mapped.  One lock serialises scans and the publisher's copy, which only
 * tries it and publishes next time if busy.
 *
 * When: at tracking start; then the publisher thread checks every poll
 * (20 ms) whether dl_iterate_phdr's count of loaded objects moved, and
 * dlclose scans before it unloads (so a library loaded and unloaded
 * between two polls is still seen).  dlopen itself is not interposed:
 * glibc finds the library relative to its caller (the caller's RUNPATH,
 * $ORIGIN), taken from dlopen's return address, which a wrapper would
 * turn into libmemtop.so's.
 */
#define _GNU_SOURCE
#include "alloc_scan.h"

#include "alloc_elf.h"
#include "core_nocancel.h"
#include "alloc_jemalloc.h"
#include "alloc_je_redirect.h"
#include "alloc_patch.h"
#include "alloc_stats.h"
#include "alloc_mimalloc.h"
#include "alloc_tcmalloc.h"
#include "hook_nested.h"
#include "core_log.h"
#include "core_common.h"
#include "core_dlerror.h"
#include "core_loader_gate.h"
#include "core_procinfo.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "hook_loaded_sym.h"
#include "hook_real_alloc.h"
#include "core_spinlock.h"
#include "unwind_libunwind.h"

#include <assert.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#define SCANNED_MAX 1024u /* modules remembered as scanned */
#define BATCH 16u         /* modules listed per dl_iterate_phdr pass */
#define PREFIXES 8u       /* jemalloc prefix candidates per module */
#define PREFIX_MAX 15u
#define SCAN_PATIENCE_NS 100000000 /* a dlsym or dlclose waits for a running scan */
#define SCAN_PASSES 64u /* holds of the scan's lock per scan (a reference taken between two) */

/* A reference to a library taken with dlopen(RTLD_NOLOAD) outside the
 * scan's lock (take_ref): while it is held the library is completely
 * loaded and cannot go away.  Kept by the scan that took it until the
 * end of the pass that classified its module (release_classified), or of
 * the scan (release_refs).  Meanwhile a program's last dlclose of that
 * library would not unload it, the scan's would, on the scan's thread:
 * so a program's dlclose first waits for them, and no reference is taken
 * while it runs (mt_alloc_close_begin, reserve_ref).
 * A fork child inherits the references of a scan its parent was running
 * (the handles' counts are the loader's, in the child's copy of memory):
 * nothing releases them, so the modules that were not pinned stay loaded
 * in the child (those pinned do anyway). */
typedef struct loaded_ref {
    void *h;                 /* the handle; NULL: dlopen found no such library by its name */
    uint64_t bias, lo;       /* the module it was taken for (at its listing) */
    unsigned long long adds; /* dl_iterate_phdr's adds before the dlopen that took it */
    bool pin;                /* classify pinned the module: NODELETE once the lock is released */
    bool classified;         /* its module was classified: given back after this pass */
} loaded_ref;

#define REFS 8u
typedef struct scan_refs {
    uint32_t n;
    loaded_ref r[REFS];
} scan_refs;

typedef struct module_ref {
    uint64_t bias, lo, hi;
    bool exe;
    loaded_ref *ref; /* what shows it loaded (scan_module), NULL for the executable */
    char path[MT_PATH_MAX];
} module_ref;

typedef struct jcand {
    char prefix[PREFIX_MAX + 1];
    unsigned have; /* 1 mallctl, 2 mallocx, 4 sdallocx */
    uint64_t mallctl;
} jcand;

/* The code of one jemalloc in a module, for trimming backtraces.  Its
 * named functions (entry points, P + name; private ones, je_ or P + je_;
 * its C++ operators when unprefixed) lie among its static functions,
 * which have no telling name, so its code is taken as the ranges from the
 * lowest to the highest named one, split wherever a global function that
 * is not jemalloc's lies between (the program's own code: an archive's
 * members are linked one after the other, but cold code is gathered
 * elsewhere, among other objects' cold code). */
#define JE_SPLITS 64u
typedef struct je_code {
    const char *prefix;
    uint64_t lo, hi;           /* of all named ones */
    uint32_t nsplit;           /* globals not jemalloc's within [lo, hi) */
    uint64_t split[JE_SPLITS]; /* sorted */
    uint64_t span_lo[JE_SPLITS + 1], span_hi[JE_SPLITS + 1]; /* per gap between splits */
    bool overflow;
} je_code;

/* What one module's symbols say. */
typedef struct mod_syms {
    jcand je[PREFIXES];
    unsigned nje;
    bool malloc_def, mi_malloc, mi_free, tc_malloc, pymalloc;
    uint64_t mi_addr[MT_MI_N], mi_size[MT_MI_N]; /* its global mi_* functions memtop hooks */
    uint64_t mih_addr[MT_MI_HEAP_N], mih_size[MT_MI_HEAP_N]; /* the rest of its API, likewise */
    void *mi_visit, *mi_backing;                 /* its mi_heap_visit_blocks, mi_heap_get_backing */
    void *mi_usable;                             /* its mi_usable_size */
    void *tc_usable;                             /* its tc_malloc_size */
    uint64_t tc_addr[MT_TC_N], tc_size[MT_TC_N]; /* its tc_* functions memtop hooks */
    mt_stats_fns stats;                          /* where its own figures come from */
} mod_syms;

/* The fields every scan touches come first, with the batch: a short
 * process's first scan then writes two or three pages of this (zero-fill
 * faults), not five (docs/performance.md, "Sixth round"). */
static struct {
    mt_spinlock lock;
    uint32_t seq; /* the header's seqlock word, our own copy (never read back) */
    bool resolve_checked;
    bool batch_full;
    bool publisher; /* the scan running is the publisher's poll (the test knobs') */
    bool started;   /* the first scan has ended: what a scan finds now was loaded late (a hint
                       read unlocked by the publisher: relaxed) */
    uint32_t nscanned;
    uint32_t nbatch;
    uint64_t self_lo, self_hi;
    unsigned long long adds;   /* dlpi_adds when the last scan ended (release: its patches done) */
    unsigned long long listed; /* dlpi_adds seen by the listing of the scan running */
    /* Scans that a dlsym or dlclose did not wait for (lock_within): the
     * program may call into a library before memtop hooks it.  Added to
     * outside the lock, read under it (seq_cst: note_gave_up); base: the
     * count when the last complete scan took the lock for its last time. */
    uint32_t giveups, giveups_base;
    /* The handles the scans hold (take_ref to release_ref): a program's
     * dlclose waits a little for them to be given back, so that its own is
     * the last (mt_alloc_close_begin).  Atomic: added to and taken from
     * outside the lock (release after a dlclose, acquire by the waiter). */
    uint32_t refs_out;
    /* Program dlcloses under way (mt_alloc_close_begin to _end): a scan
     * takes no reference meanwhile.  With refs_out, a Dekker pair (seq_cst
     * on both sides): a dlclose that sees no reference out, or a take_ref
     * that sees no dlclose under way, but never both to each other's loss. */
    uint32_t closing;
    module_ref batch[BATCH];
    struct {
        uint64_t bias, lo;
    } scanned[SCANNED_MAX];
    mt_shm_allocators found; /* found.seq unused */
    struct {
        uint64_t lo, hi;
    } where[MT_ALLOC_MAX]; /* the module of found.a[i] */
    char mi_owner[64];     /* the module whose mimalloc has memtop's mi_* slots; "": none yet */
    struct {               /* the symbols of the module a scan left to wait for the loader */
        bool valid;
        uint64_t bias, lo;
        char path[MT_PATH_MAX];
        mod_syms y;
    } read;
} g_alloc;

/* ---- listing the modules ---- */

static bool was_scanned(uint64_t bias, uint64_t lo)
{
    for (uint32_t i = 0; i < g_alloc.nscanned; i++)
        if (g_alloc.scanned[i].bias == bias && g_alloc.scanned[i].lo == lo)
            return true;
    return false;
}

static void range_of(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        *lo = a < *lo ? a : *lo;
        *hi = a + ph->p_memsz > *hi ? a + ph->p_memsz : *hi;
    }
}

/* dl_iterate_phdr callback: lists up to BATCH modules not scanned yet.
 * Copies names only: no file is touched with the loader's lock held. */
static int list_new(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    g_alloc.listed = info->dlpi_adds;
    uint64_t lo, hi;
    range_of(info, &lo, &hi);
    uint64_t self = (uint64_t)(uintptr_t)&mt_alloc_scan;
    if (self >= lo && self < hi) {
        g_alloc.self_lo = lo;
        g_alloc.self_hi = hi;
        return 0;
    }
    const char *name = info->dlpi_name;
    bool exe = !name || !*name;
    uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
    /* the vdso has no file; a library's name may be relative (dlopen
     * "./plugin.so"): it is opened relative to the current directory */
    if (hi == 0 || (vdso >= lo && vdso < hi) || was_scanned(info->dlpi_addr, lo))
        return 0;
    if (g_alloc.nbatch == BATCH) {
        g_alloc.batch_full = true;
        return 1;
    }
    module_ref *m = &g_alloc.batch[g_alloc.nbatch++];
    m->bias = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    m->exe = exe;
    /* the executable is read through /proc/self/exe, and named only if
     * it holds an allocator (scan_module): a readlink saved */
    snprintf(m->path, sizeof m->path, "%s", exe ? "" : name);
    if (g_alloc.nscanned < SCANNED_MAX) {
        g_alloc.scanned[g_alloc.nscanned].bias = m->bias;
        g_alloc.scanned[g_alloc.nscanned].lo = lo;
        MT_HINT_SET(g_alloc.nscanned, g_alloc.nscanned + 1);
    }
    return 0;
}

/* ---- reading one module's symbols ---- */

static void add_prefix(mod_syms *y, const char *name, size_t len, unsigned bit, uint64_t addr)
{
    jcand *c = NULL;
    for (unsigned i = 0; i < y->nje && !c; i++)
        if (strlen(y->je[i].prefix) == len && memcmp(y->je[i].prefix, name, len) == 0)
            c = &y->je[i];
    if (!c) {
        if (y->nje == PREFIXES)
            return;
        c = &y->je[y->nje++];
        memcpy(c->prefix, name, len);
        c->prefix[len] = '\0';
    }
    c->have |= bit;
    if (bit == 1)
        c->mallctl = addr;
}

/* Whether name can be one of the names on_sym looks for: mi_* and tc_*,
 * or at most PREFIX_MAX + 8 characters ending in "ctl" (P+mallctl), "ocx"
 * (P+mallocx, P+sdallocx) or "loc" (malloc,
 * PyObject_Malloc).  Every function of every module goes through here at
 * start, and few pass: this is most of the scan's cost in a short process
 * (ending in 'l' alone let libm's long double functions through). */
static bool may_match(const char *name)
{
    if ((name[0] == 'm' && name[1] == 'i' && name[2] == '_') ||
        (name[0] == 't' && name[1] == 'c' && name[2] == '_') ||
        (name[0] == 'M' && strcmp(name, "MallocExtension_GetNumericProperty") == 0))
        return true;
    size_t len = strnlen(name, PREFIX_MAX + 9);
    if (len < 6 || len > PREFIX_MAX + 8)
        return false;
    const char *e = name + len - 3;
    return (e[0] == 'c' && e[1] == 't' && e[2] == 'l') ||
           (e[0] == 'o' && e[1] == 'c' && e[2] == 'x') ||
           (e[0] == 'l' && e[1] == 'o' && e[2] == 'c');
}

/* The functions that give an allocator's own figures (alloc_stats.h). */
static void stats_sym(mod_syms *y, const mt_elf_sym *s)
{
    void *at = (void *)(uintptr_t)s->addr;
    if (!s->global)
        return;
    if (strcmp(s->name, "MallocExtension_GetNumericProperty") == 0)
        y->stats.tc_property = at;
    else if (strcmp(s->name, "tc_version") == 0)
        y->stats.tc_version = at;
    else if (strcmp(s->name, "mi_process_info") == 0)
        y->stats.mi_info = at;
    else if (strcmp(s->name, "mi_version") == 0)
        y->stats.mi_version = at;
    else if (strcmp(s->name, "mi_heap_visit_blocks") == 0)
        y->mi_visit = at;
    else if (strcmp(s->name, "mi_heap_get_backing") == 0)
        y->mi_backing = at;
    else if (strcmp(s->name, "mi_usable_size") == 0)
        y->mi_usable = at;
    else if (strcmp(s->name, "tc_malloc_size") == 0)
        y->tc_usable = at;
}

static void on_sym(void *arg, const mt_elf_sym *s)
{
    static const struct {
        const char *suffix;
        size_t len;
        unsigned bit;
    } je_sigs[] = {{"mallctl", 7, 1}, {"mallocx", 7, 2}, {"sdallocx", 8, 4}};
    if (!may_match(s->name))
        return;
    mod_syms *y = arg;
    size_t len = strlen(s->name);
    for (unsigned i = 0; i < sizeof je_sigs / sizeof je_sigs[0]; i++) {
        size_t n = je_sigs[i].len;
        if (len >= n && len - n <= PREFIX_MAX &&
            memcmp(s->name + len - n, je_sigs[i].suffix, n) == 0)
            add_prefix(y, s->name, len - n, je_sigs[i].bit, s->addr);
    }
    if (strcmp(s->name, "malloc") == 0)
        y->malloc_def = true;
    else if (strcmp(s->name, "mi_malloc") == 0)
        y->mi_malloc = true;
    else if (strcmp(s->name, "mi_free") == 0)
        y->mi_free = true;
    if (s->global && strncmp(s->name, "mi_", 3) == 0) { /* .symtab too: a linked-in one */
        int i = mt_patch_entry_index(mt_mi_entries, MT_MI_N, s->name);
        if (i >= 0) {
            y->mi_addr[i] = s->addr;
            y->mi_size[i] = s->size;
        }
        i = mt_patch_entry_index(mt_mi_heap_entries, MT_MI_HEAP_N, s->name);
        if (i >= 0) {
            y->mih_addr[i] = s->addr;
            y->mih_size[i] = s->size;
        }
    }
    if (s->global && strncmp(s->name, "tc_", 3) == 0) {
        int i = mt_patch_entry_index(mt_tc_entries, MT_TC_N, s->name);
        if (i >= 0) {
            y->tc_addr[i] = s->addr;
            y->tc_size[i] = s->size;
        }
    }
    stats_sym(y, s);
    if (strcmp(s->name, "tc_malloc") == 0)
        y->tc_malloc = true;
    else if (strcmp(s->name, "PyObject_Malloc") == 0)
        y->pymalloc = true;
}

/* Whether s is one of this jemalloc's named functions. */
static bool je_named(const je_code *c, const char *name)
{
    static const char *const entries[] = {"malloc",
                                          "calloc",
                                          "realloc",
                                          "free",
                                          "posix_memalign",
                                          "aligned_alloc",
                                          "memalign",
                                          "valloc",
                                          "pvalloc",
                                          "mallocx",
                                          "rallocx",
                                          "xallocx",
                                          "sallocx",
                                          "dallocx",
                                          "sdallocx",
                                          "nallocx",
                                          "mallctl",
                                          "mallctlnametomib",
                                          "mallctlbymib",
                                          "malloc_usable_size",
                                          "malloc_stats_print"};
    size_t pl = strlen(c->prefix);
    if (!*c->prefix && (strncmp(name, "_Znw", 4) == 0 || strncmp(name, "_Zna", 4) == 0 ||
                        strncmp(name, "_Zdl", 4) == 0 || strncmp(name, "_Zda", 4) == 0))
        return true;
    if (strncmp(name, "je_", 3) == 0)
        return true;
    if (strncmp(name, c->prefix, pl) != 0)
        return false;
    if (strncmp(name + pl, "je_", 3) == 0)
        return true;
    for (unsigned i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (strcmp(name + pl, entries[i]) == 0)
            return true;
    return false;
}

/* Second walk: the extent of the named functions. */
static void on_je_extent(void *arg, const mt_elf_sym *s)
{
    je_code *c = arg;
    if (!je_named(c, s->name))
        return;
    uint64_t end = s->addr + (s->size ? s->size : 1);
    c->lo = s->addr < c->lo ? s->addr : c->lo;
    c->hi = end > c->hi ? end : c->hi;
}

/* Third walk: the splits (sorted on insertion). */
static void on_je_split(void *arg, const mt_elf_sym *s)
{
    je_code *c = arg;
    if (!s->global || s->addr <= c->lo || s->addr >= c->hi || je_named(c, s->name))
        return;
    if (c->nsplit == JE_SPLITS) {
        c->overflow = true;
        return;
    }
    uint32_t i = c->nsplit++;
    while (i > 0 && c->split[i - 1] > s->addr) {
        c->split[i] = c->split[i - 1];
        i--;
    }
    c->split[i] = s->addr;
}

/* Fourth walk: the named functions' extent within each gap. */
static void on_je_span(void *arg, const mt_elf_sym *s)
{
    je_code *c = arg;
    if (!je_named(c, s->name))
        return;
    uint32_t g = 0;
    while (g < c->nsplit && c->split[g] <= s->addr)
        g++;
    uint64_t end = s->addr + (s->size ? s->size : 1);
    c->span_lo[g] = s->addr < c->span_lo[g] ? s->addr : c->span_lo[g];
    c->span_hi[g] = end > c->span_hi[g] ? end : c->span_hi[g];
}

/* ---- classifying ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool in_module(const module_ref *m, const void *addr)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    return a >= m->lo && a < m->hi;
}

/* Linked into the module rather than a shared library of its own. */
static bool linked_in(const module_ref *m, const char *family)
{
    return m->exe || !strstr(base_name(m->path), family);
}

/* Adds an entry for an allocator in module m (NULL: not known); an
 * inexact one is logged once, here. */
/* Whether memtop's free hands blocks to m's code: the sampled fast paths
 * call the real functions outside memtop (hook_libc.c: free's a tail
 * call), where a hook memtop put into that allocator (its hook API, a
 * redirected free, or free jumping to a redirected mi_free) would count
 * the call again.  The real free stands for the others (they come from
 * the same allocator). */
static bool real_free_in(const module_ref *m)
{
    uintptr_t f = (uintptr_t)mt_real.free;
    return m && (!f || (f >= m->lo && f < m->hi));
}

static void add_entry(uint32_t kind, uint32_t flags, const char *prefix, const module_ref *m,
                      const char *module, const char *note)
{
    mt_shm_allocators *f = &g_alloc.found;
    if (real_free_in(m))
        mt_real_fast_inside(); /* before any thread arms the fast paths */
    if (note && *note) {
        flags |= MT_ALLOC_INEXACT;
        mt_log(MT_LOG_WARN, "NOT exact: %s", note);
    }
    if (f->count == MT_ALLOC_MAX) {
        f->more++;
        MT_HINT_SET(f->inexact, f->inexact + ((flags & MT_ALLOC_INEXACT) != 0));
        return;
    }
    mt_shm_allocator *a = &f->a[f->count];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->flags = flags;
    snprintf(a->prefix, sizeof a->prefix, "%s", prefix ? prefix : "");
    snprintf(a->module, sizeof a->module, "%s", module);
    snprintf(a->note, sizeof a->note, "%s", note ? note : "");
    a->allocated = a->active = a->resident = a->mapped = a->before_hooks = MT_UNKNOWN;
    g_alloc.where[f->count].lo = m ? m->lo : 0;
    g_alloc.where[f->count].hi = m ? m->hi : 0;
    MT_HINT_SET(f->inexact, f->inexact + ((flags & MT_ALLOC_INEXACT) != 0)); /* read unlocked */
    f->count++; /* last: the publisher copies entries below count (under the lock anyway) */
}

/* An allocator family that memtop does not hook yet: what it misses. */
static void add_unhooked(uint32_t kind, const char *family, const char *prefix, const module_ref *m,
                         const char *own_api)
{
    char note[MT_ALLOC_NOTE_MAX];
    bool is_static = linked_in(m, family);
    bool reached = in_module(m, (const void *)mt_real.malloc);
    char pre[PREFIX_MAX + 8] = "";
    if (prefix)
        snprintf(pre, sizeof pre, " (%s)", *prefix ? prefix : "unprefixed");
    if (reached) /* memtop's malloc hook calls it: only its own API is unseen */
        snprintf(note, sizeof note, "%s's %s in %.96s not hooked", family, own_api,
                 base_name(m->path));
    else
        snprintf(note, sizeof note, "%s%s%s in %.128s not hooked",
                 is_static ? "statically linked " : "", family, pre, base_name(m->path));
    add_entry(kind, is_static ? MT_ALLOC_STATIC : 0, prefix, m, m->path, note);
}

/* The code whose frames a backtrace from inside this jemalloc drops:
 * the largest of its ranges (je_code) if there are more than fit. */
static void jemalloc_trim(const module_ref *m, const jcand *c, mt_trim *tr)
{
    memset(tr, 0, sizeof *tr);
    if (!linked_in(m, "jemalloc")) { /* a shared libjemalloc: all of it */
        tr->span[tr->n].lo = m->lo;
        tr->span[tr->n++].hi = m->hi;
        return;
    }
    static je_code code; /* 1.6 KiB: under the scan's lock */
    memset(&code, 0, sizeof code);
    code.prefix = c->prefix;
    code.lo = UINT64_MAX;
    const char *file = m->exe ? "/proc/self/exe" : m->path;
    mt_elf_each_func(file, m->bias, on_je_extent, &code);
    if (!code.hi)
        return;
    mt_elf_each_func(file, m->bias, on_je_split, &code);
    for (uint32_t g = 0; g <= code.nsplit; g++)
        code.span_lo[g] = UINT64_MAX;
    mt_elf_each_func(file, m->bias, on_je_span, &code);
    for (uint32_t g = 0; g <= code.nsplit; g++) {
        if (!code.span_hi[g])
            continue;
        uint32_t at = tr->n;
        if (at == MT_TRIM_SPANS) { /* keep the largest ones */
            at = 0;
            for (uint32_t i = 1; i < tr->n; i++)
                if (tr->span[i].hi - tr->span[i].lo < tr->span[at].hi - tr->span[at].lo)
                    at = i;
            if (code.span_hi[g] - code.span_lo[g] <= tr->span[at].hi - tr->span[at].lo)
                continue;
        } else {
            tr->n++;
        }
        tr->span[at].lo = code.span_lo[g];
        tr->span[at].hi = code.span_hi[g];
    }
}

/* A hooked allocator's module stays loaded for good: memtop's hooks jump
 * into its trampolines and the publisher calls its statistics.  (The
 * executable needs nothing.)  Done by release_ref, after the scan's lock
 * is released: dlopen waits for the loader's lock, and the scan never
 * holds its own while it waits for that one (scan). */
static void pin(const module_ref *m)
{
    if (m->ref)
        m->ref->pin = true;
    mt_nested_code_add(m->lo, m->hi); /* its calls from inside a real call are its own */
}

/* The module's code, known to hook_nested.h as an allocator's before its
 * entries are redirected: the other threads run again as soon as they
 * are, and an entry's call into another (or into libc's names) from inside
 * memtop's real call is its own from the first (pin comes after the
 * redirect, and only if it took).  Left listed if nothing is hooked: an
 * address range, only ever asked about calls made inside a real call. */
static void code_early(const module_ref *m)
{
    mt_nested_code_add(m->lo, m->hi);
}

/* Redirects a jemalloc's entry points (alloc_je_redirect.c) unless told
 * not to (MEMTOP_TEST_JE_HOOK_API, for tests of the fallback). */
static mt_je_redirected redirect_jemalloc(const module_ref *m, const jcand *c, char *why,
                                          size_t cap)
{
    if (mt_g.cfg.test_je_hook_api) {
        snprintf(why, cap, "MEMTOP_TEST_JE_HOOK_API is set");
        return MT_JE_NOT_REDIRECTED;
    }
    return mt_je_redirect(m->exe ? "/proc/self/exe" : m->path, m->bias, c->prefix, why, cap);
}

/* A jemalloc: its entry points redirected, else (or for those that could
 * not be) hooked through its mallctl (alloc_jemalloc.c); or said not. */
static void hook_jemalloc(const module_ref *m, const jcand *c)
{
    mt_shm_allocator a;
    memset(&a, 0, sizeof a);
    a.before_hooks = MT_UNKNOWN;
    uint32_t index = g_alloc.found.count;
    mt_mallctl_fn mallctl = (mt_mallctl_fn)(uintptr_t)c->mallctl;
    mt_je_version(mallctl, &a);
    char why[160] = "";
    code_early(m);
    mt_je_redirected r = redirect_jemalloc(m, c, why, sizeof why);
    mt_trim tr;
    memset(&tr, 0, sizeof tr);
    if (r != MT_JE_REDIRECTED)
        jemalloc_trim(m, c, &tr);
    bool is_static = linked_in(m, "jemalloc");
    uint32_t flags =
        (is_static ? MT_ALLOC_STATIC : 0) | (r == MT_JE_REDIRECTED ? MT_ALLOC_REDIRECTED : 0);
    const char *pre = *c->prefix ? c->prefix : "unprefixed";
    if (!mt_je_install(mallctl, &tr, index, &a, r != MT_JE_REDIRECTED)) {
        if (!a.note[0])
            snprintf(a.note, sizeof a.note, "jemalloc in %.128s not hooked", base_name(m->path));
        if (r != MT_JE_NOT_REDIRECTED) /* some entries redirected: pinned, NOT exact anyway */
            pin(m);
        add_entry(MT_ALLOC_KIND_JEMALLOC, flags, c->prefix, m, m->path, a.note);
    } else {
        pin(m);
        add_entry(MT_ALLOC_KIND_JEMALLOC, MT_ALLOC_HOOKED | flags, c->prefix, m, m->path, NULL);
        if (r == MT_JE_REDIRECTED)
            mt_je_fast_direct(); /* the fast paths skip the entries' pass-through */
        if (r == MT_JE_REDIRECTED)
            mt_log(MT_LOG_INFO, "hooked jemalloc %s (%s) in %s: entry points redirected", a.version,
                   pre, m->path);
        else
            mt_log(MT_LOG_INFO, "hooked jemalloc %s (%s) in %s through its hook API (%s)",
                   a.version, pre, m->path, why);
    }
    if (g_alloc.found.count > index) { /* it has an entry (the list was not full) */
        mt_shm_allocator *e = &g_alloc.found.a[index];
        memcpy(e->version, a.version, sizeof a.version);
        e->before_hooks = a.before_hooks;
    }
}

/* The allocator's own figures, for the entry just added (if it was). */
static void add_stats(uint32_t kind, uint32_t index, const mod_syms *y)
{
    if (index < g_alloc.found.count)
        mt_alloc_stats_add(kind, index, &y->stats, &g_alloc.found.a[index]);
}

/* The name of a mimalloc entry: k < MT_MI_N in mt_mi_entries, the rest
 * in mt_mi_heap_entries (hook_mimalloc's order). */
static const char *mi_entry_name(int k)
{
    return k < MT_MI_N ? mt_mi_entries[k].name : mt_mi_heap_entries[k - MT_MI_N].name;
}

/* Whether m's mimalloc may have memtop's mi_* slots, which are one set:
 * the redirect stores its trampolines there, and memtop's definitions
 * called by name (alloc_mimalloc.c) call what they hold.  The first
 * mimalloc found has them, unless calls to mi_malloc by name reach
 * another one (a mimalloc hidden in a module beside a libmimalloc that
 * exports them): those calls would then reach the wrong allocator.  A
 * second one is not redirected, and says so.  *named: memtop's
 * definitions are reached by name for m's mimalloc (interposition; not
 * for one in the executable, whose definitions come first). */
static bool mi_claim(const module_ref *m, const char *what, bool *named, char *note, size_t cap)
{
    const char *name = base_name(m->path);
    if (g_alloc.mi_owner[0]) {
        snprintf(note, cap, "%s in %.48s not hooked (memtop hooks one mimalloc: the one in %.48s)",
                 what, name, g_alloc.mi_owner);
        return false;
    }
    void *f = mt_loaded_sym("mi_malloc");
    if (f && !in_module(m, f)) {
        snprintf(note, cap, "%s in %.64s not hooked (mi_malloc by name is another mimalloc's)",
                 what, name);
        return false;
    }
    *named = f && !m->exe;
    snprintf(g_alloc.mi_owner, sizeof g_alloc.mi_owner, "%.63s", name);
    return true;
}

/* A mimalloc, shared (libmimalloc.so) or linked into a module (the Rust
 * mimalloc crate, a static link): its entry points are redirected to
 * alloc_mimalloc.c's and alloc_mimalloc_heap.c's definitions (alloc_patch.c:
 * before the program's threads exist, or with them stopped;
 * docs/allocators.md), which also see the calls by name through the PLT
 * where it exports them.  Its malloc, free and C++ operators, when it
 * overrides them, are aliases of its mi_* functions or call them. */
static void hook_mimalloc(const module_ref *m, const mod_syms *y)
{
    static mt_patch patch[MT_MI_N + MT_MI_HEAP_N]; /* under the scan's lock */
    int at[MT_MI_N + MT_MI_HEAP_N];
    bool is_static = linked_in(m, "mimalloc"), named = false;
    const char *what = is_static ? "statically linked mimalloc" : "mimalloc";
    uint32_t flags = is_static ? MT_ALLOC_STATIC : 0, index = g_alloc.found.count;
    char note[MT_ALLOC_NOTE_MAX] = "";
    pin(m); /* always: hook_loaded_sym.c's lookups may have kept its addresses in memtop's slots */
    if (!mi_claim(m, what, &named, note, sizeof note)) {
        add_entry(MT_ALLOC_KIND_MIMALLOC, flags, NULL, m, m->path, note);
        add_stats(MT_ALLOC_KIND_MIMALLOC, index, y);
        return;
    }
    mt_mi_heap_helpers(y->mi_visit, y->mi_backing);
    mt_mi_usable_size_set(y->mi_usable);
    size_t n = mt_patch_entries(mt_mi_entries, MT_MI_N, y->mi_addr, y->mi_size, patch, at);
    size_t nh = mt_patch_entries(mt_mi_heap_entries, MT_MI_HEAP_N, y->mih_addr, y->mih_size,
                                 patch + n, at + n);
    for (size_t k = n; k < n + nh; k++)
        at[k] += MT_MI_N;
    n += nh;
    mt_patch_all(patch, n, false);
    size_t bad = n;
    for (size_t k = 0; k < n && bad == n; k++)
        if (!patch[k].done)
            bad = k;
    if (n == 0)
        snprintf(note, sizeof note, "%s in %.64s not hooked (no mi_* function to redirect)", what,
                 base_name(m->path));
    else if (bad < n)
        snprintf(note, sizeof note, "%s in %.40s: direct calls to %.28s not hooked (%.56s)", what,
                 base_name(m->path), mi_entry_name(at[bad]), patch[bad].why);
    else
        mt_log(MT_LOG_INFO, "redirected %zu mi_* entry points in %s", n, m->path);
    if (n > 0 && bad == n)
        flags |= MT_ALLOC_HOOKED | MT_ALLOC_REDIRECTED;
    else if (named) /* its calls through the PLT reach memtop's definitions */
        flags |= MT_ALLOC_HOOKED;
    add_entry(MT_ALLOC_KIND_MIMALLOC, flags, NULL, m, m->path, note);
    add_stats(MT_ALLOC_KIND_MIMALLOC, index, y);
}

/* A tcmalloc, linked in or shared: hooked by redirecting its tc_*
 * entry points (alloc_tcmalloc.c), whose aliases are malloc, free and
 * the C++ operators (before the program's threads exist, or with them
 * stopped; docs/allocators.md). */
static void hook_tcmalloc(const module_ref *m, const mod_syms *y)
{
    static mt_patch patch[MT_TC_N]; /* under the scan's lock */
    int at[MT_TC_N];
    size_t n = mt_patch_entries(mt_tc_entries, MT_TC_N, y->tc_addr, y->tc_size, patch, at);
    bool is_static = linked_in(m, "tcmalloc");
    uint32_t flags = is_static ? MT_ALLOC_STATIC : 0;
    if (n == 0) {
        add_unhooked(MT_ALLOC_KIND_TCMALLOC, "tcmalloc", NULL, m,
                     "tc_* functions and operator new/delete");
        return;
    }
    code_early(m);
    mt_tc_usable_size_set(y->tc_usable); /* before a redirected entry can run */
    bool any = mt_patch_all(patch, n, false);
    if (any)
        pin(m);
    uint32_t index = g_alloc.found.count;
    for (size_t k = 0; k < n; k++)
        if (!patch[k].done) {
            char note[MT_ALLOC_NOTE_MAX];
            snprintf(note, sizeof note, "%stcmalloc in %.48s: %.28s not hooked (%.60s)",
                     is_static ? "statically linked " : "", base_name(m->path),
                     mt_tc_entries[at[k]].name, patch[k].why);
            add_entry(MT_ALLOC_KIND_TCMALLOC, flags, NULL, m, m->path, note);
            add_stats(MT_ALLOC_KIND_TCMALLOC, index, y);
            return;
        }
    add_entry(MT_ALLOC_KIND_TCMALLOC, MT_ALLOC_HOOKED | MT_ALLOC_REDIRECTED | flags, NULL, m,
              m->path, NULL);
    add_stats(MT_ALLOC_KIND_TCMALLOC, index, y);
    mt_log(MT_LOG_INFO, "redirected %zu tc_* entry points in %s", n, m->path);
}

static bool pymalloc_off(void)
{
    const char *v = getenv("PYTHONMALLOC");
    return v && (strcmp(v, "malloc") == 0 || strcmp(v, "malloc_debug") == 0);
}

static void classify(const module_ref *m, const mod_syms *y)
{
    bool family = false;
    for (unsigned i = 0; i < y->nje; i++)
        if (y->je[i].have == 7) {
            hook_jemalloc(m, &y->je[i]);
            family = true;
        }
    if (y->mi_malloc && y->mi_free) {
        hook_mimalloc(m, y);
        family = true;
    }
    if (y->tc_malloc) {
        hook_tcmalloc(m, y);
        family = true;
    }
    if (y->pymalloc && !pymalloc_off()) {
        char note[MT_ALLOC_NOTE_MAX];
        snprintf(
            note, sizeof note,
            "CPython's pymalloc in %.64s hides small allocations (run with PYTHONMALLOC=malloc)",
            base_name(m->path));
        add_entry(MT_ALLOC_KIND_PYMALLOC, MT_ALLOC_STATIC, NULL, m, m->path, note);
    }
    if (!y->malloc_def || family)
        return;
    if (in_module(m, (const void *)mt_real.malloc)) {
        add_entry(MT_ALLOC_KIND_OTHER, MT_ALLOC_HOOKED, NULL, m, m->path, NULL);
        return;
    }
    char note[MT_ALLOC_NOTE_MAX];
    snprintf(note, sizeof note, "%.150s defines its own malloc (not hooked)", base_name(m->path));
    add_entry(MT_ALLOC_KIND_OTHER, MT_ALLOC_STATIC, NULL, m, m->path, note);
}

/* Whether classify calls into the module (hooks, redirects, figures). */
static bool calls_into(const mod_syms *y)
{
    for (unsigned i = 0; i < y->nje; i++)
        if (y->je[i].have == 7)
            return true;
    return (y->mi_malloc && y->mi_free) || y->tc_malloc;
}

/* A module that went away before it was scanned: a later load at the same
 * place is another module. */
static void forget(const module_ref *m)
{
    for (uint32_t i = 0; i < g_alloc.nscanned; i++)
        if (g_alloc.scanned[i].bias == m->bias && g_alloc.scanned[i].lo == m->lo) {
            g_alloc.scanned[i] = g_alloc.scanned[g_alloc.nscanned - 1];
            MT_HINT_SET(g_alloc.nscanned, g_alloc.nscanned - 1);
            return;
        }
}

static const char *kind_name(uint32_t kind)
{
    return kind == MT_ALLOC_KIND_JEMALLOC   ? "jemalloc"
           : kind == MT_ALLOC_KIND_TCMALLOC ? "tcmalloc"
           : kind == MT_ALLOC_KIND_MIMALLOC ? "mimalloc"
                                            : "allocator";
}

/* An allocator hooked late (in a library loaded after the first scan)
 * whose own figures say the program already held blocks from it: its
 * constructors ran inside dlopen, before any scan could hook it, and so
 * may other threads' calls until the scan: those blocks are in no trace. */
/* Marks allocator a of module m NOT exact, its note "KIND (PREFIX) in
 * FILE: why". */
static void mark_late_inexact(mt_shm_allocator *a, const module_ref *m, const char *why)
{
    char pre[PREFIX_MAX + 4] = "";
    if (a->prefix[0])
        snprintf(pre, sizeof pre, " (%s)", a->prefix);
    snprintf(a->note, sizeof a->note, "%s%s in %.96s: %s", kind_name(a->kind), pre,
             base_name(m->path), why);
    a->flags |= MT_ALLOC_INEXACT;
    MT_HINT_SET(g_alloc.found.inexact, g_alloc.found.inexact + 1);
}

static void note_unseen(const module_ref *m, uint32_t from)
{
    for (uint32_t i = from; i < g_alloc.found.count; i++) {
        mt_shm_allocator *a = &g_alloc.found.a[i];
        if (!(a->flags & MT_ALLOC_HOOKED) || (a->flags & MT_ALLOC_INEXACT) ||
            a->before_hooks == MT_UNKNOWN || a->before_hooks == 0)
            continue;
        char why[64];
        snprintf(why, sizeof why, "%llu bytes allocated before memtop hooked it",
                 (unsigned long long)a->before_hooks);
        mark_late_inexact(a, m, why);
        mt_log(MT_LOG_WARN, "NOT exact: %s", a->note);
    }
}

/* Whether m is a module no allocator can be in, whose file is therefore
 * not read (each read costs a short process ~3-5 page faults and five
 * system calls: docs/performance.md, "Fifth round" and "Sixth round"):
 * - glibc's libc.so.6: none of the signatures, and its own malloc is the
 *   one memtop hooks by interposition (the one place its malloc is set
 *   aside here);
 * - the dynamic loader (the module at AT_BASE: glibc's, which exports no
 *   malloc since 2.26 -- memtop needs glibc >= 2.35 anyway);
 * - libmemtop.so's own dependencies, libunwind and liblzma: a module named
 *   so that holds the very function memtop calls in it.
 * The executable is always read. */
/* libmemtop.so's own dependencies, libunwind and liblzma (see below) */
static bool own_dependency(const module_ref *m)
{
    const char *b = base_name(m->path);
    return (strncmp(b, "libunwind.so", 12) == 0 && in_module(m, mt_libunwind_entry())) ||
           (strncmp(b, "liblzma.so", 10) == 0 && in_module(m, mt_elf_lzma_entry()));
}

static bool allocator_free(const module_ref *m)
{
    if (m->exe)
        return false;
    uint64_t loader = getauxval(AT_BASE);
    return mt_path_is_libc(m->path) || (loader && m->bias == loader) || own_dependency(m);
}

/* An allocator hooked late (as note_unseen) while a dlsym or dlclose had
 * not waited for the scans (lock_within) since the last complete scan
 * began: the program may have called it, through a pointer that dlsym
 * gave or by name, before memtop hooked it (mimalloc and a linked-in
 * jemalloc keep no count that would say how much).  Read after the hooks
 * are in (seq_cst, as the give-up's add): a give-up this load does not
 * see was counted after it, so after the hooks went in.  What makes that
 * caller's later calls reach the hooks is not this ordering but the
 * redirect's stop of the other threads (alloc_stop.c: each thread's
 * handshake with the stopping one orders the rewritten code before
 * whatever it runs next); the seq_cst pair only makes the count and the
 * hooks agree on which give-ups came first. */
static void note_gave_up(const module_ref *m, uint32_t from)
{
    if (__atomic_load_n(&g_alloc.giveups, __ATOMIC_SEQ_CST) == g_alloc.giveups_base)
        return;
    for (uint32_t i = from; i < g_alloc.found.count; i++) {
        mt_shm_allocator *a = &g_alloc.found.a[i];
        if (!(a->flags & MT_ALLOC_HOOKED) || (a->flags & MT_ALLOC_INEXACT))
            continue;
        mark_late_inexact(a, m, "calls before memtop hooked it were not seen");
        mt_log(MT_LOG_WARN, "NOT exact: %s (a dlsym or dlclose did not wait for the scan)",
               a->note);
    }
}

/* The reference this scan took for the module at (bias, lo), if any. */
static loaded_ref *ref_of(scan_refs *refs, uint64_t bias, uint64_t lo)
{
    for (uint32_t i = 0; i < refs->n; i++)
        if (refs->r[i].bias == bias && refs->r[i].lo == lo)
            return &refs->r[i];
    return NULL;
}

/* m's symbols: those read before the scan left m to wait for the loader
 * (g_alloc.read), else from its file.  False: nothing to read. */
static bool read_syms(const module_ref *m, mod_syms *y)
{
    if (g_alloc.read.valid && g_alloc.read.bias == m->bias && g_alloc.read.lo == m->lo &&
        strcmp(g_alloc.read.path, m->path) == 0) {
        g_alloc.read.valid = false;
        *y = g_alloc.read.y;
        return true;
    }
    memset(y, 0, sizeof *y);
    return mt_elf_each_func(m->exe ? "/proc/self/exe" : m->path, m->bias, on_sym, y);
}

/* Scans one module; false: memtop would call into it (classify), and no
 * reference of this scan shows it completely loaded yet.  dl_iterate_phdr
 * lists a library from the moment it is mapped, before its relocations,
 * while another thread's dlopen runs -- and until that dlopen fails, if it
 * does (libjemalloc's "cannot allocate memory in static TLS block"): a
 * call into it then jumps through an unrelocated GOT.  The caller then
 * takes a reference with dlopen(RTLD_NOLOAD) outside the scan's lock
 * (take_ref), which waits for the loader's lock, and scans m again. */
/* The C and C++ runtimes (libc, the loader, libstdc++, libgcc_s, libc++),
 * and memtop's own dependencies (libunwind, liblzma: what they allocate
 * while memtop's own work runs, MT_IN_OWN, is memtop's, hook_nested.h):
 * an allocator calls into them (operator new throwing bad_alloc allocates
 * its exception object in libstdc++), so a call they make into an
 * allocator's entry from inside memtop's real call is the allocator's own
 * (hook_nested.h).  They are not unloaded in practice. */
static void note_runtime(const module_ref *m)
{
    static const char *const names[] = {"libstdc++.so", "libgcc_s.so", "libc++.so", "libc++abi.so"};
    if (m->exe)
        return;
    const char *b = base_name(m->path);
    uint64_t loader = getauxval(AT_BASE);
    bool runtime = mt_path_is_libc(m->path) || (loader && m->bias == loader) || own_dependency(m);
    for (size_t i = 0; i < sizeof names / sizeof *names && !runtime; i++)
        runtime = strncmp(b, names[i], strlen(names[i])) == 0;
    if (runtime)
        mt_nested_runtime_add(m->lo, m->hi);
}

static bool scan_module(module_ref *m, scan_refs *refs)
{
    note_runtime(m);
    if (allocator_free(m))
        return true;
    mod_syms y;
    if (!read_syms(m, &y))
        return true;
    if (!calls_into(&y) && !y.malloc_def && !y.pymalloc)
        return true; /* nothing classify would report */
    if (m->exe)
        mt_proc_exe(m->path, sizeof m->path);
    m->ref = NULL;
    if (calls_into(&y) && !m->exe) {
        loaded_ref *r = ref_of(refs, m->bias, m->lo);
        if (!r || (!r->h && r->adds != g_alloc.listed)) { /* none; or taken before a load */
            g_alloc.read.valid = true;
            g_alloc.read.bias = m->bias;
            g_alloc.read.lo = m->lo;
            memcpy(g_alloc.read.path, m->path, sizeof m->path);
            g_alloc.read.y = y;
            return false;
        }
        /* Listed now, and nothing loaded since before the dlopen that found
         * no library by its name (take_ref reads the count first: a dlopen
         * that failed after mapping it and another that mapped it again
         * meanwhile count as loads): loaded, yet dlopen does not find it
         * by the name dl_iterate_phdr gives (a relative name from another
         * directory, say).  (dl_iterate_phdr lists the caller's namespace
         * only: not another namespace's modules.) */
        if (!r->h) {
            char note[MT_ALLOC_NOTE_MAX];
            snprintf(note, sizeof note,
                     "allocator in %.64s not checked (listed, but dlopen does not find it by "
                     "its name)",
                     base_name(m->path));
            add_entry(MT_ALLOC_KIND_OTHER, 0, NULL, m, m->path, note);
            return true;
        }
        m->ref = r;
    }
    uint32_t from = g_alloc.found.count;
    classify(m, &y);
    if (m->ref)
        m->ref->classified = true;
    if (g_alloc.started) {
        note_unseen(m, from);
        note_gave_up(m, from);
    }
    return true;
}

/* malloc must resolve to memtop's hook, or into an allocator memtop
 * hooks otherwise; if it does not and no entry explains why, say where it
 * goes. */
static void check_resolution(void)
{
    if (g_alloc.resolve_checked || !g_alloc.self_hi)
        return;
    g_alloc.resolve_checked = true;
    void *r = dlsym(RTLD_DEFAULT, "malloc");
    mt_dl_forget_error();
    uint64_t a = (uint64_t)(uintptr_t)r;
    if (!r || (a >= g_alloc.self_lo && a < g_alloc.self_hi))
        return;
    for (uint32_t i = 0; i < g_alloc.found.count; i++)
        if ((g_alloc.found.a[i].flags & (MT_ALLOC_INEXACT | MT_ALLOC_HOOKED)) &&
            a >= g_alloc.where[i].lo && a < g_alloc.where[i].hi)
            return; /* already said, or hooked there (a linked-in jemalloc) */
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    int found = dladdr1(r, &di, (void **)&sym, RTLD_DL_SYMENT);
    /* A non-PIE executable that takes malloc's address makes its PLT entry
     * malloc's canonical address (an undefined symbol with a value, e.g.
     * Debian's python3.11): dlsym returns that stub, which jumps through
     * the GOT to memtop's hook.  Only a defined malloc is another one. */
    if (found && sym && sym->st_shndx == SHN_UNDEF)
        return;
    const char *where = found && di.dli_fname && *di.dli_fname ? di.dli_fname : NULL;
    char exe[MT_PATH_MAX];
    if (!where || !strchr(where, '/')) { /* the main program */
        mt_proc_exe(exe, sizeof exe);
        where = exe;
    }
    char note[MT_ALLOC_NOTE_MAX];
    snprintf(note, sizeof note, "malloc resolves to %.128s, not to memtop's hook",
             base_name(where));
    add_entry(MT_ALLOC_KIND_OTHER, 0, NULL, NULL, where, note);
}

/* One nap of 100 us of a wait bounded by ns: false, without a nap, once
 * *waited (the naps so far, in ns) has reached ns.  The bounded waits of a
 * program's dlsym or dlclose for the scans. */
static bool patient_nap(int64_t *waited, int64_t ns)
{
    if (*waited >= ns)
        return false;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
    *waited += 100000;
    return true;
}

/* Takes the scan's lock unless another thread holds it for longer than
 * ns.  No scan waits for the loader's lock while it holds this one
 * (scan), so a caller inside a dlopen's constructors (which holds
 * the loader's lock) is not what the patience is for; it bounds what
 * remains: a scan that takes long (a big module's symbols, a stop of the
 * other threads), the first scan's dlsym and dladdr (check_resolution).
 * A caller inside dl_iterate_phdr does not wait at all: the holder's
 * listing waits for the lock that caller holds. */
static bool lock_within(int64_t ns)
{
    for (int64_t waited = 0; !mt_spin_trylock(&g_alloc.lock);)
        if (mt_tls_dl_depth || !patient_nap(&waited, ns))
            return false;
    return true;
}

/* Sleeps ms milliseconds (the test knobs: core_config.h). */
static void test_nap(uint32_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Counts a reference about to be taken, once no program dlclose is under
 * way (one that began after this count waits for it: mt_alloc_close_begin),
 * waiting for one at most SCAN_PATIENCE_NS: a dlopen(RTLD_NOLOAD) between
 * a program's wait for the references and its real dlclose would keep the
 * library loaded past that dlclose, for the scan's to unload on its
 * thread.  False if a dlclose stayed under way (no reference then: the
 * next listing, without the library if it went, decides). */
static bool reserve_ref(void)
{
    for (int64_t waited = 0;;) {
        __atomic_fetch_add(&g_alloc.refs_out, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&g_alloc.closing, __ATOMIC_SEQ_CST))
            return true;
        __atomic_fetch_sub(&g_alloc.refs_out, 1, __ATOMIC_RELEASE);
        if (!patient_nap(&waited, SCAN_PATIENCE_NS))
            return false;
    }
}

/* Takes a reference to the library listed at (bias, lo) by its path, outside the
 * scan's lock: dlopen with RTLD_NOLOAD waits for the loader's lock, which
 * a dlopen in another thread holds to its end -- or takes it at once,
 * recursively, on the thread running that dlopen (a dlsym in a
 * constructor: after the relocations).  A handle whose library is not the
 * one at m's place (another found by that name) is given back.  The
 * decoder that redirecting the module's entry points needs is loaded here
 * too, for the same reason. */
static void take_ref(scan_refs *refs, const char *path, uint64_t bias, uint64_t lo, bool publisher)
{
    loaded_ref *r = ref_of(refs, bias, lo); /* one that found nothing, before a load: again */
    if (!r)
        r = &refs->r[refs->n++]; /* a new slot: what it holds is the stack's, not a handle */
    else
        assert(!r->h); /* a handle shows the module loaded: scan_module never waits again */
    memset(r, 0, sizeof *r);
    r->bias = bias;
    r->lo = lo;
    if (publisher && mt_g.cfg.test_scan_loader_wait_ms)
        test_nap(mt_g.cfg.test_scan_loader_wait_ms);
#if defined(__x86_64__)
    mt_patch_load_decoder(); /* its dlopen too: the redirect will need it */
#endif
    /* Before the dlopen: a library whose dlopen fails after mapping it
     * (static TLS) may be mapped again at the same place by another
     * thread's dlopen before this one returns; read after, the count would
     * include that load, and scan_module would take the module found again
     * for one dlopen cannot find by its name. */
    r->adds = mt_loaded_adds();
    if (!reserve_ref()) {
        r->adds = ~0ull; /* not tried: scan_module asks for a reference again */
        return;
    }
    r->h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!r->h)
        __atomic_fetch_sub(&g_alloc.refs_out, 1, __ATOMIC_RELEASE);
    struct link_map *lm = NULL;
    if (r->h && (dlinfo(r->h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || (uint64_t)lm->l_addr != bias)) {
        dlclose(r->h); /* memtop's wrapper, inside memtop: passed on */
        r->h = NULL;
        __atomic_fetch_sub(&g_alloc.refs_out, 1, __ATOMIC_RELEASE);
    }
    if (!r->h)
        mt_dl_forget_error();
}

/* Gives one reference back, pinning its module first if classify pinned
 * it (pin): outside the scan's lock, as it was taken.  If the pin fails,
 * the reference is kept for good instead (never given back): the module
 * may be hooked, and must not go away. */
static void release_ref(loaded_ref *r)
{
    struct link_map *lm = NULL;
    if (!r->h)
        return;
    if (r->pin && (dlinfo(r->h, RTLD_DI_LINKMAP, &lm) != 0 || !lm ||
                   !dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))) {
        mt_dl_forget_error();
        mt_log(MT_LOG_WARN, "could not pin a hooked allocator's library: its reference is kept");
    } else {
        dlclose(r->h);
    }
    r->h = NULL;
    __atomic_fetch_sub(&g_alloc.refs_out, 1, __ATOMIC_RELEASE);
}

/* Gives back the references whose modules the last pass classified, as
 * soon as it ends, so that a program's last dlclose of such a library
 * (one memtop did not hook: not pinned) unloads it on the program's
 * thread, but in the short time between a listing and this release; the
 * others are kept for the passes to come. */
static void release_classified(scan_refs *refs)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < refs->n; i++) {
        if (refs->r[i].classified)
            release_ref(&refs->r[i]);
        else
            refs->r[kept++] = refs->r[i];
    }
    refs->n = kept;
}

/* Gives all the references back (the scan's end, or no room left). */
static void release_refs(scan_refs *refs)
{
    for (uint32_t i = 0; i < refs->n; i++)
        release_ref(&refs->r[i]);
    refs->n = 0;
}

/* One hold of the scan's lock: lists the modules not scanned yet and
 * scans them, until one must wait for the loader (scan_module); that one
 * and the rest of its batch are forgotten, to be listed again.  Returns
 * false and sets *wait to that module then.  first: the scan's first hold
 * (MEMTOP_TEST_SCAN_HOLD_MS holds the publisher's there). */
static bool scan_pass(scan_refs *refs, module_ref *wait, bool first)
{
    do {
        g_alloc.nbatch = 0;
        g_alloc.batch_full = false;
        mt_loader_iterate(list_new, NULL); /* a fork waits for it: core_loader_gate.c */
        if (first && g_alloc.publisher && g_alloc.nbatch && mt_g.cfg.test_scan_hold_ms)
            test_nap(mt_g.cfg.test_scan_hold_ms);
        for (uint32_t i = 0; i < g_alloc.nbatch; i++)
            if (!scan_module(&g_alloc.batch[i], refs)) {
                *wait = g_alloc.batch[i];
                for (uint32_t j = i; j < g_alloc.nbatch; j++)
                    forget(&g_alloc.batch[j]);
                return false;
            }
    } while (g_alloc.batch_full);
    return true;
}

/* A dlsym or dlclose that goes on without the scan: counted, so that an
 * allocator the next scans hook late says its calls until then were not
 * seen (note_gave_up).  seq_cst: see there. */
static void gave_up(void)
{
    __atomic_fetch_add(&g_alloc.giveups, 1, __ATOMIC_SEQ_CST);
    mt_log(MT_LOG_INFO, "a dlsym or dlclose did not wait for the allocator scan");
}

/* The scan never waits for the loader's lock while it holds its own: a
 * dlsym called right after a dlopen returned (which does not hold the
 * loader's lock) then always waits for a scan running in another thread
 * and returns only after the new library's allocator is hooked, while a
 * dlsym or dlclose called inside a dlopen's constructors (which does) is
 * not made to wait for a scan that waits for it.  A module that must be
 * shown loaded first (scan_module) is forgotten, the lock released, a
 * reference taken (take_ref), and the lock taken again: any scan running
 * meanwhile lists that module again and does the same, so none ends
 * before it is hooked.  (Before, the scan waited for the loader's lock
 * holding its own, and a dlsym that found it so gave up at once: it could
 * not tell whether its own thread held the loader's lock; the program's
 * dlsym right after its dlopen then called the new libmimalloc unseen,
 * 1 run in 20, while the snapshot said exact.)  It waits (nanosleep), reads
 * modules (open, close), dlopens and dlcloses and may stop the world: with
 * the thread's cancellation disabled (core_nocancel.h, mt_alloc_scan). */
__attribute__((noinline)) static void scan(bool busy_ok)
{
    void *program_error = mt_dl_error_stash(); /* core_dlerror.h */
    bool publisher = !busy_ok && __atomic_load_n(&g_alloc.started, __ATOMIC_RELAXED);
    scan_refs refs;
    refs.n = 0;
    bool done = false;
    for (unsigned pass = 0; pass < SCAN_PASSES && !done; pass++) {
        if (busy_ok && !lock_within(SCAN_PATIENCE_NS))
            break; /* that scan, or the publisher's next poll, sees the new modules */
        if (!busy_ok)
            mt_spin_lock(&g_alloc.lock);
        g_alloc.publisher = publisher;
        uint32_t giveups = __atomic_load_n(&g_alloc.giveups, __ATOMIC_SEQ_CST);
        module_ref wait;
        done = scan_pass(&refs, &wait, pass == 0);
        if (done) {
            check_resolution();
            MT_HINT_SET(g_alloc.started, true);
            g_alloc.giveups_base = giveups;
            /* Only now: a dlsym that finds nothing new must not return while
             * a scan it raced with is still redirecting the new library's
             * entry points. */
            __atomic_store_n(&g_alloc.adds, g_alloc.listed, __ATOMIC_RELEASE);
        }
        mt_spin_unlock(&g_alloc.lock);
        release_classified(&refs);
        if (!done) {
            if (refs.n == REFS && !ref_of(&refs, wait.bias, wait.lo))
                release_refs(&refs);
            take_ref(&refs, wait.path, wait.bias, wait.lo, publisher);
        }
    }
    release_refs(&refs);
    if (busy_ok && !done)
        gave_up();
    mt_dl_error_restore(program_error);
}

void mt_alloc_scan(bool busy_ok)
{
    unsigned long long adds = mt_loaded_adds();
    if (__atomic_load_n(&g_alloc.nscanned, __ATOMIC_RELAXED) &&
        adds == __atomic_load_n(&g_alloc.adds, __ATOMIC_ACQUIRE))
        return; /* nothing loaded since the last scan ended (the common case: a cheap check) */
    int cancel = mt_nocancel_begin();
    scan(busy_ok); /* not inlined: this check's frame stays small (every dlsym) */
    mt_nocancel_end(cancel);
}

void mt_alloc_publish(mt_shm_header *h)
{
    if (!mt_spin_trylock(&g_alloc.lock))
        return; /* a scan runs: next publish */
    /* the figures kept before the publish lock: no allocator called here */
    mt_je_fill(&g_alloc.found);
    mt_alloc_stats_fill(&g_alloc.found);
    mt_shm_allocators *out = &h->allocators;
    const mt_shm_allocators *f = &g_alloc.found;
    uint32_t s = g_alloc.seq | 1u;
    __atomic_store_n(&out->seq, s, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    out->count = f->count;
    out->inexact = f->inexact;
    out->more = f->more;
    memcpy(out->a, f->a, sizeof(mt_shm_allocator) * f->count);
    g_alloc.seq = s + 1;
    __atomic_store_n(&out->seq, g_alloc.seq, __ATOMIC_RELEASE);
    mt_spin_unlock(&g_alloc.lock);
}

bool mt_alloc_found_copy(mt_shm_allocators *out)
{
    if (!mt_spin_trylock(&g_alloc.lock))
        return false;
    const mt_shm_allocators *f = &g_alloc.found;
    out->seq = 0;
    out->count = f->count;
    out->inexact = f->inexact;
    out->more = f->more;
    memcpy(out->a, f->a, sizeof(mt_shm_allocator) * f->count);
    mt_spin_unlock(&g_alloc.lock);
    return true;
}

uint32_t mt_alloc_inexact_count(void)
{
    return __atomic_load_n(&g_alloc.found.inexact, __ATOMIC_RELAXED);
}

void mt_alloc_close_begin(void)
{
    __atomic_fetch_add(&g_alloc.closing, 1, __ATOMIC_SEQ_CST);
    /* a scan's reference taken before this: the dlclose waits for it */
    for (int64_t waited = 0; __atomic_load_n(&g_alloc.refs_out, __ATOMIC_SEQ_CST);)
        if (mt_tls_dl_depth || !patient_nap(&waited, SCAN_PATIENCE_NS))
            return;
}

void mt_alloc_close_end(void)
{
    __atomic_fetch_sub(&g_alloc.closing, 1, __ATOMIC_SEQ_CST);
}

void mt_alloc_fork_child(void)
{
    /* Only if a thread the child does not have held it: a page the child
     * does not write is not copied.  The references a parent's scan held
     * are the child's for good (loaded_ref): not counted. */
    if (atomic_load_explicit(&g_alloc.lock.held, memory_order_relaxed))
        atomic_store_explicit(&g_alloc.lock.held, 0, memory_order_relaxed);
    if (__atomic_load_n(&g_alloc.refs_out, __ATOMIC_RELAXED))
        __atomic_store_n(&g_alloc.refs_out, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&g_alloc.closing, __ATOMIC_RELAXED)) /* another thread's dlclose */
        __atomic_store_n(&g_alloc.closing, 0, __ATOMIC_RELAXED);
}
