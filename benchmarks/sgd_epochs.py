"""Fewer SGD epochs per update: what the default config's agents learn per env step, and per CPU-second.

The default config's update spends about two thirds of its CPU time in SGD
(4 epochs over the batch; docs/training.md, "The default config's update"),
which no numerics-preserving change made cheaper. This script measures the
trade-off of fewer epochs instead: phase 1 of the default config (no taxes),
trained over ``--seeds`` (as one program per epoch count,
``reproduce.train_or_resume_seeds``) for ``--episodes`` episodes per economy
batch with ``trainer.num_sgd_iter`` in ``--epochs``, into
``OUT/epochs<k>/seed<s>``; then per run its agents' sampled return and
productivity (``evaluate``: 32 economies x one episode, evaluation seed
1000, full labor cost), and per epoch count the process CPU-seconds per
million env steps of its training. It prints, per epoch count, the mean over
seeds with the 95% interval (Student t), and each count minus the first,
paired by seed. Finished runs are skipped (the CPU time is then not
measured again: the figures of the run that trained them stand in the log).

    python benchmarks/sgd_epochs.py --seeds 0 1 2 --episodes 10000 --epochs 4 2 --out ../runs/sgd_epochs
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import time

RETURN = ("agents' return (per agent)", "a/episode_return")
PRODUCTIVITY = ("productivity (coin)", "episode/social/productivity")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--episodes", type=int, default=10000,
                   help="general.episodes: env steps per seed = episodes x 200 (10000: 2M)")
    p.add_argument("--epochs", type=int, nargs="+", default=[4, 2], help="trainer.num_sgd_iter values")
    p.add_argument("--out", default="runs/sgd_epochs")
    args = p.parse_args(argv)
    if min(args.epochs) < 1 or args.episodes < 1:
        raise SystemExit(f"--epochs must be >= 1 and --episodes >= 1, got {args.epochs} and {args.episodes}")

    from jaxecon.training.comparison import mean_ci
    from jaxecon.training.config import load_train_config
    from jaxecon.training.evaluate import evaluate
    from jaxecon.training.reproduce import train_or_resume_seeds

    base = load_train_config("default")
    out = pathlib.Path(args.out)
    results, cpu = {}, {}
    for k in args.epochs:
        runs = []
        for s in args.seeds:
            c = base.replace(general=dataclasses.replace(base.general, episodes=args.episodes),
                             trainer=dataclasses.replace(base.trainer, num_sgd_iter=k, seed=s))
            runs.append((c, out / f"epochs{k}" / f"seed{s}"))
        c0, t0 = time.process_time(), time.perf_counter()
        if train_or_resume_seeds(runs, print, progress=True) != ["done"] * len(runs):
            raise SystemExit(f"the runs of {k} epochs did not finish")
        steps = len(runs) * runs[0][0].total_env_steps
        cpu[k] = (time.process_time() - c0, time.perf_counter() - t0, steps)
        print(f"{k} epochs: {cpu[k][0]:.0f} CPU-s, {cpu[k][1]:.0f} s wall for {steps:,} env steps "
              f"({cpu[k][0] / steps * 1e6:.1f} CPU-s per million env steps, compile included; "
              f"load {os.getloadavg()[0]:.2f})")
        results[k] = {}
        for c, d in runs:
            rows = {r["label"]: r["metrics"] for r in evaluate(d, log=print)["rows"]}
            results[k][c.trainer.seed] = rows["trained (sampled)"]
            print(f"  {d}: " + ", ".join(f"{n} {rows['trained (sampled)'][key]:.4g}"
                                         for n, key in (RETURN, PRODUCTIVITY)))
    first = args.epochs[0]
    print(f"\nmean over seeds {args.seeds} ± 95% interval (Student t); agents sampled")
    for k in args.epochs:
        cells = []
        for n, key in (RETURN, PRODUCTIVITY):
            m = mean_ci([results[k][s][key] for s in args.seeds])
            cells.append(f"{n} {m['mean']:.4g} ± {m['ci']:.2g}")
            if k != first:
                d = mean_ci([results[k][s][key] - results[first][s][key] for s in args.seeds])
                cells.append(f"minus {first} epochs {d['mean']:+.3g} ± {d['ci']:.2g}")
        print(f"{k} epochs: " + "; ".join(cells) + f"; {cpu[k][0] / cpu[k][2] * 1e6:.1f} CPU-s per M env steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
