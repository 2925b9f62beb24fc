"""Every dense-log plot at once: :func:`breakdown` (figures) and :func:`save_plots` (PNG files).

Named after Foundation's tutorial ``breakdown`` (``tutorials/utils/plotting.py``),
which draws the same overview of one episode.
"""

from __future__ import annotations

import os

from jaxecon.plotting.agents import plot_agent_states
from jaxecon.plotting.logs import check_dense_log
from jaxecon.plotting.style import save_figure
from jaxecon.plotting.taxes import plot_taxes
from jaxecon.plotting.trades import plot_trades
from jaxecon.plotting.world import plot_world_over_time

__all__ = ["PLOTS", "breakdown", "save_plots"]

#: Plot name (also the PNG's stem) -> (plot function, the dense-log key it needs or None).
PLOTS = {
    "world_over_time": (plot_world_over_time, None),
    "agents": (plot_agent_states, None),
    "trades": (plot_trades, "Trade"),
    "taxes": (plot_taxes, "PeriodicTax"),
}


def _names(dense_log, names):
    if names is None:
        return [k for k, (_, need) in PLOTS.items() if need is None or need in dense_log]
    if isinstance(names, str):
        names = [names]
    unknown = [k for k in names if k not in PLOTS]
    if unknown:
        raise ValueError(f"names: unknown plots {unknown}; the plots are {list(PLOTS)}")
    return list(names)


def breakdown(dense_log, names=None) -> dict:
    """The figures of ``PLOTS`` for ``dense_log``.

    Args:
        dense_log: a dense log (``jaxecon.plotting.logs``).
        names: plot names (keys of ``PLOTS``), or None: every plot whose
            dense-log key is present (no ``trades`` without a ``"Trade"`` log).

    Returns:
        ``{name: matplotlib.figure.Figure}`` in ``PLOTS`` order.

    Raises:
        ValueError: not a dense log, an unknown name, or a named plot whose
            log is missing.
    """
    check_dense_log(dense_log)
    return {k: PLOTS[k][0](dense_log) for k in _names(dense_log, names)}


def save_plots(dense_log, out_dir, names=None, *, prefix: str = "", dpi: int = 100) -> list:
    """Write :func:`breakdown`'s figures to ``<out_dir>/<prefix><name>.png``.

    ``out_dir`` is created if missing.

    Returns:
        The paths written (``str``), in ``PLOTS`` order.

    Raises:
        ValueError: as :func:`breakdown`.
    """
    names = _names(check_dense_log(dense_log), names)
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name in names:
        fig = PLOTS[name][0](dense_log)
        paths.append(save_figure(fig, os.path.join(os.fspath(out_dir), f"{prefix}{name}.png"), dpi=dpi))
    return paths
