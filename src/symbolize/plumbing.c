/* plumbing.c -- see plumbing.h.  The built-in list is the documented one
 * (README, "Symbols"); keep both in step. */
#include "plumbing.h"

#include <stdlib.h>
#include <string.h>

const char *const mt_plumbing_builtin[] = {
    /* C allocators and the libc functions that allocate for their caller */
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "__libc_*", "strdup", "strndup", "__strdup", "__strndup", "wcsdup",
    "asprintf", "vasprintf", "__asprintf*", "__vasprintf*", "getline", "getdelim", "__getdelim",
    "xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup", "xmemdup",
    /* GLib */
    "g_malloc*", "g_try_malloc*", "g_realloc*", "g_try_realloc*", "g_slice_alloc*", "g_strdup*",
    "g_strndup", "g_memdup*",
    /* C++ */
    "operator new", "std::__new_allocator", "__gnu_cxx::new_allocator", "std::allocator",
    "std::allocator_traits", "std::vector", "std::_Vector_base", "std::__cxx11::basic_string",
    "std::basic_string", "std::__cxx11::list", "std::_List_base", "std::deque", "std::_Deque_base",
    "std::_Rb_tree", "std::_Hashtable", "std::__detail::", "std::__shared_count",
    "std::__shared_ptr", "std::shared_ptr", "std::make_shared", "std::allocate_shared",
    "std::__make_shared", "std::__allocate_shared", "std::_Sp_counted*", "std::__allocated_ptr",
    "std::make_unique",
    /* Rust */
    "__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rdl_*", "__rg_*",
    "alloc::", "core::", "std::alloc::", "std::sys::", "hashbrown::", "std::collections::", NULL};

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does the space at p follow the word "operator" ("operator new")? */
static bool after_operator(const char *s, const char *p)
{
    return p - s >= 8 && memcmp(p - 8, "operator", 8) == 0 && (p - s == 8 || !ident_char(p[-9]));
}

/* The qualified name: past a return type ("void ns::f<int>(int)") and
 * leading '<' ("<alloc::vec::Vec<T> as Clone>::clone"). */
static const char *name_start(const char *s)
{
    const char *start = s;
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '(' && depth == 0 && p != s)
            break; /* the parameter list */
        if (*p == '<' || *p == '(' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth > 0)
            depth--;
        else if (*p == ' ' && depth == 0 && !after_operator(s, p))
            start = p + 1;
    }
    while (*start == '<')
        start++;
    return start;
}

static bool entry_matches(const char *entry, const char *name)
{
    size_t n = strlen(entry);
    if (n == 0)
        return false;
    if (entry[n - 1] == '*')
        return strncmp(name, entry, n - 1) == 0;
    if (strncmp(name, entry, n) != 0)
        return false;
    return !ident_char(entry[n - 1]) || !ident_char(name[n]);
}

/* In "<T as alloc::slice::ConvertVec>::to_vec", the trait after " as ",
 * when the self type is no path (a generic T, u8, [T]): the impl is then
 * the trait's crate's code.  "<myapp::Thing as Clone>" is the user's. */
static const char *trait_of(const char *s)
{
    if (*s != '<')
        return NULL;
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '<')
            depth++;
        else if (*p == '>' && --depth == 0)
            return NULL;
        else if (depth == 1 && p[0] == ':' && p[1] == ':')
            return NULL; /* the self type is a path */
        else if (depth == 1 && strncmp(p, " as ", 4) == 0)
            return p + 4;
    }
    return NULL;
}

static bool any_matches(const mt_plumbing *p, const char *name)
{
    for (size_t i = 0; i < p->count; i++)
        if (entry_matches(p->entries[i], name))
            return true;
    return false;
}

bool mt_plumbing_match(const mt_plumbing *p, const char *function)
{
    if (!function)
        return false;
    const char *trait = trait_of(function);
    return any_matches(p, name_start(function)) || (trait && any_matches(p, trait));
}

static size_t count_commas(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += *s == ',';
    return n;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

bool mt_plumbing_init(mt_plumbing *p, const char *extra)
{
    memset(p, 0, sizeof *p);
    size_t nb = 0;
    while (mt_plumbing_builtin[nb])
        nb++;
    p->entries = malloc((nb + count_commas(extra) + 1) * sizeof *p->entries);
    p->extra = extra ? strdup(extra) : NULL;
    if (!p->entries || (extra && !p->extra)) {
        mt_plumbing_free(p);
        return false;
    }
    for (size_t i = 0; i < nb; i++)
        p->entries[p->count++] = mt_plumbing_builtin[i];
    char *save = NULL;
    for (char *tok = p->extra ? strtok_r(p->extra, ",", &save) : NULL; tok;
         tok = strtok_r(NULL, ",", &save))
        if (*trim(tok))
            p->entries[p->count++] = trim(tok);
    return true;
}

void mt_plumbing_free(mt_plumbing *p)
{
    free(p->entries);
    free(p->extra);
    memset(p, 0, sizeof *p);
}
