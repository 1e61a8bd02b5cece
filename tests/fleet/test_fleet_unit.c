/* test_fleet_unit.c -- unit tests (cmocka) of the exporter's small parts:
 * the --serve address parser (what is bound is exactly what was written,
 * anything else a one-line error), the pprof string and id tables (index 0
 * is "", every string once, ids survive growth), the gzip writer (zlib
 * reads back what it wrote), the peer policy's MEMTOP_SERVE_USERS,
 * /metrics' short location labels (C++ and Rust names, the byte bound) and
 * what a process that is not exported counts as (a start or an exit is
 * never an error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "fleet_procs.h"
#include "gzip_out.h"
#include "json_escape.h"
#include "pprof_build.h"
#include "pprof_tables.h"
#include "serve_addr.h"
#include "serve_peer.h"
#include "site_label.h"

static void addr_ok(const char *arg, const char *text, bool v6)
{
    mt_serve_addr a;
    char err[256] = "";
    assert_int_equal(mt_serve_addr_parse(arg, &a, err, sizeof err), 0);
    assert_string_equal(a.text, text);
    assert_int_equal(a.ipv6, v6);
}

static void addr_bad(const char *arg, const char *why)
{
    mt_serve_addr a;
    char err[256] = "";
    assert_int_equal(mt_serve_addr_parse(arg, &a, err, sizeof err), -1);
    assert_non_null(strstr(err, why));
    assert_null(strchr(err, '\n'));
}

static void test_serve_addr(void **state)
{
    (void)state;
    addr_ok("9477", "127.0.0.1:9477", false); /* loopback unless asked */
    addr_ok("0.0.0.0:1", "0.0.0.0:1", false);
    addr_ok("[::1]:65535", "[::1]:65535", true);
    addr_ok("[::]:80", "[::]:80", true);
    addr_bad("0", "not a port");
    addr_bad("65536", "not a port");
    addr_bad("127.0.0.1:", "not a port");
    addr_bad("127.0.0.1:9x", "not a port");
    addr_bad("+80", "not a port");
    addr_bad("localhost:80", "not a numeric");
    addr_bad("::1:80", "not [ADDR:]PORT"); /* IPv6 without brackets */
    addr_bad(":80", "not [ADDR:]PORT");
    addr_bad("[]:80", "not [ADDR:]PORT");
}

static void test_strings(void **state)
{
    (void)state;
    mt_pp_strings s;
    assert_int_equal(mt_pp_strings_init(&s), 0);
    assert_int_equal(mt_pp_string(&s, NULL), 0);
    assert_int_equal(mt_pp_string(&s, ""), 0);
    char name[32];
    for (int i = 0; i < 5000; i++) { /* past several rehashes */
        snprintf(name, sizeof name, "fn%d", i);
        assert_int_equal(mt_pp_string(&s, name), i + 1);
    }
    for (int i = 0; i < 5000; i += 97) {
        snprintf(name, sizeof name, "fn%d", i);
        assert_int_equal(mt_pp_string(&s, name), i + 1);
        assert_string_equal(s.items[i + 1], name);
    }
    assert_string_equal(s.items[0], "");
    assert_int_equal(s.count, 5001);
    /* not UTF-8: U+FFFD for each bad byte, as the JSON export writes it */
    int64_t bad = mt_pp_string(&s, "a\xff\xc3(b");
    assert_string_equal(s.items[bad], "a\xef\xbf\xbd\xef\xbf\xbd(b");
    assert_int_equal(mt_pp_string(&s, "a\xef\xbf\xbd\xef\xbf\xbd(b"), bad);
    assert_int_equal(mt_pp_string(&s, "caf\xc3\xa9"), bad + 1); /* valid: as it is */
    assert_string_equal(s.items[bad + 1], "caf\xc3\xa9");
    mt_pp_strings_free(&s);
}

