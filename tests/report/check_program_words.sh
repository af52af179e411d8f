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
python3 - "$o/r.json" <<'EOF' || fail "repeat: json kinds"
import json, sys
fs = json.load(open(sys.argv[1]))["scenarios"][0]["failures"]
assert fs and all(x.get("kind") == "growth" and x["program_file"] == "resnet_params.py"
                  for x in fs), fs[:2]
EOF
echo "check_program_words: ok"
