#!/usr/bin/env bash
# valgrind-test.sh BINARY [ARGS...] - run a (Criterion) test binary under
# memcheck and fail if ANY of its processes has a memory error or a
# definitely/indirectly lost block.
#
# Why not just `valgrind --error-exitcode=1 BINARY`: Criterion runs every
# test in a forked worker process. Without --trace-children=yes memcheck
# never sees the workers' leaks, and even with it the run exits 0 on a leak,
# because the Criterion runner does not pass a worker's exit status on. So
# every process writes its own log (vg.<pid>.log) and this script reads them
# all afterwards.
#
# Exit: 0 clean; 1 errors or leaks (the offending logs are printed), or the
# binary itself failed, or valgrind is missing or a log is unreadable.
# Environment: VALGRIND_KEEP=1 keeps the log folder; VALGRIND_OPTS as usual;
# VALGRIND_EXPECT_RC=N: the binary's expected exit status (default 0; `fakegc
# diff` finding a regression exits 1, say);
# VALGRIND_GEN_SUPP=1 adds --gen-suppressions=all (to write scripts/valgrind.supp);
# VALGRIND_KILLED_OK=N: the test SIGKILLs exactly N of its own processes on
# purpose (they end with no summary); any other count fails (default 0).
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 BINARY [ARGS...]" >&2
    exit 2
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind-test: valgrind not found (apt-get install valgrind, or scripts/deps.sh)" >&2
    exit 1
fi

here=$(cd "$(dirname "$0")" && pwd)
logdir=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-vg.XXXXXX") || exit 1
if [ "${VALGRIND_KEEP:-0}" = 1 ]; then
    echo "valgrind-test: logs kept in $logdir"
else
    trap 'rm -rf "$logdir"' EXIT
fi

opts=(--tool=memcheck --trace-children=yes --leak-check=full
      --errors-for-leak-kinds=definite,indirect
      --show-leak-kinds=definite,indirect
      --num-callers=30 --log-file="$logdir/vg.%p.log")
if [ -f "$here/valgrind.supp" ]; then
    opts+=(--suppressions="$here/valgrind.supp")
fi
if [ "${VALGRIND_GEN_SUPP:-0}" = 1 ]; then
    opts+=(--gen-suppressions=all)
fi

valgrind "${opts[@]}" "$@"
rc=$?

nlogs=0
bad=0
killed=0
for log in "$logdir"/vg.*.log; do
    [ -e "$log" ] || continue
    nlogs=$((nlogs + 1))
    # "==123== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: ...)"
    errors=$(sed -n 's/^==[0-9]*== ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$log" | tr -d , | tail -n 1)
    # "==123==    definitely lost: 64 bytes in 1 blocks" (also "indirectly")
    lost=$(sed -n 's/^==[0-9]*== *\(definitely\|indirectly\) lost: \([0-9,]*\) bytes.*/\2/p' "$log" \
           | tr -d , | awk '{ s += $1 } END { print s + 0 }')
    if [ -z "$errors" ]; then
        # A process that ended without memcheck's summary: killed by
        # SIGKILL or valgrind itself failed. Nothing proves it clean,
        # unless the test kills that many on purpose (checked below).
        killed=$((killed + 1))
        continue
    elif [ "$errors" -ne 0 ] || [ "$lost" -ne 0 ]; then
        why="$errors errors, $lost bytes definitely/indirectly lost"
    else
        continue
    fi
    bad=$((bad + 1))
    echo "valgrind-test: process $(basename "$log" .log | sed 's/^vg\.//'): $why"
    # the log minus memcheck's banner
    grep -v -e 'Memcheck, a memory error detector' -e 'Copyright (C)' \
         -e 'Using Valgrind-' -e 'rerun with -h' "$log"
    echo
done

if [ "$nlogs" -eq 0 ]; then
    echo "valgrind-test: FAIL: no memcheck log was written (did valgrind start?)"
    exit 1
fi
if [ "$rc" -ne "${VALGRIND_EXPECT_RC:-0}" ]; then
    echo "valgrind-test: FAIL: $* exited with status $rc under valgrind (want ${VALGRIND_EXPECT_RC:-0})"
    exit 1
fi
if [ "$killed" -ne "${VALGRIND_KILLED_OK:-0}" ]; then
    echo "valgrind-test: FAIL: $killed processes ended with no ERROR SUMMARY (killed, or valgrind failed); want ${VALGRIND_KILLED_OK:-0}"
    exit 1
fi
if [ "$bad" -ne 0 ]; then
    echo "valgrind-test: FAIL: $bad of $nlogs processes had memory errors or definite/indirect leaks"
    exit 1
fi
echo "valgrind-test: OK: $nlogs processes, no memory errors, no definite/indirect leaks"
exit 0
