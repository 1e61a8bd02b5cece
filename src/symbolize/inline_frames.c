/* inline_frames.c -- see inline_frames.h.  Mirrors eu-addr2line -i -f:
 * the first name is the innermost subprogram or inlined_subroutine among
 * dwarf_getscopes(pc), with the line table's file:line for pc; then for
 * each inlined_subroutine on the DIE chain of the innermost scope
 * (dwarf_getscopes_die), the enclosing function's name at that inline's
 * DW_AT_call_file:DW_AT_call_line.  The scopes come from cu_index (one
 * walk per CU) rather than dwarf_getscopes/dwarf_getscopes_die (one walk per
 * call); the answer is the same. */
#include "inline_frames.h"

#include <dwarf.h>
#include <stdlib.h>

#include <elfutils/libdw.h>

/* Linkage name (following abstract_origin/specification), else DW_AT_name. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!name)
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    return name ? name : dwarf_diename(die);
}

/* A relative file name is relative to its CU's compilation directory
 * (eu-addr2line prints the two joined). */
static void set_file(mt_raw_frame *f, const char *file, Dwarf_Die *cu)
{
    f->file = file;
    Dwarf_Attribute a;
    f->dir =
        file && file[0] != '/' && cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)) : NULL;
}

static void line_of(Dwfl_Module *mod, Dwarf_Addr addr, mt_raw_frame *f)
{
    Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
    int line = 0;
    if (l) {
        set_file(f, dwfl_lineinfo(l, &(Dwarf_Addr){0}, &line, NULL, NULL, NULL), dwfl_linecu(l));
    }
    f->line = line > 0 ? (unsigned)line : 0;
}

/* The .symtab/.dynsym name at addr, or NULL. */
static const char *symtab_name(Dwfl_Module *mod, Dwarf_Addr addr)
{
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
    return name && *name ? name : NULL;
}

/* No function scope at addr: the symbol's name and, with lines, the line
 * table's file:line, whichever exist. */
static unsigned from_symtab(Dwfl_Module *mod, Dwarf_Addr addr, bool lines, mt_raw_frame *out)
{
    *out = (mt_raw_frame){symtab_name(mod, addr), NULL, NULL, 0, false};
    if (lines)
        line_of(mod, addr, out);
    return out->name || out->file ? 1 : 0;
}

/* DW_AT_call_file:DW_AT_call_line of an inlined_subroutine DIE. */
static void call_site(Dwarf_Die *inl, mt_raw_frame *f)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &v) == 0 &&
        dwarf_diecu(inl, &cu, NULL, NULL) && dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 &&
        v < nfiles)
        set_file(f, dwarf_filesrc(files, v, NULL, NULL), &cu);
    if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) == 0 && v <= 0x7fffffff)
        f->line = (unsigned)v;
}

/* For each inlined_subroutine from node up, the function enclosing it,
 * at the inline's call site. */
static unsigned callers(const mt_cu_scopes *c, int node, mt_raw_frame *out, unsigned n,
                        unsigned max)
{
    for (; node >= 0 && n < max; node = c->nodes[node].parent) {
        const mt_fn_node *inl = &c->nodes[node];
        if (inl->tag != DW_TAG_inlined_subroutine || inl->parent < 0)
            continue;
        const mt_fn_node *up = &c->nodes[inl->parent];
        out[n] = (mt_raw_frame){die_name((Dwarf_Die *)&up->die), NULL, NULL, 0,
                                up->tag == DW_TAG_inlined_subroutine};
        call_site((Dwarf_Die *)&inl->die, &out[n]);
        n++;
    }
    return n;
}

unsigned mt_inline_frames(Dwfl_Module *mod, mt_cu_index *idx, bool symtab_only, Dwarf_Addr addr,
                          mt_raw_frame *out, unsigned max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cudie = max && !symtab_only ? dwfl_module_addrdie(mod, addr, &bias) : NULL;
    const mt_cu_scopes *c = cudie ? mt_cu_index_get(idx, cudie) : NULL;
    int fn = c ? mt_cu_scopes_find(c, addr - bias) : -1;
    if (fn < 0)
        return max ? from_symtab(mod, addr, !symtab_only, out) : 0;
    const mt_fn_node *f = &c->nodes[fn];
    const char *name = die_name((Dwarf_Die *)&f->die);
    out[0] = (mt_raw_frame){name ? name : symtab_name(mod, addr), NULL, NULL, 0,
                            f->tag == DW_TAG_inlined_subroutine};
    line_of(mod, addr, &out[0]);
    return callers(c, fn, out, 1, max);
}
