#!/bin/sh
# check_errors.sh FAKEGC SOURCE_DIR - every scenarios/errors/*.scn must be
# rejected by `fakegc run` with exit status 2, and the first line on stderr
# must be FILE:LINE:COL: error: MESSAGE as its first-line comment says:
#   # expect-error: LINE:COL: MESSAGE
fakegc=$1
src=${2:-.}
fail=0
n=0
cd "$src" || exit 2
for f in scenarios/errors/*.scn; do
    n=$((n + 1))
    want=$(head -n 1 "$f" | sed -n 's/^# expect-error: \([0-9]*:[0-9]*\): /\1: error: /p')
    if [ -z "$want" ]; then
        echo "FAIL $f: no '# expect-error: LINE:COL: MESSAGE' first line"
        fail=$((fail + 1))
        continue
    fi
    want="$f:$want"
    got=$("$fakegc" run --no-color "$f" 2>&1 >/dev/null | head -n 1)
    "$fakegc" run --no-color "$f" >/dev/null 2>&1
    rc=$?
    if [ "$rc" -ne 2 ]; then
        echo "FAIL $f: exit status $rc, expected 2"
        fail=$((fail + 1))
    elif [ "$got" != "$want" ]; then
        echo "FAIL $f:"
        echo "  expected: $want"
        echo "  got:      $got"
        fail=$((fail + 1))
    fi
done
echo "$((n - fail)) of $n error scenarios rejected as expected"
[ "$fail" -eq 0 ]
