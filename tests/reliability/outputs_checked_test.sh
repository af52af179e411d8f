#!/bin/sh
# outputs_checked_test.sh FAKEGC SOURCE_DIR - every output is one output:
# opened (so checked) before any work, refused when it names an input or
# another output (by inode, or by the real path of its folder for a file
# not made yet), and every write error is exit 2 with the path and
# strerror, for reports, --help, list and merge alike; an unusable TMPDIR
# is exit 2, and fakegc's own out-of-memory is said once, in words.
f=$1
src=$2
. "$(dirname "$0")/scratch.sh"
printf 't = empty(1)\n' > ok.scn
mkdir slow
printf 'repeat 30000000\n  t = empty(4)\nend\n' > slow/b.scn
# --junit (and --json, --tap, --text) naming an input: refused, input intact
for o in --junit --json --tap --text --html; do
    "$f" run ok.scn $o ok.scn > out 2> err
    rc=$?
    [ "$rc" -eq 2 ] && grep -q -- "$o ok.scn is one of the inputs" err || bad "$o = input: exit $rc, $(cat err)"
    [ "$(cat ok.scn)" = "t = empty(1)" ] || { bad "$o overwrote the input"; printf 't = empty(1)\n' > ok.scn; }
done
# two spellings of one new path: refused, nothing written
"$f" run ok.scn --output same.out --dot ./same.out > out 2> err
rc=$?
[ "$rc" -eq 2 ] && grep -q "both name" err && [ ! -e same.out ] || bad "same.out twice: exit $rc, $(cat err)"
mkdir sub
"$f" run ok.scn --format json --output sub/../r.json --junit r.json > out 2> err
[ $? -eq 2 ] && grep -q "both name" err || bad "sub/../r.json and r.json: $(cat err)"
# an output that cannot be opened fails before the work
start=$(date +%s)
"$f" run slow --junit /nonexistent/x.xml > out 2> err
rc=$?
[ "$rc" -eq 2 ] && grep -q "junit: cannot write /nonexistent/x.xml: No such file or directory" err ||
    bad "--junit /nonexistent: exit $rc, $(cat err)"
[ $(( $(date +%s) - start )) -lt 3 ] || bad "--junit /nonexistent: ran before refusing"
# write errors: exit 2 with the path and strerror, everywhere
"$f" run ok.scn --junit /dev/full > out 2> err
[ $? -eq 2 ] && grep -q "junit: cannot write /dev/full: No space left on device" err || bad "--junit /dev/full: $(cat err)"
"$f" list bugs > /dev/full 2> err
[ $? -eq 2 ] && grep -q "No space left on device" err || bad "list bugs > /dev/full: $(cat err)"
"$f" list options > /dev/full 2> err
[ $? -eq 2 ] || bad "list options > /dev/full: exit 0"
"$f" run --help > /dev/full 2> err
[ $? -eq 2 ] && grep -q "No space left on device" err || bad "--help > /dev/full: $(cat err)"
"$f" --help > /dev/full 2> err
[ $? -eq 2 ] || bad "fakegc --help > /dev/full: exit 0"
"$f" run ok.scn --format json --output r.json 2> err || bad "run: $(cat err)"
"$f" merge r.json > /dev/full 2> err
rc=$?
[ "$rc" -eq 2 ] && grep -q "No space left on device" err || bad "merge > /dev/full: exit $rc, $(cat err)"
# an unusable TMPDIR is the environment's fault: exit 2, not 3
TMPDIR=/nonexistent "$f" run -j2 ok.scn ok.scn > out 2> err
rc=$?
[ "$rc" -eq 2 ] && grep -q "TMPDIR" err || bad "TMPDIR=/nonexistent -j2: exit $rc, $(cat err)"
# fakegc's own allocations failing: said once, no nameless FAIL lines
"$f" run --allocator fail:2000+:all -q "$src/scenarios" > out 2> err
grep -q "^FAIL ?" out && bad "fail:2000+:all: $(grep -c '^FAIL ?' out) nameless FAIL lines"
[ "$(grep -c "out of memory" err)" -le 1 ] || bad "fail:2000+:all: out of memory said more than once"
[ "$fail" -eq 0 ] && echo "ok: outputs checked first, write errors exit 2"
exit $fail
