/* cli_shard.c - the shard split of run, oom and stress (cli_shard.h). */
#include "cli/cli_shard.h"

#include <string.h>
#include <unistd.h>

#include "alloc/al.h"

const char *cli_hostname(void)
{
    static char name[256];
    if (!name[0] && (gethostname(name, sizeof name - 1) != 0 || !name[0]))
        strcpy(name, "?");
    return name;
}

static int in_list(const char *a, const char *const *list, int *inline_value)
{
    for (; list && *list; list++) {
        size_t n = strlen(*list);
        if (strncmp(a, *list, n) == 0 && (a[n] == '\0' || a[n] == '=')) {
            *inline_value = a[n] == '=';
            return 1;
        }
    }
    return 0;
}

static void add(char *buf, size_t n, size_t *len, const char *word)
{
    /* quote words the shell would split or expand */
    int plain = *word != '\0';
    for (const char *p = word; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+%@",
                    *p))
            plain = 0;
    int w = snprintf(buf + *len, n - *len, plain ? " %s" : " '%s'", word);
    if (w > 0)
        *len = (size_t)w < n - *len ? *len + (size_t)w : n - 1;
}

void cli_repro_command(char *buf, size_t n, const cli_cmd *cmd, int argc, char **argv,
                       const char *const *drop, int drop_operands, const char *extra)
{
    static const char *const ALWAYS[] = {"--shard", "--format", "--output", NULL};
    size_t len = 0;
    buf[0] = '\0';
    int w = snprintf(buf, n, "fakegc %s", cmd->name);
    len = w > 0 && (size_t)w < n ? (size_t)w : 0;
    int only_operands = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int inl = 0;
        if (!only_operands && strcmp(a, "--") == 0) {
            only_operands = 1;
            continue;
        }
        if (only_operands || a[0] != '-' || !a[1]) {
            if (!drop_operands)
                add(buf, n, &len, a);
            continue;
        }
        int next = cli_opt_takes_next(cmd, a) && i + 1 < argc;
        if (in_list(a, ALWAYS, &inl) || in_list(a, drop, &inl)) {
            i += next;
            continue;
        }
        add(buf, n, &len, a);
        if (next)
            add(buf, n, &len, argv[++i]);
    }
    if (extra && *extra)
        snprintf(buf + len, n - len, " %s", extra);
}
