#!/usr/bin/env bash
# expect-finding.sh VALGRIND_TEST HEADLINE_RE FUNCTION BINARY [ARGS...]
# Passes only if `VALGRIND_TEST BINARY ARGS...` exits 1 and its output holds
# a memcheck record whose headline matches HEADLINE_RE (e.g. "definitely
# lost in loss record", "Invalid read") with FUNCTION in that record's stack,
# while the test binary itself passed (only memcheck saw the problem).
# Used by the canary tests to prove scripts/valgrind-test.sh fails for real.
set -u
vgtest=$1 headline=$2 func=$3
shift 3
out=$("$vgtest" "$@" 2>&1)
rc=$?
if [ "$rc" -ne 1 ]; then
    printf '%s\n' "$out"
    echo "expect-finding: FAIL: $vgtest exited $rc, want 1 (it must report the canary)"
    exit 1
fi
if printf '%s\n' "$out" | grep -q 'valgrind-test: FAIL: .* exited with status'; then
    printf '%s\n' "$out"
    echo "expect-finding: FAIL: the canary test itself failed; only memcheck should object"
    exit 1
fi
# A record: from its headline to the next "==pid== " line with nothing after.
if ! printf '%s\n' "$out" | awk -v h="$headline" -v f="$func" '
        $0 ~ h { inrec = 1; next }
        inrec && $0 ~ /^==[0-9]+== *$/ { inrec = 0 }
        inrec && index($0, f) { found = 1 }
        END { exit found ? 0 : 1 }'; then
    printf '%s\n' "$out"
    echo "expect-finding: FAIL: no \"$headline\" record with $func in its stack"
    exit 1
fi
printf '%s\n' "$out" | grep -E -A8 "$headline" | head -n 12
echo "expect-finding: OK: valgrind-test.sh failed with \"$headline\" in $func"
