#!/usr/bin/env bash
# The accelerator issue's checks on a machine with one accelerator and JAX installed, from a
# checkout (not installed), as a TPU user types the commands. Part A: run, study (with its
# report), the hand-written device-time loops beside it (tools/accel_check.py), a worker with
# no cluster. Part B: ab (A/A and a planted 2% slowdown), seed, replay, profile of a flax loop,
# asv. Part C: capture windows from step 0 and 1, attach outside any cluster, asv. Part D:
# matmul's precision on the chip, the dispatch-bound mark, asv with JAX on PYTHONPATH only
# (passed as asv's ASV_PYTHONPATH). Part E: ab A/A and of a planted 2% device slowdown
# (heavier). Part F: the same judged at a 1% threshold, bench-self's methods stage on
# the chip. Part G: the rest of the issue's list at one commit (ab A/A and of a planted 2%
# device slowdown at a 1% threshold, seed, replay, profile of a flax loop, asv). Part asv:
# asv's quick run of the benchmarks the third argument selects.
# Outputs under OUT (default /tmp/tpu-verify): each
# command's output in a .txt.
#   bash tools/tpu_verify.sh A|B|C|D|E|F|G [OUT] | asv OUT BENCH
set -u
part=${1:-A}; out=${2:-/tmp/tpu-verify}; mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
deps=/tmp/podscale-deps
need() { PYTHONPATH="${PYTHONPATH:-}:$deps" python3 -c "import $1" 2>/dev/null || echo "$2"; }
pkgs="$(need seaborn 'pandas matplotlib seaborn json5 tabulate virtualenv build packaging')"
case $part in B|G) pkgs="$pkgs $(need flax 'flax optax')";; esac
if [ -n "${pkgs// /}" ]; then
  PIP_CONFIG_FILE=/dev/null python3 -m pip install -q --isolated --only-binary=:all: \
    --index-url file:///opt/pypi/simple --target "$deps" $pkgs >/dev/null 2>&1
