/* launch.h -- running PROG with libmemtop.so preloaded, as memtop's child:
 * spawn (with a clear error if exec fails), notice its exit without reaping
 * it (so its pid and segment name stay ours until we are done), forward
 * signals, and turn its wait status into memtop's exit status. */
#ifndef MEMTOP_LAUNCH_H
#define MEMTOP_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct mt_child {
    pid_t pid;
    bool exited;   /* seen with WNOWAIT: a zombie until mt_child_reap */
    int exit_code; /* if it exited normally */
    int signo;     /* the signal that killed it, or 0 */
} mt_child;

/* Fork and exec argv with LD_PRELOAD=lib (prepended) and
 * MEMTOP_KEEP_PID=<its pid>; the child starts with child_mask.  0; -1 on a
 * fork/pipe error; -2 if argv[0] could not be executed (child reaped).
 * A one-line message goes to err on failure. */
int mt_child_spawn(mt_child *c, char *const argv[], const char *lib, const sigset_t *child_mask,
                   char *err, size_t n);

/* Has the child exited?  (does not reap) */
bool mt_child_poll(mt_child *c);

/* Pass on a signal memtop received, unless the terminal sent it to the
 * whole foreground group (then the child already has it). */
void mt_child_forward(const mt_child *c, int sig, const siginfo_t *info);

/* Reap the child and return its status as an exit code (128+N if killed
 * by signal N). */
int mt_child_reap(mt_child *c);

#endif
