#!/bin/sh
# check_reports.sh FAKEGC SOURCE_DIR - real reports of every kind (run pass,
# fail and parse error; stress pass and fail; oom; bench; diff) validated
# against src/report/schema/*.schema.json with python3-jsonschema, JUnit with
# xmllint, TAP with prove; a parse error leaves complete reports (an old one
# is replaced, never emptied); several formats from one run. Reports that
# break the contract (a numeric actual as a string, no schema id, stress
# counts of 0) must be rejected, so this test can fail.
set -u
fakegc=$1
src=$2
sch=$src/src/report/schema
val="/usr/bin/python3 $src/tests/report/validate.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-reports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "check_reports: FAIL: $*"; fails=$((fails + 1)); }
cd "$src" || exit 2

# run: pass, fail (typed actual), several formats in one run
"$fakegc" run -q --format json --output "$tmp/pass.json" scenarios/memo || fail "run pass exit $?"
"$fakegc" run -q --inject strong-memo --format json --output "$tmp/fail.json" \
    --junit "$tmp/fail.xml" --tap "$tmp/fail.tap" scenarios/memo scenarios/storage
[ $? -eq 1 ] || fail "run --inject strong-memo: exit status, want 1"
grep -q '"actual": [0-9]' "$tmp/fail.json" || fail "no numeric actual in the failing report"
$val "$sch/fakegc-report-3.schema.json" "$tmp/pass.json" "$tmp/fail.json" || fail "run reports"
xmllint --noout "$tmp/fail.xml" || fail "JUnit beside --format json is not XML"
[ "$(grep -c '<failure ' "$tmp/fail.xml")" -gt 0 ] || fail "JUnit beside json has no <failure>"
prove -e cat "$tmp/fail.tap" > "$tmp/prove-fail.txt" 2>&1 && fail "prove passes a failing TAP"
grep -q "Failed" "$tmp/prove-fail.txt" || fail "prove did not read the failing TAP"
"$fakegc" run -q --format tap --output "$tmp/pass.tap" scenarios/memo || fail "tap pass"
prove -e cat "$tmp/pass.tap" > /dev/null 2>&1 || fail "prove rejects a passing TAP"

# a parse error: complete reports, status error, the old file replaced whole
echo '{"old": "report"}' > "$tmp/err.json"
"$fakegc" run --format json --output "$tmp/err.json" --junit "$tmp/err.xml" \
    --tap "$tmp/err.tap" scenarios/errors scenarios/memo/weak_keys.scn 2> /dev/null
