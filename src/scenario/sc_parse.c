/* sc_parse.c - parser and static checks of .scn files.
 *
 * One statement per line. Blocks are kept on an explicit stack (never
 * recursion per block); expressions recurse, but at most SC_MAX_NESTING
 * levels, so a hostile file cannot exhaust the C stack. Variables are
 * resolved to slots here, so the interpreter never looks a name up.
 *
 * Diagnostics are collected, sorted by position and printed at the end
 * (some are only known at the end: a variable used before the line that
 * binds it).
 */
#include "scenario/sc_int.h"
#include "scenario/sc_supp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"
#include "esc/es.h"
#include "fake/fk.h"
#include "tensor/ts.h"

/* ---- tables (the words themselves are sc_words.c's rows) ---- */

const char *sc_builtin_name(int b)
{
    return (unsigned)b < B_COUNT ? sc_builtin_row(b)->name : "?";
}

const char *sc_method_name(int m)
{
    return (unsigned)m < sc_nmethods() ? sc_method_row(m)->name : "?";
}

static const char *const error_names[] = {
    "UnsupportedFakeTensor", "ShapeError", "TypeError", "DeadReference",
    "OutOfMemory", "LimitExceeded", NULL};
static const char *const live_kinds[] = {
    "any", "tensor", "storage", "fake", "meta", "sparse", "mode", "converter",
    "finalizer", "weakref", "shape_env", "tracer", NULL};
static const char *const dtype_names[] = {
    "f16", "bf16", "f32", "f64", "c64", "c128", "i8", "u8", "i32", "i64",
    "bool", NULL};
static const char *const mfmt_names[] = {"contiguous_format", "channels_last", NULL};
static const char *const device_names[] = {"cpu", "cuda", "meta", "lazy", NULL};
static const char *const stmt_keywords[] = {
    "del", "expect", "repeat", "with", "end", "config", "checkpoint", NULL};
static const char *const config_keys[] = {"gc", "sweep", "end_check", "compat", "suppress",
                                          "recording", NULL};
static const char *const gc_values[] = {"manual", "auto", "stress", NULL};
static const char *const sweep_values[] = {"eager", "periodic", NULL};
static const char *const end_values[] = {"strict", "off", NULL};
/* config compat's values: the design table's names (fk_design.c), NULL
 * ended; "default" is not one. */
static const char *const *compat_values(void)
{
    static const char *names[FK_D_COUNT + 1];
    size_t n = 0;
    for (int d = 0; d < FK_D_COUNT; d++)
        if (d != FK_D_DEFAULT)
            names[n++] = fk_design_get((fk_design_id)d)->name;
    names[n] = NULL;
    return names;
}

static int find_in(const char *const *list, const char *s, size_t n)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
            return i;
    return -1;
}

/* ---- edit distance ---- */

size_t sc_edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    /* three rows of Damerau-Levenshtein (optimal string alignment) */
    size_t rows[3][65];
    size_t *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        size_t best = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v) v = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > cap)
            return cap + 1;
        size_t *t = pp; pp = prev; prev = cur; cur = t;
    }
    return prev[lb] > cap ? cap + 1 : prev[lb];
}

const char *sc_closest(const char *word, const void *names, size_t n, size_t stride,
                       size_t cap)
{
    const char *best = NULL;
    size_t bd = cap + 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = *(const char *const *)((const char *)names + i * stride);
        size_t d = name ? sc_edit_distance(word, name, cap) : bd;
        if (d < bd) {
            bd = d;
            best = name;
        }
    }
    return best;
}

static size_t suggest_cap(size_t len)
{
    return len <= 3 ? 1 : len <= 6 ? 2 : 3;
}

/* The counter or attribute a user-attribute name is a typo of, or NULL. */
static const char *near_attr(const char *name)
{
    size_t cap = suggest_cap(strlen(name)), best_d = cap + 1;
    const char *best = NULL;
    for (size_t i = 0; i < sc_nattrs(); i++) {
        const char *w = sc_attr_row((int)i)->name;
        size_t d = sc_edit_distance(name, w, cap);
        if (d > 0 && d <= cap && d < best_d && d < strlen(name)) {
            best_d = d;
            best = w;
        }
    }
    return best;
}

/* Best candidate of a NULL-terminated list, or NULL. */
static const char *suggest(const char *name, const char *const *list,
                           const char *best, size_t *best_d)
{
    size_t cap = suggest_cap(strlen(name));
    for (int i = 0; list[i]; i++) {
        size_t d = sc_edit_distance(name, list[i], cap);
        if (d <= cap && d < *best_d && d > 0 && d < strlen(name)) {
            *best_d = d;
            best = list[i];
        }
    }
    return best;
}

/* ---- parser state ---- */

typedef struct diag {
    uint32_t line, col;
    char msg[240];
} diag;

typedef struct var {
    const char *name;
    uint32_t slot;
    uint32_t bound_line;     /* first line that binds it */
    int bound;               /* bound by a line parsed so far */
} var;

typedef struct pending_use {  /* a use of a name no earlier line binds */
    const char *name;
    uint32_t line, col;
} pending_use;

typedef struct vec {          /* growable array of pointers (al memory) */
    void **v;
    size_t n, cap;
} vec;

typedef struct block {
    sc_stmt *st;
    vec body;
} block;

typedef struct parser {
    sc_program *prog;
    sc_lexer lx;
    sc_token tok, peek;
    int has_peek;
    const char *last_end;     /* end of the last consumed token */
    int line_err;             /* the current statement had an error */
    int oom;
    int depth;                /* expression nesting */
    diag *diags; size_t ndiags;
    size_t nerrors;
    var *vars; size_t nvars, vcap;   /* open addressing, vcap power of 2 */
    pending_use *uses; size_t nuses, ucap;
    vec top;
    block blocks[SC_MAX_NESTING];
    int nblocks;
    uint32_t overflow_blocks;  /* blocks past the nesting limit (skipped) */
    uint32_t phantom_blocks;   /* misspelt repeat/with lines: ends to absorb */
    int binary;                /* NUL or invalid UTF-8 seen: stop at once */
    int seen_stmt;             /* a statement other than config */
    int cfg_seen[6];
    vec checkpoints;           /* names (arena strings) */
    /* Reads of a user attribute whose name is near a counter's (memo_mta),
     * and the attribute names the script stores: a read of a name no line
     * stores is a misspelt counter (resolve_attr_reads). */
    vec attr_reads, attr_stores;
} parser;

static int vec_push(parser *p, vec *v, void *x)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        void **nv = al_realloc(v->v, v->cap * sizeof *v->v, nc * sizeof *v->v,
                               AL_K_SCENARIO, "sc_parse vec");
        if (!nv) {
            p->oom = 1;
            er_set(ER_OOM, "out of memory while parsing");
            return -1;
        }
        v->v = nv;
        v->cap = nc;
    }
    v->v[v->n++] = x;
    return 0;
}

static void vec_free(vec *v)
{
    al_free(v->v, v->cap * sizeof *v->v, AL_K_SCENARIO);
    v->v = NULL;
    v->n = v->cap = 0;
}

static void *arena(parser *p, size_t n)
{
    void *x = sc_arena_alloc(&p->prog->arena, n);
    if (!x)
        p->oom = 1;
    return x;
}

