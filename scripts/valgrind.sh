#!/usr/bin/env bash
# valgrind.sh [FAKEGC] [PATH...] - the scenario suite under memcheck, in one
# process (no --jobs: memcheck must see every allocation). Fails on any
# memory error or definite/indirect leak; the per-scenario attribution of
# leaked bytes (RUNNING_ON_VALGRIND) is in the JSON report it writes to
# build/valgrind-report.json. No suppression file is needed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fakegc=${1:-$root/build/fakegc}
shift || true
[ $# -gt 0 ] || set -- "$root/scenarios"
out=$(dirname "$fakegc")/valgrind-report.json
rc=0
valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
         --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
         --track-origins=no "$fakegc" run "$@" -q --format json --output "$out" || rc=$?
echo "valgrind.sh: fakegc exit $rc; report in $out"
exit $rc
