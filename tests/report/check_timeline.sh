#!/bin/sh
# check_timeline.sh FAKEGC OUT_DIR - the --timeline chart tells the story: an
# x axis in statements with source lines, two labelled y axes, PASS/FAIL in
# the title, failed expectations marked red (one per failed line), del and
# gc() marked, a band where statements outnumber pixels; a recording's marks
# at the program's file:line; with --jobs the same chart, sampled in the
# workers; rsvg-convert must render it.
set -u
f=$1
o=$2
fail() { echo "check_timeline: FAIL: $*"; exit 1; }
"$f" run -q --timeline "$o/tl-pass.svg" scenarios/memo/churn.scn scenarios/storage/adaptive_frequency.scn \
    scenarios/cycles/weakref_into_garbage.scn || fail "clean run"
[ "$(grep -c '<polyline' "$o/tl-pass.svg")" -eq 6 ] || fail "want 2 series x 3 panels"
grep -q '>PASS</tspan> scenarios/memo/churn.scn' "$o/tl-pass.svg" || fail "PASS in the title"
grep -q 'statements executed (Ln' "$o/tl-pass.svg" || fail "x axis label"
grep -q '>L[0-9][0-9]*</text>' "$o/tl-pass.svg" || fail "source lines at the ticks"
grep -q '>live objects</text>' "$o/tl-pass.svg" && grep -q '>live bytes</text>' "$o/tl-pass.svg" ||
    fail "labelled y axes"
grep -q '<polygon' "$o/tl-pass.svg" || fail "no min-max band for churn's 6000 statements"
grep -q 'stroke="#2ca02c" stroke-width="2"' "$o/tl-pass.svg" || fail "no gc() mark"
grep -q 'stroke="#555" stroke-opacity' "$o/tl-pass.svg" || fail "no del mark"
grep -q '#d62728" stroke-width' "$o/tl-pass.svg" && fail "a red mark on a passing run"
"$f" run -q --inject strong-memo --timeline "$o/tl-fail.svg" scenarios/memo/weak_keys.scn > /dev/null
[ $? -eq 1 ] || fail "the strong-memo run should fail"
grep -q '>FAIL</tspan>' "$o/tl-fail.svg" || fail "FAIL in the title"
[ "$(grep -c '<circle[^>]*#d62728' "$o/tl-fail.svg")" -eq 3 ] || fail "want 3 red failure marks"
# --jobs: each worker samples its own scenario; the chart is the one a
# single process draws, panel for panel (no fallback to one process)
"$f" run -q --timeline "$o/tl-j1.svg" scenarios/memo scenarios/cycles > /dev/null ||
    fail "clean run of memo/ and cycles/"
"$f" run -q -j2 --timeline "$o/tl-j2.svg" scenarios/memo scenarios/cycles \
    > /dev/null 2> "$o/tl-j2.err" || fail "clean -j2 run"
grep -q 'ignored' "$o/tl-j2.err" && fail "-j2 fell back to one process: $(cat "$o/tl-j2.err")"
cmp -s "$o/tl-j1.svg" "$o/tl-j2.svg" || fail "-j2 draws another chart than -j1"
# a worker stopped by a finding still has its panel, FAIL, its line red
"$f" run -q -j2 --inject early-free --allocator guard --timeline "$o/tl-find.svg" \
    scenarios/memo/weak_keys.scn scenarios/memo/churn.scn > /dev/null
