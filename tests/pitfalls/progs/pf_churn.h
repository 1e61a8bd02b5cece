/* pf_churn.h -- a random malloc/free/realloc mix with content checks, the
 * background noise of the signal, fork and exit pitfall programs. */
#ifndef PF_CHURN_H
#define PF_CHURN_H

#include <stdatomic.h>
#include <stddef.h>

enum { PF_CHURN_SLOTS = 64 };

typedef struct pf_churn {
    unsigned char *p[PF_CHURN_SLOTS];
    size_t n[PF_CHURN_SLOTS];
    unsigned seed;
    unsigned char tag;
    size_t min_size; /* sizes are min_size .. min_size + 4079 */
} pf_churn;

/* Sizes start at 16; set c->min_size after init for larger blocks. */
void pf_churn_init(pf_churn *c, unsigned char tag);
/* One random operation; exits 99 if a block's contents were corrupted. */
void pf_churn_step(pf_churn *c);
/* Frees every block (after checking it). */
void pf_churn_release(pf_churn *c);

/* Thread body: churns until *stop (an atomic_int) becomes non-zero, then
 * releases everything.  arg: pf_churn_arg. */
typedef struct pf_churn_arg {
    atomic_int *stop;
    unsigned char tag;
    int release;     /* free everything at the end */
    size_t min_size; /* 0: default */
} pf_churn_arg;
void *pf_churn_thread(void *arg);

#endif
