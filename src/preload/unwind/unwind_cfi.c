/* unwind_cfi.c -- evaluate call frame information into a frame rule.
 *
 * On a cache miss the own unwinder (unwind_walk.c) needs the rule of one
 * address: it runs the CIE's initial instructions, then the FDE's, up to
 * the row that covers the address (DWARF 5, 6.4.2), and keeps only what it
 * needs to step to the caller: the CFA rule and the rules of rbp (6) and
 * the return address (16).  Rules of other registers do not matter: the
 * CFA of every frame memtop accepts is rsp or rbp plus an offset, so rsp,
 * rbp and rip are all the state a walk carries.  Whatever cannot be packed
 * into a rule (unwind_rule.h) -- CFA or rbp/rip given by expressions, rbp
 * in another register, a signal frame -- is MT_RULE_UNSUPPORTED, and the
 * whole trace is then left to libunwind.  An undefined return address
 * marks the outermost frame (_start, clone): MT_RULE_END.
 */
#include "unwind_cfi.h"

#include "unwind_fde.h"
#include "unwind_rule.h"

#include <string.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define STATE_STACK 8
#define PAGE_SIZE_MIN 4096u

enum { R_UNSET, R_SAME, R_UNDEF, R_OFFSET, R_OTHER };

enum {
    CFA_nop = 0x00,
    CFA_set_loc = 0x01,
    CFA_advance_loc1 = 0x02,
    CFA_advance_loc2 = 0x03,
    CFA_advance_loc4 = 0x04,
    CFA_offset_extended = 0x05,
    CFA_restore_extended = 0x06,
    CFA_undefined = 0x07,
    CFA_same_value = 0x08,
    CFA_register = 0x09,
    CFA_remember_state = 0x0a,
    CFA_restore_state = 0x0b,
    CFA_def_cfa = 0x0c,
    CFA_def_cfa_register = 0x0d,
    CFA_def_cfa_offset = 0x0e,
    CFA_def_cfa_expression = 0x0f,
    CFA_expression = 0x10,
    CFA_offset_extended_sf = 0x11,
    CFA_def_cfa_sf = 0x12,
    CFA_def_cfa_offset_sf = 0x13,
    CFA_val_offset = 0x14,
    CFA_val_offset_sf = 0x15,
    CFA_val_expression = 0x16,
    CFA_GNU_args_size = 0x2e,
    CFA_GNU_negative_offset_extended = 0x2f,
};

typedef struct reg_rule {
    uint8_t how; /* R_* */
    int64_t off; /* R_OFFSET: saved at CFA + off */
} reg_rule;

typedef struct cfa_row {
    uint64_t cfa_reg;
    int64_t cfa_off;
    bool cfa_expr; /* CFA given by an expression */
    bool rsp_set;  /* an explicit rule for rsp (it is the CFA otherwise) */
    reg_rule rbp, ra;
} cfa_row;

typedef struct cfa_vm {
    const mt_fde *fde;
    uint64_t pc;  /* the address whose row is wanted */
    uint64_t loc; /* where the current row starts */
    cfa_row row;
    cfa_row init; /* the row after the CIE's instructions (DW_CFA_restore) */
    cfa_row stack[STATE_STACK];
    unsigned depth;
} cfa_vm;

enum { RUN_END, RUN_STOP, RUN_BAD }; /* instructions done; row found; malformed */

static void set_reg(cfa_vm *vm, uint64_t reg, uint8_t how, int64_t off)
{
    reg_rule rule = {how, off};
    if (reg == REG_RBP)
        vm->row.rbp = rule;
    else if (reg == REG_RA)
        vm->row.ra = rule;
    else if (reg == REG_RSP)
        vm->row.rsp_set = how != R_SAME;
}

static void restore_reg(cfa_vm *vm, uint64_t reg)
{
    if (reg == REG_RBP)
        vm->row.rbp = vm->init.rbp;
    else if (reg == REG_RA)
        vm->row.ra = vm->init.ra;
    else if (reg == REG_RSP)
        vm->row.rsp_set = vm->init.rsp_set;
}

/* Moves to the next row; true if it starts after pc (the current row is
 * the one wanted). */
static bool advance(cfa_vm *vm, uint64_t delta)
{
    uint64_t next = vm->loc + delta * vm->fde->code_align;
    if (next > vm->pc || next < vm->loc)
        return true;
    vm->loc = next;
    return false;
}

