"""Per-update training metrics: a CSV file, TensorBoard (tensorboardX) and a learning-curve PNG.

``RunLogger(out_dir, columns)`` appends one row per update to
``out_dir/metrics.csv`` (columns ``update``, ``env_steps``, ``wall_s``,
``steps_per_s``, then ``columns``: ``PPO.metric_names()``, e.g.
``a/episode_return``, ``p/episode_return``, ``episode/social/productivity``,
``episode/social/equality``,
``episode/social_welfare/coin_eq_times_productivity``,
``episode/social_welfare/inv_income_weighted_utility``,
``episode/PeriodicTax/total_collected_taxes``, ``a/entropy``,
``a/policy_loss``, ``a/value_loss``, ...) and writes the same scalars to a
TensorBoard event file in ``out_dir/tb``. Updates in which no episode ended
have NaN episode columns (left empty in TensorBoard).

``plot_learning_curves(csv, png)`` draws the run's curves (``CURVES``)
against env steps: each panel the raw per-update values, faint, under a
centred moving average (``smooth``), with its unit on the y axis. A column
whose values repeat an earlier panel's (the planner's return is the change
of equality x productivity over the episode, i.e. the same numbers when that
is its objective) joins that panel's title instead of getting its own, and
all-zero columns (tax revenue without taxes) and columns without a value yet
(episode metrics before the first finished episode) are left out, named with
why in a note under the panels. A curve of fewer than 3 values is drawn as
dots labelled with their values (a short run), one of up to 40 with a marker
on each value. Figures are built
without ``pyplot`` (``jaxecon.plotting.style``). The plot stays here, beside
the CSV's writer and reader (``RunLogger``, ``read_metrics``), rather than in
``jaxecon.plotting``, which ``jaxecon.training`` imports: there it would have
to import this module back.

The CSV is the record: ``tb/`` mirrors it, so a resumed run keeps the CSV's
rows up to its checkpoint and writes ``tb/`` anew from them (no duplicate
steps from the interrupted tail).
"""

from __future__ import annotations

import csv
import math
import pathlib

import numpy as np

__all__ = ["CURVES", "RunLogger", "plot_learning_curves", "read_metrics", "smooth", "steps_axis"]

