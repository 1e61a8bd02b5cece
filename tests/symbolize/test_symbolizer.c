/* test_symbolizer.c -- unit tests of src/symbolize: the demangler (C++,
 * Rust legacy and v0), the allocator-plumbing matcher, and that hostile
 * input (garbage paths, non-ELF and truncated files, wrong build-ids,
 * garbage offsets) gives a reason, never a crash or a wrong name.  argv[1]
 * is an ELF file built -g with a function named sym_test_marker. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "demangle.h"
#include "plumbing.h"
#include "symbolizer.h"

static const char *elf_path;

static void expect_demangled(const char *mangled, const char *want)
{
    char *got = mt_demangle(mangled);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_demangle(void **state)
{
    (void)state;
    expect_demangled("_ZN2ns4tmplIiEEvT_", "void ns::tmpl<int>(int)");
    expect_demangled("_Znwm", "operator new(unsigned long)");
    expect_demangled("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place");
    expect_demangled("_RNvCs1234_7mycrate3foo", "mycrate::foo");
    expect_demangled("main", "main");
    expect_demangled("_Z", "_Z");                      /* not demangleable: kept */
    expect_demangled("foo::h0123456789abcdef", "foo"); /* stray legacy hash */
}

/* The name rule: wrappers no list names, recognised by their name. */
static void test_plumbing_name_rule(void **state)
{
    (void)state;
    mt_plumbing p;
    assert_true(mt_plumbing_init(&p, NULL));
    const char *yes[] = {"zmalloc",
                         "zrealloc_usable",
                         "zcalloc_num",
                         "ztrymalloc_usable_internal",
                         "sqlite3Malloc",
                         "sqlite3MallocZero",
                         "sqlite3DbMallocRawNN",
                         "sqlite3_malloc64",
                         "PyMem_Malloc",
                         "PyMem_RawMalloc",
                         "PyObject_Malloc",
                         "<alloc::string::String as core::fmt::Write>::write_fmt",
                         "<str>::repeat",
                         "<[u8]>::to_vec",
                         "g_malloc0",
                         "g_malloc0_n",
                         "xmalloc",
                         "xmalloc_or_die",
                         "je_malloc",
                         "pool_alloc",
                         "ns::Pool::alloc(unsigned long)",
                         "session_new",
                         NULL};
    for (size_t i = 0; yes[i]; i++)
        if (!mt_plumbing_match(&p, yes[i]))
            fail_msg("%s is not taken as plumbing", yes[i]);
    /* rustc 1.95's names for format! and slice copies: the self type behind
     * "&mut", the trait behind '<'. */
    assert_true(mt_plumbing_match(&p, "<&mut alloc::string::String as core::fmt::Write::"
                                      "write_fmt::SpecWriteFmt>::spec_write_fmt"));
    assert_true(mt_plumbing_match(&p, "<u8 as <[_]>::to_vec_in::ConvertVec>::to_vec::<Global>"));
    assert_false(mt_plumbing_match(&p, "<&mut myapp::Buf as core::fmt::Write>::write_str"));
    /* the program's own trait on a std type is its code ("std::" is plumbing) */
    assert_false(mt_plumbing_match(&p, "<std::path::PathBuf as mycrate::Tr>::f"));
    assert_false(mt_plumbing_match(&p, "<&std::ffi::OsString as mycrate::Tr<u8>>::f"));
    assert_true(mt_plumbing_match(&p, "<std::path::PathBuf as core::clone::Clone>::clone"));
    const char *no[] = {"allocate_session",
                        "realloc_buffer_for_client",
                        "malloc_stats",
                        "malloc_trim",
                        "zmalloc_get_rss",
                        "dictAddRaw",
                        "sdsnewlen",
                        "dbAdd",
                        "setKey",
                        "renew",
                        "createNewSession",
                        "main",
                        "myapp::cache::alloc_entry",
                        "<myapp::Thing as core::fmt::Display>::fmt",
                        NULL};
    for (size_t i = 0; no[i]; i++)
        if (mt_plumbing_match(&p, no[i]))
            fail_msg("%s is taken as plumbing", no[i]);
    mt_plumbing_free(&p);
    /* The user's exceptions win over the rule and the list. */
    assert_true(mt_plumbing_init(&p, "!session_new, !g_malloc*"));
    assert_false(mt_plumbing_match(&p, "session_new"));
    assert_false(mt_plumbing_match(&p, "g_malloc0"));
    assert_true(mt_plumbing_match(&p, "zmalloc"));
    mt_plumbing_free(&p);
}

