#!/usr/bin/env python3
"""stub_fakegc.py - stands in for build/fakegc in xref's own tests.

    stub_fakegc.py run FILE.scn --compat pytorch-1.13 --format json

Evaluates the scenario with PyTorch (through xref's own translator) and
prints a fakegc-shaped JSON report: one failure per failing evaluation of
an expectation, with its actual value. Knobs (environment):
  XREF_STUB_PATCH="OLD=>NEW"   replace text in the generated Python first
                               (e.g. make memo_storage read one less)
  XREF_STUB_FIRST_ONLY=1       stop at the first failure, as a runner that
                               aborts a scenario on its first failure would
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "xref"))
from scn import parse_file  # noqa: E402
from translate import translate  # noqa: E402


def main(argv):
    if len(argv) < 2 or argv[0] != "run":
        print("usage: stub_fakegc.py run FILE --compat pytorch-1.13 --format json", file=sys.stderr)
        return 2
    path = argv[1]
    tr = translate(parse_file(path))
    code = tr.code
    patch = os.environ.get("XREF_STUB_PATCH")
    if patch:
        old, new = patch.split("=>")
        code = code.replace(old, new)
    with tempfile.TemporaryDirectory() as d:
        prog, out = os.path.join(d, "p.py"), os.path.join(d, "r.json")
        open(prog, "w").write(code)
        subprocess.run(["/usr/bin/python3", prog, out], capture_output=True)
        data = json.load(open(out))
    fails = []
    for line, evs in data["records"].items():
        e = tr.expects[int(line)]
        for ev in evs:
            if ev.get("holds") is True:
                continue
            if "a" in ev:
                kind, v = ev["a"]
                actual = ("true" if v else "false") if kind == "bool" else str(v)
            else:
                actual = ev.get("error") or ev.get("raised") or "no error"
            fails.append({"line": int(line), "text": e.text, "actual": actual})
    if data.get("abort"):
        fails.append({"line": data["abort"]["line"], "text": "", "actual": data["abort"]["error"]})
    fails.sort(key=lambda f: f["line"])
    if os.environ.get("XREF_STUB_FIRST_ONLY") and fails:
        fails = fails[:1]
    scen = {"file": path, "status": "fail" if fails else "pass",
            "expectations": {"passed": 0, "failed": len(fails)}, "failures": fails,
            "retained": []}
    print(json.dumps({"tool": "fakegc", "version": "stub", "scenarios": [scen],
                      "summary": {"passed": int(not fails), "failed": int(bool(fails)),
                                  "skipped": 0}}))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
