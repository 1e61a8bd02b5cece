// sym_cxx.cpp -- a C++ program for the symbolization tests: an
// always_inline helper that allocates with new, a template function in a
// namespace, a static function, and std::vector growth (allocator plumbing
// between the program and malloc), and a std::map of std::string built
// with operator+ (the string copies happen in std::pair's constructor and
// std::operator+, inlined members of the library's headers: the location
// must still be the program's function), and the program's own
// specialisation of std::hash that allocates (its location is that
// operator(), the program's code, though its name is in std::).  Leaks so
// every site stays in the
// final snapshot.  Built -O2 -g by check_addr2line.py.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace symtest
{

static inline __attribute__((always_inline)) char *inline_create(std::size_t n)
{
    char *p = new char[n];
    std::memset(p, 2, n);
    return p;
}

template <typename T> __attribute__((noinline)) T *make_array(std::size_t n)
{
    T *p = new T[n];
    for (std::size_t i = 0; i < n; i++)
        p[i] = T(i);
    return p;
}

} // namespace symtest

static __attribute__((noinline)) std::vector<long> *static_grow(int n)
{
    auto *v = new std::vector<long>;
    for (int i = 0; i < n; i++)
        v->push_back(i);
    return v;
}

// A vector of a lambda's type: its growth (_M_realloc_insert) is inlined
// here under an unqualified DWARF name, in a library header (vector.tcc).
static __attribute__((noinline)) std::size_t lambdas(int n)
{
    auto f = [n] { return n; };
    auto *v = new std::vector<decltype(f)>;
    for (int i = 0; i < 3 + n; i++)
        v->emplace_back(f);
    return v->size();
}

static __attribute__((noinline)) std::map<std::string, std::string> *keyed(int n)
{
    auto *m = new std::map<std::string, std::string>;
    std::string k = "session:" + std::to_string(n) + std::string(40, 'k');
    (*m)[k] = std::string(100 + n, 'x');
    return m;
}

struct Key {
    int id;
};

static char *hash_scratch;

template <> struct std::hash<Key> {
    __attribute__((noinline)) std::size_t operator()(const Key &k) const
    {
        hash_scratch = new char[48 + k.id];
        std::memset(hash_scratch, k.id, 48 + k.id);
        return (std::size_t)hash_scratch[0] * 31u + (std::size_t)k.id;
    }
};

static __attribute__((noinline)) std::size_t hashed(int n)
{
    return std::hash<Key>{}(Key{n});
}

__attribute__((noinline)) char *exported_create(std::size_t n)
{
    return symtest::inline_create(n + 8);
}

int main(int argc, char **)
{
    char *a = exported_create(100 + argc);
    int *b = symtest::make_array<int>(50 + argc);
    double *c = symtest::make_array<double>(60 + argc);
    std::vector<long> *v = static_grow(1000 + argc);
    char *d = symtest::inline_create(300 + argc);
    std::map<std::string, std::string> *m = keyed(argc);
    std::size_t l = lambdas(argc);
    std::size_t h = hashed(argc);
    std::printf("%p %p %p %zu %p %zu %zu %zu\n", (void *)a, (void *)b, (void *)c, v->size(),
                (void *)d, m->size(), l, h);
    return 0;
}
