#!/usr/bin/env bash
# campaign.sh - run one fakegc campaign as N shards on a batch engine, then
# merge the shard reports (README "Campaigns", fakegc-merge(1)).
#
# usage: scripts/campaign.sh --engine slurm|parallel|local --shards N --out DIR
#                            [OPTIONS] -- COMMAND ARGS...
#
# Runs `fakegc COMMAND ARGS --shard K/N --format json --output DIR/shard-K.json`
# for every K of 0..N-1 that has no complete report yet, on the engine:
#   slurm     one `sbatch --array=... --wait` job; logs DIR/logs/%A_%a.out;
#             a failed array task is reported by its id (JOBID_K)
#   parallel  GNU parallel (--sshloginfile passes through: plain ssh hosts
#             that see DIR and the fakegc binary at the same paths)
#   local     plain processes on this machine
# then `fakegc merge` writes DIR/merged.json and prints the merged text
# report. A rerun skips the shards whose report is complete (a report is
# moved into place only when its shard finished with status 0 or 1), so a
# campaign resumes after preemption. A stress campaign without --out-dir
# writes its reproducers to DIR/stress.
#
# One campaign per DIR: the driver holds DIR/campaign.lock (flock) from
# start to end, and so do the shards it starts here; a second driver on the
# same DIR exits 2 at once ("DIR is in use"), and a different command on a
# DIR that holds a campaign is refused (exit 2). TERM or INT to the driver
# stops its shards (local and parallel: TERM to each, which passes it to
# fakegc; slurm: scancel of the array job), removes their partial files and
# exits 143 / 130. A resume removes the partial files a killed run left,
# cancels a killed driver's Slurm job still running, and keeps a report only
# when its stamp DIR/shard-K.ok names this campaign (the command, N, and for
# run and oom the scenario files' paths, sizes and times), K, and the
# report's SHA-256, and the report says its kind and [K, N]; any other
# report is removed and its shard rerun.
#
# options:
#   --engine E          slurm, parallel or local
#   --shards N          how many shards (1 to 100000)
#   --out DIR           the campaign's folder (created)
#   --fakegc PATH       the binary (default: $FAKEGC, else build/fakegc of this
#                       checkout, else fakegc on PATH)
#   --jobs J            shards at once (parallel, local; default: all / parallel's)
#   --partition P       sbatch --partition
#   --time T            sbatch --time (per array task)
#   --sbatch ARG        another sbatch argument (repeatable)
#   --sshloginfile F    parallel --sshloginfile
#   -h, --help          this text
#
# exit status: as `fakegc merge` (0 nothing found, 1 a failure, 2 usage or
# not one campaign, 3 internal); 3 also when a shard could not complete.
set -uo pipefail

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "campaign.sh: $1" >&2; exit "${2:-2}"; }

here=$(cd "$(dirname "$0")/.." && pwd)
engine= shards= out= fakegc=${FAKEGC:-} jobs= partition= time_limit= sshlogin=
sbatch_extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --engine) engine=${2:-}; shift 2 ;;
        --shards) shards=${2:-}; shift 2 ;;
        --out) out=${2:-}; shift 2 ;;
        --fakegc) fakegc=${2:-}; shift 2 ;;
        --jobs) jobs=${2:-}; shift 2 ;;
        --partition) partition=${2:-}; shift 2 ;;
        --time) time_limit=${2:-}; shift 2 ;;
        --sbatch) sbatch_extra+=("${2:-}"); shift 2 ;;
        --sshloginfile) sshlogin=${2:-}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) die "unknown option '$1' (campaign.sh --help)" ;;
    esac
done
[ $# -ge 1 ] || die "no command after -- (campaign.sh --help)"
case "$engine" in slurm|parallel|local) ;; *) die "--engine: slurm, parallel or local" ;; esac
[[ "$shards" =~ ^[0-9]+$ ]] && [ "$shards" -ge 1 ] && [ "$shards" -le 100000 ] ||
    die "--shards: expected 1 to 100000, got '$shards'"
