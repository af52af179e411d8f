#!/bin/sh
# changed_after_parse_test.sh FAKEGC - `run` parses every file first, then
# runs them; a file edited, truncated or deleted in between is sane: a
# program kept in memory runs as it was parsed (its PASS, its timeline
# marks from the parsed program), and one parked for its size (re-read when
# it runs) is an error naming the file, exit 2, in a complete report. Never
# a crash, a verdict of the new text, or a half report. Deterministic: the
# last file in sorted order is a FIFO, so the parse waits on it while the
# test changes the files parsed before it.
. "$(dirname "$0")/scratch.sh"
fakegc=$1
mkdir in
printf 't = empty(2, 3)\ngc()\nexpect t.t().dim() == 2\n' > in/a1_edit.scn
printf 't = empty(2, 3)\nexpect t.t().dim() == 2\n' > in/a2_gone.scn
cp in/a2_gone.scn in/a3_empty.scn
# about 4 MB: past SC_KEEP_BUDGET parsed, so it is parked and re-read
/usr/bin/python3 -c '
line = "t = empty(3, 5)\nexpect t.size(1) == 5\ndel t\n"
open("big.scn", "w").write(line * (4000000 // len(line)))
' || exit 2

# run [ARGS...]: run over in/*.scn with in/zz_gate.scn a FIFO; once the parser
# holds the FIFO open, change the files before it, then let the parse end
run_changing() {
    rm -f in/zz_gate.scn
    mkfifo in/zz_gate.scn || exit 2
    files="in/a1_edit.scn in/a2_gone.scn in/a3_empty.scn"
    [ -e in/b_big.scn ] && files="$files in/b_big.scn"
    # named, not walked: a folder's walk takes regular files only
    timeout 20 "$fakegc" run "$@" --format json --output r.json --timeline t.svg $files \
        in/zz_gate.scn > out 2> err &
    pid=$!
    exec 3> in/zz_gate.scn   # returns once the parser opened the FIFO
    printf 't = empty(\n' > in/a1_edit.scn   # no longer parses, and no gc()
    rm in/a2_gone.scn
    : > in/a3_empty.scn
    [ -e in/b_big.scn ] && printf 'expect 1 == 2\n' >> in/b_big.scn
    printf 'u = empty(1)\n' >&3
    exec 3>&-
    wait $pid
    rc=$?
}

status_of() {   # FILE -> its status in r.json
    /usr/bin/python3 -c '
import json, sys
r = json.load(open("r.json"))
print(" ".join(s["status"] for s in r["scenarios"] if s["file"].endswith(sys.argv[1])) or "none")
' "$1"
}

for j in 1 2; do
    # programs kept in memory: they run as parsed
    printf 't = empty(2, 3)\ngc()\nexpect t.t().dim() == 2\n' > in/a1_edit.scn
    printf 't = empty(2, 3)\nexpect t.t().dim() == 2\n' > in/a2_gone.scn
    cp in/a2_gone.scn in/a3_empty.scn
    rm -f in/b_big.scn
    run_changing -j$j
    [ "$rc" -eq 0 ] || bad "-j$j kept: exit $rc, want 0: $(cat out err)"
    for f in a1_edit.scn a2_gone.scn a3_empty.scn zz_gate.scn; do
        [ "$(status_of $f)" = pass ] || bad "-j$j kept: $f is $(status_of $f), want pass"
    done
    # the gc() mark of a1_edit.scn comes from its parsed program
    grep -q 'stroke="#2ca02c"' t.svg || bad "-j$j: the timeline lost a1_edit.scn's gc() mark"

    # a program parked for its size: its file changed, an error naming it
    cp big.scn in/b_big.scn
    printf 't = empty(2, 3)\nexpect t.t().dim() == 2\n' > in/a2_gone.scn
    cp in/a2_gone.scn in/a3_empty.scn
    printf 't = empty(2, 3)\ngc()\nexpect t.t().dim() == 2\n' > in/a1_edit.scn
    run_changing -j$j
    [ "$rc" -eq 2 ] || bad "-j$j parked: exit $rc, want 2: $(cat out err)"
    grep -q "in/b_big.scn.*changed" err || bad "-j$j parked: no error naming the file: $(cat err)"
    [ "$(status_of b_big.scn)" = error ] || bad "-j$j parked: b_big.scn is $(status_of b_big.scn)"
    [ "$(status_of a1_edit.scn)" = pass ] || bad "-j$j parked: the others did not run"
    /usr/bin/python3 -c 'import json; r = json.load(open("r.json")); assert len(r["scenarios"]) == 5, r' ||
        bad "-j$j parked: not a complete report"
done
[ "$fail" -eq 0 ] && echo "ok: a file changed after parsing runs as parsed, or is an error naming it (exit 2)"
exit $fail
