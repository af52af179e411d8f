#!/usr/bin/env bash
# funclen.sh [ROOT] [--list] - no function in src/ longer than 120 lines,
# at most 8 longer than 100: the house style's "a function fits one
# screen", with the long ones split into named phases.
#
# A function is counted from the line that names it to its closing brace,
# as the house style writes one: the name at the start of a line, the
# body's braces alone at the start of theirs ("{", "}"). Prints every
# function over 100 lines (lines, file:line, name) and exits 1 when one is
# over 120 or more than 8 are over 100; 0 otherwise. --list prints the
# counts of every function, longest first, and exits 0.
#
# FUNCLEN_MAX and FUNCLEN_LONG (120, 100) and FUNCLEN_MAX_LONG (8) change
# the limits (the test of this script uses them).
set -u
root=. list=0
for a in "$@"; do
    case $a in
    --list) list=1 ;;
    *) root=$a ;;
    esac
done
max=${FUNCLEN_MAX:-120} long=${FUNCLEN_LONG:-100} max_long=${FUNCLEN_MAX_LONG:-8}
cd "$root" || exit 2
files=$(find src -name '*.[ch]' | LC_ALL=C sort)
[ -n "$files" ] || { echo "funclen: no C files under $root/src" >&2; exit 2; }
# shellcheck disable=SC2086
counts=$(awk '
    FNR == 1 { start = 0; body = 0 }
    !body && /^[A-Za-z_][A-Za-z0-9_ \t*]*\(/ && !/;[ \t]*$/ && !/^(typedef|struct|enum|union)[ \t]/ {
        start = FNR
        name = $0
        sub(/[ \t]*\(.*/, "", name)
        sub(/.*[ \t*]/, "", name)
    }
    /^\{[ \t]*$/ && start { body = 1 }
    /^\}[ \t]*$/ && body {
        printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
        start = 0; body = 0
    }' $files | sort -k1,1nr -k2,2)
if [ "$list" = 1 ]; then
    echo "$counts"
    exit 0
fi
over=$(awk -v m="$long" '$1 > m' <<<"$counts")
[ -n "$over" ] && echo "$over"
nlong=$(grep -c . <<<"$over")
ntoo=$(awk -v m="$max" '$1 > m' <<<"$counts" | grep -c .)
echo "funclen: $nlong functions over $long lines (at most $max_long), $ntoo over $max (none allowed)"
[ "$ntoo" -eq 0 ] && [ "$nlong" -le "$max_long" ]
