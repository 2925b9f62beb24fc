"""Spatial helpers over ``EnvState``: occupancy, accessibility, map stacks.

Follows ``ai_economist/foundation/base/world.py`` (``Maps.accessibility``,
``World.can_agent_occupy``, ``World.loc_map``, ``Maps.empty``), written as
array code over the whole grid instead of per-tile methods.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxecon.core.state import EnvState


def loc_map(state: EnvState, world_size) -> jax.Array:
    """int32 [H, W]: index of the mobile agent on each tile, -1 where none stands.

    Agents with location -1 (not placed) are ignored.
    """
    h, w = world_size
    n = state.loc.shape[0]
    placed = state.loc[:, 0] >= 0
    rows = jnp.where(placed, state.loc[:, 0], h)  # out of bounds -> dropped
    cols = jnp.where(placed, state.loc[:, 1], w)
    grid = jnp.full((h, w), -1, dtype=jnp.int32)
    return grid.at[rows, cols].set(jnp.arange(n, dtype=jnp.int32), mode="drop")


def blocked_for_all(state: EnvState, blocking: tuple[str, ...], world_size) -> jax.Array:
    """bool [H, W]: tiles no agent may enter (any blocking landmark, e.g. Water, > 0)."""
    out = jnp.zeros(tuple(world_size), dtype=bool)
    for name in blocking:
        out = out | (state.maps[name] != 0)
    return out


def accessible(state: EnvState, agent_idx, blocking, private, world_size) -> jax.Array:
    """bool [H, W]: tiles agent ``agent_idx`` may stand on, ignoring other agents.

    A tile is accessible iff no blocking landmark is there and every private
    landmark there is unowned (-1) or owned by the agent (``Maps.accessibility``).
    """
    ok = ~blocked_for_all(state, blocking, world_size)
    for name in private:
        own = state.owner[name]
        ok = ok & ((own == -1) | (own == agent_idx))
    return ok


def empty_tiles(state: EnvState, map_keys) -> jax.Array:
    """bool [H, W]: tiles where every map channel is 0 (``Maps.empty``)."""
    total = sum(state.maps[k] for k in map_keys)
    return total == 0


def map_stack(state: EnvState, map_keys) -> jax.Array:
    """float32 [C, H, W]: the map channels in Foundation order (``Maps.state``)."""
    return jnp.stack([state.maps[k] for k in map_keys]).astype(jnp.float32)
