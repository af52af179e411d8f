#!/usr/bin/env python3
"""check_ci.py FAKEGC SRC - `fakegc record` as a CI step sees it:
 - recorded twice, a program keeps its test name (its path as given) in
   JUnit, TAP and JSON; the JUnit/TAP failure message is the verdict's
   summary line; the JSON carries the verdict as rows;
 - `diff` of the reports of a clean and a leaking version of one program
   pairs them by program and names the new leak's class, site and holder;
   the other way round it is an improvement;
 - the workflow in scripts/doc/ci-workflow.yml: each of its `run:` steps
   (but the install) runs as written, on the clean program (exit 0) and on
   the leaking one (the record step exits 1 and annotates its lines).
Needs torch (77 without it, 1 in CI)."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, in_tmp, runner  # noqa: E402

FAKEGC, SRC = sys.argv[1], sys.argv[2]
# sites are the program's path as given (a subfolder: sub/accumulate.py:13)
SUMMARY = "10 accumulating: 5 fake tensors in KEEP, +1 per round at {p}:13 (and 1 more leak)"


run = runner(FAKEGC, timeout=300)


def record_reports(tmp, prog, tag):
    """JUnit, TAP and JSON of one record of prog (a path relative to tmp)."""
    out = {k: os.path.join(tmp, f"{tag}.{k}") for k in ("xml", "tap", "json")}
    rc, _, err = run("record", "--junit", out["xml"], "--tap", out["tap"], "--json", out["json"],
                     "--", prog, cwd=tmp)
    return rc, out, err


def names(out):
    case = ET.parse(out["xml"]).getroot().find("testsuite/testcase")
    tap = [l for l in open(out["tap"]).read().splitlines() if l.startswith(("ok", "not ok"))]
    doc = json.load(open(out["json"]))
    return case, tap, doc


def check_names_and_messages(tmp):
    prog = "sub/accumulate.py"
    first = second = None
    for tag in ("one", "two"):
        rc, out, err = record_reports(tmp, prog, tag)
        check(rc == 1, f"record {prog}: exit 1 (got {rc}: {err[-300:]})")
        case, tap, doc = names(out)
        got = (case.get("name"), tap[0].split(" - ", 1)[1], doc["scenarios"][0]["file"])
        check(got == (prog, prog, prog), f"the program's path as given names the test: {got}")
        if tag == "one":
            first = got
        else:
            second = got
        msg = case.find("failure").get("message")
        check(msg == SUMMARY.format(p=prog), f"JUnit message is the summary line: {msg}")
        tapmsg = open(out["tap"]).read()
        check(f'message: "{SUMMARY.format(p=prog)}"' in tapmsg, "TAP message: the summary line")
        s = doc["scenarios"][0]
        check(s.get("recording") and s["recording"].endswith(".scn"), "JSON: the recording")
        check(s["verdict"].get("summary") == SUMMARY.format(p=prog),
              f"JSON: the summary line, the site as the program was given: {s['verdict']}")
        schema = os.path.join(SRC, "src/report/schema", doc["schema"].replace("/", "-") + ".schema.json")
        v = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/report/validate.py"),
                            schema, out["json"]], capture_output=True, text=True)
        check(v.returncode == 0, f"JSON valid against {schema}: {v.stdout[-300:]}")
        rows = s["verdict"]["groups"]
        fake = [g for g in rows if g["category"] == "fake"]
        check(len(fake) == 1 and fake[0]["class"] == "accumulating" and fake[0]["count"] == 5
              and fake[0]["site"] == prog + ":13" and fake[0]["holder"] == "KEEP"
              and fake[0]["rounds"] == [1, 5, 5] and fake[0]["bytes"] > 0,
              f"JSON verdict rows: {fake}")
        check(subprocess.run(["xmllint", "--noout", out["xml"]]).returncode == 0, "JUnit: XML")
    check(first == second, f"twice, the same names: {first} {second}")
    # annotations point at the file from where CI stands: the program's folder joined
    rc, out, _ = run("record", "--format", "github", "--", prog, cwd=tmp)
    check(f"::error file={prog},line=13,title=fakegc accumulating%3A 5 fake tensors::" in out,
          f"github: {prog}:13 from the working folder: {out[:300]}")


def check_dot_and_objects(tmp):
    """--dot and --objects of a record cover the verdict's groups."""
    dot, objs = os.path.join(tmp, "r.dot"), os.path.join(tmp, "r.jsonl")
    rc, _, err = run("record", "--dot", dot, "--objects", objs, "--", "sub/accumulate.py", cwd=tmp)
    check(rc == 1, f"record --dot --objects: exit 1 (got {rc}: {err[-200:]})")
    lines = [json.loads(l) for l in open(objs)]
    kinds = sorted(l["object"]["kind"] for l in lines)
    fakes = [l for l in lines if l["object"]["describe"].startswith("fake ")]
    check(len(fakes) == 5 and all(l["object"]["path"][0].startswith("KEEP[") for l in fakes),
          f"--objects: the 5 accumulating fakes, held by KEEP: {kinds}")
    check(kinds.count("fake_mode") == 5, f"--objects: the 5 modes: {kinds}")
    text = open(dot).read()
    check(text.count("->") >= 5 and "KEEP" in text, "--dot: a graph with the holders")
    p = subprocess.run(["dot", "-Tsvg", "-o", os.devnull, dot], capture_output=True, text=True)
    check(p.returncode == 0, f"--dot parses: {p.stderr[:200]}")


