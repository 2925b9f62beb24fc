"""Per-update training metrics: a CSV file, TensorBoard (tensorboardX) and a learning-curve PNG.

``RunLogger(out_dir, columns)`` appends one row per update to
``out_dir/metrics.csv`` (columns ``update``, ``env_steps``, ``wall_s``,
``steps_per_s``, then ``columns``: ``PPO.metric_names()``, e.g.
``a/episode_return``, ``p/episode_return``, ``episode/social/productivity``,
``episode/social/equality``,
``episode/social_welfare/coin_eq_times_productivity``,
``episode/PeriodicTax/total_collected_taxes``, ``a/entropy``,
``a/policy_loss``, ``a/value_loss``, ...) and writes the same scalars to a
TensorBoard event file in ``out_dir/tb``. Updates in which no episode ended
have NaN episode columns (left empty in TensorBoard). The CSV is the record:
``tb/`` mirrors it, so a resumed run keeps the CSV's rows up to its checkpoint
and writes ``tb/`` anew from them (no duplicate steps from the interrupted tail).
``plot_learning_curves(csv, png)`` draws the run's main curves against env
steps.
"""

from __future__ import annotations

import csv
import math
import pathlib

__all__ = ["CURVES", "RunLogger", "plot_learning_curves", "read_metrics"]

#: (panel title, CSV column) of the learning-curve PNG; absent columns are skipped.
CURVES = (
    ("agents' episode return", "a/episode_return"),
    ("planner's episode return", "p/episode_return"),
    ("productivity", "episode/social/productivity"),
    ("equality", "episode/social/equality"),
    ("equality x productivity", "episode/social_welfare/coin_eq_times_productivity"),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes"),
    ("agents' entropy", "a/entropy"),
    ("planner's entropy", "p/entropy"),
    ("agents' value loss", "a/value_loss"),
    ("env steps / s", "steps_per_s"),
)

HEAD = ("update", "env_steps", "wall_s", "steps_per_s")


class RunLogger:
    """Append per-update metrics to ``metrics.csv`` and TensorBoard.

    Args:
        out_dir: the run directory (created).
        columns: metric names, in order.
        resume_update: when resuming, rows with ``update > resume_update`` are
            dropped from an existing CSV (they belong to the interrupted tail);
            None starts a new CSV.
        tensorboard: also write TensorBoard events. Event files already in
            ``out_dir/tb`` are deleted and the kept rows written again, so that
            every step appears once.

    Attributes:
        resumed_row: the last row kept from the existing CSV (None: none kept);
            a resumed run continues its ``wall_s``.
    """

    def __init__(self, out_dir, columns, resume_update=None, tensorboard: bool = True):
        self.dir = pathlib.Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.dir / "metrics.csv"
        self.columns = list(HEAD) + [c for c in columns if c not in HEAD]
        rows = []
        if resume_update is not None and self.csv_path.is_file():
            rows = [r for r in read_metrics(self.csv_path) if r["update"] <= resume_update]
        self._file = open(self.csv_path, "w", newline="")
        self._csv = csv.writer(self._file)
        self._csv.writerow(self.columns)
        for r in rows:
            self._csv.writerow([_fmt(r.get(c, math.nan)) for c in self.columns])
        self._file.flush()
        self.resumed_row = rows[-1] if rows else None
        self._tb = None
        if tensorboard:
            from tensorboardX import SummaryWriter

            tb = self.dir / "tb"
            for old in tb.glob("events.out.tfevents.*"):
                old.unlink()
            self._tb = SummaryWriter(str(tb))
            for r in rows:
                self._add_scalars(r)

    def log(self, row: dict) -> None:
        """Write one update's row (``update`` and ``env_steps`` required; missing columns NaN)."""
        self._csv.writerow([_fmt(row.get(c, math.nan)) for c in self.columns])
        self._file.flush()
        if self._tb is not None:
            self._add_scalars(row)

    def _add_scalars(self, row: dict) -> None:
        """A row's finite values as TensorBoard scalars at step ``env_steps``."""
        step = int(row["env_steps"])
        for k, v in row.items():
            if k not in ("update", "env_steps") and isinstance(v, (int, float)) and math.isfinite(v):
                self._tb.add_scalar(k, v, step)

    def close(self) -> None:
        """Flush and close the files."""
        self._file.close()
        if self._tb is not None:
            self._tb.close()


def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v)


def read_metrics(csv_path) -> list:
    """The rows of a ``metrics.csv`` as dicts of floats (empty cells NaN; ``update``, ``env_steps`` int)."""
    with open(csv_path, newline="") as f:
        rows = []
        for r in csv.DictReader(f):
            d = {k: (float(v) if v != "" else math.nan) for k, v in r.items()}
            d["update"], d["env_steps"] = int(d["update"]), int(d["env_steps"])
            rows.append(d)
    return rows


def plot_learning_curves(csv_path, png_path, title: str = "") -> list:
    """Draw ``CURVES`` (those present with data) against env steps into ``png_path``.

    Returns the titles of the panels drawn.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = read_metrics(csv_path)
    x = np.array([r["env_steps"] for r in rows])
    panels = []
    for name, col in CURVES:
        y = np.array([r.get(col, math.nan) for r in rows])
        if len(y) and np.isfinite(y).any():
            panels.append((name, y))
    ncol = 3
    nrow = max(1, -(-len(panels) // ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 2.8 * nrow), squeeze=False)
    for ax, (name, y) in zip(axes.flat, panels):
        ok = np.isfinite(y)
        ax.plot(x[ok], y[ok], lw=1.2)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("env steps", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return [n for n, _ in panels]
