#!/usr/bin/env python3
"""scn2man.py - the scenario language reference (scenarios/README.md) as a
man page, fakegc-scenario(5).

usage: scn2man.py README.md OUT.5 [VERSION]

Handles the Markdown the reference uses: headings, paragraphs, bullet
lists, fenced code, pipe tables (each row becomes a tagged paragraph:
the first cell is the tag), `code` and **bold**.
"""
import re
import sys


def esc(text):
    text = text.replace("\\", "\\e")
    text = re.sub(r"^([.'])", r"\\&\1", text)
    return text


def inline(text):
    text = esc(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    return text


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def convert(md, version):
    out = ['.TH FAKEGC-SCENARIO 5 "" "fakegc %s" "fakegc manual"' % version,
           ".SH NAME", "fakegc-scenario \\- the scenario language (.scn) of fakegc"]
    lines = md.splitlines()
    i = 0
    header = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            out.append(".PP\n.nf\n.RS 4")
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(esc(lines[i]))
                i += 1
            out.append(".RE\n.fi")
        elif line.startswith("# "):
            out.append(".SH DESCRIPTION")
        elif line.startswith("## "):
            out.append(".SH " + inline(line[3:]).upper())
        elif line.startswith("### "):
            out.append(".SS " + inline(line[4:]))
        elif line.startswith("|"):
            row = cells(line)
            if header is None:
                header = row
            elif not all(re.fullmatch(r":?-+:?", c) for c in row):
                out.append(".TP\n" + inline(row[0]))
                rest = ["%s: %s" % (header[k], inline(c)) if k else inline(c)
                        for k, c in enumerate(row[1:], 1) if c]
                out.append("\n.br\n".join(rest) if rest else "")
            if i + 1 >= len(lines) or not lines[i + 1].startswith("|"):
                header = None
        elif line.startswith("- "):
            text = [line[2:]]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                text.append(lines[i].strip())
            out.append(".IP \\(bu 2\n" + inline(" ".join(text)))
        elif not line.strip():
            out.append(".PP")
        else:
            out.append(inline(line))
        i += 1
    out.append(".SH SEE ALSO\nfakegc(1)")
    text = "\n".join(out) + "\n"
    return re.sub(r"(\.PP\n)+", ".PP\n", text)


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        md = f.read()
    page = convert(md, sys.argv[3] if len(sys.argv) == 4 else "")
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page)
    import os
    os.replace(tmp, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
