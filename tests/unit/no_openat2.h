/* no_openat2.h -- a process without openat2, for tests: a seccomp filter
 * that answers openat2 with an error, as Linux before 5.6 (ENOSYS) or a
 * container runtime's older profile (EPERM or ENOSYS) does.  Used by
 * test_proc_root.c and tests/security/open_loop.c.  The filter stays for
 * the rest of the process's life (and its children's). */
#ifndef MEMTOP_TEST_NO_OPENAT2_H
#define MEMTOP_TEST_NO_OPENAT2_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* openat2 answers err; every other call is let through. */
static inline int refuse_openat2(int err)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

#endif
