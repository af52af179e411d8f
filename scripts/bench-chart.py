#!/usr/bin/python3
"""bench-chart.py DIR - combine the runs scripts/bench.sh left in DIR/raw/
into DIR/results.csv and DIR/results.json, draw DIR/ns-per-op.svg and
DIR/memo-trace.svg, and print the summary (libc/eager table, the matrix,
the ratios and the targets). The charts need Debian's
python3-matplotlib (run it with /usr/bin/python3); without it the tables,
CSV and JSON are still written.

DIR/raw/ holds: bench_<allocator>_<sweep>.json (`fakegc bench --format
json`, '/' in the allocator written as '+'), trace_<sweep>.csv (`fakegc
bench --trace-memo N`), and optionally cpython_gc.json
(scripts/bench-cpython-gc.py). Exit 0; 1 when a run is missing or broken.
"""
import csv
import glob
import json
import os
import sys

ALLOCATORS = ["libc", "jemalloc", "arena", "tracking/libc", "guard/libc"]
SWEEPS = ["eager", "periodic"]
COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"]

# The reference figures (fakegc-semantics(7); the CPython one is replaced
# by the live measurement when raw/cpython_gc.json exists).
PYTORCH_CONVERT_NS = 154000.0
CPYTHON_GC_NS = 257.0
TARGETS = {"convert/miss": 300, "convert/hit": 25, "lifecycle/churn": 1000,
           "gc/cycles-1m": 50}


def load(d):
    runs = {}
    for path in sorted(glob.glob(os.path.join(d, "raw", "bench_*.json"))):
        with open(path) as f:
            doc = json.load(f)
        runs[(doc["allocator"], doc["sweep"])] = doc
    traces = {}
    for sweep in SWEEPS:
        path = os.path.join(d, "raw", f"trace_{sweep}.csv")
        if os.path.exists(path):
            with open(path) as f:
                traces[sweep] = [(int(r["lifecycle"]), int(r["memo_storage"]),
                                  int(r["pending"])) for r in csv.DictReader(f)]
    cpy = None
    path = os.path.join(d, "raw", "cpython_gc.json")
    if os.path.exists(path):
        with open(path) as f:
            cpy = json.load(f)
    return runs, traces, cpy


def ns_of(runs, alloc, sweep, name, key="ns_per_op"):
    doc = runs.get((alloc, sweep))
    if not doc:
        return None
    for b in doc["benchmarks"]:
        if b["name"] == name and b.get("available", True) and b.get(key):
            return b[key]
    return None


def cpu_of(runs, alloc, sweep, name):
    return ns_of(runs, alloc, sweep, name, "cpu_ns_per_op")


def cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def load_pairs(d):
    """{round: {"churn": {alloc: doc}, "gc": {alloc: doc}, "cpython": doc}}"""
    pairs = {}
    for path in glob.glob(os.path.join(d, "raw", "pair*_*.json")):
        base = os.path.basename(path)[4:-5]          # "3_churn_libc"
        rnd, kind, who = base.split("_", 2)
        with open(path) as f:
            try:
                doc = json.load(f)
            except ValueError:
                continue
        r = pairs.setdefault(int(rnd), {"churn": {}, "gc": {}, "cpython": None})
        if kind == "gc" and who == "cpython":
            r["cpython"] = doc
        else:
            r[kind][who.replace("+", "/")] = doc
    return pairs


def bench_val(doc, name, key):
    for b in (doc or {}).get("benchmarks", []):
        if b["name"] == name and b.get("available", True) and b.get(key):
            return b[key]
    return None


def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def paired_ratios(pairs):
    """Median over rounds of each ratio, wall and cpu: {key: (wall, cpu, rounds)}."""
    out = {}

    def add(key, num, den):
        out.setdefault(key, ([], []))
        for i, (n, dd) in enumerate(zip(num, den)):
            if n is not None and dd:
                out[key][i].append(n / dd)

    for r in pairs.values():
        ch = r["churn"]
        for key, a in (("tracking_vs_libc_churn", "tracking/libc"),
                       ("jemalloc_vs_libc_churn", "jemalloc")):
            if a in ch and "libc" in ch:
                add(key, [bench_val(ch[a], "lifecycle/churn", k) for k in ("ns_per_op",
                                                                           "cpu_ns_per_op")],
                    [bench_val(ch["libc"], "lifecycle/churn", k) for k in ("ns_per_op",
                                                                           "cpu_ns_per_op")])
        if "libc" in ch:
            add("pytorch_convert_over_miss", [PYTORCH_CONVERT_NS, PYTORCH_CONVERT_NS],
                [bench_val(ch["libc"], "convert/miss", k) for k in ("ns_per_op",
                                                                    "cpu_ns_per_op")])
        cp = r["cpython"]
        if cp:
            for a, doc in r["gc"].items():
                add(f"cpython_gc_over_fakegc_{a}",
                    [cp["ns_per_object"], cp.get("cpu_ns_per_object")],
                    [bench_val(doc, "gc/cycles-1m", k) for k in ("ns_per_op", "cpu_ns_per_op")])
    return {k: (median(w), median(c), len(w)) for k, (w, c) in out.items()}