fi
if [ -d "$root/.device-wheels" ] && [ -n "$(need asv asv)" ]; then
  PIP_CONFIG_FILE=/dev/null python3 -m pip install -q --isolated --no-index --no-deps \
    --target "$deps" "$root"/.device-wheels/*.whl >/dev/null 2>&1
fi
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$root:$deps"
export PATH="$deps/bin:$PATH"
# asv's quick run of the benchmarks BENCH matches, on this machine's chips, with JAX passed
# to asv's benchmark processes (ASV_PYTHONPATH); the output's last N lines
asvq() { local bench=$1 n=$2 t0=$SECONDS
  (cd "$root" && python3 -m asv machine --yes --machine tpu-v5e >/dev/null 2>&1;
    ASV_PYTHONPATH="$PYTHONPATH" python3 -m asv run --quick --python=same \
      --machine tpu-v5e --bench "$bench" --show-stderr) >"$out/asv.txt" 2>&1
  echo "== asv: rc=$? in $((SECONDS - t0)) s"
  grep -v -i "hugepages\|warnings.warn" "$out/asv.txt" | tail -"$n"; }
ps() { local name=$1; shift; local t0=$SECONDS
  (cd "$out" && python3 -m podscale "$@") >"$out/$name.txt" 2>&1; local rc=$?
  echo "== $name: rc=$rc in $((SECONDS - t0)) s: podscale $*"; tail -n "${TAILN:-6}" "$out/$name.txt"; }
cd "$out"
if [ "$part" = A ]; then
  TAILN=14 ps run run stream,matmul,dot,psum --hosts 1 --rounds 1 --out runs
  TAILN=40 ps study study --out runs
  t0=$SECONDS; python3 "$root/tools/accel_check.py" --out "$out/ac" >"$out/accel_check.txt" 2>&1
  echo "== accel_check: rc=$? in $((SECONDS - t0)) s"; cat "$out/ac/summary.md" 2>/dev/null | head -40
  ps worker worker stream --run-dir "$out/runs/worker" --sizes 64M --rounds 1
  (cd "$out/runs" && tar czf "$out/study.tgz" --exclude=traces --exclude=hlo --exclude=cache ./*study* 2>/dev/null)
elif [ "$part" = asv ]; then
  asvq "${3:-time_}" 40
elif [ "$part" = G ]; then
  TAILN=12 ps ab_aa ab stream --hosts 1 --sizes 64M --variants shard_map --rounds 8 \
    --out runs --name aa
  TAILN=12 ps ab_heavier_1pct ab stream --hosts 1 --sizes 64M --variants shard_map \
    --rounds 4 --threshold 0.01 --out runs --name heavier1 \
    --env-b PODSCALE_FAULT=heavier=0.02@*:*
  ps seed seed --out runs
  ps replay replay "$root/examples/mlp.py:mlp_step" --hosts 1 --out runs
  TAILN=30 ps profile profile --out runs "$root/examples/nnx_train.py"
  asvq "TrackSlices|TrackCollectiveFits|TimePsum" 40
elif [ "$part" = F ]; then
  TAILN=10 ps ab_heavier_1pct ab stream --hosts 1 --sizes 64M --variants shard_map \
    --rounds 4 --threshold 0.01 --out runs --name heavier1 \
    --env-b PODSCALE_FAULT=heavier=0.02@*:*
  TAILN=12 ps bench_self bench-self --only methods --out "$out/bench-self.json"
  (cd "$out/runs" && tar czf "$out/runs.tgz" --exclude=traces --exclude=hlo --exclude=cache \
    ./* 2>/dev/null)
elif [ "$part" = E ]; then
  TAILN=14 ps ab_aa ab stream --hosts 1 --sizes 64M --variants shard_map --rounds 8 \
    --out runs --name aa
  TAILN=14 ps ab_heavier ab stream --hosts 1 --sizes 64M --variants shard_map --rounds 8 \
    --out runs --name heavier --env-b PODSCALE_FAULT=heavier=0.02@*:*
  TAILN=14 ps ab_heavier_matmul ab matmul --hosts 1 --sizes 8192 --dtypes bfloat16 \
    --variants shard_map --rounds 8 --out runs --name heavier-matmul \
    --env-b PODSCALE_FAULT=heavier=0.02@*:*
  TAILN=12 ps bench_self bench-self --only methods --out "$out/bench-self.json"
elif [ "$part" = D ]; then
  TAILN=12 ps precision run matmul --hosts 1 --dtypes float32 --sizes 4096 --rounds 1 \
    -p precision=default,high,highest --out runs
  TAILN=30 ps marks run dot,stream --hosts 1 --sizes 4K,64M --rounds 1 --out runs
  asvq "time_(dot|psum)" 30
elif [ "$part" = C ]; then
  TAILN=12 ps window_1_4 profile --out runs --profile-steps 1:4 "$root/tests/programs/initfirst.py" 20
  TAILN=12 ps window_0_3 profile --out runs --profile-steps 0:3 "$root/tests/programs/initfirst.py" 20
  TAILN=8 ps attach_alone attach --run-dir "$out/runs/alone" --profile-steps 2:5 \
    "$root/tests/programs/initfirst.py" 20
  TAILN=12 ps attach_show show "$out/runs/alone"
  t0=$SECONDS; (cd "$root" && python3 -m asv machine --yes --machine tpu-v5e >/dev/null 2>&1;
    python3 -m asv run --quick --python=same --machine tpu-v5e --bench time_stream \
      --show-stderr) >"$out/asv.txt" 2>&1
  echo "== asv: rc=$? in $((SECONDS - t0)) s"; tail -40 "$out/asv.txt"
else
  ps ab_planted ab stream --hosts 1 --sizes 64M --out runs --judge each --rounds 4 \
    --env-b PODSCALE_FAULT=stretch=1.02@*:*
  ps seed seed --out runs
  ps replay replay "$root/examples/mlp.py:mlp_step" --hosts 1 --out runs
  TAILN=30 ps profile profile --out runs "$root/examples/nnx_train.py"
  t0=$SECONDS; (cd "$root" && python3 -m asv machine --yes --machine tpu-v5e >/dev/null 2>&1;
    python3 -m asv run --quick --python=same --machine tpu-v5e --bench time_ \
      --show-stderr) >"$out/asv.txt" 2>&1
  echo "== asv: rc=$? in $((SECONDS - t0)) s"; tail -25 "$out/asv.txt"
fi
