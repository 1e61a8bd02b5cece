/* hook_exec.h -- the exec family's interposers (hook_exec.c). */
#ifndef MT_HOOK_EXEC_H
#define MT_HOOK_EXEC_H

/* Looks up the next execve, execv and execvp now.  The publisher thread
 * calls it once the process has lived MEMTOP_START_MS (publish_thread.c),
 * so that the fork children that exec at once (a shell's) find them in
 * their copy of the slots: otherwise each child makes the dlsym again, and
 * faults in the symbol tables it walks (a fork child maps no page of a
 * file mapping until it touches it).  On that thread, not in an atfork
 * handler: it holds none of the program's locks and takes no signal,
 * while dlsym may wait for the loader's lock.  A short process never
 * pays for it. */
void mt_exec_prebind(void);

/* atfork child: the parent's threads inside an exec are not in the child
 * (hook_exec.c g_exec). */
void mt_exec_child_reset(void);

#endif