static void error_at(parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void error_at(parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
{
    p->line_err = 1;
    p->nerrors++;
    diag *d;
    if (p->ndiags <= SC_MAX_ERRORS) {
        d = &p->diags[p->ndiags++];
    } else {
        /* full: keep the earliest positions (they are printed first) */
        d = &p->diags[0];
        for (size_t i = 1; i < p->ndiags; i++)
            if (p->diags[i].line > d->line ||
                (p->diags[i].line == d->line && p->diags[i].col > d->col))
                d = &p->diags[i];
        if (line > d->line || (line == d->line && col >= d->col))
            return;
    }
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

/* ---- tokens ---- */

static void next(parser *p)
{
    if (p->tok.kind != T_NEWLINE && p->tok.kind != T_EOF && p->tok.kind != T_ERROR)
        p->last_end = p->tok.start + p->tok.len;
    if (p->has_peek) {
        p->tok = p->peek;
        p->has_peek = 0;
    } else {
        p->tok = sc_lex_next(&p->lx);
    }
    if (p->tok.kind == T_ERROR) {
        error_at(p, p->tok.line, p->tok.col, "%s", p->lx.msg);
        if (strstr(p->lx.msg, "not a text file"))
            p->binary = 1;
    }
}

static const sc_token *peek(parser *p)
{
    /* a lexical error in the peeked token is reported when it becomes
     * current (the lexer keeps its message until then) */
    if (!p->has_peek) {
        p->peek = sc_lex_next(&p->lx);
        p->has_peek = 1;
    }
    return &p->peek;
}

/* Skip to the end of the line (the NEWLINE stays current). */
static void skip_to_eol(parser *p)
{
    while (p->tok.kind != T_NEWLINE && p->tok.kind != T_EOF)
        next(p);
}

static void unexpected(parser *p, const char *wanted)
{
    if (p->tok.kind == T_ERROR)
        return;   /* already reported */
    char what[64];
    sc_tok_describe(&p->tok, what, sizeof what);
    error_at(p, p->tok.line, p->tok.col, "expected %s but found %s", wanted, what);
}

static char *tok_name(parser *p, const sc_token *t)
{
    char *s = sc_arena_strndup(&p->prog->arena, t->start, t->len);
    if (!s)
        p->oom = 1;
    return s;
}

static int tok_is(const sc_token *t, const char *s)
{
    return t->len == strlen(s) && memcmp(t->start, s, t->len) == 0;
}

/* ---- variables ---- */

static var *var_find(parser *p, const char *s, size_t n)
{
    if (!p->vcap)
        return NULL;
    size_t i = (size_t)ix_hash_mem(s, n) & (p->vcap - 1);
    while (p->vars[i].name) {
        if (strlen(p->vars[i].name) == n && memcmp(p->vars[i].name, s, n) == 0)
            return &p->vars[i];
        i = (i + 1) & (p->vcap - 1);
    }
    return NULL;
}

static var *var_add(parser *p, const sc_token *t, uint32_t line)
{
    var *v = var_find(p, t->start, t->len);
    if (v)
        return v;
    if ((p->nvars + 1) * 2 > p->vcap) {
        size_t nc = p->vcap ? p->vcap * 2 : 64;
        var *nv = arena(p, nc * sizeof *nv);   /* old table stays in the arena */
        if (!nv)
            return NULL;
        for (size_t i = 0; i < p->vcap; i++) {
            if (!p->vars[i].name)
                continue;
            size_t j = (size_t)ix_hash_mem(p->vars[i].name, strlen(p->vars[i].name)) & (nc - 1);
            while (nv[j].name)
                j = (j + 1) & (nc - 1);
            nv[j] = p->vars[i];
        }
        p->vars = nv;
        p->vcap = nc;
    }
    char *name = tok_name(p, t);
    if (!name)
        return NULL;
    size_t i = (size_t)ix_hash_mem(t->start, t->len) & (p->vcap - 1);
    while (p->vars[i].name)
        i = (i + 1) & (p->vcap - 1);
    p->vars[i].name = name;
    p->vars[i].slot = (uint32_t)p->nvars++;
    p->vars[i].bound_line = line;
    p->vars[i].bound = 0;
    return &p->vars[i];
}

/* ---- expressions ---- */

static sc_expr *new_expr(parser *p, sc_ekind k, const sc_token *at)
{
    sc_expr *e = arena(p, sizeof *e);
    if (!e)
        return NULL;
    e->kind = (uint8_t)k;
    e->line = at->line;
    e->col = at->col;
    return e;
}

static sc_expr *parse_expr(parser *p);

/* Arguments after '(' up to and including ')'. Keyword arguments are
 * NAME '=' EXPR; positional ones may not follow them. */
static int parse_args(parser *p, sc_expr *call, int raises)
{
    sc_expr *pos[SC_MAX_ARGS];
    const char *kwn[SC_MAX_ARGS];
    sc_expr *kwv[SC_MAX_ARGS];
    sc_pos kwp[SC_MAX_ARGS];
    int np = 0, nk = 0;
    next(p);   /* '(' */
    while (p->tok.kind != T_RPAREN) {
        if (np + nk >= SC_MAX_ARGS) {
            error_at(p, p->tok.line, p->tok.col, "too many arguments (more than %d)",
                     SC_MAX_ARGS);
            return -1;
        }
        if (raises && np == 0 && nk == 0) {
            /* raises(ERROR, EXPR): the error is a bare name */
            if (p->tok.kind != T_NAME) {
                unexpected(p, "an error name (e.g. ShapeError)");
                return -1;
            }
            int k = find_in(error_names, p->tok.start, p->tok.len);
            if (k < 0) {
                char name[80];
                snprintf(name, sizeof name, "%.*s", p->tok.len > 60 ? 60 : (int)p->tok.len,
                         p->tok.start);
                size_t d = SIZE_MAX;
                const char *s = suggest(name, error_names, NULL, &d);
                if (s)
                    error_at(p, p->tok.line, p->tok.col,
                             "unknown error '%s' in raises(); did you mean '%s'?", name, s);
                else
                    error_at(p, p->tok.line, p->tok.col,
                             "unknown error '%s' in raises(); expected one of "
                             "UnsupportedFakeTensor, ShapeError, TypeError, "
                             "DeadReference, OutOfMemory, LimitExceeded", name);
                return -1;
            }
            char *nm = tok_name(p, &p->tok);
            if (!nm)
                return -1;
            call->ival = er_kind_from_name(nm);
            sc_expr *dummy = new_expr(p, E_NONE, &p->tok);
            if (!dummy)
                return -1;
            pos[np++] = dummy;   /* placeholder, replaced below */
            next(p);
        } else if (p->tok.kind == T_NAME && peek(p)->kind == T_ASSIGN) {
            char *nm = tok_name(p, &p->tok);
            if (!nm)
                return -1;
            for (int i = 0; i < nk; i++)
                if (strcmp(kwn[i], nm) == 0) {
                    error_at(p, p->tok.line, p->tok.col,
                             "keyword argument '%s' given twice", nm);
                    return -1;
                }
            kwn[nk] = nm;
            kwp[nk].line = p->tok.line;
            kwp[nk].col = p->tok.col;
            next(p);   /* name */
            next(p);   /* '=' */
            sc_expr *v = parse_expr(p);
            if (!v)
                return -1;
            kwv[nk++] = v;
        } else {
            if (nk > 0) {
                error_at(p, p->tok.line, p->tok.col,
                         "positional argument after keyword arguments");
                return -1;
            }
            sc_expr *v = parse_expr(p);
            if (!v)
                return -1;
            pos[np++] = v;
        }
        if (p->tok.kind == T_COMMA) {
            next(p);
            continue;
        }
        if (p->tok.kind != T_RPAREN) {
            unexpected(p, "',' or ')'");
            return -1;
        }
    }
    next(p);   /* ')' */
    call->nargs = (uint16_t)np;
    call->nkw = (uint16_t)nk;
    if (np) {
        call->args = arena(p, (size_t)np * sizeof *call->args);
        if (!call->args)
            return -1;
        memcpy(call->args, pos, (size_t)np * sizeof *pos);
    }
    if (nk) {
        call->kwnames = arena(p, (size_t)nk * sizeof *call->kwnames);
        call->kwvals = arena(p, (size_t)nk * sizeof *call->kwvals);
        call->kwpos = arena(p, (size_t)nk * sizeof *call->kwpos);
        if (!call->kwnames || !call->kwvals || !call->kwpos)
            return -1;
        memcpy(call->kwpos, kwp, (size_t)nk * sizeof *kwp);
        memcpy(call->kwnames, kwn, (size_t)nk * sizeof *kwn);
        memcpy(call->kwvals, kwv, (size_t)nk * sizeof *kwv);
    }
    return 0;
}

static int check_device_literal(parser *p, const sc_expr *v)
{
    if (v->kind != E_STR)
        return 0;
    const char *s = v->name;
    if (find_in(device_names, s, strlen(s)) >= 0)
        return 0;
    if (strncmp(s, "cuda:", 5) == 0 && s[5]) {
        const char *q = s + 5;
        while (*q >= '0' && *q <= '9')
            q++;
        if (!*q && q - (s + 5) <= 6)
            return 0;
    }
    /* suggest on the part before ':' and keep the index: "cdua:0" -> "cuda:0" */
    char head[64];
    const char *colon = strchr(s, ':');
    size_t hl = colon ? (size_t)(colon - s) : strlen(s);
    snprintf(head, sizeof head, "%.*s", (int)(hl < 63 ? hl : 63), s);
    size_t d = SIZE_MAX;
    const char *best = suggest(head, device_names, NULL, &d);
    if (best && colon && strcmp(best, "cuda") != 0)
        best = NULL;   /* only cuda takes an index */
    if (best)
        error_at(p, v->line, v->col, "unknown device \"%s\"; did you mean \"%s%s\"?", s,
                 best, colon ? colon : "");
    else
        error_at(p, v->line, v->col,
                 "unknown device \"%s\"; expected \"cpu\", \"cuda\", \"cuda:N\", "
                 "\"meta\" or \"lazy\"", s);
    return -1;
}

static int check_choice(parser *p, const sc_expr *v, const char *what,
                        const char *const *choices)
{
    if (v->kind != E_STR)
        return 0;
    if (find_in(choices, v->name, strlen(v->name)) >= 0)
        return 0;
    size_t d = SIZE_MAX;
    const char *best = suggest(v->name, choices, NULL, &d);
    char list[160] = "";
    for (int i = 0; choices[i]; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s\"%s\"",
                 i == 0 ? "" : choices[i + 1] ? ", " : " or ", choices[i]);
    }
    if (best)
        error_at(p, v->line, v->col, "invalid %s \"%s\"; did you mean \"%s\"?", what,
                 v->name, best);
    else
        error_at(p, v->line, v->col, "invalid %s \"%s\"; expected %s", what, v->name, list);
    return -1;
}

/* A rules file named by a literal (config suppress, verdict(suppress=)):
 * read now, so that a bad one is this file's parse error. */
static void read_suppressions(parser *p, const char *name, size_t n, uint32_t line,
                              uint32_t col)
{
    char path[4096], err[600];
    if (sc_supp_path(p->prog->file, name, n, path, sizeof path) < 0)
        error_at(p, line, col, "suppressions: the path is too long");
    else if (!sc_supp_files_add(&p->prog->supps, path, err, sizeof err))
        error_at(p, line, col, "suppressions: %s", err);
}

/* Keyword names against the allowed list; value checks for a few. */
static int check_kwargs(parser *p, const sc_expr *call, const char *fname,
                        const char *const *allowed, const sc_token *at)
{
    for (int i = 0; i < call->nkw; i++) {
        const char *k = call->kwnames[i];
        const sc_expr *v = call->kwvals[i];
        if (find_in(allowed, k, strlen(k)) < 0) {
            size_t d = SIZE_MAX;
            const char *best = suggest(k, allowed, NULL, &d);
            uint32_t line = call->kwpos[i].line, col = call->kwpos[i].col;
            if (best)
                error_at(p, line, col,
                         "unknown keyword argument '%s' for %s(); did you mean '%s'?",
                         k, fname, best);
            else if (!allowed[0])
                error_at(p, line, col, "%s() takes no keyword arguments", fname);
            else
                error_at(p, line, col, "unknown keyword argument '%s' for %s()", k, fname);
            return -1;
        }
        if (strcmp(k, "device") == 0 && check_device_literal(p, v) < 0)
            return -1;
        if (strcmp(k, "sweep") == 0 && check_choice(p, v, "sweep policy", sweep_values) < 0)
            return -1;
        if (strcmp(k, "kind") == 0 && check_choice(p, v, "kind", live_kinds) < 0)
            return -1;
        if (strcmp(k, "suppress") == 0 && v->kind == E_STR)
            read_suppressions(p, v->name, v->slen, v->line, v->col);
    }
    (void)at;
    return 0;
}

/* Whether the statement being parsed is inside a `with` block. */
static int in_with(const parser *p)
{
    for (int i = 0; i < p->nblocks; i++)
        if (p->blocks[i].st && p->blocks[i].st->kind == S_WITH)
            return 1;
    return 0;
}

/* op_out(CTOR): its one argument is a constructor's call, written inside
 * `with`; the call is marked (sc_expr.op_out) for its evaluator. */
static int check_op_out(parser *p, sc_expr *e, const sc_token *nt)
{
    sc_expr *c = e->args[0];
    if (c->kind != E_CALL || !(c->word->flags & SWF_CTOR)) {
        error_at(p, c->line, c->col, "op_out() takes a constructor's call, as in "
                 "op_out(empty(2, 3)): an op's output written by its geometry");
        return -1;
    }
    if (!in_with(p)) {
        error_at(p, nt->line, nt->col, "op_out() outside `with MODE`: an op's output is a fake "
                 "of the innermost mode");
        return -1;
    }
    c->op_out = 1;
    return 0;
}

static int checkpoint_find(parser *p, const char *name)
{
    for (size_t i = 0; i < p->checkpoints.n; i++)
        if (strcmp(p->checkpoints.v[i], name) == 0)
            return (int)i;
    return -1;
}

static sc_expr *parse_call(parser *p, const sc_token *nt)
{
    char name[80];
    snprintf(name, sizeof name, "%.*s", nt->len > 60 ? 60 : (int)nt->len, nt->start);
    int b = -1;
    for (int i = 0; i < B_COUNT; i++)
        if (tok_is(nt, sc_builtin_row(i)->name)) {
            b = i;
            break;
        }
    if (b < 0) {
        const char *bn[B_COUNT + 1];
        for (int i = 0; i < B_COUNT; i++)
            bn[i] = sc_builtin_row(i)->name;
        bn[B_COUNT] = NULL;
        size_t d = SIZE_MAX;
        const char *best = suggest(name, bn, NULL, &d);
        if (best)
            error_at(p, nt->line, nt->col, "unknown function '%s'; did you mean '%s'?",
                     name, best);
        else {
            int m = -1;
            for (size_t i = 0; i < sc_nmethods(); i++)
                if (strcmp(sc_method_row((int)i)->name, name) == 0)
                    m = (int)i;
            if (m >= 0)
                error_at(p, nt->line, nt->col,
                         "unknown function '%s' ('%s' is a method: write X.%s(...))",
                         name, name, name);
            else
                error_at(p, nt->line, nt->col, "unknown function '%s'", name);
        }
        return NULL;
    }
    sc_expr *e = new_expr(p, b == B_RAISES ? E_RAISES : E_CALL, nt);
    if (!e)
        return NULL;
    e->id = b;
    e->word = sc_builtin_row(b);
    if (parse_args(p, e, b == B_RAISES) < 0)
        return NULL;
    const sc_word *bi = sc_builtin_row(b);
    if (e->nargs < bi->min || (bi->max >= 0 && e->nargs > bi->max)) {
        char want[48];
        if (bi->max < 0)
            snprintf(want, sizeof want, "at least %d positional argument%s", bi->min,
                     bi->min == 1 ? "" : "s");
        else if (bi->min == bi->max && bi->min == 0)
            snprintf(want, sizeof want, "no arguments");
        else if (bi->min == bi->max)
            snprintf(want, sizeof want, "%d argument%s", bi->min, bi->min == 1 ? "" : "s");
        else if (bi->min == 0)
            snprintf(want, sizeof want, "at most %d argument%s", bi->max,
                     bi->max == 1 ? "" : "s");
        else
            snprintf(want, sizeof want, "%d to %d arguments", bi->min, bi->max);
        error_at(p, nt->line, nt->col, "%s() takes %s, got %d", bi->name, want, e->nargs);
        return NULL;
    }
    if (check_kwargs(p, e, bi->name, bi->kw, nt) < 0)
        return NULL;
    if (b == B_RAISES) {
        /* args[0] is the placeholder; the expression is args[1] */
        e->args[0] = e->args[1];
        e->nargs = 1;
    }
    if (b == B_LIVE && e->nargs == 1 && check_choice(p, e->args[0], "kind", live_kinds) < 0)
        return NULL;
    if (b == B_OP_OUT && check_op_out(p, e, nt) < 0)
        return NULL;
    if (b == B_GC && e->nargs == 1 &&
        (e->args[0]->kind != E_INT || e->args[0]->ival < 0 || e->args[0]->ival > 2)) {
        error_at(p, e->args[0]->line, e->args[0]->col,
                 "gc() takes a generation: 0, 1 or 2 (2 is a full collection)");
        return NULL;
    }
    if (b == B_GROWTH && e->args[0]->kind == E_STR &&
        checkpoint_find(p, e->args[0]->name) < 0) {
        error_at(p, e->args[0]->line, e->args[0]->col,
                 "unknown checkpoint \"%s\" (no earlier 'checkpoint' line names it)",
                 e->args[0]->name);
        return NULL;
    }
    return e;
}

/* sN (N without leading zeros, below 2^31), a ShapeEnv symbol when no
 * earlier line binds a variable of that name; else -1. */
static int64_t symbol_index(const sc_token *t)
{
    if (t->len < 2 || t->len > 11 || t->start[0] != 's' || (t->len > 2 && t->start[1] == '0'))
        return -1;
    int64_t n = 0;
    for (size_t i = 1; i < t->len; i++) {
        if (t->start[i] < '0' || t->start[i] > '9')
            return -1;
        n = n * 10 + (t->start[i] - '0');
    }
    return n <= INT32_MAX ? n : -1;
}

static sc_expr *parse_name(parser *p)
{
    sc_token nt = p->tok;
    if (peek(p)->kind == T_LPAREN) {
        next(p);
        return parse_call(p, &nt);
    }
    next(p);
    var *v = var_find(p, nt.start, nt.len);
    if (v && v->bound) {
        sc_expr *e = new_expr(p, E_VAR, &nt);
        if (!e)
            return NULL;
        e->slot = v->slot;
        e->name = v->name;
        return e;
    }
    int64_t sym = symbol_index(&nt);
    if (sym >= 0) {
        if (!in_with(p)) {
            error_at(p, nt.line, nt.col, "symbol s%lld outside `with MODE`: a size "
                     "expression's symbols are the mode's ShapeEnv's", (long long)sym);
            return NULL;
        }
        sc_expr *e = new_expr(p, E_SYM, &nt);
        if (e)
            e->ival = sym;
        return e;
    }
    int mf = find_in(mfmt_names, nt.start, nt.len);
    if (mf >= 0) {
        sc_expr *e = new_expr(p, E_MFMT, &nt);
        if (!e)
            return NULL;
        e->sub = mf;
        e->name = mfmt_names[mf];
        return e;
    }
    int dt = find_in(dtype_names, nt.start, nt.len);
    if (dt >= 0) {
        sc_expr *e = new_expr(p, E_DTYPE, &nt);
        if (!e)
            return NULL;
        ts_dtype d;
        char nm[8];
        snprintf(nm, sizeof nm, "%.*s", (int)nt.len, nt.start);
        e->sub = ts_dtype_from_name(nm, &d) == 0 ? (int)d : dt;
        e->name = dtype_names[dt];
        return e;
    }
    /* Not bound by any earlier line: decided at the end (a later line may
     * bind it). Build a placeholder so parsing goes on. */
    if (p->nuses == p->ucap) {
        size_t nc = p->ucap ? p->ucap * 2 : 16;
        pending_use *nu = arena(p, nc * sizeof *nu);
        if (!nu)
            return NULL;
        if (p->nuses)
            memcpy(nu, p->uses, p->nuses * sizeof *nu);
        p->uses = nu;
        p->ucap = nc;
    }
    char *nm = tok_name(p, &nt);
    if (!nm)
        return NULL;
    p->uses[p->nuses].name = nm;
    p->uses[p->nuses].line = nt.line;
    p->uses[p->nuses].col = nt.col;
    p->nuses++;
    p->line_err = 1;
    p->nerrors++;   /* counted now, printed at the end */
    return new_expr(p, E_NONE, &nt);
}

static sc_expr *parse_primary(parser *p)
{
    sc_token t = p->tok;
    sc_expr *e;
    switch (t.kind) {
    case T_INT:
        e = new_expr(p, E_INT, &t);
        if (e)
            e->ival = t.ival;
        next(p);
        return e;
    case T_STRING:
        e = new_expr(p, E_STR, &t);
        if (e) {
            e->name = t.sval;
            e->slen = t.slen;
        }
        next(p);
        return e;
    case T_KEYWORD:
        if (t.kw == K_TRUE || t.kw == K_FALSE) {
            e = new_expr(p, E_BOOL, &t);
            if (e)
                e->ival = t.kw == K_TRUE;
            next(p);
            return e;
        }
        if (t.kw == K_NONE) {
            e = new_expr(p, E_NONE, &t);
            next(p);
            return e;
        }
        unexpected(p, "an expression");
        return NULL;
    case T_NAME:
        return parse_name(p);
    case T_LPAREN: {
        next(p);
        if (p->tok.kind == T_RPAREN) {
            error_at(p, t.line, t.col, "empty tuple '()' is not a value");
            return NULL;
        }
        sc_expr *first = parse_expr(p);
        if (!first)
            return NULL;
        if (p->tok.kind == T_RPAREN) {
            next(p);
            return first;   /* grouping */
        }
        if (p->tok.kind != T_COMMA) {
            unexpected(p, "',' or ')'");
            return NULL;
        }
        sc_expr *el[SC_MAX_ARGS];
        int n = 0;
        el[n++] = first;
        while (p->tok.kind == T_COMMA) {
            next(p);
            if (p->tok.kind == T_RPAREN)
                break;
            if (n >= SC_MAX_ARGS) {
                error_at(p, p->tok.line, p->tok.col, "tuple too long (more than %d)",
                         SC_MAX_ARGS);
                return NULL;
            }
            sc_expr *x = parse_expr(p);
            if (!x)
                return NULL;
            el[n++] = x;
        }
        if (p->tok.kind != T_RPAREN) {
            unexpected(p, "',' or ')'");
            return NULL;
        }
        next(p);
        e = new_expr(p, E_TUPLE, &t);
        if (!e)
            return NULL;
        e->nargs = (uint16_t)n;
        e->args = arena(p, (size_t)n * sizeof *e->args);
        if (!e->args)
            return NULL;
        memcpy(e->args, el, (size_t)n * sizeof *el);
        return e;
    }
    case T_ERROR:
        return NULL;
    default:
        unexpected(p, "an expression");
        return NULL;
    }
}

/* Each link of a postfix chain (x.a.b().c) is one nesting level: every
 * tree walk sees a chain as nested receivers, so a chain counts against
 * SC_MAX_NESTING like a parenthesis does (the caller restores p->depth). */
static sc_expr *parse_chain(parser *p, sc_expr *e)
{
    while (e && p->tok.kind == T_DOT) {
        if (p->depth >= SC_MAX_NESTING) {
            error_at(p, p->tok.line, p->tok.col,
                     "method/attribute chain nested too deeply (more than %d levels)",
                     SC_MAX_NESTING);
            return NULL;
        }
        p->depth++;
        next(p);
        if (p->tok.kind != T_NAME) {
            if (p->tok.kind == T_KEYWORD) {
                char what[64];
                sc_tok_describe(&p->tok, what, sizeof what);
                error_at(p, p->tok.line, p->tok.col,
                         "expected a method or attribute name but found keyword %s", what);
            } else {
                unexpected(p, "a method or attribute name");
            }
            return NULL;
        }
        sc_token nt = p->tok;
        char *nm = tok_name(p, &nt);
        if (!nm)
            return NULL;
        next(p);
        if (p->tok.kind == T_LPAREN) {
            int m = -1;
            for (size_t i = 0; i < sc_nmethods(); i++)
                if (strcmp(sc_method_row((int)i)->name, nm) == 0) {
                    m = (int)i;
                    break;
                }
            if (m < 0) {
                const char *mn[SC_MAX_WORDS + 1];
                for (size_t i = 0; i < sc_nmethods(); i++)
                    mn[i] = sc_method_row((int)i)->name;
                mn[sc_nmethods()] = NULL;
                size_t d = SIZE_MAX;
                const char *best = suggest(nm, mn, NULL, &d);
                int is_attr = 0;
                for (size_t i = 0; i < sc_nattrs(); i++)
                    if (strcmp(sc_attr_row((int)i)->name, nm) == 0)
                        is_attr = 1;
                if (is_attr)
                    error_at(p, nt.line, nt.col,
                             "'%s' is an attribute, not a method: write X.%s without ()",
                             nm, nm);
                else if (best)
                    error_at(p, nt.line, nt.col, "unknown method '%s'; did you mean '%s'?",
                             nm, best);
                else
                    error_at(p, nt.line, nt.col, "unknown method '%s'", nm);
                return NULL;
            }
            sc_expr *c = new_expr(p, E_METHOD, &nt);
            if (!c)
                return NULL;
            c->id = m;
            c->word = sc_method_row(m);
            c->name = c->word->name;
            c->recv = e;
            if (sc_method_row(m)->mk == MK_OP) {
                ts_op op;
                if (ts_op_from_name(nm, &op) != 0) {
                    error_at(p, nt.line, nt.col, "method '%s' is not implemented", nm);
                    return NULL;
                }
                c->sub = (int)op;
            } else if (sc_method_row(m)->mk == MK_QUERY) {
                ts_query q;
                if (ts_query_from_name(nm, &q) != 0) {
                    error_at(p, nt.line, nt.col, "method '%s' is not implemented", nm);
                    return NULL;
                }
                c->sub = (int)q;
            }
            if (parse_args(p, c, 0) < 0)
                return NULL;
            const sc_word *w = sc_method_row(m);
            if (w->mk == MK_OBJ && (c->nargs < w->min || c->nargs > w->max)) {
                error_at(p, nt.line, nt.col, "%s() takes %d argument%s, got %d", nm, w->min,
                         w->min == 1 ? "" : "s", c->nargs);
                return NULL;
            }
            char fname[80];
            snprintf(fname, sizeof fname, "%s", nm);
            if (check_kwargs(p, c, fname, sc_method_row(m)->kw, &nt) < 0)
                return NULL;
            e = c;
        } else {
            sc_expr *a = new_expr(p, E_ATTR, &nt);
            if (!a)
                return NULL;
            a->name = nm;
            a->recv = e;
            a->id = A_USER;
            for (size_t i = 0; i < sc_nattrs(); i++)
                if (strcmp(sc_attr_row((int)i)->name, nm) == 0) {
                    a->word = sc_attr_row((int)i);
                    a->id = a->word->id;
                }
            if (a->id == A_USER && near_attr(nm) && vec_push(p, &p->attr_reads, a) < 0)
                return NULL;
            e = a;
        }
    }
    return e;
}

static sc_expr *parse_postfix(parser *p)
{
    sc_expr *e = parse_primary(p);
    int saved = p->depth;
    e = parse_chain(p, e);
    p->depth = saved;
    return e;
}

/* ---- size expressions: INT, sN, + - * //, parentheses ---- */

/* An operand no size expression can hold, known from its form alone. */
static int not_integer(const sc_expr *e)
{
    return e->kind == E_BOOL || e->kind == E_NONE || e->kind == E_STR || e->kind == E_DTYPE ||
           e->kind == E_MFMT || e->kind == E_TUPLE || e->kind == E_CMP;
}

/* The operator at the parser's token: '+', '-', '*', '/', or 0. `s0 -1`
 * lexes as s0 and the integer -1: a minus all the same (*neg_int). */
static int arith_op(const parser *p, int additive, int *neg_int)
{
    *neg_int = 0;
    sc_tok_kind k = p->tok.kind;
    if (additive) {
        if (k == T_INT && p->tok.len > 1 && p->tok.start[0] == '-' && p->tok.ival != INT64_MIN) {
            *neg_int = 1;
            return '-';
        }
        return k == T_PLUS ? '+' : k == T_MINUS ? '-' : 0;
    }
    return k == T_STAR ? '*' : k == T_FLOORDIV ? '/' : 0;
}

static sc_expr *arith_node(parser *p, const sc_token *at, int op, sc_expr *a, sc_expr *b)
{
    const sc_expr *bad = not_integer(a) ? a : not_integer(b) ? b : NULL;
    if (bad) {
        error_at(p, bad->line, bad->col, "'%s' needs integers or symbols on both sides",
                 op == '/' ? "//" : op == '+' ? "+" : op == '-' ? "-" : "*");
        return NULL;
    }
    if (op == '/' && b->kind == E_INT && b->ival == 0) {
        error_at(p, b->line, b->col, "division by zero in a size expression");
        return NULL;
    }
    sc_expr *e = new_expr(p, E_ARITH, at);
    if (!e)
        return NULL;
    e->sub = op;
    e->nargs = 2;
    e->args = arena(p, 2 * sizeof *e->args);
    if (!e->args)
        return NULL;
    e->args[0] = a;
    e->args[1] = b;
    return e;
}

static sc_expr *parse_level(parser *p, int additive)
{
    sc_expr *e = additive ? parse_level(p, 0) : parse_postfix(p);
    int neg, op;
    while (e && (op = arith_op(p, additive, &neg)) != 0) {
        sc_token at = p->tok;
        sc_expr *rhs;
        if (neg) {               /* the integer -N: the operand N */
            rhs = new_expr(p, E_INT, &at);
            if (!rhs)
                return NULL;
            rhs->ival = -at.ival;
            rhs->col++;
            next(p);
        } else {
            next(p);
            if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF ||
                p->tok.kind == T_RPAREN || p->tok.kind == T_COMMA) {
                unexpected(p, "an operand after the operator");
                return NULL;
            }
            rhs = additive ? parse_level(p, 0) : parse_postfix(p);
        }
        e = rhs ? arith_node(p, &at, op, e, rhs) : NULL;
    }
    return e;
}

static sc_expr *parse_expr(parser *p)
{
    if (p->depth >= SC_MAX_NESTING) {
        error_at(p, p->tok.line, p->tok.col,
                 "expression nested too deeply (more than %d levels)", SC_MAX_NESTING);
        return NULL;
    }
    p->depth++;
    sc_expr *e = parse_level(p, 1);
    p->depth--;
    return e;
}

static int cmp_of(sc_tok_kind k)
{
    switch (k) {
    case T_EQ: return C_EQ;
    case T_NE: return C_NE;
    case T_LT: return C_LT;
    case T_LE: return C_LE;
    case T_GT: return C_GT;
    case T_GE: return C_GE;
    default: return -1;
    }
}

static sc_expr *parse_cond(parser *p)
{
    sc_token at = p->tok;
    sc_expr *l = parse_expr(p);
    if (!l)
        return NULL;
    int c = cmp_of(p->tok.kind);
    if (c < 0)
        return l;
    next(p);
    sc_expr *r = parse_expr(p);
    if (!r)
        return NULL;
    sc_expr *e = new_expr(p, E_CMP, &at);
    if (!e)
        return NULL;
    e->id = c;
    e->nargs = 2;
    e->args = arena(p, 2 * sizeof *e->args);
    if (!e->args)
        return NULL;
    e->args[0] = l;
    e->args[1] = r;
    if (cmp_of(p->tok.kind) >= 0) {
        error_at(p, p->tok.line, p->tok.col, "comparisons cannot be chained");
        return NULL;
    }
    return e;
}

/* ---- statements ---- */

static sc_stmt *new_stmt(parser *p, sc_skind k, const sc_token *at)
{
    sc_stmt *s = arena(p, sizeof *s);
    if (!s)
        return NULL;
    s->kind = (uint8_t)k;
    s->line = at->line;
    s->col = at->col;
    s->text_off = (uint32_t)(at->start - p->prog->src);
    p->prog->nstatements++;
    return s;
}

static int add_stmt(parser *p, sc_stmt *s)
{
    vec *v = p->nblocks ? &p->blocks[p->nblocks - 1].body : &p->top;
    return vec_push(p, v, s);
}

static int expect_eol(parser *p, const char *after)
{
    if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF)
        return 0;
    if (p->tok.kind == T_ERROR)
        return -1;
    char what[64];
    sc_tok_describe(&p->tok, what, sizeof what);
    if (p->tok.kind == T_ASSIGN)
        error_at(p, p->tok.line, p->tok.col,
                 "cannot assign to %s (only to a variable or X.attribute)", after);
    else
        error_at(p, p->tok.line, p->tok.col, "unexpected %s after %s", what, after);
    return -1;
}

