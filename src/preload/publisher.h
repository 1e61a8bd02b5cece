/* publisher.h -- the background thread that publishes snapshots. */
#ifndef MT_PUBLISHER_H
#define MT_PUBLISHER_H

#include <stdbool.h>

bool mt_publisher_start(bool fork_child);
/* Final snapshot at exit: publish, mark exited, unlink unless kept. */
void mt_publisher_final(void);

/* Records the loaded modules now (before a dlclose, so that addresses in
 * a module loaded and unloaded between two publishes stay resolvable). */
void mt_publisher_sync_modules(void);

/* fork support. */
void mt_publisher_lock(void);
void mt_publisher_unlock(void);
void mt_publisher_child_reset(void);

#endif
