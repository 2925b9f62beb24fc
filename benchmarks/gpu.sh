#!/usr/bin/env bash
# The accelerator figures of the scale issue, as one prepared script for a lent GPU.
#
#   bash benchmarks/gpu.sh [OUT_DIR]
#
# Installs jaxecon with CUDA jax (if jax has no GPU yet), then measures, on the
# GPU: the default (canonical), gtb100 and covid19 economies at 1,024 up to
# 65,536 envs (larger batches are dropped by the bench when memory runs out),
# the trainer's env-steps/s where the trainer exists, and a profile of the
# slowest economy's step. Results are JSON + text under OUT_DIR (default
# $OUT, else runs/gpu). No reference is measured here (the numpy reference
# runs on the CPU; compare against a CPU `jaxecon bench` run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-${OUT:-runs/gpu}}"
mkdir -p "$out"

if ! python -c "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)" 2>/dev/null; then
    python -m pip install -q -e . "jax[cuda12]"
fi
python -c "import jax; print(jax.devices())" | tee "$out/devices.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$out/devices.txt"

python -m jaxecon.cli bench --device gpu --economies default,gtb100,covid19 \
    --batch-sizes 1024,4096,16384,65536 --steps 200 --max-env-steps 0 \
    --loop-steps 0 --shim-steps 0 --no-reference --min-time 2 \
    --json "$out/bench.json" 2>&1 | tee "$out/bench.txt"

if [ -f benchmarks/train_throughput.py ]; then
    python benchmarks/train_throughput.py 2>&1 | tee "$out/train_throughput.txt" || true
fi

# The slowest economy per env-step is gtb100 (100 agents, 40x40).
python benchmarks/profile_step.py --economy gtb100 --batch 4096 2>&1 | tee "$out/profile.txt"
