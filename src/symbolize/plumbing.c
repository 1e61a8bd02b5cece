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
    /* CPython */
    "PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
    /* GLib */
    "g_malloc*", "g_try_malloc*", "g_realloc*", "g_try_realloc*", "g_slice_alloc*", "g_strdup*",
    "g_strndup", "g_memdup*",
    /* C++: the standard library, all of it (containers, strings, pairs and
     * tuples that copy strings, operator+, threads, streams...): the row
     * shows the program's code that called it.  Its inlined members carry
     * no "std::" in their DWARF names ("_M_realloc_insert<...>"): the
     * frame's file, a C++ library header, says it (location.c). */
    "operator new", "std::", "__gnu_cxx::", "__cxa_allocate_exception",
    "__cxa_allocate_dependent_exception",
    /* Rust (its std:: is the line above's) */
    "__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rdl_*", "__rg_*",
    "alloc::", "core::", "hashbrown::", "str>::", "[",
    NULL}; /* "<str>::repeat", "<[u8]>::to_vec": inherent impls of the std */

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does the space at p follow the word "operator" ("operator new")? */
static bool after_operator(const char *s, const char *p)
{
    return p - s >= 8 && memcmp(p - 8, "operator", 8) == 0 && (p - s == 8 || !ident_char(p[-9]));
}

/* Past leading '<' and reference or pointer marks: "<&mut alloc::string::
 * String as ...>" names String's impl, "<<[_]>::to_vec_in::ConvertVec>" the
 * slice's. */
static const char *past_marks(const char *s)
{
    static const char *const marks[] = {"<", "&", "mut ", "*const ", "*mut ", "dyn ", NULL};
    for (bool more = true; more;) {
        more = false;
        for (const char *const *m = marks; *m; m++) {
            size_t n = strlen(*m);
            if (strncmp(s, *m, n) == 0) {
                s += n;
                more = true;
            }
        }
    }
    return s;
}

/* The qualified name: past a return type ("void ns::f<int>(int)") and
 * leading '<' ("<alloc::vec::Vec<T> as Clone>::clone", see past_marks). */
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
    return past_marks(start);
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

/* In an impl's name "<Self as Trait>::f", the trait (past marks), and
 * whether the self type is a path (*self_path); NULL when there is no
 * " as " at the top level. */
static const char *impl_trait(const char *s, bool *self_path)
{
    *self_path = false;
    if (*s != '<')
        return NULL;
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '<')
            depth++;
        else if (*p == '>' && --depth == 0)
            return NULL;
        else if (depth == 1 && p[0] == ':' && p[1] == ':')
            *self_path = true;
        else if (depth == 1 && strncmp(p, " as ", 4) == 0)
            return past_marks(p + 4);
    }
    return NULL;
}

/* In "<T as alloc::slice::ConvertVec>::to_vec", the trait after " as ",
 * when the self type is no path (a generic T, u8, [T]): the impl is then
 * the trait's crate's code.  "<myapp::Thing as Clone>" is the user's. */
static const char *trait_of(const char *s)
{
    bool self_path;
    const char *t = impl_trait(s, &self_path);
    return self_path ? NULL : t;
}

/* In "<std::path::PathBuf as mycrate::Tr>::f", the trait after " as " when
 * it is a path ("mycrate::Tr"), whatever the self type; else NULL. */
static const char *path_trait_of(const char *s)
{
    bool self_path;
    const char *t = impl_trait(s, &self_path);
    const char *sep = t ? strstr(t, "::") : NULL;
    return sep && (size_t)(sep - t) < strcspn(t, "<>") ? t : NULL;
}

/* Entries starting with '!' (user exceptions) when neg, the others else. */
static bool any_matches(const mt_plumbing *p, const char *name, bool neg)
{
    for (size_t i = 0; i < p->count; i++) {
        const char *e = p->entries[i];
        if ((e[0] == '!') == neg && entry_matches(e + neg, name))
            return true;
    }
    return false;
}

/* The name rule (plumbing.h): the last identifier of the qualified name
 * name (past the last "::" outside brackets, before its parameters or
 * template arguments) into buf; "" when there is none. */
static void last_ident(const char *name, char *buf, size_t n)
{
    const char *id = name, *end = name;
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '(' && depth == 0)
            break;
        if (*p == '<' || *p == '(' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            id = p + 2;
        if (depth == 0 && ident_char(*p))
            end = p + 1;
    }
    size_t k = 0;
    for (const char *p = id; p < end && ident_char(*p) && k + 1 < n; p++)
        buf[k++] = *p;
    buf[k] = '\0';
}

/* Splits an identifier into lower-case words at '_', at a lower-case letter
 * followed by an upper-case one, and between letters and digits:
 * "sqlite3MallocZero" -> sqlite 3 malloc zero.  Returns the word count. */
