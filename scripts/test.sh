#!/usr/bin/env bash
# test.sh - build and run every test: the dev preset (build/, warnings are
# errors) with all labels (unit, valgrind, scenario, ...), then the asan
# preset's (build-asan/) unit tests and scenario suite. Ends with one line
# `total: N passed, N failed, N skipped`; exits non-zero if anything failed.
#
# Environment: JOBS (default 2); FAKEGC_SKIP_ASAN=1 skips the ASan pass.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${JOBS:-2}

scripts/deps.sh

# The real PyTorch 2.6 and 2.14 roots the `torch2` label runs on (Debian
# folders under /var/cache/fakegc/roots, built once per machine and reused;
# scripts/torch-root.sh). As root, a missing one is built here; one that
# cannot be built fails the run (its tests would only be skipped).
roots_failed=0
if [ "$(id -u)" -eq 0 ]; then
    for suite in trixie forky; do
        echo "== PyTorch root $suite (scripts/torch-root.sh $suite: reused, or built in 5-9 minutes)"
        scripts/torch-root.sh "$suite" > /dev/null || roots_failed=$((roots_failed + 1))
    done
fi

passed=0
failed=$roots_failed
skipped=0
status=$((roots_failed > 0))

# Run ctest, echo its output, add its counts to the totals. ctest's summary
# line: "100% tests passed, 0 tests failed out of 12".
run_ctest() {
    local log rc=0
    log=$(mktemp)
    ctest "$@" 2>&1 | tee "$log" || rc=$?
    local line
    line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
    # ctest counts a skipped test (exit 77 / SKIP_RETURN_CODE, e.g. xref
    # without python3-torch) as passed; it lists it as "(Skipped)".
    local nskip
    nskip=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)' "$log" || true)
    rm -f "$log"
    if [ -z "$line" ]; then
        echo "test.sh: ctest $* printed no summary (exit $rc)"
        failed=$((failed + 1))
        status=1
        return
    fi
    local nfail ntotal
    nfail=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
    ntotal=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/')
    passed=$((passed + ntotal - nfail - nskip))
    failed=$((failed + nfail))
    skipped=$((skipped + nskip))
    if [ "$rc" -ne 0 ] || [ "$nfail" -ne 0 ]; then
        status=1
    fi
}

echo "== dev preset: configure and build (build/)"
cmake --preset dev
cmake --build --preset dev -j "$jobs"

echo "== dev preset: all tests"
run_ctest --test-dir build --output-on-failure -j "$jobs" --no-tests=error \
          --timeout 900

if [ "${FAKEGC_SKIP_ASAN:-0}" != 1 ]; then
    echo "== asan preset: configure and build (build-asan/)"
    cmake --preset asan
    cmake --build --preset asan -j "$jobs"
    echo "== asan preset: unit tests"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        run_ctest --test-dir build-asan --output-on-failure -j "$jobs" \
                  --no-tests=error -L unit --timeout 900
    echo "== asan preset: the scenario suite (libc, guard, --compat, --verify)"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        run_ctest --test-dir build-asan --output-on-failure -j "$jobs" \
                  --no-tests=error -R '^scenario_suite_(libc|guard|compat|verify)$' \
                  --timeout 900
fi

echo "total: $passed passed, $failed failed, $skipped skipped"
exit "$status"
