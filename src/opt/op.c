/* op.c - the parser of a command line by its option rows (op.h). */
#include "opt/op.h"

#include <stdlib.h>
#include <string.h>

#include "scenario/sc.h"
#include "value/vl.h"

/* A row takes a value when its help names one ("--jobs N"). */
static int takes_value(const op_opt *r)
{
    return r->arg != NULL;
}

/* ---- errors ---- */

static void unknown(const op_prog *p, const op_cmd *cmd, const op_opt **rows, size_t n,
                    const char *a)
{
    const char *names[2 * OP_MAX_ROWS];
    char shorts[OP_MAX_ROWS][3];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        names[k++] = rows[i]->name;
        if (rows[i]->shrt) {
            shorts[i][0] = '-', shorts[i][1] = rows[i]->shrt, shorts[i][2] = '\0';
            names[k++] = shorts[i];
        }
    }
    char bare[64];
    const char *eq = strchr(a, '=');
    snprintf(bare, sizeof bare, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
    const char *best = sc_closest(bare, names, k, sizeof names[0], 2);
    if (best)
        op_error(p, cmd->name, "unknown option '%s'; did you mean '%s'? (%s %s --help)", a,
              best, p->name, cmd->name);
    else
        op_error(p, cmd->name, "unknown option '%s' (%s %s --help)", a, p->name,
              cmd->name);
}

/* The row a long word names: whole, or a prefix of exactly one shown row
 * (getopt_long's rule). NULL with the message printed. */
static const op_opt *match_long(const op_prog *p, const op_cmd *cmd, const op_opt **rows,
                                size_t n,
                                 const char *a)
{
    const char *eq = strchr(a, '=');
    size_t k = eq ? (size_t)(eq - a) : strlen(a);
    const op_opt *hit = NULL;
    size_t nhit = 0;
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (strncmp(rows[i]->name, a, k) != 0)
            continue;
        if (rows[i]->name[k] == '\0')
            return rows[i]->kind == OP_K_ALIAS ? op_find(p, cmd, rows[i]->words) : rows[i];
        if (rows[i]->hidden)
            continue;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", nhit ? ", " : "", rows[i]->name);
        hit = rows[i];
        nhit++;
    }
    if (nhit == 1)
        return hit;
    if (nhit > 1)
        op_error(p, cmd->name, "ambiguous option '%.*s' could be %s (%s %s --help)", (int)k,
              a, list, p->name, cmd->name);
    else
        unknown(p, cmd, rows, n, a);
    return NULL;
}

/* ---- storing a value ---- */

/* 0, or -1 with what was expected in err. */
static int store(void *base, const op_opt *r, const char *v, char *err, size_t n)
{
    char *at = (char *)base + r->off;
    uint64_t x;
    int k;
    switch ((op_kind)r->kind) {
    case OP_K_FLAG:
        *(int *)at = 1;
        return 0;
    case OP_K_UINT:
    case OP_K_SIZE:
        if (vl_u64(v, r->kind == OP_K_SIZE, &x) < 0 || x < r->lo || x > r->hi) {
            vl_number_expected(r->kind == OP_K_SIZE, r->lo, r->hi, err, n);
            return -1;
        }
        vl_put_uint(at, r->size, x);
        return 0;
    case OP_K_ENUM:
    case OP_K_WORD: {
        char buf[256];
        const char *words = op_words(r, buf, sizeof buf);
        if (!words || (k = vl_word(words, v)) < 0) {
            vl_words_expected(words ? words : "", err, n);
            return -1;
        }
        if (r->kind == OP_K_ENUM)
            *(int *)at = k;
        else
            *(const char **)at = v;
        return 0;
    }
    case OP_K_FN:
        return r->fn(at, v, err, n);
    default:
        *(const char **)at = v;
        return 0;
    }
}

/* ---- the parser ---- */

static char *canonical(const op_opt *r, const char *eq)
{
    static char arena[8192];
    static size_t used;
    if (!eq)
        return (char *)r->name;
    size_t len = strlen(r->name) + strlen(eq) + 1;
    if (used + len > sizeof arena)
        return NULL;
    char *p = arena + used;
    snprintf(p, len, "%s%s", r->name, eq);
    used += len;
    return p;
}

/* One option word at argv[*i] (and its value): 0, OP_PARSE_DONE or
 * OP_PARSE_ERROR (printed). */
