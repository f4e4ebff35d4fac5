#!/usr/bin/env bash
# Starts a small real Slurm cluster on this machine for Shoal's Slurm backend and its tests:
# slurmctld in this network namespace and N slurmd, each in its own network and UTS
# namespace (its own address and hostname), joined by a bridge with no uplink, with fake
# GPUs as GRES. Idempotent: a running cluster is stopped first (scripts/slurm-down.sh).
#
#   scripts/slurm-up.sh            # 2 nodes, 4 CPUs, 4000 MB and 2 fake GPUs each
#   SHOAL_SLURM_NODES=3 SHOAL_SLURM_CPUS=8 SHOAL_SLURM_GPUS=4 scripts/slurm-up.sh
#
# Needs root (namespaces, daemons). Packages come from scripts/install-deps.sh.
# Addresses: the bridge (this namespace, where slurmctld and a Shoal server listen) is
# 10.253.0.1; node i is node<i> at 10.253.0.<10+i>.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/slurm-common.sh"

NODES=${SHOAL_SLURM_NODES:-2}
CPUS=${SHOAL_SLURM_CPUS:-4}
GPUS=${SHOAL_SLURM_GPUS:-2}
MEMORY_MB=${SHOAL_SLURM_MEMORY_MB:-4000}

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces and daemons)"
for tool in slurmctld slurmd slurmdbd mariadbd munged sbatch nsenter unshare ip; do
  command -v "$tool" >/dev/null || die "$tool is missing; run scripts/install-deps.sh"
done

"$here/slurm-down.sh" >/dev/null 2>&1 || true
t0=$SECONDS

start_munge() {
  mkdir -p /run/munge /var/lib/munge /var/log/munge /etc/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge
  if [ ! -s /etc/munge/munge.key ]; then dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    wait_for 10 munged sh -c 'munge -n | unmunge'
  fi
}

# GRES files must be device nodes; slurmd only checks that they are.
fake_gpu_files() {
  mkdir -p "$SLURM_LIB/fakegpu"
  for g in $(seq 0 $((GPUS - 1))); do
    [ -c "$SLURM_LIB/fakegpu/nvidia$g" ] || mknod "$SLURM_LIB/fakegpu/nvidia$g" c 1 3
  done
  echo "$SLURM_LIB/fakegpu/nvidia[0-$((GPUS - 1))]"
}

write_configs() {
  mkdir -p /etc/slurm "$SLURM_LOG" "$SLURM_LIB/state" "$SLURM_RUN"
  {
    cat <<EOF
# written by Shoal's scripts/slurm-up.sh
ClusterName=shoal
SlurmctldHost=localhost($BRIDGE_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$SLURM_LIB/state
SlurmdSpoolDir=$SLURM_LIB/slurmd-%n
SlurmctldPidFile=$SLURM_RUN/slurmctld.pid
SlurmdPidFile=$SLURM_RUN/slurmd-%n.pid
SlurmctldLogFile=$SLURM_LOG/slurmctld.log
SlurmdLogFile=$SLURM_LOG/slurmd-%n.log
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=8
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
EOF
    for i in $(seq 1 "$NODES"); do
      echo "NodeName=node$i NodeAddr=$(node_addr "$i") CPUs=$CPUS RealMemory=$MEMORY_MB Gres=gpu:$GPUS"
    done
    echo "PartitionName=shoal Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 GraceTime=10"
    # A hidden partition of higher tier whose jobs preempt the shoal partition's (tests).
    echo "PartitionName=urgent Nodes=ALL Hidden=YES MaxTime=INFINITE State=UP PriorityTier=2"
  } > /etc/slurm/slurm.conf
  printf 'AutoDetect=off\nNodeName=node[1-%s] Name=gpu File=%s\n' "$NODES" "$(fake_gpu_files)" > /etc/slurm/gres.conf
  chmod 0644 /etc/slurm/slurm.conf /etc/slurm/gres.conf
}

# MariaDB (Debian's, its data in /var/lib/mysql) and slurmdbd on 127.0.0.1:6819, with the
# cluster registered, so that slurmctld keeps every job's record and sacct answers.
start_accounting() {
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  if ! mariadb-admin ping >/dev/null 2>&1; then
    [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >/dev/null
    setsid /usr/sbin/mariadbd --user=mysql --bind-address=127.0.0.1 --pid-file=/run/mysqld/mysqld.pid \
      >> "$SLURM_LOG/mariadb.log" 2>&1 < /dev/null &
    wait_for 60 mariadbd mariadb-admin ping
  fi
  mariadb -e "CREATE DATABASE IF NOT EXISTS shoal_slurm_acct;
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'shoal-test-cluster';
    GRANT ALL ON shoal_slurm_acct.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > /etc/slurm/slurmdbd.conf <<EOF
# written by Shoal's scripts/slurm-up.sh
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=shoal-test-cluster
StorageLoc=shoal_slurm_acct
LogFile=$SLURM_LOG/slurmdbd.log
PidFile=$SLURM_RUN/slurmdbd.pid
EOF
  chmod 0600 /etc/slurm/slurmdbd.conf
  slurmdbd
  wait_for 60 slurmdbd bash -c 'exec 3<>/dev/tcp/127.0.0.1/6819'
  sacctmgr -i add cluster shoal >/dev/null 2>&1 || true  # "already exists" is fine
}

network_up() {
  ip link add "$BRIDGE" type bridge 2>/dev/null || true
  ip addr replace "$BRIDGE_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for i in $(seq 1 "$NODES"); do
    local ns; ns=$(node_ns "$i")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add "shoal-v$i" type veth peer name eth0 netns "$ns"
    ip link set "shoal-v$i" master "$BRIDGE" up
    ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

start_munge
write_configs
network_up
start_accounting
slurmctld -c
wait_for 30 slurmctld scontrol ping
for i in $(seq 1 "$NODES"); do start_slurmd "$i"; done
nodes_idle() { [ "$(sinfo -h -o '%T' | sort -u | tr -d '\n')" = idle ]; }
wait_for 60 "the nodes to be idle" nodes_idle
log "Slurm is up in $((SECONDS - t0)) s: $NODES nodes, $CPUS CPUs, ${MEMORY_MB} MB and $GPUS fake GPUs each, accounting in slurmdbd"
sinfo -N -o '%N %T %c %m %G' >&2
cat >&2 <<EOF
Use it:  shoal server --cluster slurm --host $BRIDGE_ADDR     # nodes reach the server on the bridge
         shoal run job.yaml --cluster slurm
Run on a node:  nsenter --net=/run/netns/$(node_ns 1) <command>
Stop it:  scripts/slurm-down.sh
EOF
