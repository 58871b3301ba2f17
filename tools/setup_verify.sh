#!/usr/bin/env bash
# The accelerator install's checks as a TPU VM user types them (docs/usage.md, docs/asv.md):
# a fresh copy of the checkout in /tmp/fresh, no JAX of the machine's on PYTHONPATH, pip
# pointed at the machine's own index and a wheelhouse (.whl-tpu) of what it lacks. Outputs
# under $OUT (default /tmp/setup-verify).
#   bash tools/setup_verify.sh study   # make study; doctor; ACCEL=cpu setup, run, study
#   bash tools/setup_verify.sh asv     # asv run over two commits in asv-made virtualenvs
#   bash tools/setup_verify.sh ops     # ceilings of the chip; a workload's and a flax
#                                      # program's A/B named to the op (docs/history.md)
#   bash tools/setup_verify.sh attach  # attach's cost a step on the chip (bench-self) and
#                                      # where it goes (tools/attach_parts.py)
#   bash tools/setup_verify.sh feed    # a flax program's live feed (docs/exports.md)
set -u; export PYTHONUNBUFFERED=1
part=${1:-study}; OUT=${OUT:-/tmp/setup-verify}; mkdir -p "$OUT"
unset PYTHONPATH; export PIP_INDEX_URL=file:///opt/pypi/simple PIP_FIND_LINKS=$PWD/.whl-tpu
if [ "$part" = study ]; then
  rm -rf /tmp/fresh; mkdir /tmp/fresh
  tar --exclude=./.whl-tpu --exclude=./.venv -cf - . | tar -xf - -C /tmp/fresh; cd /tmp/fresh
  t0=$SECONDS; make study > "$OUT/study.txt" 2>&1; echo "== make study rc=$? in $((SECONDS-t0)) s"
  grep -E "^make setup|platform|^ +(read|copy|triad) |bfloat16|report" "$OUT/study.txt" | head -20
  .venv/bin/podscale doctor > "$OUT/doctor-tpu.txt" 2>&1; echo "== doctor (tpu venv) rc=$?"
  cat "$OUT/doctor-tpu.txt"
  { t0=$SECONDS; make setup ACCEL=cpu VENV=.venv-cpu 2>&1 | grep -v WARN | tail -3
    echo "== setup ACCEL=cpu in $((SECONDS-t0)) s"
    .venv-cpu/bin/podscale doctor; echo "== doctor (cpu venv) rc=$?"
    .venv-cpu/bin/podscale run stream --hosts 1 --sizes 64M --rounds 1 --out runs-cpu
    echo "== run (cpu venv) rc=$?"
    make study ACCEL=cpu VENV=.venv-cpu; echo "== make study ACCEL=cpu rc=$?"; } \
    > "$OUT/cpu.txt" 2>&1
  grep -E "^== |# note|platform|^  - |device nodes|auto|^ +read" "$OUT/cpu.txt" | head -30
  tar czf "$OUT/study.tgz" --exclude=traces --exclude=hlo --exclude=cache results 2>/dev/null
elif [ "$part" = ops ]; then
  rm -rf /tmp/fresh; mkdir /tmp/fresh
  tar --exclude=./.whl-tpu --exclude=./.venv -cf - . | tar -xf - -C /tmp/fresh; cd /tmp/fresh
  t0=$SECONDS; make setup > "$OUT/setup.txt" 2>&1; echo "== make setup rc=$? in $((SECONDS-t0)) s"
  .venv/bin/pip install -q flax optax > "$OUT/flax.txt" 2>&1; echo "== flax rc=$?"
  .venv/bin/podscale ceilings > "$OUT/ceilings.txt" 2>&1; echo "== ceilings rc=$?"
  cat "$OUT/ceilings.txt"
  t0=$SECONDS
  .venv/bin/podscale ab tests/data/extra_op.py:extra_op -p op=scale --sizes 64M --hosts 1 \
    --devices-per-host 1 --variants shard_map --rounds 3 --iters 20 \
    --env-b PODSCALE_TEST_EXTRA=1 --out runs-ab > "$OUT/ab.txt" 2>&1
  echo "== ab rc=$? in $((SECONDS-t0)) s"; grep -E "^# ops|^#   |verdict|slower|faster" "$OUT/ab.txt" | head -20
  t0=$SECONDS
  .venv/bin/podscale profile --hosts 1 --rounds 3 --profile-steps 100:103 \
    --args-b '200 256 1536' --out runs-prof examples/nnx_train.py 200 256 1024 \
    > "$OUT/prof.txt" 2>&1
  echo "== profile A/B rc=$? in $((SECONDS-t0)) s"; grep -E "^# ops|^#   |step" "$OUT/prof.txt" | head -30
  tar czf "$OUT/runs.tgz" --exclude=traces --exclude=cache runs-ab runs-prof 2>/dev/null
