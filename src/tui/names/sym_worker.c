/* sym_worker.c -- the background symbolizer's life cycle and its thread
 * (see sym_worker.h): the thread pops the newest request, symbolizes it
 * with the lock released, and stores the interned answer. */
#include "sym_worker_impl.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm_guard.h"

bool mt_symw_intern_frame(mt_symworker *w, mt_frame *f)
{
    const char **s[] = {&f->module, &f->function, &f->linkage, &f->file, &f->unresolved};
    bool ok = true;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        if (*s[i]) {
            *s[i] = mt_intern_get(&w->names, *s[i]);
            ok = ok && *s[i];
        }
    }
    return ok;
}

void mt_symw_publish_pending(mt_symworker *w)
{
    size_t n = w->queue.live + (w->working ? 1 : 0);
    /* An exchange, not a store: helgrind knows locked instructions, not
     * C11 atomics, and would report the relaxed store as a race. */
    (void)__atomic_exchange_n(&w->pending, n, __ATOMIC_RELAXED);
}

/* The next work (lock held; waits): a record to symbolize in *e, or a
 * shape job waiting (*e NULL); false when stopping. */
static bool next_work(mt_symworker *w, mt_symw_entry **e)
{
    for (;;) {
        *e = NULL;
        if (w->stopping)
            return false;
        if (w->shape_job)
            return true;
        *e = mt_symw_queue_pop(&w->queue);
        mt_symw_publish_pending(w);
        if (*e && !(*e)->orphan)
            return true;
        if (!*e)
            pthread_cond_wait(&w->wake, &w->lock);
    }
}

/* Make the latest map the one the thread holds (lock held); the map to
 * free once the lock is released, or NULL. */
static mt_symw_mods *hold_latest(mt_symworker *w)
{
    if (w->held == w->cur)
        return NULL;
    mt_symw_mods *old = w->held;
    w->held = mt_symw_mods_ref(w->cur);
    return mt_symw_mods_unref(old) ? old : NULL;
}

/* e's answer against the held map, in chain (no lock held). */
/* The trace whose frames e's answer names (0: any). */
static uint32_t trace_of(const mt_symw_entry *e)
{
    return e->kind == MT_SYMW_LOCATION    ? (uint32_t)e->key
           : e->kind == MT_SYMW_FRAMES_AT ? (uint32_t)e->frames[1]
                                          : 0;
}

static unsigned symbolize(mt_symworker *w, const mt_symw_entry *e, mt_frame *chain)
{
    mt_locator loc = mt_symbols_locator(&w->syms, &w->held->map);
    loc.wrappers = &w->wrappers;
    loc.trace = trace_of(e);
    if (e->kind == MT_SYMW_LOCATION) {
        mt_trace_location(&loc, e->frames, e->nframes, chain);
        return 1;
    }
    return mt_locate_all(&loc, e->frames[0], chain, MT_MAX_CHAIN);
}

/* Store chain in res as e's answer (lock held).  Out of memory: nothing
 * is stored, and the next lookup asks again. */
static void finish(mt_symworker *w, mt_symw_entry *e, mt_frame *res, const mt_frame *chain,
                   unsigned k)
{
    e->busy = w->working = false;
    bool ok = res != NULL;
    for (unsigned i = 0; ok && i < k; i++) {
        res[i] = chain[i];
        ok = mt_symw_intern_frame(w, &res[i]);
    }
    if (ok) {
        free(e->res);
        e->res = res;
        e->nres = k;
        e->mod_gen = w->held->gen;
        e->wrap_gen = w->wrap_gen;
        if (e->kind != MT_SYMW_LOCATION) { /* which life of a path (sym_lookup.c) */
            const mt_module_info *m = mt_modules_find_at(&w->held->map, e->frames[0], trace_of(e));
            e->mod_load = m ? m->load_seq : 0;
        }
        __atomic_add_fetch(&w->generation, 1, __ATOMIC_RELEASE);
    } else {
        free(res);
    }
    mt_symw_publish_pending(w);
}

static bool same_set(const mt_addr_set *a, const mt_addr_set *b)
{
    return a->n == b->n && (!a->n || memcmp(a->addrs, b->addrs, a->n * sizeof *a->addrs) == 0);
}

/* Use set as the wrappers from now on (lock held, or no thread).  The
 * same set as before changes nothing: bumping wrap_gen would make every
 * location answered so far be asked again (the shape job runs again each
 * time traces are added, and mostly finds the same wrappers). */
static void install_wrappers(mt_symworker *w, mt_addr_set *set)
{
    mt_addr_set_seal(set);
    if (same_set(&w->wrappers, set)) {
        mt_addr_set_free(set);
        return;
    }
    mt_addr_set_free(&w->wrappers);
    w->wrappers = *set;
    __atomic_add_fetch(&w->wrap_gen, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->generation, 1, __ATOMIC_RELEASE);
}

/* Run the waiting shape job (lock held; released while it runs). */
static void run_shape(mt_symworker *w)
{
    void *job = w->shape_job;
    void (*free_job)(void *) = w->shape_free;
    mt_symw_shape_fn fn = w->shape_run;
    w->shape_job = NULL;
    w->working = true;
    mt_symw_publish_pending(w);
    mt_symw_mods *drop = hold_latest(w);
    pthread_mutex_unlock(&w->lock);
    mt_symw_mods_free(drop);
    mt_locator loc = mt_symbols_locator(&w->syms, &w->held->map);
    mt_addr_set set;
    mt_addr_set_init(&set);
    int rc = fn(job, &loc, &set);
    free_job(job);
    pthread_mutex_lock(&w->lock);
    w->working = false;
    if (rc == 0)
        install_wrappers(w, &set);
    else
        mt_addr_set_free(&set);
    mt_symw_publish_pending(w);
}

