#!/bin/sh
# check_chart.sh FAKEGC SOURCE_DIR - scripts/bench-chart.py draws the bench
# charts with Debian's python3-matplotlib from real `fakegc bench` runs:
# both SVGs are written, name every benchmark and allocator, carry the
# repeats' spread as whiskers, are the same bytes when drawn twice, and
# rsvg-convert renders them.
set -u
f=$1
cd "$2" || exit 2
/usr/bin/python3 -c 'import matplotlib' 2> /dev/null || exit 77
d=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-chart.XXXXXX")
trap 'rm -rf "$d"' EXIT
fail() { echo "check_chart: FAIL: $*"; exit 1; }
mkdir "$d/raw"
names="alloc/pair convert/miss gc/cycles-1k"
for a in libc arena; do
    for s in eager periodic; do
        # shellcheck disable=SC2086
        "$f" bench $names --quick --repeats 3 --min-time 2 --allocator $a --sweep $s \
            --format json --output "$d/raw/bench_${a}_$s.json" > /dev/null ||
            fail "bench $a/$s"
    done
done
for s in eager periodic; do
    "$f" bench --trace-memo 300 --sweep $s --output "$d/raw/trace_$s.csv" || fail "trace $s"
done
/usr/bin/python3 scripts/bench-chart.py "$d" > "$d/summary.txt" || fail "bench-chart.py: $(tail -3 "$d/summary.txt")"
for c in ns-per-op memo-trace; do
    [ -s "$d/$c.svg" ] || fail "no $c.svg"
    cp "$d/$c.svg" "$d/$c.first.svg"
done
for n in $names libc arena "sweep periodic: max 128 entries alive" "min-max of the repeats"; do
    grep -qF "$n" "$d/ns-per-op.svg" "$d/memo-trace.svg" || fail "the charts do not say '$n'"
done
/usr/bin/python3 scripts/bench-chart.py "$d" > /dev/null || fail "second draw"
for c in ns-per-op memo-trace; do
    cmp -s "$d/$c.svg" "$d/$c.first.svg" || fail "$c.svg differs when drawn twice"
    if command -v rsvg-convert > /dev/null; then
        rsvg-convert "$d/$c.svg" -o "$d/$c.png" && [ -s "$d/$c.png" ] ||
            fail "rsvg-convert cannot render $c.svg"
    fi
done
echo "check_chart: ok"
