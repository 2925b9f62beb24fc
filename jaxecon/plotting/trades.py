"""The market over an episode: prices and volumes of the executed trades, per resource.

Reads the ``"Trade"`` log of ``ContinuousDoubleAuction`` (Foundation's
``breakdown`` draws the trades per agent; here they are per resource: what
the market did).
"""

from __future__ import annotations

import numpy as np

from jaxecon.plotting.logs import check_dense_log, trades_by_commodity
from jaxecon.plotting.style import new_figure, step_bins, style
from jaxecon.render import COLORS

__all__ = ["plot_trades"]


def _commodities(dense_log, trades):
    """The traded resources: those with trades, else the agents' non-Coin inventory names."""
    names = [k for k in dense_log["states"][0]["0"]["inventory"] if k != "Coin"]
    return sorted(set(names) | set(trades), key=lambda k: (k not in names, names.index(k) if k in names else 0, k))


def _color(name):
    c = COLORS.get(name)
    return "tab:purple" if c is None else tuple(np.asarray(c) / 255.0)


def plot_trades(dense_log, n_bins: int = 40):
    """Per resource: each trade's price over time and the number of trades per time bin.

    Top row: every executed trade as a dot (x = timestep after its step, y =
    price in coin) and the mean price per bin; bottom row: trades per bin
    (bars). A resource without trades says so in its panels.

    Args:
        dense_log: a dense log with a ``"Trade"`` list.
        n_bins: int >= 1, about this many equal bins over the episode.

    Returns:
        ``matplotlib.figure.Figure``.

    Raises:
        ValueError: not a dense log, no ``"Trade"`` list (the economy has no
            ``ContinuousDoubleAuction``), or a bad ``n_bins``.
    """
    from matplotlib.ticker import MaxNLocator

    check_dense_log(dense_log)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an int >= 1, got {n_bins!r}")
    trades = trades_by_commodity(dense_log)
    names = _commodities(dense_log, trades)
    T = len(dense_log["states"]) - 1
    edges = step_bins(T, int(n_bins))
    centers = 0.5 * (edges[:-1] + edges[1:])
    with style():
        fig, axes = new_figure(2, len(names), panel_size=(5.2, 3.2), sharex=True)
        for j, name in enumerate(names):
            top, bottom = axes[0, j], axes[1, j]
            color = _color(name)
            tr = trades.get(name)
            if tr is None:
                for ax in (top, bottom):
                    ax.text(0.5, 0.5, f"no {name} trades", transform=ax.transAxes, ha="center",
                            va="center", fontsize=12, color="0.4")
            else:
                top.plot(tr["t"], tr["price"], "o", ms=4, alpha=0.45, color=color, label="one trade")
                count, _ = np.histogram(tr["t"], edges)
                total, _ = np.histogram(tr["t"], edges, weights=tr["price"])
                mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
                top.plot(centers, mean, "-", lw=2.2, color="black", label="mean per bin")
                top.legend(loc="upper left")
                bottom.bar(centers, count, width=np.diff(edges) * 0.9, color=color,
                           edgecolor="black", linewidth=0.4, label=f"{name} trades per bin")
                bottom.legend(loc="upper left")
                top.set_ylim(bottom=0)
                bottom.set_ylim(0, max(1, count.max()) * 1.25)
            top.set_title(f"{name}: price of each trade")
            top.set_ylabel("price (coin)")
            width = int(np.diff(edges)[0])
            bottom.set_title(f"{name}: trades per " + ("timestep" if width == 1 else f"{width} timesteps"))
            bottom.set_ylabel("trades")
            bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
            bottom.set_xlabel("timestep")
            bottom.set_xlim(0, T)
        fig.suptitle(f"the market: {sum(len(v['t']) for v in trades.values())} trades in {T} steps")
    return fig
