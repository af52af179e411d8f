#!/bin/sh
# suppress_test.sh FAKEGC DIR - suppression rules files cannot lie or hang:
# a comment is a comment whatever its length, a rule's name is one word,
# any number of rules; a file that is not a rules file (a folder, NUL
# bytes, /dev/zero, an endless FIFO, a bad rule) is "FILE: is a folder" or
# "FILE:LINE: error: ..." and exit 2 before anything runs, in `run`
# (config suppress, verdict(suppress=), --suppress) and `record`; a FIFO
# nobody writes leaves fakegc killable by SIGTERM. DIR: tests/record/suppress.
fakegc=$(realpath "$1") dir=$(realpath "$2")
. "$(dirname "$0")/scratch.sh"
fail() { echo "FAIL: $*"; exit 1; }
cp "$dir/config_suppress.scn" s.scn   # a lost fake; config suppress = "kept.supp"
grep -v '^config suppress' s.scn > plain.scn
run() { "$fakegc" run -q --compat pytorch-1.13 "$@" > out 2> err; }
nothing_ran() { ! grep -q "passed\|failed\|PASS\|FAIL" out || fail "$1: something ran: $(cat out)"; }

# a 554-byte comment whose tail reads like a rule suppresses nothing
python3 -c "print('# ' + 'x' * 529 + ' everything: class=lost')" > kept.supp
run s.scn; rc=$?
[ $rc -eq 1 ] || fail "a long comment became a rule: exit $rc"

# any number of rules (the 41st applies), values of any length
: > kept.supp
i=0; while [ $i -lt 40 ]; do echo "r$i: site=nowhere$i.py:1" >> kept.supp; i=$((i + 1)); done
long=$(python3 -c "print('*' * 300)")
echo "last: class=lost holder=$long" >> kept.supp
run s.scn || fail "41 rules: exit $?: $(cat out err)"
grep -q "by rule last" out || { "$fakegc" run --compat pytorch-1.13 s.scn | grep -q "by rule last"; } ||
    fail "the 41st rule did not apply"

# each bad file: exit 2, FILE:LINE: error, before anything runs
check() {   # what expected-message [run args...]
    what=$1 msg=$2; shift 2
    run "$@"; rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc, not 2: $(cat err)"
    grep -q -- "$msg" err || fail "$what: no '$msg' in: $(cat err)"
    nothing_ran "$what"
}
printf 'a b: class=lost\n' > kept.supp
check "a name with a space" "kept.supp:1: error: a rule's name is one word" s.scn
printf '# fine\nn: kind=fake colour=red\n' > kept.supp
check "an unknown key" "kept.supp:2: error: unknown key \"colour\"" s.scn
printf 'n: class=lost\0\n' > kept.supp
check "a NUL byte" "kept.supp:1: error: a NUL byte" s.scn
head -c 4096 /dev/zero > kept.supp
check "a NUL-filled file" "kept.supp:1: error: a NUL byte" s.scn
rm kept.supp && mkdir kept.supp
check "a folder" "kept.supp: is a folder" s.scn
rmdir kept.supp
python3 -c "print('n: site=' + 'x' * 5000)" > kept.supp
check "a long line" "kept.supp:1: error: a line longer than 4096 bytes" s.scn
sed 's/^verdict()/verdict(suppress="\/dev\/zero")/' plain.scn > kw.scn
check "verdict(suppress=\"/dev/zero\")" "/dev/zero:1: error: a NUL byte" kw.scn
check "--suppress /dev/zero" "/dev/zero:1: error: a NUL byte" --suppress /dev/zero plain.scn
check "--suppress a folder" "$PWD: is a folder" --suppress "$PWD" plain.scn
mkfifo endless
yes 'n: class=lost' > endless &
check "an endless FIFO" "endless:[0-9]*: error: larger than 1048576 bytes" --suppress endless plain.scn
wait

# --suppress applies to every verdict, and wins over the scenario's own
echo "fix: class=lost" > all.supp
run --suppress all.supp plain.scn || fail "run --suppress: exit $?: $(cat err)"
echo "none: site=nowhere.py:1" > none.supp
printf 'fix-weakref: class=lost\n' > kept.supp
run --suppress none.supp s.scn; rc=$?
[ $rc -eq 1 ] || fail "--suppress should win over config suppress: exit $rc"

# record: checked before the program runs (no Python is started for it)
echo 'raise SystemExit("the program ran")' > prog.py
for bad in /dev/zero "$PWD"; do
    "$fakegc" record --python /bin/false --suppress "$bad" prog.py > out 2> err; rc=$?
    [ $rc -eq 2 ] || fail "record --suppress $bad: exit $rc: $(cat err)"
    grep -q "is a folder\|/dev/zero:1: error: a NUL byte" err || fail "record: $(cat err)"
done

# a FIFO nobody writes: fakegc waits in open(), and SIGTERM ends it
mkfifo silent
"$fakegc" run -q --suppress silent plain.scn > out 2>&1 &
pid=$!
sleep 0.5
kill -TERM $pid
i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "SIGTERM did not end a run waiting on a FIFO"; }
wait $pid; rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, not 143"
echo "ok: suppressions"
