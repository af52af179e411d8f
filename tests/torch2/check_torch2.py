#!/usr/bin/python3
"""check_torch2.py FAKEGC ROOT SUITE NAME [DIR [DIR113]] - ctest (label `torch2`): one 2.x
example program under real PyTorch (SUITE trixie: 2.6, forky: 2.14).

Records scripts/record/examples2/NAME.py with `fakegc record --python
LAUNCHER` (the launcher of scripts/torch-root.sh SUITE, in $FAKEGC_ROOTS or
/var/cache/fakegc/roots) and requires:
  - the recording to be whole (no INTERNAL, STOPPED or REFUSED in its
    header), its first line to name that torch, its design pytorch-2.3
    (2.6) or pytorch-2.14 (2.14); dynamic_shapes' op outputs written
    with their symbols (`op_out(empty(s3, 4))`), not their hints;
  - 0 fidelity mismatches (the counters PyTorch 2.x showed, replayed);
  - the exit status and leak classes of EXPECT[NAME], and the verdict's
    fake tensors and modes to be what the real run keeps (tests/record/
    truth.py under the same root: weakrefs after gc.collect(), the
    chains from the program): lost == alive - held, accumulating + still
    reachable == held; finalizers: the fake-tensor machinery's own left in
    weakref.finalize._registry;
  - for BOTH programs, the same program under 1.13.1 (/usr/bin/python3) to
    give its own, different verdict (both shown).
NAME `library`: a region recorded with `with fakegc.recording(PATH)` and
fakegc.mark() under that root, replayed: what the region kept accumulates.
Exit 77 (skipped) only when the root is absent (scripts/test.sh builds it).
"""
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "record"))
from check_record import classes  # noqa: E402
from runs import get, run  # noqa: E402

TORCH = {"trixie": "2.6", "forky": "2.14"}
DESIGN = {"trixie": "pytorch-2.3", "forky": "pytorch-2.14"}
# exit status and the classes the verdict must have (fake tensors unless said)
EXPECT = {
    "cache_dict": (1, ["accumulating"]),
    "closure": (1, ["accumulating"]),
    "fresh_mode_per_step": (0, []),
    "make_fx_loop": (0, []),
    "dispatch_cache": (0, ["still reachable"]),
    "dynamic_shapes": (1, ["accumulating"]),
    # written as a user would: a DataLoader loop keeping fake batches, an
    # lru_cache of fakes (bounded: still reachable), fakes in a class
    # attribute, a suspended generator's frame keeping them
    "dataloader_loop": (1, ["accumulating"]),
    "lru_fakes": (0, ["still reachable"]),
    "class_attr": (1, ["accumulating"]),
    "generator_keeps": (1, ["accumulating"]),
}
# 1.13.1 judges these otherwise: (exit, a class and noun its verdict has)
BOTH = {"fresh_mode_per_step": (1, ("accumulating", "finalizer"))}


LIB = """import sys
import torch
import fakegc
from torch._subclasses.fake_tensor import FakeTensorMode
before = FakeTensorMode()                  # outside the region: left out of its counts
old = [before.from_tensor(torch.randn(2)) for _ in range(3)]
init = FakeTensorMode.__init__
CACHE = {}
with fakegc.recording(sys.argv[1]):
    m = FakeTensorMode()
    for i in range(5):
        fakegc.mark("step %d" % i)
        CACHE[i] = m.from_tensor(torch.randn(4, 4))
assert FakeTensorMode.__init__ is init, "hooks left installed"
"""


def library(fakegc, root, py, suite):
    """The library (`with fakegc.recording(...)`, fakegc.mark) under 2.x:
    PYTHONPATH=scripts/, run from there (the launcher binds the current folder)."""
    bad = []
    with tempfile.TemporaryDirectory() as d:
        prog, out = os.path.join(d, "lib.py"), os.path.join(d, "lib.scn")
        with open(prog, "w") as f:
            f.write(LIB)
        scripts = os.path.join(root, "scripts")
        r = run([py, prog, out], cwd=scripts, env=dict(os.environ, PYTHONPATH=scripts))
        if r.returncode != 0:
            print("FAIL: library under torch %s: exit %d: %s" % (TORCH[suite], r.returncode,
                                                                  r.stderr[-800:]))
            return 1
        text = open(out).read()
        for want in ('expect live("fake") == 5', 'expect live("mode") == 1',
                     'mark("step 4")', 'config compat = "%s"' % DESIGN[suite]):
            if want not in text:
                bad.append("the region's recording lacks %s" % want)
        r = run([fakegc, "run", "--format", "json", out])
        rep = json.loads(r.stdout)["scenarios"][0]
        if rep["failures"] or r.returncode != 1 or \
                ("accumulating", "fake tensor") not in classes(rep["verdict"]["text"]):
            bad.append("replay: exit %d, %d mismatches, verdict %s" % (
                r.returncode, len(rep["failures"]), rep["verdict"]["text"][:300]))
    for b in bad:
        print("FAIL: library under torch %s: %s" % (TORCH[suite], b))
    if not bad:
        print("ok: library under torch %s: the region's 5 fakes accumulate, 0 mismatches"
              % TORCH[suite])
    return 1 if bad else 0


