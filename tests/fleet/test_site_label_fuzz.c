/* test_site_label_fuzz.c -- property tests (cmocka) of /metrics' location
 * label (site_label.c), whose input is a function name out of the
 * target's ELF files: untrusted.  Adversarial names (unbalanced and
 * bracket-only, every operator, lambdas, closures, Rust impls, invalid
 * and cut UTF-8, very long) and seeded random ones of their pieces, into
 * buffers of every small size with a canary after them.  Each result is
 * terminated inside its buffer, writes nothing past it, and each label is
 * valid UTF-8 of at most MT_SITE_LABEL_MAX bytes.  A long name of
 * unclosed '<' costs linear time (a scrape runs it for every top trace).
 * Built with ASan and UBSan where the compiler has them
 * (tests/fleet/CMakeLists.txt), site_label.c compiled into it so: an
 * out-of-bounds read or write aborts the test.  MEMTOP_FUZZ_SEED=N runs
 * another seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "json_escape.h"
#include "site_label.h"

#define CANARY 0x5A
#define PAD 16

static const char *const adversarial[] = {
    "",
    "<",
    ">",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "::",
    ":",
    "-",
    "->",
    "<>",
    "><",
    "()",
    ")(",
    "<<<<<<<<",
    ">>>>>>>>",
    "((((((((",
    "))))))))",
    "{{{{",
    "}}}}",
    "<([{",
    "}])>",
    "a<",
    "a<<",
    "a<b",
    "a<b>",
    "a<b>>",
    "a<->",
    "a<-",
    "a::<",
    "::<",
    "::<>",
    "<::",
    "operator",
    "operator<",
    "operator<<",
    "operator<<=",
    "operator<=>",
    "operator>",
    "operator>>",
    "operator->",
    "operator->*",
    "operator()",
    "operator[]",
    "operator<<<",
    "operator< <",
    "operator< <int>",
    "operator<<(",
    "operator()(",
    "operator",
    "xoperator<",
    "operator_",
    "A::operator<(A const&)",
    "std::operator<< <std::char_traits<char> >(std::ostream&, char)",
    "main::{lambda(int)#1}::operator()(int) const",
    "{lambda(int)#1}",
    "{lambda(",
    "{lambda(int)#",
    "names_rust::main::{{closure}}",
    "{{closure}}",
    "{{",
    "}}",
    "<impl Foo for Bar>",
    "<impl Foo for Bar>::f",
    "<impl Foo<T> for Bar<U>>::f::<V>",
    "<impl",
    "<T as Trait>::f",
    "<<T as A>::B as C>::f",
    "(anonymous namespace)::f(int)",
    "(anonymous namespace)::",
    "f()::",
    "f(int)::g(int)",
    "f() const [clone .cold]",
    "f(int) [clone .isra.0] [clone .cold]",
    "fn() -> T",
    "a<fn() -> T>",
    "a<fn() ->",
    "\xC3",
    "\xC3\xA9",
    "a\xE2\x80",
    "\xE2\x80\xA6",
    "\xF0\x9F\x98",
    "\xF0\x9F\x98\x80",
    "\x80",
    "\xBF\xBF",
    "\xC0\xAF",
    "\xED\xA0\x80",
    "\xF4\x90\x80\x80",
    "\xFF\xFE",
    "a<\xC3>",
    "<\xE2\x80>",
    "\xC3(",
    "x(\xC3)",
    "\t\n\r\"\\",
};

/* The pieces random names are made of. */
static const char *const pieces[] = {
    "<",
    ">",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "::",
    ":",
    "-",
    "->",
    " ",
    ",",
    "&",
    "*",
    "#1",
    "a",
    "Foo",
    "std",
    "_Z",
    "operator",
    "const",
    "{lambda(",
    "int",
    "{{closure}}",
    "impl",
    "as",
    "for",
    "$",
    "\xC3\xA9",
    "\xE2\x80\xA6",
    "\xF0\x9F\x98\x80",
    "\xC3",
    "\xE2\x80",
    "\x80",
    "\xFF",
    "\"",
    "\\",
    "\n",
};

