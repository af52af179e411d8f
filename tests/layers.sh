#!/usr/bin/env bash
# layers.sh ROOT - the allocator and worker layers include only downwards:
#   src/vg        nothing of fakegc
#   src/alloc     alloc/ and vg/
#   instrument/   instrument/, vg/, alloc/al.h, alloc/al_wrap.h (public only)
#   src/allocspec allocspec/, alloc/, instrument/
#   src/worker    worker/, core/, alloc/, instrument/, vg/ (below core and
#                 instrument, above scenario and stress: it knows no scenario)
#   src/core      nothing of worker/ (the worker layer is below it)
#   src/value     value/ only (command-line values: libc)
#   src/esc       esc/ only (the escapers of every output format: libc)
#   src/record    record/, worker/ (starting the recorder in a worker child)
#   src/opt       opt/, value/ (the values' parsers) and scenario/sc.h
#                 (sc_closest): nothing of cli/ (it knows no command)
# and the model and command layers, bottom up:
#   src/tensor    tensor/, core/, alloc/
#   src/fake      fake/, tensor/, core/, alloc/
#   src/heap      heap/, esc/, core/, alloc/, vg/ (nothing of fake/)
#   src/report    report/, heap/, fake/, esc/, core/, alloc/
#   src/scenario  scenario/ and every layer below it (not stress/, bench/, cli/)
#   src/stress    stress/, scenario/ and below (not bench/, cli/)
#   src/bench     bench/, stress/ and below (not cli/)
#   src/cli       any folder (the top: commands)
# Every folder of src/ must be listed here: an unknown folder (or a folder
# holding C files below a folder of src/) is an error, so a new module states
# its place.  Prints every offence and exits 1; 0 when the layering holds.
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
bad=0
known=" "
check() {   # dir allowed-regex
    local dir=$1 allow=$2
    known+="$dir "
    while IFS= read -r line; do
        inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"${line#*:*:}")
        [ -n "$inc" ] || continue
        if ! [[ $inc =~ $allow ]]; then
            echo "layers: ${line%%:*}: includes \"$inc\" (allowed: $allow)"
            bad=1
        fi
    done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root/$dir"/*.[ch])
}
check src/vg        '^vg/'
check src/alloc     '^(alloc|vg)/'
check instrument    '^(instrument/|vg/|alloc/al\.h$|alloc/al_wrap\.h$)'
check src/allocspec '^(allocspec|alloc|instrument)/'
check src/worker    '^(worker|core|alloc|instrument|vg)/'
check src/core      '^((core|alloc|instrument|vg)/|[a-z_]+\.h$)'
check src/value     '^value/'
check src/esc       '^esc/'
check src/record    '^(record|worker)/'
check src/opt       '^((opt|value)/|scenario/sc\.h$)'
below='alloc|vg|core|esc|tensor|fake|heap|report|worker|instrument|allocspec|value|opt|record'
check src/tensor    '^(tensor|core|alloc)/'
check src/fake      '^(fake|tensor|core|alloc)/'
check src/heap      '^(heap|esc|core|alloc|vg)/'
check src/report    '^(report|heap|fake|esc|core|alloc)/'
check src/scenario  "^(scenario|$below)/"
check src/stress    "^(stress|scenario|$below)/"
check src/bench     "^(bench|stress|scenario|$below)/"
check src/cli       "^(cli|bench|stress|scenario|$below)/"
for d in "$root"/src/*/; do
    d=src/$(basename "$d")
    if [[ $known != *" $d "* ]]; then
        echo "layers: $d: a folder tests/layers.sh does not know (add its check)"
        bad=1
    fi
done
while IFS= read -r f; do
    echo "layers: $f: C source in a folder below src/*/ (layers.sh checks src/*/ only)"
    bad=1
done < <(cd "$root" && find src -mindepth 3 -name '*.[ch]')
exit $bad
