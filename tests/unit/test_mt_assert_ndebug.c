/* test_mt_assert_ndebug.c -- MT_ASSERT in a release build (NDEBUG), for
 * test_mt_assert.c: compiled out, the condition not evaluated. */
#define NDEBUG 1
#include "core_assert.h"

int mt_assert_ndebug_probe(void);

int mt_assert_ndebug_probe(void)
{
    int evaluated = 0;
    MT_ASSERT(++evaluated == 5);
    return evaluated;
}
