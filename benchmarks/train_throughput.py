"""Training throughput: env-steps/s of a PPO update (rollout + GAE + SGD) beside the bare rollout's.

For each config, with the config's batch (``trainer.num_envs`` economies x
``rollout_fragment_length`` steps):

- ``bare``: ``jaxecon.rollout.scan_steps`` with uniformly random valid
  actions, the simulation alone (batched, jitted, no auto-reset);
- ``rollout``: the trainer's rollout alone (policy sampling, the
  auto-resetting batch, the recorded transitions);
- ``update``: one whole ``PPO.update`` (what training runs per update);
- with ``--seeds N``, ``seeds``: ``jax.vmap(PPO.update)`` over N seeds'
  runners stacked (``trainer.train_seeds``, what ``jaxecon reproduce`` runs),
  its env-steps/s counting every seed's steps.

Each is timed as the best of ``--repeats`` calls after compilation (compile
times are printed separately), in wall time, or with ``--cpu-time`` in the
process's CPU time (all its threads; steadier than wall time on a shared
machine, and the same on an idle one when every core is busy). ``ratio`` is the update's time per env step
over the bare rollout's. Configs: ``default`` (the small config, MLP),
``canonical-mlp`` (the reference's phase-1 config with the default config's
MLP policy), ``canonical`` (the reference's phase 1 as it is: conv-LSTM).

    python benchmarks/train_throughput.py                  # all three
    python benchmarks/train_throughput.py --configs default --repeats 5 --json out.json
    python benchmarks/train_throughput.py --configs default --seeds 8 --cpu-time   # 8 seeds as one program
"""

from __future__ import annotations

import argparse
import json
import time

import jax

import jaxecon
from jaxecon.rollout import RolloutCarry, scan_steps
from jaxecon.training.config import load_train_config
from jaxecon.training.ppo import PPO

CONFIGS = ("default", "canonical-mlp", "canonical")


def make_config(name: str):
    """The ``TrainConfig`` of a benchmark config name."""
    if name == "default":
        return load_train_config("default")
    cfg = load_train_config("phase1")
    if name == "canonical-mlp":
        cfg = cfg.replace(agent_policy=load_train_config("default").agent_policy)
    return cfg


def best_time(fn, arg, repeats: int, clock=time.perf_counter) -> tuple[float, float]:
    """``(compile_s, best run s)`` of ``jax.jit(fn)`` on ``arg``; runs timed by ``clock``."""
    t = time.perf_counter()
    compiled = jax.jit(fn).lower(arg).compile()
    compile_s = time.perf_counter() - t
    jax.block_until_ready(compiled(arg))
    runs = []
    for _ in range(repeats):
        t = clock()
        jax.block_until_ready(compiled(arg))
        runs.append(clock() - t)
    return compile_s, min(runs)


def _checksum(tree):
    """One float from every array of ``tree``: the whole trajectory is computed
    (nothing is pruned) without returning it (a fresh output buffer per call)."""
    leaves = [x for x in jax.tree.leaves(tree) if not jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)]
    return sum(x.astype("float32").sum() for x in leaves)


def measure(name: str, repeats: int, clock=time.perf_counter, seeds: int = 1) -> dict:
    """Bare rollout, trainer rollout and update throughput of one config."""
    cfg = make_config(name)
    env = jaxecon.make_from_config(cfg.env)
    params = env.default_params
    b, t = cfg.trainer.num_envs, cfg.trainer.rollout_fragment_length
    keys = jax.random.split(jax.random.key(0), b)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    bare = best_time(lambda c: scan_steps(env, params, c, t, batched=True)[0],
                     RolloutCarry(obs, state, keys), repeats, clock)
    ppo = PPO(cfg, env)
    runner = jax.jit(ppo.init)(jax.random.key(0))
    modes = {s.group.name: "sample" for s in ppo.setups}
    roll = best_time(lambda r: _checksum(ppo.rollout(r, t, modes)[1]), runner, repeats, clock)
    upd = best_time(lambda r: ppo.update(r)[1], runner, repeats, clock)
    steps = b * t
    vm = None
    if seeds > 1:
        stacked = jax.jit(jax.vmap(ppo.init))(jax.random.split(jax.random.key(0), seeds))
        vm = best_time(lambda r: jax.vmap(ppo.update)(r)[1], stacked, repeats, clock)
    return {
        "seeds": seeds, "seeds_steps_per_s": None if vm is None else seeds * steps / vm[1],
        "config": name, "model": cfg.agent_policy.model.custom_model, "num_envs": b, "steps": t,
        "bare_steps_per_s": steps / bare[1], "rollout_steps_per_s": steps / roll[1],
        "update_steps_per_s": steps / upd[1], "ratio": upd[1] / bare[1],
        "compile_s": {"bare": bare[0], "rollout": roll[0], "update": upd[0], "seeds": None if vm is None else vm[0]},
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"comma-separated, from {list(CONFIGS)}")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cpu-time", action="store_true", help="time with the process's CPU time")
    p.add_argument("--seeds", type=int, default=1,
                   help="also time N seeds' updates as one program (jax.vmap; default 1: not timed)")
    p.add_argument("--json", default=None, help="write the results here")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    bad = [n for n in names if n not in CONFIGS]
    if bad:
        p.error(f"--configs: unknown {bad}; choose from {list(CONFIGS)}")
    print(f"device: {jax.devices()[0].device_kind} ({jax.devices()[0].platform}), "
          f"best of {args.repeats} after compilation, {'CPU' if args.cpu_time else 'wall'} time")
    print(f"{'config':14} {'model':16} {'envs x steps':>12} {'bare /s':>10} {'rollout /s':>11} "
          f"{'update /s':>10} {'ratio':>6}"
          + (f" {f'{args.seeds} seeds /s':>12}" if args.seeds > 1 else "") + "  compile s (bare, rollout, update)")
    results = []
    for name in names:
        r = measure(name, args.repeats, time.process_time if args.cpu_time else time.perf_counter, args.seeds)
        results.append(r)
        c = r["compile_s"]
        print(f"{name:14} {r['model']:16} {r['num_envs']:>5} x {r['steps']:<4} "
              f"{r['bare_steps_per_s']:>10,.0f} {r['rollout_steps_per_s']:>11,.0f} "
              f"{r['update_steps_per_s']:>10,.0f} {r['ratio']:>5.1f}x"
              + (f" {r['seeds_steps_per_s']:>12,.0f}" if args.seeds > 1 else "") + "  "
              f"{c['bare']:.0f}, {c['rollout']:.0f}, {c['update']:.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