/* Whether s is valid UTF-8 of at most MT_SITE_LABEL_MAX bytes. */
static void label_ok(const char *s)
{
    size_t k = 0;
    while (s[k]) {
        int len = mt_utf8_len((const unsigned char *)s + k);
        assert_true(len > 0);
        k += (size_t)len;
    }
    assert_true(k <= MT_SITE_LABEL_MAX);
}

/* buf[0..n) was written, terminated inside it (when n > 0), and nothing
 * after it. */
static void bounded(const char *buf, size_t n)
{
    if (n)
        assert_non_null(memchr(buf, '\0', n));
    for (size_t i = n; i < n + PAD; i++)
        assert_int_equal((unsigned char)buf[i], CANARY);
}

/* name through mt_name_brief into buffers of every small size and a
 * large one, and through mt_site_label with and without a file, a
 * module. */
static void check_name(const char *name)
{
    static char buf[1024 + PAD];
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 64, 121, 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(buf, CANARY, sizeof buf);
        mt_name_brief(name, buf, sizes[i]);
        bounded(buf, sizes[i]);
    }
    mt_frame f = {.address = 0x401000, .module = "/bin/prog", .offset = 0x1000, .function = name};
    for (int v = 0; v < 3; v++) {
        f.file = v == 0 ? "/src/names_cxx.cpp" : NULL;
        f.line = v == 0 ? 17 : 0;
        f.module = v == 2 ? NULL : "/bin/prog";
        memset(buf, CANARY, sizeof buf);
        mt_site_label(&f, buf, MT_SITE_LABEL_MAX + 1);
        bounded(buf, MT_SITE_LABEL_MAX + 1);
        label_ok(buf);
    }
}

static void test_adversarial(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof adversarial / sizeof adversarial[0]; i++)
        check_name(adversarial[i]);
    static char name[20000];
    const char *fill[] = {"<", ">", "(", ")", "{", "}", "[", "]", "\xC3\xA9", "\xFF", "a<", "::"};
    for (size_t k = 0; k < sizeof fill / sizeof fill[0]; k++) {
        size_t len = strlen(fill[k]), n = 0;
        while (n + len < sizeof name) { /* only this piece, far past MAX_DEPTH */
            memcpy(name + n, fill[k], len);
            n += len;
        }
        name[n] = '\0';
        check_name(name);
        name[n / 2 - 1] = '\0'; /* cut anywhere, maybe inside a character */
        check_name(name);
    }
}

static void test_random(void **state)
{
    (void)state;
    const char *env = getenv("MEMTOP_FUZZ_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : 17u;
    srand(seed);
    static char name[8192];
    for (int it = 0; it < 20000; it++) {
        size_t max = it % 500 == 0 ? sizeof name - 32 : 300, n = 0, want = (size_t)rand() % max;
        while (n < want) {
            if (rand() % 4 == 0) { /* any byte but NUL */
                name[n++] = (char)(1 + rand() % 255);
                continue;
            }
            const char *p = pieces[(size_t)rand() % (sizeof pieces / sizeof pieces[0])];
            size_t len = strlen(p);
            memcpy(name + n, p, len);
            n += len;
        }
        name[n] = '\0';
        check_name(name);
    }
}

/* A name of 200 kB of "a<": each '<' opens arguments and none closes.
 * Each search for a '>' read to the end of the name: 7 s of one core for
 * this one label before (-O2, no sanitizer). */
static void test_long_unclosed(void **state)
{
    (void)state;
    size_t n = 200000;
    char *name = malloc(n + 1), buf[MT_SITE_LABEL_MAX + 1];
    assert_non_null(name);
    for (size_t i = 0; i < n; i += 2)
        memcpy(name + i, "a<", 2);
    name[n] = '\0';
    mt_frame f = {.module = "/bin/prog", .function = name, .file = "/src/a.cc", .line = 3};
    clock_t t0 = clock();
    mt_site_label(&f, buf, sizeof buf);
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    label_ok(buf);
    free(name);
    assert_non_null(strstr(buf, " (a.cc:3)"));
    if (cpu > 2.0)
        fail_msg("a 200 kB name of unclosed '<' took %.1f s of CPU (want < 2)", cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adversarial),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_long_unclosed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
