/* sym_queue.c -- see sym_queue.h: a ring of (record, sequence number)
 * slots used as a stack that drops its bottom when full. */
#include "sym_queue.h"

#include <stdlib.h>
#include <string.h>

bool mt_symw_queue_init(mt_symw_queue *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->slots = calloc(cap ? cap : 1, sizeof *q->slots);
    q->cap = cap ? cap : 1;
    return q->slots != NULL;
}

void mt_symw_queue_free(mt_symw_queue *q)
{
    free(q->slots);
    memset(q, 0, sizeof *q);
}

static bool slot_live(const mt_symw_slot *s)
{
    return s->e->qseq == s->seq;
}

static void drop_oldest(mt_symw_queue *q)
{
    mt_symw_slot *s = &q->slots[(q->top + q->cap - q->len) % q->cap];
    q->len--;
    if (slot_live(s)) {
        s->e->qseq = 0;
        q->live--;
    }
}

void mt_symw_queue_request(mt_symw_queue *q, mt_symw_entry *e)
{
    uint64_t recent = q->cap / 4;
    if (e->qseq && q->pushed - e->qseq < recent)
        return;
    if (q->len == q->cap)
        drop_oldest(q);
    if (!e->qseq)
        q->live++;
    e->qseq = ++q->pushed;
    q->slots[q->top] = (mt_symw_slot){e, e->qseq};
    q->top = (q->top + 1) % q->cap;
    q->len++;
}

mt_symw_entry *mt_symw_queue_pop(mt_symw_queue *q)
{
    while (q->len) {
        q->top = (q->top + q->cap - 1) % q->cap;
        q->len--;
        mt_symw_slot *s = &q->slots[q->top];
        if (slot_live(s)) {
            s->e->qseq = 0;
            q->live--;
            return s->e;
        }
    }
    return NULL;
}
