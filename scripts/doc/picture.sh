#!/bin/sh
# picture.sh [FAKEGC] - draw the README's picture, scripts/doc/memo-leak-timeline.svg:
# the --timeline of scenarios/memo/churn.scn (2,000 make/fake/del
# lifecycles) with the strong-memo bug injected, so that the memo keeps
# every real tensor and the live objects climb until the expectations fail.
# fakegc draws it itself; rsvg-convert, where installed, checks it renders.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
fakegc=${1:-$root/build/fakegc}
cd "$root"
rc=0
"$fakegc" run -q --inject strong-memo --timeline scripts/doc/memo-leak-timeline.svg \
    scenarios/memo/churn.scn > /dev/null || rc=$?
[ "$rc" -eq 1 ] || { echo "picture.sh: expected exit 1 (the leak), got $rc" >&2; exit 1; }
if command -v rsvg-convert > /dev/null; then
    rsvg-convert scripts/doc/memo-leak-timeline.svg > /dev/null
fi
echo "picture.sh: scripts/doc/memo-leak-timeline.svg"
