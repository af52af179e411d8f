#!/bin/sh
# xref_2x.sh FAKEGC SRC SUITE - scripts/xref on real PyTorch 2.x: the twins of
# scripts/xref/examples and scenarios/ run under the launcher ROOTS/SUITE-python3
# of scripts/torch-root.sh (trixie: 2.6, forky: 2.14; ROOTS is $FAKEGC_ROOTS
# or /var/cache/fakegc/roots) and are compared under the design xref picks
# for that torch (pytorch-2.3, pytorch-2.14). Fails (1) on any mismatch or
# scenario xref could not run, and when the root's torch is not the one the
# suite names; 77 (skip) only when the root is absent.
set -u
fakegc=$1 src=$2 suite=$3
roots=${FAKEGC_ROOTS:-/var/cache/fakegc/roots}
case $suite in
trixie) want=2.6. ;;
forky) want=2.14. ;;
*) echo "xref_2x: unknown suite $suite"; exit 2 ;;
esac
py="$roots/$suite-python3"
[ -f "$roots/$suite/.fakegc-root" ] && [ -x "$py" ] ||
    { echo "skipped: no PyTorch root $roots/$suite (scripts/torch-root.sh $suite)"; exit 77; }
v=$(cd /tmp && "$py" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n 1)
case $v in
"$want"*) ;;
*) echo "xref_2x: FAIL: $py runs torch '$v', not $want"; exit 1 ;;
esac
echo "torch $v ($py)"
cd "$src" || exit 1
out=$(/usr/bin/python3 scripts/xref/xref.py --fakegc "$fakegc" --allow-meta --python "$py" \
      scripts/xref/examples scenarios 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v 'pytorch fails the expectation'
[ "$rc" -eq 0 ] || { echo "xref_2x: FAIL: xref exit $rc under torch $v"; exit 1; }
