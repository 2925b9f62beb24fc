"""The one-step economy's learned planner against Saez and the gradient optimum, over seeds.

For each training seed: ``jaxecon train --config one_step --seed S`` (two-level
PPO: 10 agents choose their hours, the planner the seven bracket rates), then
``jaxecon.training.one_step.compare_run``: the planner's greedy rates, the
gradient-ascent optimum, the Saez schedule, the US federal schedule and the
free market, each scored with the agents' exact best responses. Prints one
row per seed and the mean with a 95% confidence interval (Student t over the
seeds) of the learned objective as a share of the gradient optimum and of
its margin over Saez; writes ``OUT/one_step_planner.json``.

    python benchmarks/one_step_planner.py --seeds 0 1 2 --out runs/one_step_planner
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
import resource
import time

import numpy as np


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def mean_ci(values) -> tuple:
    """(mean, half-width of the 95% Student-t interval) of ``values`` (NaN width for one value)."""
    from scipy import stats

    v = np.asarray(values, np.float64)
    if len(v) < 2:
        return float(v.mean()), math.nan
    return float(v.mean()), float(stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--out", default="runs/one_step_planner")
    p.add_argument("--episodes", type=int, default=None, help="override general.episodes")
    args = p.parse_args(argv)

    from jaxecon.training.config import load_train_config
    from jaxecon.training.one_step import SCHEDULES, compare_run
    from jaxecon.training.trainer import train

    out = pathlib.Path(args.out)
    rows = []
    for seed in args.seeds:
        cfg = load_train_config("one_step")
        cfg = cfg.replace(trainer=dataclasses.replace(cfg.trainer, seed=seed))
        if args.episodes is not None:
            cfg = cfg.replace(general=dataclasses.replace(cfg.general, episodes=args.episodes))
        run = out / f"seed{seed}"
        t, c = time.perf_counter(), _cpu_s()
        res = train(cfg, run, progress=False)
        wall, cpu = time.perf_counter() - t, _cpu_s() - c
        cmp = compare_run(run)
        obj = cmp["objective"]
        row = {"seed": seed, "train_wall_s": wall, "train_cpu_s": cpu, "env_steps": res["env_steps"],
               "compile_s": res["compile_s"], **cmp,
               "share_of_optimum": obj["learned"] / obj["gradient optimum"],
               "minus_saez": obj["learned"] - obj["Saez"]}
        rows.append(row)
        print(f"seed {seed}: {res['env_steps']:,} env steps, {wall:.0f} s wall, {cpu:.0f} CPU-s; "
              + ", ".join(f"{s} {obj[s]:.3f}" for s in SCHEDULES)
              + f"; learned / optimum {row['share_of_optimum']:.3f}", flush=True)
        print(f"  learned rates {np.round(cmp['rates']['learned'], 2).tolist()}; "
              f"optimum {np.round(cmp['rates']['gradient optimum'], 2).tolist()}; "
              f"Saez {np.round(cmp['rates']['Saez'], 2).tolist()}", flush=True)
    share = mean_ci([r["share_of_optimum"] for r in rows])
    margin = mean_ci([r["minus_saez"] for r in rows])
    summary = {"seeds": args.seeds, "rows": rows,
               "share_of_optimum": {"mean": share[0], "ci95": share[1]},
               "minus_saez": {"mean": margin[0], "ci95": margin[1]}}
    print(f"learned / gradient optimum: {share[0]:.3f} +- {share[1]:.3f} (95% CI over {len(rows)} seeds)")
    print(f"learned - Saez: {margin[0]:+.3f} +- {margin[1]:.3f}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "one_step_planner.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
