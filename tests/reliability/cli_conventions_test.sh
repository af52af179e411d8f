#!/bin/sh
# cli_conventions_test.sh FAKEGC SOURCE_DIR - the command line by
# getopt_long's rules, for every command: a unique
# prefix of a long option is that option (--form json, --form=json), a
# prefix of several is "ambiguous option '--x' could be --a, --b" with exit
# 2, an unknown one gets a did-you-mean, -j2 / --jobs=2 / -- work, --help
# goes to stdout with exit 0, and TERM=dumb gets no colour. Then the
# conventions users expect: -k PATTERN (run, oom, diff), -x / --max-failures N,
# --color=auto|always|never with NO_COLOR and FORCE_COLOR, --version and
# every JSON report naming the version, commit and build type, "status": "interrupted" after a
# signal, diff's exit codes as its help says, bench gating peak memory
# and comparing two saved runs, shrink keeping a
# recording's `# prog.py:13` comments, and --help and `list options` made
# from the same rows.
set -u
f=$1
. "$(dirname "$0")/../lib.sh"
cd "$2" || exit 2
t_begin cli_conventions
scn=scenarios/memo/weak_keys.scn

# expect RC STDERR-NEEDLE ARGS...: the exit status and a line of stderr
expect() {
    want=$1 needle=$2
    shift 2
    "$f" "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc -eq "$want" ] || fail "fakegc $*: exit $rc, want $want: $(head -3 "$tmp/err")"
    [ -z "$needle" ] || grep -qF -- "$needle" "$tmp/err" ||
        fail "fakegc $*: stderr lacks \"$needle\": $(head -3 "$tmp/err")"
}

# abbreviations = the full option, in every command that parses options
expect 0 "" run --form json --out "$tmp/a.json" $scn
expect 0 "" run --format json --output "$tmp/b.json" $scn
cmp -s "$tmp/a.json" "$tmp/b.json" || /usr/bin/python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' ||
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    for s in d["scenarios"]:
        s["stats"]["wall_ms"] = 0
sys.exit(a != b)
PY
    fail "run --form json --out differs from --format json --output"
expect 0 "" run --form=json --out="$tmp/c.json" $scn
head -c 200 "$tmp/c.json" | grep -q '"schema": "fakegc-report/3"' || fail "--form=json: no JSON report"
expect 0 "" run --jo=2 -q $scn
expect 0 "" oom --transient --max-p 1 -q $scn
expect 0 "" stress --st 200 --out-d "$tmp/st" -q
expect 0 "" stress --steps 200 --form json --output "$tmp/st.json" --out-dir "$tmp/st"
grep -q '"schema": "fakegc-stress/2"' "$tmp/st.json" || fail "stress --form json: no JSON"
expect 0 "" diff --form json "$tmp/a.json" "$tmp/b.json"
grep -q '"schema": "fakegc-diff/2"' "$tmp/out" || fail "diff --form json: no JSON"
expect 0 "" run --verb $scn
expect 0 "" --vers
grep -q '^fakegc ' "$tmp/out" || fail "--vers: no version"

# ambiguous prefixes: exit 2 naming the candidates
expect 2 "ambiguous option '--ma' could be --max-bytes, --max-statements, --max-objects" \
    run --ma 10 $scn
expect 2 "ambiguous option '--time' could be --timeline, --timeout" run --time=5 $scn
expect 2 "ambiguous option '--max' could be --max-points, --max-bytes" oom --max 2 $scn
expect 2 "ambiguous option '--s' could be" stress --s 5

# unknown options and commands: did-you-mean
expect 2 "unknown option '--formt'; did you mean '--format'?" run --formt json $scn
expect 2 "unknown option '--hlep'; did you mean '--help'?" --hlep
expect 2 "unknown command 'rnu'; did you mean 'run'?" rnu

# short forms and the end of options
expect 0 "" run -j2 -q scenarios/memo
expect 0 "" run --jobs=2 -q scenarios/memo
cp $scn "$tmp/--form"
expect 0 "" run -q -- "$tmp/--form"

