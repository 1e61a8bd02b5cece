/* preload_never.h -- will a launched PROG ever run libmemtop.so?  memtop
 * -- PROG preloads it through the dynamic loader, so a statically linked
 * PROG never maps it, nor does a program whose loader ignored LD_PRELOAD
 * (setuid or setgid) or could not load it (another architecture).  Asked
 * while PROG has no segment, after each exec (a shell script's /bin/sh is
 * preloaded, the static program it execs is not), so that --batch and
 * the viewer say so at once instead of waiting for a snapshot that never
 * comes. */
#ifndef MEMTOP_PRELOAD_NEVER_H
#define MEMTOP_PRELOAD_NEVER_H

#include <stdbool.h>
#include <stddef.h>

/* True when pid's present program will never map libmemtop.so, with the
 * reason in why: "it is statically linked (...)", or "its dynamic loader
 * did not load libmemtop.so (...)" once it has mapped other libraries and
 * not that one (the loader maps the preloaded ones first).  False while it
 * may still (the loader has not got that far), when it maps the library,
 * or when it cannot be told (pid gone, not readable). */
bool mt_preload_never(int pid, char *why, size_t n);

#endif
