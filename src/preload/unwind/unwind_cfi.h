/* unwind_cfi.h -- the unwind rule of one instruction address, from .eh_frame. */
#ifndef MT_UNWIND_CFI_H
#define MT_UNWIND_CFI_H

#include "unwind_fde.h"

#include <stdbool.h>
#include <stdint.h>

/* The packed rule (unwind_rule.h) for the frame whose code is at pc:
 * a usual rule, MT_RULE_END for the outermost frame (return
 * address undefined), or MT_RULE_UNSUPPORTED.  pc is a return address - 1
 * (is_return), or an exact instruction address (the unwinder's start).
 * Never allocates, takes no lock; async-signal-safe. */
uint64_t mt_cfi_rule(uint64_t pc, bool is_return);

/* The rule of pc (in [fde->pc_begin, fde->pc_end)) from fde's CIE and FDE
 * instructions: the evaluation behind mt_cfi_rule. */
uint64_t mt_cfi_eval(const mt_fde *fde, uint64_t pc);

#endif