# --help: stdout, exit 0, for every command
for c in run stress shrink oom diff merge bench list; do
    expect 0 "" $c --help
    [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "$c --help: not on stdout alone"
    expect 0 "" $c --he
    [ -s "$tmp/out" ] || fail "$c --he: no help"
done

# TERM=dumb: no colour even when asked by a terminal-looking setup
TERM=dumb "$f" run $scn > "$tmp/out" 2>&1
! grep -q "$(printf '\033')" "$tmp/out" || fail "TERM=dumb got colour"
# -k PATTERN: a path substring or a glob, on run and oom
expect 0 "" run -k weak scenarios/memo
! grep -q "^PASS" "$tmp/out" || grep "^PASS" "$tmp/out" | grep -qv weak && fail "-k weak ran others"
grep -q "^PASS scenarios/memo/weak_keys.scn" "$tmp/out" || fail "-k weak: weak_keys.scn not run"
expect 0 "" run -k 'memo/w*' -q scenarios
grep -q "^[1-9][0-9]* passed" "$tmp/out" || fail "-k glob: nothing ran"
expect 2 "no scenario matches" run -k no-such-thing scenarios/memo
expect 0 "" oom -k weak_keys -q scenarios/memo
grep -q "^oom: 1 scenario," "$tmp/out" || fail "oom -k: $(tail -1 "$tmp/out")"
# -x / --max-failures N: stop after the Nth failed scenario
expect 1 "stopped after 1 failed scenario" run -x --inject strong-memo --format json scenarios/memo
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (len(d["scenarios"]) < 10 and d["summary"]["failed"] == 1))' "$tmp/out" ||
    fail "-x: more than the first failure ran"
expect 1 "stopped after 2 failed scenarios" run --max-failures 2 --inject strong-memo scenarios/memo
# --color=auto|always|never, NO_COLOR and FORCE_COLOR (stdout is a file here)
esc=$(printf '\033')
expect 0 "" run --color=always $scn
grep -q "$esc" "$tmp/out" || fail "--color=always: no colour"
FORCE_COLOR=1 "$f" run $scn > "$tmp/out" 2>&1; grep -q "$esc" "$tmp/out" || fail "FORCE_COLOR=1: no colour"
FORCE_COLOR=1 "$f" run --color=never $scn > "$tmp/out" 2>&1; ! grep -q "$esc" "$tmp/out" || fail "--color=never coloured"
NO_COLOR=1 "$f" run $scn > "$tmp/out" 2>&1; ! grep -q "$esc" "$tmp/out" || fail "NO_COLOR coloured"
expect 0 "" run $scn
! grep -q "$esc" "$tmp/out" || fail "auto: colour into a file"
expect 2 "unknown value 'sometimes' (expected auto, always, never)" run --color=sometimes $scn
# --version: the commit and the build type; every JSON report says the commit
expect 0 "" --version
grep -Eq '^fakegc [0-9.]+ \(commit [0-9a-z-]+, [A-Za-z]+ build\)$' "$tmp/out" || fail "--version: $(cat "$tmp/out")"
expect 0 "" run --version
grep -q "commit" "$tmp/out" || fail "run --version: no commit"
expect 0 "" run --format json $scn
grep -q '"commit": "' "$tmp/out" || fail "the run report has no commit"
expect 0 "" oom --format json -q $scn
grep -q '"commit": "' "$tmp/out" || fail "the oom report has no commit"
# "status": "interrupted" after a signal
printf 'repeat 30000000\n  t = empty(4)\nend\n' > "$tmp/slow.scn"
"$f" run "$tmp/slow.scn" --format json --output "$tmp/int.json" & pid=$!
sleep 1; kill -INT $pid; wait $pid
grep -q '"status": "interrupted"' "$tmp/int.json" || fail "SIGINT: status $(grep -o '"status": "[a-z]*"' "$tmp/int.json" | head -1)"
# diff's exit codes as its help says: an unreadable NEW is 2, a cut-off one 1
"$f" run --format json --output "$tmp/base.json" $scn
echo 'PASS not a report' > "$tmp/garbage.json"
expect 2 "" diff "$tmp/base.json" "$tmp/garbage.json"
expect 2 "" diff "$tmp/base.json" "$tmp"
head -c 100 "$tmp/base.json" > "$tmp/cut.json"
expect 1 "" diff "$tmp/base.json" "$tmp/cut.json"
# shrink keeps a recording's provenance comments as they were
rec=scenarios/recorded/aliasing.scn
expect 0 "" shrink --compat pytorch-1.13 --inject strong-memo -q $rec
grep -o '# aliasing.py:.*' "$tmp/out" > "$tmp/kept"
grep -o '# aliasing.py:.*' $rec > "$tmp/orig"
[ -s "$tmp/kept" ] && grep -q '# aliasing.py:21$' "$tmp/kept" || fail "shrink: provenance lost: $(head -3 "$tmp/kept")"
bad=$(grep -vxFf "$tmp/orig" "$tmp/kept" | head -1)
[ -z "$bad" ] || fail "shrink rewrote a provenance comment: $bad"
# diff -k PATTERN: only the scenarios it matches, in both reports
"$f" run --format json --output "$tmp/memo.json" scenarios/memo > /dev/null
"$f" run --inject strong-memo --format json --output "$tmp/memo-bad.json" scenarios/memo > /dev/null
expect 1 "" diff "$tmp/memo.json" "$tmp/memo-bad.json"
expect 0 "" diff -k 'memo/[fh]*' "$tmp/memo.json" "$tmp/memo-bad.json"
grep -q "^fakegc diff: 3 scenarios in base, 3 now" "$tmp/out" || fail "diff -k glob: $(head -1 "$tmp/out")"
expect 1 "" diff -k weak_keys --format json "$tmp/memo.json" "$tmp/memo-bad.json"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not ([s["file"] for s in d["scenarios"]] == ["scenarios/memo/weak_keys.scn"] and d["base"]["scenarios"] == 1))' "$tmp/out" ||
    fail "diff -k weak_keys: not weak_keys.scn alone: $(head -c 300 "$tmp/out")"
