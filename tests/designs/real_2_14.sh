#!/bin/sh
# real_2_14.sh [ROOTS] - runs real_2_14.py under PyTorch 2.14 (the launcher
# ROOTS/forky-python3 that scripts/torch-root.sh forky writes; ROOTS is
# $FAKEGC_ROOTS or /var/cache/fakegc/roots); 77 (skip) when there is none.
set -u
roots=${1:-${FAKEGC_ROOTS:-/var/cache/fakegc/roots}}
py="$roots/forky-python3"
[ -x "$py" ] || { echo "no PyTorch 2.14 root at $roots (scripts/torch-root.sh forky)"; exit 77; }
cd "$(dirname "$0")" && exec "$py" real_2_14.py
