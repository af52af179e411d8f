#!/usr/bin/python3
"""check_record.py FAKEGC ROOT NAME - ctest (label `record`) for one example.

Records scripts/record/examples/NAME.py again with real PyTorch 1.13.1 and
requires:
  - the recording to equal scenarios/recorded/NAME.scn (the committed one;
    scenarios/recorded/leaks/NAME.scn for a leaking program: `fakegc run`
    skips folders named leaks/ when walking, as its verdict fails);
  - `fakegc run --compat pytorch-1.13` on it to show 0 fidelity mismatches
    and to exit as real PyTorch decides (VERDICT below: 1 when the program
    leaks, 0 when not);
  - the verdict's fake tensors and modes, per leak class, to be what real
    PyTorch 1.13.1 keeps (tests/record/truth.py: weakrefs after gc.collect();
    lost = alive with no referrer chain from the program's module,
    objgraph.find_backref_chain; held = with one): lost == alive - held,
    accumulating + still reachable == held;
  - the recorder's own holders (hold lines of fakes) to be exactly the fakes
    objgraph finds a chain for;
  - the verdict's finalizers, all classes together, to be the
    weakref.finalize objects PyTorch still holds (truth.py), and finalizers
    judged accumulating to grow in PyTorch too, by the same amount per
    round as the model says (sampled at each FakeTensorMode made);
  - a lingering expired storage's "next sweep, in N conversions" to be what
    the live mode's MetaConverter counts in PyTorch.
Exit 77 (skipped) where torch, objgraph or (ResNet examples) torchvision is
not importable."""
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

# exit status of the verdict, and the classes that must show (real PyTorch:
# leak_lost keeps 20 fakes and 10 modes nothing holds; leak_accumulating
# keeps 100 fakes in KEEP, 2 per step; train_modes' finalizers grow by 16
# per step on the parameters, transformer_modes' by 128).
VERDICT = {"leak_lost": (1, ["lost"]), "leak_accumulating": (1, ["accumulating"]),
           "leak_reachable": (0, ["still reachable"]), "leak_lingering": (0, ["lingering"]),
           "leak_clean": (0, []), "train_modes": (1, ["accumulating"]),
           "transformer_modes": (1, ["accumulating"])}
COMPAT = ["--compat", "pytorch-1.13"]   # 1.13.1, its _fix_weakref leak included
LINE = re.compile(r"^ +(lost|accumulating|still reachable|lingering): (\d+) "
                  r"(fake tensors?|modes?|converters?|finalizers?|meta tensors?|"
                  r"expired storages?|stale memo entr(?:y|ies)) ")


def classes(text):
    out = {}
    for ln in text.splitlines():
        m = LINE.match(ln)
        if m:
            noun = m.group(3).rstrip("s")
            noun = "stale memo entry" if noun.startswith("stale memo") else noun
            key = (m.group(1), noun)
            out[key] = out.get(key, 0) + int(m.group(2))
    return out


def finalizer_check(got, tf, text):
    """The model's finalizers against PyTorch's registry (truth.py)."""
    bad = []
    total = sum(v for (c, noun), v in got.items() if noun == "finalizer")
    if total != tf["alive"]:
        bad.append("finalizers: the model keeps %d, PyTorch %d" % (total, tf["alive"]))
    m = re.search(r"accumulating: \d+ finalizers .*?\+([0-9.]+) per round", text)
    if m:   # PyTorch grows by the same step at each mode, a round making k modes
        steps = [b - a for a, b in zip(tf["per_mode"], tf["per_mode"][1:])]
        rate = float(m.group(1))
        if not steps or len(set(steps)) != 1 or steps[0] <= 0 or rate % steps[0]:
            bad.append("finalizers: the model says +%s per round, PyTorch grew by %s per mode"
                       % (m.group(1), steps))
    return bad


def run(cmd, **k):
    return subprocess.run(cmd, stdout=subprocess.PIPE, text=True, **k)


