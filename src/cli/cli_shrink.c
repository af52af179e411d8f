/* cli_shrink.c - `fakegc shrink FILE.scn`: minimize a failing scenario while
 * it fails the same way (src/stress/st_shrink.c). */
#include "cli/cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/er.h"
#include "fake/fk.h"
#include "stress/st_minimize.h"
#include "stress/st_setup.h"

typedef struct shrink_args {
    cli_common c;
} shrink_args;

/* -o FILE: --output, written whole or not at all (the common row's own
 * field, so cli_env_setup opens it as any output) */
static const op_opt rows[] = {
    {"--output", 'o', OP_K_OUT, 0, 0, 0, "FILE", NULL, 0, 0, offsetof(shrink_args, c.output),
     NULL, "write the shrunk scenario there (default stdout),\nwhole or not at all"},
    OP_END};

const op_cmd cli_shrink_cmd = {
    "shrink", "[OPTIONS] FILE.scn",
    "Minimize a failing scenario: delta debugging over statements and blocks,\n"
    "then simpler arguments (sizes to 2 and 1, keyword arguments dropped),\n"
    "keeping the same failure: a failure of the same class (the same\n"
    "expectation shape, the same --verify message, the same kind of retained\n"
    "object at the end check, the same error, or the same crash). With --inject,\n"
    "every smaller candidate must also pass without the injected bugs, so the\n"
    "result shows the bug and nothing else. The result goes to --output or\n"
    "stdout; a summary to stderr.",
    rows,
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_OUTPUT |
        CLI_O_VERIFY | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE,
    "Exit status:\n  0 shrunk and written; 1 the input does not fail; 2 usage or\n"
    "  parse error; 3 internal error.\n\n"
    "Examples:\n"
    "  fakegc shrink big.scn > small.scn  the result on stdout\n"
    "  fakegc shrink -o small.scn kept.scn  a shrunk recording: the failure kept by its class\n"
    "  fakegc shrink --inject strong-memo -o small.scn big.scn  the bug and nothing else",
    NULL, "minimize a failing scenario", 0};

/* The runs' settings from the command line. */
static void shrink_env(const cli_common *c, st_env *e)
{
    st_env_default(e);
    e->sc = c->sc;
    e->inject = c->inject ? c->inject : "";
    st_env_prepare(e);
}

int cli_shrink(int argc, char **argv)
{
    shrink_args a;
    char **ops;
    int nops;
    int r = cli_parse(&cli_shrink_cmd, &a, argc, argv, &ops, &nops);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    if (nops != 1) {
        cli_error("shrink", "expected one scenario file, got %d (fakegc shrink --help)", nops);
        return CLI_EXIT_USAGE;
    }
    const char *file = ops[0];
    struct stat fst;
    if (stat(file, &fst) != 0) {
        cli_error("shrink", "cannot open %s: %s", file, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    if (S_ISDIR(fst.st_mode)) {   /* a folder: name it, not "read error" */
        cli_error("shrink", "%s is a folder: shrink takes one scenario file", file);
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&a.c, "shrink") < 0)
        return CLI_EXIT_USAGE;
    char *in[1] = {(char *)file};
    if (cli_outputs_not_inputs(&a.c, "shrink", in, 1) < 0) {
        cli_env_teardown(&a.c);
        return CLI_EXIT_USAGE;
    }
    st_env e;
    shrink_env(&a.c, &e);
    st_minimized m = {.who = "fakegc shrink", .color = rp_color_wanted(a.c.color_when, stderr),
                      .quiet = a.c.quiet};
    int exit_code = st_minimize_file(&e, file, a.c.out, &m);   /* its outcomes are ours */
    int done = exit_code == CLI_EXIT_OK;
    if (done && cli_outputs_commit(&a.c, "shrink") < 0)
        exit_code = CLI_EXIT_USAGE;
    if (done && !a.c.quiet)
        fprintf(stderr, "fakegc shrink: %zu -> %zu statements in %u runs%s%s\n", m.before,
                m.stats.after_statements, m.stats.runs, a.c.output ? ", written to " : "",
                a.c.output ? a.c.output : "");
    cli_env_teardown(&a.c);
    return exit_code;
}
