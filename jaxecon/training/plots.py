"""The protocol's learning curves across seeds: the whole curriculum on one env-step axis.

``plot_protocol(paths, png, evaluation)`` reads the ``metrics.csv`` of every
run under ``paths`` (``comparison.find_runs``: one protocol directory per
seed) and draws, against env steps, phase 1 and then each phase-2 run
continuing from phase 1's last step:

- per panel (``PANELS``: the agents' return, productivity, equality, equality
  x productivity, the inverse-income-weighted utility, tax revenue) one faint
  line per seed (a centred moving average, ``logging.smooth``), their mean in
  bold and a band: the 95% confidence interval over seeds (Student t), or
  nothing for one seed; phase 1 in grey, each phase-2 planner in its colour
  (``PLANNER_COLORS``);
- reference lines from the evaluation (``comparison.compare``'s result), when
  given: random and no-op agents over phase 1 on the agents' panels, the Saez
  formula over phase 2 on the social panels. They are measured in the
  evaluation economy (warm-ups finished), the curves in the training economy;
- a last panel with the curriculum's two schedules: the energy warm-up's
  labor-cost weight in phase 1 (``1 - exp(-x / energy_warmup_constant)``, x
  the logged ``labor/warmup_integrator`` for the "auto" method, the completed
  episodes for "decay"; 1 with constant 0) and the annealed maximum tax rate
  in phase 2, and in phase 1 when its taxes are on (``rate_max * clip(slope * (episodes - warmup), 0, 1)`` from
  ``tax_annealing_schedule = [warmup, slope]`` and the episodes each economy
  has completed, env steps / (num_envs x episode_length)).

It is drawn with ``jaxecon.plotting.style`` but lives here, not in
``jaxecon.plotting``: it finds the runs and reads their configs and metrics
through ``jaxecon.training`` (``comparison``, ``curriculum``, ``logging``),
which imports ``jaxecon.plotting``; in that package it would import upward.
"""

from __future__ import annotations

import copy
import math
import pathlib
from typing import Optional

import numpy as np

from jaxecon.training.comparison import find_runs, mean_ci
from jaxecon.training.curriculum import PLANNERS, tax_component_kwargs
from jaxecon.training.logging import read_metrics, smooth, steps_axis

__all__ = ["PANELS", "PLANNER_COLORS", "annealed_max_rate", "plot_protocol", "warmup_weight"]

#: (title, CSV column, y-axis label, scale, reference rows drawn: "agents" and/or "saez").
PANELS = (
    ("agents' episode return", "a/episode_return", "reward per agent", 1.0, ("agents",)),
    ("productivity", "episode/social/productivity", "coin per episode", 1.0, ("agents", "saez")),
    ("equality", "episode/social/equality", "1 - Gini of coin (%)", 100.0, ("saez",)),
    ("equality x productivity", "episode/social_welfare/coin_eq_times_productivity", "coin per episode", 1.0,
     ("saez",)),
    ("inverse-income-weighted utility", "episode/social_welfare/inv_income_weighted_utility", "utility", 1.0,
     ("saez",)),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes", "coin per episode", 1.0, ("saez",)),
)

#: Line colours: phase 1 and each phase-2 planner.
PLANNER_COLORS = {None: "0.35", "learned": "tab:red", "saez": "tab:blue", "us-federal": "tab:green",
                  "free-market": "tab:orange"}

_REFERENCES = {"random": ("random agents", "0.55", ":"), "no-op": ("no-op agents", "0.1", "-."),
               "saez": ("Saez (evaluation)", "tab:blue", "--")}


def warmup_weight(cfg, env_steps, integrator) -> np.ndarray:
    """The labor-cost weight of the energy warm-up per update (float64 ``[N]``).

    ``1 - exp(-x / energy_warmup_constant)``: x the logged integrator for
    ``energy_warmup_method: auto``, the completed episodes per economy for
    ``decay``; 1 when the constant is 0.
    """
    env_steps = np.asarray(env_steps, np.float64)
    const = float(cfg.env.get("energy_warmup_constant", 0))
    if const <= 0:
        return np.ones_like(env_steps)
    if cfg.env.get("energy_warmup_method", "decay") == "auto":
        x = np.asarray(integrator, np.float64)
    else:
        x = env_steps / (cfg.trainer.num_envs * cfg.episode_length)
    return 1.0 - np.exp(-x / const)


