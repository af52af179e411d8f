#!/bin/sh
# valgrind_sh_test.sh FAKEGC FAKEGC_CANARY SOURCE_DIR - scripts/valgrind.sh
# as a user calls it: a scenario path alone runs it (`fakegc run`), the
# binary is found without being named (its tree's build/, or beside an
# installed copy), and Valgrind's options pass through: --xml writes a
# well-formed memcheck XML naming the binary and the leak, a leak is the
# error exit code, --gen-suppressions=all writes a suppression that
# --suppressions= then honours (exit 0 on the same leak).
f=$1
canary=$2
src=$3
. "$(dirname "$0")/scratch.sh"
vg=$src/scripts/valgrind.sh
scn=$src/scenarios/memo/weak_keys.scn
# a scenario path alone, the binary named by $FAKEGC
FAKEGC=$f "$vg" -q "$scn" > out 2> err
rc=$?
[ $rc -eq 0 ] && grep -q "^PASS .*weak_keys.scn" out || bad "valgrind.sh SCENARIO: exit $rc: $(head -3 err)"
# installed: PREFIX/libexec/fakegc/valgrind.sh finds PREFIX/bin/fakegc
mkdir -p pre/bin pre/libexec/fakegc
cp "$f" pre/bin/fakegc
cp "$vg" pre/libexec/fakegc/valgrind.sh
env -u FAKEGC PATH=/usr/bin:/bin pre/libexec/fakegc/valgrind.sh --xml=yes --xml-file=vg.xml \
    -- run -k weak_keys "$src/scenarios/memo" > out 2> err
rc=$?
[ $rc -eq 0 ] || bad "installed valgrind.sh: exit $rc: $(head -3 err)"
xmllint --noout vg.xml 2> xerr || bad "--xml-file: not well-formed XML: $(head -2 xerr)"
grep -q "<exe>$d/pre/bin/fakegc</exe>" vg.xml || bad "installed valgrind.sh ran $(grep '<exe>' vg.xml | tail -1)"
grep -q "<tool>memcheck</tool>" vg.xml || bad "--xml: not memcheck's"
# a leak (the canary loses a block in diff): the error exit code, in XML
"$f" run --format json --output a.json "$scn" > /dev/null || bad "run --format json: exit $?"
FAKEGC=$canary FAKEGC_CANARY_LEAK=diff "$vg" --xml=yes --xml-file=leak.xml diff a.json a.json \
    > out 2> err
rc=$?
[ $rc -eq 99 ] || bad "a leak under valgrind.sh: exit $rc, want 99"
xmllint --xpath 'count(//error[kind="Leak_DefinitelyLost"])' leak.xml > n 2> xerr
[ "$(cat n)" = 1 ] || bad "--xml: $(cat n) definite leaks, want 1: $(head -2 xerr)"
# --gen-suppressions=all, then --suppressions=FILE: the same leak passes
FAKEGC=$canary FAKEGC_CANARY_LEAK=diff "$vg" --gen-suppressions=all --log-file=gen.log \
    -- diff a.json a.json > out 2> err
rc=$?
[ $rc -eq 99 ] || bad "--gen-suppressions=all: exit $rc, want 99"
sed -n '/^{$/,/^}$/p' gen.log > leak.supp
grep -q "fun:cli_canary_leak" leak.supp || bad "--gen-suppressions=all: no suppression for the leak"
FAKEGC=$canary FAKEGC_CANARY_LEAK=diff "$vg" --suppressions="$d/leak.supp" diff a.json a.json \
    > out 2> err
rc=$?
[ $rc -eq 0 ] || bad "--suppressions=leak.supp: exit $rc, want 0: $(grep -m3 'lost\|ERROR' err)"
[ $fail -eq 0 ] && echo "valgrind_sh: ok"
exit $fail
