/* cli_common.c - option parsing and environment set-up shared by the
 * subcommands. */
#include "cli/cli.h"

#include "heap/hp.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/er.h"
#include "fake/fk.h"
#include "scenario/sc.h"

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->allocator = "libc";
    c->gc = -1;
    c->sweep = -1;
    c->design = -1;
    c->format = RP_TEXT;
    c->jobs = 1;
    c->timeout = 120;   /* per scenario: a hung one costs 2 minutes, not the run */
    c->repeat = 1;
    c->max_bytes = SC_DEFAULT_MAX_BYTES;
    c->max_statements = SC_DEFAULT_MAX_STATEMENTS;
    c->max_objects = SC_DEFAULT_MAX_OBJECTS;
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fakegc%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_opt_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                  const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') {
        if (n == 2 && name[0] == '-' && name[1] != '-') {   /* -j2, as getopt does */
            *value = a + n;
            return 1;
        }
        return 0;
    }
    if (*i + 1 >= argc) {
        cli_error(cmd, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_u64(const char *s, int sizes, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (sizes && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        case 't': case 'T': mul = 1ull << 40; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
    }
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int choice(const char *cmd, const char *opt, const char *v, const char *const *names,
                  int *out)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[128] = "";
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    cli_error(cmd, "%s: unknown value '%s' (expected %s)", opt, v, list);
    return -1;
}

int cli_common_option(cli_common *c, unsigned mask, const char *cmd, int argc, char **argv,
                      int *i)
{
    const char *a = argv[*i];
    const char *v = NULL;
    int r;
#define VALUE(bit, name)                                                        \
    ((mask & (bit)) && (r = cli_opt_value(cmd, name, argc, argv, i, &v)) != 0)

    if (VALUE(CLI_O_ALLOCATOR, "--allocator")) {
        if (r < 0) return -1;
        c->allocator = v;
        return 1;
    }
    if (VALUE(CLI_O_INJECT, "--inject")) {
        if (r < 0) return -1;
        c->inject = v;
        return 1;
    }
    if (VALUE(CLI_O_COMPAT, "--compat")) {
        if (r < 0) return -1;
        fk_design_id d;
        if (fk_design_from_name(v, &d) != 0) {
            char names[128];
            fk_design_names(names, sizeof names);
            cli_error(cmd, "--compat: unknown value '%s' (expected %s)", v, names);
            return -1;
        }
        c->compat = v;
        c->design = (int)d;
        return 1;
    }
    if (VALUE(CLI_O_GC, "--gc")) {
        if (r < 0) return -1;
        static const char *const names[] = {"manual", "auto", "stress", NULL};
        return choice(cmd, "--gc", v, names, &c->gc) < 0 ? -1 : 1;
    }
    if (VALUE(CLI_O_SWEEP, "--sweep")) {
        if (r < 0) return -1;
        static const char *const names[] = {"eager", "periodic", NULL};
        return choice(cmd, "--sweep", v, names, &c->sweep) < 0 ? -1 : 1;
    }
    if (VALUE(CLI_O_FORMAT, "--format")) {
        if (r < 0) return -1;
        if (rp_format_from_name(v, &c->format) != 0) {
            cli_error(cmd, "--format: unknown value '%s' (expected text, json, junit, tap)", v);
            return -1;
        }
        return 1;
    }
    if (VALUE(CLI_O_FORMAT, "--examples")) {
        uint64_t k = 0;
        if (r < 0) return -1;
        if (cli_parse_u64(v, 0, &k) < 0 || k < 1 || k > 1000) {
            cli_error(cmd, "--examples: expected a number from 1 to 1000, got '%s'", v);
            return -1;
        }
        c->examples = (uint32_t)k;
        return 1;
    }
    if (VALUE(CLI_O_OUTPUT, "--output")) {
        if (r < 0) return -1;
        c->output = v;
        return 1;
    }
    static const char *const also[] = {"--text", "--json", "--junit", "--tap"};
    for (int k = 0; k < 4; k++)
        if (VALUE(CLI_O_ALSO, also[k])) {
            if (r < 0) return -1;
            c->also[k] = v;
            return 1;
        }
    if (VALUE(CLI_O_DOT, "--dot")) {
        if (r < 0) return -1;
        c->dot = v;
        return 1;
    }
    if (VALUE(CLI_O_DOT, "--objects")) {
        if (r < 0) return -1;
        c->objects = v;
        return 1;
    }
    if (VALUE(CLI_O_TIMELINE, "--timeline")) {
        if (r < 0) return -1;
        c->timeline = v;
        return 1;
    }
    if (VALUE(CLI_O_HTML, "--html")) {
        if (r < 0) return -1;
        c->html = v;
        return 1;
    }
    if (VALUE(CLI_O_JOBS, "--jobs") || ((mask & CLI_O_JOBS) &&
                                        (r = cli_opt_value(cmd, "-j", argc, argv, i, &v)) != 0)) {
        if (r < 0) return -1;
        uint64_t n;
        if (cli_parse_u64(v, 0, &n) < 0 || n > 1024) {
            cli_error(cmd, "--jobs: expected a number from 0 to 1024, got '%s'", v);
            return -1;
        }
        if (n == 0) {
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            n = cpus > 0 ? (uint64_t)cpus : 1;
        }
        c->jobs = (int)n;
        return 1;
    }
    if (VALUE(CLI_O_JOBS, "--timeout")) {
        if (r < 0) return -1;
        uint64_t n;
        if (cli_parse_u64(v, 0, &n) < 0 || n > 86400) {
            cli_error(cmd, "--timeout: expected seconds from 0 to 86400, got '%s'", v);
            return -1;
        }
        c->timeout = (uint32_t)n;
        return 1;
    }
    if (VALUE(CLI_O_REPEAT, "--repeat")) {
        if (r < 0) return -1;
        uint64_t n;
        if (cli_parse_u64(v, 0, &n) < 0 || n < 1 || n > 1000000) {
            cli_error(cmd, "--repeat: expected a number from 1 to 1000000, got '%s'", v);
            return -1;
        }
        c->repeat = (uint32_t)n;
        return 1;
    }
    if ((mask & CLI_O_VERIFY) && strcmp(a, "--verify") == 0) {
        c->verify = 1;
        return 1;
    }
    if (VALUE(CLI_O_LIMITS, "--max-bytes")) {
        if (r < 0) return -1;
        if (cli_parse_u64(v, 1, &c->max_bytes) < 0) {
            cli_error(cmd, "--max-bytes: expected a size like 1048576, 64M or 1G, got '%s'", v);
            return -1;
        }
        return 1;
    }
    if (VALUE(CLI_O_LIMITS, "--max-statements")) {
        if (r < 0) return -1;
        if (cli_parse_u64(v, 0, &c->max_statements) < 0) {
            cli_error(cmd, "--max-statements: expected a number, got '%s'", v);
            return -1;
        }
        return 1;
    }
    if (VALUE(CLI_O_LIMITS, "--max-objects")) {
        if (r < 0) return -1;
        if (cli_parse_u64(v, 0, &c->max_objects) < 0) {
            cli_error(cmd, "--max-objects: expected a number, got '%s'", v);
            return -1;
        }
        return 1;
    }
#undef VALUE
    if (mask & CLI_O_OUTPUT_STYLE) {
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            c->quiet = 1;
            return 1;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            c->verbose = 1;
            return 1;
        }
        if (strcmp(a, "--no-color") == 0 || strcmp(a, "--no-colour") == 0) {
            c->no_color = 1;
            return 1;
        }
    }
    return 0;
}

int cli_color_wanted(int no_color, FILE *f)
{
    if (no_color)
        return 0;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return 0;
    const char *term = getenv("TERM");   /* a terminal that cannot do colour */
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return f && isatty(fileno(f));
}

#ifdef FAKEGC_CANARY
/* A block lost on purpose: the pointer is stored, then overwritten. */
static char *volatile canary_sink;

__attribute__((noinline)) void cli_canary_leak(const char *where)
{
    const char *want = getenv("FAKEGC_CANARY_LEAK");
    if (!want || strcmp(want, where) != 0)
        return;
    char *p = malloc(64);
    if (p)
        snprintf(p, 64, "canary leak in %s", where);
    canary_sink = p;
    canary_sink = NULL;
}
#endif

int cli_parse_order(const char *cmd, const char *v, int *reverse, int *defer, int *reuse, int *late)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "reverse") == 0)
            *reverse = 1;
        else if (strcmp(tok, "defer") == 0)
            *defer = 1;
        else if (strcmp(tok, "reuse") == 0)
            *reuse = 1;
        else if (strcmp(tok, "weakrefs-late") == 0)
            *late = 1;
        else if (strcmp(tok, "weakrefs-first") == 0)
            *late = 0;
        else if (strcmp(tok, "all") == 0)
            *reverse = *defer = *reuse = *late = 1;
        else if (strcmp(tok, "none") == 0)
            continue;
        else {
            cli_error(cmd, "--order: unknown knob '%s' (reverse, defer, reuse, "
                      "weakrefs-first, weakrefs-late, all)", tok);
            return -1;
        }
    }
    return 0;
}

