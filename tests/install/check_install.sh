#!/bin/bash
# check_install.sh BUILD_DIR - `cmake --install` into a temporary prefix
# gives a working fakegc (it runs the installed scenarios), man pages made
# from its real --help (fakegc(1), one per command), the reference pages
# fakegc-scenario(5), fakegc-report(5) and fakegc-semantics(7), bash completion for commands,
# options, bug and allocator names, and the scripts under libexec/fakegc,
# which `fakegc --libexec-dir` names.
set -u
build=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakegc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "check_install: FAIL: $*"; fails=$((fails + 1)); }
p=$tmp/prefix
cmake --install "$build" --prefix "$p" > "$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log"; echo "check_install: FAIL: cmake --install"; exit 1; }
f=$p/bin/fakegc
[ -x "$f" ] || { echo "check_install: FAIL: no $f"; exit 1; }
"$f" --version | grep -q '^fakegc [0-9]' || fail "--version"
cd "$tmp" || exit 2   # nowhere near the source tree
"$f" run -q "$("$f" --data-dir)/scenarios" > run.txt 2>&1 || { cat run.txt; fail "installed scenarios do not pass"; }
[ "$("$f" --data-dir)" = "$p/share/fakegc" ] || fail "--data-dir: $("$f" --data-dir)"
[ "$("$f" --libexec-dir)" = "$p/libexec/fakegc" ] || fail "--libexec-dir: $("$f" --libexec-dir)"
"$p/libexec/fakegc/bisect.sh" --help > bisect.txt 2>&1 || fail "bisect.sh --help exit $?"
grep -q '^usage: bisect.sh' bisect.txt || fail "bisect.sh --help text"
[ -x "$p/libexec/fakegc/xref/xref.py" ] || fail "xref.py not installed"
# the recorder: record.py runs from libexec with its package beside it, and
# the package is where the system python3 finds it under the prefix
"$p/libexec/fakegc/record.py" --help > record.txt 2>&1 || fail "record.py --help exit $?"
grep -q '^usage: record.py' record.txt || fail "record.py --help text"
pydir=$(grep -m1 '^FAKEGC_PYTHON_DIR:' "$build/CMakeCache.txt" | cut -d= -f2)
[ -f "$p/$pydir/fakegc/__init__.py" ] || fail "no fakegc package under $p/$pydir"
PYTHONPATH=$p/$pydir /usr/bin/python3 -c 'import fakegc, sys
assert fakegc.__file__.startswith(sys.argv[1]), fakegc.__file__
fakegc.recording, fakegc.mark' "$p/$pydir" || fail "import fakegc from $p/$pydir"
# pytest loads the installed plugin by itself (its pytest11 entry point), and
# an explicit -p beside it is the same plugin
if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
    for p_opt in "" "-p fakegc_pytest"; do
        # shellcheck disable=SC2086
        PYTHONPATH=$p/$pydir /usr/bin/python3 -m pytest -p no:cacheprovider $p_opt --help \
            > pytest.txt 2>&1 || fail "pytest $p_opt --help exit $?"
        grep -q -- '--fakegc-dir' pytest.txt || fail "pytest $p_opt does not load the plugin: $(tail -3 pytest.txt)"
    done
fi
ls "$p/share/fakegc/schema/"fakegc-report-3.schema.json > /dev/null || fail "schemas not installed"

# man pages: rendered, and made from the real --help (an option only run has)
for page in fakegc fakegc-run fakegc-record fakegc-diff fakegc-stress fakegc-oom fakegc-bench \
            fakegc-shrink fakegc-merge fakegc-list; do
    m=$p/share/man/man1/$page.1
    [ -f "$m" ] || { fail "no man page $page.1"; continue; }
    MANWIDTH=80 man -l "$m" > "$page.txt" 2> /dev/null || fail "man -l $page.1"
done
# every page, reference pages too: EXAMPLES, EXIT STATUS and SEE ALSO
for m in "$p"/share/man/man[157]/fakegc*.[157]; do
    for sect in EXAMPLES 'EXIT STATUS' 'SEE ALSO'; do
        MANWIDTH=80 man -l "$m" 2> /dev/null | grep -q "^$sect\$" || fail "${m##*/} has no $sect"
    done
done
grep -q 'fakegc record --format github' fakegc-record.txt || fail "fakegc-record(1) examples"
grep -q -- '--fail-on' fakegc-record.txt || fail "fakegc-record(1) lacks --fail-on"
grep -q -- '--timeline' fakegc-run.txt || fail "fakegc-run(1) lacks --timeline"
grep -q -- '--allow-missing' fakegc-diff.txt || fail "fakegc-diff(1) lacks --allow-missing"
grep -q 'FAKEGC-RUN(1)' fakegc-run.txt || fail "fakegc-run(1) title"
# the reference pages: installed, rendered by man, and clean under groff's
# warnings (-ww: a bad escape or a raw UTF-8 byte warns)
for page in man5/fakegc-scenario.5:expect man5/fakegc-report.5:fakegc-report/3 \
            man7/fakegc-semantics.7:pytorch-1.13; do
    m=$p/share/man/${page%%:*}; word=${page#*:}
    [ -f "$m" ] || { fail "no ${m##*/}"; continue; }
    MANWIDTH=80 man -l "$m" 2>/dev/null | grep -q -- "$word" || fail "${m##*/} does not render ($word)"
    warn=$(groff -man -Tutf8 -ww -z "$m" 2>&1)
    [ -z "$warn" ] || fail "${m##*/}: groff warns: $(echo "$warn" | head -3)"
done

# bash completion, against the installed binary
comp=$p/share/bash-completion/completions/fakegc
[ -f "$comp" ] || { fail "no bash completion"; comp=/dev/null; }
out=$(bash -c '
    shopt -s extglob; source "$1"; f=$2
    t() { COMP_WORDS=("$@"); COMP_WORDS[0]=$f; COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _fakegc
          echo "${COMPREPLY[*]}"; }
    t fakegc st; t fakegc run --inj; t fakegc run --inject strong-memo,no-sw
    t fakegc run --allocator jem; t fakegc diff --format ""
    t fakegc record --fail-on lo; t fakegc record --fail-on lost,acc' _ "$comp" "$f" 2>&1)
echo "$out" | sed -n 1p | grep -qw stress || fail "completion of commands: $out"
echo "$out" | sed -n 2p | grep -q -- '--inject' || fail "completion of options: $out"
echo "$out" | sed -n 3p | grep -q 'strong-memo,no-sweep' || fail "completion of bugs: $out"
echo "$out" | sed -n 4p | grep -qw jemalloc || fail "completion of allocators: $out"
echo "$out" | sed -n 5p | grep -qw markdown || fail "completion of diff formats: $out"
[ "$(echo "$out" | sed -n 6p)" = lost ] || fail "completion of record --fail-on: $out"
[ "$(echo "$out" | sed -n 7p)" = lost,accumulating ] || fail "completion of a --fail-on list: $out"
[ "$fails" -eq 0 ] && echo "check_install: ok ($p)" && exit 0
exit 1
