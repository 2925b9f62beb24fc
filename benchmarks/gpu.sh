#!/usr/bin/env bash
# The accelerator figures of the scale issue, as one prepared script for a lent GPU.
#
#   bash benchmarks/gpu.sh [OUT_DIR]                    # on the GPU machine
#   GPU_SH_DRY_RUN=1 bash benchmarks/gpu.sh [OUT_DIR]   # the same logic on the CPU, tiny sizes
#
# Runs from a source checkout with the machine's own Python (python3) and its
# CUDA jax: nothing is installed (the machine may have no network), jaxecon
# is imported from the checkout (PYTHONPATH). On the GPU it measures:
#   1. `jaxecon bench --device gpu` for default (canonical), covid19 and gtb100,
#      one economy per bench, at 1,024, 4,096, 16,384 and 65,536 envs (a batch
#      that does not fit in memory ends that economy's list; rollouts of large
#      batches are shortened to <= 4M env-steps); memory per env and the
#      bytes-per-step floor are in the log and the JSON;
#   2. gtb100 at 65,536 envs with compact observations (--obs-dtype uint8);
#   3. the trainer's env-steps/s (benchmarks/train_throughput.py: the bare
#      rollout, the trainer's rollout and a whole PPO update);
#   4. where a gtb100 step's time goes (benchmarks/profile_step.py, main parts).
# Every phase has its own time limit (about 9.5 minutes in all, inside the lent
# machine's 10-minute command limit: run it with timeout_s=600) and a failed
# phase does not stop the next. Results go to OUT_DIR (default $OUT, else
# runs/gpu): devices.txt, bench.txt (all bench logs), bench_<economy>.json/.png
# (default, covid19, gtb100, gtb100_uint8), train_throughput.txt/.json,
# profile.txt, and phases.txt (each phase's exit status and seconds).
# No reference is measured here (the numpy reference runs on the CPU;
# compare with a CPU `jaxecon bench` run).
#
# GPU_SH_DRY_RUN=1 runs every phase on the CPU (JAX_PLATFORMS=cpu, --device
# cpu) with batches of 4 and 8 envs, 10-step rollouts, one repeat and the
# smallest trainer config, and 5x the time limits, to show that the script
# works before a GPU is lent (minutes on 2 cores; its figures mean nothing).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-${OUT:-runs/gpu}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=python3
dry="${GPU_SH_DRY_RUN:-0}"

if [ "$dry" = 1 ]; then
    export JAX_PLATFORMS=cpu
    device=cpu
    batches=4,8
    uint8_batches=8
    steps=10
    train_configs=default
    profile_batch=8
    repeats=1
    slack=5  # compiling on a (shared) CPU is slower than on the GPU machine's 16 cores
else
    device=gpu
    batches=1024,4096,16384,65536
    uint8_batches=65536
    steps=100
    train_configs=default,canonical-mlp
    profile_batch=8192
    repeats=5
    slack=1
fi

: > "$out/phases.txt"
: > "$out/bench.txt"
# phase NAME LIMIT_S LOG COMMAND...: run COMMAND under `timeout LIMIT_S` (x slack), its output
# appended to LOG (and shown), then record its exit status and seconds in phases.txt; never
# stops the script.
phase() {
    local name=$1 limit=$(($2 * slack)) log=$3 t0=$SECONDS rc
    shift 3
    timeout "$limit" "$@" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
    echo "$name: exit $rc after $((SECONDS - t0)) s (limit $limit s)" | tee -a "$out/phases.txt"
}

{
    if [ "$dry" = 1 ]; then echo "dry run on the CPU (GPU_SH_DRY_RUN=1): figures are not GPU figures"; fi
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
    $py -c "import jax, jaxecon; print('jax', jax.__version__, jax.devices(), 'jaxecon', jaxecon.__version__)"
} 2>&1 | tee "$out/devices.txt"
if [ "$dry" != 1 ] && ! $py -c "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)"; then
    echo "jax has no GPU backend here: nothing measured" | tee -a "$out/devices.txt"
    exit 1
fi

bench=(-m jaxecon.cli bench --device "$device" --steps "$steps" --max-env-steps 4000000 --loop-steps 0
       --shim-steps 0 --no-reference --no-episode-compile --min-time 1 --adapter-batch-sizes none)

# One bench per economy, each with its own JSON and limit (a bench that runs out of time
# loses only its own economy); gtb100 last: the slowest to compile and run.
phase bench_default 80 "$out/bench.txt" $py "${bench[@]}" --economies default \
    --batch-sizes "$batches" --json "$out/bench_default.json"
phase bench_covid19 80 "$out/bench.txt" $py "${bench[@]}" --economies covid19 \
    --batch-sizes "$batches" --json "$out/bench_covid19.json"
phase bench_gtb100 170 "$out/bench.txt" $py "${bench[@]}" --economies gtb100 \
    --batch-sizes "$batches" --json "$out/bench_gtb100.json"
phase bench_gtb100_uint8 60 "$out/bench.txt" $py "${bench[@]}" --economies gtb100 --obs-dtype uint8 \
    --batch-sizes "$uint8_batches" --json "$out/bench_gtb100_uint8.json"

: > "$out/train_throughput.txt"
phase train_throughput 90 "$out/train_throughput.txt" $py benchmarks/train_throughput.py \
    --configs "$train_configs" --repeats "$repeats" --json "$out/train_throughput.json"

# The slowest economy per env-step is gtb100 (100 agents, 40x40).
: > "$out/profile.txt"
phase profile 60 "$out/profile.txt" $py benchmarks/profile_step.py --economy gtb100 \
    --batch "$profile_batch" --repeats "$repeats" --warm-steps 5 \
    --parts step,obs:scenario,step:ContinuousDoubleAuction

cat "$out/phases.txt"
