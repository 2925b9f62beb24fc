"""The one-step economy's learned planner against Saez and the best schedule known, over seeds.

For each training seed: ``jaxecon train --config one_step --seed S`` (two-level
PPO: 10 agents choose their hours, the planner the seven bracket rates), then
``jaxecon.training.one_step.compare_run``: the planner's greedy rates, the
gradient-ascent optimum, the grid search, the Saez schedule, the US federal
schedule and the free market, each scored with the agents' exact best
responses. Prints one row per seed and the mean with a 95% confidence
interval (Student t over the seeds) of the learned objective as a share of
the best schedule known, of the no-tax-to-best gap it closes and of its
margins over Saez and US federal; writes ``OUT/one_step_planner.json``.

    python benchmarks/one_step_planner.py --seeds 0 1 2 --out runs/one_step_planner
    python benchmarks/one_step_planner.py --config my_recipe.yaml --seeds 0 1 2 3 4 --out runs/my_recipe
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import resource
import time


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--out", default="runs/one_step_planner")
    p.add_argument("--config", default="one_step",
                   help="the training config: a built-in name or a YAML file (one_step)")
    p.add_argument("--episodes", type=int, default=None, help="override general.episodes")
    args = p.parse_args(argv)

    from jaxecon.training.config import load_train_config
    from jaxecon.training.one_step import compare_runs, format_text
    from jaxecon.training.trainer import train

    out = pathlib.Path(args.out)
    costs = {}
    for seed in args.seeds:
        cfg = load_train_config(args.config)
        cfg = cfg.replace(trainer=dataclasses.replace(cfg.trainer, seed=seed))
        if args.episodes is not None:
            cfg = cfg.replace(general=dataclasses.replace(cfg.general, episodes=args.episodes))
        t, c = time.perf_counter(), _cpu_s()
        res = train(cfg, out / f"seed{seed}", progress=False)
        costs[seed] = {"train_wall_s": time.perf_counter() - t, "train_cpu_s": _cpu_s() - c,
                       "env_steps": res["env_steps"], "compile_s": res["compile_s"]}
        print(f"seed {seed}: {res['env_steps']:,} env steps in {costs[seed]['train_wall_s']:.0f} s wall, "
              f"{costs[seed]['train_cpu_s']:.0f} CPU-s (load {os.getloadavg()[0]:.1f})", flush=True)
    result = compare_runs([out / f"seed{s}" for s in args.seeds], log=print)
    for row in result["runs"]:
        row.update(costs[row["seed"]])
    print(format_text(result))
    out.mkdir(parents=True, exist_ok=True)
    (out / "one_step_planner.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
