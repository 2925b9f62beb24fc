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

A picture a person can read: :func:`world_figure` (a matplotlib
``Figure``) and :func:`render_world_annotated` (its pixels) draw the same
raster, pixel for pixel, with each agent's index written on it, a title
naming the env index, the episode and the timestep, and a legend of every
layer (resources, water, source blocks, houses by owner, agents by index).
:func:`draw_world` and :func:`legend_entries` are the pieces, for your own
axes (``jaxecon.plotting`` uses them for its grids of snapshots).

Nothing here imports jax; jax arrays are accepted (converted with
``np.asarray``). Matplotlib is imported inside the functions that use it,
and figures are built without ``pyplot`` (no global state, any backend).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = [
    "COLORS",
    "LEGEND_LABELS",
    "MAP_NAMES",
    "SOURCE_TINT",
    "AgentLabel",
    "add_world_legend",
    "agent_colors",
    "draw_world",
    "figure_to_rgb",
    "legend_entries",
    "legend_layers",
    "render_world",
    "render_world_annotated",
    "save_png",
    "source_block_color",
    "world_figure",
    "world_title",
]

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
#: Source blocks: the resource colour blended into the background at this weight.
SOURCE_TINT = 0.3


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


def _check_scale(scale) -> int:
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or scale < 1:
        raise ValueError(f"scale must be an int >= 1, got {scale!r}")
    return int(scale)


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
    scale = _check_scale(scale)

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
            _blend(img, COLORS[res], SOURCE_TINT * (layers[src] > 0))
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
    # A cell's pixels fall in four classes: plain, wood trunk, house outline,
    # both. Each class's colour is blended at the cell level (the same
    # operations, in the same order, as blending every pixel), rounded once,
    # and the upscaled image gathers its pixels from the four.
    classes = np.zeros((scale, scale), np.int64)
    stack = [img, img, img, img]
    if scale >= 4:
        if "Wood" in alpha:
            # brown trunk: a block at the bottom centre of each wood cell
            hw = max(scale // 8, 1)
            classes[(5 * scale) // 8 : scale - scale // 8, scale // 2 - hw : scale // 2 + hw] += 1
            trunk = _blended(img, COLORS["WoodTrunk"], alpha["Wood"])
            stack[1] = stack[3] = trunk
        if house_alpha is not None:
            t = max(scale // 16, 1)
            edge = np.zeros((scale, scale), bool)
            edge[:t, :] = edge[-t:, :] = edge[:, :t] = edge[:, -t:] = True
            classes[edge] += 2
            stack[2] = _blended(stack[0], COLORS["HouseOutline"], house_alpha)
            stack[3] = _blended(stack[1], COLORS["HouseOutline"], house_alpha)
    cells = np.clip(np.round(np.stack(stack)), 0, 255).astype(np.uint8)  # [4, H, W, 3]
    rows = np.repeat(np.arange(height), scale)
    cols = np.repeat(np.arange(width), scale)
    out = cells[np.tile(classes, (height, width)), rows[:, None], cols[None, :]]

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

    return out


def _blended(img: np.ndarray, color: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """A blended copy: ``(1 - alpha) * img + alpha * color`` (as :func:`_blend` computes it)."""
    out = img.copy()
    _blend(out, color, alpha)
    return out


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


# --------------------------------------------------------------------------
# A picture a person can read: title, agent indices, legend
# --------------------------------------------------------------------------

#: Legend label of each map layer.
LEGEND_LABELS = {
    "Wood": "Wood",
    "Stone": "Stone",
    "WoodSourceBlock": "Wood source block (Wood regrows)",
    "StoneSourceBlock": "Stone source block (Stone regrows)",
    "Water": "Water (cannot be entered)",
    "House": "House without owner",
}
# Legend order of the map layers; houses by owner and agents follow.
_LEGEND_ORDER = ("Wood", "Stone", "WoodSourceBlock", "StoneSourceBlock", "Water")
# Font sizes (points) of the annotated picture.
_TITLE_SIZE = 12
_LEGEND_SIZE = 10


def source_block_color(resource: str) -> np.ndarray:
    """uint8 ``(3,)``: the colour ``render_world`` gives a source block of
    ``resource`` ("Wood" or "Stone") on an otherwise empty cell.

    Raises:
        ValueError: ``resource`` is not "Wood" or "Stone".
    """
    if resource not in ("Wood", "Stone"):
        raise ValueError(f"resource must be 'Wood' or 'Stone', got {resource!r}")
    rgb = (1.0 - SOURCE_TINT) * COLORS["background"] + SOURCE_TINT * COLORS[resource].astype(np.float64)
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8)


def world_title(timestep=None, env_index=None, episode=None, episode_length=None) -> str:
    """The title of a world picture, e.g. ``"env 0, episode 1, timestep 1000 of 1000"``.

    Any argument may be None (left out). ``episode_length`` is shown only with
    ``timestep``.
    """
    parts = []
    if env_index is not None:
        parts.append(f"env {int(env_index)}")
    if episode is not None:
        parts.append(f"episode {int(episode)}")
    if timestep is not None:
        t = f"timestep {int(timestep)}"
        if episode_length is not None:
            t += f" of {int(episode_length)}"
        parts.append(t)
    return ", ".join(parts) if parts else "world"


def legend_entries(n_agents: int, map_names=MAP_NAMES, unowned_house: bool = False) -> tuple:
    """Matplotlib legend handles and labels of a world picture.

    One entry per map layer in ``map_names`` (resources, source blocks,
    water; a "House without owner" entry when ``unowned_house``), then one
    per agent: its index as :func:`draw_world` writes it on the map (an
    :class:`AgentLabel` handle: the digit in the agent's colour, outlined)
    beside its houses (a full cell in the same colour with a dark outline)
    when ``"House"`` is in ``map_names``. Draw them with
    :func:`add_world_legend` (it sets the handlers, and the map's background
    behind the entries).

    Args:
        n_agents: int >= 0, the number of agents (palette :func:`agent_colors`).
        map_names: the map layers present (any of ``MAP_NAMES``; others are
            ignored).
        unowned_house: whether to list houses without an owner.

    Returns:
        ``(handles, labels)``: two lists of equal length.

    Raises:
        ValueError: ``n_agents`` is not an int >= 0.
    """
    from matplotlib.patches import Rectangle

    if isinstance(n_agents, bool) or not isinstance(n_agents, (int, np.integer)) or n_agents < 0:
        raise ValueError(f"n_agents must be an int >= 0, got {n_agents!r}")
    present = set(map_names)

    def cell(color, edge=None):
        return Rectangle((0, 0), 1, 1, facecolor=np.asarray(color) / 255.0,
                         edgecolor="none" if edge is None else np.asarray(edge) / 255.0, linewidth=1.2)

    handles, labels = [], []
    for name in _LEGEND_ORDER:
        if name not in present:
            continue
        if name.endswith("SourceBlock"):
            color = source_block_color(name[: -len("SourceBlock")])
        else:
            color = COLORS[name]
        handles.append(cell(color))
        labels.append(LEGEND_LABELS[name])
    houses = "House" in present
    if houses and unowned_house:
        handles.append(cell(COLORS["House"], COLORS["HouseOutline"]))
        labels.append(LEGEND_LABELS["House"])
    for i, color in enumerate(agent_colors(n_agents)[:n_agents]):
        agent = AgentLabel(i, color / 255.0)
        if houses:
            handles.append((agent, cell(color, COLORS["HouseOutline"])))
            labels.append(f"agent {i} and its houses")
        else:
            handles.append(agent)
            labels.append(f"agent {i}")
    return handles, labels


def _agent_label_style(color, size: float) -> dict:
    """Text properties of an agent's index: bold, in ``color``, outlined in black and white."""
    import matplotlib.patheffects as pe

    effects = [pe.withStroke(linewidth=max(size / 4.5, 2.5), foreground="black"),
               pe.withStroke(linewidth=max(size / 9.0, 1.3), foreground="white")]
    return {"fontsize": size, "color": color, "fontweight": "bold", "path_effects": effects}


class AgentLabel:
    """Legend handle of an agent: its index as :func:`draw_world` writes it on the map.

    Args:
        index: the agent's index; color: its RGB colour (floats 0..1).
    """

    def __init__(self, index: int, color):
        self.index = int(index)
        self.color = tuple(float(x) for x in color)

    def get_label(self):  # what matplotlib's legend asks of a handle
        return f"agent {self.index}"


def _agent_label_handler():
    """A matplotlib legend handler drawing :class:`AgentLabel` handles as their outlined digit."""
    from matplotlib.legend_handler import HandlerBase
    from matplotlib.text import Text

    class AgentLabelHandler(HandlerBase):
        def create_artists(self, legend, orig_handle, xdescent, ydescent, width, height, fontsize, trans):
            text = Text(width / 2 - xdescent, height / 2 - ydescent, str(orig_handle.index), ha="center",
                        va="center", transform=trans, **_agent_label_style(orig_handle.color, 1.35 * fontsize))
            return [text]

    return AgentLabelHandler()


def add_world_legend(parent, n_agents: int, map_names=MAP_NAMES, unowned_house: bool = False,
                     **legend_kwargs):
    """Add the :func:`legend_entries` legend to ``parent`` (an Axes or a Figure).

    The legend's face is the map's grass colour, so that every entry looks as
    it does on the map. ``legend_kwargs`` go to ``parent.legend`` (e.g.
    ``loc``, ``bbox_to_anchor``, ``ncol``, ``fontsize``).

    Returns:
        The matplotlib ``Legend``.
    """
    from matplotlib.legend_handler import HandlerTuple

    handles, labels = legend_entries(n_agents, map_names, unowned_house)
    kwargs = {"fontsize": _LEGEND_SIZE, "framealpha": 1.0, "handlelength": 2.6,
              "facecolor": tuple(COLORS["background"] / 255.0), "edgecolor": "0.3"}
    kwargs.update(legend_kwargs)
    handler_map = {tuple: HandlerTuple(ndivide=None, pad=0.4), AgentLabel: _agent_label_handler()}
    return parent.legend(handles, labels, handler_map=handler_map,
                         **kwargs)


def legend_layers(maps: dict, owner=None) -> tuple:
    """What the legend of a world lists: ``(map names present, whether a house has no owner)``.

    Args:
        maps, owner: as :func:`render_world`.
    Returns:
        ``(tuple of MAP_NAMES in maps, bool)``: the arguments ``map_names``
        and ``unowned_house`` of :func:`legend_entries`.
    """
    names = tuple(k for k in MAP_NAMES if maps.get(k) is not None)
    unowned = False
    if "House" in names:
        house = maps["House"]
        health = np.asarray(house["health"] if isinstance(house, dict) else house)
        if owner is None and isinstance(house, dict):
            owner = house.get("owner")
        built = health > 0
        unowned = bool(np.any(built)) if owner is None else bool(np.any(built & (np.asarray(owner) < 0)))
    return names, unowned


def draw_world(ax, maps: dict, owner=None, loc=None, *, scale: int = 8, label_agents: bool = True):
    """Draw ``render_world(maps, owner, loc, scale)`` on a matplotlib Axes.

    Data coordinates are cells: x = column, y = row (row 0 at the top). Ticks
    are removed. With ``label_agents``, each placed agent's index is written
    over it in the agent's colour, bold, outlined in black and white, 1.5
    cells tall (7 to 20 points), so that agents stand out from their houses
    in any panel size; :func:`legend_entries` shows the same digits.

    Args:
        ax: a matplotlib Axes.
        maps, owner, loc, scale: as :func:`render_world`.
        label_agents: write the agents' indices.

    Returns:
        ``(image, labels)``: the ``AxesImage`` and the list of ``Text``
        labels (one per row of ``loc``, hidden for unplaced agents; empty
        without ``loc`` or ``label_agents``).

    Raises:
        ValueError: as :func:`render_world`.
    """
    rgb = render_world(maps, owner, loc, scale=scale)
    height, width = rgb.shape[0] // scale, rgb.shape[1] // scale
    image = ax.imshow(rgb, interpolation="nearest", aspect="auto",
                      extent=(-0.5, width - 0.5, height - 0.5, -0.5))
    ax.set_xticks([])
    ax.set_yticks([])
    labels = []
    if loc is not None and label_agents:
        fig = ax.get_figure()
        cell_pt = ax.get_position().height * fig.get_figheight() * 72.0 / height
        palette = agent_colors(len(loc))
        size = float(np.clip(1.5 * cell_pt, 7.0, 20.0))
        for i, (r, c) in enumerate(np.asarray(loc)):
            text = ax.text(c, r, str(i), ha="center", va="center_baseline",
                           **_agent_label_style(palette[i] / 255.0, size))
            text.set_visible(bool(r >= 0 and c >= 0))
            labels.append(text)
    return image, labels


def world_figure(
    maps: dict,
    owner=None,
    loc=None,
    *,
    timestep=None,
    env_index=None,
    episode=None,
    episode_length=None,
    scale: int = 16,
    dpi: int = 100,
    label_agents: bool = True,
):
    """A matplotlib ``Figure`` of the world: the map, a title and a legend.

    The map is ``render_world(maps, owner, loc, scale)`` shown pixel for
    pixel (one image pixel per figure pixel at ``dpi``), with the agents'
    indices written on them (``label_agents``), the title
    :func:`world_title` above it and the :func:`add_world_legend` legend to
    its right (two columns past 14 entries). The figure's size follows:
    both sides are multiples of 16 pixels (video encoders' macro blocks).
    Built without ``pyplot``, so nothing global changes and nothing needs
    closing.

    Args:
        maps, owner, loc, scale: as :func:`render_world`.
        timestep, env_index, episode, episode_length: the title's parts
            (:func:`world_title`; None leaves a part out).
        dpi: figure resolution (dots per inch), an int >= 1.
        label_agents: write each agent's index on it.

    Returns:
        ``matplotlib.figure.Figure`` with an Agg canvas; its first Axes is
        the map (``fig.axes[0]``).

    Raises:
        ValueError: as :func:`render_world`, or a bad ``dpi``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if isinstance(dpi, bool) or not isinstance(dpi, (int, np.integer)) or dpi < 1:
        raise ValueError(f"dpi must be an int >= 1, got {dpi!r}")
    scale = _check_scale(scale)
    rgb_shape = render_world(maps, owner, None, scale=1).shape  # validates, gives (H, W)
    height, width = rgb_shape[0], rgb_shape[1]
    map_w, map_h = width * scale, height * scale
    pad, gap, title_h = 12, 14, int(2.4 * _TITLE_SIZE * dpi / 72)

    fig = Figure(dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    names, unowned = legend_layers(maps, owner)
    if owner is None and isinstance(maps.get("House"), dict):
        owner = maps["House"].get("owner")
    n_agents = 0 if loc is None else int(np.asarray(loc).shape[0])
    if owner is not None:
        n_agents = max(n_agents, int(np.max(np.asarray(owner), initial=-1)) + 1)
    n_entries = len(legend_entries(n_agents, names, unowned)[1])

    def layout(fig_w, fig_h):
        fig.set_size_inches(fig_w / dpi, fig_h / dpi)
        return [pad / fig_w, (fig_h - title_h - map_h) / fig_h, map_w / fig_w, map_h / fig_h]

    fig_w, fig_h = 2 * pad + map_w, title_h + map_h + pad
    ax = fig.add_axes(layout(fig_w, fig_h))
    for spine in ax.spines.values():
        spine.set_edgecolor("0.3")
    legend = add_world_legend(ax, n_agents, names, unowned, loc="upper left",
                              bbox_to_anchor=(1.0 + gap / map_w, 1.0), borderaxespad=0.0,
                              ncol=1 if n_entries <= 14 else 2)
    box = legend.get_window_extent(canvas.get_renderer())
    fig_w = -(-int(2 * pad + map_w + gap + box.width + 2) // 16) * 16
    fig_h = -(-int(title_h + max(map_h, box.height + 2) + pad) // 16) * 16
    ax.set_position(layout(fig_w, fig_h))
    draw_world(ax, maps, owner, loc, scale=scale, label_agents=label_agents)
    fig.suptitle(world_title(timestep, env_index, episode, episode_length), fontsize=_TITLE_SIZE,
                 x=pad / fig_w, y=1.0 - 0.3 * title_h / fig_h, ha="left", va="top")
    return fig


def figure_to_rgb(fig) -> np.ndarray:
    """Draw a matplotlib ``Figure`` with Agg and return its pixels.

    Returns:
        uint8 array ``(height, width, 3)`` (the figure's size in pixels).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return np.array(canvas.buffer_rgba())[..., :3]


def render_world_annotated(maps: dict, owner=None, loc=None, **kwargs) -> np.ndarray:
    """The pixels of :func:`world_figure` (map, agent indices, title, legend).

    Args:
        maps, owner, loc: as :func:`render_world`.
        **kwargs: :func:`world_figure`'s keyword arguments (``timestep``,
            ``env_index``, ``episode``, ``episode_length``, ``scale``,
            ``dpi``, ``label_agents``).

    Returns:
        uint8 array ``(height, width, 3)``, both multiples of 16.

    Raises:
        ValueError: as :func:`world_figure`; ``TypeError`` for an unknown
            keyword.
    """
    return figure_to_rgb(world_figure(maps, owner, loc, **kwargs))
