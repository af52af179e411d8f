#!/bin/sh
# check.sh FAKEGC DIR - `config suppress` reads its rules as verdict(suppress=):
# the lost fake is counted apart (exit 0); without the config line it fails
# (exit 1); verdict(suppress=) wins over config; a config suppress naming
# no file is a parse error (exit 2, the file named, nothing run).
set -u
fakegc=$1 dir=$2 tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
out=$("$fakegc" run --compat pytorch-1.13 "$dir/config_suppress.scn") ||
    fail "suppressed by config: exit $?: $out"
echo "$out" | grep -q "suppressed: 1 fake tensor by rule fix-weakref" || fail "no suppressed line: $out"
grep -v '^config suppress' "$dir/config_suppress.scn" > "$tmp/plain.scn"
"$fakegc" run -q --compat pytorch-1.13 "$tmp/plain.scn" >/dev/null; rc=$?
[ $rc -eq 1 ] || fail "without config suppress: exit $rc, not 1"
cp "$dir/kept.supp" "$tmp/" && echo "none: site=nowhere.py:1" > "$tmp/other.supp"
sed 's/^verdict()/verdict(suppress="other.supp")/' "$dir/config_suppress.scn" > "$tmp/kw.scn"
"$fakegc" run -q --compat pytorch-1.13 "$tmp/kw.scn" >/dev/null; rc=$?
[ $rc -eq 1 ] || fail "verdict(suppress=) should win over config: exit $rc"
sed 's/kept.supp/gone.supp/' "$dir/config_suppress.scn" > "$tmp/gone.scn"
out=$("$fakegc" run --compat pytorch-1.13 "$tmp/gone.scn" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "gone.supp" || fail "missing rules file: exit $rc: $out"
echo "ok: config suppress"
