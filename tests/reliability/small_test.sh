#!/bin/sh
# small_test.sh FAKEGC - small command-line behaviours, one check
# each: a UTF-8 BOM is accepted, CR-only line endings get a clear error,
# `shrink DIR` names the problem (it said "read error"), `stress --steps 0`
# is refused (it ran 100k steps), an unwritable --out-dir is refused before
# the work (reproducer paths were printed that were never written), the
# help says --max-* 0 is no limit, a scenario over the size limit says the
# limit, and fail:N fails the model, not the parser (exit 3 "out of memory").
fakegc=$1
src=$2
. "$(dirname "$0")/scratch.sh"
printf '\357\273\277t = empty(1)\nexpect t.dim() == 1\n' > bom.scn
"$fakegc" run bom.scn >out 2>&1 || bad "BOM: exit $?: $(cat out)"
printf 't = empty(1)\ru = t.t()\r' > cr.scn
"$fakegc" run --no-color cr.scn >out 2>&1
[ $? -eq 2 ] && grep -q "^cr.scn:1:13: error: carriage return not followed by a newline" out ||
    bad "CR-only: $(cat out)"
printf 't = empty(1)\r\nu = t.t()\r\n' > crlf.scn
"$fakegc" run crlf.scn >out 2>&1 || bad "CRLF: exit $?: $(cat out)"
mkdir dir
"$fakegc" shrink dir >out 2>&1
[ $? -eq 2 ] && grep -q "dir is a folder: shrink takes one scenario file" out ||
    bad "shrink DIR: $(cat out)"
"$fakegc" stress --steps 0 >out 2>&1
[ $? -eq 2 ] && grep -q "steps: expected a number >= 1" out || bad "--steps 0: $(cat out)"
touch afile
"$fakegc" stress --steps 100 --out-dir afile/sub >out 2>&1
[ $? -eq 2 ] && grep -q "out-dir afile/sub: cannot create afile/sub: Not a directory" out ||
    bad "--out-dir: $(cat out)"
"$fakegc" run --help | grep -q -- "--max-\* 0: no limit" || bad "--max-* 0 undocumented"
# 64 MiB + 1 byte of comment: refused with the limit named, before parsing
head -c 67108865 /dev/zero | tr '\0' '#' > big.scn
"$fakegc" run big.scn >out 2>&1
[ $? -eq 2 ] && grep -q "big.scn: error: larger than 64 MiB, the scenario size limit" out ||
    bad "big file: $(head -c 300 out)"
rm -f big.scn
"$fakegc" run -q --allocator fail:50/libc "$src/scenarios" >out 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "OutOfMemory" out && ! grep -q "did not parse\|fakegc run: out of memory" out ||
    bad "fail:50: exit $rc: $(tail -3 out)"
[ "$fail" -eq 0 ] && echo "ok: the small things"
exit $fail
