#!/bin/sh
# bisect.sh GOOD BAD SCENARIO.scn [RUN-OPTIONS...]
# bisect.sh GOOD BAD --stress [STRESS-OPTIONS...]
#
# Find the first commit between GOOD and BAD where a scenario fails (or
# where `fakegc stress` finds a failure), with `git bisect run`. Each commit
# is built in its own folder, $BISECT_BUILD_DIR/<sha> (default
# build-bisect/<sha> at the top of the repository), so a commit seen twice
# is not rebuilt and the working tree's build is left alone. Per commit:
#   does not configure or build       -> 125 (skip it)
#   the scenario fails / stress fails -> 1 (bad)
#   it passes                         -> 0 (good)
#   anything else (parse error: the scenario needs a newer language, an
#   internal error)                   -> 125 (skip)
# The scenario is copied before bisecting (old commits need not have it).
# Prints the first bad commit, leaves the bisect reset, and exits 0 when one
# was found, 1 otherwise, 2 on usage errors.
#
#   scripts/bisect.sh HEAD~20 HEAD scenarios/memo/weak_keys.scn --compat pytorch-1.13
#   scripts/bisect.sh "$(git rev-list --max-parents=0 HEAD)" HEAD --stress --steps 20000 --seed 7
set -u

usage() {
    sed -n '2,3p' "$0" | sed 's/^# /usage: /' >&2
    echo "(bisect.sh --help for more)" >&2
    exit 2
}

case "${1:-}" in
-h|--help)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//; 1s/^/usage: /; 2s/^/       /'
    exit 0 ;;
esac
[ $# -ge 3 ] || usage
good=$1
bad=$2
shift 2

top=$(git rev-parse --show-toplevel 2>/dev/null) || {
    echo "bisect.sh: not inside a git repository" >&2
    exit 2
}
cd "$top" || exit 2
git rev-parse --verify -q "$good^{commit}" >/dev/null || { echo "bisect.sh: unknown commit $good" >&2; exit 2; }
git rev-parse --verify -q "$bad^{commit}" >/dev/null || { echo "bisect.sh: unknown commit $bad" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-bisect.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

if [ "$1" = "--stress" ]; then
    mode=stress
    shift
else
    mode=run
    [ -f "$1" ] || { echo "bisect.sh: no scenario $1" >&2; exit 2; }
    cp "$1" "$work/scenario.scn" || exit 2
    shift
fi

builds=${BISECT_BUILD_DIR:-$top/build-bisect}
mkdir -p "$builds" || exit 2

# The per-commit test, run by `git bisect run` at each commit.
cat > "$work/step.sh" <<'EOF'
#!/bin/sh
mode=$1; work=$2; builds=$3; shift 3
sha=$(git rev-parse HEAD) || exit 125
dir=$builds/$sha
log=$dir.log
if [ ! -x "$dir/fakegc" ]; then
    if ! { cmake -S . -B "$dir" -DFAKEGC_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
           cmake --build "$dir" --target fakegc -j2; } > "$log" 2>&1; then
        echo "bisect: $sha does not build (skipped; see $log)"
        exit 125
    fi
fi
if [ "$mode" = stress ]; then
    "$dir/fakegc" stress --no-shrink -q --out-dir "$dir/stress" "$@" > "$dir/result.txt" 2>&1
else
    "$dir/fakegc" run -q "$work/scenario.scn" "$@" > "$dir/result.txt" 2>&1
fi
rc=$?
case $rc in
    0) echo "bisect: $sha good"; exit 0 ;;
    1) echo "bisect: $sha bad"; exit 1 ;;
    *) echo "bisect: $sha exit status $rc (skipped)"; exit 125 ;;
esac
EOF

git bisect start "$bad" "$good" >/dev/null || {
    echo "bisect.sh: git bisect start failed (a bisect already running? git bisect reset)" >&2
    exit 2
}
git bisect run sh "$work/step.sh" "$mode" "$work" "$builds" "$@" > "$work/bisect.log" 2>&1
cat "$work/bisect.log"
echo
first=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$work/bisect.log" | head -n 1)
git bisect reset >/dev/null 2>&1
if [ -n "$first" ]; then
    echo "first bad commit: $first"
    exit 0
fi
echo "bisect.sh: no first bad commit found (see the log above)" >&2
exit 1
