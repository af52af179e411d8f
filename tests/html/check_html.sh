#!/usr/bin/env bash
# check_html.sh FAKEGC BUILD_DIR - the HTML pages in a real browser: a clean
# run, a big leak (strong-memo over tests/html/leak.scn: about 1.2M objects)
# and the diff between them, each opened in headless Chromium by
# tests/html/browser.py (console errors, network fetches, tree expansion,
# jump to peak, range selection, load time and size), with a screenshot of
# each in BUILD_DIR/html/. Exit 77 (skipped) only when Chromium,
# chromedriver or python3-selenium is absent.
set -uo pipefail
fakegc=$1
out=$2/html
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null ||
   ! "$py" -c 'import selenium' 2>/dev/null; then
    echo "SKIP: chromium, chromedriver or python3-selenium is not installed"
    exit 77
fi
mkdir -p "$out"
rm -f "$out"/*.html "$out"/*.json "$out"/*.png
scn=$here/leak.scn
"$fakegc" run "$scn" -q --html "$out/clean.html" --format json --output "$out/clean.json"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: the clean run exited $rc"; exit 1; }
"$fakegc" run "$scn" -q --inject strong-memo --html "$out/leak.html" --format json \
    --output "$out/leak.json"
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the leaking run exited $rc, not 1"; exit 1; }
"$fakegc" diff "$out/clean.json" "$out/leak.json" --html "$out/diff.html" >/dev/null
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the diff exited $rc, not 1 (a regression)"; exit 1; }
# the page is written whole or not at all: an unwritable target leaves nothing
if "$fakegc" run "$scn" -q --html /nonexistent-dir/x.html >/dev/null 2>&1; then
    echo "FAIL: --html into a missing folder succeeded"; exit 1
fi
exec "$py" "$here/browser.py" "$out" clean="$out/clean.html" leak="$out/leak.html" \
    diff="$out/diff.html"
