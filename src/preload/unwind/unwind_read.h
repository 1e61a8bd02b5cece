/* unwind_read.h -- bounds-checked reading of .eh_frame data.
 *
 * The unwind tables memtop parses (unwind_fde.c, unwind_cfi.c) are mapped
 * by the loader and normally correct, but a bad one must cost a fallback
 * to libunwind, never a crash or an endless loop.  So every read goes
 * through a cursor that knows where its data ends: reading past it sets
 * `bad` and yields zeros, and callers check `bad` once at the end of a
 * step instead of after every field.  Every read consumes at least one
 * byte, so loops over the data always end.
 */
#ifndef MT_UNWIND_READ_H
#define MT_UNWIND_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* DWARF pointer encodings (DW_EH_PE_*) that memtop handles. */
enum {
    MT_PE_ABSPTR = 0x00,
    MT_PE_ULEB128 = 0x01,
    MT_PE_UDATA2 = 0x02,
    MT_PE_UDATA4 = 0x03,
    MT_PE_UDATA8 = 0x04,
    MT_PE_SLEB128 = 0x09,
    MT_PE_SDATA2 = 0x0a,
    MT_PE_SDATA4 = 0x0b,
    MT_PE_SDATA8 = 0x0c,
    MT_PE_PCREL = 0x10,
    MT_PE_DATAREL = 0x30,
    MT_PE_INDIRECT = 0x80,
    MT_PE_OMIT = 0xff,
};

typedef struct mt_rd {
    const uint8_t *p, *end;
    bool bad;
} mt_rd;

static inline mt_rd mt_rd_make(const void *start, const void *end)
{
    mt_rd r = {(const uint8_t *)start, (const uint8_t *)end, start > end};
    return r;
}

static inline bool mt_rd_has(mt_rd *r, uint64_t n)
{
    if (r->bad || (uint64_t)(r->end - r->p) < n) {
        r->bad = true;
        r->p = r->end;
        return false;
    }
    return true;
}

/* n (1, 2, 4 or 8) bytes, little-endian, unsigned. */
static inline uint64_t mt_rd_fixed(mt_rd *r, unsigned n)
{
    uint64_t v = 0;
    if (!mt_rd_has(r, n))
        return 0;
    memcpy(&v, r->p, n);
    r->p += n;
    return v;
}

static inline uint8_t mt_rd_u8(mt_rd *r)
{
    return (uint8_t)mt_rd_fixed(r, 1);
}

/* A LEB128 number; signed: sign-extended from its last byte's bit 6. */
static inline uint64_t mt_rd_leb(mt_rd *r, bool is_signed)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = mt_rd_u8(r);
        if (shift >= 64 || r->bad) {
            r->bad = true;
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (is_signed && shift + 7 < 64 && (b & 0x40))
                v |= ~0ull << (shift + 7);
            return v;
        }
    }
}

static inline uint64_t mt_rd_uleb(mt_rd *r)
{
    return mt_rd_leb(r, false);
}

static inline int64_t mt_rd_sleb(mt_rd *r)
{
    return (int64_t)mt_rd_leb(r, true);
}

/* The value of a pointer in encoding enc (its format only: no relative
 * base applied), sign-extended for the sdata formats. */
static inline uint64_t mt_rd_value(mt_rd *r, uint8_t enc)
{
    switch (enc & 0x0f) {
    case MT_PE_ABSPTR:
    case MT_PE_UDATA8:
    case MT_PE_SDATA8:
        return mt_rd_fixed(r, 8);
    case MT_PE_ULEB128:
        return mt_rd_uleb(r);
    case MT_PE_UDATA2:
        return mt_rd_fixed(r, 2);
    case MT_PE_UDATA4:
        return mt_rd_fixed(r, 4);
    case MT_PE_SLEB128:
        return (uint64_t)mt_rd_sleb(r);
    case MT_PE_SDATA2:
        return (uint64_t)(int64_t)(int16_t)mt_rd_fixed(r, 2);
    case MT_PE_SDATA4:
        return (uint64_t)(int64_t)(int32_t)mt_rd_fixed(r, 4);
    default:
        r->bad = true;
        return 0;
    }
}

/* A pointer in encoding enc: absolute, pc-relative (to the field itself)
 * or data-relative (to datarel, 0 if there is no data base).  Indirect and
 * other bases are not supported: `bad` is set. */
static inline uint64_t mt_rd_ptr(mt_rd *r, uint8_t enc, uint64_t datarel)
{
    uint64_t at = (uint64_t)(uintptr_t)r->p;
    uint64_t v = mt_rd_value(r, enc);
    if (enc & MT_PE_INDIRECT) {
        r->bad = true;
        return 0;
    }
    switch (enc & 0x70) {
    case 0:
        return v;
    case MT_PE_PCREL:
        return v + at;
    case MT_PE_DATAREL:
        if (datarel)
            return v + datarel;
        break;
    default:
        break;
    }
    r->bad = true;
    return 0;
}

#endif