static void test_ids(void **state)
{
    (void)state;
    mt_pp_ids m;
    mt_pp_ids_init(&m);
    assert_int_equal(mt_pp_id_get(&m, 42), 0);
    for (uint64_t k = 0; k < 10000; k++) /* key 0 is a key like any other */
        assert_int_equal(mt_pp_id_put(&m, k * 0x1000, k + 1), 0);
    for (uint64_t k = 0; k < 10000; k++)
        assert_int_equal(mt_pp_id_get(&m, k * 0x1000), k + 1);
    assert_int_equal(mt_pp_id_get(&m, 0x1001), 0);
    assert_int_equal(m.used, 10000);
    mt_pp_ids_free(&m);
}

/* pprof_build.c: a frame of a module that no longer holds its address by
 * default (a plugin unloaded, another loaded at its place: "a" here, its
 * traces below 10) gets a Location per sample, all alike, but is looked up
 * (symbolized) once per export; it was once symbolized again per sample.
 * The default module's frames share one Location. */
static unsigned g_symbolized;

static unsigned count_symbolize(void *ctx, const mt_module_info *m, int pid, mt_frame *f,
                                unsigned max)
{
    (void)ctx, (void)pid, (void)max;
    g_symbolized++;
    f->function = strstr(m->path, "plug_a") ? "fn_a" : "fn_b";
    f->file = "plug.c";
    f->line = 7;
    return 1;
}

static void test_pprof_replaced_module(void **state)
{
    (void)state;
    mt_modules mods;
    mt_err err;
    mt_modules_init(&mods);
    mods.items = calloc(2, sizeof *mods.items);
    assert_non_null(mods.items);
    mods.cap = mods.count = 2;
    for (int i = 0; i < 2; i++) {
        mods.items[i].start = mods.items[i].bias = 0x7f0000000000ull;
        mods.items[i].end = 0x7f0000100000ull;
        strcpy(mods.items[i].path, i ? "/nonexistent/plug_b.so" : "/nonexistent/plug_a.so");
    }
    mods.items[0].load_seq = 1;
    mods.items[0].unload_seq = 2;
    mods.items[0].unload_trace = 10;
    mods.items[1].load_seq = 3;
    assert_int_equal(mt_modules_reindex(&mods, &err), MT_OK);
    mt_locator loc = {&mods, count_symbolize, NULL, NULL, NULL, 0};
    mt_pp_builder b;
    assert_int_equal(mt_pp_init(&b, &loc), 0);
    const uint64_t addr = 0x7f0000001234ull;
    uint64_t ids[4];
    g_symbolized = 0;
    for (uint32_t t = 1; t <= 4; t++) /* traces 1..4: plug_a's */
        assert_int_not_equal(ids[t - 1] = mt_pp_location_of(&b, addr, t), 0);
    assert_int_equal(g_symbolized, 1);
    for (int i = 0; i < 4; i++) {
        const mt_pp_location *l = &b.locs[ids[i] - 1];
        const mt_pp_line *line = &b.lines[b.first_line[ids[i] - 1]];
        assert_int_equal(l->id, ids[i]);
        assert_int_equal(l->address, addr);
        assert_int_equal(l->n_line, 1);
        assert_int_equal(line->line, 7);
        assert_string_equal(b.str.items[b.fns[line->function_id - 1].name], "fn_a");
        for (int j = 0; j < i; j++)
            assert_int_not_equal(ids[j], ids[i]);
    }
    uint64_t def = mt_pp_location_of(&b, addr, 20); /* plug_b's: the default, shared */
    assert_int_equal(mt_pp_location_of(&b, addr, 21), def);
    assert_int_equal(g_symbolized, 2);
    const mt_pp_line *line = &b.lines[b.first_line[def - 1]];
    assert_string_equal(b.str.items[b.fns[line->function_id - 1].name], "fn_b");
    mt_pp_free(&b);
    mt_modules_free(&mods);
}

