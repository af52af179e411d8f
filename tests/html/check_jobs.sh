#!/usr/bin/env bash
# check_jobs.sh FAKEGC BUILD_DIR - `run --jobs 2` (each scenario in a
# worker, its report handed back as JSON) writes the same page and JSON as
# `--jobs 1` (in one process): the same summary, groups with their biggest
# retainer, dominator tree and per-kind growth table between checkpoints.
# Fails when the hand-off drops any of them.
set -uo pipefail
fakegc=$1
out=$2/html-jobs
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
# tests/html/leak.scn at a thousandth of its size (two workers: a.scn, and
# b.scn whose second expectation repeats the first, so that its JSON refers
# to the first's objects by "same_objects_as" instead of repeating them)
sed 's/150_000/150/; s/50_000/50/' "$here/leak.scn" >"$out/a.scn"
sed 's/^expect m2.memo_meta == 0/expect m.memo_meta == 0/' "$out/a.scn" >"$out/b.scn"
for j in 1 2; do
    "$fakegc" run -q --inject strong-memo --jobs $j --html "$out/j$j.html" --format json \
        --output "$out/j$j.json" "$out/a.scn" "$out/b.scn" >/dev/null
    rc=$?
    [ "$rc" -eq 1 ] || { echo "FAIL: --jobs $j exited $rc, not 1"; exit 1; }
done
exec /usr/bin/python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
bad = []
def scen(j):
    r = json.load(open("%s/j%d.json" % (out, j)))
    for s in r["scenarios"]:
        for k in ("wall_ms", "footprint_bytes"):   # the clock and the allocator's pages
            s["stats"].pop(k, None)
    return r["scenarios"]
a, b = scen(1), scen(2)
for s1, s2 in zip(a, b):
    for k in sorted(set(s1) | set(s2)):
        if s1.get(k) != s2.get(k):
            bad.append("JSON %s: %r differs: -j1 %.200s, -j2 %.200s" % (s1["file"], k, s1.get(k), s2.get(k)))
# not vacuous: what is compared is there
s = a[0]
if not s.get("kinds_live") or not all(f["biggest"] for f in s["failures"]):
    bad.append("-j1 JSON lacks kinds_live or a failure's biggest retainers")
if a[1]["failures"][1].get("same_objects_as") != 22:
    bad.append("b.scn's line 23 does not refer to line 22's objects")
def section(j, name):
    t = open("%s/j%d.html" % (out, j)).read()
    m = re.search(r'<section id="%s">(.*?)</section>' % name, t, re.S)
    return m.group(1) if m else ""
for name, want in (("summary", "FAIL"), ("groups", "Biggest retainer: <code>meta_converter#8<"),
                   ("tree", "x tensor (tensor) via tensor_memo"),
                   ("growth", '<table class="growth">')):
    x, y = section(1, name), section(2, name)
    if want not in x:
        bad.append("the -j1 page's %s lacks %r" % (name, want))
    if x != y:
        i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        bad.append("the pages' %s differ at %d: -j1 %r, -j2 %r" % (name, i, x[i - 40:i + 80],
                                                                  y[i - 40:i + 80]))
    else:
        print("%s: the same in -j1 and -j2 (%d bytes)" % (name, len(x)))
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad else 0)
PY
