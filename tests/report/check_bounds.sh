#!/bin/sh
# check_bounds.sh FAKEGC SRC - a failing suite's outputs stay bounded and
# still state every total:
#   - `run --inject strong-memo scenarios/`: at most 60 lines of text per
#     failing scenario (-v lists everything), JSON under 5 MB, failures
#     that report the same objects refer to the first, groups capped with
#     their total, every failure's objects_total stated;
#   - `diff --format markdown` under 60,000 characters, saying what it left
#     out (a synthetic 600-scenario regression makes it cut);
#   - a limit that stops a leak still names groups and the biggest retainer;
#   - --objects still streams every object.
set -u
fakegc=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-bounds.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$src" || exit 1

"$fakegc" run --no-color --inject strong-memo --json "$tmp/run.json" scenarios/ >"$tmp/run.txt"
[ $? -eq 1 ] || bad "the injected suite should fail (exit 1)"
# -v lists everything (only its first 2000 lines are kept: SIGPIPE ends it)
"$fakegc" run --no-color -v --inject strong-memo scenarios/recorded/views.scn 2>/dev/null |
    head -n 2000 >"$tmp/v.txt"

python3 - "$tmp" <<'PY' || fail=1
import json, os, re, sys
tmp = sys.argv[1]
ok = True
def bad(m):
    global ok
    ok = False
    print("FAIL:", m)
text = open(f"{tmp}/run.txt").read().split("\n")
# the details of each failing scenario: from "FILE:" to the blank line
blocks, cur = {}, None
for ln in text:
    if re.match(r"^\S.*\.scn:$", ln):
        cur = ln[:-1]; blocks[cur] = []
    elif cur is not None and ln == "":
        cur = None
    elif cur is not None:
        blocks[cur].append(ln)
rep = json.load(open(f"{tmp}/run.json"))
failing = [s for s in rep["scenarios"] if s["status"] in ("fail", "error")]
if len(blocks) != len(failing):
    bad(f"{len(blocks)} detail blocks for {len(failing)} failing scenarios")
for f, b in blocks.items():
    if len(b) > 60:
        bad(f"{f}: {len(b)} lines of details, more than 60")
views = blocks.get("scenarios/recorded/views.scn", [])
if not any(re.search(r"\.\.\. and \d+ more failing expectations", l) for l in views):
    bad("views.scn: no line counting the failures left out")
if not any(re.search(r"the same \d+ objects? as line \d+, above", l)
           for b in blocks.values() for l in b):
    bad("no failing scenario refers shared objects to an earlier line")
vlines = open(f"{tmp}/v.txt").read().count("\n")
if vlines < 1000:
    bad(f"-v lists only {vlines} lines of views.scn")
size = os.path.getsize(f"{tmp}/run.json")
if size >= 5 * 1024 * 1024:
    bad(f"JSON of {size} bytes, 5 MB or more")
same = capped = 0
for s in failing:
    lines = {x["line"] for x in s["failures"]}
    for x in s["failures"]:
        if "objects_total" not in x:
            bad(f"{s['file']}:{x['line']}: no objects_total")
            continue
        n = sum(g["count"] for g in x["groups"])
        if n > x["objects_total"]:
            bad(f"{s['file']}:{x['line']}: groups count {n} > objects_total {x['objects_total']}")
        if "same_objects_as" in x:
            same += 1
            if x["same_objects_as"] not in lines or x["groups"]:
                bad(f"{s['file']}:{x['line']}: bad same_objects_as")
        if "groups_total" in x:
            capped += 1
            if not len(x["groups"]) < x["groups_total"]:
                bad(f"{s['file']}:{x['line']}: groups_total {x['groups_total']}")
        elif "objects_omitted" not in x and "same_objects_as" not in x and x["objects_total"] and not x["groups"]:
            bad(f"{s['file']}:{x['line']}: objects without groups or a reason why")
if not same:
    bad("no failure refers to another's objects")
print(f"ok: {len(blocks)} failing scenarios, at most {max(map(len, blocks.values()))} lines each; "
      f"JSON {size} bytes; {same} shared, {capped} capped; -v {vlines} lines")
# a regression in 600 scenarios for the markdown diff
base = json.load(open(f"{tmp}/run.json"))
new = json.loads(json.dumps(base))
bs, ns = [], []
for i in range(600):
    s = json.loads(json.dumps(failing[i % len(failing)]))
    s["file"] = f"synthetic/{i}.scn"
    ns.append(s)
    b = json.loads(json.dumps(s)); b["status"] = "pass"; b["failures"] = []; b["retained"] = []
    b["expectations"]["failed"] = 0
    bs.append(b)
base["scenarios"], new["scenarios"] = bs, ns
json.dump(base, open(f"{tmp}/base600.json", "w"))
json.dump(new, open(f"{tmp}/new600.json", "w"))
sys.exit(0 if ok else 1)
PY

"$fakegc" run --no-color --json "$tmp/clean.json" scenarios/ >/dev/null 2>&1
"$fakegc" diff --format markdown "$tmp/clean.json" "$tmp/run.json" >"$tmp/suite.md"
"$fakegc" diff --format markdown "$tmp/base600.json" "$tmp/new600.json" >"$tmp/600.md"
python3 - "$tmp" <<'PY' || fail=1
import re, sys
tmp = sys.argv[1]
ok = True
for name in ("suite.md", "600.md"):
    t = open(f"{tmp}/{name}", encoding="utf-8").read()
    if len(t) >= 60000:
        ok = False
        print(f"FAIL: {name}: {len(t)} characters, 60,000 or more")
t = open(f"{tmp}/600.md", encoding="utf-8").read()
m = re.search(r"\*\*(\d+) more scenarios? left out\*\* \((\d+) of them regressed", t)
shown = t.count("\n### ")
if not m:
    ok = False
    print("FAIL: 600.md does not say what it left out")
elif shown + int(m.group(1)) != 600:
    ok = False
    print(f"FAIL: 600.md shows {shown} and leaves out {m.group(1)}: not 600")
else:
    print(f"ok: markdown {len(t)} characters, {shown} scenarios shown, {m.group(1)} left out")
sys.exit(0 if ok else 1)
PY

# a limit stops a leak: groups and the biggest retainer of what was alive
printf 'm = fake_mode()\nrepeat 100000\n  t = empty(1)\n  f = m.fake(t)\n  del f, t\nend\n' >"$tmp/leak.scn"
"$fakegc" run --no-color --inject strong-memo --max-objects 20000 --json "$tmp/leak.json" \
    --objects "$tmp/objects.jsonl" "$tmp/leak.scn" >"$tmp/leak.txt"
grep -q "LimitExceeded: more than 20000 live objects (--max-objects)" "$tmp/leak.txt" ||
    bad "limit: the limit is not named"
grep -q "biggest: MetaConverter#[0-9]* retains" "$tmp/leak.txt" || bad "limit: no biggest retainer"
grep -q "held only by a memo" "$tmp/leak.txt" || bad "limit: no memo-held group"
total=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['scenarios'][0]['failures'][0]['objects_total'])" "$tmp/leak.json")
[ "${total:-0}" -gt 20000 ] || bad "limit: objects_total $total"
streamed=$(wc -l <"$tmp/objects.jsonl")
[ "$streamed" -ge "${total:-1}" ] || bad "--objects streamed $streamed of $total objects"
[ $fail -eq 0 ] && echo "ok: limit reported $total objects; --objects streamed $streamed"
exit $fail