static int close_block_vec(parser *p, block *b)
{
    sc_stmt *s = b->st;
    if (s && b->body.n) {
        s->body = arena(p, b->body.n * sizeof *s->body);
        if (!s->body) {
            vec_free(&b->body);
            return -1;
        }
        memcpy(s->body, b->body.v, b->body.n * sizeof *s->body);
        s->nbody = (uint32_t)b->body.n;
    }
    vec_free(&b->body);
    return 0;
}

static void parse_config(parser *p)
{
    sc_token at = p->tok;
    next(p);
    if (p->seen_stmt) {
        error_at(p, at.line, at.col, "'config' must come before any other statement");
        return;
    }
    if (p->tok.kind != T_NAME) {
        unexpected(p, "a config key (gc, sweep, end_check, compat, suppress or recording)");
        return;
    }
    sc_token kt = p->tok;
    char key[64];
    snprintf(key, sizeof key, "%.*s", kt.len > 60 ? 60 : (int)kt.len, kt.start);
    int k = find_in(config_keys, kt.start, kt.len);
    if (k < 0) {
        size_t d = SIZE_MAX;
        const char *best = suggest(key, config_keys, NULL, &d);
        if (best)
            error_at(p, kt.line, kt.col, "unknown config key '%s'; did you mean '%s'?", key,
                     best);
        else
            error_at(p, kt.line, kt.col,
                     "unknown config key '%s'; expected gc, sweep, end_check, compat, "
                     "suppress or recording", key);
        return;
    }
    next(p);
    if (p->tok.kind != T_ASSIGN) {
        unexpected(p, "'='");
        return;
    }
    next(p);
    sc_expr v;
    memset(&v, 0, sizeof v);
    v.kind = E_STR;
    v.line = p->tok.line;
    v.col = p->tok.col;
    if (p->tok.kind == T_STRING) {
        v.name = p->tok.sval;
    } else if (p->tok.kind == T_NAME) {   /* extension: bare word */
        v.name = tok_name(p, &p->tok);
        if (!v.name)
            return;
    } else {
        unexpected(p, "a string value");
        return;
    }
    next(p);
    if (k >= 4) {   /* suppress: a rules file (verdict(suppress=) says how it is read);
                       recording: the program a recording was made of */
        if (p->cfg_seen[k]) {
            error_at(p, kt.line, kt.col, "config '%s' is set twice", key);
            return;
        }
        p->cfg_seen[k] = 1;
        if (k == 5) {
            p->prog->cfg_recording = v.name;
        } else {
            p->prog->cfg_suppress = v.name;
            read_suppressions(p, v.name, strlen(v.name), v.line, v.col);
        }
        expect_eol(p, "the config value");
        return;
    }
    const char *const *choices = k == 0 ? gc_values : k == 1 ? sweep_values
                               : k == 2 ? end_values : compat_values();
    char what[96];
    snprintf(what, sizeof what, "value for config '%s'", key);
    if (check_choice(p, &v, what, choices) < 0)
        return;
    int idx = find_in(choices, v.name, strlen(v.name));
    if (p->cfg_seen[k]) {
        error_at(p, kt.line, kt.col, "config '%s' is set twice", key);
        return;
    }
    p->cfg_seen[k] = 1;
    if (k == 0)
        p->prog->cfg_gc = idx;
    else if (k == 1)
        p->prog->cfg_sweep = idx;   /* 0 eager, 1 periodic: fk_policy order */
    else if (k == 2)
        p->prog->cfg_end_check = idx == 0 ? 1 : 0;
    else {
        fk_design_id d = FK_D_DEFAULT;
        fk_design_from_name(v.name, &d);   /* a name check_choice found */
        p->prog->cfg_compat = (int)d;
    }
    expect_eol(p, "the config value");
}

