/* lib_locate.h -- finding libmemtop.so to preload into a program memtop
 * starts: $MEMTOP_LIBRARY, else next to memtop in the build tree, else
 * where it was installed. */
#ifndef MEMTOP_LIB_LOCATE_H
#define MEMTOP_LIB_LOCATE_H

#include <stddef.h>

/* Absolute path of libmemtop.so into out; 0, or -1 with a message in err. */
int mt_locate_lib(char *out, size_t n, char *err, size_t errn);

#endif
