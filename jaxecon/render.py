"""World-map rendering: Foundation maps -> an RGB image (numpy + matplotlib).

The picture follows the spirit of Foundation's tutorial plots
(``tutorials/utils/plotting.py``: ``plot_map``): resources and landmarks in
their entity colours on a plain background, houses in their owner's colour,
agents coloured with matplotlib's ``jet`` colormap sampled at ``n`` points
(agent ``i`` and the houses it owns share colour ``i``).  Unlike the tutorial
it draws into an array instead of an Axes, so it works headless, inside
notebooks, in video writers and as an RGB observation.

Layers, bottom to top, per cell: grass background; resource source blocks
(a faint tint of the resource colour); Stone (grey); Wood (green, with a
brown trunk pixel block when ``scale >= 4``); Water (blue); Houses (owner
colour, unowned = Foundation's House magenta, with a dark outline when
``scale >= 4``); agents (a square in the agent colour with a white border,
inset in its cell).  Resource and house opacity is ``clip(health, 0, 1)``.

Example::

    from jaxecon.render import render_world, save_png
    rgb = render_world({"Wood": wood, "Stone": stone, "Water": water,
                        "House": house_health}, owner=house_owner, loc=loc)
    save_png(rgb, "world.png")

Nothing here imports jax; jax arrays are accepted (converted with
``np.asarray``).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["MAP_NAMES", "COLORS", "agent_colors", "render_world", "save_png"]

#: Map names ``render_world`` draws (Foundation's names); other keys are ignored.
MAP_NAMES = ("Wood", "Stone", "Water", "House", "WoodSourceBlock", "StoneSourceBlock")

#: RGB colours (uint8) of the layers.
COLORS = {
    "background": np.array([196, 222, 160], np.uint8),  # grass
    "Wood": np.array([46, 120, 58], np.uint8),  # tree canopy
    "WoodTrunk": np.array([110, 72, 38], np.uint8),  # brown
    "Stone": np.array([140, 140, 146], np.uint8),  # grey
    "Water": np.array([50, 50, 250], np.uint8),  # Foundation's Water colour
    "House": np.array([220, 20, 220], np.uint8),  # Foundation's House (unowned)
    "HouseOutline": np.array([40, 30, 30], np.uint8),
    "AgentBorder": np.array([255, 255, 255], np.uint8),
}
# Source blocks: the resource colour blended into the background at this weight.
_SOURCE_TINT = 0.3


def agent_colors(n: int) -> np.ndarray:
    """``jet`` colormap sampled at ``n`` points, like Foundation's tutorials.

    Returns:
        uint8 array of shape ``(n, 3)``; row ``i`` is agent ``i``'s colour.
    """
    import matplotlib

    n = max(int(n), 1)
    cmap = matplotlib.colormaps["jet"].resampled(n)
    rgb = np.array([cmap(i)[:3] for i in range(n)], dtype=np.float64)
    return np.round(rgb * 255).astype(np.uint8)


def _as_2d(name: str, arr, shape=None) -> np.ndarray:
    a = np.asarray(arr)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (H, W) array, got shape {a.shape}")
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(
            f"{name} has shape {a.shape}, but the world is {tuple(shape)} (H, W)"
        )
    return a


def _blend(img: np.ndarray, color: np.ndarray, alpha: np.ndarray) -> None:
    """In place: img = (1 - alpha) * img + alpha * color (alpha (H, W))."""
    a = alpha[..., None]
    img *= 1.0 - a
    img += a * color.astype(np.float64)


def render_world(
    maps: dict,
    owner: np.ndarray | None = None,
    loc: np.ndarray | None = None,
    scale: int = 16,
) -> np.ndarray:
    """Render a world map to an RGB image.

    Args:
        maps: ``{name: array (H, W)}`` keyed by Foundation map names --
            ``"Wood"``, ``"Stone"`` (resource health, float or int >= 0),
            ``"Water"`` (0/1), ``"House"`` (house health, 0/1),
            ``"WoodSourceBlock"``, ``"StoneSourceBlock"`` (0/1).  Any may be
            absent; other keys are ignored.  ``"House"`` may also be
            Foundation's dense-log form ``{"owner": (H, W), "health": (H, W)}``.
            All maps must share one shape ``(H, W)``.
        owner: int array ``(H, W)``, the House owner map (agent index, ``-1``
            = unowned), or None (every house drawn as unowned; taken from
            ``maps["House"]["owner"]`` when that dict form is given).
        loc: int array ``(n_agents, 2)`` of ``[row, col]`` per agent, or None
            (no agents drawn).  Rows with a negative entry (Foundation's
            ``[-1, -1]`` "not placed") are skipped.
        scale: pixels per cell (int >= 1).

    Returns:
        uint8 array of shape ``(H * scale, W * scale, 3)``.

    Raises:
        ValueError: naming the offending argument, for maps that are not 2-D
            or disagree in shape, an ``owner`` of the wrong shape, a ``loc``
            that is not ``(n, 2)`` or lies outside the world, a bad
            ``scale``, or when no argument fixes the world shape.
    """
    if not isinstance(maps, dict):
        raise ValueError(f"maps must be a dict of (H, W) arrays, got {type(maps).__name__}")
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or scale < 1:
        raise ValueError(f"scale must be an int >= 1, got {scale!r}")
    scale = int(scale)

    # --- collect and validate inputs -------------------------------------
    layers: dict[str, np.ndarray] = {}
    shape = None
    house_owner = None
    for name in MAP_NAMES:
        if name not in maps or maps[name] is None:
            continue
        value = maps[name]
        if name == "House" and isinstance(value, dict):
            if "health" not in value:
                raise ValueError("maps['House'] as a dict needs a 'health' entry")
            if "owner" in value:
                house_owner = value["owner"]
            value = value["health"]
        a = _as_2d(f"maps[{name!r}]", value, shape)
        shape = a.shape
        layers[name] = a.astype(np.float64)

    if owner is None:
        owner = house_owner
        owner_name = "maps['House']['owner']"
    else:
        owner_name = "owner"
    if owner is not None:
        owner = _as_2d(owner_name, owner, shape)
        if not (np.issubdtype(owner.dtype, np.integer) or owner.dtype == bool):
            if not np.all(owner == np.round(owner)):
                raise ValueError(f"{owner_name} must hold integer agent indices")
        owner = owner.astype(np.int64)
        shape = owner.shape

    if shape is None:
        raise ValueError(
            "cannot infer the world shape: maps has none of "
            f"{list(MAP_NAMES)} and owner is None"
        )
    height, width = shape

    if loc is not None:
        loc = np.asarray(loc)
        if loc.ndim != 2 or loc.shape[1] != 2:
            raise ValueError(f"loc must have shape (n_agents, 2), got {loc.shape}")
        if loc.size and not np.all(loc == np.round(loc)):
            raise ValueError("loc must hold integer [row, col] positions")
        loc = loc.astype(np.int64)
        placed = np.all(loc >= 0, axis=1)
        bad = placed & ((loc[:, 0] >= height) | (loc[:, 1] >= width))
        if np.any(bad):
            raise ValueError(
                f"loc rows {np.flatnonzero(bad).tolist()} lie outside the "
                f"{height}x{width} world: {loc[bad].tolist()}"
            )

    n_colors = 1
    if loc is not None:
        n_colors = max(n_colors, loc.shape[0])
    if owner is not None and owner.size:
        n_colors = max(n_colors, int(owner.max()) + 1)
    palette = agent_colors(n_colors)

    # --- cell-level layers -------------------------------------------------
    img = np.empty((height, width, 3), np.float64)
    img[:] = COLORS["background"]
    for src, res in (("StoneSourceBlock", "Stone"), ("WoodSourceBlock", "Wood")):
        if src in layers:
            _blend(img, COLORS[res], _SOURCE_TINT * (layers[src] > 0))
    alpha = {}
    for name in ("Stone", "Wood"):
        if name in layers:
            alpha[name] = np.clip(layers[name], 0.0, 1.0)
            _blend(img, COLORS[name], alpha[name])
    if "Water" in layers:
        _blend(img, COLORS["Water"], np.clip(layers["Water"], 0.0, 1.0))

    house_alpha = None
    if "House" in layers:
        house_alpha = np.clip(layers["House"], 0.0, 1.0)
        house_rgb = np.empty((height, width, 3), np.float64)
        house_rgb[:] = COLORS["House"]
        if owner is not None:
            owned = owner >= 0
            house_rgb[owned] = palette[owner[owned]]
        a = house_alpha[..., None]
        img = (1.0 - a) * img + a * house_rgb

    # --- upscale and per-pixel decorations -----------------------------------
    out = np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
    if scale >= 4:
        if "Wood" in alpha:
            # brown trunk: a block at the bottom centre of each wood cell
            trunk = np.zeros((scale, scale), bool)
            hw = max(scale // 8, 1)
            trunk[(5 * scale) // 8 : scale - scale // 8, scale // 2 - hw : scale // 2 + hw] = True
            _blend_cells(out, alpha["Wood"], trunk, COLORS["WoodTrunk"], scale)
        if house_alpha is not None:
            edge = np.zeros((scale, scale), bool)
            t = max(scale // 16, 1)
            edge[:t, :] = edge[-t:, :] = edge[:, :t] = edge[:, -t:] = True
            _blend_cells(out, house_alpha, edge, COLORS["HouseOutline"], scale)

    if loc is not None:
        inset = scale // 8 if scale >= 4 else 0
        border = max(scale // 16, 1) if scale >= 4 else 0
        for i, (r, c) in enumerate(loc):
            if r < 0 or c < 0:
                continue
            r0, c0 = r * scale + inset, c * scale + inset
            r1, c1 = (r + 1) * scale - inset, (c + 1) * scale - inset
            out[r0:r1, c0:c1] = COLORS["AgentBorder"]
            out[r0 + border : r1 - border, c0 + border : c1 - border] = palette[i]

    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def _blend_cells(out, cell_alpha, pattern, color, scale) -> None:
    """Blend `color` into `out` on `pattern` pixels of cells with alpha > 0."""
    height, width = cell_alpha.shape
    px_alpha = np.repeat(np.repeat(cell_alpha, scale, axis=0), scale, axis=1)
    px_alpha = px_alpha * np.tile(pattern, (height, width))
    _blend(out, color, px_alpha)


def save_png(rgb: np.ndarray, path: str | os.PathLike) -> str:
    """Write an RGB image to a PNG file.

    Args:
        rgb: uint8 array ``(H, W, 3)`` (e.g. from :func:`render_world`).
        path: output file path (parent directory must exist).

    Returns:
        ``str(path)``.

    Raises:
        ValueError: if ``rgb`` is not a uint8 ``(H, W, 3)`` array.
    """
    import matplotlib.image

    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(
            f"rgb must be a uint8 (H, W, 3) array, got dtype {rgb.dtype} shape {rgb.shape}"
        )
    path = os.fspath(path)
    matplotlib.image.imsave(path, rgb, format="png")
    return path
