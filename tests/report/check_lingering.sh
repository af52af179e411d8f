#!/bin/sh
# check_lingering.sh FAKEGC - a lingering group says what reclaims it, from
# the design: under one that sweeps (scenarios/recorded/leak_lingering.scn,
# pytorch-1.13) its converter's next sweep (mechanism pending-sweep); under
# one with no sweep (tests/report/lingering_no_sweep.scn, pytorch-2.3 and
# --compat pytorch-2.14) a stale entry left in its table (stale-entry), with
# no sweep promised in the text.
set -u
fakegc=$1 fail=0
check() {   # what file args... : the JSON's mechanisms of lingering groups and the text
    what=$1 file=$2; shift 2
    json=$("$fakegc" run --format json "$@" "$file" 2>&1)
    text=$("$fakegc" run --no-color "$@" "$file" 2>&1)
    mechs=$(printf '%s\n' "$json" | grep -o '"class": "lingering"[^}]*"mechanism": "[a-z-]*"' |
            sed 's/.*"mechanism": "//; s/"$//' | sort -u | tr '\n' ' ')
    case $what in
    sweep) want="pending-sweep " phrase="reclaimed at its converter's next sweep" ;;
    stale) want="stale-entry " phrase="left in its weak table, which this design never sweeps" ;;
    esac
    [ "$mechs" = "$want" ] ||
        { echo "FAIL $file $*: lingering mechanisms [$mechs], want [$want]"; fail=1; }
    printf '%s\n' "$text" | grep -q "$phrase" ||
        { echo "FAIL $file $*: no '$phrase' in:"; printf '%s\n' "$text"; fail=1; }
    if [ "$what" = stale ] && printf '%s\n' "$text" | grep -q "next sweep"; then
        echo "FAIL $file $*: a sweep awaited under a design with none:"; printf '%s\n' "$text"
        fail=1
    fi
}
check sweep scenarios/recorded/leak_lingering.scn
check stale tests/report/lingering_no_sweep.scn
check stale tests/report/lingering_no_sweep.scn --compat pytorch-2.14
[ "$fail" -eq 0 ] && echo "ok: pending-sweep under 1.13, stale-entry under 2.3 and 2.14"
exit "$fail"
