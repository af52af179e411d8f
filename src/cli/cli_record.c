/* cli_record.c - `fakegc record [OPTIONS] [--] PROGRAM.py [ARGS...]`: record
 * a real PyTorch program with scripts/record.py (run by the Python that has
 * torch), then judge the recording exactly as `fakegc run` would (the same
 * code, on the same file), so `fakegc run FILE.scn` later gives the same
 * verdict.
 *
 * The program's own stdout goes to stderr: stdout carries the report. The
 * program's failure (an exit status, a signal) is said on stderr and what
 * was recorded up to there is judged. */
#include "cli/cli.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap/hp_class.h"
#include "record/rec.h"
#include "scenario/sc.h"

#define RECORD_MASK                                                                      \
    (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_HTML |       \
     CLI_O_SCAN | CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_VERIFY |      \
     CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO)

#define RECORD_PYTHON "/usr/bin/python3"
#define MAX_PASS 64

typedef struct record_args {
    cli_common c;
    const char *keep, *python, *fail_on, *suppress, *max_events, *lang, *designs;
    int no_batch;
    unsigned timeout;
} record_args;

/* --fail-on: a comma list of leak classes, checked before anything runs
 * (its words complete in the shell: `fakegc list options record`) */
static int fail_on_parse(void *at, const char *v, char *err, size_t n)
{
    unsigned mask;
    if (hp_class_mask(v, &mask) < 0 || !mask) {
        snprintf(err, n, "expected leak classes separated by commas: "
                         "lost,accumulating,reachable,lingering");
        return -1;
    }
    *(const char **)at = v;
    return 0;
}

#define RSTR(n, s, a, f, h) \
    {n, s, OP_K_STR, 0, 0, 0, a, NULL, 0, 0, offsetof(record_args, f), NULL, h}
static const op_opt rows[] = {
    RSTR("--keep", 'o', "FILE.scn", keep,
         "keep the recording (default: a temporary file);\n"
         "`fakegc run FILE.scn` gives the same verdict"),
    RSTR("--python", 0, "PATH", python, "the Python with torch (default " RECORD_PYTHON ")"),
    OP_FN("--fail-on", 0, "CLASSES", "lost|accumulating|reachable|lingering", record_args,
          fail_on, fail_on_parse,
          "what fails: lost,accumulating,reachable,lingering\n"
          "(default lost,accumulating; written into the\nrecording's verdict())"),
    RSTR("--suppress", 0, "FILE", suppress,
         "suppression rules, one a line:\n  NAME: class=C kind=K site=GLOB holder=GLOB\n"
         "(any subset of the keys); what a rule matches is\n"
         "counted apart (\"suppressed: 3 fake tensors by rule\nNAME\") and does not fail"),
    RSTR("--max-events", 0, "N", max_events, "the recorder's (scripts/record.py --help)"),
    RSTR("--lang", 0, "1|2", lang,
         "the recorder's language version (default 2: set_()\nand stand-alone converters "
         "are said, not listed\nas what the recording cannot say)"),
    RSTR("--designs", 0, "all|D1,D2", designs,
         "replay under each memo design (what-if: the\n1.13.1 expectations are checked under "
         "pytorch-1.13\nonly) and print one row per design: peak and final\nmemo entries, "
         "pending storages, the verdict, what\nis left at the end by class; exit 1 when a "
         "design\nfails"),
    OP_FLAG("--no-batch", 0, record_args, no_batch, "no repeat blocks in the recording"),
    OP_UINT("--timeout", 0, "SECONDS", record_args, timeout, 1, 604800,
            "end the program after SECONDS (SIGTERM to its process\ngroup, SIGKILL "
            "10 s later) and judge what was\nrecorded up to there"),
    OP_END};

const op_cmd cli_record_cmd = {
    "record", "[OPTIONS] [--] PROGRAM.py [ARGS...]",
    "Run a PyTorch program under the recorder (record.py, with the Python that\n"
    "has torch 1.13.1 to 2.14), replay the recording in the model under the\n"
    "design of its torch (pytorch-1.13, or pytorch-2.3 for 2.x; --compat\n"
    "says otherwise) and print the verdict: what the program left behind at its\n"
    "end, in leak classes - lost (no root of the program reaches it: fails),\n"
    "accumulating (held by the program, growing with the rounds of the loop\n"
    "that made it: fails), still reachable (held by the program's variables,\n"
    "not growing: reported), lingering (an expired storage awaiting the\n"
    "periodic sweep: reported). Fidelity checks (the counters PyTorch showed)\n"
    "are reported apart: a mismatch there means the model is wrong.\n"
    "The program's stdout goes to stderr; stdout carries the report. Options\n"
    "of the program itself go after `--`: fakegc record -- prog.py --its-flag.",
    rows, RECORD_MASK,
    "Exit status:\n  0 clean; 1 a leak (or a fidelity mismatch); 2 usage; 3\n"
    "  internal error (the recorder failed, torch not importable, no recording).\n"
    "  A program that fails is reported with its exit status (its own, whatever\n"
    "  it is: 77 and 127 too), and what was recorded up to there is judged.\n"
    "  SIGINT (Ctrl-C) and SIGTERM are passed to the program's process group: a\n"
    "  SIGINT's KeyboardInterrupt ends the recording, which is judged, then\n"
    "  fakegc exits 130 (143 for SIGTERM); a second signal kills the group.\n\n"
    "Examples:\n"
    "  fakegc record -- train.py --epochs 2  the program's options after --\n"
    "  fakegc record -o train.scn -- train.py  keep the recording (fakegc run it later)\n"
    "  fakegc record --format github --sarif f.sarif --json f.json -- train.py  a CI step\n"
    "  fakegc record --fail-on lost,accumulating,reachable -- train.py  reachable fails too\n"
    "  fakegc diff main.json fakegc.json  two reports of one program: what now leaks",
    NULL, "record a PyTorch program and judge what it leaves behind"};

