/* unwind_fde.h -- find the unwind description (FDE and CIE) of an address. */
#ifndef MT_UNWIND_FDE_H
#define MT_UNWIND_FDE_H

#include "unwind_read.h"

/* What unwind_cfi.c needs of one FDE and its CIE. */
typedef struct mt_fde {
    mt_rd cie_ins;     /* the CIE's initial instructions */
    mt_rd fde_ins;     /* the FDE's instructions */
    uint64_t pc_begin; /* the FDE covers [pc_begin, pc_end) */
    uint64_t pc_end;
    uint64_t code_align; /* DW_CFA_advance_loc factor */
    int64_t data_align;  /* offset factor */
    uint8_t ptr_enc;     /* encoding of addresses in the FDE (DW_CFA_set_loc) */
    bool signal_frame;   /* augmentation "S": a signal trampoline */
} mt_fde;

/* Finds the FDE covering pc through the loader's own index of loaded
 * objects (_dl_find_object: lock-free, async-signal-safe, no loader lock)
 * and the object's .eh_frame_hdr search table.  False when pc is in no
 * loaded object, the object has no search table or one memtop does not
 * read, no FDE covers pc, or the data is malformed. */
bool mt_fde_find(uint64_t pc, mt_fde *out);

/* Whether mt_fde_find can work in this process (glibc >= 2.35).  Also
 * records where the main program's unwind tables are (unwind_fde.c):
 * call it once before the first mt_fde_find, not from a dl_iterate_phdr
 * callback or with the loader's lock held. */
bool mt_fde_available(void);

#endif
