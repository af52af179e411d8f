#!/bin/sh
# fuzz.sh [SECONDS] - build the libFuzzer harnesses (clang, ASan+UBSan) in
# build-fuzz/ and run each for SECONDS (default 60), seeded from every .scn
# under scenarios/ and tests/fuzz/seeds/ (the limit_*.scn seeds sit at the
# parser's limits: chain and parenthesis nesting, blocks, arguments, line
# length). -len_control=0 -max_len=65536: inputs may be as long as a line may
# be from the start (with libFuzzer's default length ramp the inputs stayed
# under 4 KB and never reached the 4,000-link chain that crashed the interpreter).
# A crash leaves crash-* files in build-fuzz/; turn each into a scenario in
# scenarios/errors/ or scenarios/regressions/, or a unit test. Warnings are
# errors here too (clang's, which the gcc presets do not see).
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DFAKEGC_FUZZ=ON -DFAKEGC_TESTS=OFF -DFAKEGC_WERROR=ON \
      -DFAKEGC_SANITIZE="address;undefined" -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_parse fuzz_run -j2
seeds=$build/seeds
mkdir -p "$seeds"
find "$root/scenarios" "$root/tests/fuzz/seeds" -name '*.scn' -exec cp {} "$seeds/" \;
status=0
for h in parse run; do
    corpus=$build/corpus_$h
    mkdir -p "$corpus"
    echo "== fuzz_$h for ${secs}s"
    (cd "$build" && ./tests/fuzz/fuzz_$h -max_total_time="$secs" -len_control=0 -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -dict="$root/tests/fuzz/scn.dict" -print_final_stats=1 \
        "$corpus" "$seeds") || status=1
done
exit $status
