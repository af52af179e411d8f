#!/bin/sh
# check_findings.sh guard|memcheck|stress|oom FAKEGC SOURCE_DIR - findings
# are exit 1, never 3 (fakegc-report(5), EXIT STATUS).
#
# guard: `run --inject early-free --allocator guard scenarios/` with one
#   process and with --jobs 2 exits 1; no scenario is an error (a hang in
#   the collector would end as a --timeout error, a crash as a worker
#   error); every failure that is a finding names its line and kind; the
#   JSON report validates and counts as many findings as the text report
#   prints; the cycle scenarios, whose collection used to walk a corrupted
#   list, are findings at the statement that collected.
# memcheck: the same suite with libc under memcheck (workers traced) exits
#   1 with no error scenario, and memcheck reported a bad access for every
#   finding (the real invalid read of a freed storage, or fakegc's client
#   check request made before it gives up), at least one a real read.
# stress: early-free lifecycles (seeds 300..330) that end on guard poison or
#   a dead decref are findings with kind and line (none a "crash"), and
#   the shrunk reproducer, run as printed, is the finding again.
# oom: a bad access in the run without failures is the scenario's finding
#   (status finding, kind, line), not a crash.
set -u
mode=$1
f=$2
cd "$3" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-findings.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_findings: FAIL: $*"; exit 1; }

# count.py REPORT: "FINDINGS ERRORS FAILED" of a run report, and checks
# that every finding has a line and a kind
cat > "$tmp/count.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
find = [(s["file"], x) for s in d["scenarios"] for x in s["failures"]
        if x["text"].startswith("finding: ")]
for file, x in find:
    if not (isinstance(x["line"], int) and x["line"] > 0 and len(x["text"]) > 9):
        sys.exit("finding without a line or kind in %s: %r" % (file, x))
print(len({f for f, _ in find}), d["summary"]["errors"], d["summary"]["failed"])
for file, x in find:
    print(file, x["line"], x["text"], "|", x["actual"], file=sys.stderr)
PY

case $mode in
guard)
    prev=
    for jobs in 1 2; do
        timeout 100 "$f" run --inject early-free --allocator guard --jobs $jobs \
            --timeout 20 --format json --output "$tmp/r$jobs.json" --text "$tmp/r$jobs.txt" \
            scenarios/ > /dev/null 2>&1
        rc=$?
        [ $rc -eq 1 ] || fail "-j$jobs: exit $rc, want 1 (findings)"
        /usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-report-3.schema.json \
            "$tmp/r$jobs.json" > /dev/null || fail "-j$jobs: the report does not validate"
        set -- $(/usr/bin/python3 "$tmp/count.py" "$tmp/r$jobs.json" 2> "$tmp/f$jobs.txt") ||
            fail "-j$jobs: $(cat "$tmp/f$jobs.txt")"
        nfind=$1 nerr=$2
        [ "$nerr" -eq 0 ] || fail "-j$jobs: $nerr scenarios are errors: $(grep -A1 'error' "$tmp/r$jobs.txt" | head -20)"
        [ "$nfind" -ge 60 ] || fail "-j$jobs: only $nfind findings"
        ntext=$(grep -c ': finding: ' "$tmp/r$jobs.txt")
        [ "$ntext" -eq "$nfind" ] || fail "-j$jobs: the text report prints $ntext findings, JSON has $nfind"
        for c in attr_cycle:10 gc_auto:5 gc_stress:8 self_cycle:7 weakref_into_garbage:10; do
            # the collector refused the decref: no walk of a corrupted list
            # (which faulted on poison, or looped) came after it
            grep -q "^scenarios/cycles/${c%%:*}.scn ${c#*:} finding: use-after-free | .*(the collector held it)" "$tmp/f$jobs.txt" ||
                fail "-j$jobs: cycles/${c%%:*}.scn is not the collector's finding at line ${c#*:}: $(grep "${c%%:*}" "$tmp/f$jobs.txt")"
        done
        sort "$tmp/f$jobs.txt" > "$tmp/s$jobs.txt"
        [ -z "$prev" ] || cmp -s "$tmp/s1.txt" "$tmp/s2.txt" ||
            fail "-j1 and -j2 differ: $(diff "$tmp/s1.txt" "$tmp/s2.txt" | head)"
        prev=$nfind
        echo "ok   -j$jobs: exit 1, $nfind scenarios with a finding, 0 errors"
    done
    ;;
