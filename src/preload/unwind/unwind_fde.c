/* unwind_fde.c -- find the FDE and CIE that describe an address.
 *
 * The own unwinder (unwind_walk.c) needs, on a cache miss, the call frame
 * information of one instruction address.  It must not take the loader's
 * lock (dl_iterate_phdr does): a hook may run while the thread holds it,
 * and libunwind's lock order makes that a deadlock (hook_dl.c).  glibc's
 * _dl_find_object (2.35+) is lock-free and async-signal-safe, and returns
 * the object's PT_GNU_EH_FRAME segment, .eh_frame_hdr: a table of
 * (initial location, FDE) pairs sorted by location, which is searched by
 * bisection.  Only the table format every linker writes is read (version
 * 1, datarel|sdata4 entries); anything else means "no FDE" and so a
 * fallback to libunwind.
 *
 * Every read is bounded by the object's mapping ([dlfo_map_start,
 * dlfo_map_end)) and by sane sizes (unwind_read.h): the tables come from
 * the loader and are normally right, but bad ones must not crash us.
 *
 * The main program is the exception: for it, glibc reports only the load
 * segment that holds the address asked about, and when its segments are
 * not contiguous (a gap between them: node, make, lsof, bc) .eh_frame_hdr
 * is in another one.  So mt_fde_available records, through
 * dl_iterate_phdr (at start-up, where its lock is harmless), the main
 * program's load segment holding its PT_GNU_EH_FRAME, and the main
 * program's tables are read within that segment.  The main program is
 * never unloaded, so the record stays right for the life of the image.
 */
#define _GNU_SOURCE
#include "unwind_fde.h"

#include <dlfcn.h>
#include <link.h>

#define MAX_ENTRY_BYTES (16u << 20) /* one CIE or FDE */
#define MAX_TABLE_ENTRIES (1u << 26)
#define MAX_AUGMENTATION 8

#if defined(DLFO_EH_SEGMENT_TYPE)

typedef struct object_span {
    uintptr_t lo, hi; /* the object's mapping: all reads stay inside */
} object_span;

static bool inside(const object_span *o, uintptr_t p)
{
    return p >= o->lo && p < o->hi;
}

/* Reads an entry's length (32-bit, or 0xffffffff then 64-bit) and limits
 * r to the entry.  False for the 0 terminator or a bad length. */
static bool entry_bounds(mt_rd *r)
{
    uint64_t len = mt_rd_fixed(r, 4);
    if (len == 0xffffffffu)
        len = mt_rd_fixed(r, 8);
    if (r->bad || len == 0 || len > MAX_ENTRY_BYTES || !mt_rd_has(r, len))
        return false;
    r->end = r->p + len;
    return true;
}

/* Reads the augmentation data of a "z" CIE into out; fde_enc gets the
 * encoding of the FDE's addresses.  Only the letters x86-64 code uses are
 * known (L, P, R, S); any other means the layout cannot be trusted. */
static bool cie_augmentation(mt_rd *r, const char *aug, mt_fde *out)
{
    uint64_t len = mt_rd_uleb(r);
    if (!mt_rd_has(r, len))
        return false;
    mt_rd a = mt_rd_make(r->p, r->p + len);
    r->p += len;
    for (const char *c = aug + 1; *c; c++) {
        uint8_t enc;
        switch (*c) {
        case 'L':
            mt_rd_u8(&a); /* LSDA encoding: the FDE's data is skipped by length */
            break;
        case 'P':
            enc = mt_rd_u8(&a);
            if ((enc & 0x70) == 0x50) /* DW_EH_PE_aligned */
                return false;
            mt_rd_value(&a, enc);
            break;
        case 'R':
            out->ptr_enc = mt_rd_u8(&a);
            break;
        case 'S':
            out->signal_frame = true;
            break;
        default:
            return false;
        }
    }
    return !a.bad;
}

/* Parses the CIE at cie; *has_z tells whether its FDEs carry augmentation
 * data (skipped by its length). */
static bool parse_cie(const object_span *o, uintptr_t cie, mt_fde *out, bool *has_z)
{
    mt_rd r = mt_rd_make((const void *)cie, (const void *)o->hi);
    if (!entry_bounds(&r) || mt_rd_fixed(&r, 4) != 0) /* CIE id */
        return false;
    uint8_t version = mt_rd_u8(&r);
    if (version != 1 && version != 3)
        return false;
    char aug[MAX_AUGMENTATION + 1];
    unsigned n = 0;
    for (char c; (c = (char)mt_rd_u8(&r)) != '\0' && !r.bad;) {
        if (n == MAX_AUGMENTATION)
            return false;
        aug[n++] = c;
    }
    aug[n] = '\0';
    out->code_align = mt_rd_uleb(&r);
    out->data_align = mt_rd_sleb(&r);
    uint64_t ra_reg = version == 1 ? mt_rd_u8(&r) : mt_rd_uleb(&r);
    out->ptr_enc = MT_PE_ABSPTR;
    out->signal_frame = false;
    *has_z = aug[0] == 'z';
    if (r.bad || ra_reg != 16 || (aug[0] != '\0' && !*has_z))
        return false; /* another return register, or an unknown layout ("eh") */
    if (*has_z && !cie_augmentation(&r, aug, out))
        return false;
    out->cie_ins = mt_rd_make(r.p, r.end);
    return !r.bad;
}

