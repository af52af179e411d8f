/* cli_opt.c - the parser, --help and `list options`, all from the option
 * rows (cli_opt.h). */
#include "cli/cli_opt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "scenario/sc.h"

enum { MAX_ROWS = 128 };

/* The rows cmd takes: its own, then the common ones its mask selects (and
 * those every command takes, mask 0) that it does not override; of two
 * common rows of one name, the first in cli_common_rows. */
static size_t rows_of(const cli_cmd *cmd, const cli_opt **out)
{
    size_t n = 0;
    for (const cli_opt *r = cmd->opts; r && r->name && n < MAX_ROWS; r++)
        out[n++] = r;
    for (const cli_opt *r = cli_common_rows; r->name && n < MAX_ROWS; r++) {
        if (r->mask && !(r->mask & cmd->common))
            continue;
        size_t j = 0;
        while (j < n && strcmp(out[j]->name, r->name) != 0)
            j++;
        if (j == n)
            out[n++] = r;
    }
    return n;
}

/* A row takes a value when its help names one ("--jobs N"). */
static int takes_value(const cli_opt *r)
{
    return r->arg != NULL;
}

const cli_opt *cli_opt_find(const cli_cmd *cmd, const char *name)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i]->name, name) == 0)
            return rows[i]->kind == CLI_K_ALIAS ? cli_opt_find(cmd, rows[i]->words) : rows[i];
    return NULL;
}

int cli_opt_takes_next(const cli_cmd *cmd, const char *a)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    if (a[0] == '-' && a[1] != '-') {
        for (size_t i = 0; i < n; i++)
            if (a[1] && rows[i]->shrt == a[1])
                return takes_value(rows[i]) && a[2] == '\0';
        return 0;
    }
    if (strchr(a, '='))
        return 0;
    const cli_opt *r = cli_opt_find(cmd, a);
    return r && takes_value(r);
}

/* ---- errors ---- */

static void unknown(const cli_cmd *cmd, const cli_opt **rows, size_t n, const char *a)
{
    const char *names[2 * MAX_ROWS];
    char shorts[MAX_ROWS][3];
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
        cli_error(cmd->name, "unknown option '%s'; did you mean '%s'? (fakegc %s --help)", a,
                  best, cmd->name);
    else
        cli_error(cmd->name, "unknown option '%s' (fakegc %s --help)", a, cmd->name);
}

/* The row a long word names: whole, or a prefix of exactly one shown row
 * (getopt_long's rule). NULL with the message printed. */
static const cli_opt *match_long(const cli_cmd *cmd, const cli_opt **rows, size_t n,
                                 const char *a)
{
    const char *eq = strchr(a, '=');
    size_t k = eq ? (size_t)(eq - a) : strlen(a);
    const cli_opt *hit = NULL;
    size_t nhit = 0;
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (strncmp(rows[i]->name, a, k) != 0)
            continue;
        if (rows[i]->name[k] == '\0')
            return rows[i]->kind == CLI_K_ALIAS ? cli_opt_find(cmd, rows[i]->words) : rows[i];
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
        cli_error(cmd->name, "ambiguous option '%.*s' could be %s (fakegc %s --help)", (int)k,
                  a, list, cmd->name);
    else
        unknown(cmd, rows, n, a);
    return NULL;
}

/* ---- storing a value ---- */

/* 0, or -1 with what was expected in err. */
static int store(void *base, const cli_opt *r, const char *v, char *err, size_t n)
{
    char *at = (char *)base + r->off;
    uint64_t x;
    int k;
    switch ((cli_kind)r->kind) {
    case CLI_K_FLAG:
        *(int *)at = 1;
        return 0;
    case CLI_K_UINT:
    case CLI_K_SIZE:
        if (vl_u64(v, r->kind == CLI_K_SIZE, &x) < 0 || x < r->lo || x > r->hi) {
            vl_number_expected(r->kind == CLI_K_SIZE, r->lo, r->hi, err, n);
            return -1;
        }
        vl_put_uint(at, r->size, x);
        return 0;
    case CLI_K_ENUM:
    case CLI_K_WORD:
        if ((k = vl_word(r->words, v)) < 0) {
            vl_words_expected(r->words, err, n);
            return -1;
        }
        if (r->kind == CLI_K_ENUM)
            *(int *)at = k;
        else
            *(const char **)at = v;
        return 0;
    case CLI_K_FN:
        return r->fn(at, v, err, n);
    default:
        *(const char **)at = v;
        return 0;
    }
}

/* ---- the parser ---- */

static char *canonical(const cli_opt *r, const char *eq)
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

/* One option word at argv[*i] (and its value): 0, CLI_PARSE_DONE or
 * CLI_PARSE_ERROR (printed). */
