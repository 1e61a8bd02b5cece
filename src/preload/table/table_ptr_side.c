/* table_ptr_side.c -- side table of the block table (see table_ptr_side.h).
 *
 * Linear probing with backward-shift deletion, positions by
 * fastrange of the pointer's hash, doubling when half full.  Memory comes
 * on the first entry, so a shard that never sees an odd block costs
 * nothing here.  Blocks of 16 MiB and up are few by nature (glibc
 * usually mmaps each one), births years old need years; odd pointers come
 * only from unusual allocators, and if they are common the table grows.
 */
#include "table_ptr_side.h"

#include "core_hash.h"
#include "core_os_memory.h"
#include "table_ptr_slot.h"

#define SIDE_MIN_CAP 128u /* 4 KiB: one page */

/* The block table's hash of a pointer (table_ptr.c). */
static inline uint64_t side_hash(uintptr_t ptr)
{
    return mt_slot_hash(mt_slot_key(ptr));
}

static inline uint64_t next(const mt_side *t, uint64_t j)
{
    return j + 1 == t->cap ? 0 : j + 1;
}

/* Position of ptr, or of the empty entry where it would go. */
static uint64_t find(const mt_side *t, uintptr_t ptr, uint64_t h)
{
    uint64_t j = mt_slot_home(h, t->cap);
    while (t->e[j].ptr && t->e[j].ptr != ptr)
        j = next(t, j);
    return j;
}

static bool grow(mt_side *t)
{
    uint64_t ncap = t->cap ? t->cap * 2 : SIDE_MIN_CAP;
    mt_side_entry *ne = mt_os_alloc(ncap * sizeof *ne);
    if (!ne)
        return false;
    mt_side old = *t;
    t->e = ne;
    t->cap = ncap;
    for (uint64_t i = 0; i < old.cap; i++)
        if (old.e[i].ptr)
            t->e[find(t, old.e[i].ptr, side_hash(old.e[i].ptr))] = old.e[i];
    mt_os_free(old.e, old.cap * sizeof *old.e);
    return true;
}

static void unpack(const mt_side_entry *e, mt_block *b)
{
    b->size = e->size;
    b->birth_ns = e->birth_ns;
    b->trace = e->trace;
}

bool mt_side_put(mt_side *t, uintptr_t ptr, uint64_t h, const mt_block *b, mt_block *stale,
                 bool *replaced)
{
    if ((t->count + 1) * 2 > t->cap && !grow(t) && t->count + 1 >= t->cap)
        return false;
    mt_side_entry *e = &t->e[find(t, ptr, h)];
    *replaced = e->ptr != 0;
    if (*replaced)
        unpack(e, stale);
    else
        MT_HINT_SET(t->count, t->count + 1); /* read unlocked: mt_ptr_count */
    *e = (mt_side_entry){.ptr = ptr,
                         .size = b->size,
                         .birth_ns = b->birth_ns / 1000000u * 1000000u,
                         .trace = b->trace};
    return true;
}

/* Backward-shift deletion: later members of the probe run move into the
 * hole unless that would move them before their home position. */
static void erase_at(mt_side *t, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = next(t, j);
        if (!t->e[j].ptr)
            break;
        uint64_t home = mt_slot_home(side_hash(t->e[j].ptr), t->cap);
        bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        t->e[i] = t->e[j];
        i = j;
    }
    t->e[i].ptr = 0;
    MT_HINT_SET(t->count, t->count - 1);
}

bool mt_side_take(mt_side *t, uintptr_t ptr, uint64_t h, mt_block *out)
{
    if (!t->count)
        return false;
    uint64_t j = find(t, ptr, h);
    if (!t->e[j].ptr)
        return false;
    unpack(&t->e[j], out);
    erase_at(t, j);
    return true;
}

void mt_side_visit(const mt_side *t, mt_ptr_visit_fn fn, void *ctx)
{
    for (uint64_t j = 0; j < t->cap && t->count; j++) {
        if (!t->e[j].ptr)
            continue;
        mt_block b;
        unpack(&t->e[j], &b);
        fn(&b, ctx);
    }
}
