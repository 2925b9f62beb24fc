"""Jittable world -> RGB frames: ``jaxecon.render``'s picture in JAX, whole-world and egocentric.

``render_frame`` draws the same picture as ``jaxecon.render.render_world``
(same layers, same colours, same per-pixel decorations), but as array code
over the whole grid, so it runs inside ``jax.jit`` / ``jax.vmap`` with no
host work: grass background; resource source blocks tinted with the
resource colour; Stone, Wood and Water blended with opacity
``clip(health, 0, 1)``; houses in their owner's colour (unowned: House
magenta); with ``scale >= 4`` a brown trunk on wood cells and a dark house
outline; agents as squares in their ``jet`` colour with a white border,
inset in their cell. The colour table (``jaxecon.render.COLORS``), the
source-block tint and the agent palette (``jaxecon.render.agent_colors``)
are read from ``jaxecon.render`` once, at construction, on the host.

``egocentric_frames`` cuts each agent's window out of a world frame (cells
outside the world are black), and ``resize_frames`` average-pools (or
repeats) frames to a requested size; ``check_resize`` says at construction
whether a size is reachable. The observation adapter built on these is
``jaxecon.wrappers.native.NativeRGBObservationWrapper``.

Example::

    renderer = WorldRenderer(env, tile=8)
    frame = jax.jit(renderer.world_frame)(state)          # uint8 [25*8, 25*8, 3]
    views = renderer.egocentric_frames(frame, state.loc, radius=5)  # [n, 88, 88, 3]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.render import COLORS, MAP_NAMES, SOURCE_TINT, agent_colors

__all__ = ["WorldRenderer", "check_resize", "render_frame", "resize_frames"]


def _cell_patterns(scale: int) -> dict:
    """Boolean ``(scale, scale)`` pixel patterns of one cell, as ``render_world`` draws them:
    ``trunk`` (wood), ``edge`` (house outline), ``agent`` (the agent square with its
    border) and ``agent_inner`` (the square inside the border)."""
    trunk = np.zeros((scale, scale), bool)
    edge = np.zeros((scale, scale), bool)
    if scale >= 4:
        hw = max(scale // 8, 1)
        trunk[(5 * scale) // 8 : scale - scale // 8, scale // 2 - hw : scale // 2 + hw] = True
        t = max(scale // 16, 1)
        edge[:t, :] = edge[-t:, :] = edge[:, :t] = edge[:, -t:] = True
    inset = scale // 8 if scale >= 4 else 0
    border = max(scale // 16, 1) if scale >= 4 else 0
    agent = np.zeros((scale, scale), bool)
    agent[inset : scale - inset, inset : scale - inset] = True
    inner = np.zeros((scale, scale), bool)
    inner[inset + border : scale - inset - border, inset + border : scale - inset - border] = True
    return {"trunk": trunk, "edge": edge, "agent": agent, "agent_inner": inner}


def _upscale(x: jax.Array, scale: int) -> jax.Array:
    """Each cell of ``x`` ([H, W, ...]) repeated into a ``scale x scale`` pixel block."""
    return jnp.repeat(jnp.repeat(x, scale, axis=0), scale, axis=1)


def _blend(img, color, alpha):
    """``(1 - alpha) * img + alpha * color`` with ``alpha`` [h, w] (``render.py``'s ``_blend``)."""
    a = alpha[..., None]
    return img * (1.0 - a) + a * jnp.asarray(color, jnp.float32)


def render_frame(maps: dict, owner, loc, palette, scale: int) -> jax.Array:
    """``jaxecon.render.render_world`` in JAX: one world as an RGB image, jittable.

    Args:
        maps: ``{name: float [H, W]}`` keyed by Foundation map names (those of
            ``jaxecon.render.MAP_NAMES``; others are ignored). Which layers are
            present is static (the dict's keys); all share one shape.
        owner: int [H, W] House owner map (agent index, -1 unowned), or None
            (every house unowned).
        loc: int [n, 2] agent ``[row, col]``, or None (no agents drawn); rows
            with a negative entry are not drawn. When two agents share a cell
            the higher index is drawn (``render_world`` draws in index order).
        palette: uint8 or float [n_colors, 3] agent colours
            (``jaxecon.render.agent_colors``), at least ``n`` rows and one per
            house owner index.
        scale: pixels per cell (static int >= 1).

    Returns:
        uint8 [H * scale, W * scale, 3]; equal to ``render_world(maps, owner,
        loc, scale)`` given ``palette = agent_colors(n)``.
    """
    layers = {k: jnp.asarray(maps[k], jnp.float32) for k in MAP_NAMES if k in maps}
    if not layers:
        raise ValueError(f"maps must hold at least one of {list(MAP_NAMES)}")
    height, width = next(iter(layers.values())).shape
    palette = jnp.asarray(palette, jnp.float32)
    img = jnp.broadcast_to(jnp.asarray(COLORS["background"], jnp.float32), (height, width, 3))
    for src, res in (("StoneSourceBlock", "Stone"), ("WoodSourceBlock", "Wood")):
        if src in layers:
            img = _blend(img, COLORS[res], SOURCE_TINT * (layers[src] > 0))
    alpha = {k: jnp.clip(layers[k], 0.0, 1.0) for k in ("Stone", "Wood", "Water", "House") if k in layers}
    for name in ("Stone", "Wood", "Water"):
        if name in alpha:
            img = _blend(img, COLORS[name], alpha[name])
    if "House" in alpha:
        house_rgb = jnp.broadcast_to(jnp.asarray(COLORS["House"], jnp.float32), (height, width, 3))
        if owner is not None:
            owner = jnp.asarray(owner, jnp.int32)
            owned = (owner >= 0)[..., None]
            house_rgb = jnp.where(owned, palette[jnp.maximum(owner, 0)], house_rgb)
        a = alpha["House"][..., None]
        img = (1.0 - a) * img + a * house_rgb

    out = _upscale(img, scale)
    pat = _cell_patterns(scale)
    tiled = {k: jnp.asarray(np.tile(v, (height, width))) for k, v in pat.items()}
    if scale >= 4:
        if "Wood" in alpha:
            out = _blend(out, COLORS["WoodTrunk"], _upscale(alpha["Wood"], scale) * tiled["trunk"])
        if "House" in alpha:
            out = _blend(out, COLORS["HouseOutline"], _upscale(alpha["House"], scale) * tiled["edge"])
    if loc is not None:
        loc = jnp.asarray(loc, jnp.int32)
        n = loc.shape[0]
        placed = jnp.all(loc >= 0, axis=1)
        rows = jnp.where(placed, loc[:, 0], height)  # out of range -> dropped
        cols = jnp.where(placed, loc[:, 1], width)
        who = jnp.full((height, width), -1, jnp.int32).at[rows, cols].max(
            jnp.arange(n, dtype=jnp.int32), mode="drop")
        who_px = _upscale(who, scale)
        here = who_px >= 0
        out = jnp.where((here & tiled["agent"])[..., None],
                        jnp.asarray(COLORS["AgentBorder"], jnp.float32), out)
        out = jnp.where((here & tiled["agent_inner"])[..., None], palette[jnp.maximum(who_px, 0)], out)
    return jnp.clip(jnp.round(out), 0, 255).astype(jnp.uint8)


class WorldRenderer:
    """The world of one jaxecon economy as RGB frames, jittable (static setup at construction).

    Args:
        env: a jaxecon environment (``jaxecon.make``'s result) whose maps
            include at least one of ``jaxecon.render.MAP_NAMES``.
        tile: pixels per world cell (int >= 1; default 8).

    Attributes:
        frame_shape: ``(H * tile, W * tile, 3)`` of ``world_frame``.
        palette: uint8 [n_agents, 3], ``jaxecon.render.agent_colors(n_agents)``.

    Raises:
        ValueError: a bad ``tile``; an env with no map to draw (e.g. the
            COVID-19 scenario, whose world is a 1x1 placeholder).
    """

    def __init__(self, env, tile: int = 8):
        if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile < 1:
            raise ValueError(f"tile must be an int >= 1 (pixels per cell), got {tile!r}")
        self.tile = int(tile)
        self.map_names = tuple(k for k in env.map_keys if k in MAP_NAMES)
        if not self.map_names:
            raise ValueError(
                f"env {env.name!r} has no world map to render (its maps: {list(env.map_keys)}; "
                f"drawn: {list(MAP_NAMES)})"
            )
        self.world_size = tuple(env.world_size)
        self.n_agents = env.n_agents
        self.palette = agent_colors(env.n_agents)
        self.frame_shape = (self.world_size[0] * self.tile, self.world_size[1] * self.tile, 3)

    def world_frame(self, state) -> jax.Array:
        """uint8 [H * tile, W * tile, 3]: the whole world of ``state`` (an ``EnvState``),
        as ``jaxecon.render.render_world`` draws it."""
        maps = {k: state.maps[k] for k in self.map_names}
        return render_frame(maps, state.owner.get("House"), state.loc, self.palette, self.tile)

    def egocentric_frames(self, frame: jax.Array, loc: jax.Array, radius: int) -> jax.Array:
        """Each agent's window of ``frame``: [n, (2r+1) * tile, (2r+1) * tile, 3], frame's dtype.

        Window ``(i, j)`` (in cells) of agent ``a`` shows cell ``(row_a - r + i,
        col_a - r + j)``, the same cells as the agent's ``world-map``
        observation; cells outside the world are black (0). An unplaced agent
        (``loc`` -1) gets the window clamped to the padded frame's corner.

        Args:
            frame: [H * tile, W * tile, 3], ``world_frame``'s output.
            loc: int [n, 2] agent ``[row, col]`` (``EnvState.loc``).
            radius: static int >= 0, the window's half-width in cells.
        """
        t, r = self.tile, int(radius)
        pad = r * t
        padded = jnp.pad(frame, ((pad, pad), (pad, pad), (0, 0)))
        size = (2 * r + 1) * t
        zero = jnp.zeros((), jnp.int32)

        def window(rc):
            rc = rc.astype(jnp.int32) * t
            return jax.lax.dynamic_slice(padded, (rc[0], rc[1], zero), (size, size, 3))

        return jax.vmap(window)(loc)


def check_resize(in_hw, out_hw, name: str = "rgb_resize") -> tuple:
    """``out_hw`` as a ``(height, width)`` tuple of ints reachable from ``in_hw`` by ``resize_frames``.

    Each output dimension must divide the input dimension evenly (average
    pooling by the quotient) or be a whole multiple of it (each pixel
    repeated).

    Raises:
        ValueError: naming ``name``, for anything but a pair of positive ints,
            or a pair that does not divide evenly, with the sizes allowed.
    """
    if (
        not isinstance(out_hw, (tuple, list))
        or len(out_hw) != 2
        or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in out_hw)
    ):
        raise ValueError(f"{name} must be None or (height, width), two positive ints, got {out_hw!r}")
    out_hw = (int(out_hw[0]), int(out_hw[1]))
    for axis, i, o in zip(("height", "width"), in_hw, out_hw):
        if i % o and o % i:
            divisors = [d for d in range(1, i + 1) if i % d == 0]
            raise ValueError(
                f"{name}={out_hw}: the frame's {axis} {i} does not divide evenly into {o}; "
                f"allowed {axis}s: a divisor of {i} ({divisors}) or a multiple of it "
                f"(frame {tuple(in_hw)})"
            )
    return out_hw


def resize_frames(frames: jax.Array, out_hw) -> jax.Array:
    """float32 [..., out_h, out_w, C]: ``frames`` [..., h, w, C] average-pooled by
    ``h // out_h`` x ``w // out_w`` (or each pixel repeated where the output is
    larger). ``out_hw`` must pass ``check_resize``."""
    x = jnp.asarray(frames, jnp.float32)
    h, w, c = x.shape[-3:]
    lead = x.shape[:-3]
    out_h, out_w = out_hw
    if out_h <= h:
        x = x.reshape(lead + (out_h, h // out_h, w, c)).mean(axis=-3)
    else:
        x = jnp.repeat(x, out_h // h, axis=-3)
    if out_w <= w:
        x = x.reshape(lead + (out_h, out_w, w // out_w, c)).mean(axis=-2)
    else:
        x = jnp.repeat(x, out_w // w, axis=-2)
    return x
