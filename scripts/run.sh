#!/usr/bin/env bash
# run.sh - build fakegc (dev preset) and run every shipped scenario:
# build/report.json (JSON report) and a text report on stdout.
# Exit: fakegc's status (0 all held, 1 a failure or leak, 2 usage/parse
# error, 3 internal error); 4 if build/fakegc was not built.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Build output goes to stderr: stdout is the text report.
scripts/deps.sh >&2
cmake --preset dev >&2
cmake --build --preset dev -j "${JOBS:-2}" >&2

exe=build/fakegc
# Ask CMake's list of targets rather than the file system: a stale
# build/fakegc may remain after its sources are gone.
if ! grep -q '/fakegc\.dir$' build/CMakeFiles/TargetDirectories.txt 2>/dev/null ||
   [ ! -x "$exe" ]; then
    echo "run.sh: $exe was not built: src/cli has no sources yet (the fakegc" >&2
    echo "run.sh: executable comes from src/cli/*.c; see CMakeLists.txt)" >&2
    exit 4
fi

status=0
"$exe" run scenarios --format json --output build/report.json || status=$?
if [ ! -s build/report.json ]; then
    echo "run.sh: $exe wrote no build/report.json (exit $status)" >&2
    [ "$status" -ne 0 ] || status=3
fi
text_status=0
"$exe" run scenarios || text_status=$?
if [ "$text_status" -ne "$status" ]; then
    echo "run.sh: the JSON run exited $status but the text run $text_status" >&2
    [ "$status" -ge "$text_status" ] || status=$text_status
fi
echo "run.sh: JSON report in build/report.json" >&2
exit "$status"
