/* sc_supp.c - suppression rules files (sc_supp.h). */
#include "scenario/sc_supp.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/al.h"
#include "fake/fk_cat.h"
#include "heap/hp_class.h"

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* The whole file, NUL-terminated, within SC_SUPP_MAX_BYTES. A FIFO or a
 * device is read as a stream (so /dev/zero ends at the limit, or at its
 * first NUL: the caller's check). */
static int slurp(sc_supp *s, const char *path, char *err, size_t errn)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errn, "%s: cannot open it: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return fail(err, errn, "%s: is a folder", path);
    }
    s->text_size = SC_SUPP_MAX_BYTES + 2;
    s->text = al_malloc(s->text_size, AL_K_SCENARIO, "suppressions");
    if (!s->text) {
        close(fd);
        return fail(err, errn, "out of memory reading %s", path);
    }
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, s->text + len, SC_SUPP_MAX_BYTES + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return fail(err, errn, "%s: cannot read it: %s", path, strerror(e));
        }
        len += (size_t)r;
        if (r == 0 || len > SC_SUPP_MAX_BYTES || memchr(s->text + len - (size_t)r, '\0', (size_t)r))
            break;
    }
    close(fd);
    s->text[len] = '\0';
    char *fit = al_realloc(s->text, s->text_size, len + 1, AL_K_SCENARIO, "suppressions");
    if (fit) {   /* else the larger block stays */
        s->text = fit;
        s->text_size = len + 1;
    }
    char *nul = memchr(s->text, '\0', len);
    if (nul || len > SC_SUPP_MAX_BYTES) {
        char *at = nul ? nul : s->text + SC_SUPP_MAX_BYTES;
        unsigned line = 1;
        for (const char *p = s->text; p < at; p++)
            line += *p == '\n';
        return nul ? fail(err, errn, "%s:%u: error: a NUL byte: not a rules file (text, one "
                                     "rule a line)", path, line)
                   : fail(err, errn, "%s:%u: error: larger than %d bytes: not a rules file",
                          path, line, SC_SUPP_MAX_BYTES);
    }
    return 0;
}

static int rule_key(sc_supp_rule *r, char *k, char *v, const char *where, char *err, size_t n)
{
    if (strcmp(k, "class") == 0) {
        hp_class c;
        char words[96];
        hp_class_words(words, sizeof words);
        if (hp_class_from_word(v, &c) < 0)
            return fail(err, n, "%s: class \"%s\": one of %s", where, v, words);
        r->cls = (int)c;
    } else if (strcmp(k, "kind") == 0) {
        fk_category c;
        char words[128];
        fk_category_words(words, sizeof words);
        if (fk_category_from_word(v, &c) < 0)
            return fail(err, n, "%s: kind \"%s\": one of %s", where, v, words);
        r->cat = (int)c;
    } else if (strcmp(k, "site") == 0 || strcmp(k, "holder") == 0) {
        if (!*v)
            return fail(err, n, "%s: %s= needs a glob", where, k);
        *(k[0] == 's' ? &r->site : &r->holder) = v;
    } else {
        return fail(err, n, "%s: unknown key \"%s\" (class, kind, site, holder)", where, k);
    }
    return 0;
}