void cli_progress(const cli_common *c, size_t done, size_t total, const char *file)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    if (!tty || c->quiet)
        return;
    if (done >= total)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[K[%zu/%zu] %.200s", done + 1, total, file);
    fflush(stderr);
}

/* ---- interruption ---- */

static volatile sig_atomic_t interrupted_by;

static void on_interrupt(int sig)
{
    interrupted_by = sig;
}

void cli_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;   /* a second signal kills */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

const volatile sig_atomic_t *cli_interrupt_flag(void)
{
    return &interrupted_by;
}

int cli_interrupted(void)
{
    return (int)interrupted_by;
}

const char *cli_interrupt_name(void)
{
    return interrupted_by == SIGINT ? "SIGINT" : interrupted_by == SIGTERM ? "SIGTERM" : NULL;
}

int cli_interrupt_exit(void)
{
    return 128 + (int)interrupted_by;
}

/* The output files a command was given, one row each. */
static const struct out_row {
    const char *opt;
    size_t path, file, out;   /* offsets in cli_common */
    int (*begin)(FILE *f);    /* written when opened, may be NULL */
    int (*end)(FILE *f);      /* written before the commit, may be NULL */
} out_rows[] = {
    {"--output", offsetof(cli_common, output), offsetof(cli_common, out),
     offsetof(cli_common, out_o), NULL, NULL},
    {"--dot", offsetof(cli_common, dot), offsetof(cli_common, dot_f),
     offsetof(cli_common, dot_o), hp_dot_begin, hp_dot_end},
    {"--timeline", offsetof(cli_common, timeline), offsetof(cli_common, timeline_f),
     offsetof(cli_common, timeline_o), NULL, NULL},
    {"--objects", offsetof(cli_common, objects), offsetof(cli_common, objects_f),
     offsetof(cli_common, objects_o), NULL, NULL},
    {"--html", offsetof(cli_common, html), offsetof(cli_common, html_f),
     offsetof(cli_common, html_o), NULL, NULL},
};
#define NOUT (sizeof out_rows / sizeof out_rows[0])
#define OUT_PATH(c, r) (*(const char **)((char *)(c) + (r)->path))
#define OUT_FILE(c, r) (*(FILE **)((char *)(c) + (r)->file))
#define OUT_O(c, r) ((rp_out *)((char *)(c) + (r)->out))