static void test_gzip(void **state)
{
    (void)state;
    size_t n = 300000; /* more than one output chunk */
    unsigned char *in = malloc(n), *back = malloc(n);
    assert_non_null(in);
    assert_non_null(back);
    for (size_t i = 0; i < n; i++)
        in[i] = (unsigned char)(i * 2654435761u >> 13);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(mt_gzip_write(f, in, n), 0);
    fclose(f);
    assert_true(len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)buf;
    z.avail_in = (uInt)len;
    z.next_out = back;
    z.avail_out = (uInt)n;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, n);
    assert_memory_equal(in, back, n);
    inflateEnd(&z);
    free(buf);
    free(in);
    free(back);
}

static void test_classify(void **state)
{
    (void)state;
    /* the races of a process starting or exiting */
    assert_int_equal(mt_fleet_classify(MT_E_NOTREADY, true), MT_FLEET_STARTING);
    assert_int_equal(mt_fleet_classify(MT_E_EMPTY, true), MT_FLEET_STARTING);
    assert_int_equal(mt_fleet_classify(MT_E_BUSY, true), MT_FLEET_STARTING);
    assert_int_equal(mt_fleet_classify(MT_E_NOENT, true), MT_FLEET_GONE);
    assert_int_equal(mt_fleet_classify(MT_E_NOENT, false), MT_FLEET_GONE);
    assert_int_equal(mt_fleet_classify(MT_E_GONE, false), MT_FLEET_GONE);
    assert_int_equal(mt_fleet_classify(MT_OK, false), MT_FLEET_NOT_RUNNING);
    assert_int_equal(mt_fleet_classify(MT_E_EMPTY, false), MT_FLEET_NOT_RUNNING);
    assert_int_equal(mt_fleet_classify(MT_E_UNTRUSTED, false), MT_FLEET_NOT_RUNNING);
    /* another user's */
    assert_int_equal(mt_fleet_classify(MT_E_PERM, true), MT_FLEET_DENIED);
    assert_int_equal(mt_fleet_classify(MT_E_UNTRUSTED, true), MT_FLEET_DENIED);
    /* real failures, whether or not the process is there */
    static const mt_errc bad[] = {MT_E_IO,      MT_E_NOTMEMTOP, MT_E_FOREIGN, MT_E_TRUNCATED,
                                  MT_E_CORRUPT, MT_E_NOMEM,     MT_E_FULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(mt_fleet_classify(bad[i], true), MT_FLEET_ERROR);
        assert_int_equal(mt_fleet_classify(bad[i], false), MT_FLEET_ERROR);
    }
}

static void test_peer_users(void **state)
{
    (void)state;
    mt_peer_policy p;
    char err[256] = "";
    assert_int_equal(mt_peer_policy_init(&p, NULL, err, sizeof err), 0);
    assert_int_equal(p.nusers, 2); /* root and us */
    assert_int_equal(mt_peer_policy_init(&p, "root, 4242,0", err, sizeof err), 0);
    assert_int_equal(p.nusers, 5);
    assert_int_equal(p.users[3], 4242);
    assert_int_equal(mt_peer_policy_init(&p, "mtsec-no-such-user", err, sizeof err), -1);
    assert_non_null(strstr(err, "no such user"));
}

static void brief(const char *name, const char *want)
{
    char buf[1024];
    assert_string_equal(mt_name_brief(name, buf, sizeof buf), want);
}