static size_t split_words(const char *id, char words[][32], size_t max)
{
    size_t nw = 0, k = 0;
    for (const char *p = id;; p++) {
        char c = *p;
        bool upper = c >= 'A' && c <= 'Z';
        bool digit = c >= '0' && c <= '9', prev_digit = p > id && p[-1] >= '0' && p[-1] <= '9';
        bool prev_lower = p > id && p[-1] >= 'a' && p[-1] <= 'z';
        bool cut = !c || c == '_' || (k && upper && prev_lower) || (k && digit != prev_digit);
        if (cut && k) {
            words[nw][k] = '\0';
            if (++nw == max)
                return nw;
            k = 0;
        }
        if (!c)
            return nw;
        if (c != '_' && k + 1 < sizeof words[0])
            words[nw][k++] = (char)(upper ? c - 'A' + 'a' : c);
    }
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

static bool in_list(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(w, *list) == 0)
            return true;
    return false;
}

/* Words that end an allocator's name: the allocating verb ("zmalloc",
 * "sqlite3Malloc", "pool_alloc"). */
static const char *const alloc_roots[] = {"malloc",   "calloc", "realloc", "zalloc", "alloc",
                                          "memalign", "strdup", "strndup", "memdup", NULL};
/* Words that may follow it and keep it an allocator ("zrealloc_usable",
 * "zcalloc_num", "sqlite3MallocZero", "g_malloc0_n", "xmalloc_or_die"). */
static const char *const alloc_modifiers[] = {
    "usable",  "num",  "n",     "nn",   "zero", "zeroed",   "array",   "aligned",
    "align",   "safe", "try",   "raw",  "impl", "internal", "default", "real",
    "wrapper", "size", "sized", "or",   "die",  "nofail",   "oom",     "checked",
    "debug",   "dbg",  "fn",    "func", "hook", "noinline", NULL};

static bool all_digits(const char *w)
{
    for (; *w; w++)
        if (*w < '0' || *w > '9')
            return false;
    return true;
}

bool mt_plumbing_name_rule(const char *function)
{
    char id[256], words[16][32];
    last_ident(function, id, sizeof id);
    size_t nw = split_words(id, words, 16);
    if (nw >= 2 && strcmp(words[nw - 1], "new") == 0 && ends_with(id, "_new"))
        return true; /* "session_new": a constructor that allocates */
    for (size_t i = nw; i-- > 0;) {
        const char *w = words[i];
        for (const char *const *r = alloc_roots; *r; r++)
            if (ends_with(w, *r))
                return true; /* every word after it is a modifier */
        if (!all_digits(w) && !in_list(w, alloc_modifiers))
            return false;
    }
    return false;
}

bool mt_plumbing_kept(const mt_plumbing *p, const char *function)
{
    if (!function)
        return false;
    const char *name = name_start(function), *trait = trait_of(function);
    return any_matches(p, name, true) || (trait && any_matches(p, trait, true));
}

bool mt_plumbing_match(const mt_plumbing *p, const char *function)
{
    if (!function || mt_plumbing_kept(p, function))
        return false; /* the user's "!name": never plumbing */
    /* the program's impl of its own trait on a std type ("<std::path::
     * PathBuf as mycrate::Tr>::f") is the program's code, whatever "std::"
     * says of the self type */
    const char *ptrait = path_trait_of(function);
    if (ptrait && !any_matches(p, ptrait, false))
        return false;
    const char *name = name_start(function), *trait = trait_of(function);
    return any_matches(p, name, false) || (trait && any_matches(p, trait, false)) ||
           mt_plumbing_name_rule(name);
}

/* Is the word at w (n chars) one of C++'s own types or a number, not a
 * type of the program? */
static bool builtin_word(const char *w, size_t n)
{
    static const char *const words[] = {"void",      "bool",     "char",      "wchar_t", "char8_t",
                                        "char16_t",  "char32_t", "short",     "int",     "long",
                                        "unsigned",  "signed",   "float",     "double",  "__int128",
                                        "const",     "volatile", "true",      "false",   "decltype",
                                        "nullptr_t", "std",      "__gnu_cxx", "__cxx11", NULL};
    if (w[0] >= '0' && w[0] <= '9')
        return true;
    for (const char *const *k = words; *k; k++)
        if (strlen(*k) == n && memcmp(w, *k, n) == 0)
            return true;
    return false;
}

/* Does a template argument in name (before its parameter list) name a
 * type outside the standard library: a qualified name whose first word is
 * no C++ type, no number and not std ("MyKey", "app::Point",
 * "main::{lambda()#1}")? */
static bool names_program_type(const char *name)
{
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '(' && depth == 0)
            return false;
        if (*p == '<')
            depth++;
        else if (*p == '>' && depth > 0)
            depth--;
        else if (depth > 0 && ident_char(*p)) {
            bool starts = p[-1] != ':'; /* the name's first word */
            size_t n = 0;
            while (ident_char(p[n]))
                n++;
            if (starts && !builtin_word(p, n))
                return true;
            p += n - 1;
        }
    }
    return false;
}

bool mt_plumbing_std_specialisation(const mt_plumbing *p, const char *function)
{
    if (!function)
        return false;
    const char *name = name_start(function);
    if (strncmp(name, "std::", 5) != 0 || !names_program_type(name))
        return false;
    for (size_t i = p->builtin; i < p->count; i++) /* the user's own entries list it */
        if (p->entries[i][0] != '!' && entry_matches(p->entries[i], name))
            return false;
    return !mt_plumbing_name_rule(name);
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
    p->builtin = nb;
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
