/* caps.h -- which capabilities memtop has in effect (capget), so that a
 * command that acts on other users' files can refuse before it touches any
 * (`memtop --clean --all-users`, cmd_clean.c) instead of half-working. */
#ifndef MEMTOP_CAPS_H
#define MEMTOP_CAPS_H

#include <stdbool.h>

/* Whether capability cap (CAP_* of <linux/capability.h>) is in this
 * process's effective set; false when the kernel cannot say. */
bool mt_cap_effective(int cap);

#endif
