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
# Prints every offending #include and exits 1; 0 when the layering holds.
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
bad=0
check() {   # dir allowed-regex
    local dir=$1 allow=$2
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
exit $bad
