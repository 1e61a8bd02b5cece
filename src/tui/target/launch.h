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

/* How the child's terminal is set up.  The interactive viewer owns the
 * terminal, so there PROG reads /dev/null, writes to a file, and runs in
 * its own process group (keys like Ctrl-C are memtop's, which then ends
 * PROG itself). */
typedef struct mt_spawn_io {
    const char *out_path; /* stdout+stderr go here; "%p" becomes the child's pid */
    bool exclusive;       /* create out_path, refusing an existing file or link; else
                           * out_file.h's rules for a file the user named */
    bool own_group;       /* setpgid(0, 0) */
} mt_spawn_io;

/* Fork and exec argv with LD_PRELOAD=lib (prepended) and
 * MEMTOP_KEEP_PID=<its pid>; the child starts with child_mask.  io may be
 * NULL (inherit memtop's terminal).  0; -1 on a fork/pipe error; -2 if
 * argv[0] could not be executed or the output file not created (child
 * reaped).  A one-line message goes to err on failure. */
int mt_child_spawn(mt_child *c, char *const argv[], const char *lib, const sigset_t *child_mask,
                   const mt_spawn_io *io, char *err, size_t n);

/* io->out_path with "%p" replaced by pid, into buf. */
void mt_spawn_out_path(const mt_spawn_io *io, int pid, char *buf, size_t n);

/* Has the child exited?  (does not reap) */
bool mt_child_poll(mt_child *c);

/* Would mt_child_forward pass this signal on?  Not to an exited child,
 * nor one the terminal sent to the whole foreground group (the child
 * already has it). */
bool mt_child_forwards(const mt_child *c, const siginfo_t *info);

/* Pass on a signal memtop received, unless the terminal sent it to the
 * whole foreground group (then the child already has it). */
void mt_child_forward(const mt_child *c, int sig, const siginfo_t *info);

/* Reap the child and return its status as an exit code (128+N if killed
 * by signal N). */
int mt_child_reap(mt_child *c);

#endif
