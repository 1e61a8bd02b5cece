/* core_procinfo.h -- facts about this process from /proc. */
#ifndef MT_PROCINFO_H
#define MT_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The start of a small file (of /proc) in buf, NUL-terminated; its
 * length, or -1 if it cannot be opened (system calls only). */
ssize_t mt_proc_read_file(const char *path, char *buf, size_t cap);

/* This process's start time in clock ticks (field 22 of /proc/self/stat,
 * what the viewer's mt_proc_start_ticks(pid) reads back); 0 if unknown. */
uint64_t mt_self_start_ticks(void);

void mt_proc_exe(char *out, size_t cap);
void mt_proc_cmdline(char *out, size_t cap);
uint64_t mt_proc_rss_bytes(void);

/* Threads in this process (/proc/self/stat), 0 if unknown. */
uint32_t mt_proc_threads(void);

/* The absolute name of the file mapped at addr, as the kernel has it
 * (/proc/self/maps); false if none (anonymous memory, [vdso]) or it does
 * not fit.  No allocation. */
bool mt_proc_mapped_file(uint64_t addr, char *out, size_t cap);

#endif
