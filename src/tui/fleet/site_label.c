/* site_label.c -- see site_label.h.  mt_name_brief is one left-to-right
 * scan with a stack of open brackets: a '<' right after a name or "::"
 * opens arguments (skipped to their '>', "<...>" written), any other '<'
 * a qualified path (kept); the last '(' group at depth 0 with no "::"
 * after it is the parameter list.  An operator's name (operator<<,
 * operator->, operator()) is copied as it is, never taken for brackets.
 * The name comes from the target's ELF files: the searches for the '>' of
 * each '<' share one budget, so that a name of unclosed '<' ("a<a<a<...",
 * any length) costs linear time, not quadratic (a /metrics scrape). */
#include "site_label.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json_escape.h"

#define MAX_DEPTH 64
#define SCAN_BUDGET (1u << 20) /* bytes angle_end may read in one name, in all */
#define MARK "\xE2\x80\xA6"    /* U+2026 HORIZONTAL ELLIPSIS */

typedef struct out {
    char *buf;
    size_t n, k;
} out;

static void put(out *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len && o->k + 1 < o->n; i++)
        o->buf[o->k++] = s[i];
}

static bool ident(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Just past the '>' closing the '<' at s[i]; 0 when none does, or when
 * *budget (bytes left to read) runs out first.  An arrow's '>' ("fn() ->
 * T") closes nothing. */
static size_t angle_end(const char *s, size_t i, size_t *budget)
{
    int depth = 0;
    for (; s[i]; i++) {
        if (*budget == 0)
            return 0;
        --*budget;
        if (s[i] == '<')
            depth++;
        else if (s[i] == '>' && s[i - 1] != '-' && --depth == 0)
            return i + 1;
    }
    return 0;
}

/* The length of the operator name at s[i] ("operator<<", "operator()"),
 * or 0 when none starts there: its symbol is the longest that matches, so
 * that in "operator+<char>" the '<' opens arguments. */
static size_t operator_len(const char *s, size_t i)
{
    static const char *const ops[] = {
        "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
        "--",  "+=",  "-=",  "*=",  "/=", "%=", "^=", "&=", "|=", "->", "()", "[]", "<",
        ">",   "=",   "!",   "+",   "-",  "*",  "/",  "%",  "^",  "&",  "|",  "~",  ","};
    if (strncmp(s + i, "operator", 8) != 0 || (i > 0 && ident(s[i - 1])) || ident(s[i + 8]))
        return 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) /* longest first */
        if (strncmp(s + i + 8, ops[k], strlen(ops[k])) == 0)
            return 8 + strlen(ops[k]);
    return 8; /* operator new, operator delete[], a conversion operator */
}

/* Whether the '<' at s[i] opens template/generic arguments: right after
 * a name (Vec<T>), Rust's turbofish "::<", or an operator's name (which
 * ends at after_operator; libiberty may put a space between). */
static bool opens_arguments(const char *s, size_t i, size_t after_operator)
{
    return i > 0 && (ident(s[i - 1]) || (i > 1 && s[i - 1] == ':' && s[i - 2] == ':') ||
                     i == after_operator || (i == after_operator + 1 && s[i - 1] == ' '));
}

static char closer(char open)
{
    return open == '<' ? '>' : open == '(' ? ')' : open == '[' ? ']' : '}';
}

char *mt_name_brief(const char *name, char *buf, size_t n)
{
    out o = {buf, n, 0};
    char stack[MAX_DEPTH];
    int depth = 0;
    size_t params = SIZE_MAX, params_end = 0; /* the last depth-0 (...) written */
    size_t after_operator = SIZE_MAX, budget = SCAN_BUDGET;
    for (size_t i = 0; name[i];) {
        char c = name[i];
        size_t len = operator_len(name, i), end;
        if (len) {
            put(&o, name + i, len);
            i += len;
            after_operator = i;
            continue;
        }
        if (c == '<' && opens_arguments(name, i, after_operator) &&
            (end = angle_end(name, i, &budget)) != 0) {
            put(&o, "<...>", 5);
            i = end;
            continue;
        }
        if (c == ':' && name[i + 1] == ':' && depth == 0 && params != SIZE_MAX)
            params = SIZE_MAX; /* "(anonymous namespace)::": not parameters */
        if (strchr("<([{", c) && depth < MAX_DEPTH) {
            if (c == '(' && depth == 0)
                params = o.k;
            stack[depth++] = c;
        } else if (depth > 0 && c == closer(stack[depth - 1]) &&
                   !(c == '>' && name[i - 1] == '-')) {
            depth--;
            if (c == ')' && depth == 0 && params != SIZE_MAX)
                params_end = o.k + 1;
        }
        put(&o, &c, 1);
        i++;
    }
    if (params != SIZE_MAX && params_end > params && params > 0)
        o.k = params;
    while (o.k > 0 && buf[o.k - 1] == ' ')
        o.k--;
    if (n)
        buf[o.k] = '\0';
    return buf;
}

/* in as valid UTF-8 into buf: each byte that is not UTF-8 U+FFFD. */
static void utf8_fix(const char *in, char *buf, size_t n)
{
    out o = {buf, n, 0};
    for (const unsigned char *p = (const unsigned char *)in; *p;) {
        int len = mt_utf8_len(p);
        if (o.k + (len ? (size_t)len : 3) + 1 > n)
            break;
        put(&o, len ? (const char *)p : "\xEF\xBF\xBD", len ? (size_t)len : 3);
        p += len ? (size_t)len : 1;
    }
    buf[o.k] = '\0';
}

/* The bytes of the longest prefix of valid UTF-8 s that fits max bytes,
 * never cutting a character. */
static size_t fit(const char *s, size_t max)
{
    size_t k = 0;
    while (s[k]) {
        size_t len = (size_t)mt_utf8_len((const unsigned char *)s + k);
        if (k + len > max)
            break;
        k += len;
    }
    return k;
}

char *mt_site_label(const mt_frame *f, char *buf, size_t n)
{
    char brief[1024], raw[2048], full[3 * sizeof raw], tail[600];
    mt_frame g = *f;
    if (f->function)
        g.function = mt_name_brief(f->function, brief, sizeof brief);
    utf8_fix(mt_frame_short(&g, raw, sizeof raw), full, sizeof full);
    size_t len = strlen(full), cap = MT_SITE_LABEL_MAX - strlen(MARK);
    if (len <= MT_SITE_LABEL_MAX) {
        snprintf(buf, n, "%s", full);
        return buf;
    }
    tail[0] = '\0';
    if (f->function) { /* " (file.cc:12)": what the name is cut to keep */
        g.function = "";
        utf8_fix(mt_frame_short(&g, raw, sizeof raw), tail, sizeof tail);
    }
    size_t keep_tail = strlen(tail) + 24 <= cap ? strlen(tail) : 0; /* 24: some name left */
    size_t head = fit(full, cap - keep_tail);
    snprintf(buf, n, "%.*s%s%s", (int)head, full, MARK, keep_tail ? tail : "");
    return buf;
}
