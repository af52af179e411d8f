#!/usr/bin/env bash
# textmatch_test.sh - tests/style/textmatch.sh fails where it must: a copy
# of src with one of the old matches put back (a failure's "expect " text
# read for its rule, a path split on " -> ", a stress class's prefix) fails;
# the copy as it is passes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {   # RC WHY
    "$here/textmatch.sh" "$tmp/t" > "$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$1" ]; then
        echo "FAIL: $2: exit $rc, want $1"; cat "$tmp/out"; fail=1
    fi
}
fresh() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -r "$root/src" "$tmp/t/src"; }
putback() {   # FILE LINE: LINE appended to FILE of a fresh copy
    fresh
    printf '%s\n' "$2" >> "$tmp/t/$1"
}
fresh
expect 0 "the tree as it is"
putback src/report/rp_find.c '    if (strncmp(p, "expect ", 7) == 0)'
expect 1 "a failure's text read for its rule"
putback src/heap/hp_dotg.c '        const char *arrow = strstr(via + start, " -> ");'
expect 1 "a path split on its separator"
putback src/stress/st_shrink.c '    if (strncmp(cls, "verify: ", 8) == 0 || strncmp(cls, "guard: ", 7) == 0)'
expect 1 "a stress class read by its prefix"
grep -q '^src/stress/st_shrink.c:[0-9]*: text matched' "$tmp/out" && grep -q 'strncmp(cls, "verify: "' "$tmp/out" ||
    { echo "FAIL: the match is not named with its file and line"; cat "$tmp/out"; fail=1; }
putback src/report/rp_verdict.c '    const char *p = strstr(path, " -> ");'
expect 1 "a verdict group's path split"
[ "$fail" = 0 ] && echo "textmatch_test: ok"
exit $fail
