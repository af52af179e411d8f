#!/bin/sh
# check_cli.sh WANT_EXIT PATTERN CMD [ARGS...] - run CMD; pass when it exits
# with WANT_EXIT and (PATTERN non-empty) its output has a line matching
# PATTERN (grep -E). The output is shown either way.
want=$1
pattern=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$want" ]; then
    echo "check_cli: exit status $rc, want $want: $*"
    exit 1
fi
if [ -n "$pattern" ] && ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
    echo "check_cli: no line matches '$pattern'"
    exit 1
fi
exit 0