static void *run(void *arg)
{
    mt_symworker *w = arg;
    mt_frame chain[MT_MAX_CHAIN];
    pthread_mutex_lock(&w->lock);
    for (mt_symw_entry *e; next_work(w, &e);) {
        if (!e) {
            run_shape(w);
            continue;
        }
        e->busy = w->working = true;
        mt_symw_publish_pending(w);
        mt_symw_mods *drop = hold_latest(w);
        pthread_mutex_unlock(&w->lock);
        mt_symw_mods_free(drop);
        unsigned k = symbolize(w, e, chain);
        mt_frame *res = malloc(k * sizeof *res);
        pthread_mutex_lock(&w->lock);
        finish(w, e, res, chain, k);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void say(char *err, size_t n, const char *msg)
{
    if (err && n)
        snprintf(err, n, "%s", msg);
}

/* The thread, with every asynchronous signal blocked in it; 0 or an errno
 * value. */
static int start_thread(mt_symworker *w)
{
    sigset_t all, old;
    mt_guard_thread_mask(&all); /* faults stay deliverable: the SIGBUS guard */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, run, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Everything but the thread and the lock; false when out of memory. */
static bool init_state(mt_symworker *w, bool enabled, const char *skip_env)
{
    mt_intern_init(&w->names);
    mt_symw_table_init(&w->table);
    bool queue = mt_symw_queue_init(&w->queue, MT_SYMW_QUEUE_CAP);
    w->cur = mt_symw_mods_copy(NULL, 0);
    bool syms = mt_symbols_init(&w->syms, enabled, skip_env) == 0;
    if (queue && w->cur && syms)
        return true;
    if (syms)
        mt_symbols_free(&w->syms);
    mt_symw_mods_free(w->cur);
    mt_symw_queue_free(&w->queue);
    return false;
}

static void free_state(mt_symworker *w)
{
    if (w->shape_job)
        w->shape_free(w->shape_job);
    mt_addr_set_free(&w->wrappers);
    mt_symbols_free(&w->syms);
    if (mt_symw_mods_unref(w->held))
        mt_symw_mods_free(w->held);
    if (mt_symw_mods_unref(w->cur))
        mt_symw_mods_free(w->cur);
    mt_symw_queue_free(&w->queue);
    mt_symw_table_free(&w->table);
    mt_intern_free(&w->names);
}

mt_symworker *mt_symworker_start(bool enabled, const char *skip_env, char *err, size_t n)
{
    mt_symworker *w = calloc(1, sizeof *w);
    if (!w || !init_state(w, enabled, skip_env)) {
        free(w);
        say(err, n, "out of memory for the symbolizer");
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    int rc = enabled ? start_thread(w) : 0;
    if (rc != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "cannot start the symbolizer thread: %s", strerror(rc));
        say(err, n, msg);
        mt_symworker_stop(w);
        return NULL;
    }
    w->threaded = enabled;
    return w;
}

void mt_symworker_stop(mt_symworker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (w->syms.sym)
        mt_symbolizer_cancel(w->syms.sym); /* a debuginfod query under way ends now */
    if (w->threaded)
        pthread_join(w->thread, NULL);
    free_state(w);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void mt_symworker_set_modules(mt_symworker *w, const mt_modules *mods)
{
    if (!w || !mods)
        return;
    pthread_mutex_lock(&w->lock);
    bool same = mt_symw_mods_same(w->cur, mods);
    pthread_mutex_unlock(&w->lock);
    mt_symw_mods *fresh = same ? NULL : mt_symw_mods_copy(mods, 0);
    if (!fresh)
        return; /* unchanged, or out of memory: keep the old map */
    pthread_mutex_lock(&w->lock);
    fresh->gen = ++w->mods_gen;
    mt_symw_mods *old = w->cur;
    w->cur = fresh;
    bool last = mt_symw_mods_unref(old);
    __atomic_add_fetch(&w->generation, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&w->lock);
    if (last)
        mt_symw_mods_free(old);
}

void mt_symworker_shape(mt_symworker *w, mt_symw_shape_fn run, void (*free_job)(void *), void *job)
{
    if (!w) {
        free_job(job);
        return;
    }
    pthread_mutex_lock(&w->lock);
    if (!w->threaded) { /* module + offset only: cheap, and nothing else to wait for */
        mt_locator loc = mt_symbols_locator(&w->syms, &w->cur->map);
        mt_addr_set set;
        mt_addr_set_init(&set);
        if (run(job, &loc, &set) == 0)
            install_wrappers(w, &set);
        else
            mt_addr_set_free(&set);
        pthread_mutex_unlock(&w->lock);
        free_job(job);
        return;
    }
    void *old = w->shape_job;
    void (*free_old)(void *) = w->shape_free;
    w->shape_job = job;
    w->shape_run = run;
    w->shape_free = free_job;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (old)
        free_old(old);
}

uint64_t mt_symworker_wrappers_gen(const mt_symworker *w)
{
    return w ? __atomic_load_n(&w->wrap_gen, __ATOMIC_RELAXED) : 0;
}

uint64_t mt_symworker_generation(const mt_symworker *w)
{
    return w ? __atomic_load_n(&w->generation, __ATOMIC_ACQUIRE) : 0;
}

size_t mt_symworker_pending(const mt_symworker *w)
{
    return w ? __atomic_load_n(&w->pending, __ATOMIC_RELAXED) : 0;
}
