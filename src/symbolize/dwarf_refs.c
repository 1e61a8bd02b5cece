/* dwarf_refs.c -- see dwarf_refs.h.  In elfutils 0.188, dwarf_getalt opens
 * the .gnu_debugaltlink name itself when libdwfl found no alternate file
 * (our guarded search declines it), and a skeleton unit's split unit is
 * looked for under DW_AT_dwo_name/DW_AT_GNU_dwo_name joined to
 * DW_AT_comp_dir.  dwarf_get_units without a subdie reads unit headers and
 * CU DIE abbreviations only: it never resolves an alt form or a split unit. */
#include "dwarf_refs.h"

#include <dwarf.h>
#include <gelf.h>
#include <string.h>

/* A section naming an alternate (supplementary) file, or an unreadable table. */
static bool has_alt_section(Elf *elf)
{
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return true;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return true;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && (strcmp(name, ".gnu_debugaltlink") == 0 || strcmp(name, ".debug_sup") == 0))
            return true;
    }
    return false;
}

static bool is_split_unit(uint8_t type, Dwarf_Die *cudie)
{
    return type == DW_UT_skeleton || type == DW_UT_split_compile || type == DW_UT_split_type ||
           dwarf_hasattr(cudie, DW_AT_dwo_name) || dwarf_hasattr(cudie, DW_AT_GNU_dwo_name);
}

bool mt_dwarf_names_files(Dwarf *dw)
{
    if (has_alt_section(dwarf_getelf(dw)))
        return true;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t type;
    Dwarf_Die cudie;
    int rc;
    while ((rc = dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, NULL)) == 0)
        if (is_split_unit(type, &cudie))
            return true;
    return rc < 0;
}