/* record.py: installed beside the binary (PREFIX/bin -> PREFIX/libexec/
 * fakegc), else the source tree this binary was built from. */
static void recorder_path(char *buf, size_t n)
{
    cli_where(FAKEGC_REL_LIBEXEC "/record.py", "scripts/record.py", buf, n);
}

typedef struct rec_args {
    const char *python, *keep, *fail_on, *designs;
    unsigned timeout;
    const char *rec[12];    /* recorder options with their values */
    size_t nrec;
    char *pass[MAX_PASS];   /* the run's options, as given */
    size_t npass;
    int compat_given;
    int prog;               /* argv index of PROGRAM */
} rec_args;

static int own_option(const char *s)
{
    static const char *const own[] = {"--keep", "-o", "--python", "--fail-on", "--suppress",
                                      "--max-events", "--lang", "--designs", "--timeout",
                                      NULL};
    for (size_t i = 0; own[i]; i++) {
        size_t n = strlen(own[i]);
        if (strncmp(s, own[i], n) == 0 && (s[n] == '\0' || s[n] == '='))
            return s[n] == '=' ? 1 : 2;   /* words it takes */
    }
    return 0;
}

/* Options by the rows (checked before anything runs); then, on a copy of
 * argv, where PROGRAM is and which words are the run's options. */
