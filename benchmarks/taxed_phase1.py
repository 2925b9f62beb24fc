"""Gather-trade-build with taxes in phase 1: the learned planner against Saez, over seeds.

Per training seed ``k``, into ``OUT/seed<k>/`` (the layout of ``jaxecon
reproduce``, so ``jaxecon evaluate OUT`` reads it):

1. ``phase1``: ``benchmarks/configs/taxed_phase1_phase1.yaml``, the small
   default config with the taxes on under the untrained planner's random
   rates (the reference's phase 1 disables them);
2. ``phase2-<planner>`` for each planner (default: learned and saez), from
   that phase-1 checkpoint: ``taxed_phase1_phase2.yaml`` switched to the
   planner by ``curriculum.apply_phase``;

then the evaluation over the seeds (``comparison.compare``:
``OUT/evaluation.json``, ``OUT/evaluation.md``) and the curves
(``OUT/learning_curves.png``). Finished runs are skipped and interrupted ones
resumed (``reproduce.train_or_resume``). It ends with the wall time, the CPU
time and the load average. docs/training.md gives the figures (on par with
Saez over three seeds, not better) and why phase 1 has taxes.

    python benchmarks/taxed_phase1.py --seeds 0 1 2 --out runs/taxed_phase1
    python benchmarks/taxed_phase1.py --seeds 0 --planners learned saez us-federal free-market
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


def seed_runs(seed: int, out: pathlib.Path, planners) -> list:
    """``[(config, run directory)]`` of one seed, phase 1 first."""
    from jaxecon.training.config import load_train_config
    from jaxecon.training.curriculum import apply_phase

    root = out / f"seed{seed}"
    p1 = load_train_config(str(CONFIGS / "taxed_phase1_phase1.yaml"))
    p1 = p1.replace(trainer=dataclasses.replace(p1.trainer, seed=seed))
    runs = [(p1, root / "phase1")]
    p2 = load_train_config(str(CONFIGS / "taxed_phase1_phase2.yaml"))
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
    p.add_argument("--planners", nargs="+", choices=PLANNERS, default=["learned", "saez"])
    p.add_argument("--eval-envs", type=int, default=32)
    args = p.parse_args(argv)

    from jaxecon.training.comparison import compare, format_text, write_outputs
    from jaxecon.training.plots import plot_protocol
    from jaxecon.training.reproduce import train_or_resume

    out = pathlib.Path(args.out)
    load0, t0, c0 = os.getloadavg(), time.perf_counter(), _cpu_s()
    for seed in args.seeds:
        for cfg, run_dir in seed_runs(seed, out, args.planners):
            if train_or_resume(cfg, run_dir, print, progress=False) != "done":
                raise SystemExit(f"{run_dir} did not finish")
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
