/* record_encode.c -- byte-level helpers for the .dat writer (see .h). */
#include "record_encode.h"

#include "dat_format.h"
#include "core_os_memory.h"

#include <string.h>

bool mt_rbuf_init(mt_rec_buf *b, size_t cap)
{
    b->p = mt_os_alloc(cap);
    b->len = 0;
    b->cap = b->p ? cap : 0;
    b->overflow = false;
    return b->p != NULL;
}

void mt_rbuf_free(mt_rec_buf *b)
{
    /* NULL before the unmap: a fork in between (fork_prepare does not take
     * the writer's lock) leaves the child no pointer to a gone mapping.
     * A buffer that holds nothing stays so (mt_os_free ignores NULL). */
    void *p = b->p;
    size_t cap = b->cap;
    b->p = NULL;
    b->cap = b->len = 0;
    mt_os_free(p, cap);
}

void mt_put_bytes(mt_rec_buf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->overflow = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void mt_put_s(mt_rec_buf *b, const void *s, size_t n)
{
    if (n > MT_DAT_STRING_MAX)
        n = MT_DAT_STRING_MAX;
    mt_put_v(b, n);
    mt_put_bytes(b, s, n);
}

void mt_put_cstr(mt_rec_buf *b, const char *s)
{
    mt_put_s(b, s, strnlen(s, MT_DAT_STRING_MAX));
}

void mt_put_record(mt_rec_buf *out, unsigned type, const mt_rec_buf *payload)
{
    mt_put_v(out, type);
    mt_put_v(out, payload->len);
    mt_put_bytes(out, payload->p, payload->len);
}
