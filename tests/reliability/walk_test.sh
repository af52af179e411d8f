#!/bin/sh
# walk_test.sh FAKEGC - the folder walk visits each file once by (device,
# inode): a folder with two `-> .` links and a link back up ends (it hung),
# each loop is one warning, and a file reached through a symlink runs once
# (it ran 41 times).
fakegc=$1
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/top/sub"
printf 't = empty(1)\n' > "$d/top/a.scn"
ln -s . "$d/top/l1"
ln -s . "$d/top/l2"
ln -s .. "$d/top/sub/up"
ln -s ../a.scn "$d/top/sub/b.scn"
timeout 20 "$fakegc" run --no-color "$d/top" >"$d/out" 2>"$d/err"
rc=$?
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc (124: hung)"; fail=1; }
grep -q "^PASS $d/top/a.scn$" "$d/out" || { echo "FAIL: a.scn not run"; fail=1; }
grep -q "^1 passed, 0 failed$" "$d/out" || { echo "FAIL: not exactly one run:"; cat "$d/out"; fail=1; }
n=$(grep -c "warning: .* is a folder already visited" "$d/err")
[ "$n" -eq 3 ] || { echo "FAIL: $n loop warnings, expected 3:"; cat "$d/err"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: one run, three loop warnings"
exit $fail