static void parse_del(parser *p)
{
    sc_token at = p->tok;
    next(p);
    uint32_t slots[SC_MAX_ARGS];
    uint32_t n = 0;
    for (;;) {
        if (p->tok.kind != T_NAME) {
            unexpected(p, "a variable name");
            return;
        }
        var *v = var_find(p, p->tok.start, p->tok.len);
        if (!v || !v->bound) {
            char nm[80];
            snprintf(nm, sizeof nm, "%.*s", p->tok.len > 60 ? 60 : (int)p->tok.len,
                     p->tok.start);
            /* same rule as any use: decided at the end */
            if (p->nuses == p->ucap) {
                size_t nc = p->ucap ? p->ucap * 2 : 16;
                pending_use *nu = arena(p, nc * sizeof *nu);
                if (!nu)
                    return;
                if (p->nuses)
                    memcpy(nu, p->uses, p->nuses * sizeof *nu);
                p->uses = nu;
                p->ucap = nc;
            }
            char *s = tok_name(p, &p->tok);
            if (!s)
                return;
            p->uses[p->nuses].name = s;
            p->uses[p->nuses].line = p->tok.line;
            p->uses[p->nuses].col = p->tok.col;
            p->nuses++;
            p->nerrors++;
            p->line_err = 1;
            return;
        }
        if (n >= SC_MAX_ARGS) {
            error_at(p, p->tok.line, p->tok.col, "too many names in one 'del' (more than %d)",
                     SC_MAX_ARGS);
            return;
        }
        slots[n++] = v->slot;
        next(p);
        if (p->tok.kind != T_COMMA)
            break;
        next(p);
    }
    if (expect_eol(p, "'del'") < 0)
        return;
    sc_stmt *s = new_stmt(p, S_DEL, &at);
    if (!s)
        return;
    s->slots = arena(p, n * sizeof *s->slots);
    if (!s->slots)
        return;
    memcpy(s->slots, slots, n * sizeof *slots);
    s->nslots = n;
    s->text_len = (uint32_t)(p->last_end - at.start);
    add_stmt(p, s);
}

