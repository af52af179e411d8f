#!/usr/bin/env bash
# funclen_test.sh - tests/style/funclen.sh fails where it must: a tree with
# one function of 121 lines, one with nine of 101; and passes one with
# seven of 101, one of 120 and one of 100.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# fn NAME LINES: a function of LINES lines, counted as funclen.sh does
fn() {
    printf 'static int %s(int x,\n    int y)\n{\n' "$1"
    for ((i = 4; i < $2; i++)); do echo "    x += y;"; done
    printf '}\n\n'
}
tree() {   # DIR, then NAME:LINES...
    local d=$tmp/$1; shift
    mkdir -p "$d/src/m"
    { echo "static const int table[] = {"; echo "    1,"; echo "};"
      for f in "$@"; do fn "${f%%:*}" "${f##*:}"; done; } > "$d/src/m/m.c"
}
expect() {   # RC DIR WHY
    "$here/funclen.sh" "$tmp/$2" > "$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$1" ]; then
        echo "FAIL: $3: exit $rc, want $1"; cat "$tmp/out"; fail=1
    fi
}
tree one121 a:50 b:121
expect 1 one121 "a function of 121 lines"
tree nine101 a:101 b:101 c:101 d:101 e:101 f:101 g:101 h:101 i:101
expect 1 nine101 "nine functions of 101 lines"
tree eight101 a:101 b:101 c:101 d:101 e:101 f:101 g:101 i:100 j:120
expect 0 eight101 "seven of 101 and one of 120 (eight over 100), one of 100"
"$here/funclen.sh" "$tmp/one121" --list | grep -q '^121 src/m/m.c:[0-9]* b$' ||
    { echo "FAIL: --list does not count b as 121 lines"; "$here/funclen.sh" "$tmp/one121" --list; fail=1; }
[ "$fail" = 0 ] && echo "funclen_test: ok"
exit $fail
