#!/bin/bash
# A single-node Slurm cluster on loopback for kiln's Slurm tests (ctest label `slurm`).
#
#   scripts/slurm_test_cluster.sh start DIR   write DIR/slurm.conf, start munged, slurmctld and
#                                             slurmd (as root), wait until the node is idle
#   scripts/slurm_test_cluster.sh stop DIR    stop them (by the pids in DIR) and keep the logs
#
# Everything (config, munge key and socket, state, spool, logs, pids) lives in DIR, so it never
# touches /etc/slurm or a system munged. Clients reach it with SLURM_CONF=DIR/slurm.conf. One
# partition `kiln` with one node (this machine's cores, no GPUs: submit with `--gres none`).
# KILN_SLURM_GPUS=N gives the node N GPUs as the gres `gpu` (GresTypes=gpu, DIR/gres.conf with
# File=/dev/nvidia0..N-1; each must exist): jobs then ask for them with `--gres gpu:1`, and
# Slurm sets CUDA_VISIBLE_DEVICES to the one it allocated (bench/slurm_gpu.sh).
# KILN_SLURM_GPU_DEVICE=PREFIX names the device files PREFIX0.. instead (tests without a GPU).
# Needs Debian 12's slurmctld, slurmd, slurm-client and munge (or the same binaries installed
# from scripts/bundle_slurm_for_gpu.sh's bundle), and root.
set -euo pipefail

action=${1:-}
dir=${2:-}
if [[ -z "$action" || -z "$dir" ]]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

stop_pid_file() {
  local file=$1
  [[ -f "$file" ]] || return 0
  local pid
  pid=$(cat "$file" 2>/dev/null || true)
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

if [[ "$action" == stop ]]; then
  stop_pid_file "$dir/slurmd.pid"
  stop_pid_file "$dir/slurmctld.pid"
  stop_pid_file "$dir/munged.pid"
  exit 0
fi
[[ "$action" == start ]] || { echo "unknown action $action (start|stop)" >&2; exit 2; }

for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] || {
    echo "$tool is missing: apt-get install -y slurmctld slurmd slurm-client munge" >&2
    exit 3
  }
done
[[ $(id -u) == 0 ]] || { echo "the test cluster runs its daemons as root; run as root" >&2; exit 3; }
export PATH=/usr/sbin:$PATH

mkdir -p "$dir"/{munge,ctld,spool}
dir=$(cd "$dir" && pwd)
chmod 700 "$dir/munge"

# Free loopback ports for slurmctld and slurmd (the kernel's pick, released at once).
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r ctld_port d_port <<<"$ports"

dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
# A daemon that refuses to start writes why only to its log file: show it, and say which failed.
started_or_say_why() {
  local name=$1 log=$2
  shift 2
  "$@" && return 0
  local code=$?
  echo "$name did not start (exit $code): $*" >&2
  tail -n 20 "$log" >&2 2>/dev/null || echo "($log was not written)" >&2
  "$0" stop "$dir" || true
  exit 4
}
started_or_say_why munged "$dir/munged.log" munged --force --socket="$dir/munge/munge.sock" \
  --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge/seed"

cpus=$(nproc)
host=$(hostname -s 2>/dev/null || uname -n | cut -d. -f1)
gpus=${KILN_SLURM_GPUS:-0}
gres_types="" node_gres=""
if [[ "$gpus" != 0 ]]; then
  : >"$dir/gres.conf"
  for ((i = 0; i < gpus; i++)); do
    device=${KILN_SLURM_GPU_DEVICE:-/dev/nvidia}$i
    [[ -e $device ]] || { echo "KILN_SLURM_GPUS=$gpus but $device is missing" >&2; exit 3; }
    echo "Name=gpu File=$device" >>"$dir/gres.conf"
  done
  gres_types=GresTypes=gpu
  node_gres="Gres=gpu:$gpus"
fi
cat >"$dir/slurm.conf" <<CONF
ClusterName=kilntest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=2
MinJobAge=300
SlurmctldTimeout=10
SlurmdTimeout=10
MessageTimeout=5
$gres_types
NodeName=kilnnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus $node_gres State=UNKNOWN
PartitionName=kiln Nodes=kilnnode Default=YES MaxTime=INFINITE State=UP
CONF
# slurmd loads its cgroup plugin even with proctrack/linuxproc and task/none. Under a unified
# (v2) hierarchy without systemd's dbus (a container: the H200 machine) the plugin's default
# asks systemd for a scope and fails ("Unable to initialize cgroup plugin"): build the hierarchy
# by hand instead and enable the controllers it needs (Slurm 22.05 has no CgroupPlugin=disabled).
# With IgnoreSystemd, slurmd makes its scopes under /sys/fs/cgroup/system.slice, which only
# systemd creates: make it, with the controllers enabled on the way down. A cgroup that holds
# processes cannot hand controllers to its children (cgroup v2's no-internal-process rule; the
# container's root is not exempt), so this namespace's processes first move to a leaf,
# kiln-init, as container init scripts do. Only on a machine without systemd (no system.slice).
prepare_cgroup_v2() {
  local root=/sys/fs/cgroup
  [[ -d $root/system.slice ]] && return 0
  mkdir -p "$root/kiln-init" "$root/system.slice" || return 1
  local pid
  while read -r pid; do echo "$pid" >"$root/kiln-init/cgroup.procs" 2>/dev/null || true; done \
    <"$root/cgroup.procs"
  local want="" c
  for c in cpuset cpu memory; do
    grep -qw "$c" "$root/cgroup.controllers" && want+=" +$c"
  done
  [[ -z $want ]] && return 0
  echo "$want" >"$root/cgroup.subtree_control" &&
    echo "$want" >"$root/system.slice/cgroup.subtree_control"
}
if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
  printf '%s\n' CgroupPlugin=cgroup/v2 IgnoreSystemd=yes CgroupAutomount=yes >"$dir/cgroup.conf"
  prepare_cgroup_v2 ||
    echo "slurm test cluster: could not prepare /sys/fs/cgroup/system.slice for slurmd's cgroup v2 plugin (read-only or busy cgroup tree); slurmd may refuse to start" >&2
fi
export SLURM_CONF=$dir/slurm.conf

started_or_say_why slurmctld "$dir/slurmctld.log" slurmctld -i -f "$SLURM_CONF"
started_or_say_why slurmd "$dir/slurmd.log" slurmd -N kilnnode -f "$SLURM_CONF"

for _ in $(seq 150); do
  state=$(sinfo -h -n kilnnode -o %T 2>/dev/null || true)
  if [[ "$state" == idle ]]; then
    echo "slurm test cluster up: SLURM_CONF=$SLURM_CONF (partition kiln, $cpus CPUs, $gpus GPUs)"
    exit 0
  fi
  sleep 0.2
done
echo "the node did not become idle within 30 s (state: ${state:-none}); logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
"$0" stop "$dir"
exit 4