static void parse_block_open(parser *p, sc_skind kind)
{
    sc_token at = p->tok;
    const char *kw = kind == S_REPEAT ? "repeat" : "with";
    next(p);
    if (p->nblocks >= SC_MAX_NESTING || p->overflow_blocks) {
        if (!p->overflow_blocks)
            error_at(p, at.line, at.col, "blocks nested too deeply (more than %d levels)",
                     SC_MAX_NESTING);
        p->overflow_blocks++;
        p->line_err = 1;
        return;
    }
    sc_stmt *s = new_stmt(p, kind, &at);
    if (!s)
        return;
    block *b = &p->blocks[p->nblocks++];
    memset(b, 0, sizeof *b);
    b->st = s;
    if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF) {
        error_at(p, p->tok.line, p->tok.col, "'%s' needs %s", kw,
                 kind == S_REPEAT ? "a count (repeat N)" : "a fake mode (with MODE)");
        return;
    }
    s->e = parse_expr(p);
    if (!s->e)
        return;
    if (kind == S_REPEAT && s->e->kind == E_INT && s->e->ival < 0) {
        error_at(p, s->e->line, s->e->col, "repeat count must be >= 0, got %lld",
                 (long long)s->e->ival);
        return;
    }
    if (kind == S_REPEAT && (s->e->kind == E_STR || s->e->kind == E_BOOL ||
                             s->e->kind == E_NONE || s->e->kind == E_TUPLE)) {
        error_at(p, s->e->line, s->e->col, "repeat count must be an integer");
        return;
    }
    if (expect_eol(p, kind == S_REPEAT ? "the repeat count" : "the mode") < 0)
        return;
    s->text_len = (uint32_t)(p->last_end - at.start);
}