memcheck)
    command -v valgrind > /dev/null || exit 77
    mkdir "$tmp/vg"
    timeout 200 valgrind -q --trace-children=yes --log-file="$tmp/vg/%p.log" \
        "$f" run --inject early-free --allocator libc --timeout 60 \
        --format json --output "$tmp/r.json" scenarios/ > "$tmp/out.txt" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "exit $rc under memcheck, want 1: $(tail -5 "$tmp/out.txt")"
    set -- $(/usr/bin/python3 "$tmp/count.py" "$tmp/r.json" 2> "$tmp/f.txt") ||
        fail "$(cat "$tmp/f.txt")"
    nfind=$1 nerr=$2
    [ "$nerr" -eq 0 ] || fail "$nerr scenarios are errors under memcheck"
    [ "$nfind" -ge 60 ] || fail "only $nfind findings under memcheck"
    seen=$(cat "$tmp"/vg/*.log | grep -c 'found during client check request')
    reads=$(cat "$tmp"/vg/*.log | grep -c 'Invalid read')
    [ "$seen" -ge "$nfind" ] ||
        fail "memcheck saw $seen of fakegc's $nfind findings"
    [ "$reads" -ge 1 ] || fail "memcheck saw no invalid read of a freed storage"
    echo "ok   memcheck: exit 1, $nfind findings, each reported to memcheck ($reads invalid reads seen first)"
    ;;
stress)
    # seeds whose lifecycles end on guard poison (a fault) or a dead decref:
    # each is a finding with its kind and line, none a crash or exit 3 (the
    # seeds were picked under the action weights below: the cycle action
    # and weak modes came later and would redraw every lifecycle)
    w="cycle=0,weak_mode=0"
    faults=0
    for seed in $(seq 300 330); do
        timeout 60 "$f" stress --seed $seed --inject early-free --allocator guard \
            --weights $w --steps 3000 --no-shrink -q --out-dir "$tmp/st" --format json \
            --output "$tmp/st.json" > /dev/null 2>&1
        rc=$?
        [ $rc -eq 1 ] || fail "stress seed $seed: exit $rc, want 1"
        /usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-stress-2.schema.json \
            "$tmp/st.json" > /dev/null || fail "stress seed $seed: the report does not validate"
        k=$(/usr/bin/python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))["failure"]
if x["class"].startswith("crash: "):
    sys.exit("a crash: " + x["first"])
if x["class"].startswith("finding: "):
    print(x["finding"]["kind"], x["finding"]["line"])' "$tmp/st.json") ||
            fail "stress seed $seed: $k"
        case $k in "use-after-free read "*) faults=$((faults + 1)) ;; esac
    done
    [ $faults -ge 1 ] || fail "no stress seed in 300..330 ended on guard poison"
    # shrunk, the reproducer still is the finding when run
    timeout 60 "$f" stress --seed 309 --inject early-free --allocator guard --steps 3000 \
        --weights $w --out-dir "$tmp/st309" > "$tmp/st309.txt" 2>&1
    cmd=$(sed -n 's/^reproduce: fakegc //p' "$tmp/st309.txt")
    [ -n "$cmd" ] || fail "no reproduce line: $(cat "$tmp/st309.txt")"
    # shellcheck disable=SC2086
    "$f" $cmd > "$tmp/rep.txt" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q ': finding: ' "$tmp/rep.txt" ||
        fail "reproducer ($cmd): exit $rc, $(tail -3 "$tmp/rep.txt")"
    echo "ok   stress: 31 seeds exit 1 with findings ($faults on guard poison), none a crash"
    ;;
oom)
    timeout 60 "$f" oom --inject early-free --allocator guard --format json \
        --output "$tmp/oom.json" scenarios/storage/shared_storage_outlives.scn \
        scenarios/cycles/attr_cycle.scn scenarios/memo/weak_keys.scn > /dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "oom: exit $rc, want 1"
    /usr/bin/python3 tests/report/validate.py src/report/schema/fakegc-oom-2.schema.json \
        "$tmp/oom.json" > /dev/null || fail "oom: the report does not validate"
    /usr/bin/python3 - "$tmp/oom.json" <<'PY' || fail "oom: a scenario is not its finding"
import json, sys
d = json.load(open(sys.argv[1]))
want = {"shared_storage_outlives.scn": ("use-after-free read", 8),
        "attr_cycle.scn": ("use-after-free", 10), "weak_keys.scn": ("use-after-free", 10)}
for s in d["scenarios"]:
    k = want[s["file"].rsplit("/", 1)[1]]
    got = s.get("finding") or {}
    if s["status"] != "finding" or (got.get("kind"), got.get("line")) != k:
        sys.exit("%s: %s %r, want finding %r" % (s["file"], s["status"], got, k))
if d["summary"]["crashes"] or d["summary"]["findings"] != 3:
    sys.exit("summary %r" % d["summary"])
PY
    echo "ok   oom: 3 findings with kind and line, 0 crashes"
    ;;
*)
    echo "usage: check_findings.sh guard|memcheck|stress|oom FAKEGC SOURCE_DIR" >&2
    exit 2
    ;;
esac
