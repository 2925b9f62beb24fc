"""Per-agent quantities over an episode: inventories, coin and labor (Foundation's ``breakdown``'s second figure)."""

from __future__ import annotations

import numpy as np

from jaxecon.plotting.logs import agent_series, check_dense_log, n_agents
from jaxecon.plotting.style import agent_color, new_figure, style

__all__ = ["plot_agent_states"]


def _names(dense_log, group):
    """Names under ``states[0]["0"][group]``, Coin last."""
    names = list(dense_log["states"][0]["0"].get(group, {}))
    return sorted(names, key=lambda k: (k == "Coin", names.index(k)))


def plot_agent_states(dense_log):
    """One panel per resource (inventory + escrow) and per endogenous quantity, one line per agent.

    Each resource panel (e.g. Wood, Stone, Coin, in inventory order, Coin
    last) shows ``inventory + escrow`` (what an agent owns, including what
    its open market orders hold), the endogenous panels (e.g. Labor) the
    accumulated amount; x is the timestep 0..T. One legend (agent index,
    colours of ``jaxecon.render.agent_colors``) for the figure.

    Returns:
        ``matplotlib.figure.Figure``.

    Raises:
        ValueError: not a dense log (``jaxecon.plotting.logs.check_dense_log``).
    """
    check_dense_log(dense_log)
    n = n_agents(dense_log)
    panels = [("inventory", r) for r in _names(dense_log, "inventory")]
    panels += [("endogenous", e) for e in _names(dense_log, "endogenous")]
    ts = np.arange(len(dense_log["states"]))
    ncols = min(len(panels), 4)
    nrows = -(-len(panels) // ncols)
    with style():
        fig, axes = new_figure(nrows, ncols, panel_size=(4.2, 3.4), sharex=True)
        for ax, (group, name) in zip(axes.flat, panels):
            y = agent_series(dense_log, group, name)
            if group == "inventory":
                y = y + agent_series(dense_log, "escrow", name)
                ax.set_title(f"{name} (inventory + escrow)")
            else:
                ax.set_title(f"{name} (accumulated)")
            for i in range(n):
                ax.plot(ts, y[:, i], color=agent_color(i, n), lw=1.6, label=f"agent {i}")
            ax.set_xlabel("timestep")
            ax.set_ylim(bottom=min(0.0, float(np.min(y))))
        for ax in list(axes.flat)[len(panels):]:
            ax.set_axis_off()
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside right center", title="agent")
        fig.suptitle("what each agent owns and its labor over the episode")
    return fig
