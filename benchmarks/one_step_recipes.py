"""The one-step recipes' learning curves side by side (docs/training.md, "The one-step recipe: experiments").

Each ``LABEL=RUN`` is a ``jaxecon train --config one_step`` run directory
(``benchmarks/one_step_planner.py --config FILE`` writes ``OUT/seed<k>``).
Draws, against env steps, three panels from each run's ``metrics.csv``
(centred moving average, ``jaxecon.training.logging.smooth``): the planner's
objective in the training episodes (the inverse-income-weighted utility
under the learning agents, sampled, so not the exact score of
``jaxecon evaluate``), the planner's entropy (nats over its seven heads;
uniform over its 22 actions per head is 7 ln 22 = 21.6) and the agents' entropy (nats).

    python benchmarks/one_step_recipes.py old=runs/os_old/seed0 J=runs/os_j/seed0 --out recipes.png
"""

from __future__ import annotations

import argparse
import pathlib

import numpy as np

PANELS = (("episode/social_welfare/inv_income_weighted_utility", "planner's objective (training episodes)",
           "inverse-income-weighted utility"),
          ("p/entropy", "planner's entropy", "nats (uniform: 21.6)"),
          ("a/entropy", "agents' entropy", "nats"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("runs", nargs="+", metavar="LABEL=RUN", help="a label and a one-step run directory")
    p.add_argument("--out", required=True, help="the PNG to write")
    args = p.parse_args(argv)
    runs = []
    for item in args.runs:
        label, sep, path = item.partition("=")
        if not sep or not (pathlib.Path(path) / "metrics.csv").is_file():
            p.error(f"{item!r}: give LABEL=RUN, RUN a run directory holding metrics.csv")
        runs.append((label, pathlib.Path(path)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jaxecon.training.logging import read_metrics, smooth, steps_axis

    fig, axes = plt.subplots(1, len(PANELS), figsize=(5.2 * len(PANELS), 4.0), constrained_layout=True)
    for label, path in runs:
        rows = read_metrics(path / "metrics.csv")
        x = np.array([r["env_steps"] for r in rows])
        for ax, (key, title, unit) in zip(axes, PANELS):
            ax.plot(x, smooth([r.get(key, np.nan) for r in rows], 0.03), label=label, lw=1.4)
            ax.set_title(title)
            ax.set_ylabel(unit)
    for ax in axes:
        steps_axis(ax)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("one-step economy: recipes of docs/training.md (moving averages)")
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
