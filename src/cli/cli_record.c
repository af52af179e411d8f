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

#include "fake/fk.h"
#include "heap/hp_class.h"
#include "record/rec.h"
#include "scenario/sc.h"

#define RECORD_MASK                                                                      \
    (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_HTML |       \
     CLI_O_SCAN | CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_VERIFY |      \
     CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO)

#define RECORD_PYTHON "/usr/bin/python3"

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
        snprintf(err, n, "expected leak classes separated by commas: " HP_CLASS_WORDS_CSV);
        return -1;
    }
    *(const char **)at = v;
    return 0;
}

/* --designs' help, made with the about (cli_record_help_make). */
static char designs_help[320];

#define RSTR(n, s, a, f, h) \
    {n, s, OP_K_STR, 0, 0, 0, a, NULL, 0, 0, offsetof(record_args, f), NULL, h}
static const op_opt rows[] = {
    RSTR("--keep", 'o', "FILE.scn", keep,
         "keep the recording (default: a temporary file);\n"
         "`fakegc run FILE.scn` gives the same verdict"),
    RSTR("--python", 0, "PATH", python, "the Python with torch (default " RECORD_PYTHON ")"),
    OP_FN("--fail-on", 0, "CLASSES", HP_CLASS_WORDS_BAR, record_args, fail_on, fail_on_parse,
          "what fails: " HP_CLASS_WORDS_CSV "\n"
          "(default: what verdict() fails on unless told;\n"
          "written into the recording's verdict())"),
    RSTR("--suppress", 0, "FILE", suppress,
         "suppression rules, one a line:\n  NAME: class=C kind=K site=GLOB holder=GLOB\n"
         "(any subset of the keys); what a rule matches is\n"
         "counted apart (\"suppressed: 3 fake tensors by rule\nNAME\") and does not fail"),
    RSTR("--max-events", 0, "N", max_events, "the recorder's (scripts/record.py --help)"),
    RSTR("--lang", 0, "1|2", lang,
         "the recorder's language version (default 2: set_()\nand stand-alone converters "
         "are said, not listed\nas what the recording cannot say)"),
    RSTR("--designs", 0, "all|D1,D2", designs, designs_help),
    OP_FLAG("--no-batch", 0, record_args, no_batch, "no repeat blocks in the recording"),
    OP_UINT("--timeout", 0, "SECONDS", record_args, timeout, 1, 604800,
            "end the program after SECONDS (SIGTERM to its process\ngroup, SIGKILL "
            "10 s later) and judge what was\nrecorded up to there"),
    OP_END};

/* record --help's about and --designs' help, made when the command starts:
 * the leak classes (their names, what each is and whether it fails by
 * default) from HP_CLASSES, wrapped; the designs a recording is judged
 * under from the design table; the rest as written. */
static char record_about[2048], record_tail[1280];

/* The tail: its CI example's format words from rp_formats. */
static void record_tail_make(void)
{
    const rp_format_row *f = rp_formats;
    snprintf(record_tail, sizeof record_tail,
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
             "  fakegc record --format %s %s f.%s %s f.%s -- train.py  a CI step\n"
             "  fakegc record --fail-on " HP_CLASS_WORDS_CSV " -- train.py  every class fails\n"
             "  fakegc diff main.%s fakegc.%s  two reports of one program: what now leaks",
             f[RP_GITHUB].name, f[RP_SARIF].option, f[RP_SARIF].name, f[RP_JSON].option,
             f[RP_JSON].name, f[RP_JSON].name, f[RP_JSON].name);
}

