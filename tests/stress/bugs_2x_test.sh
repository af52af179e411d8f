#!/bin/sh
# bugs_2x_test.sh FAKEGC DESIGN BUG SEED STEPS [OPTION...] - `fakegc stress
# --compat DESIGN --inject BUG` from SEED finds the bug within STEPS steps, and
# the reproducer it writes has at most 10 statements, fails with the bug and
# passes without it (run with --verify, as stress says to reproduce it: a
# broken invariant is what some bugs show). OPTIONs go to stress and to the
# reproducer's runs (--allocator guard for early-free). DESIGN "default" is
# fakegc's own.
set -u
fakegc=$1 design=$2 bug=$3 seed=$4 steps=$5
shift 5
compat=
[ "$design" = default ] || compat="--compat $design"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-bugs2x.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bugs_2x_test: $bug under $design: FAIL: $*"; exit 1; }

# shellcheck disable=SC2086
"$fakegc" stress $compat --inject "$bug" --seed "$seed" --steps "$steps" -q \
    --out-dir "$tmp" "$@" > "$tmp/out.txt" 2>&1
rc=$?
cat "$tmp/out.txt"
[ "$rc" -eq 1 ] || fail "stress exit status $rc, want 1 (not found in $steps steps)"
min=$(ls "$tmp"/stress-seed-*.min.scn 2>/dev/null | head -n 1)
[ -n "$min" ] || fail "no .min.scn written"
n=$(grep -cv -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*end[[:space:]]*$' "$min")
[ "$n" -le 10 ] || fail "reproducer has $n statements (want <= 10)"
# shellcheck disable=SC2086
"$fakegc" run -q --verify $compat --inject "$bug" "$@" "$min" > /dev/null 2>&1
[ $? -eq 1 ] || fail "the reproducer does not fail with the bug"
# shellcheck disable=SC2086
"$fakegc" run -q --verify $compat "$@" "$min" > /dev/null 2>&1
[ $? -eq 0 ] || fail "the reproducer fails without the bug"
echo "bugs_2x_test: $bug under $design: found, $n statements"