elif [ "$part" = attach ] || [ "$part" = feed ]; then
  rm -rf /tmp/fresh; mkdir /tmp/fresh
  tar --exclude=./.whl-tpu --exclude=./.venv -cf - . | tar -xf - -C /tmp/fresh; cd /tmp/fresh
  t0=$SECONDS; make setup > "$OUT/setup.txt" 2>&1; echo "== make setup rc=$? in $((SECONDS-t0)) s"
  if [ "$part" = attach ]; then
    t0=$SECONDS; .venv/bin/podscale bench-self --only attach --out "$OUT/attach.json" \
      > "$OUT/attach.txt" 2>&1; echo "== bench-self attach rc=$? in $((SECONDS-t0)) s"
    cat "$OUT/attach.txt"; .venv/bin/python tools/attach_parts.py 7 400; exit
  fi
  .venv/bin/pip install -q flax optax > "$OUT/flax.txt" 2>&1; echo "== flax rc=$?"
  t0=$SECONDS
  .venv/bin/podscale profile --hosts 1 --metrics-file "$OUT/feed.prom" --metrics-every 50 \
    --out runs-feed examples/nnx_train.py 4000 256 1024 > "$OUT/feed.txt" 2>&1 &
  pid=$!; for i in $(seq 1 120); do sleep 0.5; [ -f "$OUT/feed.prom" ] && \
    grep -E "^podscale_(steps_total|step_time_seconds|goodput_ratio|hfu_ratio)\{" \
    "$OUT/feed.prom" | sed "s/{.*}//" | tr '\n' ' ' && echo; kill -0 $pid 2>/dev/null || break
  done | uniq; wait $pid; echo "== profile with a live feed rc=$? in $((SECONDS-t0)) s"
  grep -E "^podscale_" "$OUT/feed.prom" | head -30; tail -25 "$OUT/feed.txt"
elif [ "$part" = asv ]; then
  cd /tmp/fresh && rm -rf .asv && git init -q -b main && git add -A
  id=(-c user.email=v@example.invalid -c user.name=verify)
  git "${id[@]}" commit -qm first && echo "A second commit." >> README.md
  git "${id[@]}" commit -qam second && git rev-parse HEAD~1 HEAD > hashes.txt
  .venv/bin/asv machine --yes --machine tpu-v5e > /dev/null
  t0=$SECONDS
  .venv/bin/asv run --quick --machine tpu-v5e --show-stderr HASHFILE:hashes.txt \
    --bench "TimePsum.time_psum\(4096, 1, 'shard_map', 'tpu'\)" > "$OUT/asv.txt" 2>&1
  echo "== asv run over two commits rc=$? in $((SECONDS-t0)) s"
  grep -v -i "hugepages\|warnings.warn" "$OUT/asv.txt" | tail -12
  .venv/bin/asv compare --machine tpu-v5e $(cat hashes.txt) 2>&1 | tail -6
  for py in .asv/env/*/bin/python; do $py -m pip list 2>/dev/null | grep -iE "^(jax|jaxlib|libtpu) "
    $py -m podscale doctor > "$OUT/doctor-asv.txt" 2>&1; echo "== doctor (asv env) rc=$?"
    grep -E "runtime|auto|JAX lists" "$OUT/doctor-asv.txt"; done
  python3 - <<'PY'
import glob, json
for f in sorted(glob.glob(".asv/results/tpu-v5e/*-virtualenv*.json")):
    r = json.load(open(f))
    for name, v in r["results"].items():
        print(r["commit_hash"][:8], name, json.dumps(v[0])[:60], v[1] if len(v) > 1 else "")
PY
fi
