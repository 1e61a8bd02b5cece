/* test_sample_math.c -- src/ipc/sample_math.h's mt_ln and mt_expm1 (own
 * versions, so that libmemtop.so needs no libm) against libm's log and
 * expm1, over the ranges sampling uses: mt_ln on (0, 1] (core_sample.c's
 * uniform draws, down to 2^-53) and beyond, mt_expm1 on [-60, 0]
 * (-size / rate).  Each must stay within 4 units in the last place of
 * libm's result (libm's are correctly rounded or within 1 ulp). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "sample_math.h"
#include "test_xorshift.h"

#define MAX_ULP 4.0

/* |got - want| in units of the last place of want. */
static double ulps(double got, double want)
{
    if (got == want)
        return 0;
    double ulp = nextafter(fabs(want), INFINITY) - fabs(want);
    return fabs(got - want) / ulp;
}

static void check(double got, double want, const char *what, double x)
{
    double u = ulps(got, want);
    if (u > MAX_ULP)
        fail_msg("%s(%.17g) = %.17g, libm %.17g: %.1f ulp", what, x, got, want, u);
}

static void ln_matches_libm(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 1000000; i++) { /* the draws of core_sample.c */
        double u = ((double)(test_xorshift(&s) >> 11) + 1.0) * 0x1p-53;
        check(mt_ln(u), log(u), "mt_ln", u);
    }
    const double edges[] = {0x1p-53,
                            0x1p-52,
                            0.5,
                            0.70710678118654752,
                            0.70710678118654746,
                            0.99999999999999989,
                            1.0,
                            1.0000000000000002,
                            1.4142135623730951,
                            1.4142135623730949,
                            2.0,
                            3.0,
                            1e300,
                            1e-300};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check(mt_ln(edges[i]), log(edges[i]), "mt_ln", edges[i]);
    assert_true(mt_ln(1.0) == 0.0);
}

static void expm1_matches_libm(void **state)
{
    (void)state;
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < 1000000; i++) { /* -size / rate, sizes around every rate */
        double x = -ldexp((double)(test_xorshift(&s) >> 11) * 0x1p-53, (int)(i % 70) - 64);
        check(mt_expm1(x), expm1(x), "mt_expm1", x);
    }
    for (double x = 0; x >= -60.0; x -= 0.0009765625) /* both sides of -0.5 and -40 */
        check(mt_expm1(x), expm1(x), "mt_expm1", x);
    const double edges[] = {-0.0,
                            -0x1p-60,
                            -1e-300,
                            -0.49999999999999994,
                            -0.5,
                            -0.50000000000000011,
                            -0.34657359027997264,
                            -39.999999999999993,
                            -40.0,
                            -40.000000000000007,
                            -745.0,
                            -1e300};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check(mt_expm1(edges[i]), expm1(edges[i]), "mt_expm1", edges[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ln_matches_libm),
        cmocka_unit_test(expm1_matches_libm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