static void discard_outputs(cli_common *c)
{
    for (size_t i = 0; i < NOUT; i++) {
        const struct out_row *r = &out_rows[i];
        rp_out_abort(OUT_O(c, r));
        OUT_FILE(c, r) = r->file == offsetof(cli_common, out) ? stdout : NULL;
    }
}

static int open_outputs(cli_common *c, const char *cmd)
{
    char err[600];
    for (size_t i = 0; i < NOUT; i++) {
        const struct out_row *r = &out_rows[i];
        const char *path = OUT_PATH(c, r);
        if (!path)
            continue;
        for (size_t j = 0; j < i; j++)
            if (OUT_PATH(c, &out_rows[j]) && (strcmp(OUT_PATH(c, &out_rows[j]), path) == 0 ||
                                              rp_out_same_file(OUT_PATH(c, &out_rows[j]), path))) {
                cli_error(cmd, "%s and %s both name %s", out_rows[j].opt, r->opt, path);
                discard_outputs(c);
                return -1;
            }
        if (rp_out_open(OUT_O(c, r), path, err, sizeof err) < 0) {
            cli_error(cmd, "%s: cannot write %s", r->opt, err);
            discard_outputs(c);
            return -1;
        }
        OUT_FILE(c, r) = OUT_O(c, r)->f;
        if (r->begin && r->begin(OUT_FILE(c, r)) != 0) {
            cli_error(cmd, "%s: cannot write %s", r->opt, path);
            discard_outputs(c);
            return -1;
        }
    }
    return 0;
}