expect 2 "-k no-such: no scenario matches" diff -k no-such "$tmp/memo.json" "$tmp/memo-bad.json"
# bench gates peak memory as well as time, live (--baseline) and between
# two saved runs (--compare OLD NEW, exit codes as diff's)
expect 0 "" bench --quick --repeats 1 alloc/pair convert/miss --format json --output "$tmp/bA.json"
/usr/bin/python3 - "$tmp/bA.json" "$tmp/bB.json" "$tmp/bLow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
miss = [b for b in d["benchmarks"] if b["name"] == "convert/miss"][0]
peak = miss["peak_bytes"]
miss["peak_bytes"] = peak * 23          # NEW: 23x the peak memory
json.dump(d, open(sys.argv[2], "w"))
miss["peak_bytes"] = peak // 23         # a baseline 23x lower than a live run
json.dump(d, open(sys.argv[3], "w"))
PY
expect 1 "" bench --compare "$tmp/bA.json" "$tmp/bB.json"
grep -Eq '^REGRESSION convert/miss: peak memory .* \([0-9]+ bytes\), baseline .* \([0-9]+ bytes\)' "$tmp/out" ||
    fail "bench --compare: a 23x peak is not named: $(grep -m2 'REGRESSION\|^baseline' "$tmp/out")"
