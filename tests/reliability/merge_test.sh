#!/bin/sh
# merge_test.sh FAKEGC SOURCE_DIR - `fakegc merge` checks what it merges:
# every summary is recomputed from the scenarios, each shard holds the
# scenarios its campaign's split gives it, duplicate keys and unknown
# schemas are refused (by diff too), and merge reads what diff reads.
fakegc=$1 src=$2
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# expect2 WHAT PATTERN CMD...: exit 2 and stderr matching PATTERN
expect2() {
    what=$1 pat=$2; shift 2
    "$@" > out 2> err; rc=$?
    [ "$rc" -eq 2 ] || { bad "$what: exit $rc, want 2: $(cat out err | tail -3)"; return; }
    grep -qE "$pat" err || bad "$what: '$(cat err)' does not say '$pat'"
    echo "ok: $what: $(cat err)"
}
edit() {  # FILE PYTHON-STATEMENTS-ON-r
    /usr/bin/python3 -c "import json,sys
r = json.load(open(sys.argv[1]))
$2
json.dump(r, open(sys.argv[1], 'w'), indent=1)" "$1" || bad "test input $1"
}
# refused WHAT FROM TO EDIT MESSAGE OTHER: TO, FROM with EDIT made to it,
# merged after OTHER, is refused with MESSAGE (expect2)
refused() {
    cp "$2" "$3" && edit "$3" "$4"
    expect2 "$1" "$5" "$fakegc" merge "$6" "$3"
}
for k in 0 1; do
    "$fakegc" run -q --shard $k/2 --format json --output r$k.json "$src/scenarios/memo" 2>/dev/null ||
        bad "run shard $k"
    "$fakegc" run -q --inject strong-memo --shard $k/2 --format json --output i$k.json \
        "$src/scenarios/memo" 2>/dev/null
done
"$fakegc" merge r0.json r1.json > out 2>&1 || bad "a good merge: exit $?: $(cat out)"
# a shard whose scenarios were removed (the summary left as it was)
refused "scenarios removed" r1.json gone.json 'r["scenarios"] = []' \
    'gone.json: its summary says "passed": 5 but its scenarios give 0' r0.json
# ... and its summary made to agree: the split says 5 are missing
refused "scenarios removed, summary fixed" gone.json gone2.json 'r["summary"]["passed"] = 0' \
    'gone2.json \(shard 1 of 2\) holds 0 scenarios, but a campaign of 10 files gives shard 1 5: 5 missing' r0.json
# a fail under an all-pass summary
refused "fail under a pass summary" i1.json lie.json \
    'r["summary"] = {"passed": 5, "failed": 0, "skipped": 0, "errors": 0}; r["status"] = "pass"' \
    'lie.json: its summary says "passed": 5 but its scenarios give 1' i0.json
# a scenario more than the split gives
refused "an extra scenario" r1.json extra.json \
    'x = dict(r["scenarios"][0]); x["file"] = "/elsewhere/x.scn"; r["scenarios"].append(x); r["summary"]["passed"] += 1' \
    'holds 6 scenarios, but a campaign of 10 files gives shard 1 5: 1 extra' r0.json
# a status no run report has
refused "an unknown status" r1.json st.json 'r["scenarios"][0]["status"] = "great"' \
    'has status "great"' r0.json
# the merged summary and status are the scenarios' (a shard that fails, one that passes)
for k in 0 1; do
    "$fakegc" run -q --inject strong-memo --shard $k/2 --format json --output p$k.json \
        "$src/scenarios/memo/churn.scn" "$src/scenarios/memo/fake_memo_hit.scn" 2>/dev/null
done
"$fakegc" merge --format json --output m.json p0.json p1.json; rc=$?
[ "$rc" -eq 1 ] || bad "pass and fail shards: exit $rc, want 1"
/usr/bin/python3 -c 'import json,sys
m = json.load(open("m.json"))
assert m["summary"] == {"passed": 1, "failed": 1, "skipped": 0, "errors": 0}, m["summary"]
assert m["status"] == "fail", m["status"]' || bad "the merged summary or status is not the scenarios'"
# oom: the summary from the scenarios too
for k in 0 1; do
    "$fakegc" oom --max-fail 3 --shard $k/2 --format json --output o$k.json \
        "$src/scenarios/memo/fake_memo_hit.scn" "$src/scenarios/memo/hits_misses.scn" || bad "oom $k"
done
"$fakegc" merge o0.json o1.json > out 2>&1 || bad "a good oom merge: exit $?: $(cat out)"
refused "an oom summary that lies" o1.json olie.json 'r["summary"]["failure_points"] += 1' \
    'olie.json: its summary says "failure_points"' o0.json
# duplicate keys: refused by merge and by diff
sed 's/^  "scenarios": \[/  "scenarios": [], "scenarios": [/' r1.json > dup.json
grep -q '"scenarios": \[\], "scenarios"' dup.json || bad "test input dup.json"
expect2 "merge: duplicate key" 'dup.json:[0-9]+:[0-9]+: duplicate key "scenarios"' \
    "$fakegc" merge r0.json dup.json
# (as the base report: exit 2; as the new one: a regression saying why)
expect2 "diff: duplicate key" 'dup.json:[0-9]+:[0-9]+: duplicate key "scenarios"' \
    "$fakegc" diff dup.json r1.json
"$fakegc" diff r1.json dup.json > out 2>&1
[ $? -eq 1 ] && grep -q 'duplicate key "scenarios"' out || bad "diff: a new report with a duplicate key: $(cat out)"
sed 's/"passed": \([0-9]*\),/"passed": \1, "passed": 0,/' r1.json > dup2.json
expect2 "diff: duplicate nested key" 'duplicate key "passed"' "$fakegc" diff dup2.json r1.json
# unknown schemas: refused by merge and by diff
sed 's|"schema": "fakegc-report/3"|"schema": "fakegc-report/9"|' r1.json > s3.json
expect2 "merge: unknown schema" 's3.json: unknown schema "fakegc-report/9"' \
    "$fakegc" merge r0.json s3.json
expect2 "diff: unknown schema" 'unknown schema "fakegc-report/9"' "$fakegc" diff s3.json r1.json
"$fakegc" diff r1.json s3.json > out 2>&1
[ $? -eq 1 ] && grep -q 'unknown schema' out || bad "diff: a new report of an unknown schema: $(cat out)"
# one size limit for both readers (a sparse 17 GiB file: nothing is read)
truncate -s 17G huge.json || bad "truncate"
expect2 "diff: the size limit" 'larger than 16384 MiB' "$fakegc" diff huge.json r1.json
expect2 "merge: the size limit" 'larger than 16384 MiB' "$fakegc" merge huge.json
[ "$fail" -eq 0 ] && echo "ok: merge checks what it merges"
exit "$fail"