static void test_name_brief(void **state)
{
    (void)state;
    brief("main", "main");
    brief("fleet::grab(int)", "fleet::grab");
    brief("std::vector<int, std::allocator<int> >::push_back(int const&)",
          "std::vector<...>::push_back");
    brief("fleet::Store<std::__cxx11::basic_string<char, std::char_traits<char>, "
          "std::allocator<char> >, std::vector<std::map<int, int> > >::put(std::__cxx11::"
          "basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
          "fleet::Store<...>::put");
    brief("std::_Rb_tree_node<std::pair<int const, int> >* std::_Rb_tree<int>::_M_clone_node"
          "<false>(std::_Rb_tree_node<int>*) const [clone .isra.0]",
          "std::_Rb_tree_node<...>* std::_Rb_tree<...>::_M_clone_node<...>");
    brief("Foo::operator<(Foo const&) const", "Foo::operator<");
    brief("std::operator<<(std::ostream&, char const*)", "std::operator<<");
    brief("Foo<int>::operator->() const", "Foo<...>::operator->");
    brief("Foo::operator()(int) const", "Foo::operator()");
    brief("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
          "std::operator+<char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::"
          "basic_string<char, std::char_traits<char>, std::allocator<char> >&&, char const*)",
          "std::__cxx11::basic_string<...> std::operator+<...>");
    brief("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
          "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char)",
          "std::basic_ostream<...>& std::operator<< <...>");
    brief("bool std::operator< <int>(Foo<int> const&, Foo<int> const&)",
          "bool std::operator< <...>");
    brief("X::operator<=>(X const&) const", "X::operator<=>");
    brief("X::operator unsigned long() const", "X::operator unsigned long");
    brief("operator new(unsigned long)", "operator new");
    brief("(anonymous namespace)::make(int)", "(anonymous namespace)::make");
    brief("main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()");
    /* Rust: a qualified path <T as Trait> stays, generics go */
    brief("<alloc::string::String as core::clone::Clone>::clone",
          "<alloc::string::String as core::clone::Clone>::clone");
    brief("<alloc::vec::Vec<T,A> as alloc::vec::spec_extend::SpecExtend<T,I>>::spec_extend",
          "<alloc::vec::Vec<...> as alloc::vec::spec_extend::SpecExtend<...>>::spec_extend");
    brief("<&dyn core::ops::function::Fn<(), Output = i32> + core::marker::Sync as "
          "core::ops::function::FnOnce<()>>::call_once",
          "<&dyn core::ops::function::Fn<...> + core::marker::Sync as "
          "core::ops::function::FnOnce<...>>::call_once");
    brief("names_rust::Bag<T>::push_many", "names_rust::Bag<...>::push_many");
    brief("std::panic::catch_unwind::<std::rt::lang_start_internal::{closure#0}, isize>",
          "std::panic::catch_unwind::<...>");
    brief("<[u8]>::to_vec_in::<alloc::alloc::Global>", "<[u8]>::to_vec_in::<...>");
    brief("names_rust::main::{{closure}}", "names_rust::main::{{closure}}");
    brief("unbalanced<int(", "unbalanced<int(");
}

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

static void test_site_label(void **state)
{
    (void)state;
    char name[400], buf[MT_SITE_LABEL_MAX + 1];
    mt_frame f = {.address = 0x401000,
                  .module = "/bin/prog",
                  .offset = 0x1000,
                  .file = "/src/names_cxx.cpp",
                  .line = 17};
    f.function = "fleet::grab(int)";
    assert_string_equal(mt_site_label(&f, buf, sizeof buf), "fleet::grab (names_cxx.cpp:17)");
    memset(name, 'a', 300); /* a name too long even when brief: cut, file:line kept */
    strcpy(name + 300, "::f(int)");
    f.function = name;
    mt_site_label(&f, buf, sizeof buf);
    label_ok(buf);
    assert_int_equal(strlen(buf), MT_SITE_LABEL_MAX);
    assert_non_null(strstr(buf, "\xE2\x80\xA6 (names_cxx.cpp:17)"));
    for (int i = 0; i < 150; i++) /* 2-byte characters: cut between them */
        memcpy(name + 2 * i, "\xC3\xA9", 2);
    name[300] = '\0';
    mt_site_label(&f, buf, sizeof buf);
    label_ok(buf);
    memset(name, 0xFF, 300); /* not UTF-8: U+FFFD each, still within the bound */
    f.function = name;
    mt_site_label(&f, buf, sizeof buf);
    label_ok(buf);
    f.file = NULL; /* no line: "name (module+0x...)" */
    f.function = "std::vector<int, std::allocator<int> >::push_back(int const&)";
    assert_string_equal(mt_site_label(&f, buf, sizeof buf),
                        "std::vector<...>::push_back (prog+0x1000)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serve_addr),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_pprof_replaced_module),
        cmocka_unit_test(test_peer_users),
        cmocka_unit_test(test_name_brief),
        cmocka_unit_test(test_site_label),
        cmocka_unit_test(test_classify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
