#!/usr/bin/env bash
# torch-root.sh SUITE [CACHE] - a Debian folder with real PyTorch 2.x, and a
# launcher that runs its python3 (for `fakegc record --python LAUNCHER`).
#
#   trixie: Debian 13, python3-torch 2.6.0 (Python 3.13)
#   forky:  Debian 14, python3-torch 2.14.1 (Python 3.14)
#
# The folder is CACHE/SUITE (CACHE: $FAKEGC_ROOTS, else /var/cache/fakegc/roots,
# outside any clone so that CI and later runs reuse it). Idempotent:
#   - a folder whose python3 imports torch is reused (a folder made by hand
#     with the same debootstrap command is adopted); the marker
#     CACHE/SUITE/.fakegc-root says which torch and Python it has;
#   - a folder that does not import (a broken or half-built one) is
#     unmounted and rebuilt from scratch with debootstrap (5-9 minutes on 2
#     cores, 1.3-1.5 GB), as root only.
# python3-objgraph joins torch in the folder (the tests' holder chains).
# Writes the launcher CACHE/SUITE-python3 and prints its path last.
#
# The launcher runs FOLDER/usr/bin/python3 with its arguments in a new
# mount and pid namespace (`unshare -mpf`, as an ordinary user `unshare
# -rmpf`), chrooted into FOLDER, with /dev, /tmp, the current folder and
# the folder of every argument that is an existing absolute or relative
# path bind-mounted at the same path inside, so that the recorder, the
# program, its folder and the recording are where they are outside.
# Exit: 0 ready; 1 the build failed; 2 usage; 77 absent and not buildable
# here (not root, or no debootstrap).
set -uo pipefail

usage() { echo "usage: torch-root.sh trixie|forky [CACHE]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
suite=$1
case "$suite" in
    trixie) script= ;;
    forky) script=/usr/share/debootstrap/scripts/sid ;;  # bookworm's debootstrap lacks forky
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
esac
cache=${2:-${FAKEGC_ROOTS:-/var/cache/fakegc/roots}}
dir=$cache/$suite
launcher=$cache/$suite-python3
marker=$dir/.fakegc-root
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources \
         2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

write_launcher() {
    local tmp=$launcher.$$.tmp
    cat > "$tmp" <<EOF
#!/bin/bash
# $launcher - python3 of $dir (written by torch-root.sh $suite): runs it
# chrooted in new mount and pid namespaces, with /dev, /tmp, the current
# folder and the folder of each path argument bind-mounted where they are.
root=$dir
EOF
    cat >> "$tmp" <<'EOF'
binds=(/tmp "$PWD")
for a in "$@"; do
    [ -e "$a" ] || continue
    p=$(readlink -f -- "$a") || continue
    [ -d "$p" ] || p=$(dirname -- "$p")
    binds+=("$p")
done
[ -n "${TMPDIR:-}" ] && [ -d "$TMPDIR" ] && binds+=("$(readlink -f "$TMPDIR")")
[ -n "${FAKEGC_RECORD_STATUS:-}" ] && binds+=("$(dirname -- "$FAKEGC_RECORD_STATUS")")
userns=()
[ "$(id -u)" -eq 0 ] || userns=(-r)
exec unshare "${userns[@]}" -mpf --mount-proc="$root/proc" /bin/bash -c '
    root=$1; shift; n=$1; shift
    mount --rbind /dev "$root/dev" || exit 126
    for ((i = 0; i < n; i++)); do
        p=$1; shift
        case "$p" in "$root"|"$root"/*|/) continue ;; esac
        mkdir -p "$root$p" 2>/dev/null && mount --bind "$p" "$root$p" || {
            echo "launcher: cannot bind-mount $p into $root" >&2; exit 126; }
    done
    exec chroot "$root" /bin/sh -c "cd \"\$0\" 2>/dev/null; exec /usr/bin/python3 \"\$@\"" "$PWD" "$@"
' launcher "$root" "${#binds[@]}" "${binds[@]}" "$@"
EOF
    chmod 755 "$tmp" && mv "$tmp" "$launcher"
}

# torch and Python versions of the folder (one line), or nothing
versions() {
    [ -x "$dir/usr/bin/python3" ] || return 1
    timeout 300 "$launcher" -c 'import sys, torch; print("torch %s python %s" % (torch.__version__, sys.version.split()[0]))' 2>/dev/null
}

extras() {   # objgraph, in a folder adopted without it (as root)
    "$launcher" -c 'import objgraph' 2>/dev/null && return 0
    [ "$(id -u)" -eq 0 ] || { echo "torch-root.sh: $dir lacks python3-objgraph" >&2; return 0; }
    echo "torch-root.sh: installing python3-objgraph into $dir" >&2
    unshare -mpf --mount-proc="$dir/proc" chroot "$dir" apt-get install -y -q \
        --no-install-recommends python3-objgraph > "$cache/$suite.log" 2>&1 || {
        tail -5 "$cache/$suite.log" >&2; return 1; }
}

unmount_under() {   # what a killed launcher or build left mounted, deepest first
    local m
    for m in $(awk -v d="$1" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/mounts | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
}

mkdir -p "$cache" 2>/dev/null || { echo "torch-root.sh: cannot create $cache" >&2; exit 77; }
write_launcher || { echo "torch-root.sh: cannot write $launcher" >&2; exit 77; }
if v=$(versions) && [ -n "$v" ]; then
    if [ "$(cat "$marker" 2>/dev/null)" != "$v" ]; then
        echo "$v" > "$marker" 2>/dev/null || true
        echo "torch-root.sh: adopted $dir ($v)" >&2
    fi
    extras || exit 1
    echo "$launcher"
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v debootstrap > /dev/null; then
    echo "torch-root.sh: $dir is absent or does not import torch, and building it needs root" \
         "and debootstrap" >&2
    exit 77
fi
echo "torch-root.sh: building $dir (debootstrap $suite with python3-torch, 5-9 minutes," \
     "log $cache/$suite.log)" >&2
unmount_under "$dir"
unmount_under "$dir.tmp"
rm -rf "$dir" "$dir.tmp"
# shellcheck disable=SC2086
if ! debootstrap --variant=minbase --include=python3-torch,python3-objgraph "$suite" "$dir.tmp" "$mirror" \
        $script > "$cache/$suite.log" 2>&1; then
    tail -5 "$cache/$suite.log" >&2
    echo "torch-root.sh: debootstrap failed (log $cache/$suite.log)" >&2
    exit 1
fi
mv "$dir.tmp" "$dir"
if ! v=$(versions) || [ -z "$v" ]; then
    echo "torch-root.sh: $dir was built but its python3 does not import torch" >&2
    exit 1
fi
echo "$v" > "$marker"
extras || exit 1
echo "torch-root.sh: built $dir ($v)" >&2
echo "$launcher"
