/* pf_churn.c -- random malloc/free/realloc mix with content checks. */
#define _GNU_SOURCE
#include "pf_churn.h"

#include "pf_check.h"

#include <string.h>

void pf_churn_init(pf_churn *c, unsigned char tag)
{
    memset(c, 0, sizeof *c);
    c->seed = tag;
    c->tag = tag;
    c->min_size = 16;
}

static void check_block(const pf_churn *c, int i)
{
    PF_CHECK(c->p[i][0] == c->tag && c->p[i][c->n[i] - 1] == c->tag, "heap block corrupted");
}

static void drop(pf_churn *c, int i)
{
    if (!c->p[i])
        return;
    check_block(c, i);
    free(c->p[i]);
    c->p[i] = NULL;
}

void pf_churn_step(pf_churn *c)
{
    int i = rand_r(&c->seed) % PF_CHURN_SLOTS;
    size_t n = c->min_size + (size_t)(rand_r(&c->seed) % 4080);
    switch (rand_r(&c->seed) % 3) {
    case 0:
        drop(c, i);
        c->p[i] = malloc(n);
        break;
    case 1:
        drop(c, i);
        return;
    default:
        if (c->p[i])
            PF_CHECK(c->p[i][0] == c->tag, "heap block corrupted before realloc");
        unsigned char *q = realloc(c->p[i], n);
        PF_CHECK(q != NULL, "realloc failed");
        c->p[i] = q;
    }
    PF_CHECK(c->p[i] != NULL, "allocation failed");
    c->n[i] = n;
    memset(c->p[i], c->tag, n);
}

void pf_churn_release(pf_churn *c)
{
    for (int i = 0; i < PF_CHURN_SLOTS; i++)
        drop(c, i);
}

void *pf_churn_thread(void *arg)
{
    pf_churn_arg *a = arg;
    pf_churn c;
    pf_churn_init(&c, a->tag);
    if (a->min_size)
        c.min_size = a->min_size;
    while (!atomic_load(a->stop))
        for (int k = 0; k < 16; k++)
            pf_churn_step(&c);
    if (a->release)
        pf_churn_release(&c);
    return NULL;
}
