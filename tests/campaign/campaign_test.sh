#!/usr/bin/env bash
# campaign_test.sh CASE FAKEGC SOURCE_DIR WORK_DIR - the `campaign` label:
# real campaigns through scripts/campaign.sh on Slurm (a real single-node
# cluster, scripts/slurm-local.sh), GNU parallel and plain processes,
# checked against one process (tests/campaign/check.py).
#
#   slurm-up         bring the cluster up (the fixture of the slurm cases)
#   stress-clean     4 shards on Slurm = one process (steps, lifecycles, outcome)
#   stress-inject    the same with --inject strong-memo: found, the failure one
#                    process stops at, one de-duplicated failure, and its
#                    reproducer fails alone and passes without the bug
#   run-suite        4-shard `run` of the suite (with strong-memo, so there are
#                    failures and retained objects) = the unsharded report
#   resume           one shard report deleted: a rerun runs only that shard
#   engines          parallel and local give slurm's merged result
#   merge-refuses    missing / duplicated shard, mixed kinds, different
#                    options: exit 2 naming which
# Exit 77 (skipped) when Slurm is needed but cannot be brought up (not root).
set -uo pipefail
case_=$1 fakegc=$2 src=$3 work=$4
check="/usr/bin/python3 $src/tests/campaign/check.py"
campaign="$src/scripts/campaign.sh --fakegc $fakegc"
# small: a few thousand steps per shard prove the wiring
STRESS=(stress --seed 11 --steps 12000 --lifecycle 500)
W=meta_tensor=0,strided=0,sparse=0,csr=0,quantized=0,view=0,newop=0,inplace=0,sparse_op=0
W=$W,meta_converter=0,fake_device=0,meta=0,fake_op=0,refake=0,attr=0,grad=0,weakref=0,gc=0
W=$W,sweep=0,with=0,error=0
INJECT=(stress --seed 1 --steps 8000 --inject strong-memo --weights "$W")

die() { echo "campaign_test.sh $case_: $*"; exit 1; }
need_slurm() {
    if ! sinfo -h -o %t 2>/dev/null | grep -qE 'idle|mix|alloc'; then
        [ "$(id -u)" -eq 0 ] || { echo "not root and no Slurm cluster: skipped"; exit 77; }
        "$src/scripts/slurm-local.sh" up || die "slurm-local.sh up failed"
    fi
}
fresh() { rm -rf "$work/$1"; mkdir -p "$work/$1"; echo "$work/$1"; }

case "$case_" in
slurm-up)
    [ "$(id -u)" -eq 0 ] || { echo "not root: skipped"; exit 77; }
    exec "$src/scripts/slurm-local.sh" up ;;
stress-clean)
    need_slurm
    d=$(fresh stress-clean)
    "$fakegc" "${STRESS[@]}" --out-dir "$d/one" --format json --output "$d/one.json" ||
        die "one process failed"
    $campaign --engine slurm --shards 4 --out "$d/c" -- "${STRESS[@]}" || die "campaign exit $?"
    $check stress "$d/one.json" "$d/c/merged.json" || exit 1
    /usr/bin/python3 "$src/tests/report/validate.py" "$src/src/report/schema/fakegc-stress-2.schema.json" \
        "$d/c/merged.json" "$d"/c/shard-*.json || die "stress campaign reports break the schema"
    [ "$(ls "$d"/c/logs/*_[0-3].out | wc -l)" = 4 ] || die "no %A_%a logs in $d/c/logs" ;;
stress-inject)
    need_slurm
    d=$(fresh stress-inject)
    "$fakegc" "${INJECT[@]}" --out-dir "$d/one" --format json --output "$d/one.json"
    [ $? = 1 ] || die "one process did not find strong-memo"
    $campaign --engine slurm --shards 4 --out "$d/c" -- "${INJECT[@]}"
    [ $? = 1 ] || die "the campaign did not exit 1"
    $check stress "$d/one.json" "$d/c/merged.json" --failure || exit 1
    min=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["failure"]["min_file"])' "$d/c/merged.json")
    [ -s "$min" ] || die "no reproducer file '$min'"
    "$fakegc" run --verify --inject strong-memo "$min" >/dev/null
    [ $? = 1 ] || die "$min does not fail with strong-memo"
    "$fakegc" run --verify "$min" >/dev/null || die "$min fails without the bug" ;;
