#!/bin/sh
# shrink_test.sh FAKEGC SOURCE_DIR - a stress failure is written, shrunk to a
# small reproducer that fails with the bug and passes without it; `fakegc
# shrink` does the same for a hand-written noisy scenario.
set -u
fakegc=$1
src=$2
. "$(dirname "$0")/../lib.sh"
t_begin shrink_test

"$fakegc" stress --inject strong-memo --steps 20000 -q --out-dir "$tmp" > "$tmp/out.txt" 2>&1
rc=$?
cat "$tmp/out.txt"
[ "$rc" -eq 1 ] || fail "stress exit status $rc, want 1"
min=$(ls "$tmp"/stress-seed-*.min.scn 2>/dev/null | head -n 1)
[ -n "$min" ] || fail "no .min.scn written"
orig=${min%.min.scn}.scn
[ -f "$orig" ] || fail "the failing lifecycle $orig was not written"
n=$(grep -cv -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*end[[:space:]]*$' "$min")
[ "$n" -le 10 ] || fail "reproducer has $n statements (want <= 10)"
"$fakegc" run -q --inject strong-memo "$min" > /dev/null 2>&1
[ $? -eq 1 ] || fail "the reproducer does not fail with the bug"
"$fakegc" run -q "$min" > /dev/null 2>&1
[ $? -eq 0 ] || fail "the reproducer fails without the bug"

"$fakegc" shrink --inject strong-memo "$src/tests/stress/data/noisy_strong_memo.scn" \
    --output "$tmp/small.scn" 2> "$tmp/shrink.err"
rc=$?
cat "$tmp/shrink.err" "$tmp/small.scn"
[ "$rc" -eq 0 ] || fail "shrink exit status $rc, want 0"
before=$(grep -cv -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$src/tests/stress/data/noisy_strong_memo.scn")
after=$(grep -cv -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*end[[:space:]]*$' "$tmp/small.scn")
[ "$after" -lt "$before" ] || fail "shrink did not shrink ($before -> $after)"
"$fakegc" run -q --inject strong-memo "$tmp/small.scn" > /dev/null 2>&1
[ $? -eq 1 ] || fail "the shrunk scenario does not fail with the bug"
"$fakegc" run -q "$tmp/small.scn" > /dev/null 2>&1
[ $? -eq 0 ] || fail "the shrunk scenario fails without the bug"
"$fakegc" shrink "$src/scenarios/memo/weak_keys.scn" > /dev/null 2>&1
[ $? -eq 1 ] || fail "shrink of a passing scenario must exit 1"
printf 'x = = 1\n' > "$tmp/bad.scn"
"$fakegc" shrink "$tmp/bad.scn" > /dev/null 2>&1
[ $? -eq 2 ] || fail "shrink of a scenario that does not parse must exit 2"
echo "shrink_test: ok ($n statements from stress; $before -> $after with fakegc shrink)"
