#!/bin/sh
# oom.sh [BUILD_DIR] [OOM-OPTIONS...] - `fakegc oom` over the whole scenario
# suite, once with the defaults and once with the PyTorch 1.13 policies
# (periodic sweeps take other allocation paths). Each scenario's allocation
# failures run transiently and persistently, in a child process.
#   scripts/oom.sh                      # build/fakegc, every scenario
#   scripts/oom.sh build-asan --max-fail 2000
# Exit: 0 every run ended cleanly; 1 a leak, an unclean end or a crash.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$top/$build ;; esac
fakegc=$build/fakegc
if [ ! -x "$fakegc" ]; then
    echo "oom.sh: no $fakegc (cmake --build $build --target fakegc)" >&2
    exit 2
fi
cd "$top" || exit 2
rc=0
echo "== fakegc oom scenarios/ $*"
"$fakegc" oom -q "$@" scenarios || rc=1
# the periodic policy of PyTorch 1.13 (not --compat pytorch-1.13: there a
# fake memo hit is 1.13.1's _fix_weakref leak, which fails the scenarios
# that make one with no failure injected)
echo "== fakegc oom --sweep periodic scenarios/ $*"
"$fakegc" oom -q --sweep periodic "$@" scenarios || rc=1
exit $rc
