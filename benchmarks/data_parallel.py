"""One PPO update on 1 and N devices: time, and the collectives XLA put in it.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python benchmarks/data_parallel.py --devices 1 4
    python benchmarks/data_parallel.py --devices 1 8 --config phase1      # a GPU node

For each device count (one: the plain ``jax.jit(ppo.update)``; more:
``jaxecon.training.distributed.DataParallel``) it prints the compile time,
the update's median wall and CPU seconds (this process, all threads) over
``--updates`` updates after a warm-up, and the cross-device collectives of
the compiled update: each all-gather and all-reduce with its per-device
result shape, static count (an op inside the SGD loop runs once per
minibatch). ``--no-shard-minibatch`` leaves the minibatch's layout to XLA,
which then runs every minibatch on every device (no gradient all-reduce).
Forced CPU devices share the machine's cores, so they show the program's
communication, not a speed-up.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections import Counter

import jax

import jaxecon
from jaxecon.training import distributed
from jaxecon.training.config import load_train_config
from jaxecon.training.ppo import PPO
from jaxecon.training.trainer import start_runner

COLLECTIVES = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "bf16": 2, "f16": 2, "s32": 4, "u32": 4,
          "f32": 4, "s64": 8, "u64": 8, "f64": 8}
_OP = re.compile(r"= (\(.*?\)|\S+) (" + "|".join(COLLECTIVES) + r")(?:-start)?\(")


def collectives(hlo: str) -> Counter:
    """``Counter`` of ``(op, result type, bytes)`` over the collectives of a compiled HLO text."""
    out = Counter()
    for m in _OP.finditer(hlo):
        shapes = re.findall(r"(\w+)\[([\d,]*)\]", m.group(1))
        size = 0
        for dtype, dims in shapes:
            n = 1
            for d in filter(None, dims.split(",")):
                n *= int(d)
            size += n * _BYTES.get(dtype, 4)
        out[(m.group(2), re.sub(r"\{[\d,]*\}", "", m.group(1)), size)] += 1
    return out


def measure(cfg, env, n: int, updates: int, shard_minibatch: bool) -> dict:
    """Compile and time the update on the first ``n`` devices."""
    devices = distributed.select_devices(n)
    par = distributed.DataParallel(cfg.trainer.num_envs, devices) if n > 1 else None
    hook = par.shard_minibatch if par is not None and shard_minibatch else None
    ppo = PPO(cfg, env, shard_minibatch=hook)
    runner = start_runner(ppo, cfg, init=None if par is None else par.init(ppo))
    t = time.perf_counter()
    if par is None:
        update = jax.jit(ppo.update, donate_argnums=0).lower(runner).compile()
    else:
        runner = par.place(runner)
        update = par.compile_update(ppo, runner)
    compile_s = time.perf_counter() - t
    runner, m = update(runner)
    jax.block_until_ready(m)
    walls, cpus = [], []
    for _ in range(updates):
        w, c = time.perf_counter(), time.process_time()
        runner, m = update(runner)
        jax.block_until_ready(m)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return {"compile_s": compile_s, "wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
            "collectives": collectives(update.as_text())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--config", default="default", help="training config (default: default)")
    parser.add_argument("--devices", type=int, nargs="+", default=[1, len(jax.devices())],
                        help="device counts to compare (default: 1 and all)")
    parser.add_argument("--updates", type=int, default=5, help="timed updates per count (default 5)")
    parser.add_argument("--no-shard-minibatch", action="store_true",
                        help="leave the minibatch's layout to XLA (SGD then runs on every device)")
    args = parser.parse_args(argv)
    cfg = load_train_config(args.config)
    env = jaxecon.make_from_config(cfg.env)
    print(f"{args.config}: {cfg.trainer.num_envs} envs x {cfg.trainer.rollout_fragment_length} steps per "
          f"update, {jax.devices()[0].platform} devices: {len(jax.devices())}", flush=True)
    for n in args.devices:
        print(f"compiling for {n} device(s) ...", flush=True)
        r = measure(cfg, env, n, args.updates, not args.no_shard_minibatch)
        print(f"{n} device(s): compile {r['compile_s']:.1f} s, update {r['wall_s']:.3f} s wall, "
              f"{r['cpu_s']:.3f} s CPU (median of {args.updates})")
        for (op, shape, size), count in sorted(r["collectives"].items()):
            print(f"  {count:3d} x {op:18s} {size / 1e6:9.3f} MB  {shape[:100]}")


if __name__ == "__main__":
    main()
