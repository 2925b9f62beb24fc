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
#   4. where a gtb100 step's time goes (benchmarks/profile_step.py, main parts);
#   4b. one economy against its agents (benchmarks/agent_scaling.py: the one-step
#      economy at 10 to 10,000 agents, gather-trade-build at 4 to 1,000; compile s,
#      env-steps/s, agent-steps/s, memory per env), phase agent_scaling;
#   5. the paper's phase 1 (`jaxecon train --config phase1`: the conv-LSTM agents,
#      30 envs x 200 steps per update), trained for as long as its limit allows:
#      at the limit SIGINT stops it after the running update, and the trainer
#      writes its checkpoint, summary.json (env-steps/s) and learning_curves.png
#      to train_phase1/ (that stop is the phase's exit 124);
#   6. the protocol at the paper's scale, phase protocol: `jaxecon reproduce --config phase2`
#      (the canonical economy: 1000-step episodes, ten 100-step tax periods, the conv-LSTM
#      agents and the FC-LSTM planner; phase 1 derived from it), 8 seeds as one program per phase (one compilation per phase), phase 1 and
#      the four planners' phase 2 for GPU_SH_PROTOCOL_EPISODES episodes each (default 60:
#      60,000 env steps per seed and run), then its evaluation table (protocol/evaluation.md,
#      .json, learning_curves.png). The protocol resumes: the same command with a larger
#      GPU_SH_PROTOCOL_EPISODES on the same OUT_DIR extends it.
# Every phase has its own time limit and a failed phase does not stop the next.
# Phases 1-4 take about 9.5 minutes, 4b up to 4 and phase 5 about 5.5, so
# within the lent machine's 10-minute command limit run them as three
# commands, choosing phases by name with GPU_SH_PHASES (comma-separated;
# default all):
#   GPU_SH_PHASES=bench_default,bench_covid19,bench_gtb100,bench_gtb100_uint8,train_throughput,profile
#   GPU_SH_PHASES=agent_scaling
#   GPU_SH_PHASES=train_phase1
#   GPU_SH_PHASES=protocol
# Results go to OUT_DIR (default $OUT, else runs/gpu): devices.txt, bench.txt
# (all bench logs), bench_<economy>.json/.png (default, covid19, gtb100,
# gtb100_uint8), agent_scaling.txt/.json, train_throughput.txt/.json, profile.txt, train_phase1.txt and
# train_phase1/ (metrics.csv, learning_curves.png, summary.json), protocol.txt and
# protocol/ (seed<k>/..., evaluation.md), and phases.txt (each phase's exit status and seconds).
# No reference is measured here (the numpy reference runs on the CPU;
# compare with a CPU `jaxecon bench` run).
#
# GPU_SH_DRY_RUN=1 runs every phase on the CPU (JAX_PLATFORMS=cpu, --device
# cpu) with batches of 4 and 8 envs, 10-step rollouts, one repeat, the
# smallest trainer config, phase 1 at 2 envs x 25 steps for 60 s, and 5x the
# time limits, to show that the script works before a GPU is lent (minutes on
# 2 cores; its figures mean nothing).
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
    phase1_s=60
    protocol_seeds="0 1"
    protocol_episodes=2
    slack=5  # compiling on a (shared) CPU is slower than on the GPU machine's 16 cores
else
    device=gpu
    batches=1024,4096,16384,65536
    uint8_batches=65536
    steps=100
    train_configs=default,canonical-mlp
    profile_batch=8192
    repeats=5
    phase1_s=240
    protocol_seeds="0 1 2 3 4 5 6 7"
    protocol_episodes="${GPU_SH_PROTOCOL_EPISODES:-60}"
    slack=1
fi

# selected NAME: the phase is to run (GPU_SH_PHASES unset, or it names NAME).
selected() {
    [ -z "${GPU_SH_PHASES:-}" ] || [[ ",$GPU_SH_PHASES," == *",$1,"* ]]
}

# A run of some phases (GPU_SH_PHASES) keeps the other phases' logs in OUT_DIR and adds to phases.txt.
[ -n "${GPU_SH_PHASES:-}" ] || : > "$out/phases.txt"

