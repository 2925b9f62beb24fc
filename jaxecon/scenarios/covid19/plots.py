"""Plots of one COVID-19 episode against the recorded US data (matplotlib, Agg backend).

``plot_covid_episode`` writes four PNGs, one per quantity, each a grid of 51
state panels plus a US-total panel: simulated vs recorded infections
(``infected.png``), deaths (``deaths.png``), unemployment rate in %
(``unemployment.png``) and cumulative direct payments in US$ (``subsidies.png``;
the record is national, so the state panels show each state's population
share of it). Every figure has its legend and a caption in the free cells
after the last panel, fonts of 11-18 points, and y axes in compact units
(``12k``, ``3.4M``, ``1.2B``) instead of matplotlib's offset text, which
would overlap the panel titles.

Why the simulated payments ramp while the recorded ones are steps: the
record holds each round of federal direct payments as one lump sum on the
day it went out, so its cumulative sum jumps. ``FederalGovernmentSubsidy``
replays it as Foundation does: each recorded payment becomes a subsidy
*level* (the payment over what one level pays in a ``subsidy_interval`` of
90 days, rounded to a whole level), and the level is paid out evenly, day
by day, for the 90 days from the payment's day. The same money (up to the
rounding to whole levels) arrives as a straight ramp over 90 days, and a
payment recorded less than 90 days before the episode ends is not paid in
full by then.

Accepted episode inputs (``dense_or_series``):

* a dict of per-step series keyed by Foundation's global-state names
  (``"Infected"``, ``"Deaths"``, ``"Unemployed"``, ``"Subsidy"``, ...), each
  ``[L, n]`` — e.g. the ``info`` dicts of ``env.step`` stacked by a
  ``lax.scan`` (rows = steps 1..T, the default ``first_timestep=1``) or a
  reference env's ``world.global_state`` (rows 0..T, pass ``first_timestep=0``);
* a Foundation-style dense log (a dict with a ``"states"`` list, one entry per
  timestep 0..T, each a list of per-agent state dicts with ``"Total
  Infected"``, ``"Total Deaths"``, ``"Total Unemployed"`` and ``"New Subsidy
  Received"``; rows start at ``first_timestep=0`` unless given).

These plots live with the scenario, not in ``jaxecon.plotting``: they read
its recorded data (``CovidData``), so in that package they would make
``import jaxecon.plotting`` import the scenario and JAX (the other plots
import neither), and keeping this path by a re-export would import upward
(a scenario importing the plots package).
"""

from __future__ import annotations

import os
from datetime import datetime

import numpy as np

from jaxecon.scenarios.covid19.data import CovidData, load_covid_data

_DENSE_FIELDS = {
    "Infected": "Total Infected",
    "Deaths": "Total Deaths",
    "Unemployed": "Total Unemployed",
    "Subsidy": "New Subsidy Received",
}


#: The caption of each figure (in the free cells after the last panel).
_CAPTIONS = {
    "infected": "Currently infected people (the SIR model with vaccination, fitted to the record).",
    "deaths": "Cumulative deaths.",
    "unemployment": "Unemployed people / state population, in %.\nUSA: population-weighted mean.",
    "subsidies": (
        "Why the simulated payments ramp while the recorded ones are steps:\n"
        "the record holds each round of direct payments as one lump sum on\n"
        "the day it went out. The simulation turns each payment into a subsidy\n"
        "level (rounded to whole levels) and pays it out evenly, day by day,\n"
        "over the 90-day subsidy interval (FederalGovernmentSubsidy), so a\n"
        "payment made less than 90 days before the end is not yet paid in full.\n"
        "States: their population share of the national record."
    ),
}


def _compact_number(x, _pos=None) -> str:
    """Tick label in compact units: 950, 12k, 3.4M, 1.2B, 2T (no offset text)."""
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:.3g}{unit}"
    return f"{x:.3g}"


def _series_from_dense_log(log, n):
    states = log["states"]
    out = {}
    for key, field in _DENSE_FIELDS.items():
        rows = []
        for entry in states:
            agents = [a for a in entry if isinstance(a, dict)][:n]
            rows.append([float(np.asarray(a.get(field, np.nan)).reshape(-1)[0]) for a in agents])
        out[key] = np.asarray(rows, np.float64)
    return out


def _as_data(real_data):
    if real_data is None or isinstance(real_data, (str, os.PathLike)):
        return load_covid_data(real_data)
    if isinstance(real_data, CovidData):
        return real_data
    raise ValueError(
        "real_data must be None (jaxecon's shipped data), a data folder path or a CovidData, "
        f"got {type(real_data).__name__}"
    )


