#!/bin/sh
# check_objects.sh FAKEGC SRCDIR - `--objects FILE` streams every reported
# object (one fakegc-objects/1 line each, as many as the report's totals
# say), the same with --jobs; `--dot FILE` over several failing scenarios
# is one graph with a titled cluster each, which `dot -Tsvg` renders whole.
set -u
fakegc=$1 src=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. a leak of 3000 lifecycles: two failing memo expectations and teardown
cat > "$t/leak.scn" <<'SCN'
m = fake_mode()
repeat 3000
t = empty(1)
f = m.fake(t)
del f, t
end
expect m.memo_meta == 0
expect m.memo_storage == 0
SCN
"$fakegc" run -q --inject strong-memo --format json --output "$t/r.json" \
    --objects "$t/o.jsonl" "$t/leak.scn"
[ $? -eq 1 ] || fail "leak run: expected exit 1"
/usr/bin/python3 - "$t/r.json" "$t/o.jsonl" "$src/src/report/schema/fakegc-objects-1.schema.json" <<'PY' || exit 1
import collections, json, sys
import jsonschema
rep = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[3])))
lines = [json.loads(l) for l in open(sys.argv[2])]
for i, l in enumerate(lines):
    errs = list(v.iter_errors(l))
    assert not errs, f"line {i + 1}: {errs[0].message}"
sc = rep["scenarios"][0]
want = collections.Counter()
for f in sc["failures"]:
    if f.get("objects_total"):
        want[f["line"]] = f["objects_total"]
if sc.get("retained_total"):
    want[0] = sc["retained_total"]
got = collections.Counter(l["line"] for l in lines)
assert got == want, f"objects per line: streamed {dict(got)}, report totals {dict(want)}"
assert want[7] >= 3000, f"expected >= 3000 objects behind line 7, got {want[7]}"
ids = [l["object"]["id"] for l in lines if l["line"] == 7]
assert len(ids) == len(set(ids)), "an object streamed twice for one failure"
print(f"ok: {len(lines)} lines, per line {dict(got)}; the JSON report keeps "
      f"{sum(len(f.get('objects', [])) for f in sc['failures'])} examples")
PY

# 1b. the text report: both failures are held by one converter, whose
# biggest-retainer line and path are printed once, then said "as above"
"$fakegc" run -q --inject strong-memo --no-color "$t/leak.scn" > "$t/r.txt"
[ $? -eq 1 ] || fail "leak run (text): expected exit 1"
full=$(grep -cE 'biggest: MetaConverter#[0-9]+ retains [^,]+: [0-9]+ objects' "$t/r.txt")
above=$(grep -cE 'biggest: MetaConverter#[0-9]+ retains .*, as above$' "$t/r.txt")
paths=$(grep -cE '^ +m -> FakeTensorMode#[0-9]+ -> FakeTensorConverter#[0-9]+ -> MetaConverter#[0-9]+$' "$t/r.txt")
[ "$full" -eq 1 ] && [ "$above" -ge 1 ] && [ "$paths" -eq 1 ] ||
    fail "biggest retainer: $full full line(s) (want 1), $above 'as above' (want >= 1), $paths path line(s) (want 1)"

# 2. the suite's memo scenarios, in process and with --jobs 2
"$fakegc" run -q --inject strong-memo --objects "$t/a.jsonl" --dot "$t/a.dot" \
    "$src/scenarios/memo" >/dev/null
[ $? -eq 1 ] || fail "memo suite: expected exit 1"
"$fakegc" run -q -j2 --inject strong-memo --objects "$t/b.jsonl" --dot "$t/b.dot" \
    "$src/scenarios/memo" >/dev/null
[ $? -eq 1 ] || fail "memo suite -j2: expected exit 1"
cmp -s "$t/a.jsonl" "$t/b.jsonl" || fail "--objects differs with --jobs 2"
[ -s "$t/a.jsonl" ] || fail "--objects is empty"
cmp -s "$t/a.dot" "$t/b.dot" || fail "--dot differs with --jobs 2"
n=$(grep -c '^digraph ' "$t/a.dot")
[ "$n" -eq 1 ] || fail "--dot has $n digraphs, expected one"
c=$(grep -c 'subgraph cluster_' "$t/a.dot")
s=$(cut -d'"' -f8 "$t/a.jsonl" | sort -u | wc -l)
[ "$c" -eq "$s" ] || fail "--dot has $c clusters for $s scenarios with objects"
[ "$c" -ge 3 ] || fail "only $c clusters"
dot -Tsvg "$t/a.dot" -o "$t/a.svg" 2>"$t/dot.err" || fail "dot -Tsvg: $(cat "$t/dot.err")"
[ "$(grep -c '<svg' "$t/a.svg")" -eq 1 ] || fail "the SVG is not one picture"
echo "ok: one graph, $c clusters, $(wc -l < "$t/a.jsonl") object lines"