/* Parses the FDE at fde and its CIE. */
static bool parse_fde(const object_span *o, uintptr_t fde, mt_fde *out)
{
    mt_rd r = mt_rd_make((const void *)fde, (const void *)o->hi);
    if (!entry_bounds(&r))
        return false;
    uintptr_t at = (uintptr_t)r.p;
    uint32_t cie_off = (uint32_t)mt_rd_fixed(&r, 4);
    if (r.bad || cie_off == 0 || at - cie_off >= at || !inside(o, at - cie_off))
        return false; /* a CIE, or a CIE pointer out of the object */
    bool has_z;
    if (!parse_cie(o, at - cie_off, out, &has_z))
        return false;
    out->pc_begin = mt_rd_ptr(&r, out->ptr_enc, 0);
    out->pc_end = out->pc_begin + mt_rd_value(&r, out->ptr_enc & 0x0f);
    if (has_z) {
        uint64_t len = mt_rd_uleb(&r);
        if (mt_rd_has(&r, len))
            r.p += len;
    }
    out->fde_ins = mt_rd_make(r.p, r.end);
    return !r.bad && out->pc_end > out->pc_begin;
}

/* Searches the .eh_frame_hdr at hdr for the last entry whose location is
 * <= pc; its FDE address in *fde. */
static bool search_table(const object_span *o, uintptr_t hdr, uint64_t pc, uintptr_t *fde)
{
    mt_rd r = mt_rd_make((const void *)hdr, (const void *)o->hi);
    uint8_t version = mt_rd_u8(&r), frame_enc = mt_rd_u8(&r);
    uint8_t count_enc = mt_rd_u8(&r), table_enc = mt_rd_u8(&r);
    if (version != 1 || table_enc != (MT_PE_DATAREL | MT_PE_SDATA4) || count_enc == MT_PE_OMIT)
        return false;
    if (frame_enc != MT_PE_OMIT)
        mt_rd_ptr(&r, frame_enc, hdr); /* .eh_frame's address: not needed */
    uint64_t count = mt_rd_ptr(&r, count_enc, hdr);
    if (r.bad || count == 0 || count > MAX_TABLE_ENTRIES || !mt_rd_has(&r, count * 8))
        return false;
    const int32_t *table = (const int32_t *)(const void *)r.p; /* 4-aligned by the linker */
    int64_t rel = (int64_t)(pc - hdr);
    if ((uintptr_t)table & 3)
        return false;
    uint64_t a = 0, b = count; /* invariant: table[a] <= rel < table[b] (b: +infinity) */
    if (table[0] > rel)
        return false;
    while (b - a > 1) {
        uint64_t mid = a + (b - a) / 2;
        if (table[2 * mid] <= rel)
            a = mid;
        else
            b = mid;
    }
    *fde = hdr + (uintptr_t)(intptr_t)table[2 * a + 1];
    return inside(o, *fde);
}

/* The main program's .eh_frame_hdr and the load segment holding it (see
 * the top of the file); zeros when unknown.  Set by mt_fde_available,
 * before any walk; read-only afterwards. */
static struct {
    uintptr_t hdr;
    object_span seg;
} g_exe;

/* dl_iterate_phdr callback: the first object is the main program. */
static int find_exe_hdr(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    uintptr_t hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    for (int i = 0; hdr && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        object_span seg = {info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr};
        seg.hi += ph->p_memsz;
        if (ph->p_type == PT_LOAD && inside(&seg, hdr)) {
            g_exe.hdr = hdr;
            g_exe.seg = seg;
        }
    }
    return 1;
}

bool mt_fde_find(uint64_t pc, mt_fde *out)
{
    struct dl_find_object fo;
    if (_dl_find_object((void *)(uintptr_t)pc, &fo) != 0 || !fo.dlfo_eh_frame)
        return false;
    object_span o = {(uintptr_t)fo.dlfo_map_start, (uintptr_t)fo.dlfo_map_end};
    uintptr_t hdr = (uintptr_t)fo.dlfo_eh_frame, fde;
    if (hdr == g_exe.hdr && !inside(&o, hdr))
        o = g_exe.seg; /* the main program, pc in another segment than its table */
    if (!inside(&o, hdr) || !search_table(&o, hdr, pc, &fde) || !parse_fde(&o, fde, out))
        return false;
    return pc >= out->pc_begin && pc < out->pc_end;
}

bool mt_fde_available(void)
{
    g_exe.hdr = 0;
    dl_iterate_phdr(find_exe_hdr, NULL);
    struct dl_find_object fo;
    return _dl_find_object((void *)(uintptr_t)&mt_fde_available, &fo) == 0 && fo.dlfo_eh_frame;
}

#else /* glibc < 2.35: no lock-free object lookup, libunwind does it all */

bool mt_fde_find(uint64_t pc, mt_fde *out)
{
    (void)pc;
    (void)out;
    return false;
}

bool mt_fde_available(void)
{
    return false;
}

#endif