[ $? -eq 1 ] || fail "the early-free run should be findings"
[ "$(grep -c '>FAIL</tspan>' "$o/tl-find.svg")" -eq 2 ] || fail "want 2 FAIL panels"
grep -q '<circle[^>]*#d62728' "$o/tl-find.svg" || fail "no red mark at the finding"
# a recording (at() sites): its failed expectation labelled with the
# program's file:line, the recording's line only on hover, in the chart and
# the page (gc() and mark() there too); the same chart through a worker
cat > "$o/tl-rec.scn" <<'EOF'
m = fake_mode()
at("prog.py", 5, 1, 2)
t = empty(4)
f = m.fake(t)
gc()
at("prog.py", 9, 2, 2)
g = m.fake(empty(8))
mark("step two")
expect m.memo_fake == 7
EOF
"$f" run -q --timeline "$o/tl-rec.svg" --html "$o/tl-rec.html" "$o/tl-rec.scn" > /dev/null
[ $? -eq 1 ] || fail "the recording's expectation should fail"
grep -q '<title>failed expectation at prog.py:9 (the recording&apos;s line 9)</title>' \
    "$o/tl-rec.svg" || fail "the red mark's hover: the program's site, then the recording's line"
grep -q 'fill="#d62728" font-size="10"[^>]*>prog.py:9</text>' "$o/tl-rec.svg" ||
    fail "the red mark labelled with the program's site"
for want in 'prog.py:9: failed expect (the recording&apos;s line 9)' \
            'gc() after prog.py:5 (the recording&apos;s line 5)' \
            'mark step two after prog.py:9 (the recording&apos;s line 8)'; do
    grep -qF "<title>$want</title>" "$o/tl-rec.html" || fail "the page's mark: want '$want'"
done
grep -q '<title>line [0-9]*: ' "$o/tl-rec.html" && fail "a mark of a recording says the recording's line"
grep -qF "the program&apos;s 2 events, the recording&apos;s 9 statements" "$o/tl-rec.html" ||
    fail "the page's sample in the program's events"
"$f" run -q -j2 --timeline "$o/tl-rec2.svg" "$o/tl-rec.scn" scenarios/memo/churn.scn > /dev/null
"$f" run -q --timeline "$o/tl-rec1.svg" "$o/tl-rec.scn" scenarios/memo/churn.scn > /dev/null
cmp -s "$o/tl-rec1.svg" "$o/tl-rec2.svg" || fail "-j2 draws the recording's marks otherwise"
# a long recording (6004 lines, 2000 events, sampled): its failure at the
# last line is marked where it ran, in the chart and the page, and -j2 too
{
    echo 'm = fake_mode()'; echo 't = empty(4)'
    i=1
    while [ $i -le 2000 ]; do
        echo "at(\"prog.py\", 7, $i, 2000)"; echo 'f = m.fake(t)'; echo 'del f'
        i=$((i + 1))
    done
    echo 'at("prog.py", 9)'; echo 'expect m.memo_fake == 5'
} > "$o/tl-long.scn"
"$f" run -q --timeline "$o/tl-long.svg" --html "$o/tl-long.html" "$o/tl-long.scn" > /dev/null
[ $? -eq 1 ] || fail "the long recording's expectation should fail"
grep -q '<title>failed expectation at prog.py:9 (the recording&apos;s line 6004)</title>' \
    "$o/tl-long.svg" || fail "no red mark at a long recording's last line"
grep -qF '<title>prog.py:9: failed expect (the recording&apos;s line 6004)</title>' \
    "$o/tl-long.html" || fail "no failure mark on a long recording's page"
"$f" run -q -j2 --timeline "$o/tl-long2.svg" "$o/tl-long.scn" scenarios/memo/churn.scn > /dev/null
"$f" run -q --timeline "$o/tl-long1.svg" "$o/tl-long.scn" scenarios/memo/churn.scn > /dev/null
cmp -s "$o/tl-long1.svg" "$o/tl-long2.svg" || fail "-j2 marks the long recording's failure otherwise"
if command -v rsvg-convert > /dev/null; then
    rsvg-convert "$o/tl-fail.svg" -o "$o/tl-fail.png" || fail "rsvg-convert cannot render it"
    rsvg-convert "$o/tl-rec.svg" -o "$o/tl-rec.png" || fail "rsvg-convert cannot render a recording's"
fi
echo "check_timeline: ok"
