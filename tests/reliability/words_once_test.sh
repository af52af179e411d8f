#!/bin/sh
# words_once_test.sh FAKEGC SOURCE_DIR - each word list (designs, report
# formats, leak classes, categories) is spelled once in C, in its table, and
# the help made of the tables leaves none out and names none that is gone:
# words_once.py over src/ with the words as the binary says them; --compat's
# unknown-value message and `list designs` name the same designs in the same
# order; every pytorch-N.M any help or list says is a design; stress's
# --format help names every format it accepts, each a report format; every
# `--format W` in a command's help is a W that command accepts; every option
# a command's examples use is one of its options.
set -u
f=$1
. "$(dirname "$0")/../lib.sh"
cd "$2" || exit 2
t_begin words_once
cmds="run record stress shrink oom diff merge bench list"

# expected WORDS: the "(expected a, b, c)" of an unknown value, as a,b,c
expected() { "$f" "$@" 2>&1 >/dev/null | sed -n 's/.*(expected \(.*\))$/\1/p' | sed 's/, /,/g'; }

designs=$("$f" list designs | awk '{print $1}' | paste -sd, -)
formats=$(expected run --format zz x)
classes=$("$f" record --help | sed -n 's/.*--fail-on CLASSES *what fails: \([a-z,]*\).*/\1/p')
names=$("$f" record --help | awk 'NR>2&&/^$/{exit} NR>2' | tr -s ' \n' ' ' |
    grep -oE '[a-z][a-z ]* \([^()]*: (fails|reported)\)' | sed -E 's/ \(.*//' | paste -sd, -)
for v in designs formats classes names; do
    eval "[ -n \"\$$v\" ]" || fail "no $v from the binary"
done

# the words in C: in their tables only
/usr/bin/python3 tests/reliability/words_once.py src "$designs" "$formats" "$classes" "$names" \
    > "$tmp/spelled" || fail "words spelled outside their tables:
$(cat "$tmp/spelled")"

# --compat accepts what `list designs` lists, in its order
compat=$(expected run --compat zz x)
[ "$compat" = "$designs" ] || fail "--compat accepts $compat, list designs says $designs"

# every help and list: each design it names is one
for c in $cmds; do "$f" $c --help; done > "$tmp/help"
"$f" list bugs >> "$tmp/help"
for d in $(grep -oE 'pytorch-[0-9]+\.[0-9]+' "$tmp/help" | sort -u); do
    echo ",$designs," | grep -qF ",$d," || fail "a help names $d, which is no design ($designs)"
done
"$f" run --help | tr -s ' \n' ' ' | grep -qF "(${designs%%,*}, ...)" ||
    fail "--compat's help does not name the first design ${designs%%,*}"

# stress --format: its help names each format it accepts, each a report format
sw=$(expected stress --format zz)
[ -n "$sw" ] || fail "stress --format zz: no expected words"
"$f" stress --help | awk '/^  --format /{p=1} p&&/^  --[a-z]/&&!/^  --format /{exit} p' |
    tr -s ' \n' ' ' > "$tmp/sfh"
for w in $(echo "$sw" | tr , ' '); do
    echo ",$formats," | grep -qF ",$w," || fail "stress --format $w is no report format ($formats)"
    grep -qE " $w( |,|\$)" "$tmp/sfh" || fail "stress --format's help leaves out $w: $(cat "$tmp/sfh")"
done

# every `--format W` in a help is a W its command accepts; every option an
# example uses is the command's
for c in $cmds; do
    "$f" $c --help > "$tmp/h"
    accepts=$(expected $c --format zz x)
    for w in $(grep -oE -- '--format [a-z]+' "$tmp/h" | awk '{print $2}' | sort -u); do
        echo ",$accepts," | grep -qF ",$w," ||
            fail "$c --help says --format $w; $c accepts $accepts"
    done
    "$f" list options $c | cut -f2 > "$tmp/opts"
    sed -n '/^Examples:/,$p' "$tmp/h" | grep -E "^  fakegc $c " | sed -E 's/^  //; s/  .*$//; s/ -- .*$//' |
        grep -oE -- ' --[a-z][a-z-]*' | sed 's/^ //' | sort -u > "$tmp/used"
    for o in $(cat "$tmp/used"); do
        grep -qxF -- "$o" "$tmp/opts" || fail "$c's examples use $o, which is not an option of $c"
    done
done
echo "words_once: ok"
