#!/usr/bin/python3
"""runs.py - a program's real run and its recording under one PyTorch, made
once and read by every check of that program and PyTorch.

    runs.py FAKEGC DIR PROGRAM.py PYTHON [--no-chains]

(a ctest FIXTURES_SETUP test per program and PyTorch) empties DIR, then
writes in it:
  truth.json     tests/record/truth.py's answer for PROGRAM under PYTHON
                 (--no-chains passed on), or {"error": its output's tail,
                 "exit": N};
  recording.scn  `fakegc record --python PYTHON -o recording.scn --format
                 json -- PROGRAM`;
  record.json    {"exit": N, "report": that scenario's JSON report, or null
                 and "said": the tail of what fakegc said};
  done           last, once the others are whole.
PYTHON is /usr/bin/python3 (Debian's 1.13.1) or SUITE, the launcher of a
root of scripts/torch-root.sh ($FAKEGC_ROOTS or /var/cache/fakegc/roots).
Exit 0 whatever the program and fakegc did (the checks judge that), 77 when
that root is absent. A check reads the runs with get(): DIR's when it is
done, else made then and there in a temporary folder (a check run by hand).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ("truth.json", "recording.scn", "record.json", "done")


def python_of(name):
    """The Python a check names: a path, or a root's launcher (None: absent)."""
    if name.startswith("/"):
        return name
    roots = os.environ.get("FAKEGC_ROOTS", "/var/cache/fakegc/roots")
    p = os.path.join(roots, "%s-python3" % name)
    return p if os.access(p, os.X_OK) else None


def run(cmd, **k):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **k)


def tail(r):
    return (r.stderr or "")[-2000:] + (r.stdout or "")[-2000:]


def make(fakegc, d, prog, py, chains=True):
    """The real run and the recording of prog under py, into folder d."""
    fakegc = os.path.abspath(fakegc) if os.sep in fakegc else fakegc
    for name in FILES:
        if os.path.exists(os.path.join(d, name)):
            os.remove(os.path.join(d, name))
    os.makedirs(d, exist_ok=True)
    r = run([py, "-W", "ignore", os.path.join(HERE, "truth.py")] +
            ([] if chains else ["--no-chains"]) + [prog], cwd=d)
    lines = r.stdout.strip().splitlines()
    try:
        truth = json.loads(lines[-1]) if r.returncode == 0 else None
    except (ValueError, IndexError):
        truth = None
    if truth is None:
        truth = {"error": tail(r), "exit": r.returncode}
    out = os.path.join(d, "recording.scn")
    r = run([fakegc, "record", "--python", py, "-o", out, "--format", "json", "--", prog], cwd=d)
    rec = {"exit": r.returncode, "report": None}
    try:
        rec["report"] = json.loads(r.stdout)["scenarios"][0]
    except (ValueError, KeyError, IndexError):
        rec["said"] = tail(r)
    for name, data in (("truth.json", truth), ("record.json", rec)):
        with open(os.path.join(d, name + ".tmp"), "w") as f:
            json.dump(data, f)
        os.replace(os.path.join(d, name + ".tmp"), os.path.join(d, name))
    open(os.path.join(d, "done"), "w").close()


class Runs:
    """What DIR holds: truth (the real run's dict, or None and truth_error),
    rc and report (fakegc record's exit and scenario report, None when it
    gave none, then said), text and head of the recording, and torch, the
    version its first line names."""

    def __init__(self, d):
        with open(os.path.join(d, "truth.json")) as f:
            truth = json.load(f)
        self.truth = None if "error" in truth else truth
        self.truth_error = None if self.truth else "exit %d: %s" % (truth["exit"],
                                                                   truth["error"])
        with open(os.path.join(d, "record.json")) as f:
            rec = json.load(f)
        self.rc, self.report, self.said = rec["exit"], rec["report"], rec.get("said", "")
        try:
            with open(os.path.join(d, "recording.scn")) as f:
                self.text = f.read()
        except OSError:
            self.text = ""
        self.head = self.text.split("\nconfig ", 1)[0]
        m = re.search(r"\(torch ([0-9][^ ,;)]*)", self.text.split("\n", 1)[0])
        self.torch = m.group(1) if m else None


def get(fakegc, d, prog, py, chains=True):
    """The runs of prog under py: DIR's when the fixture made them, else
    made now (in a temporary folder)."""
    if d and os.path.exists(os.path.join(d, "done")):
        return Runs(d)
    tmp = tempfile.mkdtemp(prefix="runs-")
    try:
        make(fakegc, tmp, prog, py, chains)
        return Runs(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    chains = "--no-chains" not in argv
    fakegc, d, prog, pyname = [a for a in argv if a != "--no-chains"][:4]
    py = python_of(pyname)
    if os.path.isdir(d):
        shutil.rmtree(d)
    if py is None:
        print("skipped: no root %s (scripts/torch-root.sh %s)" % (pyname, pyname))
        return 77
    make(fakegc, d, os.path.abspath(prog), py, chains)
    got = Runs(d)
    print("%s under %s (torch %s): real run %s; fakegc record exit %d" % (
        os.path.basename(prog), pyname, got.torch,
        json.dumps(got.truth) if got.truth else got.truth_error, got.rc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
