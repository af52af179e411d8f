#!/bin/sh
# check_cli_items.sh FAKEGC SRC - the smaller CI items of the commands:
#  - `shrink -o FILE` writes the shrunk scenario there, and a shrunk
#    recording keeps its failure named by its class ("accumulating, held by
#    KEEP: ..."), never "unclassified";
#  - `stress` writes its reproducers under the user's cache
#    ($XDG_CACHE_HOME/fakegc/stress), not under the folder it is run from;
#  - `record --fail-on` with a word that is no leak class is a usage error
#    (exit 2) before any program runs.
set -u
f=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-items.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "check_cli_items: FAIL: $*"; fails=$((fails + 1)); }

# shrink -o, and the class of a shrunk recording's failure
"$f" shrink -o "$tmp/small.scn" "$src/tests/record/accumulate.scn" 2> "$tmp/shrink.err"
rc=$?
[ $rc -eq 0 ] || fail "shrink -o: exit $rc: $(cat "$tmp/shrink.err")"
[ -s "$tmp/small.scn" ] || fail "shrink -o: nothing written"
head -n 1 "$tmp/small.scn" | grep -q '^# accumulating, held by KEEP: ' ||
    fail "shrunk recording's class: $(head -n 1 "$tmp/small.scn")"
grep -q 'keeping "accumulating, held by KEEP: ' "$tmp/shrink.err" || fail "shrink says what it keeps"
grep -q unclassified "$tmp/small.scn" "$tmp/shrink.err" && fail "unclassified"
grep -q '^verdict(' "$tmp/small.scn" || fail "the shrunk recording keeps its verdict"
n=$(grep -c -v '^#' "$tmp/small.scn")
[ "$n" -lt 40 ] || fail "shrunk to $n lines (from 78 statements)"
"$f" run -q "$tmp/small.scn" > /dev/null
[ $? -eq 1 ] || fail "the shrunk recording still fails"

# stress: reproducers in the cache, none under the working folder
mkdir -p "$tmp/here" "$tmp/cache"
(cd "$tmp/here" && XDG_CACHE_HOME=$tmp/cache "$f" stress --inject strong-memo --steps 3000 -q \
    > "$tmp/stress.out" 2>&1)
[ $? -eq 1 ] || fail "stress with a bug: exit 1: $(tail -3 "$tmp/stress.out")"
ls "$tmp/cache/fakegc/stress/"stress-seed-*.min.scn > /dev/null 2>&1 ||
    fail "no reproducer under \$XDG_CACHE_HOME/fakegc/stress: $(ls -R "$tmp/cache")"
[ -z "$(ls -A "$tmp/here")" ] || fail "stress wrote under the working folder: $(ls -R "$tmp/here")"
grep -q "$tmp/cache/fakegc/stress/stress-seed-" "$tmp/stress.out" || fail "the path is printed"

# record --fail-on: checked before the program runs
printf 'open("%s/ran", "w").write("x")\n' "$tmp" > "$tmp/prog.py"
"$f" record --fail-on lost,leaky -- "$tmp/prog.py" > /dev/null 2> "$tmp/rec.err"
rc=$?
[ $rc -eq 2 ] || fail "record --fail-on leaky: exit $rc, want 2"
grep -q 'leak classes' "$tmp/rec.err" || fail "record --fail-on: $(cat "$tmp/rec.err")"
[ ! -e "$tmp/ran" ] || fail "the program ran"

[ $fails -eq 0 ] && echo "check_cli_items: ok" && exit 0
exit 1
