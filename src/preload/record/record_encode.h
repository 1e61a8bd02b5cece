/* record_encode.h -- building records of the .dat format (dat_format.h)
 * into a byte buffer: varints, strings and the record envelope. */
#ifndef MT_RECORD_ENCODE_H
#define MT_RECORD_ENCODE_H

#include "core_common.h"

#include <stdbool.h>

/* A bounded byte buffer (memory from mmap).  Writes beyond cap set
 * `overflow` and are discarded: callers size records well below cap. */
typedef struct mt_rec_buf {
    unsigned char *p;
    size_t len, cap;
    bool overflow;
} mt_rec_buf;

bool mt_rbuf_init(mt_rec_buf *b, size_t cap);
void mt_rbuf_free(mt_rec_buf *b);

static inline void mt_put_u8(mt_rec_buf *b, unsigned v)
{
    if (MT_LIKELY(b->len < b->cap))
        b->p[b->len++] = (unsigned char)v;
    else
        b->overflow = true;
}

static inline void mt_put_v(mt_rec_buf *b, uint64_t v)
{
    if (MT_UNLIKELY(b->len + 10 > b->cap)) {
        b->overflow = true;
        return;
    }
    unsigned char *o = b->p + b->len;
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    b->len = (size_t)(o - b->p);
}

static inline void mt_put_z(mt_rec_buf *b, int64_t v)
{
    mt_put_v(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void mt_put_bytes(mt_rec_buf *b, const void *s, size_t n);
/* A string field: length then bytes (at most MT_DAT_STRING_MAX). */
void mt_put_s(mt_rec_buf *b, const void *s, size_t n);
void mt_put_cstr(mt_rec_buf *b, const char *s);

/* Appends the envelope (type, length) and the payload to out. */
void mt_put_record(mt_rec_buf *out, unsigned type, const mt_rec_buf *payload);

#endif
