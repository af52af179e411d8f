#!/bin/sh
# check_marks.sh FAKEGC OUT_DIR - a program's mark("LABEL"): the verdict
# says a group is made since its mark, the --timeline chart draws each mark
# with its label (escaped), in one process and sampled in --jobs workers,
# and the HTML page's timeline and verdict show them; rsvg-convert renders
# the chart.
set -u
f=$1
o=$2
s=tests/report/marks.scn
fail() { echo "check_marks: FAIL: $*"; exit 1; }
"$f" run --timeline "$o/marks.svg" --html "$o/marks.html" "$s" > "$o/marks.txt"
[ $? -eq 1 ] || fail "the accumulating fakes fail the verdict"
grep -q "accumulating: 6 fake tensors made at prog.py:9 since mark 'step <3> & \"more\"'" \
    "$o/marks.txt" || fail "the verdict names the mark: $(cat "$o/marks.txt")"
for svg in "$o/marks.svg" "$o/marks-j.svg"; do
    if [ "$svg" = "$o/marks-j.svg" ]; then
        "$f" run -j 2 -q --timeline "$svg" "$s" "$s" > /dev/null   # sampled in workers
    fi
    [ "$(grep -c 'stroke="#9467bd" stroke-width="1.5" stroke-dasharray="6,3"' "$svg")" -ge 3 ] ||
        fail "$svg: want a line per mark"
    grep -q '>warm-up</text>' "$svg" || fail "$svg: no label warm-up"
    grep -q '>step &lt;3&gt; &amp; &quot;more&quot;</text>\|>step &lt;3&gt; &amp; "more"</text>' \
        "$svg" || fail "$svg: the label escaped"
    grep -q '| mark</tspan>' "$svg" || fail "$svg: no legend"
    if command -v rsvg-convert > /dev/null; then
        rsvg-convert "$svg" -o "$o/marks.png" || fail "rsvg-convert: $svg"
    fi
done
grep -q '<small class="vmark">since mark' "$o/marks.html" || fail "the page's verdict: no mark"
grep -q '>warm-up</text>' "$o/marks.html" || fail "the page's timeline: no label"
echo "check_marks: ok"
