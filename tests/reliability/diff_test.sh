#!/bin/sh
# diff_test.sh FAKEGC - a run that ran nothing, an empty or cut-off new
# report, an interrupted one and a scenario gone are regressions (exit 1);
# "scenarios": [] must not say "0 regressions" and exit 0.
fakegc=$1
. "$(dirname "$0")/scratch.sh"
printf 't = empty(1)\n' > a.scn
cp a.scn b.scn
"$fakegc" run a.scn b.scn --format json --output base.json
"$fakegc" run a.scn --format json --output one.json
printf '{"tool": "fakegc", "scenarios": [], "summary": {"passed": 0, "failed": 0, "skipped": 0}}\n' > none.json
: > zero.json
head -c 150 base.json > cut.json
sed 's/^}$/, "interrupted": "SIGINT", "planned": 2}/' one.json > part.json
python3 -c 'import json; json.load(open("part.json"))' || bad "test input part.json"
"$fakegc" diff base.json base.json >out 2>&1 || bad "same report: exit $?: $(cat out)"
for n in none zero cut part one; do
    "$fakegc" diff base.json $n.json >out 2>&1
    rc=$?
    [ "$rc" -eq 1 ] || bad "$n.json: exit $rc, want 1: $(cat out)"
done
"$fakegc" diff base.json none.json | grep -q "ran no scenarios" || bad "none: no reason given"
"$fakegc" diff base.json part.json | grep -q "partial: interrupted by SIGINT after 1 of 2" || bad "part: no reason given"
"$fakegc" diff base.json missing.json >/dev/null 2>&1
[ $? -eq 2 ] || bad "a missing file is a usage error (2)"
[ "$fail" -eq 0 ] && echo "ok: empty, partial and cut-off reports are regressions"
exit $fail
