#!/usr/bin/python3
"""bench.py - what fakegc's benchmarks are to be compared with, measured on
this machine with real PyTorch 1.13 and CPython.

usage: scripts/xref/bench.py [--fakegc build/fakegc] [--tensors 20000]
                             [--objects 1000000] [--reps 3] [-v]

Prints one JSON line
    {"pytorch_convert_us": ..., "pytorch_delete_us": ..., "cpython_gc_ns_per_object": ...}
 - pytorch_convert_us: FakeTensorMode.from_tensor on a fresh 4x4 float
   tensor (a memo miss: MetaConverter + FakeTensor), per tensor;
 - pytorch_delete_us: deleting a real tensor that has memo entries (its two
   weakref.finalize callbacks run: fake memo, meta memo + pending list), per
   tensor, with its fake tensor kept alive;
 - cpython_gc_ns_per_object: gc.collect() of 1M unreachable objects held in
   2-cycles (lists a <-> b), per object.
Each is the median of --reps runs. Then, when the fakegc binary exists and
`fakegc bench --format json` works, a side-by-side markdown table.
Exit 77 when torch is not importable.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM_PYTHON = "/usr/bin/python3"


def import_torch():
    try:
        import torch  # noqa: F401
        from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: F401
        return True
    except ImportError:
        return False


def bench_pytorch(n, verbose):
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    conv = mode.fake_tensor_converter
    meta = conv.meta_converter
    reals = [torch.empty(4, 4) for _ in range(n)]
    gc.disable()
    t0 = time.perf_counter()
    fakes = [mode.from_tensor(t) for t in reals]
    t1 = time.perf_counter()
    counts_before = (len(conv.tensor_memo), len(meta.tensor_memo), len(meta.storage_memo),
                     len(meta.maybe_storages_to_delete))
    t2 = time.perf_counter()
    del reals
    t3 = time.perf_counter()
    counts_after = (len(conv.tensor_memo), len(meta.tensor_memo), len(meta.storage_memo),
                    len(meta.maybe_storages_to_delete))
    del fakes
    gc.enable()
    if verbose:
        print("pytorch: %d tensors: memos (fake, meta, storage, pending) after converting %s, "
              "after deleting the real tensors %s" % (n, counts_before, counts_after),
              file=sys.stderr)
    return (t1 - t0) / n * 1e6, (t3 - t2) / n * 1e6, counts_after


def bench_gc(nobj, verbose):
    gc.collect()
    gc.disable()
    for _ in range(nobj // 2):
        a = []
        b = [a]
        a.append(b)
    del a, b
    t0 = time.perf_counter()
    freed = gc.collect()
    t1 = time.perf_counter()
    gc.enable()
    if verbose:
        print("cpython: gc.collect() freed %d objects in %.3f s" % (freed, t1 - t0),
              file=sys.stderr)
    return (t1 - t0) / nobj * 1e9


def fakegc_bench(fakegc):
    """{name: ns per op} from `fakegc bench --format json`, or None."""
    if not (os.path.isfile(fakegc) and os.access(fakegc, os.X_OK)):
        return None, "no fakegc binary at %s" % fakegc
    try:
        p = subprocess.run([fakegc, "bench", "--format", "json"], capture_output=True,
                           text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, "fakegc bench failed: %s" % err
    if p.returncode != 0:
        return None, "fakegc bench exited %d: %s" % (p.returncode, p.stderr.strip()[:200])
    try:
        data = json.loads(p.stdout)
    except ValueError as err:
        return None, "fakegc bench printed no JSON: %s" % err
    found = {b["name"]: float(b["ns_per_op"]) for b in data.get("benchmarks", [])
             if isinstance(b, dict) and isinstance(b.get("ns_per_op"), (int, float))
             and b.get("available", True)}
    if not found:
        return None, "fakegc bench JSON has no ns figures"
    return found, None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py")
    ap.add_argument("--fakegc", default=os.path.join(ROOT, "build", "fakegc"))
    ap.add_argument("--tensors", type=int, default=20000)
    ap.add_argument("--objects", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if not import_torch():
        if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) \
                and os.path.exists(SYSTEM_PYTHON):
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        print("bench: SKIP: torch is not importable by %s" % sys.executable)
        return 77
    conv, dele = [], []
    for _ in range(args.reps):
        c, d, counts = bench_pytorch(args.tensors, args.verbose)
        conv.append(c)
        dele.append(d)
    gcs = [bench_gc(args.objects, args.verbose) for _ in range(args.reps)]
    res = {"pytorch_convert_us": round(statistics.median(conv), 2),
           "pytorch_delete_us": round(statistics.median(dele), 2),
           "cpython_gc_ns_per_object": round(statistics.median(gcs), 1)}
    print(json.dumps(res))
    found, why = fakegc_bench(args.fakegc)
    if found is None:
        print("(fakegc side not measured: %s)" % why, file=sys.stderr)
        return 0
    # fakegc's benchmark names are stable (fakegc list benches); a deletion
    # is measured inside a whole lifecycle (make, fake, drop both, entries
    # reclaimed), so that row compares PyTorch's deletion alone with more.
    rows = [("convert a fresh 4x4 tensor (memo miss)", res["pytorch_convert_us"] * 1000,
             "convert/miss"),
            ("delete a real tensor with memo entries (fakegc: whole lifecycle)",
             res["pytorch_delete_us"] * 1000, "lifecycle/churn"),
            ("cycle collection, per object (1M objects in 2-cycles)",
             res["cpython_gc_ns_per_object"], "gc/cycles-1m")]
    print()
    print("| operation | PyTorch / CPython (ns) | fakegc bench | fakegc (ns) | ratio |")
    print("| --- | ---: | --- | ---: | ---: |")
    used = set()
    for label, ref, name in rows:
        v = found.get(name)
        if v is None:
            print("| %s | %.0f | - | - | - |" % (label, ref))
            continue
        used.add(name)
        print("| %s | %.0f | %s | %.1f | %.1fx |" % (label, ref, name, v, ref / v if v else 0))
    for name, v in sorted(found.items()):
        if name not in used:
            print("| (fakegc only) | - | %s | %.1f | - |" % (name, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