void cli_record_help_make(void)
{
    record_tail_make();
    const char *d113 = fk_design_get(FK_D_1_13)->name, *d20 = fk_design_get(FK_D_2_0)->name,
               *d23 = fk_design_get(FK_D_2_3)->name, *d214 = fk_design_get(FK_D_2_14)->name;
    snprintf(designs_help, sizeof designs_help,
             "replay under each memo design (what-if: the\n1.13.1 expectations are checked "
             "under %s\nonly) and print one row per design: peak and final\nmemo entries, "
             "pending storages, the verdict, what\nis left at the end by class; exit 1 when a "
             "design\nfails",
             d113);
    size_t k = (size_t)snprintf(
        record_about, sizeof record_about,
        "Run a PyTorch program under the recorder (record.py, with the Python that\n"
        "has torch 1.13.1 to 2.14), replay the recording in the model under the\n"
        "design of its torch (%s; %s for 2.0 to 2.2, %s\n"
        "for 2.3 to 2.13, %s from 2.14; --compat says otherwise) and\n"
        "print the verdict: what the program left behind at its end, in leak\n"
        "classes - ",
        d113, d20, d23, d214);
    for (int c = 0; c < HP_CL_COUNT && k < sizeof record_about; c++)
        k += (size_t)snprintf(record_about + k, sizeof record_about - k, "%s%s (%s: %s)",
                              c ? ", " : "", hp_class_name((hp_class)c), hp_class_about((hp_class)c),
                              HP_CLASS_FAIL_DEFAULT >> c & 1 ? "fails" : "reported");
    if (k < sizeof record_about)
        snprintf(record_about + k, sizeof record_about - k, "%s",
                 ". Fidelity checks (the counters PyTorch showed) are reported apart: a "
                 "mismatch there means the model is wrong.\n"
                 "The program's stdout goes to stderr; stdout carries the report. Options\n"
            "end at PROGRAM.py: what follows is the program's (fakegc record prog.py\n"
            "--its-flag), with or without `--`.\n"
            "Marks: fakegc.mark(\"step 3\") in the program (import fakegc) is\n"
            "recorded as mark(\"step 3\"); the verdict names, for each group, the\n"
            "last mark before its first member and before its last: \"made at\n"
            "prog.py:12 since mark 'step 3'\" (all made after it, none after a later\n"
            "mark), \"between marks 'step 1' and 'step 3'\" (its growth spans them),\n"
            "\"before mark 'step 1' and after it\"; --timeline and --html draw each\n"
            "mark as a labelled line.");
    cli_wrap(record_about, 75);
}

const op_cmd cli_record_cmd = {
    "record", "[OPTIONS] [--] PROGRAM.py [ARGS...]",
    record_about,
    rows, RECORD_MASK, record_tail,
    NULL, "record a PyTorch program and judge what it leaves behind", 1};

/* record.py: installed beside the binary (PREFIX/bin -> PREFIX/libexec/
 * fakegc), else the source tree this binary was built from. */
static void recorder_path(char *buf, size_t n)
{
    cli_where(FAKEGC_REL_LIBEXEC "/record.py", "scripts/record.py", buf, n);
}

/* The recorder's options with their values, from the rows: *n of them. */
static void recorder_options(const record_args *ra, const char **v, size_t *n)
{
    const char *kv[][2] = {{"--fail-on", ra->fail_on}, {"--suppress", ra->suppress},
                           {"--max-events", ra->max_events},
                           {"--lang", ra->lang ? ra->lang : "2"}};
    *n = 0;
    for (size_t k = 0; k < sizeof kv / sizeof *kv; k++)
        if (kv[k][1]) {
            v[(*n)++] = kv[k][0];
            v[(*n)++] = kv[k][1];
        }
    if (ra->no_batch)
        v[(*n)++] = "--no-batch";
}

/* The options by the rows, up to the program (the first operand: the rest
 * is the program's, as lua.c's collectargs ends at the script), checked
 * before anything runs. 0 (the program and its arguments at *prog, *nprog
 * of them), 1 after --help, -1 a usage error (said). */
