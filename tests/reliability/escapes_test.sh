#!/bin/bash
# escapes_test.sh FAKEGC DIR - every output format, fed the same hostile
# names (a scenario path and an expectation message with ESC, BEL and other
# control bytes, invalid UTF-8, quotes, <>&, # and \, a newline), is valid to
# its own consumer: JSON to json.load, JUnit and the timeline SVG to
# xmllint, DOT to dot (no warning: no Latin-1 fallback), TAP to prove, the
# HTML page to headless Chromium (the name is text, not markup), SARIF to
# json.load, GitHub workflow commands to their own decoding (one command a
# line, the file= property decoding back to the name). No output
# carries a raw control byte; every one is valid UTF-8.
# DIR: the source tree. Exit 77 when a consumer is missing.
fakegc=$(realpath "$1") src=$(realpath "$2")
. "$(dirname "$0")/scratch.sh"
for t in xmllint dot prove python3; do
    command -v $t >/dev/null || { echo "skipped: no $t"; exit 77; }
done
hostile=$'h\e]0;title\a\e[2J\x01\x7f\xc2\x9b"q\'<b>&amp;#\\ \xff\xfe\xc0\xafx\nend'
name="$hostile.scn"
cp "$src/scenarios/fake/neg_conj_unsupported.scn" "$name"
# the message: the same, less what a scenario cannot say (invalid UTF-8,
# a raw newline, an unescaped quote or backslash)
msg=$'m\e]0;title\a\e[2J\x01\x7f\xc2\x9b\'<b>&amp;# \\"q\\\\ end'
printf 'expect 1 == 2, "%s"\n' "$msg" >> "$name"
run() { "$fakegc" run -q --inject view-base-leak "$@" -- "$name" >/dev/null 2>err; rc=$?
        [ $rc -eq 1 ] || bad "run $*: exit $rc: $(head -c 300 err)"; }
run --format json --output r.json
run --format junit --output r.xml
run --format tap --output r.tap
run --format text --output r.txt
run --html r.html --timeline r.svg --dot r.dot
run --sarif r.sarif --github r.gh

python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(0 if "\ufffd" in d["scenarios"][0]["file"] else 1)' ||
    bad "r.json: not JSON, or the file name's bad bytes are not U+FFFD"
python3 -c 'import json; json.load(open("r.sarif"))' || bad "r.sarif: not JSON"
# the runner decodes %25 %0D %0A (and %3A %2C in properties): one command on
# one line, and its file= names the scenario (bad bytes as U+FFFD)
python3 - "$name" <<'PY' || bad "r.gh: $(head -c 300 r.gh)"
import sys
want = sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
lines = open("r.gh", encoding="utf-8").read().splitlines()
cmds = [l for l in lines if l.startswith("::")]
assert len(cmds) == 1 and cmds[0].startswith("::error file="), lines
props = cmds[0][len("::error "):].split("::", 1)[0]
dec = lambda v: v.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
got = dict(p.split("=", 1) for p in props.split(","))
assert dec(got["file"]) == want.replace("\x1b", "\ufffd").replace("\x07", "\ufffd").replace("\x01", "\ufffd").replace("\x7f", "\ufffd").replace("\x9b", "\ufffd"), (got["file"], want)
assert got["line"] == "12", got
PY
xmllint --noout r.xml 2>xml.err || bad "r.xml: $(head -c 300 xml.err)"
xmllint --noout r.svg 2>svg.err || bad "r.svg: $(head -c 300 svg.err)"
dot -Tsvg r.dot -o r.dot.svg 2>dot.err && [ ! -s dot.err ] || bad "r.dot: dot says $(head -c 300 dot.err)"
xmllint --noout r.dot.svg 2>/dev/null || bad "r.dot: dot's SVG is not XML"
prove -e cat r.tap > prove.out 2>&1
grep -q "Parse errors" prove.out && bad "r.tap: $(cat prove.out)"
grep -q "Failed 1/1 subtests\|Failed: 1" prove.out || bad "r.tap: prove did not read the failing test: $(cat prove.out)"
[ "$(grep -c '^not ok\|^ok' r.tap)" -eq 1 ] || bad "r.tap: the name broke the test line: $(cat r.tap)"
for f in r.json r.xml r.tap r.txt r.html r.svg r.dot r.sarif r.gh; do
    LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$f" && bad "$f: a raw control byte"
    iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 || bad "$f: not valid UTF-8"
    LC_ALL=C grep -q $'\xc2\x9b' "$f" && bad "$f: a raw C1 CSI"
done
# the page in a browser: the name is text (no <b> element made of it)
chromium=$(command -v chromium || command -v chromium-browser)
if [ -n "$chromium" ]; then
    timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --dump-dom "file://$PWD/r.html" \
        > dom.html 2>/dev/null || bad "chromium could not load r.html"
    grep -q '"q.&lt;b&gt;&amp;amp;#' dom.html || bad "r.html: the name is not in the page as text"
    grep -q '<b>&amp;amp;' dom.html && bad "r.html: the name became markup"
else
    echo "note: no chromium, the page is checked by xmllint --html only"
fi
xmllint --html --noout r.html 2>/dev/null || bad "r.html: not parsed"
# a parse error's diagnostic on stderr names the file as text for a terminal
printf 't = empty(1\n' > "broken $name"
"$fakegc" run "broken $name" > /dev/null 2> diag
LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' diag && bad "the diagnostic carries a raw control byte"
grep -q ":1:12: error:" diag || bad "no diagnostic: $(cat diag)"
exit $fail