def plot_covid_episode(
    dense_or_series,
    real_data=None,
    out_dir=".",
    *,
    start_date: str = "2020-03-22",
    first_timestep: int | None = None,
    prefix: str = "",
    dpi: int = 80,
) -> list[str]:
    """Write PNGs of infections, deaths, unemployment and subsidies per state vs the record.

    Args:
        dense_or_series: the episode (see the module docstring): a dict of
            series ``{"Infected": [L, n], "Deaths": [L, n], "Unemployed": [L, n],
            "Subsidy": [L, n], ...}`` (people / people / people / US$ per day;
            numpy or jax arrays) or a Foundation-style dense log.
        real_data: ``None`` (the data shipped with jaxecon), a data folder path,
            or a ``CovidData`` from ``load_covid_data``.
        out_dir: folder to write into (created if missing).
        start_date: "YYYY-MM-DD" day 0 of the episode (the scenario's ``start_date``).
        first_timestep: timestep of the first row of the series (1 for stacked
            ``info`` of a scan, 0 for dense logs / ``world.global_state``);
            default: 0 for a dense log, else 1.
        prefix: prepended to the file names.
        dpi: resolution of the PNGs (80: 1920 x 1608 pixels).
    Returns:
        The paths written: ``[<out_dir>/<prefix>infected.png, ...deaths.png,
        ...unemployment.png, ...subsidies.png]``.
    Raises:
        ValueError: missing series or a bad ``real_data`` / ``start_date``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    data = _as_data(real_data)
    n = data.n_states
    if isinstance(dense_or_series, dict) and "states" in dense_or_series:
        series = _series_from_dense_log(dense_or_series, n)
        t0 = 0 if first_timestep is None else int(first_timestep)
    elif isinstance(dense_or_series, dict):
        series = {k: np.asarray(v, np.float64) for k, v in dense_or_series.items()}
        t0 = 1 if first_timestep is None else int(first_timestep)
    else:
        raise ValueError("dense_or_series must be a dict of series or a dense log with a 'states' list")
    missing = [k for k in _DENSE_FIELDS if k not in series]
    if missing:
        raise ValueError(f"dense_or_series lacks the series {missing} (each [steps, {n}])")
    try:
        start = datetime.strptime(str(start_date), data.date_format)
    except ValueError:
        raise ValueError(f"start_date must match {data.date_format!r}, got {start_date!r}") from None

    length = series["Infected"].shape[0]
    offset = (start - data.policy_start_date).days + t0
    day_idx = offset + np.arange(length)
    days = t0 + np.arange(length)  # days since start_date
    inside = (day_idx >= 0) & (day_idx < data.n_days)
    pop = np.asarray(data.constants["US_STATE_POPULATION"], np.float64)
    share = pop / pop.sum()

    def recorded(key):
        out = np.full((length, n), np.nan)
        out[inside] = data.real[key][day_idx[inside]]
        return out

    real_subsidy = np.zeros(length)
    real_subsidy[inside] = data.real["subsidy"][day_idx[inside], 0]
    panels = {
        "infected": (series["Infected"], recorded("infected"), "infected (people)"),
        "deaths": (series["Deaths"], recorded("deaths"), "deaths (people)"),
        "unemployment": (series["Unemployed"] / pop * 100, recorded("unemployed") / pop * 100,
                         "unemployment rate (%)"),
        "subsidies": (np.cumsum(series["Subsidy"], axis=0), np.cumsum(real_subsidy)[:, None] * share[None],
                      "cumulative direct payments (US$)"),
    }
    os.makedirs(out_dir, exist_ok=True)
    names = list(data.state_names) + ["USA (total)"]
    cols = 8
    rows = int(np.ceil((len(names) + 3) / cols))  # at least 3 free cells for the legend and caption
    # One figure (no pyplot, so no global state), its axes and lines reused for
    # every quantity (axes are the slow part).
    fig = Figure(figsize=(3.0 * cols, 2.45 * rows + 0.9))
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(rows, cols, left=0.035, right=0.995, bottom=0.055, top=0.93,
                            wspace=0.32, hspace=0.5)
    compact = FuncFormatter(_compact_number)
    lines, first = [], None
    for j, name in enumerate(names):
        ax = fig.add_subplot(grid[j // cols, j % cols], sharex=first)
        first = first or ax
        (l_sim,) = ax.plot(days, np.zeros(length), lw=1.8, color="tab:blue", label="simulated (jaxecon)")
        (l_rec,) = ax.plot(days, np.zeros(length), lw=1.6, ls="--", color="tab:orange",
                           label="recorded (US data)")
        ax.set_title(name, fontsize=13, fontweight="bold" if j == n else "normal")
        ax.tick_params(labelsize=10.5)
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(4))
        ax.yaxis.set_major_formatter(compact)
        ax.grid(alpha=0.3)
        if j < len(names) - cols:  # x tick labels on each column's lowest panel only
            ax.tick_params(labelbottom=False)
        lines.append((ax, l_sim, l_rec))
    spare = fig.add_subplot(grid[rows - 1, len(names) % cols:])
    spare.set_axis_off()
    spare.legend(handles=[lines[0][1], lines[0][2]], loc="upper left", fontsize=14, frameon=True,
                 borderaxespad=0.2)
    # the caption beside the legend, from the top of the spare cells: the long
    # ones (subsidies) would run into the x label below them
    caption = spare.text(0.36, 1.0, "", transform=spare.transAxes, fontsize=11.5, va="top", ha="left",
                         wrap=True)
    title = fig.suptitle("", fontsize=18)
    fig.supxlabel(f"days since {start:%Y-%m-%d} (the episode's day 0)", fontsize=13)
    paths = []
    for fname, (sim, rec, label) in panels.items():
        if fname == "unemployment":
            sim_us = np.sum(sim * pop, axis=1) / pop.sum()
            rec_us = np.sum(rec * pop, axis=1) / pop.sum()
        else:
            sim_us, rec_us = np.sum(sim, axis=1), np.sum(rec, axis=1)
        for j, (ax, l_sim, l_rec) in enumerate(lines):
            l_sim.set_ydata(sim[:, j] if j < n else sim_us)
            l_rec.set_ydata(rec[:, j] if j < n else rec_us)
            ax.relim()
            ax.autoscale_view()
        title.set_text(f"{label}: simulated vs recorded, per state and for the USA")
        caption.set_text(_CAPTIONS[fname])
        path = os.path.join(out_dir, f"{prefix}{fname}.png")
        fig.savefig(path, dpi=dpi)
        paths.append(path)
    return paths