static int one_option(const op_prog *p, const op_cmd *cmd, const op_opt **rows, size_t n,
                      void *base, int argc, char **argv, int *i)
{
    char *a = argv[*i];
    const op_opt *r = NULL;
    const char *v = NULL;
    if (a[1] == '-') {
        if (!(r = match_long(p, cmd, rows, n, a)))
            return OP_PARSE_ERROR;
        const char *eq = strchr(a, '=');
        if (strncmp(a, r->name, strlen(r->name)) != 0 || (eq && eq - a != (long)strlen(r->name))) {
            char *c = canonical(r, eq);   /* --form=json -> --format=json */
            if (c)
                argv[*i] = c;
        }
        v = eq ? eq + 1 : NULL;
    } else {
        for (size_t k = 0; k < n && !r; k++)
            if (rows[k]->shrt == a[1])
                r = rows[k];
        if (!r || (a[2] && !takes_value(r))) {
            unknown(p, cmd, rows, n, a);
            return OP_PARSE_ERROR;
        }
        v = a[2] ? a + 2 : NULL;   /* -j2, as getopt does */
    }
    if (!takes_value(r) && v) {
        op_error(p, cmd->name, "option %s takes no value", r->name);
        return OP_PARSE_ERROR;
    }
    if (takes_value(r) && !v) {
        if (*i + 1 >= argc) {
            op_error(p, cmd->name, "option %s needs a value", r->name);
            return OP_PARSE_ERROR;
        }
        v = argv[++*i];
    }
    if (r->kind == OP_K_HELP || r->kind == OP_K_VERSION) {
        int w = r->kind == OP_K_HELP ? op_help(p, cmd, stdout)
                : p->version ? p->version(stdout) : 0;
        int fl = op_flush_stdout(p, cmd->name);   /* says why, when w failed too */
        return w == 0 && fl == 0 ? OP_PARSE_DONE : OP_PARSE_ERROR;
    }
    char err[256];
    if (store(base, r, v, err, sizeof err) < 0) {
        if (strncmp(err, "unknown value", 13) == 0)
            op_error(p, cmd->name, "%s: unknown value '%s'%s", r->name, v, err + 13);
        else if (strncmp(err, "expected", 8) == 0)
            op_error(p, cmd->name, "%s: %s, got '%s'", r->name, err, v ? v : "");
        else
            op_error(p, cmd->name, "%s: %s", r->name, err);
        return OP_PARSE_ERROR;
    }
    return 0;
}

const char *op_words(const op_opt *r, char *buf, size_t n)
{
    if (r->words || r->kind == OP_K_FN || !r->fn)
        return r->words;
    return r->fn(NULL, NULL, buf, n) == 0 ? buf : NULL;
}

int op_parse(const op_prog *p, const op_cmd *cmd, void *base, int argc, char **argv,
             char ***ops, int *nops)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    /* options first, then "--" (when there was one), then the operands, as
     * GNU getopt permutes: argv stays a command line that means the same */
    char **order = malloc((size_t)(argc > 1 ? argc : 1) * 2 * sizeof *order);
    if (!order) {
        op_error(p, cmd->name, "out of memory");
        return OP_PARSE_ERROR;
    }
    char **opnd = order + argc;
    int nopt = 0, nop = 0, only = 0, dashes = 0, rc = OP_PARSE_OK;
    for (int i = 1; i < argc && rc == OP_PARSE_OK; i++) {
        char *a = argv[i];
        if (only || a[0] != '-' || a[1] == '\0') {
            opnd[nop++] = a;
            only |= cmd->operands_end;   /* the rest is the operand's own */
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only = dashes = 1;
            continue;
        }
        int first = i;
        rc = one_option(p, cmd, rows, n, base, argc, argv, &i);
        for (int k = first; k <= i; k++)
            order[nopt++] = argv[k];
    }
    if (rc == OP_PARSE_OK) {
        int k = 1;
        for (int j = 0; j < nopt; j++)
            argv[k++] = order[j];
        if (dashes)
            argv[k++] = (char *)"--";
        *ops = argv + k;
        for (int j = 0; j < nop; j++)
            argv[k++] = opnd[j];
        *nops = nop;
    }
    free(order);
    return rc;
}

int op_parse_exit(int r)
{
    return r == OP_PARSE_DONE ? 0 : 2;
}

