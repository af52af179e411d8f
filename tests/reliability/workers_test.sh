#!/bin/sh
# workers_test.sh FAKEGC - --jobs workers: they die with
# a SIGKILLed parent and leave no temporary files (they ran on for 600 s and
# left $TMPDIR/fakegc-json-*); a hung scenario is that scenario's timeout
# error while the others run; workers are reused across files.
fakegc=$1
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 2
mkdir tmp slow many
export TMPDIR=$d/tmp
fail=0
bad() { echo "FAIL: $*"; fail=1; }
printf 't = empty(1)\n' > slow/a.scn
printf 'repeat 100000000\n  t = empty(4)\nend\n' > slow/b.scn
cp slow/b.scn slow/c.scn
cp slow/a.scn slow/d.scn

# the parent SIGKILLed: its workers end at once and clean up
"$fakegc" run slow --jobs 2 --timeout 0 -q >/dev/null 2>&1 & pid=$!
sleep 1
kids=$(pgrep -P $pid)
[ -n "$kids" ] || bad "no workers seen"
kill -KILL $pid
wait $pid 2>/dev/null
sleep 1
for k in $kids; do
    # a zombie is dead (an init that does not reap leaves it as Z)
    st=$(cut -d' ' -f3 "/proc/$k/stat" 2>/dev/null)
    if [ -n "$st" ] && [ "$st" != Z ]; then
        bad "worker $k outlived its parent (state $st)"
        kill -KILL "$k"
    fi
done
[ -z "$(ls -A tmp)" ] || bad "left in TMPDIR: $(ls -A tmp)"

# a scenario running past --timeout is that scenario's error; the rest run
start=$(date +%s)
"$fakegc" run slow --jobs 2 --timeout 1 --format json --output r.json 2>/dev/null
rc=$?
[ "$rc" -eq 3 ] || bad "timeout: exit $rc, want 3 (an error)"
[ $(( $(date +%s) - start )) -lt 10 ] || bad "timeout: took $(( $(date +%s) - start )) s"
python3 - <<'PY' || bad "timeout report"
import json
r = {s["file"]: s for s in json.load(open("r.json"))["scenarios"]}
assert r["slow/a.scn"]["status"] == "pass" and r["slow/d.scn"]["status"] == "pass", r
for f in ("slow/b.scn", "slow/c.scn"):
    assert r[f]["status"] == "error", r[f]
    assert "timed out after 1 s" in r[f]["error"], r[f]["error"]
PY
[ -z "$(ls -A tmp)" ] || bad "left in TMPDIR after the run: $(ls -A tmp)"

# many files through reused workers: the same records as in-process
i=0
while [ $i -lt 300 ]; do
    printf 't = empty(2, 3)\nexpect t.t().dim() == 2\n' > many/f$i.scn
    i=$((i + 1))
done
"$fakegc" run many -q --format json --output one.json
"$fakegc" run many -q --jobs 2 --format json --output two.json
python3 - <<'PY' || bad "--jobs 2 differs from the in-process run"
import json
a, b = (json.load(open(f)) for f in ("one.json", "two.json"))
assert a["summary"] == b["summary"] == {"passed": 300, "failed": 0, "skipped": 0, "errors": 0}, (a["summary"], b["summary"])
assert [s["file"] for s in a["scenarios"]] == [s["file"] for s in b["scenarios"]]
PY
[ "$fail" -eq 0 ] && echo "ok: workers die with the parent, time out per scenario"
exit $fail
