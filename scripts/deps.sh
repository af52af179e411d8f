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
      python3-yaml                               # the docs' CI workflow, read by its test
      help2man                                   # man pages from --help
      python3-matplotlib librsvg2-bin graphviz   # charts, SVG and DOT rendering
      chromium chromium-driver python3-selenium  # the --html pages tested in a real browser
      python3-objgraph                           # holder chains checked against objgraph
      nodejs                                     # npm, for the SARIF validator below
      debootstrap)                               # the PyTorch 2.x roots (scripts/torch-root.sh)

# npm packages (README.md "Dependencies"), into a cache folder outside the
# clone: Microsoft's SARIF validator (a self-contained .NET build inside the
# npm package), for the tests of --format sarif. Its postinstall step
# (chmod) is done here: npm may leave install scripts unrun.
npm_dir=${FAKEGC_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fakegc/npm}
npm_pkgs=(@microsoft/sarif-multitool@5.7.0)
npm_tools() {
    command -v npm > /dev/null || { echo "deps.sh: npm is missing (Debian: apt-get install npm)" >&2; return 1; }
    if [ ! -x "$npm_dir/node_modules/.bin/sarif-multitool" ]; then
        mkdir -p "$npm_dir"
        npm install --prefix "$npm_dir" --no-audit --no-fund "${npm_pkgs[@]}" > /dev/null ||
            npm install --prefix "$npm_dir" --no-audit --no-fund "${npm_pkgs[@]}" > /dev/null
    fi
    chmod u+x "$npm_dir"/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
}

missing=()
for p in "${pkgs[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    if [ "$status" != "installed" ]; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    if ! command -v npm > /dev/null && [ "$(id -u)" -eq 0 ]; then
        apt-get install -y -q --no-install-recommends npm
    fi
    npm_tools
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
command -v npm > /dev/null || apt-get install -y -q --no-install-recommends npm
npm_tools