static void parse_end(parser *p)
{
    sc_token at = p->tok;
    next(p);
    if (p->overflow_blocks) {
        p->overflow_blocks--;
        return;
    }
    if (p->phantom_blocks && p->nblocks == 0) {
        p->phantom_blocks--;
        return;
    }
    if (p->nblocks == 0) {
        error_at(p, at.line, at.col, "'end' without an open 'repeat' or 'with' block");
        return;
    }
    block *b = &p->blocks[--p->nblocks];
    sc_stmt *s = b->st;
    if (close_block_vec(p, b) < 0)
        return;
    if (add_stmt(p, s) < 0)
        return;
    expect_eol(p, "'end'");
}

static void parse_expect(parser *p)
{
    sc_token at = p->tok;
    next(p);
    if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF) {
        error_at(p, p->tok.line, p->tok.col, "'expect' needs a condition");
        return;
    }
    sc_expr *c = parse_cond(p);
    if (!c)
        return;
    const char *msg = NULL;
    if (p->tok.kind == T_COMMA) {
        next(p);
        if (p->tok.kind != T_STRING) {
            unexpected(p, "a message string");
            return;
        }
        msg = p->tok.sval;
        next(p);
    }
    if (expect_eol(p, "the condition") < 0)
        return;
    sc_stmt *s = new_stmt(p, S_EXPECT, &at);
    if (!s)
        return;
    s->e = c;
    s->msg = msg;
    s->text_len = (uint32_t)(p->last_end - at.start);
    add_stmt(p, s);
}

static void parse_checkpoint(parser *p)
{
    sc_token at = p->tok;
    next(p);
    if (p->tok.kind != T_STRING) {
        unexpected(p, "a checkpoint name string");
        return;
    }
    char *name = p->tok.sval;
    next(p);
    if (expect_eol(p, "the checkpoint name") < 0)
        return;
    int idx = checkpoint_find(p, name);
    if (idx < 0) {
        idx = (int)p->checkpoints.n;
        if (vec_push(p, &p->checkpoints, name) < 0)
            return;
    }
    sc_stmt *s = new_stmt(p, S_CHECKPOINT, &at);
    if (!s)
        return;
    s->slot = (uint32_t)idx;
    s->text_len = (uint32_t)(p->last_end - at.start);
    add_stmt(p, s);
}

/* A line that starts with a name followed by something that cannot follow
 * an expression: most likely a misspelt keyword. */
