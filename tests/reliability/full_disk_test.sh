#!/bin/sh
# full_disk_test.sh FAKEGC - `stress --out-dir` on a full disk: no 0-byte
# reproducer (it would pass when replayed), no `reproduce:` line naming a
# file that was not written (run as printed, it ran the default scenarios/),
# and exit 2 with the path and errno. The disk is a tmpfs of 8 KiB, filled,
# mounted in a private mount namespace (unshare -rm: no root needed); where
# namespaces are not allowed the test is skipped (77).
fakegc=$1
d=$(mktemp -d) || exit 2
trap 'rm -rf "$d"' EXIT
mkdir "$d/full"
if ! unshare -rm sh -c "mount -t tmpfs -o size=8k tmpfs '$d/full'" 2>/dev/null; then
    echo "skip: no mount namespace here"
    exit 77
fi
# shellcheck disable=SC2016
unshare -rm sh -c '
    mount -t tmpfs -o size=8k tmpfs "$2" || exit 90
    dd if=/dev/zero of="$2/fill" bs=1k count=64 2>/dev/null
    "$1" stress --inject strong-memo --seed 1 --steps 200 --seconds 20 --no-shrink \
        --out-dir "$2" > "$3/out.txt" 2> "$3/err.txt"
    echo $? > "$3/rc"
    ls -la "$2" > "$3/ls.txt"
    find "$2" -name "stress-seed-*" -size 0 > "$3/empty.txt"
' sh "$fakegc" "$d/full" "$d"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rc=$(cat "$d/rc")
[ "$rc" != 90 ] || { echo "skip: cannot mount a tmpfs"; exit 77; }
[ "$rc" -eq 2 ] || bad "exit $rc, want 2 (a write error)"
grep -q "FAIL stress seed" "$d/out.txt" || bad "no failure found: $(cat "$d/out.txt")"
[ ! -s "$d/empty.txt" ] || bad "a 0-byte reproducer was left: $(cat "$d/empty.txt")"
grep -q 'stress-seed-.*\.part' "$d/ls.txt" && bad "a partial file was left: $(cat "$d/ls.txt")"
if grep '^reproduce:' "$d/out.txt" | grep -qv '\.scn$'; then
    bad "a reproduce line without a file: $(grep '^reproduce:' "$d/out.txt")"
fi
grep -q '^reproduce:' "$d/out.txt" && bad "a reproduce line for a file not written"
grep -q "cannot write .*stress-seed-1.scn: No space left on device" "$d/err.txt" ||
    bad "no path and errno on stderr: $(cat "$d/err.txt")"
[ "$fail" -eq 0 ] && echo "ok: a full disk leaves no reproducer and prints none"
exit $fail
