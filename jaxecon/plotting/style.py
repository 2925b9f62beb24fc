"""What the dense-log plots share: readable fonts, figures without ``pyplot``, agent colours, saving.

Every plot function of ``jaxecon.plotting`` builds its ``Figure`` inside
:func:`style` (matplotlib ``rc_context``: fonts of 11-15 points, a light grid)
with :func:`new_figure`, so that the global ``rcParams`` never change, and
returns it; :func:`save_figure` writes it.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

__all__ = ["RC_PARAMS", "agent_color", "new_figure", "save_figure", "step_bins", "style"]

#: matplotlib rcParams of the dense-log plots (the fonts a person can read at 100 dpi).
RC_PARAMS = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 15,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-4, 6),
}


@contextlib.contextmanager
def style():
    """``matplotlib.rc_context(RC_PARAMS)``: build figures inside it."""
    import matplotlib

    with matplotlib.rc_context(RC_PARAMS):
        yield


def new_figure(nrows: int, ncols: int, *, panel_size=(4.6, 3.4), dpi: int = 100, **subplot_kw):
    """A ``Figure`` (Agg canvas, constrained layout) with an ``[nrows, ncols]`` array of Axes.

    Returns:
        ``(fig, axes)``, ``axes`` an object array of shape ``(nrows, ncols)``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    return fig, axes


def agent_color(i: int, n: int):
    """Agent ``i``'s colour of ``n`` (``jaxecon.render.agent_colors``) as matplotlib RGB floats."""
    from jaxecon.render import agent_colors

    return tuple(agent_colors(n)[i] / 255.0)


def save_figure(fig, path, dpi: int | None = None) -> str:
    """Write ``fig`` to ``path`` (format from the suffix, e.g. ``.png``); returns ``str(path)``.

    Raises:
        ValueError: ``path``'s parent directory does not exist.
    """
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"path {path!r}: the directory {parent!r} does not exist")
    fig.savefig(path, dpi=dpi if dpi is not None else fig.dpi)
    return path


def step_bins(length: int, n_bins: int = 40) -> np.ndarray:
    """Edges of about ``n_bins`` equal bins of timesteps ``1..length`` (ints)."""
    width = max(1, int(np.ceil(length / n_bins)))
    return np.arange(0, length + width, width) + 0.5
