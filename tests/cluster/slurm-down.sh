#!/usr/bin/env bash
# Stop the single-node Slurm cluster started by slurm-up.sh with state in $1.
dir=$(realpath -m "${1:?state directory}")
for f in slurmd slurmctld munge/munged; do
  [ -f "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null
done
munge_dir=$(readlink "$dir/munge" 2>/dev/null) && [ -n "$munge_dir" ] && rm -rf "$munge_dir"
exit 0