def check_diff(tmp):
    for d, name in (("v1", "accumulate_fixed.py"), ("v2", "accumulate.py")):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
        shutil.copy(os.path.join(SRC, "tests/record/programs", name),
                    os.path.join(tmp, d, "prog.py"))
        rc, _, err = run("record", "--format", "json", "--output", f"../{d}.json", "--",
                         "prog.py", cwd=os.path.join(tmp, d))
        check(rc == (0 if d == "v1" else 1), f"record {d}: exit {rc} ({err[-200:]})")
    rc, out, err = run("diff", "v1.json", "v2.json", cwd=tmp)
    print(out)
    check(rc == 1, f"diff clean -> leaking: exit 1 (got {rc}: {err})")
    check("prog.py: pass -> fail" in out, "diff pairs the two by program")
    check("+ verdict: accumulating 0 -> 10" in out, "diff: the class row old -> new")
    check("+ accumulating: 5 fake tensors made at prog.py:13, held by KEEP (was 0): KEEP[0] -> "
          "tensor#" in out, "diff names the new leak's class, site and holder")
    rc, out, _ = run("diff", "v2.json", "v1.json", cwd=tmp)
    check(rc == 0 and "- accumulating: 5 fake tensors made at prog.py:13, held by KEEP (now none)"
          in out, f"diff leaking -> clean: an improvement, exit 0 (got {rc})")
    rc, out, _ = run("diff", "--format", "json", "v1.json", "v2.json", cwd=tmp)
    items = [i for b in json.loads(out)["scenarios"] for i in b["items"]]
    check(any(i["kind"] == "verdict-group" and i["regression"] for i in items),
          "diff JSON: a verdict-group regression")


def check_workflow(tmp):
    wf = yaml.safe_load(open(os.path.join(SRC, "scripts/doc/ci-workflow.yml")))
    steps = wf["jobs"]["leaks"]["steps"]
    runs = [s for s in steps if "run" in s and s.get("name") != "Install fakegc"]
    check(len(runs) == 2, f"the workflow's steps to run: {[s.get('name') for s in runs]}")
    path = os.path.dirname(os.path.abspath(FAKEGC)) + os.pathsep + os.environ["PATH"]
    base = None
    for prog, want in (("accumulate_fixed.py", 0), ("accumulate.py", 1)):
        ws = os.path.join(tmp, "ws-" + prog)
        os.makedirs(ws)
        shutil.copy(os.path.join(SRC, "tests/record/programs", prog), os.path.join(ws, "train.py"))
        env = dict(os.environ, PATH=path, PROGRAM="train.py",
                   GITHUB_STEP_SUMMARY=os.path.join(ws, "summary.md"))
        if base:   # the main branch's report: the clean version's
            shutil.copy(base, os.path.join(ws, "base.json"))
        for s in runs:
            p = subprocess.run(["bash", "-e", "-c", s["run"]], cwd=ws, env=env,
                               capture_output=True, text=True, timeout=300)
            code = want if s.get("name") == "Record and judge" else 0
            check(p.returncode == code, f"{prog}: step '{s.get('name')}' exit {p.returncode}, "
                  f"want {code}: {p.stderr[-300:]}")
            if s.get("name") == "Record and judge" and want:
                check("::error file=train.py,line=13,title=fakegc accumulating%3A 5 fake tensors::"
                      in p.stdout, f"{prog}: the annotation of line 13: {p.stdout[:300]}")
            if s.get("name") == "Compare with the main branch" and want:
                check("::warning title=fakegc diff::" in p.stdout, "the diff's warning")
        for f in ("fakegc.xml", "fakegc.sarif", "fakegc.json"):
            check(os.path.getsize(os.path.join(ws, f)) > 0, f"{prog}: the step wrote {f}")
        sm = os.path.join(ws, "summary.md")
        summary = open(sm).read() if os.path.exists(sm) else ""
        check(not want or ("train.py" in summary and "fake tensors made at train.py:13" in summary),
              f"{prog}: the step summary has the diff: {summary[:400]}")
        base = base or os.path.join(ws, "fakegc.json")


def copy_program(tmp):
    os.makedirs(os.path.join(tmp, "sub"))
    shutil.copy(os.path.join(SRC, "tests/record/programs/accumulate.py"),
                os.path.join(tmp, "sub/accumulate.py"))


def main():
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode:
        print("no torch: scripts/deps.sh installs python3-torch")
        return 1 if os.environ.get("CI") == "true" else 77
    return in_tmp([copy_program, check_names_and_messages, check_dot_and_objects, check_diff,
                   check_workflow], "check_ci: ok")


sys.exit(main())
