#!/bin/sh
# bugs_2x_test.sh FAKEGC DESIGN BUG SEED STEPS [STRESS-OPTION...] - `fakegc
# stress --compat DESIGN --inject BUG` from SEED finds the bug within STEPS steps, and the
# reproducer it writes shrinks to at most 10 statements, fails with the bug
# and passes without it.
set -u
fakegc=$1 design=$2 bug=$3 seed=$4 steps=$5
shift 5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-bugs2x.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bugs_2x_test: $bug: FAIL: $*"; exit 1; }

"$fakegc" stress --compat "$design" --inject "$bug" --seed "$seed" --steps "$steps" -q \
    --out-dir "$tmp" "$@" > "$tmp/out.txt" 2>&1
rc=$?
cat "$tmp/out.txt"
[ "$rc" -eq 1 ] || fail "stress exit status $rc, want 1 (not found in $steps steps)"
min=$(ls "$tmp"/stress-seed-*.min.scn 2>/dev/null | head -n 1)
[ -n "$min" ] || fail "no .min.scn written"
cat "$min"
n=$(grep -cv -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*end[[:space:]]*$' "$min")
[ "$n" -le 10 ] || fail "reproducer has $n statements (want <= 10)"
"$fakegc" run -q --compat "$design" --inject "$bug" "$min" > /dev/null 2>&1
[ $? -eq 1 ] || fail "the reproducer does not fail with the bug"
"$fakegc" run -q --compat "$design" "$min" > /dev/null 2>&1
[ $? -eq 0 ] || fail "the reproducer fails without the bug"
echo "bugs_2x_test: $bug: found, $n statements"
