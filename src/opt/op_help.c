/* op_help.c - what the option rows say besides the parser (op.h): the rows
 * a command takes, --help, the lines of op_list_options, and the messages. */
#include "opt/op.h"

#include <errno.h>
#include <string.h>

size_t op_rows(const op_prog *p, const op_cmd *cmd, const op_opt **out)
{
    size_t n = 0;
    for (const op_opt *r = cmd->opts; r && r->name && n < OP_MAX_ROWS; r++)
        out[n++] = r;
    for (const op_opt *r = p->common; r && r->name && n < OP_MAX_ROWS; r++) {
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

const op_opt *op_find(const op_prog *p, const op_cmd *cmd, const char *name)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i]->name, name) == 0)
            return rows[i]->kind == OP_K_ALIAS ? op_find(p, cmd, rows[i]->words) : rows[i];
    return NULL;
}

int op_takes_next(const op_prog *p, const op_cmd *cmd, const char *a)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    if (a[0] == '-' && a[1] != '-') {
        for (size_t i = 0; i < n; i++)
            if (a[1] && rows[i]->shrt == a[1])
                return rows[i]->arg != NULL && a[2] == '\0';
        return 0;
    }
    if (strchr(a, '='))
        return 0;
    const op_opt *r = op_find(p, cmd, a);
    return r && r->arg != NULL;
}

/* ---- --help and list options ---- */

/* "-j, --jobs N" */
static void option_column(const op_opt *r, char *buf, size_t n)
{
    int w = 0;
    if (r->shrt)
        w = snprintf(buf, n, "-%c, ", r->shrt);
    snprintf(buf + w, n - (size_t)w, "%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
}

static void row_help(const op_opt *r, FILE *f)
{
    char col[96];
    option_column(r, col, sizeof col);
    if (strlen(col) <= 20)
        fprintf(f, "  %-20s ", col);
    else
        fprintf(f, "  %s\n%23s", col, "");
    for (const char *c = r->help; *c; c++) {
        fputc(*c, f);
        if (*c == '\n')
            fprintf(f, "%23s", "");
    }
    fputc('\n', f);
}

int op_help(const op_prog *p, const op_cmd *cmd, FILE *f)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    errno = 0;
    fprintf(f, "usage: %s %s %s\n\n%s\n\noptions:\n", p->name, cmd->name, cmd->usage,
            cmd->about);
    for (size_t i = 0; i < n; i++)
        if (!rows[i]->hidden && rows[i]->help)
            row_help(rows[i], f);
    fprintf(f, "  --                   the rest are operands, even if they start with '-'\n");
    if (cmd->more)   /* before the tail: its exit status and examples end the text */
        cmd->more(f);
    if (cmd->tail)
        fprintf(f, "\n%s\n", cmd->tail);
    return ferror(f) ? -1 : 0;
}

static const char *kind_name(const op_opt *r)
{
    static const char *const names[] = {"flag", "number", "size", "string", "choice",
                                        "choice", "input", "output", "folder", "value",
                                        "flag", "flag", "alias"};
    return names[r->kind];
}

void op_list_options(const op_prog *p, const op_cmd *cmd, FILE *f)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    for (size_t i = 0; i < n; i++) {
        const op_opt *r = rows[i];
        if (r->hidden)
            continue;
        const char *h = r->help ? r->help : "";
        const char *nl = strchr(h, '\n');
        char buf[256];
        const char *words = op_words(r, buf, sizeof buf);
        fprintf(f, "%s\t%s\t", cmd->name, r->name);
        if (r->shrt)
            fprintf(f, "-%c", r->shrt);
        else
            fputc('-', f);
        fprintf(f, "\t%s\t%s\t%s\t%.*s\n", kind_name(r), r->arg ? r->arg : "-",
                words ? words : "-", nl ? (int)(nl - h) : (int)strlen(h), h);
    }
}

void op_rows_each(const op_prog *p, const op_cmd *cmd, int kind,
                  void (*fn)(const op_opt *row, void *arg), void *arg)
{
    const op_opt *rows[OP_MAX_ROWS];
    size_t n = op_rows(p, cmd, rows);
    for (size_t i = 0; i < n; i++)
        if (rows[i]->kind == kind)
            fn(rows[i], arg);
}

/* ---- messages ---- */

void op_verror(const op_prog *p, const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s%s%s: ", p->name, cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void op_error(const op_prog *p, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    op_verror(p, cmd, fmt, ap);
    va_end(ap);
}

int op_flush_stdout(const op_prog *p, const char *cmd)
{
    int e = ferror(stdout) ? errno : 0;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (!errno)
        errno = e;
    op_error(p, cmd, "cannot write to standard output: %s", strerror(errno ? errno : EIO));
    clearerr(stdout);
    return -1;
}