[ $? -eq 2 ] || fail "parse error: exit status, want 2"
$val "$sch/fakegc-report-3.schema.json" "$tmp/err.json" || fail "parse-error report"
grep -q '"status": "error"' "$tmp/err.json" || fail "parse-error report has no status error"
nerr=$(ls scenarios/errors/*.scn | wc -l)
xmllint --noout "$tmp/err.xml" || fail "parse-error JUnit is not XML"
[ "$(grep -c '<error ' "$tmp/err.xml")" -eq "$nerr" ] || fail "JUnit: want one <error> per file ($nerr)"
grep -q '^Bail out! ' "$tmp/err.tap" || fail "TAP has no Bail out!"
prove -e cat "$tmp/err.tap" > "$tmp/prove-err.txt" 2>&1 && fail "prove passes a bailed-out TAP"
ls "$tmp"/*.tmp.* > /dev/null 2>&1 && fail "a temporary report file was left behind"

# stress: pass and fail, real counts, inject as an array
"$fakegc" stress --steps 300 --format json --output "$tmp/stress-pass.json" || fail "stress pass"
"$fakegc" stress --steps 3000 --inject strong-memo --out-dir "$tmp/st" --no-shrink \
    --format json --output "$tmp/stress-fail.json"
[ $? -eq 1 ] || fail "stress --inject strong-memo: exit status, want 1"
$val "$sch/fakegc-stress-2.schema.json" "$tmp/stress-pass.json" "$tmp/stress-fail.json" ||
    fail "stress reports"

# oom, bench, diff
"$fakegc" oom --max-fail 5 --format json --output "$tmp/oom.json" scenarios/memo/weak_keys.scn \
    scenarios/views || fail "oom"
"$fakegc" bench --quick --repeats 1 --min-time 1 --format json --output "$tmp/bench.json" \
    weaktable/insert-1k || fail "bench"
"$fakegc" diff --format json --output "$tmp/diff.json" "$tmp/pass.json" "$tmp/fail.json"
[ $? -eq 1 ] || fail "diff of a regression: exit status, want 1"
$val "$sch/fakegc-oom-2.schema.json" "$tmp/oom.json" || fail "oom report"
$val "$sch/fakegc-bench-2.schema.json" "$tmp/bench.json" || fail "bench report"
$val "$sch/fakegc-diff-2.schema.json" "$tmp/diff.json" || fail "diff report"

# a reviewer's diff: the whole suite clean vs --inject strong-memo counts the
# scenarios that regress (22 at one time; counted here from the
# two reports themselves) and leads each new failure with its retention path
"$fakegc" run -q --format json --output "$tmp/suite.json" scenarios || fail "clean suite"
"$fakegc" run -q --inject strong-memo --format json --output "$tmp/suite-sm.json" scenarios
"$fakegc" diff "$tmp/suite.json" "$tmp/suite-sm.json" > "$tmp/diff.txt"
[ $? -eq 1 ] || fail "diff of the strong-memo suite: want exit 1"
nreg=$(/usr/bin/python3 - "$tmp/suite.json" "$tmp/suite-sm.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
st = {s["file"]: s["status"] for s in a["scenarios"]}
print(sum(1 for s in b["scenarios"] if s["status"] in ("fail", "error") and st.get(s["file"]) == "pass"))
PY
)
[ "${nreg:-0}" -gt 0 ] || fail "strong-memo made no scenario regress"
tail -n 1 "$tmp/diff.txt" | grep -q "^diff: $nreg scenarios regressed (" ||
    fail "diff closing line: $(tail -n 1 "$tmp/diff.txt")"
grep -A1 '^  + new failure at line' "$tmp/diff.txt" | grep -q '^      tensor#[0-9]* retains .*: m -> ' ||
    fail "new failures come without a retention path"
grep -q '^note: inject changed: none -> strong-memo' "$tmp/diff.txt" || fail "no inject note"
"$fakegc" run -q --format json --output "$tmp/subset.json" scenarios/memo
"$fakegc" diff "$tmp/suite.json" "$tmp/subset.json" > /dev/null
[ $? -eq 1 ] || fail "scenarios missing from the new run are not a regression"
"$fakegc" diff --allow-missing "$tmp/suite.json" "$tmp/subset.json" > /dev/null ||
    fail "--allow-missing still fails"
"$fakegc" diff --format markdown "$tmp/suite.json" "$tmp/suite-sm.json" > "$tmp/diff.md"
grep -q "^## fakegc diff: $nreg scenarios regressed" "$tmp/diff.md" || fail "markdown heading"

# the schemas reject what version 1 wrote
sed 's/"actual": \([0-9][0-9]*\)/"actual": "\1"/' "$tmp/fail.json" > "$tmp/bad-actual.json"
sed 's/"schema": "fakegc-report\/3", //' "$tmp/pass.json" > "$tmp/bad-schema.json"
sed 's/"errors": [0-9]*//; s/"skipped": \([0-9]*\), }/"skipped": \1}/' "$tmp/pass.json" > "$tmp/bad-errors.json"
$val --invalid "$sch/fakegc-report-3.schema.json" "$tmp/bad-actual.json" "$tmp/bad-schema.json" \
    "$tmp/bad-errors.json" || fail "the report schema accepts a broken report"
sed 's/"inject": \[[^]]*\]/"inject": ""/' "$tmp/stress-fail.json" > "$tmp/bad-inject.json"
sed 's/"statements": [0-9]*, "lifecycles": [0-9]*/"statements": 0, "lifecycles": 0/' \
    "$tmp/stress-fail.json" > "$tmp/bad-counts.json"
$val --invalid "$sch/fakegc-stress-2.schema.json" "$tmp/bad-inject.json" "$tmp/bad-counts.json" ||
    fail "the stress schema accepts a broken report"

[ "$fails" -eq 0 ] && echo "check_reports: ok" && exit 0
echo "check_reports: $fails failure(s)"
exit 1