def write_csv(d, runs):
    cols = ["allocator", "sweep", "name", "ns_per_op", "min_ns", "max_ns", "cpu_ns_per_op",
            "ops", "repeats", "peak_bytes", "target_ns", "available"]
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for (alloc, sweep), doc in sorted(runs.items()):
            for b in doc["benchmarks"]:
                w.writerow([alloc, sweep] + [cell(b.get(c)) for c in cols[2:]])


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v < 1000 else f"{v:.0f}"


# ---- charts -------------------------------------------------------------------
#
# Drawn with Debian's python3-matplotlib (scripts/BENCH.md): log axis
# with minor ticks, the spread of the repeats as whiskers, legends and
# label layout come from the library instead of ~110 hand-written lines.
# Output is deterministic (fixed svg.hashsalt, no date), text stays text.

def pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("svg")
    matplotlib.rcParams.update({"svg.hashsalt": "fakegc-bench", "svg.fonttype": "none",
                                "font.size": 9, "axes.prop_cycle":
                                matplotlib.cycler(color=COLORS)})
    import matplotlib.pyplot as plt
    return plt


def chart_bars(plt, path, runs, sweep):
    names = []
    for doc in runs.values():
        for b in doc["benchmarks"]:
            if b["name"] not in names:
                names.append(b["name"])
    allocs = [a for a in ALLOCATORS if (a, sweep) in runs]
    if not any(ns_of(runs, a, sweep, n) for a in allocs for n in names):
        return
    base = runs.get(("libc", sweep)) or runs[(allocs[0], sweep)]
    fig, ax = plt.subplots(figsize=(12, 5.4), dpi=100)
    w = 0.8 / len(allocs)
    for j, a in enumerate(allocs):
        xs, v, lo, hi = [], [], [], []
        for i, n in enumerate(names):
            m = ns_of(runs, a, sweep, n)
            if not m:
                continue
            xs.append(i + (j - (len(allocs) - 1) / 2) * w)
            v.append(m)
            lo.append(max(0.0, m - (ns_of(runs, a, sweep, n, "min_ns") or m)))
            hi.append(max(0.0, (ns_of(runs, a, sweep, n, "max_ns") or m) - m))
        ax.bar(xs, v, w * 0.92, label=a, yerr=[lo, hi], capsize=1.5,
               error_kw={"elinewidth": 0.7, "ecolor": "#333"})
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("ns per operation (median; whiskers: min-max of the repeats)")
    ax.set_title(f"fakegc bench: ns per operation by allocator (sweep {sweep}, "
                 f"{base.get('build', '?')} build, {base.get('repeats', '?')} repeats"
                 f"{', --quick sizes' if base.get('quick') else ''}; log scale)")
    ax.grid(axis="y", which="both", color="#e4e4e4", lw=0.5)
    ax.set_axisbelow(True)
    ax.legend(ncol=len(allocs), loc="upper left", frameon=False)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def chart_trace(plt, path, traces):
    if not traces:
        return
    top = max(max(r[1] for r in t) for t in traces.values()) or 1
    fig, ax = plt.subplots(figsize=(10, 4.2), dpi=100)
    for sweep, rows in sorted(traces.items()):
        ax.plot([r[0] for r in rows], [r[1] for r in rows], lw=1.3, zorder=3,
                label=f"sweep {sweep}: max {max(r[1] for r in rows)} entries alive")
    ax.set_ylim(-0.03 * top, top * 1.25)       # room for the legend above the peaks
    ax.set_xlabel("lifecycle")
    ax.set_ylabel("storage-memo entries alive")
    ax.set_title("Storage-memo entries alive after each lifecycle (make 4x4, fake, drop both)")
    ax.grid(color="#e4e4e4", lw=0.5)
    ax.legend(loc="upper center", ncol=len(traces), frameon=False)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


# ---- summary ---------------------------------------------------------------

