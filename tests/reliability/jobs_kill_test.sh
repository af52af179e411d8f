#!/bin/sh
# jobs_kill_test.sh FAKEGC - a SIGKILL of a `run --jobs` parent leaves
# nothing in $TMPDIR: no fakegc-run-* folder, no dot-N/objects-N of the
# scenarios that finished (their --dot/--objects pieces wait for the end of
# the run), and no worker outlives it. Deterministic: the parent is killed
# once a worker has finished one leaking scenario (its FAIL line is out)
# while the other worker runs a slow one.
. "$(dirname "$0")/scratch.sh"
fakegc=$1
mkdir tmp suite
export TMPDIR=$d/tmp
# each conversion memoized for good under strong-memo: a leak to report
printf 'm = fake_mode()\nrepeat 200\n  f = m.fake(empty(1))\nend\nexpect m.memo_meta == 0\n' \
    > suite/a_leak.scn
# slow, and leaking too when it ends: a worker is busy with it at the kill
{ cat suite/a_leak.scn; printf 'repeat 100000000\n  u = empty(4)\nend\n'; } > suite/b_slow.scn
cp suite/b_slow.scn suite/c_slow.scn

"$fakegc" run -j2 --timeout 0 --inject strong-memo --dot g.dot --objects o.jsonl suite \
    > out.txt 2> err.txt &
pid=$!
i=0
until grep -q '^FAIL .*a_leak.scn' out.txt 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 300 ] || { bad "no FAIL line for a_leak.scn in 30 s: $(cat out.txt err.txt)"; break; }
    sleep 0.1
done
kids=$(pgrep -P $pid)
[ -n "$kids" ] || bad "no workers seen"
kill -KILL $pid
wait $pid 2>/dev/null
for k in $kids; do   # PR_SET_PDEATHSIG: at once, but give the kernel a moment
    j=0
    while [ $j -lt 50 ]; do
        st=$(cut -d' ' -f3 "/proc/$k/stat" 2>/dev/null)
        [ -z "$st" ] || [ "$st" = Z ] && break
        j=$((j + 1))
        sleep 0.1
    done
    if [ -n "$st" ] && [ "$st" != Z ]; then
        bad "worker $k outlived its parent (state $st)"
        kill -KILL "$k"
    fi
done
left=$(find tmp -mindepth 1 | head -10 | tr '\n' ' ')
[ -z "$left" ] || bad "left in TMPDIR after the kill: $left"
[ ! -e g.dot ] && [ ! -e o.jsonl ] || bad "an output of the killed run was put in place"
[ "$fail" -eq 0 ] && echo "ok: a SIGKILLed run --jobs leaves nothing in TMPDIR and no worker"
exit $fail