int cli_outputs_not_inputs(const cli_common *c, const char *cmd, char *const *inputs, size_t n)
{
    for (size_t i = 0; i < NOUT; i++) {
        const char *path = OUT_PATH(c, &out_rows[i]);
        for (size_t j = 0; path && j < n; j++)
            if (rp_out_same_file(path, inputs[j])) {
                cli_error(cmd, "%s %s is one of the inputs; refusing to overwrite it",
                          out_rows[i].opt, path);
                return -1;
            }
    }
    return 0;
}

int cli_outputs_commit(cli_common *c, const char *cmd)
{
    char err[600];
    int rc = 0;
    for (size_t i = 0; i < NOUT; i++) {
        const struct out_row *r = &out_rows[i];
        if (!OUT_O(c, r)->f)
            continue;
        if (r->end)
            r->end(OUT_O(c, r)->f);   /* a write error fails the commit */
        if (rp_out_commit(OUT_O(c, r), err, sizeof err) < 0) {
            cli_error(cmd, "%s: cannot write %s", r->opt, err);
            rc = -1;
        }
        OUT_FILE(c, r) = r->file == offsetof(cli_common, out) ? stdout : NULL;
    }
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(cmd, "cannot write the report to standard output: %s",
                  strerror(errno ? errno : EIO));
        clearerr(stdout);
        rc = -1;
    }
    return rc;
}

int cli_env_setup(cli_common *c, const char *cmd)
{
    char err[512];
    c->alloc = NULL;
    c->out = stdout;
    if (as_create(c->allocator, &c->alloc, err, sizeof err) != 0) {
        cli_error(cmd, "--allocator: %s", err);
        return -1;
    }
    al_install(c->alloc);
    if (fk_inject(c->inject ? c->inject : "", err, sizeof err) != 0 ||
        (c->design >= 0 && fk_inject_check(c->inject, (fk_design_id)c->design, err,
                                           sizeof err) != 0)) {
        cli_error(cmd, "--inject: %s", err);
        fk_inject("", err, sizeof err);
        al_install(NULL);
        al_destroy(c->alloc);
        c->alloc = NULL;
        return -1;
    }
    if (open_outputs(c, cmd) < 0) {
        fk_inject("", err, sizeof err);
        al_install(NULL);
        al_destroy(c->alloc);
        c->alloc = NULL;
        return -1;
    }
    c->color = c->format == RP_TEXT && cli_color_wanted(c->no_color, c->out);
    er_clear();
    return 0;
}

void cli_output_abort(cli_common *c)
{
    discard_outputs(c);
}

void cli_env_teardown(cli_common *c)
{
    char err[256];
    discard_outputs(c);
    fflush(stdout);
    fk_inject("", err, sizeof err);
    al_install(NULL);
    if (c->alloc)
        al_destroy(c->alloc);
    c->alloc = NULL;
}

