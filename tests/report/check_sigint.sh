#!/bin/sh
# check_sigint.sh FAKEGC SOURCE_DIR - results are streamed: each PASS line
# appears when its scenario finishes (here while a slow one still runs), and
# SIGINT stops the scenario in hand at its next statement, prints what
# finished and the summary so far, exits 130, ends the workers, and replaces
# an --output report by a complete one marked interrupted.
set -u
f=$1
. "$(dirname "$0")/../lib.sh"
cd "$2" || exit 2
t_begin check_sigint
printf 'repeat 500_000_000\n  t = empty(2)\nend\n' > "$tmp/zz_slow.scn"
cp scenarios/memo/weak_keys.scn "$tmp/a.scn"
cp scenarios/memo/churn.scn "$tmp/b.scn"
for jobs in 1 2; do
    echo old > "$tmp/old.json"
    # empty the files here: the background job's own redirection happens
    # in the child, after the loop below may already have read the last
    # pass's lines
    : > "$tmp/out.txt"
    : > "$tmp/err.txt"
    "$f" run -j$jobs "$tmp/a.scn" "$tmp/b.scn" "$tmp/zz_slow.scn" \
        > "$tmp/out.txt" 2> "$tmp/err.txt" &
    pid=$!
    n=0
    while [ "$(grep -c '^PASS ' "$tmp/out.txt")" -lt 2 ] && [ $n -lt 600 ]; do
        sleep 0.1; n=$((n + 1))
    done
    [ "$(grep -c "^PASS " "$tmp/out.txt")" -eq 2 ] || fail "-j$jobs: PASS lines not streamed: $(cat "$tmp/out.txt" "$tmp/err.txt")"
    kill -INT $pid
    wait $pid
    rc=$?
    [ $rc -eq 130 ] || fail "-j$jobs: exit $rc after SIGINT, want 130"
    grep -q '^2 of 3 finished: 2 passed, 0 failed' "$tmp/err.txt" ||
        fail "-j$jobs: no summary of what finished: $(cat "$tmp/err.txt")"
    n=0   # the workers end at their next statement: give them 5 s
    while pgrep -f "$tmp/zz_slow.scn" > /dev/null && [ $n -lt 50 ]; do
        sleep 0.1; n=$((n + 1))
    done
    pgrep -f "$tmp/zz_slow.scn" > /dev/null && fail "-j$jobs: a worker outlived the run"
done
# with --output: a complete report of what finished, marked interrupted; no
# temporary is left
"$f" run --format json --output "$tmp/old.json" "$tmp/a.scn" "$tmp/zz_slow.scn" \
    > /dev/null 2>&1 &
pid=$!
sleep 3   # a.scn takes milliseconds; a loaded runner may take a while to start
kill -INT $pid
wait $pid
/usr/bin/python3 - "$tmp/old.json" <<'PY' || fail "the interrupted run's report: $(head -c 300 "$tmp/old.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] == "SIGINT" and r["planned"] == 2, r
assert [s["file"].rsplit("/", 1)[-1] for s in r["scenarios"]] == ["a.scn"], r["scenarios"]
PY
ls -a "$tmp" | grep -q 'fakegc-' && fail "a temporary report was left: $(ls -a "$tmp")"
echo "check_sigint: ok"