def main(fakegc, root, name):
    root = os.path.abspath(root)
    prog = os.path.join(root, "scripts", "record", "examples", name + ".py")
    ref = os.path.join(root, "scenarios", "recorded", name + ".scn")
    if VERDICT.get(name, (0,))[0]:    # a leaking program's recording fails by design
        ref = os.path.join(root, "scenarios", "recorded", "leaks", name + ".scn")
    if "import torchvision" in open(prog).read():
        r = subprocess.run(["/usr/bin/python3", "-c", "import torchvision"],
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            print("skipped: python3-torchvision is not installed")
            return 77
    bad = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, name + ".scn")
        r = subprocess.run(["/usr/bin/python3", os.path.join(root, "scripts", "record.py"),
                            "-o", out, prog], cwd=root)
        if r.returncode == 77:
            return 77
        if r.returncode != 0:
            print("FAIL: record.py exited %d" % r.returncode)
            return 1
        new = open(out).read().splitlines(True)
        old = open(ref).read().splitlines(True)
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(old, new, ref, "recorded now", n=1))
            print("FAIL: the recording differs from %s" % ref)
            return 1
        r = run([fakegc, "run", "--format", "json"] + COMPAT + [out])
        sc = json.loads(r.stdout)["scenarios"][0]
        if sc["failures"]:
            bad.append("fidelity mismatches: %s" % [f["text"] for f in sc["failures"][:3]])
        if not sc.get("verdict"):
            bad.append("no verdict in the report")
            sc["verdict"] = {"text": ""}
        want_rc, want_classes = VERDICT.get(name, (0, []))
        if r.returncode != want_rc:
            bad.append("exit %d, PyTorch says %d" % (r.returncode, want_rc))
        got = classes(sc["verdict"]["text"])
        for c in want_classes:
            if not any(k[0] == c for k in got):
                bad.append("no %s objects in the verdict" % c)
        if name == "leak_lingering":   # fails when asked to
            text, n = re.subn(r'^(verdict\(fail_on=)"[^"]*"', r'\1"lingering"',
                              open(out).read(), flags=re.M)
            if n != 1:
                bad.append("fail_on=lingering: %d verdict(fail_on=...) lines, not 1" % n)
            open(out, "w").write(text)
            r2 = run([fakegc, "run", "-q"] + COMPAT + [out])
            if r2.returncode != 1:
                bad.append("fail_on=lingering: exit %d, not 1" % r2.returncode)
        t = run(["/usr/bin/python3", os.path.join(root, "tests", "record", "truth.py"), prog],
                cwd=d)
        if t.returncode == 77:
            print(t.stdout.strip())
            return 77
        truth = json.loads(t.stdout.strip().splitlines()[-1])
        for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
            lost = got.get(("lost", noun), 0)
            held = got.get(("accumulating", noun), 0) + got.get(("still reachable", noun), 0)
            tr = truth[kind]
            if lost != tr["alive"] - tr["held"] or held != tr["held"]:
                bad.append("%ss: the model says %d lost, %d held; PyTorch kept %d, %d of them "
                           "held by the program (objgraph)" % (noun, lost, held, tr["alive"],
                                                              tr["held"]))
        bad += finalizer_check(got, truth["finalizer"], sc["verdict"]["text"])
        said = [int(n) for n in re.findall(r"expired storages? made at .*?next sweep, in (\d+) "
                                           r"conversions?", sc["verdict"]["text"])]
        if sorted(set(said)) != truth["mode"]["to_sweep"]:
            bad.append("next sweep in %s conversions, PyTorch: in %s" % (said,
                       truth["mode"]["to_sweep"]))
        holds = len(re.findall(r"^hold\((f|x)\d+, ", "".join(new), re.M))
        if holds != truth["fake"]["chained"]:
            bad.append("the recorder found holders for %d fakes, objgraph for %d"
                       % (holds, truth["fake"]["chained"]))
    for b in bad:
        print("FAIL: %s: %s" % (name, b))
    if bad:
        return 1
    print("ok: %s recorded as committed, 0 fidelity mismatches, verdict as PyTorch keeps: %s"
          % (name, ", ".join("%d %s %s" % (v, k[0], k[1]) for k, v in sorted(got.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
