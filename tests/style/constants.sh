#!/usr/bin/env bash
# constants.sh [ROOT] - constants written once: FNV-1a's 64-bit offset basis
# and prime only in src/core/ix.h (IX_FNV_BASIS, IX_FNV_PRIME; every hash
# of the tree uses those), and fakegc's version only in CMakeLists.txt's
# project(VERSION), which the build defines as FAKEGC_VERSION (no source
# file defines it). Exit 0, or 1 with each offence as FILE:LINE: text.
set -u
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$root" || exit 2
bad=0
# any spelling of the basis (a digit short included) or of the prime
hits=$(grep -rnE '146959810393466|1099511628211|0x[cC][bB][fF]29[cC][eE]484222325|0x100000001[bB]3' \
           --include='*.c' --include='*.h' src | grep -v '^src/core/ix\.h:')
if [ -n "$hits" ]; then
    echo "constants: FNV-1a's basis or prime outside src/core/ix.h (use IX_FNV_BASIS, IX_FNV_PRIME):"
    echo "$hits"
    bad=1
fi
hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*define[[:space:]]+FAKEGC_VERSION\b' \
           --include='*.c' --include='*.h' src)
if [ -n "$hits" ]; then
    echo "constants: FAKEGC_VERSION defined in a source (it is CMakeLists.txt's project(VERSION)):"
    echo "$hits"
    bad=1
fi
exit $bad
