#!/usr/bin/env bash
# check_html.sh FAKEGC BUILD_DIR - the HTML pages in a real browser: a clean
# run, a big leak (strong-memo over tests/html/leak.scn: about 1.2M objects),
# a 5M-object leak (tests/html/leak5m.scn: its live objects counted from the
# JSON, its wall time and peak RSS printed), the diff between the first two, a recorded leaking program (fakegc record --html)
# and a stress reproducer's run (fakegc stress --html), each opened in headless Chromium by
# tests/html/browser.py (console errors, network fetches, tree expansion,
# jump to peak, range selection, load time and size), with a screenshot of
# each in BUILD_DIR/html/. Exit 77 (skipped) only when Chromium,
# chromedriver or python3-selenium is absent.
set -uo pipefail
fakegc=$1
out=$2/html
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null ||
   ! "$py" -c 'import selenium' 2>/dev/null; then
    echo "SKIP: chromium, chromedriver or python3-selenium is not installed"
    exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.html "$out"/*.json "$out"/*.png
scn=$here/leak.scn
"$fakegc" run "$scn" -q --html "$out/clean.html" --format json --output "$out/clean.json"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: the clean run exited $rc"; exit 1; }
"$fakegc" run "$scn" -q --inject strong-memo --html "$out/leak.html" --format json \
    --output "$out/leak.json"
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the leaking run exited $rc, not 1"; exit 1; }
"$fakegc" diff "$out/clean.json" "$out/leak.json" --html "$out/diff.html" >/dev/null
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the diff exited $rc, not 1 (a regression)"; exit 1; }
# the dominator tree counts what the scenario made: m's 150000 conversions
# leave 300000 tensors (real and meta) behind its memo, m2's 50000 leave 100000
for want in "300000 x tensor (tensor) via tensor_memo" "100000 x tensor (tensor) via tensor_memo"; do
    grep -qF "$want" "$out/leak.html" || { echo "FAIL: the page's tree lacks '$want'"; exit 1; }
done
# a failing growth() names groups that cover its count, every kind that grew
"$py" - "$out/leak.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
f = [x for x in s["failures"] if x["text"].startswith('expect growth("start")')][0]
covered = sum(g["count"] for g in f["groups"])
kinds = sorted({g["kind"] for g in f["groups"]})
print("growth: %d objects, groups cover %d, kinds %s" % (f["objects_total"], covered, kinds))
if str(f["actual"]) != "1200000" or covered != 1200000 or kinds != ["finalizer", "storage", "tensor"]:
    sys.exit("FAIL: the growth failure's groups do not cover its 1200000 objects of 3 kinds")
PY
# the biggest retainer of what a failing expectation counts dominates it:
# m2's objects (line 23) are held through m2's MetaConverter, not m's bigger one
"$py" - "$out/leak.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
for f in s["failures"][:2]:
    b = [(x["type"], x["path"].split(" ->")[0]) for x in f["biggest"]]
    want = [("MetaConverter", "m" if f["line"] == 22 else "m2")]
    print("line %d: biggest retainers %s" % (f["line"], b))
    if b != want:
        sys.exit("FAIL: line %d's biggest retainers are %s, not %s" % (f["line"], b, want))
PY
sed -n '/line 23: /,/<table/p' "$out/leak.html" | grep -qF "Biggest retainer: <code>meta_converter#8<" ||
    { echo "FAIL: the page's line 23 does not name m2's MetaConverter#8"; exit 1; }
grep -qF "300000 x finalizer" "$out/leak.html" ||
    { echo "FAIL: the page's groups lack the growth's 300000 finalizers"; exit 1; }
# the 5M-object leak: counted from the report, not trusted from the name
# (the dominator tree's object count is every live object at the failing
# expectation; the growth failure's, what the scenario added since "start")
big=$here/leak5m.scn
/usr/bin/time -f '%e s %M KB' -o "$out/leak5m.time" "$fakegc" run "$big" -q \
    --inject strong-memo --html "$out/leak5m.html" --format json \
    --output "$out/leak5m.json"
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the 5M-object leak exited $rc, not 1"; exit 1; }
echo "5M-object leak run: $(tail -n1 "$out/leak5m.time") (wall, peak RSS)"
"$py" - "$out/leak5m.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
s = r["scenarios"][0]
live = s["dtree"]["objects"]
grown = max(f["objects_total"] for f in s["failures"])
kinds = max((sum(k["now"] for k in f["kinds"]) for f in s["failures"] if f.get("kinds")), default=0)
print("5M leak: %d live objects in the dominator tree, %d grown, %d live by kind, stopped %r"
      % (live, grown, kinds, r["stopped"]))
if r["stopped"] or min(live, grown, kinds) < 5000000:
    sys.exit("FAIL: the 5M-object leak has fewer than 5000000 live objects (or was stopped)")
PY
# a leak stopped by --max-objects: its page still groups what was alive
# then and names the biggest retainer
printf 'm = fake_mode()\nrepeat 100000\n  t = empty(1)\n  f = m.fake(t)\n  del f, t\nend\n' \
    >"$out/limit.scn"
"$fakegc" run -q --inject strong-memo --max-objects 20000 --html "$out/limit.html" \
    "$out/limit.scn" >/dev/null
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the run past --max-objects exited $rc, not 1"; exit 1; }
for want in "LimitExceeded: more than 20000 live objects" "Biggest retainer: <code>meta_converter#" \
    '<tr class="grp"><td class="n">3332 x tensor'; do
    grep -qF "$want" "$out/limit.html" || { echo "FAIL: the limit's page lacks '$want'"; exit 1; }
done
# run --jobs: the workers hand their trees back in the JSON; the same tree
"$fakegc" run "$scn" -q --inject strong-memo --jobs 2 --html "$out/jobs.html" >/dev/null
for want in "300000 x tensor (tensor) via tensor_memo" "100000 x tensor (tensor) via tensor_memo"; do
    grep -qF "$want" "$out/jobs.html" || { echo "FAIL: the --jobs page's tree lacks '$want'"; exit 1; }
done
# --dot at scale: one node per group, with its count and bytes in MiB
"$fakegc" run "$scn" -q --inject strong-memo --dot "$out/leak.dot" >/dev/null
for want in "150000 x tensor f32[4, 4] cpu" "36.6 MiB in all" "kept 2 of 2 groups"; do
    grep -qF "$want" "$out/leak.dot" || { echo "FAIL: the DOT lacks '$want'"; exit 1; }
done
if command -v dot >/dev/null && command -v rsvg-convert >/dev/null; then
    dot -Tsvg "$out/leak.dot" -o "$out/leak-dot.svg" && rsvg-convert -o "$out/leak-dot.png" \
        "$out/leak-dot.svg" || { echo "FAIL: graphviz or rsvg-convert rejected the DOT"; exit 1; }
fi
# a recorded leaking program (fakegc record --html; without torch, its
# shipped recording): the verdict, its classes and holders, program lines
root=$(cd "$here/../.." && pwd)
if "$py" -c 'import torch' 2>/dev/null; then
    "$fakegc" record -q --html "$out/record.html" \
        "$root/scripts/record/examples/leak_accumulating.py" >/dev/null 2>"$out/record.err"
else
    echo "note: $py has no torch: the shipped recording of leak_accumulating.py instead"
    "$fakegc" run -q --compat pytorch-1.13 --html "$out/record.html" \
        "$root/scenarios/recorded/leaks/leak_accumulating.scn" >/dev/null
fi
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the recorded leak exited $rc, not 1"; cat "$out/record.err"; exit 1; }
# the page is on the program (and on the recording when -o keeps it), never
# on record's temporary .scn
if "$py" -c 'import torch' 2>/dev/null; then
    prog=$root/scripts/record/examples/leak_accumulating.py
    grep -qF "<title>fakegc: FAIL $prog</title>" "$out/record.html" ||
        { echo "FAIL: the record page's title is not on $prog:"; grep -o '<title>.*</title>' \
          "$out/record.html"; exit 1; }
    "$fakegc" record -q -o "$out/kept.scn" --html "$out/record-kept.html" "$prog" \
        >/dev/null 2>&1
    grep -qF "<title>fakegc: FAIL $prog (recording $out/kept.scn)</title>" \
        "$out/record-kept.html" || { echo "FAIL: the record -o page's title:"; \
        grep -o '<title>.*</title>' "$out/record-kept.html"; exit 1; }
    if grep -l 'fakegc-record-' "$out/record.html" "$out/record-kept.html"; then
        echo "FAIL: a record page names record's temporary .scn"; exit 1
    fi
fi
# the list the program keeps its fakes in is one tree node, not 100
grep -qF "100 x tensor (tensor) via root KEEP[]" "$out/record.html" ||
    { echo "FAIL: the record page's tree does not group KEEP's 100 fakes"; exit 1; }
# a stress failure: the page of its shrunk reproducer's run, path printed
"$fakegc" stress -q --inject strong-memo --steps 2000 --out-dir "$out/stress" \
    --html "$out/stress.html" >/dev/null 2>"$out/stress.err"
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: stress exited $rc, not 1"; cat "$out/stress.err"; exit 1; }
grep -qF "the reproducer's page: $out/stress.html" "$out/stress.err" ||
    { echo "FAIL: stress did not print the page's path"; cat "$out/stress.err"; exit 1; }
# the page is written whole or not at all: an unwritable target leaves nothing
if "$fakegc" run "$scn" -q --html /nonexistent-dir/x.html >/dev/null 2>&1; then
    echo "FAIL: --html into a missing folder succeeded"; exit 1
fi
rm -rf "$out/stress-bad"
if "$fakegc" stress -q --inject strong-memo --steps 2000 --out-dir "$out/stress-bad" \
    --html /nonexistent-dir/x.html >/dev/null 2>&1 || [ $? -ne 2 ]; then
    echo "FAIL: stress --html into a missing folder did not exit 2"; exit 1
fi
exec "$py" "$here/browser.py" "$out" clean="$out/clean.html" leak="$out/leak.html" \
    leak5m="$out/leak5m.html" \
    diff="$out/diff.html" record="$out/record.html" stress="$out/stress.html" \
    leak-jobs="$out/jobs.html"