def verdict(r, limit, better):
    ok = r <= limit if better == "le" else r >= limit
    return "met" if ok else "MISSED"


def ratio_line(label, num, den, limit, better, cnum=None, cden=None):
    if num is None or den is None:
        return f"  {label}: not measured", None
    r = num / den
    sign = "<=" if better == "le" else ">="
    line = f"  {label}: wall {r:.2f} {verdict(r, limit, better)}"
    if cnum and cden:
        c = cnum / cden
        line += f", cpu {c:.2f} {verdict(c, limit, better)}"
    return line + f" (target {sign} {limit:g})", r


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build-release/bench"
    runs, traces, cpy = load(d)
    if ("libc", "eager") not in runs:
        print(f"bench-chart: no libc/eager run in {d}/raw", file=sys.stderr)
        return 1
    write_csv(d, runs)
    plt = pyplot()
    if plt:
        chart_bars(plt, os.path.join(d, "ns-per-op.svg"), runs, "eager")
        chart_trace(plt, os.path.join(d, "memo-trace.svg"), traces)
    else:
        print("bench-chart: no matplotlib in this python (apt-get install python3-matplotlib; "
              "run /usr/bin/python3): no charts", file=sys.stderr)

    base = runs[("libc", "eager")]
    names = [b["name"] for b in base["benchmarks"]]
    print(f"fakegc bench summary ({base['build']} build, {base['repeats']} repeats"
          f"{', --quick sizes' if base.get('quick') else ''})\n")
    print("libc, eager:")
    print(f"  {'benchmark':22} {'ns/op':>9} {'cpu ns':>9} {'peak bytes':>12}")
    for b in base["benchmarks"]:
        if not b.get("available", True):
            print(f"  {b['name']:22} {b.get('message', 'not available')}")
            continue
        print(f"  {b['name']:22} {fmt(b['ns_per_op']):>9} {fmt(b.get('cpu_ns_per_op')):>9} "
              f"{b['peak_bytes']:>12}")

    cells = [(a, s) for a in ALLOCATORS for s in SWEEPS if (a, s) in runs]
    print("\nmatrix (ns/op; allocator/sweep):")
    heads = [f"{a.split('/')[0][:5]}/{s[0]}" for a, s in cells]
    print(f"  {'benchmark':22} " + " ".join(f"{h:>8}" for h in heads))
    for n in names:
        print(f"  {n:22} " + " ".join(f"{fmt(ns_of(runs, a, s, n)):>8}" for a, s in cells))
    for a, s in cells:
        have = {b["name"] for b in runs[(a, s)]["benchmarks"]}
        skipped = [n for n in names if n not in have]
        if skipped:
            print(f"  ({a}/{s} skipped: {', '.join(skipped)})")

    results = {"tool": "fakegc", "runs": list(runs.values()), "ratios": {}, "targets": {}}
    busy = sorted(b["ns_per_op"] / b["cpu_ns_per_op"] for b in base["benchmarks"]
                  if b.get("available", True) and b.get("cpu_ns_per_op"))
    busy_median = busy[len(busy) // 2] if busy else 1.0
    results["wall_over_cpu_median"] = busy_median
    print("\nratios (one run on this machine; wall = ns_per_op, cpu = cpu_ns_per_op):")
    if busy_median > 1.15:
        print(f"  WARNING: the machine was busy (libc/eager wall/cpu median {busy_median:.2f}): "
              f"wall-clock ratios are noise, trust the cpu ones")
    lines = []
    ch = "lifecycle/churn"
    for s in SWEEPS:
        i, ci = ns_of(runs, "libc", s, ch), cpu_of(runs, "libc", s, ch)
        t, ct = ns_of(runs, "tracking/libc", s, ch), cpu_of(runs, "tracking/libc", s, ch)
        line, r = ratio_line(f"tracking/libc vs libc, {ch} ({s})", t, i, 1.15, "le", ct, ci)
        lines.append(line)
        results["ratios"][f"tracking_vs_libc_churn_{s}"] = r
        results["ratios"][f"tracking_vs_libc_churn_{s}_cpu"] = ct / ci if ct and ci else None
        j, cj = ns_of(runs, "jemalloc", s, ch), cpu_of(runs, "jemalloc", s, ch)
        line, r = ratio_line(f"jemalloc vs libc, {ch} ({s})", j, i, 1.0, "le", cj, ci)
        lines.append(line)
        results["ratios"][f"jemalloc_vs_libc_churn_{s}"] = r
        results["ratios"][f"jemalloc_vs_libc_churn_{s}_cpu"] = cj / ci if cj and ci else None
    miss = ns_of(runs, "libc", "eager", "convert/miss")
    cmiss = cpu_of(runs, "libc", "eager", "convert/miss")
    line, r = ratio_line(f"PyTorch 1.13 from_real_tensor ({PYTORCH_CONVERT_NS/1000:.0f} us, team's "
                         f"figure) / convert/miss", PYTORCH_CONVERT_NS, miss, 300, "ge",
                         PYTORCH_CONVERT_NS, cmiss)
    lines.append(line)
    results["ratios"]["pytorch_convert_over_miss"] = r
    for a in ("libc", "jemalloc", "arena"):
        gcns, cgc = ns_of(runs, a, "eager", "gc/cycles-1m"), cpu_of(runs, a, "eager", "gc/cycles-1m")
        ref, cref, what = CPYTHON_GC_NS, CPYTHON_GC_NS, "earlier figure"
        if cpy:
            ref, what = cpy["ns_per_object"], f"measured now, Python {cpy['python']}"
            cref = cpy.get("cpu_ns_per_object", ref)
        line, r = ratio_line(f"CPython gc.collect() ({ref:.0f} ns/object, {what}) / "
                             f"gc/cycles-1m ({a})", ref, gcns, 5, "ge", cref, cgc)
        lines.append(line)
        results["ratios"][f"cpython_gc_over_fakegc_{a}"] = r
    results["cpython_gc"] = cpy
    for line in lines:
        print(line)

    pairs = load_pairs(d)
    if pairs:
        pr = paired_ratios(pairs)
        results["paired_ratios"] = {k: {"wall": w, "cpu": c, "rounds": n}
                                    for k, (w, c, n) in pr.items()}
        print(f"\npaired ratios (both sides back to back, median of {len(pairs)} rounds):")
        labels = [("tracking_vs_libc_churn", "tracking/libc vs libc, lifecycle/churn", 1.15, "le"),
                  ("jemalloc_vs_libc_churn", "jemalloc vs libc, lifecycle/churn", 1.0, "le"),
                  ("pytorch_convert_over_miss", "PyTorch 154 us / convert/miss (libc)", 300, "ge")]
        for a in ("libc", "jemalloc", "arena"):
            labels.append((f"cpython_gc_over_fakegc_{a}",
                           f"CPython gc.collect() / gc/cycles-1m ({a})", 5, "ge"))
        for key, label, limit, better in labels:
            if key not in pr:
                continue
            w, c, n = pr[key]
            sign = "<=" if better == "le" else ">="
            ws = f"wall {w:.2f} {verdict(w, limit, better)}" if w is not None else "wall -"
            cs = f"cpu {c:.2f} {verdict(c, limit, better)}" if c is not None else "cpu -"
            print(f"  {label}: {ws}, {cs} (target {sign} {limit:g})")
        cps = [r["cpython"]["ns_per_object"] for r in pairs.values() if r["cpython"]]
        if cps:
            print(f"  (CPython gc.collect(): {median(cps):.0f} ns/object median over the rounds)")

    print("\nissue targets (libc, eager; ns/op wall, cpu):")
    for n, t in TARGETS.items():
        v, c = ns_of(runs, "libc", "eager", n), cpu_of(runs, "libc", "eager", n)
        results["targets"][n] = {"target_ns": t, "ns_per_op": v, "cpu_ns_per_op": c,
                                 "met": v is not None and v <= t,
                                 "met_cpu": c is not None and c <= t}
        wv = "met" if v is not None and v <= t else "MISSED"
        cv = "met" if c is not None and c <= t else "MISSED"
        print(f"  {n:22} wall {fmt(v):>7} {wv:6}  cpu {fmt(c):>7} {cv:6}  (<= {t})")
    l1k = ns_of(runs, "libc", "eager", "weaktable/lookup-1k")
    l1m = ns_of(runs, "libc", "eager", "weaktable/lookup-1m")
    if l1k and l1m:
        print(f"  weaktable/lookup-1m    {fmt(l1m):>8}  ({l1m/l1k:.1f}x lookup-1k: random order "
              f"over 1M keys misses the caches)")
    for s, rows in sorted(traces.items()):
        print(f"\nmemo trace, sweep {s}: storage memo max {max(r[1] for r in rows)} entries "
              f"alive over {len(rows)} lifecycles, {sum(1 for r in rows if r[1] == 0)} "
              f"lifecycles end with 0")
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwritten: {d}/results.csv, results.json"
          f"{', ns-per-op.svg, memo-trace.svg' if plt else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