static int one_option(const cli_cmd *cmd, const cli_opt **rows, size_t n, void *base, int argc,
                      char **argv, int *i)
{
    char *a = argv[*i];
    const cli_opt *r = NULL;
    const char *v = NULL;
    if (a[1] == '-') {
        if (!(r = match_long(cmd, rows, n, a)))
            return CLI_PARSE_ERROR;
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
            unknown(cmd, rows, n, a);
            return CLI_PARSE_ERROR;
        }
        v = a[2] ? a + 2 : NULL;   /* -j2, as getopt does */
    }
    if (!takes_value(r) && v) {
        cli_error(cmd->name, "option %s takes no value", r->name);
        return CLI_PARSE_ERROR;
    }
    if (takes_value(r) && !v) {
        if (*i + 1 >= argc) {
            cli_error(cmd->name, "option %s needs a value", r->name);
            return CLI_PARSE_ERROR;
        }
        v = argv[++*i];
    }
    if (r->kind == CLI_K_HELP || r->kind == CLI_K_VERSION) {
        int w = r->kind == CLI_K_HELP ? cli_help(cmd, stdout) : cli_version(stdout);
        int fl = cli_flush_stdout(cmd->name);   /* says why, when w failed too */
        return w == 0 && fl == 0 ? CLI_PARSE_DONE : CLI_PARSE_ERROR;
    }
    char err[256];
    if (store(base, r, v, err, sizeof err) < 0) {
        if (strncmp(err, "unknown value", 13) == 0)
            cli_error(cmd->name, "%s: unknown value '%s'%s", r->name, v, err + 13);
        else if (strncmp(err, "expected", 8) == 0)
            cli_error(cmd->name, "%s: %s, got '%s'", r->name, err, v ? v : "");
        else
            cli_error(cmd->name, "%s: %s", r->name, err);
        return CLI_PARSE_ERROR;
    }
    return 0;
}

int cli_parse(const cli_cmd *cmd, void *base, int argc, char **argv, char ***ops, int *nops)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    cli_common_init(base);
    ((cli_common *)base)->cmd = cmd;
    /* options first, then "--" (when there was one), then the operands, as
     * GNU getopt permutes: argv stays a command line that means the same */
    char **order = malloc((size_t)(argc > 1 ? argc : 1) * 2 * sizeof *order);
    if (!order) {
        cli_error(cmd->name, "out of memory");
        return CLI_PARSE_ERROR;
    }
    char **opnd = order + argc;
    int nopt = 0, nop = 0, only = 0, dashes = 0, rc = CLI_PARSE_OK;
    for (int i = 1; i < argc && rc == CLI_PARSE_OK; i++) {
        char *a = argv[i];
        if (only || a[0] != '-' || a[1] == '\0') {
            opnd[nop++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only = dashes = 1;
            continue;
        }
        int first = i;
        rc = one_option(cmd, rows, n, base, argc, argv, &i);
        for (int k = first; k <= i; k++)
            order[nopt++] = argv[k];
    }
    if (rc == CLI_PARSE_OK) {
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

int cli_parse_exit(int r)
{
    return r == CLI_PARSE_DONE ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

/* ---- --help and list options ---- */

/* "-j, --jobs N" */
static void option_column(const cli_opt *r, char *buf, size_t n)
{
    int w = 0;
    if (r->shrt)
        w = snprintf(buf, n, "-%c, ", r->shrt);
    snprintf(buf + w, n - (size_t)w, "%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
}

static void row_help(const cli_opt *r, FILE *f)
{
    char col[96];
    option_column(r, col, sizeof col);
    if (strlen(col) <= 20)
        fprintf(f, "  %-20s ", col);
    else
        fprintf(f, "  %s\n%23s", col, "");
    for (const char *p = r->help; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "%23s", "");
    }
    fputc('\n', f);
}

int cli_help(const cli_cmd *cmd, FILE *f)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    errno = 0;
    fprintf(f, "usage: fakegc %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->usage, cmd->about);
    for (size_t i = 0; i < n; i++)
        if (!rows[i]->hidden && rows[i]->help)
            row_help(rows[i], f);
    fprintf(f, "  --                   the rest are operands, even if they start with '-'\n");
    if (cmd->tail)
        fprintf(f, "\n%s\n", cmd->tail);
    if (cmd->more)
        cmd->more(f);
    return ferror(f) ? -1 : 0;
}

static const char *kind_name(const cli_opt *r)
{
    static const char *const names[] = {"flag", "number", "size", "string", "choice",
                                        "choice", "input", "output", "folder", "value",
                                        "flag", "flag", "alias"};
    return names[r->kind];
}

static void list_one(const cli_cmd *cmd, FILE *f)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    for (size_t i = 0; i < n; i++) {
        const cli_opt *r = rows[i];
        if (r->hidden)
            continue;
        const char *h = r->help ? r->help : "";
        const char *nl = strchr(h, '\n');
        fprintf(f, "%s\t%s\t", cmd->name, r->name);
        if (r->shrt)
            fprintf(f, "-%c", r->shrt);
        else
            fputc('-', f);
        fprintf(f, "\t%s\t%s\t%s\t%.*s\n", kind_name(r), r->arg ? r->arg : "-",
                r->words ? r->words : "-", nl ? (int)(nl - h) : (int)strlen(h), h);
    }
}

void cli_list_options(const cli_cmd *cmd, FILE *f)
{
    if (cmd) {
        list_one(cmd, f);
        return;
    }
    size_t n;
    const cli_cmd *const *all = cli_commands(&n);
    for (size_t i = 0; i < n; i++)
        list_one(all[i], f);
}

void cli_rows_each(const cli_cmd *cmd, int kind, void (*fn)(const cli_opt *row, void *arg),
                   void *arg)
{
    const cli_opt *rows[MAX_ROWS];
    size_t n = rows_of(cmd, rows);
    for (size_t i = 0; i < n; i++)
        if (rows[i]->kind == kind)
            fn(rows[i], arg);
}