int cli_write_reports(cli_common *c, const char *cmd, const rp_run *run, int main_report)
{
    rp_options ro = {c->color, c->verbose, c->quiet};
    int rc = 0;
    errno = 0;
    if (main_report && (rp_write(run, c->format, c->out, &ro) != 0 || fflush(c->out) != 0)) {
        cli_error(cmd, "cannot write the report to %s: %s",
                  c->output ? c->output : "standard output", strerror(errno ? errno : EIO));
        rc = -1;
    }
    for (int k = 0; k < 4; k++) {
        if (!c->also[k])
            continue;
        rp_out o;
        rp_options plain = {0, c->verbose, 0};
        char err[600];
        if (rp_out_open(&o, c->also[k], err, sizeof err) < 0) {
            cli_error(cmd, "cannot write %s", err);
            rc = -1;
            continue;
        }
        if (rp_write(run, (rp_format)k, o.f, &plain) != 0) {
            rp_out_abort(&o);
            cli_error(cmd, "cannot write %s", c->also[k]);
            rc = -1;
        } else if (rp_out_commit(&o, err, sizeof err) < 0) {
            cli_error(cmd, "cannot write %s", err);
            rc = -1;
        }
    }
    return rc;
}

const char *cli_suggest(const char *word, const void *names, size_t n, size_t stride)
{
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < n; i++) {
        const char *name = *(const char *const *)((const char *)names + i * stride);
        if (!name)
            continue;
        size_t d = sc_edit_distance(word, name, 2);
        if (d < bd) {
            bd = d;
            best = name;
        }
    }
    return best;
}

/* The option names a help text documents: every "--word" or "-x" that
 * starts a token (for did-you-mean); `def` when it is in the option column
 * of an option line ("  -q, --quiet   text": what a command accepts, for
 * abbreviations), `value` when that line gives it a value ("  --name VALUE
 * text"). */
enum { HELP_MAX = 256, HELP_NAME = 48 };
typedef struct help_opts {
    size_t n;
    char name[HELP_MAX][HELP_NAME];
    unsigned char value[HELP_MAX], def[HELP_MAX];
} help_opts;

/* Is p in the option column of its line: the line starts "  -" and no
 * two-space gap (the start of the description) comes before p? */
static int in_option_column(const char *text, const char *p)
{
    const char *l = p;
    while (l > text && l[-1] != '\n')
        l--;
    if (strncmp(l, "  -", 3) != 0)
        return 0;
    for (const char *q = l + 2; q + 1 < p; q++)
        if (q[0] == ' ' && q[1] == ' ')
            return 0;
    return 1;
}

static size_t opt_len(const char *p)
{
    size_t k = 0;
    while (p[k] && (p[k] == '-' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
                    (p[k] >= '0' && p[k] <= '9')) && k < HELP_NAME - 1)
        k++;
    return k;
}

static void help_add(help_opts *h, const char *p, size_t k, int def, int value)
{
    size_t i = 0;
    while (i < h->n && !(strncmp(h->name[i], p, k) == 0 && h->name[i][k] == '\0'))
        i++;
    if (i == HELP_MAX)
        return;
    if (i == h->n) {
        memcpy(h->name[i], p, k);
        h->name[i][k] = '\0';
        h->value[i] = h->def[i] = 0;
        h->n++;
    }
    h->def[i] |= (unsigned char)def;
    h->value[i] |= (unsigned char)(def && value);
}

static int help_options(void (*help)(FILE *), help_opts *h)
{
    h->n = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *m = help ? open_memstream(&text, &len) : NULL;
    if (!m)
        return -1;
    help(m);
    fclose(m);
    for (const char *p = text; p && *p; p++) {
        if (*p != '-' || (p > text && !strchr(" ,[(\n", p[-1])))
            continue;
        size_t k = opt_len(p);
        if (k >= 2 && p[1] != ' ' && p[k - 1] != '-')    /* not "--max-*" in prose */
            help_add(h, p, k, in_option_column(text, p),
                     p[k] == ' ' && p[k + 1] && p[k + 1] != ' ' && p[k + 1] != '-');
        p += k ? k - 1 : 0;
    }
    free(text);
    return 0;
}