run-suite)
    need_slurm
    d=$(fresh run-suite)
    "$fakegc" run --inject strong-memo --format json --output "$d/one.json" "$src/scenarios"
    [ $? = 1 ] || die "the suite with strong-memo did not fail"
    $campaign --engine slurm --shards 4 --out "$d/c" -- run --inject strong-memo "$src/scenarios"
    [ $? = 1 ] || die "the campaign did not exit 1"
    $check run "$d/one.json" "$d/c/merged.json" || exit 1 ;;
oom)
    # an OOM campaign (oom's JSON reports): 3 shards on GNU
    # parallel equal one process, scenario by scenario and in the summary
    d=$(fresh oom)
    "$fakegc" oom --max-fail 20 --format json --output "$d/one.json" "$src/scenarios/memo" ||
        die "oom in one process: exit $?"
    $campaign --engine parallel --shards 3 --out "$d/c" -- oom --max-fail 20 "$src/scenarios/memo" ||
        die "the oom campaign: exit $?"
    $check run "$d/one.json" "$d/c/merged.json" || exit 1
    # shard and merged reports are valid fakegc-oom/2 reports
    /usr/bin/python3 "$src/tests/report/validate.py" "$src/src/report/schema/fakegc-oom-2.schema.json" \
        "$d/c/merged.json" "$d"/c/shard-*.json || die "oom campaign reports break the schema" ;;
resume)
    need_slurm
    d=$(fresh resume)
    $campaign --engine slurm --shards 4 --out "$d/c" -- "${STRESS[@]}" || die "campaign exit $?"
    cp "$d/c/merged.json" "$d/first.json"
    before=$(stat -c '%n %Y.%Z' "$d"/c/shard-[013].json)
    sleep 1
    rm "$d/c/shard-2.json"
    $campaign --engine slurm --shards 4 --out "$d/c" -- "${STRESS[@]}" 2> "$d/err" ||
        die "rerun exit $?"
    cat "$d/err"
    grep -q "1 of 4 shards to run (3 complete, skipped)" "$d/err" || die "the rerun did not skip 3"
    [ "$(stat -c '%n %Y.%Z' "$d"/c/shard-[013].json)" = "$before" ] || die "complete shards reran"
    [ -s "$d/c/shard-2.json" ] || die "shard 2 was not rerun"
    $check same "$d/first.json" "$d/c/merged.json" || exit 1 ;;
engines)
    need_slurm
    d=$(fresh engines)
    for e in slurm parallel local; do
        $campaign --engine "$e" --shards 4 --out "$d/$e" -- "${INJECT[@]}"
        [ $? = 1 ] || die "$e: the campaign did not exit 1"
    done
    $check same "$d/slurm/merged.json" "$d/parallel/merged.json" || exit 1
    $check same "$d/slurm/merged.json" "$d/local/merged.json" || exit 1 ;;
merge-refuses)
    d=$(fresh merge-refuses)
    for k in 0 1 2; do
        "$fakegc" stress --steps 2000 --shard $k/3 --format json --output "$d/s$k.json" || die "shard $k"
    done
    "$fakegc" stress --steps 2000 --shard 2/3 --inject no-sweep --out-dir "$d/o" \
        --format json --output "$d/x2.json"
    "$fakegc" run --shard 2/3 --format json --output "$d/r2.json" "$src/scenarios" || die "run shard"
    expect2() {  # message-pattern files...
        local pat=$1; shift
        out=$("$fakegc" merge "$@" 2>&1 >/dev/null); rc=$?
        [ "$rc" = 2 ] || die "merge $* exited $rc, not 2"
        echo "$out" | grep -qE "$pat" || die "merge $*: '$out' does not say '$pat'"
        echo "ok: $out"
    }
    expect2 "shard 1 of 3 missing" "$d/s0.json" "$d/s2.json"
    expect2 "shard 2 of 3 given twice" "$d/s0.json" "$d/s1.json" "$d/s2.json" "$d/s2.json"
    expect2 "r2.json is a run report but .*s0.json is a stress report" \
        "$d/s0.json" "$d/s1.json" "$d/r2.json"
    expect2 "differ in \"inject\"" "$d/s0.json" "$d/s1.json" "$d/x2.json"
    "$fakegc" merge "$d/s0.json" "$d/s1.json" "$d/s2.json" > /dev/null || die "a good merge failed" ;;
*)
    echo "campaign_test.sh: unknown case $case_"; exit 2 ;;
esac
echo "campaign_test.sh $case_: ok"
