#!/usr/bin/env bash
# vg_cli.sh MODE FAKEGC SOURCE_DIR - one CLI mode of FAKEGC under memcheck
# through scripts/valgrind-test.sh (--trace-children=yes, every process's
# log parsed: forked --jobs workers, oom and shrink children included).
# Inputs are prepared natively first. Exit: valgrind-test.sh's (0 clean, 1
# a memory error, a leak, or an unexpected exit status), 77 when the mode is
# not built.
#   diff    two run reports, the second with a regression (exit 1 expected)
#   merge   two shard reports merged
#   oom     the OOM loop over two small scenarios
#   shrink  a failing scenario minimized (forks a run per candidate)
#   stress  a short clean stress campaign (lifecycles forked: their logs too)
#   bench   bench --quick over one benchmark of each layer
#   jobs    run --jobs 2: the workers' logs, not only the parent's
#   outputs a leaking run with --dot and --objects, in process (exit 1)
set -u
mode=$1 fakegc=$2 src=$3
vg=$src/scripts/valgrind-test.sh
d=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-vgcli.XXXXXX") || exit 1
trap 'rm -rf "$d"' EXIT
small=("$src/scenarios/memo/weak_keys.scn" "$src/scenarios/views/fake_views.scn")
case $mode in
diff)
    "$fakegc" run "${small[@]}" -q --format json --output "$d/a.json" >/dev/null
    "$fakegc" run "${small[@]}" -q --inject strong-memo --format json --output "$d/b.json" \
        >/dev/null
    VALGRIND_EXPECT_RC=1 "$vg" "$fakegc" diff "$d/a.json" "$d/b.json"
    ;;
merge)
    "$fakegc" merge --help >/dev/null 2>&1 || { echo "vg_cli: no merge in this build"; exit 77; }
    "$fakegc" run "${small[@]}" -q --shard 0/2 --format json --output "$d/0.json" >/dev/null
    "$fakegc" run "${small[@]}" -q --shard 1/2 --format json --output "$d/1.json" >/dev/null
    "$vg" "$fakegc" merge "$d/0.json" "$d/1.json" --format json --output "$d/m.json"
    ;;
oom)
    "$vg" "$fakegc" oom -q "$src/scenarios/memo/weak_keys.scn"
    ;;
shrink)
    # fails by itself (no --inject: no clean rerun per candidate, fewer
    # memcheck processes)
    printf 't = empty(2)\nu = empty(3)\nm = fake_mode()\nf = m.fake(t)\nexpect t.dim() == 5\n' \
        > "$d/s.scn"
    "$vg" "$fakegc" shrink -q "$d/s.scn" --output "$d/min.scn"
    ;;
stress)
    "$vg" "$fakegc" stress -q --steps 1500 --out-dir "$d/st"
    ;;
bench)
    "$vg" "$fakegc" bench --quick alloc/pair weaktable/insert-1k convert/hit \
        interp/statements report/leak-1m --format json --output "$d/b.json"
    ;;
jobs)
    "$vg" "$fakegc" run -q --jobs 2 "${small[@]}" "$src/scenarios/cycles" \
        --timeline "$d/t.svg" --html "$d/r.html"
    ;;
outputs)
    VALGRIND_EXPECT_RC=1 "$vg" "$fakegc" run -q --inject strong-memo "${small[@]}" \
        --dot "$d/g.dot" --objects "$d/o.jsonl" --format json --output "$d/r.json"
    ;;
*)
    echo "vg_cli: unknown mode $mode" >&2
    exit 2
    ;;
esac
