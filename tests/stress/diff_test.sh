#!/bin/sh
# diff_test.sh FAKEGC SOURCE_DIR - `fakegc diff` finds a planted regression
# (a view that leaks its base), is quiet on identical reports, and rejects
# unreadable ones.
set -u
fakegc=$1
src=$2
. "$(dirname "$0")/../lib.sh"
t_begin diff_test
set -- "$src/scenarios/memo/weak_keys.scn" "$src/scenarios/views/view_keeps_base_alive.scn"
"$fakegc" run -q --format json --output "$tmp/base.json" "$@" || fail "the base run fails"
"$fakegc" run -q --inject view-base-leak --format json --output "$tmp/new.json" "$@"
[ $? -eq 1 ] || fail "the planted regression does not fail the run"

"$fakegc" diff "$tmp/base.json" "$tmp/new.json" > "$tmp/d.txt" 2>&1
rc=$?
cat "$tmp/d.txt"
[ "$rc" -eq 1 ] || fail "diff exit status $rc on a regression, want 1"
grep -q "view_keeps_base_alive.scn: pass -> fail" "$tmp/d.txt" || fail "the new failure is not named"
grep -q "newly retained: 1 x tensor" "$tmp/d.txt" || fail "the retained base is not listed"
grep -q "weak_keys" "$tmp/d.txt" && fail "an unchanged scenario is listed"

"$fakegc" diff "$tmp/new.json" "$tmp/base.json" > "$tmp/back.txt" 2>&1
[ $? -eq 0 ] || fail "an improvement is not a regression"
"$fakegc" diff "$tmp/base.json" "$tmp/base.json" > /dev/null 2>&1
[ $? -eq 0 ] || fail "identical reports differ"
printf '{"tool": "fakegc", "scenarios": [' > "$tmp/cut.json"
"$fakegc" diff "$tmp/cut.json" "$tmp/base.json" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a truncated base report must exit 2"
# a cut-off new report is the run's failure to finish: a regression
"$fakegc" diff "$tmp/base.json" "$tmp/cut.json" > /dev/null 2>&1
[ $? -eq 1 ] || fail "a truncated new report must be a regression (exit 1)"
"$fakegc" diff "$tmp/base.json" "$tmp/missing.json" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a missing report must exit 2"
echo "diff_test: ok"
