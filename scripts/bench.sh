#!/usr/bin/env bash
# bench.sh - build the `release` preset (build-release/, -O3 -DNDEBUG) and
# run the benchmark matrix: allocators libc, jemalloc, arena, tracking/libc,
# guard/libc x storage-memo sweep eager, periodic. Writes
#   build-release/bench/raw/bench_<allocator>_<sweep>.json  (one per cell)
#   build-release/bench/raw/trace_<sweep>.csv   storage-memo size per lifecycle
#   build-release/bench/raw/cpython_gc.json     CPython gc.collect() reference
#   build-release/bench/results.csv, results.json
#   build-release/bench/ns-per-op.svg    ns/op per benchmark and allocator (log)
#   build-release/bench/memo-trace.svg   storage-memo entries alive, eager vs periodic
# and prints the summary: the libc/eager table, the matrix, the ratios
# (tracking vs libc and jemalloc vs libc on lifecycle/churn, PyTorch and
# CPython references) and the targets.
#
# guard/libc runs every benchmark except the 1M-object ones (weaktable/*-1m,
# gc/cycles-1m, report/leak-1m): the guard is a debugging allocator (red
# zones, poisoning, a 1024-block quarantine), its figures at 1M objects say
# nothing about fakegc and cost minutes and hundreds of MiB. --all keeps them.
#
# The ratios (tracking/libc and jemalloc vs libc on lifecycle/churn, CPython
# gc.collect() vs gc/cycles-1m) come from paired rounds: both sides measured
# back to back, --rounds times (5), median of the per-round ratios, from wall
# time and from CPU time (on a busy machine only the CPU ones mean much).
#
# Options: --quick (smoke sizes), --repeats R, --trace N (lifecycles, 1000),
# --rounds N, --allocators "a b", --no-build, --all. Figures are wall-clock
# medians: run it on an idle machine (the `cpu ns` column shows when it was
# not).
# Exit: 0, or 1 when a run failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

quick=() repeats=() trace=1000 build=1 all=0 rounds=5
allocators="libc jemalloc arena tracking/libc guard/libc"
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=(--quick) ;;
    --repeats) repeats=(--repeats "$2"); shift ;;
    --trace) trace=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --allocators) allocators=$2; shift ;;
    --no-build) build=0 ;;
    --all) all=1 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$build" = 1 ]; then
    cmake --preset release >&2
    cmake --build --preset release --target fakegc >&2
fi
exe=build-release/fakegc
out=build-release/bench
[ -x "$exe" ] || { echo "bench.sh: $exe was not built" >&2; exit 1; }
rm -rf "$out/raw"
mkdir -p "$out/raw"

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
echo "bench.sh: load average $load on $(nproc) CPUs; figures are wall-clock medians" >&2

all_names=$("$exe" list benches)
big_names=$(echo "$all_names" | grep -E -- '-1m$' || true)
status=0
for a in $allocators; do
    names=()
    if [ "$a" = guard/libc ] && [ "$all" = 0 ]; then
        # shellcheck disable=SC2207
        names=($(echo "$all_names" | grep -v -x -F "$big_names"))
    fi
    for s in eager periodic; do
        f="$out/raw/bench_${a//\//+}_$s.json"
        echo "bench.sh: $a, sweep $s" >&2
        if ! "$exe" bench "${names[@]}" "${quick[@]}" "${repeats[@]}" --allocator "$a" \
                --sweep "$s" --format json --output "$f"; then
            echo "bench.sh: the $a/$s run failed" >&2
            status=1
        fi
    done
done

for s in eager periodic; do
    "$exe" bench --trace-memo "$trace" --sweep "$s" --output "$out/raw/trace_$s.csv" || status=1
done

n=1000000
[ ${#quick[@]} -gt 0 ] && n=10000
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 scripts/bench-cpython-gc.py "$n" 5 > "$out/raw/cpython_gc.json" ||
        rm -f "$out/raw/cpython_gc.json"
fi

# Paired rounds for the ratios: the two sides of each ratio measured back to
# back, $rounds times, so that a change in the machine's load hits both;
# bench-chart.py reports the median of the per-round ratios.
echo "bench.sh: paired rounds (churn: libc, tracking/libc, jemalloc; gc: fakegc, CPython)" >&2
for r in $(seq 1 "$rounds"); do
    for a in libc tracking/libc jemalloc; do
        "$exe" bench lifecycle/churn convert/miss "${quick[@]}" --repeats 3 --allocator "$a" \
            --format json --output "$out/raw/pair${r}_churn_${a//\//+}.json" || status=1
    done
    for a in libc jemalloc arena; do
        "$exe" bench gc/cycles-1m "${quick[@]}" --repeats 1 --allocator "$a" \
            --format json --output "$out/raw/pair${r}_gc_$a.json" || status=1
    done
    if [ -x /usr/bin/python3 ]; then
        /usr/bin/python3 scripts/bench-cpython-gc.py "$n" 1 > "$out/raw/pair${r}_gc_cpython.json" ||
            rm -f "$out/raw/pair${r}_gc_cpython.json"
    fi
done

/usr/bin/python3 scripts/bench-chart.py "$out" || status=1   # Debian python3-matplotlib
exit "$status"
