/* hook_loaded_sym.h -- a function's definition in the loaded modules other
 * than libmemtop.so, for a next definition that dlsym(RTLD_NEXT) cannot see
 * (hook_next.h mt_next_fn_loaded). */
#ifndef MT_HOOK_LOADED_SYM_H
#define MT_HOOK_LOADED_SYM_H

/* The address of the exported function name in the first loaded module,
 * in dl_iterate_phdr's order (load order), that defines it, libmemtop.so
 * left out; NULL if none does.  Reads each module's dynamic symbol table
 * in memory (its GNU or SysV hash table): no file, no allocation, no lock
 * but the loader's (dl_iterate_phdr's, which the loader takes
 * recursively: callable from a constructor running inside dlopen). */
void *mt_loaded_sym(const char *name);

/* How many times a module was loaded since the process started
 * (dl_iterate_phdr's dlpi_adds): while it stays the same, no module was
 * added, and a name that no loaded module defined still has no definition. */
unsigned long long mt_loaded_adds(void);

#endif
