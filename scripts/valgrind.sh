#!/usr/bin/env bash
# valgrind.sh [VALGRIND-OPTIONS] [--] [FAKEGC-ARGS...] - fakegc under
# Valgrind (memcheck unless --tool says otherwise).
#
#   scripts/valgrind.sh scenarios/memo/weak_keys.scn       # = fakegc run ...
#   scripts/valgrind.sh --xml=yes --xml-file=vg.xml run -k weak scenarios
#   scripts/valgrind.sh --gen-suppressions=all -- diff old.json new.json
#   scripts/valgrind.sh --suppressions=my.supp stress --steps 2000
#
# VALGRIND-OPTIONS are the leading words that start with '-' (Valgrind's
# options are one word each: --xml-file=F), up to "--" or the first other
# word; they come after the defaults, so they win:
#   --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
#   --errors-for-leak-kinds=definite,indirect --error-exitcode=99
# FAKEGC-ARGS are fakegc's: a command and its arguments, or paths alone
# (then `run` is meant); none runs `fakegc run` (./scenarios, or the
# installed ones). The binary: $FAKEGC when set, else build/fakegc of the
# source tree this script is in, else PREFIX/bin/fakegc beside an installed
# PREFIX/libexec/fakegc/valgrind.sh, else fakegc on PATH.
#
# Exit: fakegc's own status (0 held, 1 a finding, 2 usage, 3 internal), or
# the --error-exitcode (99) when Valgrind saw a memory error or a definite or
# indirect leak; 2 when no fakegc or no valgrind is found. One process: a
# command that forks (run --jobs, stress, oom) wants --trace-children=yes,
# or scripts/valgrind-test.sh, which reads every process's log.
set -u
here=$(cd "$(dirname "$0")" && pwd)

find_fakegc() {
    if [ -n "${FAKEGC:-}" ]; then
        echo "$FAKEGC"
    elif [ -x "$here/../build/fakegc" ]; then
        echo "$(cd "$here/../build" && pwd)/fakegc"
    elif [ -x "$here/../../bin/fakegc" ]; then
        echo "$(cd "$here/../../bin" && pwd)/fakegc"
    else
        command -v fakegc
    fi
}

fakegc=$(find_fakegc) || fakegc=
if [ -z "$fakegc" ] || [ ! -x "$fakegc" ]; then
    echo "valgrind.sh: no fakegc binary (${FAKEGC:+FAKEGC=$FAKEGC is not executable; }build it" \
         "with cmake --build --preset dev, or set FAKEGC)" >&2
    exit 2
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: valgrind not found (apt-get install valgrind, or scripts/deps.sh)" >&2
    exit 2
fi

opts=(--tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
      --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
errcode=99
while [ $# -gt 0 ]; do
    case $1 in
        --) shift; break ;;
        --error-exitcode=*) errcode=${1#*=}; opts+=("$1") ;;
        -*) opts+=("$1") ;;
        *) break ;;
    esac
    shift
done
# paths alone, or nothing: `fakegc run`
if [ $# -eq 0 ] || ! "$fakegc" list options "$1" >/dev/null 2>&1; then
    case ${1:-} in
        -*) ;;   # fakegc's own options (-- --version)
        *) set -- run "$@" ;;
    esac
fi

valgrind "${opts[@]}" "$fakegc" "$@"
rc=$?
if [ "$rc" -eq "$errcode" ] && [ "$errcode" -ne 0 ]; then
    echo "valgrind.sh: Valgrind found memory errors or leaks in fakegc $* (exit $rc)" >&2
fi
exit $rc