void cli_unknown_option(const char *cmd, const char *opt, void (*help)(FILE *))
{
    static help_opts h;
    const char *best = NULL;
    if (help_options(help, &h) == 0) {
        const char *names[HELP_MAX];
        for (size_t i = 0; i < h.n; i++)
            names[i] = h.name[i];
        const char *eq = strchr(opt, '=');
        char bare[64];
        snprintf(bare, sizeof bare, "%.*s", eq ? (int)(eq - opt) : (int)strlen(opt), opt);
        best = cli_suggest(bare, names, h.n, sizeof names[0]);
    }
    if (best)
        cli_error(cmd, "unknown option '%s'; did you mean '%s'? (fakegc %s --help)", opt,
                  best, cmd);
    else
        cli_error(cmd, "unknown option '%s' (fakegc %s --help)", opt, cmd);
}

/* getopt_long's rule: a long option may be abbreviated to any prefix that
 * names one option only. argv words are rewritten in place (to static
 * storage) before the command parses them, so every command takes the
 * same abbreviations. */
int cli_expand_abbreviations(const char *cmd, int argc, char **argv, void (*help)(FILE *))
{
    static help_opts h;
    static char full[64][HELP_NAME + 256];
    size_t nfull = 0;
    if (help_options(help, &h) < 0)
        return 0;   /* no help text: nothing to expand against */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;                      /* operands from here */
        if (a[0] != '-' || a[1] != '-' || !a[2])
            continue;
        const char *eq = strchr(a, '=');
        size_t k = eq ? (size_t)(eq - a) : strlen(a);
        size_t hit = SIZE_MAX, nhit = 0, exact = SIZE_MAX;
        char list[512] = "";
        for (size_t j = 0; j < h.n; j++) {
            if (!h.def[j] || h.name[j][1] != '-' || strncmp(h.name[j], a, k) != 0)
                continue;
            if (h.name[j][k] == '\0') {
                exact = j;
                break;
            }
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", nhit ? ", " : "", h.name[j]);
            hit = j;
            nhit++;
        }
        if (exact == SIZE_MAX && nhit > 1) {
            cli_error(cmd, "ambiguous option '%.*s' could be %s (fakegc %s --help)", (int)k, a,
                      list, cmd);
            return -1;
        }
        size_t j = exact != SIZE_MAX ? exact : hit;
        if (j == SIZE_MAX)
            continue;                   /* unknown: the command suggests */
        if (exact == SIZE_MAX && nfull < sizeof full / sizeof full[0]) {
            snprintf(full[nfull], sizeof full[nfull], "%s%s", h.name[j], eq ? eq : "");
            argv[i] = full[nfull++];
        }
        if (h.value[j] && !eq)
            i++;                        /* its value, whatever it looks like */
    }
    return 0;
}