def annealed_max_rate(cfg, env_steps) -> Optional[np.ndarray]:
    """The maximum tax rate per update (float64 ``[N]``), or None without taxes.

    ``rate_max * clip(slope * (c - warmup), 0, 1)`` with c the completed
    episodes per economy (env steps / (num_envs x episode_length)); ``rate_max``
    without a ``tax_annealing_schedule``.
    """
    tax = tax_component_kwargs(copy.deepcopy(cfg.env))
    if tax is None or tax.get("disable_taxes", False):
        return None
    env_steps = np.asarray(env_steps, np.float64)
    rate_max = float(tax.get("rate_max", 1.0))
    sched = tax.get("tax_annealing_schedule")
    if sched is None:
        return np.full_like(env_steps, rate_max)
    c = env_steps / (cfg.trainer.num_envs * cfg.episode_length)
    return rate_max * np.clip(sched[1] * (c - sched[0]), 0.0, 1.0)


def _curves(runs: list) -> dict:
    """``{planner: {seed: (x, rows, cfg)}}`` with phase 2's x continuing from its seed's phase 1."""
    out = {}
    end = {}
    for r in runs:
        if r.planner is None:
            rows = read_metrics(r.path / "metrics.csv")
            end[r.seed] = rows[-1]["env_steps"] if rows else 0
            out.setdefault(None, {})[r.seed] = (np.array([x["env_steps"] for x in rows], np.float64), rows, r.cfg)
    for r in runs:
        if r.planner is not None:
            rows = read_metrics(r.path / "metrics.csv")
            x = np.array([x["env_steps"] for x in rows], np.float64) + end.get(r.seed, 0)
            out.setdefault(r.planner, {})[r.seed] = (x, rows, r.cfg)
    return out


def _mean_band(ys: list) -> tuple:
    """Mean and 95% half-width over seeds per update (the runs cut to the shortest)."""
    n = min(len(y) for y in ys)
    stack = np.stack([y[:n] for y in ys])
    mean = np.full(n, np.nan)
    half = np.full(n, np.nan)
    for i in range(n):
        v = stack[:, i][np.isfinite(stack[:, i])]
        if len(v):
            st = mean_ci(v)
            mean[i], half[i] = st["mean"], st["ci"]
    return mean, half


def _reference(evaluation: Optional[dict], which: str, key: str) -> Optional[float]:
    if evaluation is None:
        return None
    row = evaluation["planners"].get("saez") if which == "saez" else evaluation["agents"].get(which)
    if row is None or key not in row["mean"]:
        return None
    return row["mean"][key]


#: A curve with fewer finite values is drawn with a dot on each (one value would draw nothing as a line).
_DOTS_BELOW = 3


