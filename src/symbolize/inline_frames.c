/* inline_frames.c -- see inline_frames.h.  Mirrors eu-addr2line -i -f:
 * the first name is the innermost subprogram or inlined_subroutine among
 * dwarf_getscopes(pc), with the line table's file:line for pc; then for
 * each inlined_subroutine on the DIE chain of the innermost scope
 * (dwarf_getscopes_die), the enclosing function's name at that inline's
 * DW_AT_call_file:DW_AT_call_line. */
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

static bool is_function(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
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

/* Symbol table only: a name, no file or line. */
static unsigned from_symtab(Dwfl_Module *mod, Dwarf_Addr addr, mt_raw_frame *out)
{
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
    if (!name || !*name)
        return 0;
    *out = (mt_raw_frame){name, NULL, NULL, 0, false};
    line_of(mod, addr, out);
    return 1;
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

/* The functions enclosing each inlined_subroutine on die's chain. */
static unsigned callers(Dwarf_Die *innermost, mt_raw_frame *out, unsigned n, unsigned max)
{
    Dwarf_Die *sc = NULL;
    int nsc = dwarf_getscopes_die(innermost, &sc);
    for (int i = 0; i < nsc - 1 && n < max; i++) {
        if (dwarf_tag(&sc[i]) != DW_TAG_inlined_subroutine)
            continue;
        for (int j = i + 1; j < nsc; j++) {
            if (!is_function(dwarf_tag(&sc[j])))
                continue;
            out[n] = (mt_raw_frame){die_name(&sc[j]), NULL, NULL, 0,
                                    dwarf_tag(&sc[j]) == DW_TAG_inlined_subroutine};
            call_site(&sc[i], &out[n]);
            n++;
            break;
        }
    }
    free(sc);
    return n;
}

unsigned mt_inline_frames(Dwfl_Module *mod, Dwarf_Addr addr, mt_raw_frame *out, unsigned max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cudie = max ? dwfl_module_addrdie(mod, addr, &bias) : NULL;
    Dwarf_Die *sc = NULL;
    int nsc = cudie ? dwarf_getscopes(cudie, addr - bias, &sc) : -1;
    int fn = -1;
    for (int i = 0; i < nsc && fn < 0; i++)
        if (is_function(dwarf_tag(&sc[i])))
            fn = i;
    if (fn < 0 || !die_name(&sc[fn])) {
        free(sc);
        return max ? from_symtab(mod, addr, out) : 0;
    }
    out[0] = (mt_raw_frame){die_name(&sc[fn]), NULL, NULL, 0,
                            dwarf_tag(&sc[fn]) == DW_TAG_inlined_subroutine};
    line_of(mod, addr, &out[0]);
    Dwarf_Die innermost = sc[0];
    free(sc);
    return callers(&innermost, out, 1, max);
}
