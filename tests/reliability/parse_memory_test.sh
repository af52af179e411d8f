#!/bin/sh
# parse_memory_test.sh FAKEGC - `run` parses every file before it runs any,
# but holds a bounded amount of parsed program (SC_KEEP_BUDGET, then one
# file at a time): three large files peak about as one does, not three
# times as high; and a parse error still runs nothing.
fakegc=$1
. "$(dirname "$0")/scratch.sh"
# about 4 MB each: about 90 MiB parsed, past the 64 MiB kept
/usr/bin/python3 -c '
line = "t = empty(3, 5)\nexpect t.size(1) == 5\ndel t\n"
for i in range(3):
    open("g%d.scn" % i, "w").write("# generated %d\n" % i + line * (4000000 // len(line)))
' || exit 2
/usr/bin/time -f %M -o one.kb "$fakegc" run -q g0.scn > /dev/null || bad "one file: exit $?"
/usr/bin/time -f %M -o three.kb "$fakegc" run -q g0.scn g1.scn g2.scn > out ||
    bad "three files: exit $?: $(tail -1 out)"
grep -q "3 passed, 0 failed" out || bad "three files: $(tail -1 out)"
one=$(cat one.kb) three=$(cat three.kb)
echo "peak RSS: one file $one kB, three files $three kB"
[ "$three" -lt $((one * 3 / 2)) ] || bad "three files peak at $three kB, one at $one kB: not bounded"
# a parse error anywhere: nothing runs (exit 2)
printf 't = empty(\n' > broken.scn
"$fakegc" run -q g0.scn broken.scn > out 2>&1
[ $? -eq 2 ] || bad "a parse error: exit $?, want 2"
[ "$fail" -eq 0 ] && echo "ok: the parse phase is bounded"
exit "$fail"