static bool skip_block(mt_rd *r)
{
    uint64_t len = mt_rd_uleb(r);
    if (!mt_rd_has(r, len))
        return false;
    r->p += len;
    return true;
}

/* Register rules: offset, restore, undefined, same_value, register,
 * expression and their variants.  False if op is none of them. */
static bool reg_op(cfa_vm *vm, uint8_t op, mt_rd *r)
{
    int64_t da = vm->fde->data_align;
    uint64_t reg;
    switch (op) {
    case CFA_offset_extended:
        reg = mt_rd_uleb(r);
        set_reg(vm, reg, R_OFFSET, (int64_t)mt_rd_uleb(r) * da);
        return true;
    case CFA_offset_extended_sf:
        reg = mt_rd_uleb(r);
        set_reg(vm, reg, R_OFFSET, mt_rd_sleb(r) * da);
        return true;
    case CFA_GNU_negative_offset_extended:
        reg = mt_rd_uleb(r);
        set_reg(vm, reg, R_OFFSET, -(int64_t)mt_rd_uleb(r) * da);
        return true;
    case CFA_restore_extended:
        restore_reg(vm, mt_rd_uleb(r));
        return true;
    case CFA_undefined:
        set_reg(vm, mt_rd_uleb(r), R_UNDEF, 0);
        return true;
    case CFA_same_value:
        set_reg(vm, mt_rd_uleb(r), R_SAME, 0);
        return true;
    case CFA_register:
    case CFA_val_offset:
        reg = mt_rd_uleb(r);
        mt_rd_uleb(r);
        set_reg(vm, reg, R_OTHER, 0);
        return true;
    case CFA_val_offset_sf:
        reg = mt_rd_uleb(r);
        mt_rd_sleb(r);
        set_reg(vm, reg, R_OTHER, 0);
        return true;
    case CFA_expression:
    case CFA_val_expression:
        reg = mt_rd_uleb(r);
        if (skip_block(r))
            set_reg(vm, reg, R_OTHER, 0);
        return true;
    default:
        return false;
    }
}

/* CFA rules.  Changing only the register or the offset of a CFA given by
 * an expression keeps it an expression (which is unsupported anyway). */
static bool cfa_op(cfa_vm *vm, uint8_t op, mt_rd *r)
{
    int64_t da = vm->fde->data_align;
    switch (op) {
    case CFA_def_cfa:
        vm->row.cfa_reg = mt_rd_uleb(r);
        vm->row.cfa_off = (int64_t)mt_rd_uleb(r);
        vm->row.cfa_expr = false;
        return true;
    case CFA_def_cfa_sf:
        vm->row.cfa_reg = mt_rd_uleb(r);
        vm->row.cfa_off = mt_rd_sleb(r) * da;
        vm->row.cfa_expr = false;
        return true;
    case CFA_def_cfa_register:
        vm->row.cfa_reg = mt_rd_uleb(r);
        return true;
    case CFA_def_cfa_offset:
        vm->row.cfa_off = (int64_t)mt_rd_uleb(r);
        return true;
    case CFA_def_cfa_offset_sf:
        vm->row.cfa_off = mt_rd_sleb(r) * da;
        return true;
    case CFA_def_cfa_expression:
        vm->row.cfa_expr = true;
        skip_block(r); /* a cut block leaves r bad */
        return true;
    default:
        return false;
    }
}

/* Location and state operations; the result is a RUN_* value, or -1 if
 * op is none of them. */
static int flow_op(cfa_vm *vm, uint8_t op, mt_rd *r)
{
    uint64_t to;
    switch (op) {
    case CFA_nop:
        return RUN_END;
    case CFA_set_loc:
        to = mt_rd_ptr(r, vm->fde->ptr_enc, 0);
        if (r->bad || to > vm->pc)
            return r->bad ? RUN_BAD : RUN_STOP;
        vm->loc = to;
        return RUN_END;
    case CFA_advance_loc1:
        return advance(vm, mt_rd_fixed(r, 1)) ? RUN_STOP : RUN_END;
    case CFA_advance_loc2:
        return advance(vm, mt_rd_fixed(r, 2)) ? RUN_STOP : RUN_END;
    case CFA_advance_loc4:
        return advance(vm, mt_rd_fixed(r, 4)) ? RUN_STOP : RUN_END;
    case CFA_remember_state:
        if (vm->depth == STATE_STACK)
            return RUN_BAD;
        vm->stack[vm->depth++] = vm->row;
        return RUN_END;
    case CFA_restore_state:
        if (vm->depth == 0)
            return RUN_BAD;
        vm->row = vm->stack[--vm->depth];
        return RUN_END;
    case CFA_GNU_args_size:
        mt_rd_uleb(r);
        return RUN_END;
    default:
        return -1;
    }
}