static int parse(rec_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    char **copy = calloc((size_t)argc + 1, sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    record_args ra = {0};
    char **ops;
    int nops;
    int r = cli_parse(&cli_record_cmd, &ra, argc, argv, &ops, &nops);
    if (r != OP_PARSE_OK) {
        free(copy);
        return r == OP_PARSE_DONE ? 1 : -1;
    }
    a->python = ra.python ? ra.python : RECORD_PYTHON;
    a->keep = ra.keep;
    a->fail_on = ra.fail_on;
    a->designs = ra.designs;
    a->timeout = ra.timeout;
    const char *recv[][2] = {{"--suppress", ra.suppress}, {"--max-events", ra.max_events},
                             {"--lang", ra.lang ? ra.lang : "2"}};
    for (size_t k = 0; k < 3; k++)
        if (recv[k][1]) {
            a->rec[a->nrec++] = recv[k][0];
            a->rec[a->nrec++] = recv[k][1];
        }
    if (ra.no_batch)
        a->rec[a->nrec++] = "--no-batch";
    int i = 1;
    for (; i < argc; i++) {
        const char *s = copy[i];
        if (strcmp(s, "--") == 0) {
            i++;
            break;
        }
        if (s[0] != '-' || !s[1])
            break;
        int w = own_option(s);
        if (w) {
            i += w - 1;
            continue;
        }
        if (strcmp(s, "--no-batch") == 0)
            continue;
        if (strncmp(s, "--compat", 8) == 0)
            a->compat_given = 1;
        if (a->npass + 8 >= MAX_PASS) {
            free(copy);
            cli_error("record", "too many options");
            return -1;
        }
        a->pass[a->npass++] = copy[i];
        /* a common option's value: the next word unless it was --opt=V or a flag
         * (the rows parsed it already, so this only has to find its end) */
        if (!strchr(s, '=') && i + 1 < argc && copy[i + 1][0] != '-' && s[1] == '-' &&
            nops > 0 && copy[i + 1] != ops[0])
            a->pass[a->npass++] = copy[++i];
    }
    memcpy(argv, copy, (size_t)argc * sizeof *copy);   /* cli_parse moved the operands */
    free(copy);
    a->prog = i;
    if (nops == 0 || a->prog >= argc) {
        cli_error("record", "no program given (fakegc record [OPTIONS] [--] PROGRAM.py "
                            "[ARGS...])");
        return -1;
    }
    for (size_t k = 0; k + 1 < a->nrec; k++)
        if (strcmp(a->rec[k], "--suppress") == 0 && cli_suppressions(a->rec[k + 1], NULL) < 0)
            return -1;   /* before the program runs */
    if (a->designs && sc_designs_table(NULL, NULL, a->designs, NULL, NULL, stderr) != 0)
        return -1;
    struct stat st;
    if (stat(argv[a->prog], &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error("record", "%s: no such program", argv[a->prog]);
        return -1;
    }
    return 0;
}

/* Judge the recording: `fakegc run` on it, with record's run options; its
 * text and page are on the program (and the recording, when kept), not on
 * a temporary .scn. */
/* The recording's first line names torch 1.x (the recorder writes
 * "(torch VERSION)" there). */
static int recorded_on_1_13(const char *scn)
{
    char line[1024];
    FILE *f = fopen(scn, "r");
    if (!f)
        return 1;
    int one = !fgets(line, sizeof line, f) || !strstr(line, "(torch ") ||
              strstr(line, "(torch 1.") != NULL;
    fclose(f);
    return one;
}

static int replay(const rec_args *a, const char *scn, const char *prog)
{
    char *rargv[MAX_PASS + 8], title[PATH_MAX * 2 + 16];
    snprintf(title, sizeof title, a->keep ? "%s (recording %s)" : "%s", prog, scn);
    int rn = 0;
    rargv[rn++] = (char *)"run";
    rargv[rn++] = (char *)"--subject";
    rargv[rn++] = title;
    rargv[rn++] = (char *)"--program";
    rargv[rn++] = (char *)prog;
    /* without --compat: a 2.x recording names its design (config compat);
     * a 1.13 one is replayed under pytorch-1.13 */
    if (!a->compat_given && recorded_on_1_13(scn)) {
        rargv[rn++] = (char *)"--compat";
        rargv[rn++] = (char *)"pytorch-1.13";
    }
    for (size_t k = 0; k < a->npass; k++)
        rargv[rn++] = a->pass[k];
    rargv[rn++] = (char *)"--";
    rargv[rn++] = (char *)scn;
    rargv[rn] = NULL;
    return cli_run(rn, rargv);
}

int cli_record(int argc, char **argv)
{
    rec_args a;
    int pr = parse(&a, argc, argv);
    if (pr != 0)
        return pr > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (access(a.python, X_OK) != 0) {
        cli_error("record", "%s: not an executable Python (--python)", a.python);
        return CLI_EXIT_USAGE;
    }
    char tmp[PATH_MAX] = "", py[PATH_MAX];
    if (!a.keep && rec_temp(tmp, sizeof tmp, ".scn", "fakegc record") != 0)
        return CLI_EXIT_INTERNAL;
    recorder_path(py, sizeof py);
    const char *opts[2 + sizeof a.rec / sizeof *a.rec];
    size_t nopts = 0;
    if (a.fail_on) {
        opts[nopts++] = "--fail-on";
        opts[nopts++] = a.fail_on;
    }
    for (size_t k = 0; k < a.nrec; k++)
        opts[nopts++] = a.rec[k];
    rec_job job = {a.python, py, a.keep ? a.keep : tmp, opts, nopts, argv + a.prog,
                   (size_t)(argc - a.prog), a.timeout};
    const char *scn = job.out;
    rec_result r;
    rec_run(&job, "fakegc record", &r);
    struct stat st;
    int have = stat(scn, &st) == 0 && st.st_size > 0;
    int internal = rec_tell(&r, &job, "fakegc record", &have);
    int rc = CLI_EXIT_INTERNAL;
    if (r.state == REC_USAGE && !have) {
        rc = CLI_EXIT_USAGE;   /* the recorder's usage error, printed by it */
    } else if (!have) {
        if (r.state != REC_NOT_RUN && r.state != REC_NO_TORCH)
            cli_error("record", "no recording was written");
    } else if (a.designs) {
        sc_options o;
        sc_options_default(&o);
        int dr = sc_designs_table(scn, argv[a.prog], a.designs, &o, stdout, stderr);
        rc = dr == 2 ? CLI_EXIT_USAGE : dr < 0 || internal ? CLI_EXIT_INTERNAL : dr;
    } else {
        rc = replay(&a, scn, argv[a.prog]);
        if (!tmp[0])
            fprintf(stderr, "fakegc record: recording kept in %s (fakegc run%s %s)\n", scn,
                    a.compat_given || !recorded_on_1_13(scn) ? "" : " --compat pytorch-1.13",
                    scn);
        if (internal && rc != CLI_EXIT_USAGE)
            rc = CLI_EXIT_INTERNAL;
    }
    if (r.interrupted && rc != CLI_EXIT_USAGE)
        rc = 128 + r.interrupted;   /* judged, and said interrupted as `run` says it */
    if (tmp[0])
        unlink(tmp);
    return rc;
}
