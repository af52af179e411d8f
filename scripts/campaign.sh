#!/usr/bin/env bash
# campaign.sh - run one fakegc campaign as N shards on a batch engine, then
# merge the shard reports (cli.md "Campaigns beyond one machine").
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

# The campaign's identity: a rerun must be the same campaign.
ident=$(printf '%q ' "$fakegc" "$command" "${args[@]}" "--shards" "$shards")
if [ -s "$out/campaign.txt" ] && [ "$(cat "$out/campaign.txt")" != "$ident" ]; then
    die "$out holds another campaign: $(cat "$out/campaign.txt")"
fi
printf '%s\n' "$ident" > "$out/campaign.txt"

# One shard, whatever the engine: the report appears whole, or not at all.
{
    echo '#!/usr/bin/env bash'
    echo "# shard K of the campaign in $out (written by campaign.sh)"
    echo 'k=${1:-${SLURM_ARRAY_TASK_ID:?shard index}}'
    printf 'out=%q/shard-$k.json\n' "$out"
    printf 'cd %q || exit 3\n' "$PWD"
    printf '%q %q' "$fakegc" "$command"
    printf ' %q' "${args[@]}"
    printf ' --shard "$k/%s" --format json --output "$out.part.$$"\n' "$shards"
    echo 'rc=$?'
    echo 'echo "$rc $(hostname)" > "${out%.json}.status"'
    echo 'if [ "$rc" -le 1 ] && [ -s "$out.part.$$" ]; then mv "$out.part.$$" "$out"; exit 0; fi'
    echo 'rm -f "$out.part.$$"; [ "$rc" -ne 0 ] || rc=3; exit "$rc"'
} > "$out/shard.sh"
chmod +x "$out/shard.sh"

complete() {  # K: its report is there and whole
    [ -s "$out/shard-$1.json" ] && [ "$(tail -c 3 "$out/shard-$1.json" | tr -d ' \n')" = "}" ]
}
todo=()
for ((k = 0; k < shards; k++)); do complete "$k" || todo+=("$k"); done
skipped=$(( shards - ${#todo[@]} ))
t0=$(date +%s.%N)
echo "campaign.sh: $engine: ${#todo[@]} of $shards shards to run ($skipped complete, skipped)" >&2

run_slurm() {
    command -v sbatch >/dev/null || die "sbatch not found (slurm-wlm; scripts/slurm-local.sh up)" 3
    local list opts=() jobid
    list=$(IFS=,; echo "${todo[*]}")
    [ -z "$partition" ] || opts+=(--partition "$partition")
    [ -z "$time_limit" ] || opts+=(--time "$time_limit")
    jobid=$(sbatch --parsable --wait --array="$list" --job-name "fakegc-$command" \
        --output "$out/logs/%A_%a.out" --chdir "$PWD" "${opts[@]}" "${sbatch_extra[@]}" \
        "$out/shard.sh" | head -n 1)
    jobid=${jobid%%;*}
    echo "$jobid" > "$out/slurm-job"
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
    parallel "${opts[@]}" "$out/shard.sh {} > $out/logs/shard-{}.log 2>&1" ::: "${todo[@]}"
    for k in "${todo[@]}"; do
        complete "$k" || echo "campaign.sh: shard $k failed ($(cat "$out/shard-$k.status" 2>/dev/null || echo 'no status')); log: $out/logs/shard-$k.log" >&2
    done
}

run_local() {
    local max=${jobs:-${#todo[@]}} running=0
    for k in "${todo[@]}"; do
        "$out/shard.sh" "$k" > "$out/logs/shard-$k.log" 2>&1 &
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
