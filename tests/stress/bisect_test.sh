#!/bin/sh
# bisect_test.sh SOURCE_DIR - scripts/bisect.sh on a throwaway repository of
# six commits of a tiny fakegc-like project:
#   c1 good, c2 good, c3 does not build, c4 good, c5 introduces a failure
#   (the first bad commit), c6 still fails.
# bisect.sh must name c5, in scenario mode and in --stress mode; c3 (the
# bisection's first midpoint) must be built, fail to build and be skipped.
set -eu
src=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-bisect-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/repo"
cd "$tmp/repo"
git init -q .
git config user.email test@example.invalid
git config user.name "bisect test"
git config commit.gpgsign false

cat > CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.10)
project(mini C)
option(FAKEGC_TESTS "unused" OFF)
add_executable(fakegc fakegc.c)
set_target_properties(fakegc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
CM

write() {   # write BUG TYPO: the tiny "fakegc"
    cat > fakegc.c <<C
#include <stdio.h>
#include <string.h>
/* run FILE: fails (1) when the file says "leak" and the bug is in;
 * stress: fails when the bug is in. */
int main(int argc, char **argv)
{
    int bug = $1;
    if (argc >= 2 && strcmp(argv[1], "stress") == 0)
        return bug ? 1 : 0;
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        char line[256];
        if (!f)
            continue;
        while (fgets(line, sizeof line, f))
            if (bug && strstr(line, "leak"))
                return 1;
        fclose(f);
    }
    return 0$2
}
C
}

commit() { git add -A >/dev/null && git commit -q -m "$1" && git rev-parse HEAD; }
write 0 ";";  c1=$(commit "c1: good")
echo "/* more */" >> fakegc.c; c2=$(commit "c2: still good")
write 0 "";   c3=$(commit "c3: does not build")
write 0 ";";  c4=$(commit "c4: builds again, good")
write 1 ";";  c5=$(commit "c5: the bug")
echo "/* more */" >> fakegc.c; c6=$(commit "c6: still bad")

printf 'expect no leak\n' > "$tmp/leak.scn"
export BISECT_BUILD_DIR="$tmp/builds"

out=$(sh "$src/scripts/bisect.sh" "$c1" "$c6" "$tmp/leak.scn")
echo "$out"
echo "$out" | grep -q "^first bad commit: $c5\$" || { echo "FAIL: expected $c5 (scenario mode)"; exit 1; }
echo "$out" | grep -q "bisect: $c3 does not build" || { echo "FAIL: $c3 was not skipped as unbuildable"; exit 1; }

rm -rf "$tmp/builds"
out=$(sh "$src/scripts/bisect.sh" "$c1" "$c6" --stress --steps 10)
echo "$out"
echo "$out" | grep -q "^first bad commit: $c5\$" || { echo "FAIL: expected $c5 (--stress mode)"; exit 1; }

[ -x "$tmp/builds/$c5/fakegc" ] || { echo "FAIL: no build folder for $c5"; exit 1; }
[ "$(git rev-parse HEAD)" = "$c6" ] || { echo "FAIL: bisect left HEAD elsewhere"; exit 1; }
echo "bisect_test: ok (first bad $c5, $c3 skipped)"
