#!/usr/bin/env bash
# Start a single-node Slurm cluster (munge + slurmctld + slurmd) on this machine, state in $1.
# Prints the path of slurm.conf; use it as SLURM_CONF. Needs root and Debian's slurm-wlm, munge.
set -euo pipefail
dir=$(realpath -m "${1:?state directory}")
ctld_port=${PODSCALE_SLURM_PORT:-16817}
# munged runs as the munge user: its socket and log live where that user can reach them
munge_dir=/run/podscale-munge-$(printf %s "$dir" | md5sum | cut -c1-12)
mkdir -p "$dir"/{state,spool,log} "$munge_dir"
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
chown munge:munge "$munge_dir"
ln -sfn "$munge_dir" "$dir/munge"
if [ ! -S "$munge_dir/munge.socket.2" ]; then
  [ -s /etc/munge/munge.key ] || { mungekey --create --force 2>/dev/null || \
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; }
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- munged --socket="$munge_dir/munge.socket.2" \
    --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" --force
fi
cat > "$dir/slurm.conf" <<CONF
ClusterName=podscale
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_dir/munge.socket.2
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
export SLURM_CONF="$dir/slurm.conf"
pgrep -f "slurmctld.*$dir" >/dev/null || slurmctld -f "$SLURM_CONF"
pgrep -f "slurmd.*$dir" >/dev/null || slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "$SLURM_CONF"; exit 0
  fi
  scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
  sleep 0.5
done
echo "slurm did not come up; logs in $dir/log" >&2
exit 1
