/* record_order.h -- the order a recording keeps within a clock tick
 * (MEMTOP_RECORD_ORDER): "tick", the default, sorts each tick's events of a
 * thread to take fewer bytes (record_tick.h); "thread" keeps the order
 * the thread made them in, as files of format version 4 do.  Read once
 * from the environment; a bad value gets one warning and the default.
 * Every session of the process uses it, but a culled one always keeps the
 * thread's order (its late allocations are written at their own time).
 */
#ifndef MT_RECORD_ORDER_H
#define MT_RECORD_ORDER_H

#include <stdbool.h>

/* The environment's value (NULL: unset).  Recording control only. */
void mt_rec_order_env(const char *v);

/* A control start's argument (MT_CMD_RECORD_START): "thread-order " first
 * asks the threads' order for that session, else the environment's order
 * applies.  Returns the argument after it. */
const char *mt_rec_order_cmd(const char *arg);

/* The next session's order: tick order (true) or the threads' (false). */
bool mt_rec_order_ticks(void);

#endif