static int misspelt_keyword(parser *p)
{
    const sc_token *n = peek(p);
    if (n->kind != T_NAME && n->kind != T_INT && n->kind != T_STRING &&
        n->kind != T_KEYWORD)
        return 0;
    char nm[80];
    snprintf(nm, sizeof nm, "%.*s", p->tok.len > 60 ? 60 : (int)p->tok.len, p->tok.start);
    size_t d = SIZE_MAX;
    const char *best = suggest(nm, stmt_keywords, NULL, &d);
    if (best) {
        error_at(p, p->tok.line, p->tok.col, "unknown statement '%s'; did you mean '%s'?",
                 nm, best);
        /* a misspelt block opener: its 'end' is not an error of its own */
        if (strcmp(best, "repeat") == 0 || strcmp(best, "with") == 0)
            p->phantom_blocks++;
    }
    else {
        char what[64];
        sc_tok_describe(n, what, sizeof what);
        error_at(p, n->line, n->col, "unexpected %s after '%s'", what, nm);
    }
    return 1;
}

static void parse_assign_or_expr(parser *p)
{
    sc_token at = p->tok;
    if (p->tok.kind == T_NAME && peek(p)->kind == T_ASSIGN) {
        sc_token nt = p->tok;
        next(p);
        next(p);
        if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF) {
            error_at(p, p->tok.line, p->tok.col, "expected an expression after '='");
            return;
        }
        sc_expr *e = parse_expr(p);
        if (!e || expect_eol(p, "the expression") < 0) {
            /* bind anyway, so later lines do not repeat the error */
            var *v = var_add(p, &nt, nt.line);
            if (v)
                v->bound = 1;
            return;
        }
        if (e->kind == E_TUPLE) {
            error_at(p, e->line, e->col,
                     "a tuple is not a value (tuples are only shape arguments)");
            return;
        }
        var *v = var_add(p, &nt, nt.line);
        if (!v)
            return;
        v->bound = 1;
        sc_stmt *s = new_stmt(p, S_ASSIGN, &at);
        if (!s)
            return;
        s->slot = v->slot;
        s->e = e;
        s->text_len = (uint32_t)(p->last_end - at.start);
        add_stmt(p, s);
        return;
    }
    if (p->tok.kind == T_NAME && misspelt_keyword(p))
        return;
    sc_expr *e = parse_expr(p);
    if (!e)
        return;
    if (p->tok.kind == T_ASSIGN) {
        if (e->kind != E_ATTR) {
            error_at(p, p->tok.line, p->tok.col,
                     "cannot assign to the expression (only to a variable or X.attribute)");
            return;
        }
        if (e->id != A_USER && e->id != A_GRAD) {
            error_at(p, e->line, e->col, "'%s' is a read-only counter", e->name);
            return;
        }
        next(p);
        if (p->tok.kind == T_NEWLINE || p->tok.kind == T_EOF) {
            error_at(p, p->tok.line, p->tok.col, "expected an expression after '='");
            return;
        }
        sc_expr *v = parse_expr(p);
        if (!v)
            return;
        if (expect_eol(p, "the expression") < 0)
            return;
        sc_stmt *s = new_stmt(p, S_STORE, &at);
        if (!s)
            return;
        s->target = e->recv;
        s->attr = e->name;
        s->attr_id = e->id;
        if (vec_push(p, &p->attr_stores, (void *)e->name) < 0)
            return;
        s->e = v;
        s->text_len = (uint32_t)(p->last_end - at.start);
        add_stmt(p, s);
        return;
    }
    if (expect_eol(p, "the expression") < 0)
        return;
    if (e->kind == E_TUPLE) {
        error_at(p, e->line, e->col, "a tuple is not a statement");
        return;
    }
    sc_stmt *s = new_stmt(p, S_EXPR, &at);
    if (!s)
        return;
    s->e = e;
    s->text_len = (uint32_t)(p->last_end - at.start);
    add_stmt(p, s);
}

static void parse_statement(parser *p)
{
    p->line_err = 0;
    p->depth = 0;
    if (p->tok.kind == T_KEYWORD && p->tok.kw == K_CONFIG) {
        parse_config(p);
        return;
    }
    int was_end = p->tok.kind == T_KEYWORD && p->tok.kw == K_END;
    if (!was_end)
        p->seen_stmt = 1;
    if (p->tok.kind == T_KEYWORD) {
        switch (p->tok.kw) {
        case K_DEL: parse_del(p); return;
        case K_EXPECT: parse_expect(p); return;
        case K_REPEAT: parse_block_open(p, S_REPEAT); return;
        case K_WITH: parse_block_open(p, S_WITH); return;
        case K_END: parse_end(p); return;
        case K_CHECKPOINT: parse_checkpoint(p); return;
        default: break;
        }
    }
    parse_assign_or_expr(p);
}

/* ---- diagnostics ---- */

static int diag_cmp(const void *a, const void *b)
{
    const diag *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return 0;
}

/* Print source line `line` (1-based) sanitized, and a caret under col. Long
 * lines are shown as a window around the column. */