void cli_common_help(FILE *f, unsigned mask)
{
    if (mask & CLI_O_ALLOCATOR)
        fprintf(f, "  --allocator NAME     libc (default), jemalloc, tracking, guard, arena;\n"
                   "                       wrappers compose: tracking/jemalloc, fail:N/libc\n"
                   "                       (fakegc list allocators)\n");
    if (mask & CLI_O_INJECT)
        fprintf(f, "  --inject BUG[,BUG]   re-introduce known bugs (fakegc list bugs)\n");
    if (mask & CLI_O_COMPAT)
        fprintf(f, "  --compat DESIGN      the memo design (wins over config compat):\n"
                   "                       pytorch-1.13: PyTorch 1.13.1, two tensor memos,\n"
                   "                       periodic sweep every 128 (unless config or --sweep\n"
                   "                       say otherwise) and its _fix_weakref leak: a fake\n"
                   "                       memo hit makes the fake and its mode immortal;\n"
                   "                       pytorch-2.0: PyTorch 2.0-2.2, read from source (no\n"
                   "                       2.x runs here: scripts/xref cannot check it): one\n"
                   "                       tensor memo of weak fakes, one finalizer per entry,\n"
                   "                       fakes of views are views, periodic sweep;\n"
                   "                       without: fakegc's design (1.13's tables, eager,\n"
                   "                       no _fix_weakref leak)\n");
    if (mask & CLI_O_GC)
        fprintf(f, "  --gc MODE            manual, auto or stress (overrides config gc)\n");
    if (mask & CLI_O_SWEEP)
        fprintf(f, "  --sweep POLICY       eager or periodic (overrides config sweep)\n");
    if (mask & CLI_O_FORMAT)
        fprintf(f, "  --format FMT         text (default), json, junit, tap\n"
                   "  --examples K         examples kept per group of retained objects (default\n"
                   "                       3; text shows 1, -v all K)\n");
    if (mask & CLI_O_OUTPUT)
        fprintf(f, "  --output FILE        write the report there (default stdout), whole or\n"
                   "                       not at all (a temporary file renamed into place)\n");
    if (mask & CLI_O_ALSO)
        fprintf(f, "  --json FILE, --junit FILE, --tap FILE, --text FILE\n"
                   "                       also write the report in that format to FILE, in\n"
                   "                       the same run (e.g. --format json --junit ci.xml)\n");
    if (mask & CLI_O_DOT)
        fprintf(f, "  --dot FILE           Graphviz retention graph of what was retained: one\n"
                   "                       graph, a titled cluster per failing scenario\n"
                   "  --objects FILE       every object behind a failure or retained at\n"
                   "                       teardown, one JSON line each (fakegc-objects/1),\n"
                   "                       streamed: the report keeps groups and examples\n");
    if (mask & CLI_O_TIMELINE)
        fprintf(f, "  --timeline FILE.svg  live objects and bytes after each statement\n");
    if (mask & CLI_O_HTML)
        fprintf(f, "  --html FILE          one self-contained page to look at (summary, groups,\n"
                   "                       dominator tree, growth, timeline; a diff's page)\n");
    if (mask & CLI_O_JOBS)
        fprintf(f, "  --jobs N, -j N       N worker processes (0: one per CPU); a crash in\n"
                   "                       one is that scenario's error, the others go on\n"
                   "  --timeout S          with --jobs: a scenario running longer than S seconds\n"
                   "                       is that scenario's error (default 120, 0: none)\n");
    if (mask & CLI_O_REPEAT)
        fprintf(f, "  --repeat N           N rounds in one process; fail only on retention\n"
                   "                       that grows with the number of rounds\n");
    if (mask & CLI_O_VERIFY)
        fprintf(f, "  --verify             check heap and memo invariants after every statement\n");
    if (mask & CLI_O_LIMITS)
        fprintf(f, "  --max-bytes N        real tensor data bytes (default 1G; K/M/G suffixes)\n"
                   "  --max-statements N   statements executed per scenario (default 100000000)\n"
                   "  --max-objects N      live objects (default 10000000)\n"
                   "                       (--max-* 0: no limit)\n");
    if (mask & CLI_O_OUTPUT_STYLE)
        fprintf(f, "  -q, --quiet          quieter\n"
                   "  -v, --verbose        more detail\n"
                   "  --no-color           no ANSI colour (colour only on a terminal, never\n"
                   "                       with NO_COLOR set or TERM=dumb)\n");
}

/* ---- scenario files ---- */

static int files_push(cli_files *s, const char *str)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 32;
        char **nv = al_realloc(s->v, s->cap * sizeof *nv, nc * sizeof *nv, AL_K_SCENARIO,
                               "cli files");
        if (!nv)
            return -2;
        s->v = nv;
        s->cap = nc;
    }
    char *d = al_strdup(str, AL_K_SCENARIO, "cli file");
    if (!d)
        return -2;
    s->v[s->n++] = d;
    return 0;
}

