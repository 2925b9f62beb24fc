#!/usr/bin/env bash
# The accelerator figures of the scale issue, as one prepared script for a lent GPU.
#
#   bash benchmarks/gpu.sh [OUT_DIR]
#
# Runs from a source checkout with the machine's own Python (python3) and its
# CUDA jax: nothing is installed (the machine may have no network), jaxecon
# is imported from the checkout (PYTHONPATH). On the GPU it measures:
#   1. `jaxecon bench` for default (canonical), covid19 and gtb100 at 1,024 to
#      65,536 envs (a batch that does not fit in memory ends that economy's
#      list; rollouts of large batches are shortened to <= 4M env-steps);
#   2. gtb100 again with compact observations (--obs-dtype uint8);
#   3. the trainer's env-steps/s, where benchmarks/train_throughput.py exists;
#   4. where a gtb100 step's time goes (benchmarks/profile_step.py, main parts).
# Every phase has its own time limit (9 minutes in all, inside the lent
# machine's 10-minute command limit: run it with timeout_s=600) and a failed
# phase does not stop the next. Results go to OUT_DIR (default $OUT, else
# runs/gpu): devices.txt, bench.txt (both bench logs), bench.json/.png,
# bench_uint8.json/.png, profile.txt, train_throughput.txt: at most 8 files.
# No reference is measured here (the numpy reference runs on the CPU;
# compare with a CPU `jaxecon bench` run).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-${OUT:-runs/gpu}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=python3

{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    $py -c "import jax, jaxecon; print('jax', jax.__version__, jax.devices(), 'jaxecon', jaxecon.__version__)"
} 2>&1 | tee "$out/devices.txt"
if ! $py -c "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)"; then
    echo "jax has no GPU backend here: nothing measured" | tee -a "$out/devices.txt"
    exit 1
fi

bench=(-m jaxecon.cli bench --device gpu --steps 100 --max-env-steps 4000000 --loop-steps 0
       --shim-steps 0 --no-reference --no-episode-compile --min-time 1)

# gtb100 last: the slowest to compile and run; the log keeps each row as it is measured.
timeout 330 $py "${bench[@]}" --economies default,covid19,gtb100 --batch-sizes 1024,4096,16384,65536 \
    --json "$out/bench.json" 2>&1 | tee "$out/bench.txt" || echo "bench: exit $?" | tee -a "$out/bench.txt"

timeout 110 $py "${bench[@]}" --economies gtb100 --obs-dtype uint8 --batch-sizes 4096,65536 \
    --json "$out/bench_uint8.json" 2>&1 | tee -a "$out/bench.txt" || echo "bench uint8: exit $?" | tee -a "$out/bench.txt"

if [ -f benchmarks/train_throughput.py ]; then
    timeout 30 $py benchmarks/train_throughput.py 2>&1 | tee "$out/train_throughput.txt" || true
fi

# The slowest economy per env-step is gtb100 (100 agents, 40x40).
timeout 80 $py benchmarks/profile_step.py --economy gtb100 --batch 8192 --repeats 5 --warm-steps 5 \
    --parts step,observe,obs:scenario 2>&1 | tee "$out/profile.txt" || echo "profile: exit $?" | tee -a "$out/profile.txt"
