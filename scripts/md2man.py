#!/usr/bin/env python3
"""md2man.py IN.md OUT.5 NAME SECTION "one-line description"

A roff man page from a Markdown reference (headings, paragraphs, lists,
fenced code, tables, inline `code`/**bold**/_emphasis_), for the pages
fakegc-scenario(5), fakegc-report(5) and fakegc-semantics(7). Only the
Markdown our references use; no external converter is needed at build
time (Debian has no pandoc in this project's package list)."""
import re
import sys


def esc(t):
    t = t.replace("\\", "\\e")
    t = re.sub(r"^([.'])", r"\\&\1", t)
    t = t.replace("-", "\\-")
    # groff reads bytes: any other character as its Unicode escape
    return re.sub(r"[^\x00-\x7f]", lambda m: "\\[u%04X]" % ord(m.group()), t)


def inline(t):
    t = esc(t)
    t = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", t)
    t = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", t)
    t = re.sub(r"(?<![\w\\])_([^_]+)_(?!\w)", r"\\fI\1\\fR", t)
    t = re.sub(r"\[([^]]+)\]\(([^)]+)\)", r"\1 (\2)", t)
    return t


def convert(lines, name, section, desc):
    # .ad l: ragged right, so a long source path or URL cannot leave a line
    # that groff "cannot adjust" (a warning the install test counts)
    out = [f'.TH {name.upper()} {section} "" "fakegc" "fakegc manual"', ".ad l",
           ".SH NAME", f"{esc(name)} \\- {esc(desc)}"]
    code = False
    table = []

    def flush_table():
        if not table:
            return
        rows = [[c.strip() for c in r.strip().strip("|").split("|")] for r in table
                if not re.fullmatch(r"\|?[\s:|-]+\|?", r.strip())]
        # a table as a tagged list: the first column as the tag, the others
        # after it (tbl cannot wrap wide cells in a terminal's width)
        head = rows[0]
        for r in rows[1:]:
            out.append(".TP 4")
            out.append(inline(r[0]) or "\\&")
            rest = [f"{inline(h)}: {inline(c)}" if h and len(r) > 2 else inline(c)
                    for h, c in zip(head[1:], r[1:]) if c]
            out.append("\n.br\n".join(rest) or "\\&")
        table.clear()

    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("```"):
            flush_table()
            out.append(".PP\n.nf\n.RS 4" if not code else ".RE\n.fi")
            code = not code
            continue
        if code:
            out.append(esc(line) if line else "")
            continue
        if line.startswith("|"):
            table.append(line)
            continue
        flush_table()
        m = re.match(r"^(#+)\s+(.*)", line)
        if m:
            level = len(m.group(1))
            if level == 1:
                continue
            out.append((".SH " if level == 2 else ".SS ") + inline(m.group(2)).upper()
                       if level == 2 else ".SS " + inline(m.group(2)))
            continue
        if not line.strip():
            out.append(".PP")
            continue
        m = re.match(r"^(\s*)([-*]|\d+\.)\s+(.*)", line)
        if m:
            out.append(".IP \\(bu 2" if m.group(2) in "-*" else f".IP {m.group(2)} 4")
            out.append(inline(m.group(3)))
            continue
        out.append(inline(line.strip()))
    flush_table()
    # collapse repeated paragraph marks
    text, prev = [], None
    for l in out:
        if l == ".PP" and prev in (".PP", None) or (l == ".PP" and prev and prev.startswith((".SH", ".SS"))):
            continue
        text.append(l)
        prev = l
    return "\n".join(text) + "\n"


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst, name, section, desc = argv
    with open(src, encoding="utf-8") as f:
        page = convert(f.readlines(), name, section, desc)
    with open(dst + ".tmp", "w", encoding="utf-8") as f:
        f.write(page)
    import os
    os.replace(dst + ".tmp", dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
