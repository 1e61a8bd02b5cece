/* demo.c -- memtop-demo: a small service-like program to watch with memtop.
 *
 * It exists so that the README's first command shows something meaningful,
 * and so that the e2e tests have a long-running target.  Three behaviours
 * live in separate functions, so each is its own allocation site:
 *   - session_log_append(): a steady leak, an append-only log that grows
 *     every 100 ms tick and is never trimmed (still live at exit);
 *   - cache_fill(): a cache filled once at start-up and then only read;
 *     it is released at shutdown;
 *   - handle_request(): churn of short-lived temporaries (parse buffers and
 *     a response grown with realloc), all freed within the tick.
 *
 * Usage: memtop-demo [SECONDS]   (default 4; 0 exits at once).  Exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 100
#define LOG_ENTRY_BYTES 2048
#define CACHE_ENTRIES 256
#define CACHE_ENTRY_BYTES 4096
#define REQUESTS_PER_TICK 50

struct log_entry {
    struct log_entry *next;
    uint64_t tick;
    char text[LOG_ENTRY_BYTES - 16];
};

struct service {
    struct log_entry *log;      /* grows forever: the leak */
    char *cache[CACHE_ENTRIES]; /* filled once, held */
    uint64_t tick;
    uint64_t checksum; /* keeps the work observable */
};

static int parse_seconds(const char *arg, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || v < 0 || v > 86400) {
        return -1;
    }
    *out = v;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The leak: one entry per tick, appended and never removed. */
static __attribute__((noinline)) int session_log_append(struct service *svc)
{
    struct log_entry *e = malloc(sizeof(*e));
    if (e == NULL) {
        return -1;
    }
    e->tick = svc->tick;
    snprintf(e->text, sizeof(e->text), "tick %llu: served %d requests",
             (unsigned long long)svc->tick, REQUESTS_PER_TICK);
    e->next = svc->log;
    svc->log = e;
    return 0;
}

/* The cache: filled once, then held until shutdown. */
static __attribute__((noinline)) int cache_fill(struct service *svc)
{
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        svc->cache[i] = malloc(CACHE_ENTRY_BYTES);
        if (svc->cache[i] == NULL) {
            return -1;
        }
        memset(svc->cache[i], 'a' + i % 26, CACHE_ENTRY_BYTES);
    }
    return 0;
}

static void cache_release(struct service *svc)
{
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        free(svc->cache[i]);
        svc->cache[i] = NULL;
    }
}

/* The churn: a parse buffer and a growing response, both freed at once. */
static __attribute__((noinline)) int handle_request(struct service *svc, int n)
{
    size_t in_len = 64 + (size_t)((n * 37 + (int)svc->tick) % 1024);
    char *in = malloc(in_len);
    if (in == NULL) {
        return -1;
    }
    memset(in, 'r', in_len);
    char *out = NULL;
    size_t out_len = 0;
    for (int part = 0; part < 3; part++) {
        char *grown = realloc(out, out_len + 128);
        if (grown == NULL) {
            free(out);
            free(in);
            return -1;
        }
        out = grown;
        memcpy(out + out_len, in, 128 < in_len ? 128 : in_len);
        out_len += 128;
    }
    svc->checksum += (unsigned char)out[out_len - 1] + in_len;
    free(out);
    free(in);
    return 0;
}

static int run(struct service *svc, long seconds)
{
    if (cache_fill(svc) != 0) {
        return -1;
    }
    double end = now_s() + (double)seconds;
    while (now_s() < end) {
        for (int r = 0; r < REQUESTS_PER_TICK; r++) {
            if (handle_request(svc, r) != 0) {
                return -1;
            }
        }
        if (session_log_append(svc) != 0) {
            return -1;
        }
        svc->tick++;
        sleep_ms(TICK_MS);
    }
    cache_release(svc);
    /* svc->log is deliberately not freed: it is the leak memtop shows. */
    return 0;
}

int main(int argc, char **argv)
{
    long seconds = 4;
    if (argc > 2 || (argc == 2 && parse_seconds(argv[1], &seconds) != 0)) {
        fprintf(stderr, "usage: memtop-demo [SECONDS]  (0..86400, default 4)\n");
        return 2;
    }
    struct service svc;
    memset(&svc, 0, sizeof(svc));
    if (run(&svc, seconds) != 0) {
        fprintf(stderr, "memtop-demo: out of memory\n");
        return 1;
    }
    return 0;
}
