#!/usr/bin/env bash
# Installs and starts a single-node Slurm on this machine: munged, slurmctld and slurmd on
# localhost, one partition `debug` holding this machine with all its CPUs. Used by CI before the
# tests (tests/cluster.rs submits a sharded study through it) and by developers who want to try
# `fieldmc slurm --submit` without a cluster.
#
# Needs root and Debian's packages (slurm-wlm, munge). Idempotent: a Slurm that already answers
# is left as it is. Without systemd the daemons are started directly. Exits non-zero, saying
# why, when Slurm cannot be started; prints the daemons' logs then.
#
#   sudo scripts/slurm-single-node.sh          # then: sinfo, squeue, fieldmc slurm ... --submit
set -euo pipefail

log() { echo "slurm-single-node: $*"; }

if [ "$(id -u)" != 0 ]; then
    log "must run as root (it installs packages and starts daemons)" >&2
    exit 1
fi

if command -v scontrol >/dev/null 2>&1 && scontrol ping 2>/dev/null | grep -q UP \
    && sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then
    log "Slurm is already up: $(sinfo -h -o '%P %D %t %c' | head -1)"
    exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc --all)
memory_mb=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
conf_dir=/etc/slurm
mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm

# munge: a key, owned by its user, and the daemon.
if [ ! -s /etc/munge/munge.key ]; then
    log "creating the munge key"
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --force
    else
        dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    fi
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key
chmod 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
munge -n | unmunge >/dev/null

# A minimal configuration: no accounting database, no cgroups (they are often unavailable in
# containers), cores as the consumable so that several array tasks share the node.
cat >"$conf_dir/slurm.conf" <<EOF
# Written by fieldmc's scripts/slurm-single-node.sh
ClusterName=fieldmc
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
# No cgroup.conf: slurmd 22.05 then only autodetects cgroups, and the plugins above never use
# them (22.05 has no "disabled" cgroup plugin).
rm -f "$conf_dir/cgroup.conf"

stop() {
    local pidfile=$1
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        kill "$(cat "$pidfile")" || true
        for _ in $(seq 50); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.1; done
    fi
}
stop /run/slurm/slurmd.pid
stop /run/slurm/slurmctld.pid

log "starting slurmctld and slurmd ($cpus CPUs, ${memory_mb} MB on $host)"
show_logs() {
    tail -n 30 /var/log/slurm/slurmctld.log >&2 || true
    tail -n 30 /var/log/slurm/slurmd.log >&2 || true
}
slurmctld -c -i || { log "slurmctld failed to start" >&2; show_logs; exit 1; }
slurmd -c || { log "slurmd failed to start" >&2; show_logs; exit 1; }

for _ in $(seq 120); do
    state=$(sinfo -h -n "$host" -o '%t' 2>/dev/null | head -1 || true)
    case "$state" in
        idle | mix | alloc) break ;;
        down* | drain* | fail*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
done
state=$(sinfo -h -n "$host" -o '%t' 2>/dev/null | head -1 || true)
case "$state" in
    idle | mix | alloc)
        log "Slurm is up: $(sinfo -h -o '%P %D %t %c')"
        ;;
    *)
        log "Slurm did not come up (node state: '${state:-none}')" >&2
        show_logs
        exit 1
        ;;
esac