static void test_plumbing(void **state)
{
    (void)state;
    mt_plumbing p;
    assert_true(mt_plumbing_init(&p, " my_alloc , pool::,"));
    const char *yes[] = {
        "malloc", "operator new(unsigned long)", "operator new[](unsigned long)",
        "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(int&&)",
        "std::__new_allocator<int>::allocate(unsigned long, void const*)",
        "alloc::raw_vec::RawVec<T,A>::grow_one", "<alloc::raw_vec::RawVec<u8>>::grow_one",
        "alloc::alloc::exchange_malloc", "__rust_alloc", "__rdl_alloc",
        "<T as alloc::slice::<impl [T]>::to_vec_in::ConvertVec>::to_vec",
        "core::iter::traits::iterator::Iterator::collect", "g_malloc0",
        /* a map's operator[] and a throw allocate for their caller */
        "std::map<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
        "std::allocator<char> >, std::less<int>, std::allocator<std::pair<int const, "
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > "
        ">::operator[](int const&)",
        "std::unordered_map<int, int>::operator[](int const&)", "__cxa_allocate_exception",
        "my_alloc", "pool::grow(int)"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(mt_plumbing_match(&p, yes[i]));
    const char *no[] = {"main",
                        "malloc_stats_print",
                        "symrust::make_vec",
                        "my_alloc_stats",
                        "void ns::tmpl<int>(int)",
                        "user::push(std::vector<int>&)",
                        "user::fill(std::map<int, int>&)",
                        "(anonymous namespace)::f()",
                        "<symrust::Thing as core::clone::Clone>::clone",
                        NULL};
    for (size_t i = 0; no[i]; i++)
        assert_false(mt_plumbing_match(&p, no[i]));
    assert_false(mt_plumbing_match(&p, NULL));
    mt_plumbing_free(&p);
}

/* A std class template's member that names a program's type: the shape of
 * the program's specialisation (its file decides, location.c). */
static void test_plumbing_std_specialisation(void **state)
{
    (void)state;
    mt_plumbing p;
    assert_true(mt_plumbing_init(&p, "std::formatter<app::Secret*, !std::hash<Kept>"));
    const char *yes[] = {"std::hash<MyKey>::operator()(MyKey const&) const",
                         "std::hash<(anonymous namespace)::Key>::operator()",
                         "std::formatter<app::Point, char>::format(app::Point const&)",
                         "std::map<MyKey, int, std::less<MyKey> >::operator[](MyKey const&)",
                         "std::hash<Kept>::operator()",
                         NULL};
    for (size_t i = 0; yes[i]; i++)
        if (!mt_plumbing_std_specialisation(&p, yes[i]))
            fail_msg("%s: not a specialisation's shape", yes[i]);
    const char *no[] = {
        "std::hash<int>::operator()(int) const",
        "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(int&&)",
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create"
        "(unsigned long&, unsigned long)",
        "std::array<unsigned long, 16ul>::fill(unsigned long const&)",
        "app::f<MyKey>()",
        "MyKey::hash() const",
        "std::formatter<app::Secret, char>::format", /* the user's list names it */
        "std::pool<MyKey>::xmalloc(unsigned long)",  /* the name rule takes it */
        NULL};
    for (size_t i = 0; no[i]; i++)
        if (mt_plumbing_std_specialisation(&p, no[i]))
            fail_msg("%s: taken for a specialisation", no[i]);
    assert_false(mt_plumbing_std_specialisation(&p, NULL));
    mt_plumbing_free(&p);
}

static const mt_sym_result *sym(mt_symbolizer *s, const char *path, uint64_t off)
{
    mt_sym_module m = {.path = path};
    const mt_sym_result *r = mt_symbolize(s, &m, off);
    assert_non_null(r);
    assert_true(r->nframes >= 1);
    return r;
}

static void expect_reason(mt_symbolizer *s, const char *path, uint64_t off, const char *why)
{
    const mt_sym_result *r = sym(s, path, off);
    assert_null(r->frames[0].function);
    assert_non_null(r->unresolved);
    assert_string_equal(r->unresolved, why);
}

static char *write_file(const char *name, const void *data, size_t n)
{
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

static void *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    void *buf = malloc(*n);
    assert_int_equal(fread(buf, 1, *n, f), *n);
    fclose(f);
    return buf;
}

static void test_hostile(void **state)
{
    (void)state;
    mt_symbolizer *s = mt_symbolizer_new();
    expect_reason(s, "[vdso]", 0x100, "no file (JIT/vdso)");
    expect_reason(s, "", 0x100, "no file (JIT/vdso)");
    expect_reason(s, "/nonexistent/memtop/lib.so", 0x100, "file deleted");
    expect_reason(s, "/bin/sh (deleted)", 0x100, "file deleted");
    expect_reason(s, "/dev/null", 0x100, "no file (JIT/vdso)");
    expect_reason(s, "/", 0x100, "no file (JIT/vdso)");
    char pid[32];
    snprintf(pid, sizeof pid, "garbage-%d", (int)getpid());
    char *garbage = write_file(pid, "this is not an ELF file\n", 24);
    expect_reason(s, garbage, 0x10, "bad ELF file");
    size_t n;
    unsigned char *elf = read_all(elf_path, &n);
    for (size_t cut = 0; cut < n; cut += n / 23 + 1) { /* truncated ELFs */
        snprintf(pid, sizeof pid, "trunc-%d-%zu", (int)getpid(), cut);
        char *t = write_file(pid, elf, cut);
        for (uint64_t off = 0; off < 0x3000; off += 0x11)
            sym(s, t, off);
        unlink(t);
        free(t);
    }
    /* garbage offsets in a good file */
    uint64_t offs[] = {0, 1, 0xfff, UINT64_MAX, UINT64_MAX / 2, 0x7fffffffffffull};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        sym(s, elf_path, offs[i]);
    /* a recorded build-id that differs from the file's */
    uint8_t wrong[20] = {1, 2, 3};
    mt_sym_module m = {.path = elf_path, .build_id = wrong, .build_id_len = sizeof wrong};
    const mt_sym_result *r = mt_symbolize(s, &m, 0x1000);
    assert_null(r->frames[0].function);
    assert_string_equal(r->unresolved, "binary replaced");
    unlink(garbage);
    free(garbage);
    free(elf);
    mt_symbolizer_free(s);
}

static void test_cache(void **state)
{
    (void)state;
    mt_symbolizer *s = mt_symbolizer_new();
    const mt_sym_result *a = sym(s, elf_path, 0x1000);
    const mt_sym_result *b = sym(s, elf_path, 0x1000);
    assert_ptr_equal(a, b);
    uint64_t hits, misses;
    mt_symbolizer_stats(s, &hits, &misses);
    assert_int_equal(hits, 1);
    assert_int_equal(misses, 1);
    mt_symbolizer_free(s);
}

typedef struct lookup {
    mt_symbolizer *s;
    const mt_sym_result *r;
} lookup;

/* A text address of /usr/bin/true that no .dynsym symbol covers. */
static void *lookup_true(void *arg)
{
    lookup *l = arg;
    mt_sym_module m = {.path = "/usr/bin/true"};
    l->r = mt_symbolize(l->s, &m, 0x2010);
    return NULL;
}

/* A debuginfod server that accepts connections and never answers: the
 * query libdwfl makes for a module without local debug info is abandoned
 * as soon as the symbolizer is cancelled (the viewer's worker stopping),
 * not after the bound (10 s) nor libdebuginfod's own (90 s). */
static void test_debuginfod_cancel(void **state)
{
    (void)state;
    if (access("/usr/bin/true", R_OK) != 0)
        skip();
    int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    assert_int_equal(bind(srv, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(srv, 16), 0);
    assert_int_equal(getsockname(srv, (struct sockaddr *)&addr, &len), 0);
    char url[64], cache[] = "/tmp/memtop-dcache-XXXXXX";
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(addr.sin_port));
    assert_non_null(mkdtemp(cache));
    setenv("DEBUGINFOD_URLS", url, 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    unsetenv("DEBUGINFOD_MAXTIME");
    lookup l = {mt_symbolizer_new(), NULL};
    assert_non_null(l.s);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, lookup_true, &l), 0);
    usleep(300 * 1000); /* let the query start (the outcome is the same if it has not) */
    mt_symbolizer_cancel(l.s);
    pthread_join(t, NULL);
    unsetenv("DEBUGINFOD_URLS");
    assert_null(l.r->frames[0].function);
    assert_string_equal(l.r->unresolved, "no symbols (debuginfod cancelled)");
    mt_symbolizer_free(l.s);
    close(srv);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", cache);
    assert_int_equal(system(rm), 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ELF-WITH-DEBUG-INFO\n", argv[0]);
        return 2;
    }
    elf_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_plumbing),
        cmocka_unit_test(test_plumbing_std_specialisation),
        cmocka_unit_test(test_plumbing_name_rule),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_debuginfod_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
