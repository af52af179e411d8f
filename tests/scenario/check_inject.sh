#!/usr/bin/env bash
# check_inject.sh FAKEGC ROOT [BUG...]
# Proves the detector works: for each injectable bug, the shipped scenario
# suite must fail (exit 1 or 3), the scenario named in the table below must
# be among the failures, and its report must contain the needle (the
# retained object's path, or the wrong value/hit). Without injection the
# same suite must pass (the `scenario_suite_*` tests check that).
set -u
fakegc=$1
root=$2
shift 2
cd "$root" || exit 2

# bug | extra options | scenario that must fail | needle in its JSON report
table=(
  "strong-memo||memo/weak_keys.scn|FakeTensorConverter#2.tensor_memo["
  "strong-storage-memo||storage/bytes_reclaimed.scn|MetaConverter#3.storage_memo["
  "finalizer-holds-converter||modes/mode_dies_real_lives.scn|.converter\", \"meta_converter#3\""
  "no-sweep||storage/periodic_sweep_frees.scn|expect m.sweep() == 1"
  "id-reuse||regressions/id_reuse.scn|\"actual\": 4"
  "strong-fake-value||memo/fake_values_weak.scn|FakeTensorConverter#2.tensor_memo["
  "view-base-leak||views/view_keeps_base_alive.scn|\"reason\": \"unreachable\""
  "fix-weakref||regressions/pytorch_fix_weakref.scn|\"reason\": \"unreachable\""
  "early-free|--allocator guard --timeout 20|storage/shared_storage_outlives.scn|use-after-free"
)

want=" $* "
fails=0
checked=0
for row in "${table[@]}"; do
  IFS='|' read -r bug extra scn needle <<< "$row"
  if [ $# -gt 0 ] && [[ "$want" != *" $bug "* ]]; then continue; fi
  checked=$((checked + 1))
  out=$(mktemp)
  # The whole suite, in worker processes so that a crash caused by the bug
  # (early-free is a real use after free) is one scenario's error.
  # shellcheck disable=SC2086
  timeout 600 "$fakegc" run scenarios --inject "$bug" $extra --jobs 2 \
      --format json --output "$out" > /dev/null 2>&1
  rc=$?
  if [ "$rc" -ne 1 ] && [ "$rc" -ne 3 ]; then
    echo "FAIL $bug: suite exit $rc, want 1 (or 3)"; fails=$((fails + 1)); rm -f "$out"; continue
  fi
  # shellcheck disable=SC2086
  "$fakegc" run "scenarios/$scn" --inject "$bug" $extra --jobs 2 --format json \
      --output "$out.one" > /dev/null 2>&1
  if ! grep -q '"status": "\(fail\|error\)"' "$out.one" 2>/dev/null &&
     ! python3 - "$out" "$scn" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any(s["file"].endswith(sys.argv[2]) and s["status"] != "pass"
                  for s in d["scenarios"]) else 1)
PY
  then
    echo "FAIL $bug: $scn passed"; fails=$((fails + 1)); rm -f "$out" "$out.one"; continue
  fi
  if ! grep -qF -- "$needle" "$out.one"; then
    echo "FAIL $bug: the report of $scn does not name: $needle"
    fails=$((fails + 1))
  else
    nfail=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(s["status"]!="pass" for s in d["scenarios"]))' "$out")
    echo "ok   $bug: suite fails ($nfail scenarios), $scn names it"
  fi
  rm -f "$out" "$out.one"
done
echo "$((checked - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