def cache_compared(text, head):
    """A long-lived mode's ops: the dispatch cache's counters are compared
    (the replay's expects on fake_cache(): each miss's size and misses, the
    hits at the end), not only said in the header."""
    got = {c: [int(v) for v in re.findall(r"^ *expect fake_cache\(\)\.%s == (\d+)$" % c,
                                          text, re.M)] for c in ("size", "misses", "hits")}
    bad = ["no `expect fake_cache().%s` in the recording" % c for c, v in got.items() if not v]
    if "counters are compared" not in head:
        bad.append("the header does not say that the cache's counters are compared")
    if not bad and (got["size"][-1] < 1 or got["hits"][-1] < got["misses"][-1]):
        bad.append("the cache expects are not those of a loop served from the cache: %s" % got)
    return bad


def main(fakegc, root, suite, name, d=None, d113=None):
    root = os.path.abspath(root)
    roots = os.environ.get("FAKEGC_ROOTS", "/var/cache/fakegc/roots")
    py = os.path.join(roots, suite + "-python3")
    if not os.path.isfile(os.path.join(roots, suite, ".fakegc-root")) or not os.access(py, os.X_OK):
        print("skipped: no PyTorch root %s/%s (scripts/torch-root.sh %s builds it)"
              % (roots, suite, suite))
        return 77
    if name == "library":
        return library(fakegc, root, py, suite)
    prog = os.path.join(root, "scripts", "record", "examples2", name + ".py")
    bad = []
    runs = get(fakegc, d, prog, py)
    rc, rep, text, head = runs.rc, runs.report, runs.text, runs.head
    if rep is None:
        print(runs.said)
        print("FAIL: %s: no report from fakegc record (exit %d)" % (name, rc))
        return 1
    first = text.split("\n", 1)[0]
    if "(torch %s." % TORCH[suite] not in first:
        bad.append("the first line does not name torch %s: %s" % (TORCH[suite], first))
    if 'config compat = "%s"' % DESIGN[suite] not in text:
        bad.append("no config compat %s" % DESIGN[suite])
    if name == "dispatch_cache" and not re.search(
            r"cache_info\(\) at the program's end: hits [1-9]\d*, misses [1-9]", head):
        bad.append("the header does not give the dispatch cache's counters")
    if name == "dispatch_cache":
        bad += cache_compared(text, head)
    if name == "dynamic_shapes":   # f * 2 of a (DYNAMIC, STATIC) fake: (sN, 4)
        outs = re.findall(r"^ *x\d+ = op_out\(empty\((.*?)\)\) ", text, re.M)
        if len(outs) != 10 or not all(re.fullmatch(r"s\d+, 4", o) for o in outs) or \
                "written as its hint" in head:
            bad.append("op outputs not written with their symbols: %s" % outs)
    for word in ("INTERNAL", "STOPPED", "REFUSED"):
        if word in head:
            bad.append("the recording is not whole: %s" % [ln for ln in head.splitlines()
                                                            if word in ln][:1])
    if rep["failures"]:
        bad.append("fidelity mismatches: %s" % [f["text"] for f in rep["failures"][:3]])
    verdict = (rep.get("verdict") or {}).get("text", "")
    got = classes(verdict)
    want_rc, want = EXPECT[name]
    if rc != want_rc:
        bad.append("exit %d, the real run says %d" % (rc, want_rc))
    for c in want:
        if not any(k == (c, "fake tensor") for k in got):
            bad.append("no %s fake tensors in the verdict" % c)
    truth = runs.truth
    if truth is None:
        bad.append("truth.py: %s" % runs.truth_error[-500:])
    for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
        if truth is None:
            break
        lost = got.get(("lost", noun), 0)
        held = got.get(("accumulating", noun), 0) + got.get(("still reachable", noun), 0)
        tr = truth[kind]
        if lost != tr["alive"] - tr["held"] or held != tr["held"]:
            bad.append("%ss: the model says %d lost, %d held; PyTorch %s kept %d, %d of "
                       "them held by the program (a chain from it)" % (
                           noun, lost, held, TORCH[suite], tr["alive"], tr["held"]))
    if truth is not None:
        fins = sum(v for (c, n), v in got.items() if n == "finalizer")
        if fins != truth["finalizer"]["alive"]:
            bad.append("finalizers: the model keeps %d, PyTorch %d"
                       % (fins, truth["finalizer"]["alive"]))
    summary = ", ".join("%d %s %s" % (v, k[0], k[1]) for k, v in sorted(got.items()))
    other = ""
    if name in BOTH:
        old = get(fakegc, d113, prog, "/usr/bin/python3")
        rc1, rep1 = old.rc, old.report
        want1, (cls, noun) = BOTH[name]
        v1 = classes((rep1 or {}).get("verdict", {}).get("text", "")) if rep1 else {}
        if rc1 == 77 or rep1 is None:
            bad.append("1.13.1 could not record it (exit %d)" % rc1)
        elif rc1 != want1 or (cls, noun) not in v1:
            bad.append("under 1.13.1: exit %d, %s; want exit %d with %s %ss" % (
                rc1, v1, want1, cls, noun))
        other = "; under 1.13.1: exit %d, %s" % (rc1, ", ".join(
            "%d %s %s" % (v, k[0], k[1]) for k, v in sorted(v1.items())))
    for b in bad:
        print("FAIL: %s under torch %s: %s" % (name, TORCH[suite], b))
    if bad:
        return 1
    print("ok: %s under torch %s: exit %d, 0 fidelity mismatches, verdict as the real run "
          "keeps: %s%s" % (name, TORCH[suite], rc, summary or "nothing", other))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