/* Runs instructions until their end (RUN_END), the row covering pc is
 * complete (RUN_STOP), or something memtop cannot read (RUN_BAD). */
static int run(cfa_vm *vm, mt_rd *r)
{
    while (r->p < r->end && !r->bad) {
        uint8_t op = mt_rd_u8(r);
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            if (advance(vm, op & 0x3f))
                return RUN_STOP;
            continue;
        case 2: /* DW_CFA_offset */
            set_reg(vm, op & 0x3f, R_OFFSET, (int64_t)mt_rd_uleb(r) * vm->fde->data_align);
            continue;
        case 3: /* DW_CFA_restore */
            restore_reg(vm, op & 0x3f);
            continue;
        default:
            break;
        }
        if (reg_op(vm, op, r) || cfa_op(vm, op, r))
            continue;
        int res = flow_op(vm, op, r);
        if (res != RUN_END)
            return res < 0 ? RUN_BAD : res;
    }
    return r->bad ? RUN_BAD : RUN_END;
}

/* The packed rule of the row. */
static uint64_t classify(const cfa_row *row)
{
    if (row->ra.how == R_UNDEF)
        return MT_RULE_END;
    if (row->cfa_expr || row->rsp_set || (row->cfa_reg != REG_RSP && row->cfa_reg != REG_RBP))
        return MT_RULE_UNSUPPORTED;
    if (row->ra.how != R_OFFSET || row->ra.off != -8)
        return MT_RULE_UNSUPPORTED; /* x86-64 calls leave it at CFA - 8 */
    int64_t rbp_below = 0;
    if (row->rbp.how == R_OFFSET) {
        if (row->rbp.off > -16)
            return MT_RULE_UNSUPPORTED;
        rbp_below = -row->rbp.off;
    } else if (row->rbp.how != R_UNSET && row->rbp.how != R_SAME) {
        return MT_RULE_UNSUPPORTED;
    }
    return mt_rule_pack(row->cfa_reg == REG_RBP, row->cfa_off, rbp_below);
}

/* Whether the return address pc + 1 is the rt_sigreturn trampoline (mov
 * $15, %rax; syscall): a signal frame even without CFI saying so (libunwind
 * checks the same; a restorer without CFI may follow a function with CFI).
 * Called only when an FDE covers pc, so pc's page is mapped code, and only
 * bytes on that page are read. */
static bool is_sigreturn(uint64_t pc)
{
    static const uint8_t code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    uint64_t ra = pc + 1;
    if ((pc & ~(uint64_t)(PAGE_SIZE_MIN - 1)) !=
        ((ra + sizeof code - 1) & ~(uint64_t)(PAGE_SIZE_MIN - 1)))
        return false;
    return memcmp((const void *)(uintptr_t)ra, code, sizeof code) == 0;
}

uint64_t mt_cfi_eval(const mt_fde *fde, uint64_t pc)
{
    if (fde->signal_frame)
        return MT_RULE_UNSUPPORTED;
    cfa_vm vm = {.fde = fde, .pc = pc, .loc = fde->pc_begin};
    mt_rd cie = fde->cie_ins, ins = fde->fde_ins;
    int res = run(&vm, &cie);
    if (res == RUN_BAD)
        return MT_RULE_UNSUPPORTED;
    vm.init = vm.row;
    vm.depth = 0;
    if (res == RUN_END && run(&vm, &ins) == RUN_BAD)
        return MT_RULE_UNSUPPORTED;
    return classify(&vm.row);
}

uint64_t mt_cfi_rule(uint64_t pc, bool is_return)
{
    mt_fde fde;
    if (!mt_fde_find(pc, &fde))
        return MT_RULE_UNSUPPORTED;
    if (is_return && is_sigreturn(pc))
        return MT_RULE_UNSUPPORTED;
    return mt_cfi_eval(&fde, pc);
}
