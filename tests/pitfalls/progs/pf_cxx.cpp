// pf_cxx.cpp -- pitfall 9: a C++ program under the preload.
//
// new/delete, new[]/delete[], aligned new, std::vector growth, std::string,
// std::map, shared_ptr, exceptions thrown and caught on several std::threads
// at once (the unwinder allocates each exception object, and libmemtop's
// libunwind exports _Unwind_* symbols too), bad_alloc from a huge new,
// nothrow new, and forced unwinding (pthread_exit, pthread_cancel) through
// destructors.  Prints deterministic results; exits 99 on a violation.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            std::fprintf(stderr, "CHECK FAILED line %d: %s\n", __LINE__, #c);                      \
            _exit(99);                                                                             \
        }                                                                                          \
    } while (0)

struct alignas(256) Wide {
    char bytes[300];
};

static std::atomic<int> g_dtors{0};

struct Guard {
    ~Guard()
    {
        g_dtors++;
    }
};

static long containers()
{
    std::vector<long> v;
    for (long i = 0; i < 100000; i++)
        v.push_back(i);
    std::string s;
    for (int i = 0; i < 2000; i++)
        s += std::to_string(i) + ",";
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < 500; i++)
        m["key" + std::to_string(i)].assign(i % 17, i);
    auto sp = std::make_shared<std::vector<std::string>>(100, std::string(50, 'x'));
    long sum = 0;
    for (long x : v)
        sum += x;
    return sum + (long)s.size() + (long)m.size() + (long)sp->size();
}

static long raw_new()
{
    long sum = 0;
    for (int i = 0; i < 1000; i++) {
        int *one = new int(i);
        int *many = new int[i + 1];
        many[i] = i;
        Wide *w = new Wide;
        CHECK(reinterpret_cast<std::uintptr_t>(w) % 256 == 0);
        Wide *ws = new Wide[3];
        CHECK(reinterpret_cast<std::uintptr_t>(ws) % 256 == 0);
        sum += *one + many[i];
        delete one;
        delete[] many;
        delete w;
        delete[] ws;
    }
    return sum;
}

[[noreturn]] __attribute__((noinline)) static void thrower(int i)
{
    Guard g;
    throw std::runtime_error("error number " + std::to_string(i));
}

static int exceptions(int n)
{
    int caught = 0;
    for (int i = 0; i < n; i++) {
        try {
            try {
                thrower(i);
            } catch (const std::runtime_error &) {
                throw; // rethrow through another frame
            }
        } catch (const std::exception &e) {
            caught += std::string(e.what()) == "error number " + std::to_string(i);
        }
    }
    return caught;
}

static int huge_new()
{
    int ok = 0;
    volatile std::size_t huge = SIZE_MAX / 4;
    try {
        char *p = new char[huge];
        delete[] p;
    } catch (const std::bad_alloc &) {
        ok++;
    }
    char *q = new (std::nothrow) char[huge];
    ok += q == nullptr;
    return ok;
}

static void *exits_early(void *)
{
    Guard g;
    std::vector<int> v(1000, 1);
    pthread_exit(nullptr);
}

static void *waits_forever(void *)
{
    Guard g;
    std::string s(1000, 'c');
    for (;;)
        pause();
}

static void forced_unwinds()
{
    pthread_t a, b;
    CHECK(pthread_create(&a, nullptr, exits_early, nullptr) == 0);
    CHECK(pthread_join(a, nullptr) == 0);
    CHECK(pthread_create(&b, nullptr, waits_forever, nullptr) == 0);
    usleep(20000);
    CHECK(pthread_cancel(b) == 0);
    void *ret;
    CHECK(pthread_join(b, &ret) == 0 && ret == PTHREAD_CANCELED);
}

int main()
{
    std::printf("containers %ld\n", containers());
    std::printf("raw new %ld\n", raw_new());
    std::printf("huge new %d\n", huge_new());
    std::atomic<int> caught{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&caught] { caught += exceptions(2000); });
    for (auto &t : threads)
        t.join();
    std::printf("exceptions caught %d\n", caught.load());
    int before = g_dtors.load();
    forced_unwinds();
    std::printf("forced unwind destructors %d\n", g_dtors.load() - before);
    CHECK(caught.load() == 8000);
    return 0;
}