expect 0 "" bench --compare "$tmp/bA.json" "$tmp/bA.json"
grep -q "^  convert/miss " "$tmp/out" || fail "bench --compare: no table row for convert/miss"
expect 2 "cannot read" bench --compare "$tmp/bA.json" "$tmp/none.json"
expect 1 "" bench --quick --repeats 1 convert/miss --baseline "$tmp/bLow.json" --tolerance 1000
grep -q '^REGRESSION convert/miss: peak memory' "$tmp/out" || fail "bench --baseline: a 23x peak passes"
# every JSON fakegc writes names the build: version, commit and build type
# as --version says them (run, oom, stress, bench, diff; merge as merged_by)
"$f" --version > "$tmp/ver"
build=$(sed -n 's/^fakegc \([0-9.]*\) (commit \([0-9a-z-]*\), \([A-Za-z]*\) build)$/"version": "\1", "commit": "\2", "build_type": "\3"/p' "$tmp/ver")
[ -n "$build" ] || fail "--version: $(cat "$tmp/ver")"
"$f" run --shard 0/2 --format json --output "$tmp/s0.json" scenarios/memo > /dev/null
"$f" run --shard 1/2 --format json --output "$tmp/s1.json" scenarios/memo > /dev/null
"$f" merge --format json --output "$tmp/merged.json" "$tmp/s0.json" "$tmp/s1.json" || fail "merge: exit $?"
"$f" oom --format json --output "$tmp/oom.json" -q $scn || fail "oom: exit $?"
"$f" stress --steps 200 --format json --output "$tmp/stress.json" --out-dir "$tmp/st" -q || fail "stress: exit $?"
"$f" diff --format json --output "$tmp/diff.json" "$tmp/memo.json" "$tmp/memo-bad.json"
for j in memo oom stress bA diff s0; do
    grep -qF "$build" "$tmp/$j.json" || fail "$j.json does not say $build: $(head -c 300 "$tmp/$j.json")"
done
grep -qF "\"merged_by\": {$build}" "$tmp/merged.json" || fail "merge: no merged_by {$build}"
/usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-report-3.schema.json "$tmp/merged.json" ||
    fail "the merged report does not validate"
# the options come from one table: --help and `list options` agree
for c in run stress shrink oom diff merge bench list; do
    expect 0 "" list options $c
    cut -f2 "$tmp/out" | sort > "$tmp/listed"
    "$f" $c --help | grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z-]*' | sed 's/.*--/--/' | sort > "$tmp/helped"
    cmp -s "$tmp/listed" "$tmp/helped" || fail "$c: list options and --help differ: $(diff "$tmp/listed" "$tmp/helped" | head -3)"
done
# --format's help names every format it accepts, in order, and each --NAME FILE
# row says what it writes (the help is made from the format table)
for c in run oom merge; do
    "$f" $c --format zz x 2> "$tmp/err" > /dev/null
    words=$(sed -n 's/.*(expected \(.*\))$/\1/p' "$tmp/err" | tr -d ',')
    [ -n "$words" ] || fail "$c --format zz: $(cat "$tmp/err")"
    "$f" $c --help | awk '/^  --format /{p=1} p&&/^  --[a-z]/&&!/^  --format /{exit} p' | tr -s ' \n' ' ' > "$tmp/fh"
    want=$(echo "$words" | sed "s/ /.* /g")
    grep -qE "(^| )$want" "$tmp/fh" || fail "$c: --format's help does not name $words in order: $(cat "$tmp/fh")"
    for w in $words; do
        grep -qF " $w " "$tmp/fh" || grep -qF " $w," "$tmp/fh" || grep -qE " $w( |\$)" "$tmp/fh" ||
            fail "$c: --format's help does not name $w: $(cat "$tmp/fh")"
        "$f" $c --help | grep -qE "^  --$w FILE +also write [^ ]" || [ $c != run ] ||
            fail "$c: no help for --$w FILE"
    done
done
# record's about says what each leak class of --fail-on is, and whether it fails
"$f" record --help > "$tmp/rh"
classes=$(sed -n 's/.*--fail-on CLASSES *what fails: \([a-z,]*\).*/\1/p' "$tmp/rh" | tr ',' ' ')
[ -n "$classes" ] || fail "record --help: no --fail-on CLASSES line"
awk 'NR>2&&/^$/{exit} NR>2' "$tmp/rh" | tr -s ' \n' ' ' > "$tmp/about"
for w in $classes; do
    grep -qE "$w \([a-z][^)]*: (fails|reported)\)" "$tmp/about" ||
        fail "record --help: the about does not describe class $w: $(cat "$tmp/about")"
done
echo "cli_conventions: ok"
