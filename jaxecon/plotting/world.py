"""The world over time: a grid of world snapshots from a dense log.

Foundation's tutorials draw the same thing (``tutorials/utils/plotting.py``:
``plot_log_state``, ``vis_world_range``); here each snapshot is
``jaxecon.render.draw_world`` (agents' indices written on them) and one
legend of the layers serves the whole grid.
"""

from __future__ import annotations

import numpy as np

from jaxecon.plotting.logs import check_dense_log, n_agents, snapshot_timesteps
from jaxecon.plotting.style import new_figure, style
from jaxecon.render import legend_layers, add_world_legend, draw_world, world_title

__all__ = ["log_world_at", "plot_log_state", "plot_world_over_time"]


def log_world_at(dense_log, t: int) -> tuple:
    """``(maps, loc)`` of timestep ``t``: the world snapshot and int ``[n, 2]`` locations.

    Raises:
        ValueError: ``t`` is outside ``0..T`` or has no world snapshot (lists
            the timesteps that have one).
    """
    world = dense_log["world"]
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < len(world):
        raise ValueError(f"t must be a timestep in 0..{len(world) - 1}, got {t!r}")
    if not world[t]:
        raise ValueError(f"t={t} has no world snapshot; the snapshots are at {snapshot_timesteps(dense_log)}")
    state = dense_log["states"][t]
    loc = np.array([state[str(i)]["loc"] for i in range(n_agents(dense_log))], np.int64).reshape(-1, 2)
    return world[t], loc


def plot_log_state(dense_log, t: int, ax, *, scale: int = 8, label_agents: bool = True):
    """Draw timestep ``t`` of ``dense_log`` on ``ax`` (Foundation's ``plot_log_state``).

    Returns:
        ``(image, labels)`` of ``jaxecon.render.draw_world``.

    Raises:
        ValueError: as :func:`log_world_at`.
    """
    maps, loc = log_world_at(dense_log, t)
    return draw_world(ax, maps, None, loc, scale=scale, label_agents=label_agents)


def _pick(timesteps, n):
    """Up to ``n`` of ``timesteps``, evenly spread, first and last included."""
    if len(timesteps) <= n:
        return list(timesteps)
    idx = np.unique(np.round(np.linspace(0, len(timesteps) - 1, n)).astype(int))
    return [timesteps[i] for i in idx]


def plot_world_over_time(dense_log, n_snapshots: int = 6, ncols: int = 3):
    """A grid of world snapshots, evenly spread over the episode, with one legend.

    Args:
        dense_log: a dense log (``jaxecon.plotting.logs``).
        n_snapshots: int >= 1, at most this many snapshots (of those the log
            has: every ``world_dense_log_frequency`` timesteps and the last).
        ncols: int >= 1 panels per row.

    Returns:
        ``matplotlib.figure.Figure``; panel titles give the timestep, the
        figure title the env index and episode (when the log has them).

    Raises:
        ValueError: not a dense log, or a bad ``n_snapshots`` / ``ncols``.
    """
    check_dense_log(dense_log)
    for name, v in (("n_snapshots", n_snapshots), ("ncols", ncols)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    ts = _pick(snapshot_timesteps(dense_log), int(n_snapshots))
    ncols = min(int(ncols), len(ts))
    nrows = -(-len(ts) // ncols)
    n = n_agents(dense_log)
    with style():
        fig, axes = new_figure(nrows, ncols, panel_size=(3.6, 3.8))
        names, unowned = set(), False
        for ax, t in zip(axes.flat, ts):
            plot_log_state(dense_log, t, ax)
            ax.set_title(f"timestep {t}")
            layer_names, layer_unowned = legend_layers(dense_log["world"][t], None)
            names.update(layer_names)
            unowned = unowned or layer_unowned
        for ax in list(axes.flat)[len(ts):]:
            ax.set_axis_off()
        add_world_legend(fig, n, tuple(names), unowned, loc="outside right center")
        head = world_title(None, dense_log.get("env_index"), dense_log.get("episode"))
        fig.suptitle("the world over time" + ("" if head == "world" else f" ({head})"))
        fig.supxlabel("each agent is drawn as its index in its colour; houses take their owner's colour",
                      fontsize=10)
    return fig