static void print_source_line(FILE *f, const char *src, size_t len, uint32_t line,
                              uint32_t col, int color)
{
    const char *p = src, *end = src + len;
    for (uint32_t l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    /* Walk code points, emitting a window [first, first + 100) of columns. */
    uint32_t first = col > 60 ? col - 40 : 1;
    char out[512], caret[512];
    size_t no = 0, nc = 0;
    uint32_t c = 1;
    if (first > 1) {
        memcpy(out, "...", 3);
        memcpy(caret, "   ", 3);
        no = nc = 3;
    }
    const unsigned char *q = (const unsigned char *)p;
    int truncated = 0;
    while (q < (const unsigned char *)le) {
        size_t n = sc_utf8_len(q, (const unsigned char *)le);
        if (c >= first) {
            if (c >= first + 100) {
                truncated = 1;
                break;
            }
            if (n == 0 || *q == 0) {
                out[no++] = '?';
            } else if (*q == '\t') {
                out[no++] = '\t';
            } else if (*q < 0x20 || *q == 0x7F || *q == '\r') {
                out[no++] = '?';
            } else {
                memcpy(out + no, q, n);
                no += n;
            }
            if (c < col)
                caret[nc++] = *q == '\t' ? '\t' : ' ';
        }
        q += n ? n : 1;
        c++;
    }
    if (truncated) {
        memcpy(out + no, "...", 3);
        no += 3;
    }
    out[no] = '\0';
    caret[nc] = '\0';
    fprintf(f, "%s\n%s%s^%s\n", out, caret, color ? "\033[1;32m" : "",
            color ? "\033[0m" : "");
}

static void print_diags(parser *p, FILE *f, int color)
{
    if (!f)
        return;
    qsort(p->diags, p->ndiags, sizeof *p->diags, diag_cmp);
    size_t shown = p->ndiags > SC_MAX_ERRORS ? SC_MAX_ERRORS : p->ndiags;
    for (size_t i = 0; i < shown; i++) {
        diag *d = &p->diags[i];
        /* the path and message as text for a terminal: a file name's ESC
         * is shown as '?', never sent */
        fputs(color ? "\033[1m" : "", f);
        es_fputs(f, p->prog->file, ES_TEXT);
        fprintf(f, ":%u:%u: %serror:%s ", d->line, d->col, color ? "\033[1;31m" : "",
                color ? "\033[0;1m" : "");
        es_fputs(f, d->msg, ES_TEXT);
        fputs(color ? "\033[0m\n" : "\n", f);
        print_source_line(f, p->prog->src, p->prog->len, d->line, d->col, color);
    }
    if (p->nerrors > shown)
        fprintf(f, "%s: %zu errors in all; stopped after %zu\n", p->prog->file, p->nerrors,
                shown);
}

/* Decide the uses of names that no earlier line bound. */
static void resolve_pending(parser *p)
{
    for (size_t i = 0; i < p->nuses; i++) {
        pending_use *u = &p->uses[i];
        var *v = var_find(p, u->name, strlen(u->name));
        p->nerrors--;   /* counted at the use; error_at counts again */
        if (v && v->bound_line >= u->line) {
            error_at(p, u->line, u->col,
                     "variable '%s' is used before any line binds it (first bound at line %u)",
                     u->name, v->bound_line);
            continue;
        }
        /* candidates: every variable name, and the dtypes */
        const char *best = NULL;
        size_t bd = SIZE_MAX, cap = suggest_cap(strlen(u->name));
        for (size_t k = 0; k < p->vcap; k++) {
            const char *nm = p->vars[k].name;
            if (!nm || p->vars[k].bound_line > u->line)
                continue;
            size_t d = sc_edit_distance(u->name, nm, cap);
            if (d <= cap && d > 0 && d < bd && d < strlen(u->name)) {
                bd = d;
                best = nm;
            }
        }
        best = suggest(u->name, dtype_names, best, &bd);
        if (!best && u->col == 1)
            best = suggest(u->name, stmt_keywords, best, &bd);
        if (best)
            error_at(p, u->line, u->col, "unknown variable '%s'; did you mean '%s'?", u->name,
                     best);
        else
            error_at(p, u->line, u->col, "unknown variable '%s'", u->name);
    }
}

/* ---- entry points ---- */

/* The program header is its own allocation (not in its arena), so every
 * block stays reachable through a start pointer: memcheck reports nothing
 * "possibly lost" while programs are alive. */
static sc_program *program_new(const char *file, const char *src, size_t len)
{
    sc_program *prog = al_malloc(sizeof *prog, AL_K_SCENARIO, "sc_program");
    if (!prog) {
        er_set(ER_OOM, "out of memory while parsing");
        return NULL;
    }
    memset(prog, 0, sizeof *prog);
    prog->file = sc_arena_strndup(&prog->arena, file, strlen(file));
    prog->src = sc_arena_strndup(&prog->arena, src, len);
    if (!prog->file || !prog->src) {
        sc_arena_free(&prog->arena);
        al_free(prog, sizeof *prog, AL_K_SCENARIO);
        return NULL;
    }
    prog->len = len;
    prog->cfg_gc = prog->cfg_sweep = prog->cfg_end_check = prog->cfg_compat = -1;
    prog->cfg_suppress = NULL;
    prog->cfg_recording = NULL;
    return prog;
}

void sc_program_free(sc_program *p)
{
    if (!p)
        return;
    sc_supp_files_free(p->supps);
    if (p->parked)
        al_free(p->file, strlen(p->file) + 1, AL_K_SCENARIO);
    sc_arena_free(&p->arena);
    al_free(p, sizeof *p, AL_K_SCENARIO);
}

/* `m.memo_mta` reads a user attribute that nothing ever sets (so it is
 * always none): when its name is near a counter's and no line stores it,
 * it is a misspelt counter. */
static void resolve_attr_reads(parser *p)
{
    for (size_t i = 0; i < p->attr_reads.n; i++) {
        const sc_expr *e = p->attr_reads.v[i];
        int stored = 0;
        for (size_t k = 0; k < p->attr_stores.n && !stored; k++)
            stored = strcmp(p->attr_stores.v[k], e->name) == 0;
        if (!stored)
            error_at(p, e->line, e->col,
                     "unknown attribute '%s'; did you mean '%s'? (no line sets .%s)", e->name,
                     near_attr(e->name), e->name);
    }
}

sc_program *sc_parse(const char *file, const char *src, size_t len, FILE *diag_out,
                     int color, int *nerrors)
{
    if (nerrors)
        *nerrors = 0;
    /* a UTF-8 byte order mark (editors on Windows write one) is not text */
    if (src && len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0) {
        src += 3;
        len -= 3;
    }
    sc_program *prog = program_new(file ? file : "<input>", src ? src : "", src ? len : 0);
    if (!prog) {
        if (diag_out)
            fprintf(diag_out, "%s: error: out of memory\n", file ? file : "<input>");
        if (nerrors)
            *nerrors = 1;
        return NULL;
    }
    parser *p = al_malloc(sizeof *p, AL_K_SCENARIO, "sc_parse");
    diag *diags = al_malloc((SC_MAX_ERRORS + 1) * sizeof *diags, AL_K_SCENARIO, "sc_parse");
    if (!p || !diags) {
        al_free(p, sizeof *p, AL_K_SCENARIO);
        al_free(diags, (SC_MAX_ERRORS + 1) * sizeof *diags, AL_K_SCENARIO);
        sc_program_free(prog);
        if (diag_out)
            fprintf(diag_out, "%s: error: out of memory\n", file ? file : "<input>");
        if (nerrors)
            *nerrors = 1;
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->prog = prog;
    p->diags = diags;
    sc_lex_init(&p->lx, prog->src, prog->len, &prog->arena);
    p->last_end = prog->src;
    next(p);
    while (p->tok.kind != T_EOF && !p->oom && !p->binary) {
        if (p->tok.kind == T_NEWLINE) {
            next(p);
            continue;
        }
        if (p->tok.kind == T_ERROR) {
            next(p);
            continue;
        }
        parse_statement(p);
        skip_to_eol(p);
        if (p->nerrors > 4 * SC_MAX_ERRORS + 1000)
            break;   /* enough: a garbage file */
    }
    if (!p->oom && !p->binary) {
        for (int i = 0; i < p->nblocks; i++) {
            sc_stmt *s = p->blocks[i].st;
            error_at(p, s->line, s->col, "'%s' block is never closed by 'end'",
                     s->kind == S_REPEAT ? "repeat" : "with");
        }
        resolve_pending(p);
        resolve_attr_reads(p);
    }
    for (int i = 0; i < p->nblocks; i++)
        vec_free(&p->blocks[i].body);
    int ok = !p->oom && p->nerrors == 0;
    if (ok) {
        prog->top = arena(p, (p->top.n ? p->top.n : 1) * sizeof *prog->top);
        prog->var_names = arena(p, (p->nvars ? p->nvars : 1) * sizeof *prog->var_names);
        prog->checkpoint_names =
            arena(p, (p->checkpoints.n ? p->checkpoints.n : 1) * sizeof(char *));
        if (p->oom) {
            ok = 0;
        } else {
            if (p->top.n)
                memcpy(prog->top, p->top.v, p->top.n * sizeof *prog->top);
            prog->ntop = (uint32_t)p->top.n;
            for (size_t k = 0; k < p->vcap; k++)
                if (p->vars[k].name)
                    prog->var_names[p->vars[k].slot] = p->vars[k].name;
            prog->nvars = (uint32_t)p->nvars;
            for (size_t k = 0; k < p->checkpoints.n; k++)
                prog->checkpoint_names[k] = p->checkpoints.v[k];
            prog->ncheckpoints = (uint32_t)p->checkpoints.n;
        }
    }
    if (p->oom) {
        if (diag_out)
            fprintf(diag_out, "%s: error: out of memory while parsing\n", prog->file);
        if (!p->nerrors)
            p->nerrors = 1;
    } else {
        print_diags(p, diag_out, color);
    }
    if (nerrors)
        *nerrors = (int)(p->nerrors > 1000000 ? 1000000 : p->nerrors);
    vec_free(&p->top);
    vec_free(&p->checkpoints);
    vec_free(&p->attr_reads);
    vec_free(&p->attr_stores);
    al_free(diags, (SC_MAX_ERRORS + 1) * sizeof *diags, AL_K_SCENARIO);
    al_free(p, sizeof *p, AL_K_SCENARIO);
    if (!ok) {
        sc_program_free(prog);
        return NULL;
    }
    return prog;
}

sc_program *sc_parse_file(const char *path, FILE *diag_out, int color, int *nerrors)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (diag_out)
            fprintf(diag_out, "%s: error: cannot read: %s\n", path, strerror(errno));
        if (nerrors)
            *nerrors = 1;
        return NULL;
    }
    size_t cap = 0, len = 0;
    char *buf = NULL;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            if (nc > SC_MAX_FILE + 1) {
                al_free(buf, cap, AL_K_SCENARIO);
                fclose(f);
                if (diag_out)
                    fprintf(diag_out, "%s: error: larger than %d MiB, the scenario size limit\n",
                            path, (int)(SC_MAX_FILE >> 20));
                if (nerrors)
                    *nerrors = 1;
                return NULL;
            }
            char *nb = al_realloc(buf, cap, nc, AL_K_SCENARIO, "sc_parse_file");
            if (!nb) {
                al_free(buf, cap, AL_K_SCENARIO);
                fclose(f);
                if (diag_out)
                    fprintf(diag_out, "%s: error: out of memory reading the file\n", path);
                if (nerrors)
                    *nerrors = 1;
                return NULL;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) {
        al_free(buf, cap, AL_K_SCENARIO);
        if (diag_out)
            fprintf(diag_out, "%s: error: cannot read: read error\n", path);
        if (nerrors)
            *nerrors = 1;
        return NULL;
    }
    sc_program *p = sc_parse(path, buf, len, diag_out, color, nerrors);
    al_free(buf, cap, AL_K_SCENARIO);
    return p;
}

const char *sc_program_file(const sc_program *p) { return p->file; }
size_t sc_program_statements(const sc_program *p) { return p->nstatements; }
int sc_program_compat(const sc_program *p) { return p->cfg_compat; }
