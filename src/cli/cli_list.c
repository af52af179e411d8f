/* cli_list.c - `fakegc list bugs|allocators|benches`. */
#include "cli/cli.h"

#include <string.h>

#include "fake/fk.h"

/* The bench command may publish its names; weak so `list` builds alone. */
const char *const *cli_bench_names(size_t *n);
#pragma weak cli_bench_names

static void help(FILE *f)
{
    fprintf(f, "usage: fakegc list (bugs|allocators|benches)\n\n"
               "  bugs        what --inject can re-introduce\n"
               "  allocators  what --allocator accepts\n"
               "  benches     what `fakegc bench` measures\n");
}

int cli_list(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help(stdout);
        return CLI_EXIT_OK;
    }
    if (argc != 2) {
        help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *what = argv[1];
    if (strcmp(what, "bugs") == 0) {
        size_t n = 0;
        const fk_bug_info *b = fk_bug_list(&n);
        for (size_t i = 0; i < n; i++)
            printf("%-27s %s\n", b[i].name, b[i].what ? b[i].what : "");
        return CLI_EXIT_OK;
    }
    if (strcmp(what, "allocators") == 0) {
        const char *names = as_names();
        for (const char *p = names; *p;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            while (len && *p == ' ') {
                p++;
                len--;
            }
            if (len)
                printf("%.*s\n", (int)len, p);
            p += len;
            if (*p == ',')
                p++;
        }
        return CLI_EXIT_OK;
    }
    if (strcmp(what, "benches") == 0) {
        if (cli_bench_names) {
            size_t n = 0;
            const char *const *names = cli_bench_names(&n);
            for (size_t i = 0; i < n; i++)
                printf("%s\n", names[i]);
        }
        return CLI_EXIT_OK;
    }
    cli_error("list", "unknown list '%s' (expected bugs, allocators or benches)", what);
    return CLI_EXIT_USAGE;
}