#: (panel title, CSV column, y-axis label with unit, scale) of the learning-curve
#: PNG; the values are multiplied by the scale (equality as %).
CURVES = (
    ("agents' episode return", "a/episode_return", "reward per agent", 1.0),
    ("productivity", "episode/social/productivity", "coin per episode", 1.0),
    ("equality", "episode/social/equality", "1 - Gini of coin (%)", 100.0),
    ("equality x productivity", "episode/social_welfare/coin_eq_times_productivity", "coin per episode", 1.0),
    ("inverse-income-weighted utility", "episode/social_welfare/inv_income_weighted_utility", "utility", 1.0),
    ("planner's episode return", "p/episode_return", "reward", 1.0),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes", "coin per episode", 1.0),
    ("agents' policy entropy", "a/entropy", "nats", 1.0),
    ("planner's policy entropy", "p/entropy", "nats (sum over brackets)", 1.0),
    ("agents' value loss", "a/value_loss", "squared error", 1.0),
    ("planner's value loss", "p/value_loss", "squared error", 1.0),
    ("throughput", "steps_per_s", "env steps / s", 1.0),
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


def smooth(y, frac: float = 0.05) -> np.ndarray:
    """A centred moving average of the finite entries of ``y`` (NaN entries stay NaN).

    The kernel is a box of ``w`` finite entries (``w`` odd, about ``frac`` of
    them, at least 1) convolved with ``[1, 2, 1]``: symmetric, so a trend is
    not shifted, and zero at the period-2 frequency, so the alternation of
    updates that do and do not end an episode (e.g. 100-step fragments of
    200-step episodes) leaves no ripple. It shrinks at the ends.

    Args:
        y: float ``[N]`` (NaN where there is no value, e.g. updates without a
            finished episode).
        frac: the box's width as a fraction of the finite entries.
    Returns:
        float64 ``[N]``.
    """
    y = np.asarray(y, np.float64)
    out = np.full(y.shape, np.nan)
    ok = np.isfinite(y)
    v = y[ok]
    if not len(v):
        return out
    w = max(1, int(round(len(v) * frac)))
    w += 1 - w % 2
    kernel = np.convolve(np.ones(w), [1.0, 2.0, 1.0])
    centre = slice((len(kernel) - 1) // 2, (len(kernel) - 1) // 2 + len(v))  # "same", also for short v
    out[ok] = np.convolve(v, kernel)[centre] / np.convolve(np.ones(len(v)), kernel)[centre]
    return out


def steps_axis(ax) -> None:
    """Label an x axis of env steps (ticks 0, 500k, 1M, ...)."""
    from matplotlib.ticker import EngFormatter

    ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    ax.set_xlabel("env steps")


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    ok_a, ok_b = np.isfinite(a), np.isfinite(b)
    return bool(np.array_equal(ok_a, ok_b) and ok_a.any()
                and np.allclose(a[ok_a], b[ok_b], rtol=1e-3, atol=1e-6))


def _curves(columns: set, groups) -> list:
    """``CURVES`` for the run's agent groups: the ``"a/"`` rows once per group of
    agents, the ``"p/"`` rows once per planner group (``groups``: ``{name:
    "agents" | "planner"}``; None: every prefix with an ``episode_return``
    column, ``"p"`` a planner and the others agents)."""
    if groups is None:
        prefixes = sorted({c.split("/")[0] for c in columns if c.endswith("/episode_return")})
        groups = {g: "planner" if g == "p" else "agents" for g in prefixes}
    out = []
    for name, col, unit, scale in CURVES:
        role = {"a/": "agents", "p/": "planner"}.get(col[:2])
        if role is None:
            out.append((name, col, unit, scale))
            continue
        mine = [g for g, r in groups.items() if r == role] or [col[0]]
        for g in mine:
            if g == col[0]:
                out.append((name, col, unit, scale))
            else:  # another group: "<group>: episode return"
                out.append((f"{g}: {name.split(' ', 1)[1]}", f"{g}/{col[2:]}", unit, scale))
    return out


def plot_learning_curves(csv_path, png_path, title: str = "", groups=None) -> list:
    """Draw ``CURVES`` (those with data) against env steps into ``png_path``.

    The agents' and the planner's curves are drawn per agent group of the run
    (``groups``: ``{name: "agents" | "planner"}``, e.g. an economy's
    mobile-agent types; default: read from the CSV's columns), titled
    ``"<group>: ..."`` for groups other than Foundation's ``"a"`` and ``"p"``.

    Every panel shows its data: a curve with few values (a short run, or
    episode metrics that only updates ending an episode have) is drawn with a
    marker on each value, so that one value is a dot, not an invisible
    one-point line, and every panel spans the run's env steps. A curve of the
    CSV left without a panel is named, with why, in a note under the panels:
    no value yet (no update has ended an episode) or all zero (e.g. tax
    revenue without taxes).

    Returns the titles of the panels drawn (a title joined by a repeated
    column reads ``"<title>\n(= <other title>)"``).
    """
    from jaxecon.plotting.style import new_figure, save_figure, style

    rows = read_metrics(csv_path)
    columns = set().union(*(r.keys() for r in rows)) if rows else set()
    x = np.array([r["env_steps"] for r in rows], np.float64)
    panels, left_out = [], {}
    for name, col, unit, scale in _curves(columns, groups):
        y = np.array([r.get(col, math.nan) for r in rows], np.float64) * scale
        ok = np.isfinite(y)
        if not ok.any() or np.all(y[ok] == 0):
            if col in columns:
                why = "all zero" if ok.any() else (
                    "no update has ended an episode yet" if "episode" in col else "no value yet")
                left_out.setdefault(why, []).append(name)
            continue
        twin = next((p for p in panels if _same(p["y"], y)), None)
        if twin is not None:
            twin["title"] += f"\n(= {name})"
            continue
        panels.append({"title": name, "y": y, "unit": unit})
    ncol = 4 if len(panels) > 9 else 3
    nrow = max(1, -(-len(panels) // ncol))
    span = (x.min(), x.max()) if len(x) else (0.0, 1.0)
    pad = 0.05 * (span[1] - span[0]) or max(1.0, 0.05 * span[1])
    with style():
        fig, axes = new_figure(nrow, ncol, panel_size=(4.4, 3.1))
        for ax, p in zip(axes.flat, panels):
            ok = np.isfinite(p["y"])
            n = int(ok.sum())
            if n < _LINE_FROM:  # too few values for a curve: a dot per value
                ax.plot(x[ok], p["y"][ok], ls="none", marker="o", ms=6, color="tab:blue", label="per update")
                for xi, yi in zip(x[ok], p["y"][ok]):
                    ax.annotate(f"{yi:.4g}", (xi, yi), textcoords="offset points", xytext=(0, 7),
                                ha="center", fontsize=8.5)
            else:
                sparse = n <= _MARKERS_UP_TO
                ax.plot(x[ok], p["y"][ok], lw=0.8, alpha=0.3, color="tab:blue", label="per update",
                        marker="o" if sparse else None, ms=3)
                ax.plot(x[ok], smooth(p["y"])[ok], lw=1.8, color="tab:blue", label="moving average")
            ax.set_xlim(span[0] - pad, span[1] + pad)
            ax.set_title(p["title"], fontsize=10.5)
            ax.set_ylabel(p["unit"])
            steps_axis(ax)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        if panels:
            axes.flat[0].legend(fontsize=8, loc="best")
        else:
            axes.flat[0].text(0.5, 0.5, "no update logged yet" if not rows else "no curve has a nonzero value",
                              ha="center", va="center", transform=axes.flat[0].transAxes)
        if left_out:
            fig.supxlabel("not drawn: " + "; ".join(f"{', '.join(names)} ({why})" for why, names in left_out.items()),
                          fontsize=9, color="0.3", wrap=True)
        if title:
            fig.suptitle(title)
        save_figure(fig, png_path)
    return [p["title"] for p in panels]


#: Curves with fewer finite values are drawn as dots (with their values), not lines.
_LINE_FROM = 3
#: Curves with at most this many finite values get a marker on each value.
_MARKERS_UP_TO = 40
