# lib.sh - what the shell tests share, sourced (POSIX sh):
#   . "$(dirname "$0")/../lib.sh"
#   t_begin diff_test     # $tmp: a fresh folder, removed when the test exits
#   fail "what broke"     # prints "diff_test: FAIL: what broke", exits 1
t_begin() {
    t_name=$1
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-$1.XXXXXX") || exit 2
    trap 'rm -rf "$tmp"' EXIT
}
fail() { echo "$t_name: FAIL: $*"; exit 1; }
