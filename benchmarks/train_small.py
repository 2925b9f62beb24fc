"""The small default config learns on a CPU: both curriculum phases, then the evaluation tables.

1. Phase 1 (``jaxecon train``): the default config (4 agents on the canonical
   25x25 map, 200-step episodes, no taxes, the "auto" labor-cost warm-up, an
   MLP policy).
2. ``jaxecon evaluate``: the trained agents, sampled and greedy, against
   random actions and NO-OP, with the margins (difference of means +- the
   combined standard error) of return and productivity.
3. Phase 2 (``jaxecon train --phase 2``): from phase 1's checkpoint, with
   taxes and the planner learning.
4. ``jaxecon evaluate`` of phase 2: the learned planner's equality x
   productivity against the free market, the US federal schedule and Saez,
   all with the agents trained beside the learned planner (``jaxecon
   reproduce`` trains agents under each planner and compares over seeds).

Wall times are printed for each part (compile included in the totals).

    python benchmarks/train_small.py                       # into runs/train_small
    python benchmarks/train_small.py --seed 1 --out /tmp/ts --phase2-episodes 5000
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import pathlib
import time

from jaxecon.training.config import load_train_config
from jaxecon.training.curriculum import apply_phase, run_dir_name
from jaxecon.training.evaluate import evaluate, format_table
from jaxecon.training.trainer import train


def margin(rows, a: str, b: str, key: str) -> str:
    """``a - b`` of ``key``, with the combined standard error, as text."""
    ra = next(r for r in rows if r["label"] == a)
    rb = next(r for r in rows if r["label"] == b)
    d = ra["metrics"][key] - rb["metrics"][key]
    e = math.hypot(ra["stderr"][key], rb["stderr"][key])
    return f"{d:+.3g} +- {e:.2g}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--out", default="runs/train_small")
    p.add_argument("--seed", type=int, default=0, help="training seed (trainer.seed)")
    p.add_argument("--eval-seed", type=int, default=1000)
    p.add_argument("--phase1-episodes", type=int, default=None, help="default: the config's")
    p.add_argument("--phase2-episodes", type=int, default=None, help="default: the config's")
    p.add_argument("--eval-envs", type=int, default=32)
    p.add_argument("--eval-episodes", type=int, default=2)
    p.add_argument("--skip-phase2", action="store_true")
    args = p.parse_args(argv)
    out = pathlib.Path(args.out)

    def configure(cfg, episodes):
        cfg = cfg.replace(trainer=dataclasses.replace(cfg.trainer, seed=args.seed))
        if episodes is not None:
            cfg = cfg.replace(general=dataclasses.replace(cfg.general, episodes=episodes))
        return cfg

    def train_and_evaluate(phase: int, cfg, schedules: bool):
        """Train ``cfg`` into ``out/<run_dir_name(cfg)>`` (``phase1``, ``phase2-learned``), print its
        times and evaluation table: (training seconds, evaluation rows)."""
        t = time.perf_counter()
        run_dir = out / run_dir_name(cfg)
        r = train(cfg, run_dir, progress=False)
        spent = time.perf_counter() - t
        print(f"phase {phase}: {r['env_steps']:,} env steps in {spent:.0f} s (compile {r['compile_s']:.0f} s, "
              f"{r['steps_per_s']:,.0f} env-steps/s), seed {args.seed}")
        t = time.perf_counter()
        e = evaluate(run_dir, num_envs=args.eval_envs, episodes=args.eval_episodes,
                     seed=args.eval_seed, schedules=schedules)
        print(f"evaluation ({time.perf_counter() - t:.0f} s, seed {args.eval_seed}, "
              f"{args.eval_envs} x {args.eval_episodes} episodes per row):")
        print(format_table(e["rows"]))
        return spent, e["rows"]

    t1, rows1 = train_and_evaluate(1, configure(load_train_config("default"), args.phase1_episodes), False)
    for trained in ("trained (sampled)", "trained (greedy)"):
        for base in ("random", "no-op"):
            print(f"  {trained} - {base}: return {margin(rows1, trained, base, 'a/episode_return')}, "
                  f"productivity {margin(rows1, trained, base, 'episode/social/productivity')}")
    if args.skip_phase2:
        return 0

    cfg2 = configure(apply_phase(load_train_config("default"), 2), args.phase2_episodes)
    cfg2 = cfg2.replace(general=dataclasses.replace(cfg2.general, restore_agents=str(out / "phase1")))
    t2, rows2 = train_and_evaluate(2, cfg2, True)
    key = "episode/social_welfare/coin_eq_times_productivity"
    for base in ("free market", "US federal", "Saez"):
        print(f"  learned planner - {base}: equality x productivity "
              f"{margin(rows2, 'trained (sampled)', base, key)}")
    print(f"total {t1 + t2:.0f} s of training")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
