#!/bin/sh
# check_program_words.sh FAKEGC OUT_DIR - a recording's failures in the
# program's words: a fidelity failure (one expectation of a committed
# recording made wrong) leads with the program's file:line, the recording's
# line a detail, in text, JSON (fields), JUnit, TAP, SARIF and HTML, in one
# process and through --jobs workers; --repeat's growth of a recording is a
# growth failure at the program's line, under its own heading, not under
# fidelity's.
set -u
f=$1
o=$2/program_words
mkdir -p "$o"
fail() { echo "check_program_words: FAIL: $*"; exit 1; }

# --- a fidelity failure: the first memo_fake expectation made 2 (line 22)
s=$o/leak_reachable.scn
sed '22s/expect m1.memo_fake == 1/expect m1.memo_fake == 2/' \
    scenarios/recorded/leak_reachable.scn > "$s"
grep -q '^expect m1.memo_fake == 2$' "$s" || fail "the recording changed: line 22 is not it"
"$f" run --no-color --json "$o/f.json" --junit "$o/f.xml" --tap "$o/f.tap" \
    --sarif "$o/f.sarif" --html "$o/f.html" "$s" > "$o/f.txt"
[ $? -eq 1 ] || fail "the wrong expectation fails the run"
t=$(cat "$o/f.txt")
echo "$t" | grep -qx "  fidelity: the model did not show what PyTorch showed at these lines (the model is wrong):" ||
    fail "text: no fidelity heading: $t"
echo "$t" | grep -qx "  leak_reachable.py:13: expect m1.memo_fake == 2 (the recording's line 22)" ||
    fail "text: the failure does not lead with the program's line: $t"
echo "$t" | grep -q "leak_reachable.scn:22" && fail "text: the recording's line leads: $t"
python3 - "$o/f.json" <<'EOF' || fail "json: the failure's fields"
import json, sys
fl = json.load(open(sys.argv[1]))["scenarios"][0]["failures"][0]
want = {"line": 22, "kind": "fidelity", "program_file": "leak_reachable.py", "program_line": 13}
got = {k: fl.get(k) for k in want}
assert got == want, "got %s, want %s" % (got, want)
EOF
/usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-report-3.schema.json \
    "$o/f.json" > /dev/null || fail "json: not the schema's"
grep -q 'message="leak_reachable.py:13: expect m1.memo_fake == 2 (the recording&apos;s line 22) (actual: 1)"' \
    "$o/f.xml" || fail "junit: $(grep '<failure' "$o/f.xml")"
grep -A3 '^  failures:' "$o/f.tap" | tr -d '\n' |
    grep -q '    - program_file: "leak_reachable.py"      program_line: 13      line: 22' ||
    fail "tap: $(grep -A4 '^  failures:' "$o/f.tap")"
python3 - "$o/f.sarif" <<'EOF' || fail "sarif: the failure's location"
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["runs"][0]["results"]
     if x["ruleId"] == "fakegc/expect/memo_fake"][0]
loc = r["locations"][0]["physicalLocation"]
got = (loc["artifactLocation"]["uri"], loc["region"].get("startLine"))
assert got == ("leak_reachable.py", 13), got
assert r["message"]["text"].endswith("(the recording's line 22)"), r["message"]["text"]
EOF
grep -q '<li><code>leak_reachable.py:13</code> expect m1.memo_fake == 2 <small>(the recording&apos;s line 22)</small>' \
    "$o/f.html" || fail "html: $(grep -o '<ul class="fails">.\{0,300\}' "$o/f.html")"
grep -q '<li class="fkind"><b>fidelity: ' "$o/f.html" || fail "html: no fidelity heading"
for w in 'Leak classes (objects behind leak_reachable.py:13 <small>(the recording&apos;s line 22)</small>)' \
         '<h4>leak_reachable.py:13 <small>(the recording&apos;s line 22)</small>: expect m1.memo_fake == 2' \
         'the whole heap at leak_reachable.py:13 <small>(the recording&apos;s line 22)</small></h3>'; do
    grep -qF "$w" "$o/f.html" || fail "html: not [$w]"
