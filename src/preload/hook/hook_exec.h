/* hook_exec.h -- the exec family's interposers (hook_exec.c). */
#ifndef MT_HOOK_EXEC_H
#define MT_HOOK_EXEC_H

/* Looks up the next execve, execv and execvp now, in a process about to
 * fork (core_lifecycle.c fork_prepare), so that a fork child that execs at
 * once (a shell's) finds them in its copy of the slots: otherwise each child
 * makes the dlsym again, and faults in the symbol tables it walks (a fork
 * child maps no page of a file mapping until it touches it). */
void mt_exec_prebind(void);

#endif
