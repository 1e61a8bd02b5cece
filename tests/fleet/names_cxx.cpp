// names_cxx.cpp -- a C++ target whose allocation sites have the names that
// trouble pprof and Prometheus: a member of a class template whose
// demangled name runs to hundreds of characters, and an overloaded
// function (fleet::grab(int) and fleet::grab(std::string const&)).  Every
// block is kept (leaked).  With "hold" it then waits to be killed (for
// /metrics); else it exits.  Built -O0 -fno-inline by the tests.
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace fleet {
template <typename K, typename V> struct Store {
    std::map<K, std::vector<V>> m;
    __attribute__((noinline)) void put(const K &k, const V &v) { m[k].push_back(v); }
};
__attribute__((noinline)) void *grab(int n) { return malloc(n * 16); }
__attribute__((noinline)) void *grab(const std::string &s) { return malloc(s.size() * 32); }
} // namespace fleet

typedef std::map<int, std::string> Row;
static fleet::Store<std::string, std::vector<Row>> *store;
static void *kept[100];

int main(int argc, char **argv)
{
    store = new fleet::Store<std::string, std::vector<Row>>;
    for (int i = 0; i < 50; i++)
        store->put(std::string(40, 'a' + i % 26) + std::to_string(i),
                   {{{i, std::string(50, 'x')}}});
    for (int i = 0; i < 50; i++) {
        kept[i] = fleet::grab(i + 1);
        kept[50 + i] = fleet::grab(std::string(i + 1, 'y'));
    }
    if (argc > 1 && strcmp(argv[1], "hold") == 0)
        for (;;)
            pause();
    return 0;
}
