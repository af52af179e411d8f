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

void cli_repro_command(char *buf, size_t n, const op_cmd *cmd, int argc, char **argv,
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
        if (!only_operands && strcmp(a, "--") == 0) {
            only_operands = 1;
            continue;
        }
        if (only_operands || a[0] != '-' || !a[1]) {
            if (!drop_operands)
                vl_append_word(buf, n, &len, a);
            continue;
        }
        int next = op_takes_next(&cli_prog, cmd, a) && i + 1 < argc;
        if (vl_option_in(a, ALWAYS) || vl_option_in(a, drop)) {
            i += next;
            continue;
        }
        vl_append_word(buf, n, &len, a);
        if (next)
            vl_append_word(buf, n, &len, argv[++i]);
    }
    if (extra && *extra)
        snprintf(buf + len, n - len, " %s", extra);
}