static int parse(record_args *ra, int argc, char **argv, char ***prog, int *nprog)
{
    int r = cli_parse(&cli_record_cmd, ra, argc, argv, prog, nprog);
    if (r != OP_PARSE_OK)
        return r == OP_PARSE_DONE ? 1 : -1;
    if (*nprog == 0) {
        cli_error("record", "no program given (fakegc record [OPTIONS] [--] PROGRAM.py "
                            "[ARGS...])");
        return -1;
    }
    if (ra->suppress && cli_suppressions(ra->suppress, NULL) < 0)
        return -1;   /* before the program runs */
    if (ra->designs && sc_designs_table(NULL, NULL, ra->designs, NULL, NULL, stderr) != 0)
        return -1;
    struct stat st;
    if (stat((*prog)[0], &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error("record", "%s: no such program", (*prog)[0]);
        return -1;
    }
    return 0;
}

/* The recording was made on 1.13.1 (sc_recorded_design: its config compat
 * names no other design), or does not parse (`run` says why). */
static int recorded_on_1_13(const char *scn)
{
    sc_program *p = sc_parse_file(scn, NULL, 0, NULL);
    int d = p ? sc_recorded_design(p) : -1;
    if (p)
        sc_program_free(p);
    return d < 0 || d == FK_D_1_13;
}

/* Judge the recording: `run`'s engine on it, with record's options; its
 * text and page are on the program (and the recording, when kept), not on
 * a temporary .scn. Without --compat a 1.13.1 recording is judged under
 * pytorch-1.13 (as if --compat said it: the report names it, and *hint
 * says so); a 2.x one names its design in its config compat. */
static int judge(record_args *ra, const char *scn, const char *prog, int *hint)
{
    cli_common *c = &ra->c;
    char title[PATH_MAX * 2 + 16];
    snprintf(title, sizeof title, ra->keep ? "%s (recording %s)" : "%s", prog, scn);
    c->subject = title;
    c->program = prog;
    *hint = c->sc.design < 0 && recorded_on_1_13(scn);   /* `fakegc run` needs it too */
    if (*hint) {
        c->compat = fk_design_get(FK_D_1_13)->name;
        c->sc.design = FK_D_1_13;
    }
    char *paths[] = {(char *)scn};
    return cli_run_files(c, NULL, paths, 1, NULL);
}

int cli_record(int argc, char **argv)
{
    record_args a = {0};   /* cli_parse initialises its cli_common only */
    char **prog;
    int nprog;
    int pr = parse(&a, argc, argv, &prog, &nprog);
    if (pr != 0)
        return pr > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    const char *python = a.python ? a.python : RECORD_PYTHON;
    if (access(python, X_OK) != 0) {
        cli_error("record", "%s: not an executable Python (--python)", python);
        return CLI_EXIT_USAGE;
    }
    char tmp[PATH_MAX] = "", py[PATH_MAX];
    if (!a.keep && rec_temp(tmp, sizeof tmp, ".scn", "fakegc record") != 0)
        return CLI_EXIT_INTERNAL;
    recorder_path(py, sizeof py);
    const char *opts[12];
    size_t nopts;
    recorder_options(&a, opts, &nopts);
    rec_job job = {python, py, a.keep ? a.keep : tmp, opts, nopts, prog, (size_t)nprog,
                   a.timeout};
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
        int dr = sc_designs_table(scn, prog[0], a.designs, &a.c.sc, stdout, stderr);
        rc = dr == 2 ? CLI_EXIT_USAGE : dr < 0 || internal ? CLI_EXIT_INTERNAL : dr;
    } else {
        int hint;
        rc = judge(&a, scn, prog[0], &hint);
        if (!tmp[0])
            fprintf(stderr, "fakegc record: recording kept in %s (fakegc run%s%s %s)\n", scn,
                    hint ? " --compat " : "", hint ? fk_design_get(FK_D_1_13)->name : "", scn);
        if (internal && rc != CLI_EXIT_USAGE)
            rc = CLI_EXIT_INTERNAL;
    }
    if (r.interrupted && rc != CLI_EXIT_USAGE)
        rc = 128 + r.interrupted;   /* judged, and said interrupted as `run` says it */
    if (tmp[0])
        unlink(tmp);
    return rc;
}
