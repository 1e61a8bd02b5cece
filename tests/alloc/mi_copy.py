#!/usr/bin/env python3
"""mi_copy.py SRC DST -- copies libmimalloc.so.2 to DST under a name that does not name mimalloc.

Why it exists: Debian ships mimalloc only as a shared library, so tests/alloc
cannot link one into a program; a copy whose file name and SONAME
("libcopyalloc.so2", the same length as "libmimalloc.so.2", rewritten in
place in .dynstr) do not name mimalloc is, to memtop's allocator scan,
an allocator linked into a library (docs/allocators.md, "linked in")."""

import sys

OLD = b"\0libmimalloc.so.2\0"
NEW = b"\0libcopyalloc.so2\0"


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        data = f.read()
    if data.count(OLD) != 1:
        sys.exit("mi_copy.py: %s has not exactly one SONAME string %r" % (src, OLD))
    with open(dst, "wb") as f:
        f.write(data.replace(OLD, NEW))


if __name__ == "__main__":
    main()
