# scratch.sh - what the reliability tests share, sourced first thing:
#   . "$(dirname "$0")/scratch.sh"
# A scratch folder ($d), made current and removed at exit; fail=0, and
# `bad MSG`, which prints "FAIL: MSG" and sets fail=1 (a test goes on and
# ends with `exit $fail`, so one run names every failure).
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
