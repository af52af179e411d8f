/* cli_common.c - option parsing and environment set-up shared by the
 * subcommands. */
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
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
    c->format = RP_TEXT;
    c->jobs = 1;
    c->timeout = 600;
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
    if (a[n] != '\0')
        return 0;
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
        if (strcmp(v, "pytorch-1.13") != 0) {
            cli_error(cmd, "--compat: unknown value '%s' (expected pytorch-1.13)", v);
            return -1;
        }
        c->compat = v;
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
    if (VALUE(CLI_O_DOT, "--dot")) {
        if (r < 0) return -1;
        c->dot = v;
        return 1;
    }
    if (VALUE(CLI_O_TIMELINE, "--timeline")) {
        if (r < 0) return -1;
        c->timeline = v;
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
    return f && isatty(fileno(f));
}

int cli_env_setup(cli_common *c, const char *cmd)
{
    char err[512];
    c->alloc = NULL;
    c->out = stdout;
    if (al_create(c->allocator, &c->alloc, err, sizeof err) != 0) {
        cli_error(cmd, "--allocator: %s", err);
        return -1;
    }
    al_install(c->alloc);
    if (fk_inject(c->inject ? c->inject : "", err, sizeof err) != 0) {
        cli_error(cmd, "--inject: %s", err);
        fk_inject("", err, sizeof err);
        al_install(NULL);
        al_destroy(c->alloc);
        c->alloc = NULL;
        return -1;
    }
    if (c->output) {
        c->out = fopen(c->output, "w");
        if (!c->out) {
            cli_error(cmd, "--output: cannot write %s: %s", c->output, strerror(errno));
            fk_inject("", err, sizeof err);
            al_install(NULL);
            al_destroy(c->alloc);
            c->alloc = NULL;
            c->out = stdout;
            return -1;
        }
    }
    c->color = c->format == RP_TEXT && cli_color_wanted(c->no_color, c->out);
    er_clear();
    return 0;
}

void cli_env_teardown(cli_common *c)
{
    char err[256];
    if (c->out && c->out != stdout)
        fclose(c->out);
    else
        fflush(stdout);
    c->out = stdout;
    fk_inject("", err, sizeof err);
    al_install(NULL);
    if (c->alloc)
        al_destroy(c->alloc);
    c->alloc = NULL;
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
        fprintf(f, "  --compat pytorch-1.13  PyTorch 1.13 policies: periodic sweep every 128\n"
                   "                       unless a scenario's config or --sweep says otherwise\n");
    if (mask & CLI_O_GC)
        fprintf(f, "  --gc MODE            manual, auto or stress (overrides config gc)\n");
    if (mask & CLI_O_SWEEP)
        fprintf(f, "  --sweep POLICY       eager or periodic (overrides config sweep)\n");
    if (mask & CLI_O_FORMAT)
        fprintf(f, "  --format FMT         text (default), json, junit, tap\n"
                   "  --examples K         examples kept per group of retained objects (default\n"
                   "                       3; text shows 1, -v all K)\n");
    if (mask & CLI_O_OUTPUT)
        fprintf(f, "  --output FILE        write the report there (default stdout)\n");
    if (mask & CLI_O_DOT)
        fprintf(f, "  --dot FILE           Graphviz retention graph of what was retained\n");
    if (mask & CLI_O_TIMELINE)
        fprintf(f, "  --timeline FILE.svg  live objects and bytes after each statement\n");
    if (mask & CLI_O_JOBS)
        fprintf(f, "  --jobs N, -j N       N worker processes (0: one per CPU); a crash in\n"
                   "                       one is that scenario's error, the others go on\n"
                   "  --timeout S          with --jobs: a worker running longer than S seconds\n"
                   "                       is that scenario's error (default 600, 0: none)\n");
    if (mask & CLI_O_REPEAT)
        fprintf(f, "  --repeat N           N rounds in one process; fail only on retention\n"
                   "                       that grows with the number of rounds\n");
    if (mask & CLI_O_VERIFY)
        fprintf(f, "  --verify             check heap and memo invariants after every statement\n");
    if (mask & CLI_O_LIMITS)
        fprintf(f, "  --max-bytes N        real tensor data bytes (default 1G; K/M/G suffixes)\n"
                   "  --max-statements N   statements executed per scenario (default 100000000)\n"
                   "  --max-objects N      live objects (default 10000000)\n");
    if (mask & CLI_O_OUTPUT_STYLE)
        fprintf(f, "  -q, -v, --no-color   quieter, more detail, no ANSI colour (colour only\n"
                   "                       on a terminal and never with NO_COLOR set)\n");
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

static int files_walk(const char *cmd, const char *dir, cli_files *out, int depth)
{
    if (depth > 64)
        return 0;
    DIR *d = opendir(dir);
    if (!d) {
        cli_error(cmd, "cannot read folder %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = al_malloc(n, AL_K_SCENARIO, "cli walk");
        if (!path) {
            rc = -2;
            break;
        }
        snprintf(path, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
        struct stat st;
        if (stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (strcmp(e->d_name, "errors") != 0)
                    rc = files_walk(cmd, path, out, depth + 1);
            } else if (S_ISREG(st.st_mode) && ends_with(e->d_name, ".scn")) {
                rc = files_push(out, path);
            }
        }
        al_free(path, n, AL_K_SCENARIO);
    }
    closedir(d);
    return rc;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_collect_scenarios(const char *cmd, char *const *paths, int npaths, cli_files *out)
{
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            cli_error(cmd, "cannot open %s: %s", paths[i], strerror(errno));
            return -1;
        }
        int rc = S_ISDIR(st.st_mode) ? files_walk(cmd, paths[i], out, 0)
                                     : files_push(out, paths[i]);
        if (rc == -2)
            cli_error(cmd, "out of memory");
        if (rc < 0)
            return rc;
    }
    qsort(out->v, out->n, sizeof *out->v, str_cmp);
    return 0;
}