[ -n "$out" ] || die "--out DIR is required"
[ -z "$jobs" ] || [[ "$jobs" =~ ^[0-9]+$ ]] || die "--jobs: expected a number"
command=$1; shift
case "$command" in run|oom|stress) ;; *) die "COMMAND: run, oom or stress (got '$command')" ;; esac
for a in "$@"; do
    case "$a" in --shard|--shard=*|--format|--format=*|--output|--output=*)
        die "$a is set by the campaign (--shard K/N --format json --output DIR/shard-K.json)" ;;
    esac
done

if [ -z "$fakegc" ]; then
    if [ -x "$here/build/fakegc" ]; then fakegc=$here/build/fakegc; else fakegc=$(command -v fakegc || true); fi
fi
[ -n "$fakegc" ] && [ -x "$fakegc" ] || die "no fakegc binary (--fakegc PATH)"
fakegc=$(cd "$(dirname "$fakegc")" && pwd)/$(basename "$fakegc")
mkdir -p "$out/logs" || die "cannot create $out"
out=$(cd "$out" && pwd)
args=("$@")
if [ "$command" = stress ] && ! printf '%s\n' "${args[@]}" | grep -qE '^--out-dir(=|$)'; then
    args+=(--out-dir "$out/stress")
fi

# One campaign per folder: a lock held from here to the end (and by the
# shards started here, which inherit it), so two drivers on one DIR never
# mix; the second is refused.
exec 9> "$out/campaign.lock" || die "cannot create $out/campaign.lock"
flock -n 9 || die "$out is in use: another campaign.sh (or a shard of one that was killed)
holds $out/campaign.lock; wait for it to end, or use another --out"

# The campaign's identity: a rerun must be the same campaign.
ident=$(printf '%q ' "$fakegc" "$command" "${args[@]}" "--shards" "$shards")
[ -z "${FAKEGC_CAMPAIGN_TEST_DELAY:-}" ] || sleep "$FAKEGC_CAMPAIGN_TEST_DELAY"   # tests: a window
if [ -s "$out/campaign.txt" ] && [ "$(cat "$out/campaign.txt")" != "$ident" ]; then
    die "$out holds another campaign: $(cat "$out/campaign.txt")"
fi
printf '%s\n' "$ident" > "$out/.campaign.txt.new" && mv -f "$out/.campaign.txt.new" "$out/campaign.txt" ||
    die "cannot write $out/campaign.txt"

# What a kept shard report must match: the command and, for run and oom,
# the scenario files (path, size, modification time) it names.
fingerprint=
if [ "$command" != stress ]; then
    for a in "${args[@]}"; do
        if [ -d "$a" ]; then
            find -L "$a" -type f -name '*.scn' -printf '%p %s %T@\n' 2>/dev/null | LC_ALL=C sort
        elif [ -f "$a" ] && [[ "$a" == *.scn ]]; then
            stat -L -c '%n %s %.9Y' -- "$a"
        fi
    done > "$out/.files.new"
    fingerprint=$(sha256sum < "$out/.files.new" | cut -c1-64)
    rm -f "$out/.files.new"
fi
campaign_id=$(printf '%s\n%s\n' "$ident" "$fingerprint" | sha256sum | cut -c1-64)
case "$command" in run) schema=fakegc-report ;; *) schema=fakegc-$command ;; esac

# One shard, whatever the engine: the report appears whole, or not at all,
# with its stamp (the campaign, K, N and the report's checksum) beside it.
# A TERM or INT (scancel, the driver's trap) goes on to fakegc, and the
# partial files go with the shard.
{
    echo '#!/usr/bin/env bash'
    echo "# shard K of the campaign in $out (written by campaign.sh)"
    echo 'k=${1:-${SLURM_ARRAY_TASK_ID:?shard index}}'
    printf 'out=%q/shard-$k.json\n' "$out"
    echo 'part=$out.part.$$'
    echo 'clean() { rm -f "$part" "${out%/*}/.${part##*/}".fakegc-*; }'
    printf 'cd %q || exit 3\n' "$PWD"
    echo 'trap '"'"'[ -z "${child:-}" ] || kill -TERM "$child" 2>/dev/null'"'"' TERM INT'
    printf '%q %q' "$fakegc" "$command"
    printf ' %q' "${args[@]}"
    printf ' --shard "$k/%s" --format json --output "$part" &\n' "$shards"
    echo 'child=$!'
    echo 'wait "$child"; rc=$?'
    echo 'while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done'
    echo 'echo "$rc $(hostname)" > "${out%.json}.status"'
    echo 'if [ "$rc" -le 1 ] && [ -s "$part" ]; then'
    printf '    echo "%s $k %s $(sha256sum < "$part" | cut -c1-64)" > "${out%%.json}.ok.$$" &&\n' \
        "$campaign_id" "$shards"
    echo '        mv -f "${out%.json}.ok.$$" "${out%.json}.ok" && mv -f "$part" "$out" && exit 0'
    echo 'fi'
    echo 'clean; rm -f "${out%.json}.ok.$$"; [ "$rc" -ne 0 ] || rc=3; exit "$rc"'
} > "$out/.shard.sh.new" && chmod +x "$out/.shard.sh.new" && mv -f "$out/.shard.sh.new" "$out/shard.sh" ||
    die "cannot write $out/shard.sh"

