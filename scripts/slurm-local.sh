#!/usr/bin/env bash
# slurm-local.sh up|down|status - a real single-node Slurm cluster on this
# machine, as root, without systemd (for CI and for trying campaigns).
#
#   up      start munged (as the munge user), write slurm.conf for this host
#           (one node: NodeName=<hostname> NodeAddr=127.0.0.1 CPUs=<nproc>
#           RealMemory=<MB>), start slurmctld and slurmd, wait until sinfo
#           shows the node idle. Idempotent: a cluster that already answers
#           is left as it is; a daemon already running is not started twice.
#   down    stop the daemons that `up` started, by the pids it recorded
#           (never by name), newest first.
#   status  sinfo, and which daemons this script started.
#
# Needs Debian's slurm-wlm and munge (scripts/deps.sh). State, spool and the
# pid list live under /var/spool (FAKEGC_SLURM_DIR, default
# /var/spool/fakegc-slurm); slurm.conf goes to /etc/slurm/slurm.conf unless
# one is there that this script did not write (then it stops with exit 2).
# Exit status: 0 done; 1 the cluster did not come up (logs are printed);
# 2 usage or a foreign slurm.conf.
set -euo pipefail

usage() {
    sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
}

state=${FAKEGC_SLURM_DIR:-/var/spool/fakegc-slurm}
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
pids="$state/started.pids"
marker="# written by fakegc scripts/slurm-local.sh"
timeout=${FAKEGC_SLURM_TIMEOUT:-120}

die() { echo "slurm-local.sh: $*" >&2; exit "${2:-1}"; }

alive() {   # pid name: that pid runs that program
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

record() {  # name pidfile: remember a daemon we started
    local pid
    for _ in $(seq 50); do
        if [ -s "$2" ]; then
            pid=$(cat "$2")
            if alive "$pid" "$1"; then
                echo "$1 $pid" >> "$pids"
                return 0
            fi
        fi
        sleep 0.1
    done
    return 1
}

running() { # name pidfile: a daemon of that name runs (ours or not)
    [ -s "$2" ] && alive "$(cat "$2")" "$1"
}

node_idle() {
    sinfo -h -N -n "$host" -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'
}

write_conf() {
    if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
        die "$conf exists and was not written by this script; not touching it" 2
    fi
    local mem cpus tmp
    cpus=$(nproc)
    mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
    mkdir -p "$(dirname "$conf")"
    tmp=$(mktemp "$conf.XXXXXX")
    cat > "$tmp" <<EOF
$marker
ClusterName=fakegc
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
MaxArraySize=100001
MaxJobCount=200000
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    if [ -e "$conf" ] && cmp -s "$tmp" "$conf"; then
        rm -f "$tmp"
        return 1        # unchanged
    fi
    chmod 644 "$tmp"
    mv "$tmp" "$conf"
    return 0
}

up() {
    [ "$(id -u)" -eq 0 ] || die "must run as root" 2
    for p in munged slurmctld slurmd sinfo; do
        command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] ||
            die "$p not found: install slurm-wlm and munge (scripts/deps.sh)" 2
    done
    local t0 changed=0
    t0=$(date +%s.%N)
    mkdir -p "$state/ctld" "$state/d"
    touch "$pids"
    if write_conf; then changed=1; fi

    # munge: the package made the key; the daemon runs as the munge user
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    if ! running munged /run/munge/munged.pid; then
        runuser -u munge -- /usr/sbin/munged
        record munged /run/munge/munged.pid || die "munged did not start"
    fi
    munge -n | unmunge >/dev/null || die "munge does not answer"

    if [ "$changed" = 1 ]; then
        # a new configuration: daemons of ours still running must re-read it
        for d in slurmd slurmctld; do
            if running "$d" "$state/$d.pid"; then scontrol reconfigure || true; break; fi
        done
    fi
    if ! running slurmctld "$state/slurmctld.pid"; then
        /usr/sbin/slurmctld
        record slurmctld "$state/slurmctld.pid" || {
            cat "$state/slurmctld.log" >&2 || true; die "slurmctld did not start"; }
    fi
    if ! running slurmd "$state/slurmd.pid"; then
        /usr/sbin/slurmd
        record slurmd "$state/slurmd.pid" || {
            cat "$state/slurmd.log" >&2 || true; die "slurmd did not start"; }
    fi
    local deadline=$(( $(date +%s) + timeout ))
    until node_idle; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            sinfo -N -l >&2 || true
            tail -n 30 "$state/slurmctld.log" "$state/slurmd.log" >&2 || true
            die "node $host not idle after ${timeout}s"
        fi
        # a node left DOWN by an earlier crash comes back once slurmd answers
        scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
        sleep 1
    done
    printf 'slurm-local.sh: up in %.1f s: ' "$(echo "$(date +%s.%N) - $t0" | bc)"
    sinfo -h -N -o '%N %t %c CPUs %m MB'
}

down() {
    [ -s "$pids" ] || { echo "slurm-local.sh: nothing started by this script"; return 0; }
    # newest first: slurmd, slurmctld, munged
    tac "$pids" | while read -r name pid; do
        if alive "$pid" "$name"; then
            kill "$pid"
            for _ in $(seq 100); do alive "$pid" "$name" || break; sleep 0.1; done
            if alive "$pid" "$name"; then kill -9 "$pid" || true; fi
            echo "slurm-local.sh: stopped $name ($pid)"
        fi
    done
    : > "$pids"
}

host=$(hostname -s)
case "${1:-}" in
    up) up ;;
    down) down ;;
    status) sinfo -N -l || true; echo "started by this script:"; cat "$pids" 2>/dev/null || true ;;
    -h|--help) usage ;;
    *) usage >&2; exit 2 ;;
esac
