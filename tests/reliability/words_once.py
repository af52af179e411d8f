#!/usr/bin/env python3
"""words_once.py SRC DESIGNS FORMATS CLASSES NAMES - each word list spelled once in C.

The string literals of every .c and .h under SRC (comments skipped) may
spell a design name, a report format as a command-line word, a leak class
or a list of categories only inside that list's own table:

  designs     fk_design.c's `designs[]`       any pytorch-N.M
  formats     rp.c's `rp_formats[]`           --NAME, --format NAME, a|b list,
                                              a name (not text) as a whole
                                              literal
  classes     hp_class.h's HP_CLASSES         a class word or name as a whole
                                              literal, a list, a "fakegc/..."
                                              rule id
  categories  fk_cat.c's `cat_rows[]`         a list of two category words

DESIGNS, FORMATS, CLASSES and NAMES are the words as the binary says them
(`list designs`, `run --format`'s, `record --fail-on`'s and the class names
of record's about), comma-separated.
Prints each literal found outside its table as FILE:LINE: LIST: "literal"
and exits 1; 0 when there is none.
"""
import os
import re
import sys

# (file, start of the table, where it ends): the one place a list is spelled
TABLES = {
    "designs": ("fake/fk_design.c", "static const fk_design designs[", "};"),
    "formats": ("report/rp.c", "const rp_format_row rp_formats[", "};"),
    "classes": ("heap/hp_class.h", "#define HP_CLASSES(", None),   # to the macro's end
    "categories": ("fake/fk_cat.c", "cat_rows[FK_CAT_COUNT] = {", "};"),
}

# Other lists that share a word, each spelled once in its own table.
ELSEWHERE = {
    # diff's and bench's own formats (their writers), listed once as
    # CLI_COMPARE_FORMATS in cli/cli.h, named by the texts that speak of them
    ("formats", "cli/cli.h"), ("formats", "cli/cli_bench.c"), ("formats", "cli/cli_diff.c"),
    ("formats", "report/rp_diff.c"),
    # the holder classes (hp_hold.c, and the report's phrase of HP_HOLD_LOST)
    # and the reasons (hp_path.c) have a "lost" and a "reachable" of their own
    ("classes", "heap/hp_hold.c"), ("classes", "heap/hp_path.c"), ("classes", "report/rp.c"),
}


def literals(text):
    """(line, literal) of every string literal; comments and chars skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c == "'":
            m = re.match(r"'(\\.|[^'\\])*'", text[i:])
            i += len(m.group(0)) if m else 1
        elif c == '"':
            m = re.match(r'"(\\.|[^"\\\n])*"', text[i:])
            t = m.group(0) if m else '"'
            out.append((line, t[1:-1]))
            i += len(t)
        else:
            i += 1
    return out


def table_lines(text, start, end):
    """The lines (1-based) of the table that starts at `start`."""
    lines = text.split("\n")
    for k, l in enumerate(lines):
        if start in l:
            for j in range(k, len(lines)):
                if (end is None and not lines[j].rstrip().endswith("\\")) or \
                        (end is not None and lines[j].startswith(end)):
                    return set(range(k + 1, j + 2))
    return set()


def listed(lit, words):
    """lit holds two or more of words joined by | or , (a spelled list)."""
    alt = "|".join(re.escape(w) for w in words)
    return re.search(r"\b(%s)\s*[|,]\s*(%s)\b" % (alt, alt), lit) is not None


def checks(designs, formats, classes, names, categories):
    falt = "|".join(re.escape(f) for f in formats)
    return {
        "designs": lambda lit: re.search(r"pytorch-\d+\.\d+", lit) or
        any(re.search(r"(^|[^\w.-])%s($|[^\w.])" % re.escape(d), lit) for d in designs),
        # a name as a whole literal, but "text": also a key of JSON and SARIF
        "formats": lambda lit: (lit in formats and lit != "text") or
        re.search(r"(^|[^\w-])--(%s)\b(?!-)" % falt, lit) or
        re.search(r"--format[ =](%s)\b" % falt, lit) or listed(lit, formats),
        "classes": lambda lit: lit in classes or lit in names or listed(lit, classes) or
        re.search(r"fakegc/(%s)\b" % "|".join(re.escape(n.replace(" ", "-")) for n in names),
                  lit),
        "categories": lambda lit: listed(lit, categories),
    }


def main():
    src = sys.argv[1]
    designs, formats, classes, names = (a.split(",") for a in sys.argv[2:6])
    categories = ["fake", "meta", "mode", "converter", "finalizer", "storage", "memo"]
    tests = checks(designs, formats, classes, names, categories)
    bad = 0
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            text = open(path, encoding="utf-8", errors="replace").read()
            lits = literals(text)
            for what, (tfile, start, end) in TABLES.items():
                if (what, rel) in ELSEWHERE:
                    continue
                own = table_lines(text, start, end) if rel == tfile else set()
                for line, lit in lits:
                    if line not in own and tests[what](lit):
                        print('%s:%d: %s: "%s"' % (os.path.join(src, rel), line, what, lit))
                        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