void cli_files_free(cli_files *s)
{
    for (size_t i = 0; i < s->n; i++)
        al_free(s->v[i], strlen(s->v[i]) + 1, AL_K_SCENARIO);
    al_free(s->v, s->cap * sizeof *s->v, AL_K_SCENARIO);
    memset(s, 0, sizeof *s);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The (device, inode) pairs seen by one collection, so that a file reached
 * twice (a symlink, a folder linked into itself) is taken once and a folder
 * loop ends. Open addressing; grows at half full. */
typedef struct walk_seen {
    struct walk_key { dev_t dev; ino_t ino; } *k;
    size_t n, cap;
} walk_seen;

static size_t seen_hash(dev_t dev, ino_t ino, size_t cap)
{
    uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15u) ^ ((uint64_t)ino * 0xc2b2ae3d27d4eb4fu);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* 1 if (dev, ino) was seen before, 0 if it is new (now recorded), -2 OOM. */
static int seen_add(walk_seen *w, dev_t dev, ino_t ino)
{
    if (2 * (w->n + 1) > w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 256;
        struct walk_key *nk = al_calloc(nc, sizeof *nk, AL_K_SCENARIO, "cli walk seen");
        if (!nk)
            return -2;
        for (size_t i = 0; i < w->cap; i++)
            if (w->k[i].ino || w->k[i].dev) {
                size_t j = seen_hash(w->k[i].dev, w->k[i].ino, nc);
                while (nk[j].ino || nk[j].dev)
                    j = (j + 1) & (nc - 1);
                nk[j] = w->k[i];
            }
        al_free(w->k, w->cap * sizeof *w->k, AL_K_SCENARIO);
        w->k = nk;
        w->cap = nc;
    }
    size_t j = seen_hash(dev, ino, w->cap);
    for (; w->k[j].ino || w->k[j].dev; j = (j + 1) & (w->cap - 1))
        if (w->k[j].dev == dev && w->k[j].ino == ino)
            return 1;
    w->k[j].dev = dev;
    w->k[j].ino = ino;
    w->n++;
    return 0;
}

static int files_take(const char *cmd, const char *path, cli_files *out, walk_seen *seen,
                      int depth, int named);

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder dir, hidden ones left out. */
static int dir_names(const char *cmd, const char *dir, cli_files *names)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_error(cmd, "cannot read folder %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            rc = files_push(names, e->d_name);
    closedir(d);
    return rc;
}

static int files_walk(const char *cmd, const char *dir, cli_files *out, walk_seen *seen,
                      int depth)
{
    if (depth > 64)
        return 0;
    cli_files names = {0};
    int rc = dir_names(cmd, dir, &names);
    /* sorted, so that of two paths to one file the first in order is kept */
    if (names.n)
        qsort(names.v, names.n, sizeof *names.v, str_cmp);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        size_t n = strlen(dir) + strlen(names.v[i]) + 2;
        char *path = al_malloc(n, AL_K_SCENARIO, "cli walk");
        if (!path) {
            rc = -2;
            break;
        }
        snprintf(path, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", names.v[i]);
        rc = files_take(cmd, path, out, seen, depth + 1, 0);
        al_free(path, n, AL_K_SCENARIO);
    }
    cli_files_free(&names);
    return rc;
}

/* One path: a folder is walked (unless named `errors` below the top, or
 * already visited: a loop, warned about), a *.scn file (any file when named
 * on the command line) is taken once. */
static int files_take(const char *cmd, const char *path, cli_files *out, walk_seen *seen,
                      int depth, int named)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (!named)
            return 0;   /* a dangling link inside a folder */
        cli_error(cmd, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (S_ISDIR(st.st_mode)) {
        if (!named && strcmp(base, "errors") == 0)
            return 0;
        int again = seen_add(seen, st.st_dev, st.st_ino);
        if (again == 1)
            fprintf(stderr, "fakegc %s: warning: %s is a folder already visited "
                            "(a symlink loop?); skipped\n", cmd, path);
        return again ? (again < 0 ? -2 : 0) : files_walk(cmd, path, out, seen, depth);
    }
    if (!named && !(S_ISREG(st.st_mode) && ends_with(base, ".scn")))
        return 0;
    int again = seen_add(seen, st.st_dev, st.st_ino);
    return again ? (again < 0 ? -2 : 0) : files_push(out, path);
}

int cli_collect_scenarios(const char *cmd, char *const *paths, int npaths, cli_files *out)
{
    walk_seen seen = {0};
    int rc = 0;
    for (int i = 0; i < npaths && rc == 0; i++)
        rc = files_take(cmd, paths[i], out, &seen, 0, 1);
    al_free(seen.k, seen.cap * sizeof *seen.k, AL_K_SCENARIO);
    if (rc == -2)
        cli_error(cmd, "out of memory");
    if (rc < 0)
        return rc;
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, str_cmp);
    return 0;
}
