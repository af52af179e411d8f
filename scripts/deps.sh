#!/usr/bin/env bash
# deps.sh - make sure the Debian packages fakegc needs are installed.
# As root: installs the missing ones (apt-get update first). Otherwise:
# names them and exits 1. Exit 0 when everything is there.
set -euo pipefail

# Why each one is here: README.md "Dependencies".
pkgs=(cmake gcc clang libclang-rt-14-dev pkg-config libc6-dev libcriterion-dev
      libjemalloc-dev valgrind make python3
      python3-torch python3-torchvision          # xref and the recorder
      slurm-wlm munge parallel                   # campaigns (scripts/campaign.sh)
      python3-jsonschema libxml2-utils perl      # report consumers: schemas, xmllint, prove
      help2man                                   # man pages from --help
      python3-matplotlib librsvg2-bin graphviz   # charts, SVG and DOT rendering
      chromium chromium-driver python3-selenium  # the --html pages tested in a real browser
      python3-objgraph)                          # holder chains checked against objgraph

missing=()
for p in "${pkgs[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    if [ "$status" != "installed" ]; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
    echo "deps.sh: install them as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
