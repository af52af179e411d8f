#!/bin/sh
# output_test.sh FAKEGC - reports are never lost:
# --output, --dot and --timeline go through a temporary file renamed into
# place, are opened before any work, refuse to be an input, and every write
# error is exit 2 with the path and strerror. SIGINT/SIGTERM finish the
# scenario in hand, write a report marked interrupted and exit 130/143;
# SIGKILL leaves the previous report whole.
fakegc=$1
. "$(dirname "$0")/scratch.sh"
printf 't = empty(1)\n' > ok.scn
printf 't = empty(1\n' > broken.scn
mkdir slow
cp ok.scn slow/a.scn
printf 'repeat 30000000\n  t = empty(4)\n  u = t.t()\nend\n' > slow/b.scn
cp slow/b.scn slow/c.scn

# a parse error replaces the previous report (it was truncated to 0) with a
# complete one that says so (fakegc-report(5): status "error")
echo PREVIOUS > r.json
"$fakegc" run ok.scn broken.scn --format json --output r.json 2>/dev/null
rc=$?
[ "$rc" -eq 2 ] || bad "parse error: exit $rc"
/usr/bin/python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(d["status"] != "error")' \
    || bad "parse error: r.json is not a complete report with status error: $(head -c 200 r.json)"
# ... and so are the page and the timeline: complete documents, never empty
"$fakegc" run ok.scn --html p.html --timeline t.svg >/dev/null 2>&1 || bad "ok.scn: exit $?"
"$fakegc" run ok.scn broken.scn --html p.html --timeline t.svg >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || bad "parse error with --html: exit $rc"
[ -s p.html ] && tail -c 20 p.html | grep -q "</html>" && grep -q "did not parse" p.html ||
    bad "parse error: p.html is not a complete page ($(wc -c < p.html) bytes)"
[ -s t.svg ] && xmllint --noout t.svg 2>/dev/null && grep -q "</svg>" t.svg ||
    bad "parse error: t.svg is not a complete SVG ($(wc -c < t.svg) bytes)"
# --output naming an input is refused, the input untouched
"$fakegc" run ok.scn --output ok.scn 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "output ok.scn is one of the inputs" err || bad "--output = input: exit $rc, $(cat err)"
[ "$(cat ok.scn)" = "t = empty(1)" ] || bad "the input was overwritten"
# write errors: exit 2, the path and strerror
"$fakegc" run ok.scn --output /dev/full 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "/dev/full: No space left on device" err || bad "/dev/full: exit $rc, $(cat err)"
"$fakegc" run ok.scn >/dev/full 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "standard output: No space left on device" err || bad "stdout full: exit $rc, $(cat err)"
"$fakegc" run -q --inject view-base-leak "$2/scenarios/fake/neg_conj_unsupported.scn" --dot /dev/full >/dev/null 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "\-\-dot: cannot write /dev/full: No space left" err || bad "--dot /dev/full: exit $rc, $(cat err)"
# an unwritable --timeline is refused before the work, not after it
start=$(date +%s)
"$fakegc" run slow --timeline nodir/t.svg >out 2>err
rc=$?
[ "$rc" -eq 2 ] && grep -q "timeline: cannot write nodir/t.svg: No such file" err || bad "--timeline: exit $rc, $(cat err)"
[ ! -s out ] && [ $(( $(date +%s) - start )) -lt 2 ] || bad "--timeline: ran before refusing"
# SIGINT: the finished scenarios, marked interrupted, exit 130
"$fakegc" run slow --format json --output r.json & pid=$!
sleep 1   # past start-up (the handler), well inside slow/b.scn (tens of seconds)
kill -INT $pid
wait $pid
rc=$?
[ "$rc" -eq 130 ] || bad "SIGINT: exit $rc"
python3 -c '
import json, sys
r = json.load(open("r.json"))
assert r["interrupted"] == "SIGINT", r.get("interrupted")
# the scenario in hand stops at its next statement and is left out: what
# the report holds is a prefix of the sorted list, every record finished
files = [s["file"] for s in r["scenarios"]]
assert r["planned"] == 3 and len(files) < 3, (r["planned"], files)
assert files == ["slow/a.scn", "slow/b.scn", "slow/c.scn"][:len(files)], files
assert all(s["status"] == "pass" for s in r["scenarios"]), r["scenarios"]
' || bad "SIGINT report"
# SIGTERM with --jobs: exit 143, a complete report
"$fakegc" run slow --jobs 2 --format json --output r.json & pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" -eq 143 ] || bad "SIGTERM --jobs: exit $rc"
python3 -c 'import json; assert json.load(open("r.json"))["interrupted"] == "SIGTERM"' || bad "SIGTERM report"
# SIGKILL mid-run: the previous report stays whole
echo PREVIOUS > r.json
"$fakegc" run slow --format json --output r.json & pid=$!
sleep 0.3
kill -KILL $pid
wait $pid
[ "$(cat r.json)" = PREVIOUS ] || bad "SIGKILL left $(wc -c < r.json) bytes of something else"
# a finished run replaces it whole, with the usual mode
"$fakegc" run ok.scn --format json --output r.json
python3 -c 'import json; json.load(open("r.json"))' || bad "report not replaced whole"
[ "$(stat -c %a r.json)" = "$(umask -S >/dev/null; touch x; stat -c %a x)" ] || bad "mode $(stat -c %a r.json)"
[ "$fail" -eq 0 ] && echo "ok: outputs whole or not at all"
exit $fail
