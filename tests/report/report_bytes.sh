#!/usr/bin/env bash
# report_bytes.sh FAKEGC OUTDIR [ROOT] - every report of every scenario
# under scenarios/recorded/ and tests/ (text, JSON, JUnit, TAP, HTML), run
# in process one file at a time and once more all together in worker
# processes (--jobs 2: the records come back through JSON), into OUTDIR with
# what changes from run to run (times, the commit, the host, temporary
# paths) masked, and the allocator's footprint growth (libc's heap grows
# by what the build itself allocates, not by what the writers do). Two trees' OUTDIRs are compared with `diff -r`: the report
# writers' bytes, before and after a change to them.
set -u
fakegc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "${3:-$(dirname "$0")/../..}" && pwd)
mkdir -p "$out"
cd "$root" || exit 2
mask() {   # file: times, the commit and the host out
    sed -E -e 's/("(wall_ms|ms|seconds|elapsed_ms|time_ms|ns_per_op)": )[0-9.e+-]+/\1T/g' \
        -e 's/("commit": )"[^"]*"/\1"C"/g' -e 's/("footprint_bytes": )[0-9]+/\1F/g' -e 's/("host": )"[^"]*"/\1"H"/g' \
        -e 's/time="[0-9.]+"/time="T"/g' -e 's/[0-9]+(\.[0-9]+)? ?ms\b/T ms/g' \
        -e 's/duration_ms: [0-9.]+/duration_ms: T/g' \
        -e 's/timestamp="[^"]*"/timestamp="T"/g' -e 's/hostname="[^"]*"/hostname="H"/g' \
        -e "s|$root/||g" "$1" > "$1.m" && mv "$1.m" "$1"
}
run_one() {   # name args...
    local name=$1; shift
    local d="$out/$name"
    mkdir -p "$d"
    "$fakegc" run --no-color --format text --output "$d/text" --json "$d/json" \
        --junit "$d/junit" --tap "$d/tap" --html "$d/html" "$@" >"$d/stdout" 2>"$d/stderr"
    echo "exit $?" >> "$d/stdout"
    for f in "$d"/*; do mask "$f"; done
}
files=$(find scenarios/recorded tests -name '*.scn' | LC_ALL=C sort)
for f in $files; do
    run_one "$(echo "$f" | tr / _)" "$f"
done
run_one all-jobs2 --jobs 2 $files
