#!/usr/bin/env bash
# check_bugs_2x.sh FAKEGC ROOT [BUG...]
# The PyTorch 2.x bugs (designs.md, "Injectable bugs"): each shipped
# scenario passes as it is and fails (exit 1) with --inject of its bug.
set -u
fakegc=$1
cd "$2" || exit 2
shift 2

# bug | scenario
table=(
  "constant-retains-real|scenarios/bugs-2x/constant_retains_real.scn"
  "cache-holds-shape-env|scenarios/bugs-2x/cache_holds_shape_env.scn"
  "no-clear-after-compile|scenarios/bugs-2x/no_clear_after_compile.scn"
  "converter-closure-cycle|scenarios/bugs-2x/converter_closure_cycle.scn"
  "fake-holds-mode|scenarios/bugs-2x/fake_holds_mode.scn"
  "fake-holds-mode|scenarios/bugs-2x/fake_holds_mode_20.scn"
  "premature-weak-clear|scenarios/bugs-2x/premature_weak_clear.scn"
  "premature-weak-clear|scenarios/bugs-2x/premature_weak_clear_20.scn"
  "tracer-holds-real|scenarios/bugs-2x/tracer_holds_real.scn"
  "shape-env-tracks-real|scenarios/bugs-2x/shape_env_tracks_real.scn"
  "codegen-closure-cycle|scenarios/bugs-2x/codegen_closure_cycle.scn"
  "young-gc-after-compile|scenarios/bugs-2x/young_gc_after_compile.scn"
  "unbacked-memo-retrace|scenarios/bugs-2x/unbacked_memo_retrace.scn"
  "inference-memo|scenarios/bugs-2x/inference_memo.scn"
  "constant-scalar-kept|scenarios/bugs-2x/constant_scalar_kept.scn"
)

want=" $* "
bad=0
checked=0
for row in "${table[@]}"; do
  IFS='|' read -r bug scn <<< "$row"
  if [ $# -gt 0 ] && [[ "$want" != *" $bug "* ]]; then continue; fi
  checked=$((checked + 1))
  "$fakegc" run -q "$scn" > /dev/null 2>&1
  plain=$?
  "$fakegc" run -q --inject "$bug" "$scn" > /dev/null 2>&1
  injected=$?
  if [ "$plain" -ne 0 ] || [ "$injected" -ne 1 ]; then
    echo "FAIL $bug: $scn exits $plain as it is (want 0), $injected with --inject $bug (want 1)"
    bad=$((bad + 1))
  else
    echo "ok   $bug: $scn passes, fails with --inject $bug"
  fi
done
[ "$checked" -gt 0 ] || { echo "no bug checked"; exit 2; }
# outside its designs a bug is a usage error, for stress too (its
# lifecycles run the default design without --compat)
"$fakegc" stress --inject tracer-holds-real --steps 10 > /dev/null 2>&1
rc=$?
if [ "$rc" -ne 2 ]; then
  echo "FAIL stress --inject tracer-holds-real under the default design exits $rc (want 2)"
  bad=$((bad + 1))
fi
exit $((bad > 0))
