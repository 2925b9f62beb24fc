"""Gather-trade-build with taxes in phase 1: the learned planner against Saez, over seeds.

Per training seed ``k``, into ``OUT/seed<k>/`` (the layout of ``jaxecon
reproduce``, so ``jaxecon evaluate OUT`` reads it):

1. ``phase1``: ``benchmarks/configs/taxed_phase1_phase1.yaml``, the small
   default config with the taxes on under the untrained planner's random
   rates (the reference's phase 1 disables them);
2. ``phase2-<planner>`` for each planner (default: learned and saez), from
   that phase-1 checkpoint: ``taxed_phase1_phase2.yaml`` (or
   ``--phase2-config``) switched to the planner by ``curriculum.apply_phase``;

then the evaluation over the seeds (``comparison.compare``:
``OUT/evaluation.json``, ``OUT/evaluation.md``) and the curves
(``OUT/learning_curves.png``). Finished runs are skipped and interrupted ones
resumed, and each step's seeds train side by side as one program
(``reproduce.train_or_resume_seeds``: phase 1 of every seed, then each
planner's phase 2; ``--seeds-per-program`` caps it). ``--planners`` with no
name stops after phase 1. It ends with the wall time, the CPU time and the
load average. docs/training.md gives the figures (on par with
Saez over three seeds, not better) and why phase 1 has taxes.

    python benchmarks/taxed_phase1.py --seeds 0 1 2 --out runs/taxed_phase1
    python benchmarks/taxed_phase1.py --seeds 0 --planners learned saez us-federal free-market
    python benchmarks/taxed_phase1.py --seeds 0 1 2 3 4 5 6 7 --out ../runs/gtb8 --planners   # phase 1 only
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import resource
import time

CONFIGS = pathlib.Path(__file__).resolve().parent / "configs"


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def seed_runs(seed: int, out: pathlib.Path, planners, phase2_config=None) -> list:
    """``[(config, run directory)]`` of one seed, phase 1 first (``phase2_config``:
    phase 2's config file, default ``configs/taxed_phase1_phase2.yaml``)."""
    from jaxecon.training.config import load_train_config
    from jaxecon.training.curriculum import apply_phase

    root = out / f"seed{seed}"
    p1 = load_train_config(str(CONFIGS / "taxed_phase1_phase1.yaml"))
    p1 = p1.replace(trainer=dataclasses.replace(p1.trainer, seed=seed))
    runs = [(p1, root / "phase1")]
    p2 = load_train_config(str(phase2_config or CONFIGS / "taxed_phase1_phase2.yaml"))
    for planner in planners:
        c = apply_phase(p2, 2, planner=planner)
        c = c.replace(general=dataclasses.replace(c.general, restore_agents=str(root / "phase1")),
                      trainer=dataclasses.replace(c.trainer, seed=seed))
        runs.append((c, root / f"phase2-{planner}"))
    return runs


def main(argv=None) -> int:
    from jaxecon.training.curriculum import PLANNERS

    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--out", default="runs/taxed_phase1")
    p.add_argument("--planners", nargs="*", choices=PLANNERS, default=["learned", "saez"],
                   help="phase 2's planners (learned saez); none: phase 1 only")
    p.add_argument("--phase2-config", default=None,
                   help="phase 2's config file (default configs/taxed_phase1_phase2.yaml)")
    p.add_argument("--seeds-per-program", type=int, default=None,
                   help="train at most this many seeds as one program (default: all)")
    p.add_argument("--eval-envs", type=int, default=32)
    args = p.parse_args(argv)

    from jaxecon.training.comparison import compare, format_text, write_outputs
    from jaxecon.training.plots import plot_protocol
    from jaxecon.training.reproduce import train_or_resume_seeds

    out = pathlib.Path(args.out)
    load0, t0, c0 = os.getloadavg(), time.perf_counter(), _cpu_s()
    plan = [seed_runs(seed, out, args.planners, args.phase2_config) for seed in args.seeds]
    for step in range(1 + len(args.planners)):
        runs = [p[step] for p in plan]
        if train_or_resume_seeds(runs, print, progress=False,
                                 seeds_per_program=args.seeds_per_program) != ["done"] * len(runs):
            raise SystemExit(f"{[str(d) for _, d in runs]} did not finish")
    if not args.planners:
        print(f"phase 1 of seeds {args.seeds} finished in {out}; {time.perf_counter() - t0:.0f} s wall, "
              f"{_cpu_s() - c0:.0f} s CPU")
        return 0
    dirs = [out / f"seed{s}" for s in args.seeds]
    result = compare(dirs, num_envs=args.eval_envs, log=print)
    print(format_text(result))
    written = write_outputs(result, out)
    plot_protocol(dirs, out / "learning_curves.png", result)
    wall, cpu, load1 = time.perf_counter() - t0, _cpu_s() - c0, os.getloadavg()
    print(f"wrote {', '.join(map(str, written.values()))}, {out / 'learning_curves.png'}")
    print(f"{wall:.0f} s wall, {cpu:.0f} s CPU (user + system) on {os.cpu_count()} cores; load average "
          f"{load0[0]:.2f} before, {load1[0]:.2f} after (1 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