# phase NAME LIMIT_S LOG COMMAND...: run COMMAND under `timeout LIMIT_S` (x slack), its output
# appended to LOG (and shown), then record its exit status and seconds in phases.txt; never
# stops the script. A phase not selected is skipped.
phase() {
    local name=$1 limit=$(($2 * slack)) log=$3 t0=$SECONDS rc
    shift 3
    selected "$name" || return 0
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

if selected bench_default || selected bench_covid19 || selected bench_gtb100 || selected bench_gtb100_uint8; then
    : > "$out/bench.txt"
fi
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

# One economy against its agents (the ten-thousand-agents table): compile, speed, memory.
if [ "$dry" = 1 ]; then scale_args=(--one-step 10,100 --gtb 4 --steps 10); else scale_args=(); fi
selected agent_scaling && : > "$out/agent_scaling.txt"
phase agent_scaling 240 "$out/agent_scaling.txt" $py benchmarks/agent_scaling.py \
    "${scale_args[@]}" --no-reference --json "$out/agent_scaling.json"

selected train_throughput && : > "$out/train_throughput.txt"
phase train_throughput 90 "$out/train_throughput.txt" $py benchmarks/train_throughput.py \
    --configs "$train_configs" --repeats "$repeats" --json "$out/train_throughput.json"

# The slowest economy per env-step is gtb100 (100 agents, 40x40).
selected profile && : > "$out/profile.txt"
phase profile 60 "$out/profile.txt" $py benchmarks/profile_step.py --economy gtb100 \
    --batch "$profile_batch" --repeats "$repeats" --warm-steps 5 \
    --parts step,obs:scenario,step:ContinuousDoubleAuction

# tiny_config NAME FILE [EPISODE_LENGTH TAX_PERIOD]: the built-in training config NAME shrunk for
# the dry run (2 envs x 25 steps per update; optionally shorter episodes and tax periods) into FILE.
tiny_config() {
    $py -c "
import sys, yaml
from jaxecon.training.config import load_train_config
d = load_train_config(sys.argv[1]).to_dict()
if len(sys.argv) > 3:
    d['env']['episode_length'] = int(sys.argv[3])
    for c in d['env']['components']:
        if 'PeriodicBracketTax' in c:
            c['PeriodicBracketTax']['period'] = int(sys.argv[4])
d['trainer'].update(num_envs=2, rollout_fragment_length=25, sgd_minibatch_size=100)
yaml.safe_dump(d, open(sys.argv[2], 'w'), sort_keys=False)" "$@"
}

# The paper's phase 1 until its time limit (SIGINT: the trainer stops after the running update and
# writes its outputs; -k: killed 60 s later if it has not). The dry run trains a 2 x 25-step batch.
if selected train_phase1; then
    train_config=phase1
    if [ "$dry" = 1 ]; then
        train_config="$out/phase1_tiny.yaml"
        tiny_config phase1 "$train_config"
    fi
    : > "$out/train_phase1.txt"
    rm -rf "$out/train_phase1"
    phase train_phase1 $((phase1_s + 90)) "$out/train_phase1.txt" timeout -s INT -k 60 "$phase1_s" \
        $py -m jaxecon.cli train --config "$train_config" --out "$out/train_phase1" --no-progress \
        --device "$device"
fi
if selected train_phase1 && [ -f "$out/train_phase1/summary.json" ]; then
    $py -c "
import json, sys
s = json.load(open(sys.argv[1]))
print(f\"phase 1: {s['updates']} updates, {s['env_steps']:,} env steps in {s['wall_s']:.0f} s of training \"
      f\"(compile {s['compile_s']:.0f} s): {s['steps_per_s']:,.0f} env-steps/s; stopped: {s['stopped']}\")" \
        "$out/train_phase1/summary.json" 2>&1 | tee -a "$out/train_phase1.txt"
fi

# The protocol at the paper's scale: 8 seeds as one program per phase, then the evaluation table.
# The dry run: phase2.yaml shrunk (50-step episodes, 5-step tax periods, 2 envs x 25 steps),
# 2 seeds, 2 episodes per run.
if selected protocol; then
    protocol_config=phase2
    if [ "$dry" = 1 ]; then
        protocol_config="$out/protocol_tiny.yaml"
        tiny_config phase2 "$protocol_config" 50 5
    fi
    : > "$out/protocol.txt"
    # shellcheck disable=SC2086
    phase protocol 560 "$out/protocol.txt" $py -m jaxecon.cli reproduce --config "$protocol_config" \
        --seeds $protocol_seeds --out "$out/protocol" --phase1-episodes "$protocol_episodes" \
        --phase2-episodes "$protocol_episodes" --eval-envs 8 --no-progress --device "$device"
fi

cat "$out/phases.txt"