# A killed driver's Slurm job still running is this folder's (the lock says
# no driver owns it): cancel it before anything is cleaned or rerun.
if [ -s "$out/slurm-job" ] && command -v squeue >/dev/null; then
    old=$(cat "$out/slurm-job")
    if [ -n "$(squeue -h -j "$old" 2>/dev/null)" ]; then
        echo "campaign.sh: cancelling job $old of a driver that was stopped" >&2
        scancel "$old" 2>/dev/null
        for _ in $(seq 600); do [ -z "$(squeue -h -j "$old" 2>/dev/null)" ] && break; sleep 0.1; done
    fi
fi
# What a killed shard left: nothing can be writing it now.
rm -f "$out"/shard-*.json.part.* "$out"/.shard-*.json.part.* "$out"/shard-*.ok.*

# K's report is there, whole, and this campaign's: its stamp names this
# campaign, K and N and the report's checksum; the report says its kind and
# [K, N]. Quiet unless why is given.
complete() {  # K [why]
    local r=$out/shard-$1.json stamp want head
    [ -s "$r" ] || return 1
    want="$campaign_id $1 $shards"
    stamp=$(cat "$out/shard-$1.ok" 2>/dev/null)
    if [ "${stamp% *}" != "$want" ]; then
        [ -z "${2:-}" ] || echo "campaign.sh: $r is not this campaign's shard $1 (no stamp, or another command, shard count or scenario files): rerun" >&2
        return 1
    fi
    if [ "${stamp##* }" != "$(sha256sum < "$r" | cut -c1-64)" ] ||
       ! head=$(head -c 65536 "$r") || [[ "$head" != *"\"schema\": \"$schema/"* ]] ||
       [[ "$head" != *"\"shard\": [$1, $shards]"* ]]; then
        [ -z "${2:-}" ] || echo "campaign.sh: $r changed since its shard wrote it (checksum, kind or shard index): rerun" >&2
        return 1
    fi
}
todo=()
for ((k = 0; k < shards; k++)); do complete "$k" why || { todo+=("$k"); rm -f "$out/shard-$k.json" "$out/shard-$k.ok"; }; done
skipped=$(( shards - ${#todo[@]} ))
t0=$(date +%s.%N)
echo "campaign.sh: $engine: ${#todo[@]} of $shards shards to run ($skipped complete, skipped)" >&2

# TERM / INT: the shards go down with the driver, their partial files too.
pids=() group= jobid= sb=
stop() {  # NAME NUMBER
    trap '' TERM INT
    echo "campaign.sh: $1: stopping the shards" >&2
    local p alive
    case "$engine" in   # each shard.sh passes the TERM on to its fakegc
    slurm) [ -z "$jobid" ] || scancel "$jobid" 2>/dev/null ;;
    parallel) [ -z "$group" ] || { kill -TERM "$group"; sleep 0.2; kill -TERM "$group"; } 2>/dev/null ;;
    local) [ ${#pids[@]} = 0 ] || kill -TERM "${pids[@]}" 2>/dev/null ;;
    esac
    for _ in $(seq 300); do   # up to 30 s, then at once
        alive=0
        if [ "$engine" = slurm ]; then
            [ -z "$jobid" ] || [ -z "$(squeue -h -j "$jobid" 2>/dev/null)" ] || alive=1
        else
            for p in "${pids[@]}" $group; do kill -0 "$p" 2>/dev/null && alive=1; done
        fi
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for p in "${pids[@]}" $group; do pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
    [ -z "$sb" ] || kill "$sb" 2>/dev/null   # sbatch --wait
    rm -f "$out"/shard-*.json.part.* "$out"/.shard-*.json.part.* "$out"/shard-*.ok.*
    exit $((128 + $2))
}
trap 'stop SIGTERM 15' TERM
trap 'stop SIGINT 2' INT

run_slurm() {
    command -v sbatch >/dev/null || die "sbatch not found (slurm-wlm; scripts/slurm-local.sh up)" 3
    local list opts=()
    list=$(IFS=,; echo "${todo[*]}")
    [ -z "$partition" ] || opts+=(--partition "$partition")
    [ -z "$time_limit" ] || opts+=(--time "$time_limit")
    rm -f "$out/slurm-job"
    # in the background, so that the trap runs while it waits; the job id is
    # its first line, printed at submission
    sbatch --parsable --wait --array="$list" --job-name "fakegc-$command" \
        --output "$out/logs/%A_%a.out" --chdir "$PWD" "${opts[@]}" "${sbatch_extra[@]}" \
        "$out/shard.sh" > "$out/logs/sbatch.out" &
    sb=$!
    while [ -z "$jobid" ]; do
        jobid=$(head -n 1 "$out/logs/sbatch.out" 2>/dev/null)
        jobid=${jobid%%;*}
        [ -n "$jobid" ] || kill -0 "$sb" 2>/dev/null || break
        [ -n "$jobid" ] || sleep 0.1
    done
    [ -z "$jobid" ] || echo "$jobid" > "$out/slurm-job"
    wait "$sb"
    for k in "${todo[@]}"; do
        if ! complete "$k"; then
            echo "campaign.sh: array task ${jobid}_$k failed ($(cat "$out/shard-$k.status" 2>/dev/null || echo 'no status'));" \
                 "log: $out/logs/${jobid}_$k.out" >&2
        fi
    done
}

run_parallel() {
    command -v parallel >/dev/null || die "GNU parallel not found" 3
    local opts=(--will-cite --joblog "$out/logs/parallel.log")
    [ -z "$jobs" ] || opts+=(--jobs "$jobs")
    [ -z "$sshlogin" ] || opts+=(--sshloginfile "$sshlogin")
    parallel "${opts[@]}" "$out/shard.sh {} > $out/logs/shard-{}.log 2>&1" ::: "${todo[@]}" &
    group=$!
    wait "$group"
    for k in "${todo[@]}"; do
        complete "$k" || echo "campaign.sh: shard $k failed ($(cat "$out/shard-$k.status" 2>/dev/null || echo 'no status')); log: $out/logs/shard-$k.log" >&2
    done
}

run_local() {
    local max=${jobs:-${#todo[@]}} running=0
    for k in "${todo[@]}"; do
        "$out/shard.sh" "$k" > "$out/logs/shard-$k.log" 2>&1 &
        pids+=($!)
        running=$((running + 1))
        if [ "$running" -ge "$max" ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    for k in "${todo[@]}"; do
        complete "$k" || echo "campaign.sh: shard $k failed ($(cat "$out/shard-$k.status" 2>/dev/null || echo 'no status')); log: $out/logs/shard-$k.log" >&2
    done
}

if [ ${#todo[@]} -gt 0 ]; then "run_$engine"; fi
t1=$(date +%s.%N)
missing=()
for ((k = 0; k < shards; k++)); do complete "$k" || missing+=("$k"); done
reports=()
for ((k = 0; k < shards; k++)); do complete "$k" && reports+=("$out/shard-$k.json"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "campaign.sh: shards ${missing[*]} did not complete; rerun to resume" >&2
    exit 3
fi
"$fakegc" merge --format json --output "$out/merged.json" "${reports[@]}"
rc=$?
if [ "$rc" -ge 2 ]; then exit "$rc"; fi
t2=$(date +%s.%N)
"$fakegc" merge "${reports[@]}"
printf 'campaign.sh: %s: %d shards run, %d skipped; shards %.2f s, merge %.3f s\n' \
    "$engine" "${#todo[@]}" "$skipped" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" >&2
exit "$rc"
