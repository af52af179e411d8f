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
#   lock             one campaign per folder: a held lock, or a second driver
#                    started inside the first one's read-compare-write window
#                    (FAKEGC_CAMPAIGN_TEST_DELAY), is refused with exit 2
#   signals          TERM to the driver (local, parallel): its shards and
#                    their partial files go with it, exit 143
#   slurm-signals    the same on Slurm: the array job is cancelled
#   resume-checks    a resume removes what a group SIGKILL left, and reruns
#                    every kept report that is not this campaign's shard
#                    (another shard's, another campaign's, edited)
# Exit 77 (skipped) when Slurm is needed but cannot be brought up (not root).
set -uo pipefail
case_=$1 fakegc=$2 src=$3 work=$4
check="/usr/bin/python3 $src/tests/campaign/check.py"
campaign="$src/scripts/campaign.sh --fakegc $fakegc"
# small: a few thousand steps per shard prove the wiring
STRESS=(stress --seed 11 --steps 12000 --lifecycle 500)
W=meta_tensor=0,strided=0,sparse=0,csr=0,quantized=0,view=0,newop=0,inplace=0,sparse_op=0
W=$W,meta_converter=0,fake_device=0,meta=0,fake_op=0,refake=0,attr=0,grad=0,weakref=0,gc=0
W=$W,sweep=0,with=0,error=0,cycle=0,weak_mode=0,tracer=0
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
lock)
    d=$(fresh lock)
    RUN=(run "$src/scenarios/memo")
    mkdir -p "$d/c"
    flock "$d/c/campaign.lock" sleep 30 & holder=$!
    sleep 0.5
    out=$($campaign --engine local --shards 2 --out "$d/c" -- "${RUN[@]}" 2>&1); rc=$?
    kill "$holder"; wait "$holder" 2>/dev/null
    [ "$rc" = 2 ] || die "a held lock: exit $rc, not 2"
    echo "$out" | grep -q "is in use" || die "a held lock: '$out' does not say 'is in use'"
    [ ! -e "$d/c/campaign.txt" ] || die "a refused driver wrote campaign.txt"
    # the race: the first driver waits between reading and writing campaign.txt
    FAKEGC_CAMPAIGN_TEST_DELAY=2 $campaign --engine local --shards 2 --out "$d/r" -- \
        "${RUN[@]}" --inject strong-memo > "$d/a.out" 2> "$d/a.err" & first=$!
    sleep 0.7
    $campaign --engine local --shards 2 --out "$d/r" -- "${RUN[@]}" > "$d/b.out" 2> "$d/b.err"
    rc=$?
    wait "$first"; rc1=$?
    cat "$d/a.err" "$d/b.err"
    [ "$rc" = 2 ] || die "the second driver in the window: exit $rc, not 2"
    grep -q "is in use" "$d/b.err" || die "the second driver does not say 'is in use'"
    [ "$rc1" = 1 ] || die "the strong-memo campaign: exit $rc1, not 1"
    grep -q "3 passed, 7 failed" "$d/a.out" || die "the strong-memo campaign's result: $(tail -1 "$d/a.out")"
    # and the same command again reuses the folder
    $campaign --engine local --shards 2 --out "$d/r" -- "${RUN[@]}" --inject strong-memo \
        > /dev/null 2>&1
    [ $? = 1 ] || die "the same campaign again was not accepted" ;;
signals)
    for e in local parallel; do
        d=$(fresh "signals-$e")
        $campaign --engine "$e" --shards 2 --out "$d/c" -- stress --seed 1 --steps 1000000000 \
            > "$d/out" 2> "$d/err" & drv=$!
        for _ in $(seq 100); do ls "$d"/c/.shard-*.part.* > /dev/null 2>&1 && break; sleep 0.1; done
        ls "$d"/c/.shard-*.part.* > /dev/null 2>&1 || die "$e: the shards did not start"
        kill -TERM "$drv"
        wait "$drv"; rc=$?
        cat "$d/err"
        [ "$rc" = 143 ] || die "$e: the driver exited $rc after TERM, not 143"
        sleep 0.5
        left=$(pgrep -f -- "--output $d/c/shard-" || true)
        [ -z "$left" ] || die "$e: shards still running after the driver's TERM: $left"
        litter=$(ls -A "$d/c" | grep '\.part' || true)
        [ -z "$litter" ] || die "$e: partial files left: $litter"
    done ;;