/* One rule line (comment cut, not blank), cut in place. */
static int rule_line(sc_supp_rule *r, char *s, const char *where, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->cls = r->cat = -1;
    char *colon = strchr(s, ':');
    if (!colon)
        return fail(err, n, "%s: a rule is `NAME: key=value ...`", where);
    *colon = '\0';
    s += strspn(s, " \t");
    size_t nl = strcspn(s, " \t\r");
    if (!nl)
        return fail(err, n, "%s: a rule needs a name", where);
    if (s[nl + strspn(s + nl, " \t\r")])
        return fail(err, n, "%s: a rule's name is one word (\"%s\")", where, s);
    s[nl] = '\0';
    r->name = s;
    char *save = NULL;
    for (char *t = strtok_r(colon + 1, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            return fail(err, n, "%s: \"%s\" is not key=value", where, t);
        *eq = '\0';
        if (rule_key(r, t, eq + 1, where, err, n) < 0)
            return -1;
    }
    return 0;
}

static int add_rule(sc_supp *s, const char *path)
{
    (void)path;
    if (s->n < s->cap)
        return 0;
    size_t cap = s->cap ? 2 * s->cap : 16;
    sc_supp_rule *v = al_realloc(s->rules, s->cap * sizeof *v, cap * sizeof *v, AL_K_SCENARIO,
                                 "suppression rules");
    if (!v)
        return -1;
    s->rules = v;
    s->cap = cap;
    return 0;
}

static int parse(sc_supp *s, const char *path, char *err, size_t errn)
{
    unsigned line = 0;
    for (char *p = s->text, *next; *p; p = next) {
        line++;
        char *end = strchr(p, '\n');
        next = end ? end + 1 : p + strlen(p);
        if (end)
            *end = '\0';
        char where[400];
        snprintf(where, sizeof where, "%s:%u: error", path, line);
        if (strlen(p) > SC_SUPP_MAX_LINE)
            return fail(err, errn, "%s: a line longer than %d bytes", where, SC_SUPP_MAX_LINE);
        char *hash = strchr(p, '#');
        if (hash)
            *hash = '\0';
        if (!p[strspn(p, " \t\r")])
            continue;
        if (add_rule(s, path) < 0)
            return fail(err, errn, "out of memory reading %s", path);
        if (rule_line(&s->rules[s->n], p, where, err, errn) < 0)
            return -1;
        s->n++;
    }
    return 0;
}

int sc_supp_read(sc_supp *s, const char *path, char *err, size_t errn)
{
    memset(s, 0, sizeof *s);
    if (slurp(s, path, err, errn) < 0 || parse(s, path, err, errn) < 0) {
        sc_supp_free(s);
        return -1;
    }
    return 0;
}

long sc_supp_match(const sc_supp *s, int cls, int cat, const char *site, const char *holder)
{
    for (size_t i = 0; s && i < s->n; i++) {
        const sc_supp_rule *r = &s->rules[i];
        if ((r->cls < 0 || r->cls == cls) && (r->cat < 0 || r->cat == cat) &&
            (!r->site || fnmatch(r->site, site, 0) == 0) &&
            (!r->holder || fnmatch(r->holder, holder, 0) == 0))
            return (long)i;
    }
    return -1;
}

void sc_supp_free(sc_supp *s)
{
    al_free(s->rules, s->cap * sizeof *s->rules, AL_K_SCENARIO);
    al_free(s->text, s->text_size, AL_K_SCENARIO);
    memset(s, 0, sizeof *s);
}

int sc_supp_path(const char *file, const char *name, size_t n, char *buf, size_t bn)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    int w;
    if (n && name[0] != '/' && slash)   /* beside the scenario */
        w = snprintf(buf, bn, "%.*s/%.*s", (int)(slash - file), file, (int)n, name);
    else
        w = snprintf(buf, bn, "%.*s", (int)n, name);
    return w < 0 || (size_t)w >= bn ? -1 : 0;
}

const sc_supp *sc_supp_files_find(const sc_supp_file *list, const char *path)
{
    for (; list; list = list->next)
        if (strcmp(list->path, path) == 0)
            return &list->rules;
    return NULL;
}

const sc_supp *sc_supp_files_add(sc_supp_file **list, const char *path, char *err, size_t n)
{
    const sc_supp *had = sc_supp_files_find(*list, path);
    if (had)
        return had;
    sc_supp_file *f = al_calloc(1, sizeof *f, AL_K_SCENARIO, "suppression files");
    if (f && !(f->path = al_strdup(path, AL_K_SCENARIO, "suppression files"))) {
        al_free(f, sizeof *f, AL_K_SCENARIO);
        f = NULL;
    }
    if (!f) {
        fail(err, n, "out of memory reading %s", path);
        return NULL;
    }
    if (sc_supp_read(&f->rules, path, err, n) < 0) {
        al_free(f->path, strlen(f->path) + 1, AL_K_SCENARIO);
        al_free(f, sizeof *f, AL_K_SCENARIO);
        return NULL;
    }
    f->next = *list;
    *list = f;
    return &f->rules;
}

void sc_supp_files_free(sc_supp_file *list)
{
    while (list) {
        sc_supp_file *next = list->next;
        sc_supp_free(&list->rules);
        al_free(list->path, strlen(list->path) + 1, AL_K_SCENARIO);
        al_free(list, sizeof *list, AL_K_SCENARIO);
        list = next;
    }
}