def plot_protocol(paths, png_path, evaluation: Optional[dict] = None, title: Optional[str] = None):
    """Draw the protocol's curves (module docstring) into ``png_path``; returns the path.

    Args:
        paths: protocol directories (one per seed) or runs (``find_runs``).
        png_path: the PNG to write (its directory must exist).
        evaluation: ``comparison.compare``'s result for the reference lines, or None.
        title: the figure's title (default: the config's name, seeds and planners).
    Raises:
        FileNotFoundError: no run under ``paths``.
    """
    from jaxecon.plotting.style import new_figure, save_figure, style

    runs = find_runs(paths)
    curves = _curves(runs)
    seeds = sorted({r.seed for r in runs})
    order = [None] + [p for p in PLANNERS if p in curves] + [p for p in curves if p not in PLANNERS and p]
    order = [p for p in order if p in curves]
    phase1_end = max((c[0][-1] for c in curves.get(None, {}).values() if len(c[0])), default=0.0)
    total_end = max((c[0][-1] for group in curves.values() for c in group.values() if len(c[0])), default=1.0)
    ncol = 4
    nrow = -(-(len(PANELS) + 1) // ncol)
    with style():
        fig, axes = new_figure(nrow, ncol, panel_size=(4.5, 3.3))
        flat = list(axes.flat)
        for ax, (name, col, unit, scale, refs) in zip(flat, PANELS):
            drawn = False
            # phase 1, then the planners with the learned one drawn last (on top)
            for planner in [p for p in order if p is None] + [p for p in reversed(order) if p is not None]:
                color = PLANNER_COLORS.get(planner, "tab:purple")
                ys, xs = [], []
                for s, (x, rows, _) in sorted(curves[planner].items()):
                    y = smooth(np.array([r.get(col, math.nan) for r in rows], np.float64) * scale)
                    ok = np.isfinite(y)
                    if ok.any():  # a curve of few values (a short run) gets a dot per value
                        ax.plot(x[ok], y[ok], color=color, lw=0.8, alpha=0.3,
                                marker="o" if ok.sum() < _DOTS_BELOW else None, ms=3)
                        ys.append(y)
                        xs.append(x)
                if not ys:
                    continue
                drawn = True
                mean, half = _mean_band(ys)
                x = xs[0][:len(mean)]
                ok = np.isfinite(mean)
                ax.plot(x[ok], mean[ok], color=color, lw=2.0, marker="o" if ok.sum() < _DOTS_BELOW else None, ms=5)
            if not drawn:
                ax.text(0.5, 0.5, "no value yet\n(no update has ended an episode)", ha="center", va="center",
                        transform=ax.transAxes, color="0.4")
                band = ok & np.isfinite(half)
                if band.any():
                    ax.fill_between(x[band], (mean - half)[band], (mean + half)[band], color=color, alpha=0.2, lw=0)
            for which in (("random", "no-op") if "agents" in refs else ()) + (("saez",) if "saez" in refs else ()):
                v = _reference(evaluation, which, col)
                if v is None:
                    continue
                label, color, ls = _REFERENCES[which]
                lo, hi = (phase1_end, total_end) if which == "saez" else (0.0, phase1_end)
                ax.hlines(v * scale, lo, hi, colors=color, linestyles=ls, lw=1.3)
            if phase1_end:
                ax.axvline(phase1_end, color="0.5", lw=0.8, ls="--")
            ax.set_title(name, fontsize=10.5)
            ax.set_ylabel(unit)
            ax.set_xlim(0, total_end * 1.03)  # a margin: the last value's dot is whole
            steps_axis(ax)
        _schedules(flat[len(PANELS)], curves, phase1_end)
        flat[len(PANELS)].set_xlim(0, total_end * 1.03)
        for ax in flat[len(PANELS) + 1:]:
            ax.axis("off")
        _legend(fig, order, evaluation, len(seeds))
        cfg = runs[0].cfg
        which = f"seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else f"seed {seeds[0]}"
        fig.suptitle(title or f"{cfg.general.name}: the curriculum, {which}; phase 2 starts at the dashed line")
        save_figure(fig, png_path)
    return pathlib.Path(png_path)


def _schedules(ax, curves: dict, phase1_end: float) -> None:
    """The energy warm-up weight (phase 1) and the annealed maximum tax rate (phase 2, and
    phase 1 when its taxes are on)."""
    def weight(rows, cfg):
        integ = np.array([r.get("episode/labor/warmup_integrator", math.nan) for r in rows], np.float64)
        return warmup_weight(cfg, [r["env_steps"] for r in rows], integ)

    for s, (x, rows, cfg) in sorted(curves.get(None, {}).items()):
        w = weight(rows, cfg)
        ok = np.isfinite(w)
        ax.plot(x[ok], w[ok], color="tab:purple", lw=1.5, alpha=0.7,
                label="labor-cost weight (energy warm-up)" if s == min(curves[None]) else None)
    # phase 2: one run's schedules stand for all (the planners share the annealing and the labor cost)
    phase2 = [(x, rows, cfg) for p, group in curves.items() if p is not None for _, (x, rows, cfg)
              in sorted(group.items())]
    if phase2:
        x, rows, cfg = phase2[0]
        w = weight(rows, cfg)
        ok = np.isfinite(w)
        ax.plot(x[ok], w[ok], color="tab:purple", lw=1.5, alpha=0.7)
    # the tax cap: phase 2's, and phase 1's when its taxes are on (one run each)
    phase1 = [c for _, c in sorted(curves.get(None, {}).items())][:1]
    rates = [(x, annealed_max_rate(cfg, [r["env_steps"] for r in rows])) for group in (phase1, phase2[:1])
             for x, rows, cfg in group if annealed_max_rate(cfg, [0]) is not None]
    for i, rate in enumerate(rates):
        ax.plot(*rate, color="tab:brown", lw=1.5, label=None if i else "maximum tax rate (annealing)")
    if phase1_end:
        ax.axvline(phase1_end, color="0.5", lw=0.8, ls="--")
    ax.set_ylim(-0.03, 1.05)
    ax.set_title("curriculum schedules", fontsize=10.5)
    ax.set_ylabel("weight / rate (0-1)")
    steps_axis(ax)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")


def _legend(fig, order: list, evaluation: Optional[dict], n_seeds: int) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], color=PLANNER_COLORS.get(p, "tab:purple"), lw=2,
                      label="phase 1" if p is None else f"phase 2, {p}") for p in order]
    if n_seeds > 1:
        handles += [Line2D([], [], color="0.3", lw=0.8, alpha=0.4, label="one seed (moving average)"),
                    Patch(color="0.3", alpha=0.2, label="95% CI over seeds")]
    if evaluation is not None:
        handles += [Line2D([], [], color=c, ls=ls, lw=1.3, label=lab) for lab, c, ls in _REFERENCES.values()]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5), fontsize=9)