slurm-signals)
    need_slurm
    d=$(fresh slurm-signals)
    $campaign --engine slurm --shards 2 --out "$d/c" -- stress --seed 1 --steps 1000000000 \
        > "$d/out" 2> "$d/err" & drv=$!
    for _ in $(seq 300); do ls "$d"/c/.shard-*.part.* > /dev/null 2>&1 && break; sleep 0.1; done
    ls "$d"/c/.shard-*.part.* > /dev/null 2>&1 || die "the array tasks did not start"
    job=$(cat "$d/c/slurm-job")
    kill -TERM "$drv"
    wait "$drv"; rc=$?
    cat "$d/err"
    [ "$rc" = 143 ] || die "the driver exited $rc after TERM, not 143"
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || die "job $job still queued or running"
    litter=$(ls -A "$d/c" | grep '\.part' || true)
    [ -z "$litter" ] || die "partial files left: $litter" ;;
resume-checks)
    d=$(fresh resume-checks)
    RUN=(run --inject strong-memo "$src/scenarios/memo")
    # a group SIGKILL leaves partial files (and nothing running)
    setsid $campaign --engine local --shards 2 --out "$d/k" -- stress --seed 1 \
        --steps 1000000000 > /dev/null 2>&1 & g=$!
    for _ in $(seq 100); do ls "$d"/k/.shard-*.part.* > /dev/null 2>&1 && break; sleep 0.1; done
    kill -KILL -- "-$g"; wait "$g" 2>/dev/null
    sleep 0.5
    ls "$d"/k/.shard-*.part.* > /dev/null 2>&1 || die "no partial files after a group SIGKILL"
    # a finished campaign, then litter of every kind, and reports that are not its shards
    $campaign --engine local --shards 2 --out "$d/c" -- "${RUN[@]}" > /dev/null 2>&1
    [ $? = 1 ] || die "the campaign did not exit 1"
    cp "$d/c/merged.json" "$d/first.json"
    cp "$d"/k/.shard-0.json.part.* "$d/c/"
    touch "$d/c/shard-1.json.part.4242" "$d/c/.shard-1.json.part.4242.fakegc-abcdef"
    /usr/bin/python3 - "$d/c/shard-1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["scenarios"] = r["scenarios"][:1]
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
    $campaign --engine local --shards 2 --out "$d/c" -- "${RUN[@]}" > /dev/null 2> "$d/err1"
    [ $? = 1 ] || die "the resume did not exit 1"
    cat "$d/err1"
    grep -q "shard-1.json changed since its shard wrote it" "$d/err1" || die "an edited report was kept"
    grep -q "1 of 2 shards to run" "$d/err1" || die "not exactly the edited shard reran"
    litter=$(ls -A "$d/c" | grep '\.part' || true)
    [ -z "$litter" ] || die "partial files left after the resume: $litter"
    $check same "$d/first.json" "$d/c/merged.json" || exit 1
    # another shard's report in its place, with its stamp
    cp "$d/c/shard-0.json" "$d/c/shard-1.json"
    cp "$d/c/shard-0.ok" "$d/c/shard-1.ok"
    # another campaign's report (no strong-memo) for shard 0, stamp and all
    $campaign --engine local --shards 2 --out "$d/o" -- run "$src/scenarios/memo" > /dev/null 2>&1
    cp "$d/o/shard-0.json" "$d/o/shard-0.ok" "$d/c/"
    $campaign --engine local --shards 2 --out "$d/c" -- "${RUN[@]}" > /dev/null 2> "$d/err2"
    [ $? = 1 ] || die "the second resume did not exit 1"
    cat "$d/err2"
    grep -q "2 of 2 shards to run" "$d/err2" || die "a report that is not this campaign's shard was kept"
    $check same "$d/first.json" "$d/c/merged.json" || exit 1 ;;
*)
    echo "campaign_test.sh: unknown case $case_"; exit 2 ;;
esac
echo "campaign_test.sh $case_: ok"