done
# through a worker (the record comes back as JSON): the same lines
cp "$s" "$o/other.scn"
"$f" run --no-color --jobs 2 "$s" "$o/other.scn" > "$o/j.txt"
[ "$(grep -c "^  leak_reachable.py:13: expect m1.memo_fake == 2 (the recording's line 22)$" "$o/j.txt")" -eq 2 ] ||
    fail "--jobs 2: $(cat "$o/j.txt")"

# --- --repeat: a recording's growth is a leak at the program's line
"$f" run --no-color --json "$o/r.json" --repeat 3 scenarios/recorded/resnet_params.scn > "$o/r.txt"
t=$(cat "$o/r.txt")
echo "$t" | grep -q "fidelity:" && fail "repeat: growth under the fidelity heading: $t"
echo "$t" | grep -A1 -x "  growth: what these lines made grows with the rounds of --repeat (a leak, not the model's fault):" |
    grep -qx "  resnet_params.py:10: --repeat 3" || fail "repeat: no growth heading before it: $t"
echo "$t" | grep -q "actual: 3 fake_mode objects created at resnet_params.py:10 retained after 3 rounds" ||
    fail "repeat: the growth's site: $t"
/usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-report-3.schema.json \
    "$o/r.json" > /dev/null || fail "repeat: json not the schema's"
python3 - "$o/r.json" <<'EOF' || fail "repeat: json kinds"
import json, sys
fs = json.load(open(sys.argv[1]))["scenarios"][0]["failures"]
assert fs and all(x.get("kind") == "growth" and x["program_file"] == "resnet_params.py"
                  for x in fs), fs[:2]
EOF
# --- the verdict is said at the program's true end (verdict(ended_at=, ended=))
grep -q "^  verdict at the program's end, leak_reachable.py:15, exit 0 (" "$o/f.txt" ||
    fail "the verdict's end: $(grep verdict "$o/f.txt")"
sed 's/ended_at="leak_reachable.py:15"/ended_at="leak_reachable.py"/' \
    scenarios/recorded/leak_reachable.scn > "$o/bad_end.scn"
"$f" run --no-color "$o/bad_end.scn" > "$o/bad_end.txt"
[ $? -ne 0 ] || fail "a malformed ended_at passes"
grep -q 'ended_at "leak_reachable.py": expected "FILE:LINE"' "$o/bad_end.txt" ||
    fail "a malformed ended_at: $(cat "$o/bad_end.txt")"

# --- diff: each leak by its one line, new, gone and changed, text and markdown
"$f" run --json "$o/acc.json" scenarios/recorded/leaks/leak_accumulating.scn > /dev/null
python3 - "$o/acc.json" "$o/acc_base.json" <<'EOF' || fail "diff: the base report"
import json, sys
d = json.load(open(sys.argv[1]))
gs = d["scenarios"][0]["verdict"]["groups"]
assert (gs[0]["count"], gs[0]["site"]) == (100, "leak_accumulating.py:11"), gs[0]
gs[0]["count"] = 50                        # the fakes' leak half as big in base
gs[:] = [g for g in gs if g["class"] != "still reachable"]   # the mode's leak new now
gs.append(dict(gs[0], count=7, site="leak_accumulating.py:3"))   # a leak gone now
json.dump(d, open(sys.argv[2], "w"))
EOF
for fmt in text markdown; do
    "$f" diff --no-color --format $fmt "$o/acc_base.json" "$o/acc.json" > "$o/diff.$fmt"
    grep -q "^ *+ leak: 100 fake tensors in KEEP, +2 per round at leak_accumulating.py:11 (was: 50 fake tensors in KEEP, +1 per round at leak_accumulating.py:11)$" "$o/diff.$fmt" ||
        fail "diff $fmt: the changed leak: $(cat "$o/diff.$fmt")"
    grep -q "^ *+ new leak: 1 mode in mode, still reachable, at leak_accumulating.py:17$" "$o/diff.$fmt" ||
        fail "diff $fmt: the new leak: $(cat "$o/diff.$fmt")"
    grep -q "^ *- leak gone: 7 fake tensors in KEEP, +[0-9.]* per round at leak_accumulating.py:3$" "$o/diff.$fmt" ||
        fail "diff $fmt: the leak gone: $(cat "$o/diff.$fmt")"
done
# a recording's new or fixed failure in the program's words, text and page
"$f" run --json "$o/ok.json" scenarios/recorded/leak_reachable.scn > /dev/null
"$f" run --json "$o/bad.json" "$o/leak_reachable.scn" > /dev/null
sed -i 's#"file": "[^"]*leak_reachable.scn"#"file": "leak_reachable.scn"#' "$o/ok.json" "$o/bad.json"
"$f" diff --no-color --html "$o/diff.html" "$o/ok.json" "$o/bad.json" > "$o/diff.fail"
grep -q "^  + new failure at leak_reachable.py:13 (the recording's line 22): expect m1.memo_fake == 2  actual: 1$" \
    "$o/diff.fail" || fail "diff: the new failure: $(cat "$o/diff.fail")"
grep -qF '+ new failure</span> leak_reachable.py:13 <small>(the recording&apos;s line 22)</small>: <code>expect' \
    "$o/diff.html" || fail "diff --html: the new failure"
"$f" diff --no-color "$o/bad.json" "$o/ok.json" > "$o/diff.fixed"
grep -q "^  - fixed at leak_reachable.py:13 (the recording's line 22): expect m1.memo_fake == 2$" \
    "$o/diff.fixed" || fail "diff: the fixed failure: $(cat "$o/diff.fixed")"
# the leak's line comes before its groups
grep -A1 "+ leak: 100 fake tensors" "$o/diff.text" |
    grep -q "+ accumulating: 100 fake tensors made at leak_accumulating.py:11" ||
    fail "diff: the leak's line before its group: $(cat "$o/diff.text")"
echo "check_program_words: ok"
