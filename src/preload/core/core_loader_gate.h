/* core_loader_gate.h -- memtop's own holds of the loader's lock, and fork
 * (core_loader_gate.c says why). */
#ifndef MT_CORE_LOADER_GATE_H
#define MT_CORE_LOADER_GATE_H

#include <stdbool.h>
#include <stddef.h>

struct dl_phdr_info; /* <link.h>, with _GNU_SOURCE */
typedef int (*mt_dl_iter_cb)(struct dl_phdr_info *, size_t, void *);

/* A section in which this thread may take the loader's lock on memtop's
 * behalf (a libunwind walk, a dl_iterate_phdr): a fork waits for it to end
 * (at most 1 s), and it waits for a fork under way to end before it
 * begins.  Nests on one thread.  Never entered while holding a lock that
 * fork_prepare takes (1..5 of CONCURRENCY.md): the fork, past its wait
 * here, would wait for that lock, and the section for the fork. */
void mt_loader_enter(void);
void mt_loader_leave(void);

/* dl_iterate_phdr(cb, data) inside such a section: every call memtop makes
 * on its own behalf, but those under the publish lock (lock 1 covers them). */
int mt_loader_iterate(mt_dl_iter_cb cb, void *data);

/* fork_prepare's step 0: closes the gate and waits (bounded) until no
 * thread is inside a section.  done: both sides open it again (the child
 * forgets the parent's threads' sections). */
void mt_loader_fork_prepare(void);
void mt_loader_fork_done(bool child);

#endif
